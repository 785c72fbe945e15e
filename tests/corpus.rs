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

/// The first document (1-based) that differs between `before` and `after` although it
/// holds no pod of the kinds table. SOURCES.md marks as NEGATIVE what was not a target when
/// only Jobs and CronJobs were: since then JobSets, Volcano Jobs and batch Pods are, and
/// must be the only documents of those files to change; look-alikes (a Job in a string,
/// another group's CronJob) must not.
fn changed_non_target(before: &str, after: &str) -> Option<usize> {
    let (Ok(a), Ok(b)) = (meshjob::parse_stream(before), meshjob::parse_stream(after)) else {
        return Some(0);
    };
    if a.len() != b.len() {
        return Some(0);
    }
    a.iter().zip(&b).enumerate().find_map(|(i, (x, y))| {
        let differs = before[x.range.clone()] != after[y.range.clone()];
        let target = !meshjob::locate(&x.root, meshjob::Kinds::builtin())
            .pods
            .is_empty();
        (differs && !target).then_some(i + 1)
    })
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
            let out = run::edit_text(&text, &settings);
            if let Some(f) = &out.fatal {
                failures.push(format!("{sub}/{name}: fatal: {}", f.message));
                continue;
            }
            if out.text != text {
                changed += 1;
            }
            let must_be_identical = sub == "other" || negative.contains(&name);
            if must_be_identical && let Some(doc) = changed_non_target(&text, &out.text) {
                failures.push(format!(
                    "{sub}/{name}: document {doc}, which holds no pod of a kind meshjob fixes, \
                     was changed"
                ));
            }
            if meshjob::parse_stream(&out.text).is_err() {
                failures.push(format!("{sub}/{name}: the output does not parse"));
            }
            let again = run::edit_text(&out.text, &settings);
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
