//! `fix` keeps a file's whole mode, setuid, setgid and sticky bits included, and refuses a
//! setuid or setgid file whose owner it cannot keep (the bit would be dropped, or the
//! program would run as someone else).

mod common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::process::{Command, Output, Stdio};

const JOB: &str = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: pi\nspec:\n  template:\n    spec:\n      containers:\n      - name: pi\n        image: perl\n        command: [perl]\n      restartPolicy: Never\n";

fn fix(cmd: &mut Command, path: &Path) -> Output {
    cmd.arg("fix")
        .arg(path)
        .stdin(Stdio::null())
        .env_remove("MESHJOB_TEST_WRITE_HOOK")
        .output()
        .expect("run meshjob")
}

/// meshjob run as the unprivileged user `nobody`.
fn as_nobody(setpriv: &Path) -> Command {
    let mut cmd = Command::new(setpriv);
    cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(common::bin());
    cmd
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p).unwrap().permissions().mode() & 0o7777
}

#[test]
fn setuid_setgid_and_sticky_bits_are_kept() {
    for bits in [0o4755, 0o2755, 0o6750, 0o1644, 0o4700] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("job.yaml");
        std::fs::write(&path, JOB).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(bits)).unwrap();
        let out = fix(&mut Command::new(common::bin()), &path);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{bits:o}: {stderr}");
        assert_ne!(
            std::fs::read_to_string(&path).unwrap(),
            JOB,
            "{bits:o}: edited"
        );
        assert_eq!(mode(&path), bits, "{bits:o}");
    }
}

/// Someone else's setuid file, writable by us: rewriting it would make it ours (and the
/// kernel would drop the bit, or keep it for our uid). Needs root to set the scene.
#[test]
fn someone_elses_setuid_file_is_refused() {
    let root = std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0);
    if !root {
        eprintln!(
            "\n!!!!!!!! SKIPPED: not root, so no file of another owner can be set up !!!!!!!!\n"
        );
        return;
    }
    let Some(setpriv) = common::require_tool("setpriv", "runs meshjob as another user") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let path = dir.path().join("job.yaml");
    for bits in [0o4777, 0o2777] {
        std::fs::write(&path, JOB).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(bits)).unwrap();
        let out = fix(&mut as_nobody(&setpriv), &path);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bits:o}: {stderr}");
        assert!(
            stderr.contains(&format!("(mode {bits:o}) and owned by uid 0 gid 0"))
                && stderr.contains("not written"),
            "{stderr}"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), JOB);
        assert_eq!(
            (mode(&path), std::fs::metadata(&path).unwrap().uid()),
            (bits, 0)
        );
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file left");
    }
    // Without the special bits the same file is rewritten, and becomes the runner's.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
    let out = fix(&mut as_nobody(&setpriv), &path);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(mode(&path), 0o666);
}
