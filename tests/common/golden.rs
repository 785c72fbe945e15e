//! Expectations kept in files and compared byte for byte: the golden cases, the error
//! classes, the KRM cases, the config examples and the command-line cases all go through
//! here, so that one environment variable rewrites them all and a mismatch reads the same
//! everywhere.

use std::path::Path;

/// `MESHJOB_UPDATE_GOLDEN=1 cargo test` rewrites every expectation instead of comparing.
pub const UPDATE_ENV: &str = "MESHJOB_UPDATE_GOLDEN";

/// Whether [`UPDATE_ENV`] asks to rewrite the expectations.
pub fn updating() -> bool {
    std::env::var_os(UPDATE_ENV).is_some_and(|v| !v.is_empty() && v != "0")
}

/// Compares `actual` with the file at `path`, where an absent file stands for no output.
/// When updating, rewrites the file instead (and leaves an absent file absent while the
/// output stays empty). Returns what differs.
pub fn check_file(path: &Path, actual: &[u8]) -> Result<(), String> {
    if updating() {
        if !actual.is_empty() || path.exists() {
            std::fs::write(path, actual)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        return Ok(());
    }
    let want = std::fs::read(path).unwrap_or_default();
    if want == actual {
        Ok(())
    } else {
        Err(mismatch(&path.display().to_string(), &want, actual))
    }
}

/// What differs between an expectation and the output, as a unified diff of lines (raw
/// bytes that are not UTF-8 are shown lossily; the comparison itself was on bytes).
pub fn mismatch(what: &str, want: &[u8], actual: &[u8]) -> String {
    let want = String::from_utf8_lossy(want);
    let actual = String::from_utf8_lossy(actual);
    let diff = similar::TextDiff::from_lines(want.as_ref(), actual.as_ref())
        .unified_diff()
        .missing_newline_hint(true)
        .header("expected", "actual")
        .to_string();
    let diff = if diff.is_empty() {
        "(they differ only in bytes that are not UTF-8)".to_string()
    } else {
        diff
    };
    format!("{what} differs (set {UPDATE_ENV}=1 to rewrite):\n{diff}")
}

/// Fails the test with every collected failure, one block each.
#[track_caller]
pub fn assert_none(failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} failure(s):\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
