//! Output that cannot be written is a failure, in every mode and host that writes to stdout:
//! a full disk (`/dev/full`) is exit 2 with a message, never a success with a truncated
//! stream; a reader that closes the pipe stops the run at once, without reading the rest of
//! an endless input.

mod common;

use common::samples::PI_JOB as JOB;

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  key: value\n";
const PLUGIN_CONFIG: &str =
    "apiVersion: meshjob.dev/v1alpha1\nkind: MeshJobConfig\nmetadata:\n  name: m\n";

/// The binary linked as the kustomize legacy plugin, with its config file.
fn plugin(dir: &Path) -> Command {
    let plugin = dir.join("MeshJobConfig");
    if !plugin.exists() {
        std::os::unix::fs::symlink(common::bin(), &plugin).unwrap();
        std::fs::write(dir.join("plugin-config.yaml"), PLUGIN_CONFIG).unwrap();
    }
    let mut c = Command::new(plugin);
    c.arg(dir.join("plugin-config.yaml")).current_dir(dir);
    c
}

fn meshjob(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(common::bin());
    c.args(args).current_dir(dir);
    c
}

/// `/dev/full`, a device that takes no byte (ENOSPC), for stdout.
fn dev_full() -> Option<std::fs::File> {
    match std::fs::OpenOptions::new().write(true).open("/dev/full") {
        Ok(f) => Some(f),
        Err(e) => {
            common::skip(&format!("/dev/full cannot be opened ({e})"));
            None
        }
    }
}

#[test]
fn a_full_disk_is_a_failure_in_every_mode_and_host() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("job.yaml"), JOB).unwrap();
    std::fs::create_dir(d.join("many")).unwrap();
    for i in 0..8 {
        std::fs::write(d.join(format!("many/job{i}.yaml")), JOB).unwrap();
    }
    let list = format!(
        "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- {}",
        JOB.trim_end().replace('\n', "\n  ")
    );
    let cases: Vec<(&str, Command, &str)> = vec![
        ("fix -", meshjob(d, &["fix", "-"]), JOB),
        ("diff -", meshjob(d, &["diff", "-"]), JOB),
        ("check -", meshjob(d, &["check", "-"]), JOB),
        ("diff FILE", meshjob(d, &["diff", "job.yaml"]), ""),
        ("check FILE", meshjob(d, &["check", "job.yaml"]), ""),
        (
            "diff DIR (files in parallel)",
            meshjob(d, &["diff", "many"]),
            "",
        ),
        (
            "check --format json",
            meshjob(d, &["check", "--format", "json", "job.yaml"]),
            "",
        ),
        ("krm", meshjob(d, &["krm"]), list.as_str()),
        ("kustomize plugin", plugin(d), JOB),
        ("schema", meshjob(d, &["schema"]), ""),
        ("config", meshjob(d, &["config"]), ""),
        ("--help", meshjob(d, &["--help"]), ""),
    ];
    for (what, mut cmd, input) in cases {
        let Some(full) = dev_full() else {
            return;
        };
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(full)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let _ = stdin.write_all(input.as_bytes());
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{what}: {stderr}");
        assert!(
            stderr.contains("cannot write to stdout: No space left on device")
                && stderr.contains("the output is incomplete"),
            "{what}: {stderr}"
        );
    }
}

/// Runs `cmd` on an endless stream (a Job every tenth document), reads 100 bytes of its
/// output and closes the pipe, as `| head -c 100` does; its exit status and stderr. Fails
/// when it does not stop (it would read its input forever).
fn closed_after_100_bytes(what: &str, cmd: &mut Command) -> (Option<i32>, String) {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        let mut docs = String::new();
        for i in 0..100 {
            docs.push_str("---\n");
            docs.push_str(if i % 10 == 0 { JOB } else { CM });
        }
        // Until meshjob stops reading: then the write fails (EPIPE) and the thread ends.
        while stdin.write_all(docs.as_bytes()).is_ok() {}
    });
    let mut stderr = child.stderr.take().unwrap();
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 100];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let deadline = Instant::now() + Duration::from_secs(300);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running 300 s after its reader went away");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    feeder.join().unwrap();
    (status.code(), err_reader.join().unwrap())
}

#[test]
fn a_closed_pipe_stops_the_run_without_reading_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases: Vec<(&str, Command)> = vec![
        ("fix - (the Helm post-renderer)", meshjob(d, &["fix", "-"])),
        ("diff -", meshjob(d, &["diff", "-"])),
        ("kustomize plugin", plugin(d)),
    ];
    for (what, mut cmd) in cases {
        let (code, stderr) = closed_after_100_bytes(what, &mut cmd);
        assert_eq!(code, Some(2), "{what}: {stderr}");
        assert!(
            stderr.contains("cannot write to stdout: Broken pipe")
                && stderr.contains("the reader closed the pipe, so the run stopped"),
            "{what}: {stderr}"
        );
    }
}
