//! Golden cases: each `testdata/<group>/<case>/` folder (groups `jobs`, `linkerd`, `mesh`) holds `input.yaml`, optional `args` (one
//! flag per line), and the expected `expected.yaml` (output of `fix`), `expected.diff`
//! (stdout of `check`) and `findings.txt` (stderr and exit status of `check`).
//!
//! Comparison is on raw bytes. `MESHJOB_UPDATE_GOLDEN=1 cargo test --test golden` rewrites
//! the expectations. Every case is also run on its own output, which must change nothing.

mod common;

use common::{Run, golden};
use std::path::Path;
use std::process::Command;

fn meshjob(dir: &Path, args: &[&str], extra: &[String], stdin: Option<&[u8]>) -> Run {
    common::run(
        common::meshjob().current_dir(dir).args(args).args(extra),
        stdin,
    )
}

/// Compares `actual` with the file `name` in `dir`, or rewrites it when updating.
fn expect(dir: &Path, name: &str, actual: &[u8], failures: &mut Vec<String>) {
    failures.extend(golden::check_file(&dir.join(name), actual).err());
}

#[test]
fn golden_cases() {
    let mut failures = Vec::new();
    let all = common::golden_cases();
    assert!(
        all.len() >= 20,
        "expected the golden cases in testdata/jobs and testdata/mesh"
    );
    for dir in &all {
        let extra = common::case_args(dir);
        let input = std::fs::read(dir.join("input.yaml")).expect("input");
        let check = meshjob(
            dir,
            &["check", "--color", "never", "input.yaml"],
            &extra,
            None,
        );
        let mut findings = check.stderr.clone();
        findings.extend_from_slice(format!("exit status: {}\n", check.code).as_bytes());
        expect(dir, "expected.diff", &check.stdout, &mut failures);
        expect(dir, "findings.txt", &findings, &mut failures);
        let fix = meshjob(dir, &["fix", "--color", "never", "-"], &extra, Some(&input));
        expect(dir, "expected.yaml", &fix.stdout, &mut failures);
        if fix.code == 2 {
            // Refused input: the output must be the input, byte for byte.
            if fix.stdout != input {
                failures.push(format!(
                    "{}: exit 2 but output differs from input",
                    dir.display()
                ));
            }
            continue;
        }
        // Idempotence: the output is a fixed point.
        let again = meshjob(
            dir,
            &["fix", "--color", "never", "-"],
            &extra,
            Some(&fix.stdout),
        );
        if again.stdout != fix.stdout {
            failures.push(format!(
                "{}: a second fix changed the output:\n{}",
                dir.display(),
                String::from_utf8_lossy(&again.stdout)
            ));
        }
        // `diff` prints exactly the changes `fix` makes.
        let d = meshjob(
            dir,
            &["diff", "--color", "never", "input.yaml"],
            &extra,
            None,
        );
        if d.stdout != check.stdout || d.code != 0 {
            failures.push(format!("{}: diff and check disagree", dir.display()));
        }
        apply_with_patch(dir, &input, &check.stdout, &fix.stdout, &mut failures);
    }
    golden::assert_none(&failures);
}

/// The diff, applied with `patch -p1` to a copy of the input, gives the output of `fix`.
fn apply_with_patch(
    dir: &Path,
    input: &[u8],
    diff: &[u8],
    fixed: &[u8],
    failures: &mut Vec<String>,
) {
    if diff.is_empty() {
        if input != fixed {
            failures.push(format!(
                "{}: no diff, yet fix changed the text",
                dir.display()
            ));
        }
        return;
    }
    if common::require_tool("patch", "to check that diffs apply with patch -p1").is_none() {
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    std::fs::write(tmp.path().join("input.yaml"), input).expect("copy");
    let out = common::run_stdin(
        Command::new("patch")
            .args(["-p1", "--quiet", "--no-backup-if-mismatch"])
            .current_dir(tmp.path()),
        diff,
    );
    let patched = std::fs::read(tmp.path().join("input.yaml")).unwrap_or_default();
    if !out.status.success() || patched != fixed {
        failures.push(format!(
            "{}: `patch -p1` with the diff does not give fix's output ({})",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
}
