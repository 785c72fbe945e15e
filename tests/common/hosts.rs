//! Helpers for the tests that run host programs (kubectl, pre-commit, the action's steps):
//! every run is bounded in time and its output is kept for the failure message.

use std::io::Read;
use std::process::{Command, Output};
use std::time::Duration;
use wait_timeout::ChildExt;

/// Runs `cmd` with `stdin`, killing it after `limit`. Panics (with what it printed) when it
/// overruns.
pub fn run_bounded(cmd: &mut Command, stdin: &[u8], limit: Duration) -> Output {
    let (mut child, writer) = super::spawn_with_stdin(cmd, stdin);
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let out_reader = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = out.read_to_end(&mut b);
        b
    });
    let err_reader = std::thread::spawn(move || {
        let mut b = Vec::new();
        let _ = err.read_to_end(&mut b);
        b
    });
    // Blocks until the child ends or the limit passes (no polling, so a short run costs no
    // more than its own time).
    let status = match child.wait_timeout(limit).expect("wait") {
        Some(status) => status,
        None => {
            let _ = child.kill();
            let _ = child.wait();
            let stdout = out_reader.join().unwrap_or_default();
            let stderr = err_reader.join().unwrap_or_default();
            panic!(
                "{cmd:?} ran longer than {limit:?}\n--- stdout\n{}\n--- stderr\n{}",
                String::from_utf8_lossy(&stdout),
                String::from_utf8_lossy(&stderr)
            );
        }
    };
    let _ = writer.join();
    Output {
        status,
        stdout: out_reader.join().unwrap_or_default(),
        stderr: err_reader.join().unwrap_or_default(),
    }
}

/// stdout and stderr of a run, for assertion messages.
pub fn show(o: &Output) -> String {
    super::Run::from(o.clone()).show()
}

/// Runs git in `dir` with a test identity and no signing; panics with its output on failure.
pub fn git(dir: &std::path::Path, args: &[&str]) {
    let out = run_bounded(
        Command::new("git")
            .current_dir(dir)
            .args([
                "-c",
                "user.name=meshjob test",
                "-c",
                "user.email=test@localhost",
            ])
            .args([
                "-c",
                "commit.gpgsign=false",
                "-c",
                "init.defaultBranch=main",
            ])
            .args(args),
        b"",
        Duration::from_secs(60),
    );
    assert!(out.status.success(), "git {args:?}: {}", show(&out));
}

/// A release of `bin` as .github/workflows/release.yml lays it out, in `dir`: the archive
/// `v<version>/meshjob-v<version>-<target>.tar.gz` (holding `meshjob`) and its `.sha256` in
/// `sha256sum` format. Returns the `file://` base URL to download it from.
pub fn fake_release(
    dir: &std::path::Path,
    version: &str,
    target: &str,
    bin: &std::path::Path,
) -> String {
    let v = dir.join(format!("v{version}"));
    std::fs::create_dir_all(&v).expect("mkdir");
    let staging = dir.join("staging");
    std::fs::create_dir_all(&staging).expect("mkdir");
    std::fs::copy(bin, staging.join("meshjob")).expect("copy");
    let asset = format!("meshjob-v{version}-{target}.tar.gz");
    let limit = Duration::from_secs(60);
    let out = run_bounded(
        Command::new("tar")
            .arg("-czf")
            .arg(v.join(&asset))
            .arg("-C")
            .arg(&staging)
            .arg("meshjob"),
        b"",
        limit,
    );
    assert!(out.status.success(), "{}", show(&out));
    let sum = run_bounded(
        Command::new("sha256sum").arg(&asset).current_dir(&v),
        b"",
        limit,
    );
    assert!(sum.status.success(), "{}", show(&sum));
    std::fs::write(v.join(format!("{asset}.sha256")), &sum.stdout).expect("write");
    format!("file://{}", dir.display())
}
