//! `fix` in place: atomic, permission-keeping, symlink-following, and never partial.
//!
//! The kill and change-on-disk cases use the debug-only `MESHJOB_TEST_WRITE_HOOK` in
//! `src/output/write.rs`, which pauses (or aborts) the binary at a chosen point of the write.

mod common;

use common::samples::PI_JOB as JOB;

use meshjob::write_atomic;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn fix(args: &[&Path], hook: Option<&str>) -> Command {
    let mut cmd = Command::new(common::bin());
    cmd.arg("fix").args(args).stdin(Stdio::null());
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd.env_remove("MESHJOB_TEST_WRITE_HOOK");
    if let Some(h) = hook {
        cmd.env("MESHJOB_TEST_WRITE_HOOK", h);
    }
    cmd
}

fn run(args: &[&Path]) -> Output {
    fix(args, None).output().expect("run meshjob")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn fixed() -> String {
    meshjob::edit_text(JOB, &meshjob::Settings::default()).text
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

fn temps(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().contains(".meshjob-"))
        .collect()
}

fn setup(mode_bits: u32) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("job.yaml");
    std::fs::write(&path, JOB).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode_bits)).unwrap();
    (dir, path)
}

#[test]
fn keeps_permissions() {
    for bits in [0o640, 0o755, 0o600] {
        let (dir, path) = setup(bits);
        let out = run(&[&path]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), fixed());
        assert_eq!(mode(&path), bits);
        assert!(temps(dir.path()).is_empty(), "no temporary file left");
    }
}

#[test]
fn follows_symlinks_and_keeps_the_link() {
    let (dir, target) = setup(0o644);
    let sub = dir.path().join("links");
    std::fs::create_dir(&sub).unwrap();
    let link = sub.join("link.yaml");
    symlink(&target, &link).unwrap();
    let out = run(&[&link]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read_link(&link).unwrap(), target);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), fixed());
    assert!(temps(&sub).is_empty() && temps(dir.path()).is_empty());
}

#[test]
fn refuses_special_files() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe.yaml");
    let made = Command::new("mkfifo").arg(&fifo).status();
    let mut paths = vec![PathBuf::from("/dev/null")];
    if made.is_ok_and(|s| s.success()) {
        paths.push(fifo);
    } else {
        common::skip("mkfifo is unavailable; FIFO case not run");
    }
    for p in paths {
        let mut child = fix(&[&p], None).spawn().unwrap();
        let out = wait_bounded(&mut child, Duration::from_secs(10));
        assert_eq!(out.status.code(), Some(2), "{}", p.display());
        let err = stderr(&out);
        assert!(err.contains("not a regular file"), "{err}");
        assert!(
            err.starts_with(&format!("{}:1:1: error:", p.display())),
            "{err}"
        );
    }
}

#[test]
fn read_only_file_is_a_clear_error() {
    let (_dir, path) = setup(0o444);
    let out = run(&[&path]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("cannot write: the file is read-only (mode 444)"),
        "{err}"
    );
    assert!(err.contains("chmod u+w"), "{err}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), JOB);
}

#[test]
fn read_only_directory_is_a_clear_error() {
    let (dir, path) = setup(0o644);
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o555)).unwrap();
    let out = run(&[&path]);
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("is read-only; a safe in-place write needs"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), JOB);
}

#[test]
fn missing_file_is_a_clear_error_and_others_still_run() {
    let (dir, path) = setup(0o644);
    let missing = dir.path().join("missing.yaml");
    let out = run(&[&missing, &path]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("missing.yaml:1:1: error: cannot read:"),
        "{err}"
    );
    assert!(err.contains("check the path"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        fixed(),
        "the other file is fixed"
    );
}

#[test]
fn change_on_disk_during_the_run_is_not_overwritten() {
    // In-process: the file no longer holds what was read.
    let (dir, path) = setup(0o644);
    std::fs::write(&path, "edited: by someone else\n").unwrap();
    let err = write_atomic(&path, JOB.as_bytes(), &fixed()).unwrap_err();
    assert!(err.contains("changed on disk"), "{err}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "edited: by someone else\n"
    );
    assert!(
        temps(dir.path()).is_empty(),
        "the temporary file is removed"
    );

    // Through the binary: change the file while meshjob pauses before its last check.
    std::fs::write(&path, JOB).unwrap();
    let mut child = fix(&[&path], Some("before-check:pause-1500"))
        .spawn()
        .unwrap();
    wait_for(|| !temps(dir.path()).is_empty());
    std::fs::write(&path, "edited: meanwhile\n").unwrap();
    let out = wait_bounded(&mut child, Duration::from_secs(20));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("changed on disk"), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "edited: meanwhile\n"
    );
    assert!(temps(dir.path()).is_empty());
}

#[test]
fn killed_mid_write_leaves_the_old_file() {
    for hook in ["temp-created:partial-pause-5000", "before-check:pause-5000"] {
        let (dir, path) = setup(0o644);
        let mut child = fix(&[&path], Some(hook)).spawn().unwrap();
        wait_for(|| !temps(dir.path()).is_empty());
        std::thread::sleep(Duration::from_millis(200));
        child.kill().unwrap();
        let _ = child.wait();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            JOB,
            "{hook}: the old file"
        );
        // A later run is not blocked by the leftover temporary file, and finishes the job.
        let out = run(&[&path]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), fixed());
    }
    // A crash (abort) just before the rename: old file, still whole.
    let (_dir, path) = setup(0o644);
    let out = fix(&[&path], Some("before-check:abort")).output().unwrap();
    assert!(!out.status.success());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), JOB);
}

fn wait_for(cond: impl Fn() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < Duration::from_secs(20), "timed out");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn wait_bounded(child: &mut Child, bound: Duration) -> Output {
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > bound {
            let _ = child.kill();
            panic!("meshjob did not finish within {bound:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut out = Output {
        status: child.wait().unwrap(),
        stdout: Vec::new(),
        stderr: Vec::new(),
    };
    use std::io::Read;
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_end(&mut out.stderr);
    }
    out
}
