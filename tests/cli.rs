//! The command line as CI, pre-commit and people use it, driven through the built binary.
//! Each case is a file of `testdata/cli/` (the format is in testdata/README.md): a starting
//! tree, the commands run in it with their exact exit status, stdout and stderr, and the
//! files the commands leave changed. `MESHJOB_UPDATE_GOLDEN=1 cargo test --test cli`
//! rewrites the expectations; `cargo test --test cli -- cli_cases case=summary` runs only
//! the cases whose name holds `summary`.
//!
//! The tests below are what a case cannot say: a diff fed to an outside program.

#[path = "cli/case.rs"]
mod case;
mod common;

use common::golden;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

#[test]
fn cli_cases() {
    let dir = common::root().join("testdata/cli");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("testdata/cli/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 20, "expected the cases in {}", dir.display());
    let only: Vec<String> = std::env::args()
        .filter_map(|a| a.strip_prefix("case=").map(String::from))
        .collect();
    cases.retain(|p| {
        let name = p.file_stem().unwrap_or_default().to_string_lossy();
        only.is_empty() || only.iter().any(|o| name.contains(o.as_str()))
    });
    assert!(!cases.is_empty(), "no case matches {only:?}");

    // Each case runs in its own directory, so they run side by side.
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    std::thread::scope(|s| {
        for _ in 0..workers.min(cases.len()) {
            s.spawn(|| {
                while let Some(path) = cases.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let found = case::run(path);
                    failures
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .extend(found);
                }
            });
        }
    });
    let mut failures = failures.into_inner().unwrap_or_else(|e| e.into_inner());
    failures.sort();
    golden::assert_none(&failures);
}

/// A Job whose container would be wrapped.
const JOB: &str = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: pi\nspec:\n  template:\n    \
                   spec:\n      restartPolicy: Never\n      containers:\n      - name: pi\n        \
                   image: perl\n        command: [perl, -e, print 1]\n";

/// `check` in `cwd` on `arg`: its diff, which must be there.
fn diff_of(cwd: &Path, arg: &str) -> Vec<u8> {
    let run = common::run(
        common::meshjob().current_dir(cwd).args(["check", arg]),
        None,
    );
    assert_eq!(run.code, 1, "{}", run.show());
    assert!(!run.stdout.is_empty(), "{}", run.show());
    run.stdout
}

/// Case control-characters-in-file-names-are-escaped: git takes the quoted name.
#[test]
fn a_diff_of_a_file_name_with_control_characters_applies_with_git() {
    let Some(git) = common::require_tool("git", "applies a diff with a quoted name") else {
        return;
    };
    let t = tempfile::tempdir().expect("tempdir");
    std::fs::write(t.path().join("evil\n::error file=x::y\x1b[0m.yaml"), JOB).expect("write");
    std::fs::write(t.path().join("p.diff"), diff_of(t.path(), ".")).expect("write diff");
    let out = common::run(
        Command::new(git)
            .current_dir(t.path())
            .args(["apply", "--check", "p.diff"]),
        None,
    );
    assert_eq!(out.code, 0, "{}", out.show());
}

