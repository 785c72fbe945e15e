//! Every input in `testdata/regressions/` keeps the invariants of `common::invariants` (the
//! same ones the fuzz target asserts), and its diff applies with the real `patch` too.

mod common;

use meshjob::Rule;

use std::path::Path;
use std::process::Command;

#[test]
fn regression_inputs_keep_the_invariants() {
    let files = yaml_files("testdata/regressions");
    let patch = common::require_tool("patch", "applies the diff of each regression input");
    for path in files {
        let bytes = std::fs::read(&path).expect("read");
        let Ok(text) = meshjob::decode(&bytes) else {
            continue;
        };
        // Each of these once gave an internal error or a wrong edit: valid input is edited
        // or refused with a finding, and internal errors are for meshjob's own bugs.
        let (out, internal) = checked(&path, text);
        assert!(internal.is_none(), "{}: {internal:?}", path.display());

        if let (Some(patch), None) = (&patch, &out.fatal) {
            let work = tempfile::tempdir().expect("tempdir");
            std::fs::write(work.path().join("input.yaml"), text).unwrap();
            let diff = meshjob::unified_diff("input.yaml", text, &out.text);
            let patched = common::run_stdin(
                Command::new(patch)
                    .args(["-p1", "--quiet", "--fuzz=0", "--no-backup-if-mismatch"])
                    .current_dir(work.path()),
                diff.as_bytes(),
            );
            assert!(patched.status.success(), "{}", path.display());
            let patched = std::fs::read_to_string(work.path().join("input.yaml")).unwrap();
            assert_eq!(
                patched,
                out.text,
                "{}: patch gives the output",
                path.display()
            );
        }
    }
}

/// A nested insertion at the end of a text without a final line break is made, not refused.
#[test]
fn nested_insert_at_end_without_final_newline() {
    let path =
        common::root().join("testdata/regressions/mesh-config-no-final-newline-nested-insert.yaml");
    let text = std::fs::read_to_string(path).unwrap();
    for t in [text.clone(), text.replace("\r\n", "\n")] {
        let out = meshjob::edit_text(&t, &meshjob::Settings::default());
        assert!(out.fatal.is_none(), "{:?}", out.fatal);
        let nl = if t.contains('\r') { "\r\n" } else { "\n" };
        let want = format!(
            "defaultConfig:{nl}  proxyMetadata:{nl}    EXIT_ON_ZERO_ACTIVE_CONNECTIONS: \"true\"{nl}  terminationDrainDuration: 5s"
        );
        assert_eq!(out.text, want);
    }
}

/// The inputs of `testdata/known-internal-errors/` are bugs not fixed yet: they must stay
/// safe (every invariant holds: the text is returned unchanged with a fatal error), and the
/// day one of them stops being an internal error, this test says to move it to
/// `testdata/regressions/`.
#[test]
fn known_internal_errors_stay_safe() {
    let files = yaml_files_or_none("testdata/known-internal-errors");
    for path in files {
        let bytes = std::fs::read(&path).expect("read");
        let text = meshjob::decode(&bytes).expect("UTF-8");
        let (_, internal) = checked(&path, text);
        assert!(
            internal.is_some(),
            "{} no longer ends in an internal error: move it to testdata/regressions/ with a \
             note on what it showed",
            path.display()
        );
    }
}

/// The outcome of `text` (read from `path`), which must keep every invariant, and its first
/// internal error, if any.
fn checked(path: &Path, text: &str) -> (meshjob::Outcome, Option<meshjob::Finding>) {
    let out = common::invariants::check(text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let internal = (out.fatal.iter().chain(&out.findings))
        .find(|f| f.rule == Rule::Internal)
        .cloned();
    (out, internal)
}

/// The `*.yaml` files of a folder of the repository, sorted; the folder must hold some.
fn yaml_files(dir: &str) -> Vec<std::path::PathBuf> {
    let files = yaml_files_or_none(dir);
    assert!(!files.is_empty(), "{dir} holds no YAML file");
    files
}

/// The `*.yaml` files of a folder of the repository, sorted.
fn yaml_files_or_none(dir: &str) -> Vec<std::path::PathBuf> {
    let path = common::root().join(dir);
    let mut files: Vec<_> = std::fs::read_dir(&path)
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
}
