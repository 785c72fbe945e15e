//! Sweep over the third-party corpus in `../shared/corpus` (never copied into the repo).
//!
//! Every file goes through `fix`: look-alikes (NEGATIVE rows of SOURCES.md) and `other/`
//! come out byte-identical, every output parses, and a second `fix` changes nothing.

mod common;

use meshjob as run;
use meshjob::Settings;
use std::path::{Path, PathBuf};

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.retain(|p| p.is_file());
    v.sort();
    v
}

/// File names that SOURCES.md marks NEGATIVE: look-alikes that must not change.
fn negatives(shared: &Path) -> Vec<String> {
    let sources = std::fs::read_to_string(shared.join("corpus/SOURCES.md")).unwrap_or_default();
    sources
        .lines()
        .filter(|l| l.contains("NEGATIVE"))
        .filter_map(|l| l.split('`').nth(1).map(str::to_string))
        .collect()
}

#[test]
fn corpus_sweep() {
    let Some(shared) = common::shared_dir() else {
        return;
    };
    let settings = Settings::default();
    let negative = negatives(&shared);
    assert!(
        negative.len() >= 10,
        "SOURCES.md should list the look-alikes"
    );
    let mut failures = Vec::new();
    let mut changed = 0;
    let mut total = 0;
    for sub in ["jobs", "mesh", "other"] {
        for path in files(&shared.join("corpus").join(sub)) {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name.ends_with(".md") {
                continue;
            }
            total += 1;
            let text = std::fs::read_to_string(&path).expect("corpus files are UTF-8");
            let out = run::process(&text, &settings);
            if let Some(f) = &out.fatal {
                failures.push(format!("{sub}/{name}: fatal: {}", f.message));
                continue;
            }
            if out.text != text {
                changed += 1;
            }
            let must_be_identical = sub == "other" || negative.contains(&name);
            if must_be_identical && out.text != text {
                failures.push(format!("{sub}/{name}: a non-target file was changed"));
            }
            if meshjob::parse_stream(&out.text).is_err() {
                failures.push(format!("{sub}/{name}: the output does not parse"));
            }
            let again = run::process(&out.text, &settings);
            if again.text != out.text || again.fatal.is_some() {
                failures.push(format!("{sub}/{name}: a second fix is not a no-op"));
            }
        }
    }
    eprintln!("corpus sweep: {total} files, {changed} changed");
    assert!(
        total >= 100,
        "expected the whole corpus, found {total} files"
    );
    assert!(
        changed >= 30,
        "expected the Jobs in the corpus to be rewritten"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