/// A file name that is not UTF-8 (Latin-1 `café`, and one that is also absolute): named on
/// the command line it is checked with the others, its diff header is written as git writes
/// it (`"a/caf\351.yaml"`), and `git apply` applies the diff to exactly that file; `fix`
/// fixes it; the SARIF `uri` is its bytes percent-encoded.
#[cfg(unix)]
#[test]
fn a_file_name_that_is_not_utf8_is_checked_and_its_diff_applies_with_git() {
    use std::os::unix::ffi::OsStrExt;
    let Some(git) = common::require_tool("git", "applies the diff of a name that is not UTF-8")
    else {
        return;
    };
    let t = tempfile::tempdir().expect("tempdir");
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9.yaml");
    std::fs::write(t.path().join(name), JOB).expect("write");
    std::fs::write(t.path().join("ok.yaml"), JOB).expect("write");
    let check = common::run(
        common::meshjob()
            .current_dir(t.path())
            .arg("check")
            .arg(name)
            .arg("ok.yaml"),
        None,
    );
    assert_eq!(check.code, 1, "{}", check.show());
    let diff = String::from_utf8(check.stdout.clone()).expect("the diff is UTF-8");
    assert!(
        diff.contains("--- \"a/caf\\351.yaml\"\n+++ \"b/caf\\351.yaml\"\n"),
        "{diff}"
    );
    assert!(diff.contains("--- a/ok.yaml\n"), "{diff}");
    let stderr = String::from_utf8_lossy(&check.stderr);
    assert!(
        stderr.contains("\"caf\\351.yaml\":10:9: error:"),
        "{stderr}"
    );
    assert!(stderr.contains("2 files would be changed"), "{stderr}");
    std::fs::write(t.path().join("p.diff"), &check.stdout).expect("write diff");
    let out = common::run(
        Command::new(&git)
            .current_dir(t.path())
            .args(["apply", "p.diff"]),
        None,
    );
    assert_eq!(out.code, 0, "{}", out.show());
    let applied = std::fs::read(t.path().join(name)).expect("read");
    let fixed = common::run(common::meshjob().args(["fix", "-"]), Some(JOB.as_bytes()));
    assert_eq!(applied, fixed.stdout, "git apply patched the file itself");

    // An absolute name: the header drops the leading `/`, as for a UTF-8 one.
    let abs = std::fs::canonicalize(t.path())
        .expect("canonical")
        .join(name);
    std::fs::write(&abs, JOB).expect("write");
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let sarif = common::run(
        common::meshjob()
            .current_dir(elsewhere.path())
            .args(["check", "--format", "sarif"])
            .arg(&abs),
        None,
    );
    assert_eq!(sarif.code, 1, "{}", sarif.show());
    let log: serde_json::Value = serde_json::from_slice(&sarif.stdout).expect("SARIF is JSON");
    let uri = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
        ["uri"]
        .as_str()
        .expect("a uri");
    let want: String = abs
        .as_os_str()
        .as_bytes()
        .iter()
        .map(|&b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect();
    assert_eq!(uri, format!("file://{want}"));
    assert!(uri.ends_with("/caf%E9.yaml"), "{uri}");
    let fix = common::run(
        common::meshjob()
            .current_dir(elsewhere.path())
            .arg("fix")
            .arg(&abs),
        None,
    );
    assert_eq!(fix.code, 0, "{}", fix.show());
    assert_eq!(std::fs::read(&abs).expect("read"), fixed.stdout);
}

/// Case a-file-outside-the-working-directory-keeps-its-absolute-path: the diff applies with
/// `patch -p1` from the root directory.
#[test]
fn a_diff_of_a_file_outside_the_working_directory_applies_from_the_root() {
    let Some(patch) = common::require_tool("patch", "applies the printed diff") else {
        return;
    };
    let t = tempfile::tempdir().expect("tempdir");
    let file = std::fs::canonicalize(t.path())
        .expect("canonical")
        .join("job.yaml");
    std::fs::write(&file, JOB).expect("write");
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let diff = diff_of(elsewhere.path(), file.to_str().expect("UTF-8 path"));
    let out = common::run(
        Command::new(patch)
            .current_dir("/")
            .args(["-p1", "--dry-run", "--batch"]),
        Some(&diff),
    );
    assert_eq!(out.code, 0, "{}", out.show());
}

/// `completions bash` is a script bash reads, for every subcommand; the other shells get
/// theirs; an unknown shell is a usage error.
#[test]
fn completions_are_scripts_the_shells_read() {
    let run = common::run(common::meshjob().args(["completions", "bash"]), None);
    assert_eq!(run.code, 0, "{}", run.show());
    let script = String::from_utf8_lossy(&run.stdout).into_owned();
    for sub in [
        "diff",
        "check",
        "fix",
        "config",
        "schema",
        "krm",
        "kustomize",
        "--select",
    ] {
        assert!(script.contains(sub), "no {sub} in the bash completions");
    }
    if let Some(bash) = common::require_tool("bash", "parses the bash completion script") {
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("meshjob.bash");
        std::fs::write(&file, &script).expect("write the script");
        let status = Command::new(bash)
            .arg("-n")
            .arg(&file)
            .status()
            .expect("run bash");
        assert!(status.success(), "bash -n rejects the completion script");
    }
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let run = common::run(common::meshjob().args(["completions", shell]), None);
        assert_eq!(run.code, 0, "{}", run.show());
        assert!(String::from_utf8_lossy(&run.stdout).contains("meshjob"));
    }
    let run = common::run(common::meshjob().args(["completions", "tcsh"]), None);
    assert_eq!(run.code, 2, "{}", run.show());
}

