//! Golden stderr for each error class: `testdata/errors/<class>/` holds the input (and a
//! `config.yaml` where the class needs one), an optional `args` file (one argument per line;
//! default `check input.yaml`), and `expected.stderr`: the binary's stderr followed by its
//! exit status. Every error line must point at `file:line:col`.
//!
//! `MESHJOB_UPDATE_GOLDEN=1 cargo test --test errors` rewrites the expectations.

mod common;

use common::golden;
use std::path::PathBuf;

const CLASSES: &[&str] = &[
    "invalid-yaml",
    "non-utf8",
    "utf16-with-bom",
    "utf32-without-bom",
    "unreadable-file",
    "unknown-config-key",
    "unwrappable-container",
    "alias-refusal",
    "unquoted-version-in-config",
    "lone-cr-line-breaks",
    "byte-order-mark-inside-a-document",
    "explicit-key-colon-less-indented",
];

fn root() -> PathBuf {
    common::root().join("testdata/errors")
}

/// `path:LINE:COL: error: ` with numbers where they belong.
fn points_at_text(line: &str) -> bool {
    let Some((head, _)) = line.split_once(": error: ") else {
        return false;
    };
    let mut parts = head.rsplitn(3, ':');
    let col = parts.next().and_then(|c| c.parse::<usize>().ok());
    let ln = parts.next().and_then(|l| l.parse::<usize>().ok());
    let path = parts.next().unwrap_or("");
    col.is_some() && ln.is_some() && !path.is_empty()
}

#[test]
fn every_error_class_has_a_golden_stderr() {
    let mut found: Vec<String> = std::fs::read_dir(root())
        .expect("testdata/errors")
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    found.sort();
    let mut want: Vec<String> = CLASSES.iter().map(|c| c.to_string()).collect();
    want.sort();
    assert_eq!(found, want, "one folder per error class");
    let mut failures = Vec::new();
    for class in CLASSES {
        let dir = root().join(class);
        let args: Vec<String> = std::fs::read_to_string(dir.join("args"))
            .unwrap_or_else(|_| "check\ninput.yaml\n".into())
            .lines()
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect();
        let out = common::run(
            common::meshjob()
                .current_dir(&dir)
                .args(&args)
                .env_remove("MESHJOB_TEST_WRITE_HOOK"),
            None,
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        let actual = format!("{stderr}exit status: {}\n", out.code);
        for line in stderr.lines().filter(|l| l.contains(": error: ")) {
            if !points_at_text(line) {
                failures.push(format!("{class}: no file:line:col in {line:?}"));
            }
        }
        if !stderr.contains(": error: ") {
            failures.push(format!("{class}: no error line at all"));
        }
        failures.extend(golden::check_file(&dir.join("expected.stderr"), actual.as_bytes()).err());
    }
    golden::assert_none(&failures);
}