/// The hidden `manpage` renders a roff page that names every subcommand and flag group.
#[test]
fn the_man_page_is_roff_naming_the_subcommands() {
    let run = common::run(common::meshjob().arg("manpage"), None);
    assert_eq!(run.code, 0, "{}", run.show());
    let page = String::from_utf8_lossy(&run.stdout).into_owned();
    assert!(page.contains(".TH meshjob 1"), "{page}");
    for sub in ["meshjob\\-check", "meshjob\\-fix", "meshjob\\-completions"] {
        assert!(page.contains(sub), "no {sub} in the man page:\n{page}");
    }
    assert!(
        !page.contains("meshjob\\-manpage"),
        "the hidden command is listed"
    );
}

/// `--format sarif` is a SARIF 2.1.0 log that the OASIS schema accepts (a copy in
/// testdata/sarif/, validated with check-jsonschema), with the rules table as the driver's
/// rules and each finding at its file, line and column.
#[test]
fn sarif_is_a_valid_sarif_log_of_the_findings() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("job.yaml"), JOB).expect("write");
    std::fs::write(dir.path().join("odd name.yaml"), "a: [b\n").expect("write");
    let run = common::run(
        common::meshjob()
            .current_dir(dir.path())
            .args(["check", "--format", "sarif", "."]),
        None,
    );
    assert_eq!(run.code, 2, "{}", run.show());
    assert!(run.stderr.is_empty(), "{}", run.show());
    let log: serde_json::Value = serde_json::from_slice(&run.stdout).expect("JSON");
    assert_eq!(log["version"], "2.1.0");
    let driver = &log["runs"][0]["tool"]["driver"];
    assert_eq!(driver["name"], "meshjob");
    let rules = driver["rules"].as_array().expect("rules");
    let results = log["runs"][0]["results"].as_array().expect("results");
    let place = |r: &serde_json::Value| {
        let p = &r["locations"][0]["physicalLocation"];
        (
            p["artifactLocation"]["uri"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            p["region"]["startLine"].as_u64(),
            p["region"]["startColumn"].as_u64(),
        )
    };
    for r in results {
        let index = r["ruleIndex"].as_u64().expect("ruleIndex") as usize;
        assert_eq!(rules[index]["id"], r["ruleId"], "{r}");
    }
    let would = (results.iter())
        .find(|r| r["ruleId"] == "MJ701")
        .expect("MJ701");
    assert_eq!(would["level"], "error");
    assert_eq!(place(would), ("job.yaml".into(), Some(10), Some(9)));
    let broken = (results.iter())
        .find(|r| r["ruleId"] == "MJ001")
        .expect("MJ001");
    assert_eq!(place(broken), ("odd%20name.yaml".into(), Some(1), Some(4)));
    let Some(tool) = common::require_tool(
        "check-jsonschema",
        "validates the SARIF log against the SARIF 2.1.0 schema; pip install check-jsonschema",
    ) else {
        return;
    };
    let file = dir.path().join("log.sarif");
    std::fs::write(&file, &run.stdout).expect("write the log");
    let schema = common::root().join("testdata/sarif/sarif-schema-2.1.0.json");
    let out = Command::new(tool)
        .arg("--schemafile")
        .arg(schema)
        .arg(&file)
        .output()
        .expect("run check-jsonschema");
    assert!(
        out.status.success(),
        "the SARIF schema rejects the log:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
