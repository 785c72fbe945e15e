//! Every Job, CronJob and bare Pod that `fix` produces (with the wrapper, and with native sidecars) from
//! `testdata/` and `../shared/corpus` is valid
//! Kubernetes, checked by the real `kubernetes-validate` (PyPI) with `--strict` (unknown
//! fields rejected) against Kubernetes 1.30 and its newest bundled schemas.
//!
//! Some inputs are not valid to begin with (an old `batch/v2alpha1` CronJob has no schema; a
//! test fixture may be partial), so the rule is: every target document valid before `fix` is
//! valid after it, and most are. Items of a `kind: List` are validated one by one.

mod common;

use meshjob as run;
use meshjob::parse_stream;
use meshjob::{Settings, StrategyChoice, Version};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

const VERSIONS: &[&str] = &["1.30.0", "1.37.0"];

fn inputs() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = common::golden_cases()
        .into_iter()
        .map(|d| d.join("input.yaml"))
        .collect();
    if let Some(shared) = common::shared_dir() {
        let jobs = shared.join("corpus/jobs");
        v.extend(
            std::fs::read_dir(jobs)
                .into_iter()
                .flatten()
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml")),
        );
    }
    v.sort();
    v
}

/// The objects the Kubernetes schemas cover: Jobs, CronJobs and bare Pods (the other kinds
/// are CRDs, which `tests/kinds.rs` checks).
fn is_target(v: &serde_json::Value) -> bool {
    let api = v.get("apiVersion").and_then(|a| a.as_str()).unwrap_or("");
    let kind = v.get("kind").and_then(|k| k.as_str()).unwrap_or("");
    (api.starts_with("batch/") && matches!(kind, "Job" | "CronJob")) || (api, kind) == ("v1", "Pod")
}

/// The target objects of one document, as text to validate: the document itself, or each
/// target item of a List (as JSON, which is YAML).
fn targets(doc_text: &str) -> Vec<String> {
    let Ok(v) = serde_saphyr::from_str::<serde_json::Value>(doc_text) else {
        return Vec::new();
    };
    if is_target(&v) {
        return vec![doc_text.to_string()];
    }
    if v.get("kind").and_then(|k| k.as_str()) == Some("List")
        && let Some(items) = v.get("items").and_then(|i| i.as_array())
    {
        return items
            .iter()
            .filter(|i| is_target(i))
            .map(|i| i.to_string())
            .collect();
    }
    Vec::new()
}

/// Names of the files that passed, out of those given. The tool stops at a file it cannot
/// handle (a traceback, e.g. an object without `metadata.name`); that file counts as failed
/// and the rest are run again.
fn validate(tool: &Path, files: &[PathBuf], version: &str) -> BTreeSet<String> {
    let mut passed = BTreeSet::new();
    let mut pending: Vec<&PathBuf> = files.iter().collect();
    while !pending.is_empty() {
        let out = Command::new(tool)
            .args(["--strict", "-k", version])
            .args(&pending)
            .output()
            .expect("run kubernetes-validate");
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        let mut seen = BTreeSet::new();
        let mut failed = BTreeSet::new();
        for line in text.lines() {
            let Some(file) = line.split_whitespace().nth(1) else {
                continue;
            };
            if line.starts_with("INFO") && line.contains(" passed ") {
                seen.insert(file.to_string());
                passed.insert(file.to_string());
            } else if line.starts_with("ERROR") || line.starts_with("WARN") {
                seen.insert(file.to_string());
                failed.insert(file.to_string());
            }
        }
        for f in &failed {
            passed.remove(f);
        }
        let rest: Vec<&PathBuf> = pending
            .iter()
            .copied()
            .filter(|p| !seen.contains(&p.display().to_string()))
            .collect();
        // The first file without a verdict is the one the tool stopped at.
        pending = rest.into_iter().skip(1).collect();
    }
    passed
}

#[test]
fn fixed_jobs_are_valid_kubernetes() {
    let Some(tool) = common::require_tool(
        "kubernetes-validate",
        "validates fixed Jobs against Kubernetes schemas; pip install kubernetes-validate",
    ) else {
        return;
    };
    let work = tempfile::tempdir().expect("tempdir");
    let (mut before, mut after, mut names) = (Vec::new(), Vec::new(), Vec::new());
    // Every input under the wrapper (the default without versions), and again under the
    // native strategy.
    let runs = inputs().into_iter().flat_map(|p| {
        let base = common::case_settings(&p);
        let native = Settings {
            istio_version: Some(Version::new(1, 24)),
            linkerd_version: Some(meshjob::Release::Stable(Version::new(2, 20))),
            kubernetes_version: Some(Version::new(1, 29)),
            strategy: StrategyChoice::Native,
            ..base.clone()
        };
        [(p.clone(), base), (p, native)]
    });
    for (path, settings) in runs {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let out = run::edit_text(&text, &settings);
        if out.fatal.is_some() || out.text == text {
            continue;
        }
        let (Ok(old_docs), Ok(new_docs)) = (parse_stream(&text), parse_stream(&out.text)) else {
            panic!("{}: does not parse", path.display());
        };
        for (o, n) in old_docs.iter().zip(&new_docs) {
            let (o_text, n_text) = (&text[o.range.clone()], &out.text[n.range.clone()]);
            if o_text == n_text {
                continue;
            }
            let (o_objs, n_objs) = (targets(o_text), targets(n_text));
            assert_eq!(o_objs.len(), n_objs.len(), "{}", path.display());
            for (a, b) in o_objs.into_iter().zip(n_objs) {
                let i = before.len();
                let (pa, pb) = (
                    work.path().join(format!("before-{i}.yaml")),
                    work.path().join(format!("after-{i}.yaml")),
                );
                std::fs::write(&pa, a).unwrap();
                std::fs::write(&pb, b).unwrap();
                before.push(pa);
                after.push(pb);
                names.push(path.display().to_string());
            }
        }
    }
    assert!(
        before.len() >= 30,
        "too few fixed Jobs to validate: {}",
        before.len()
    );
    let mut failures = Vec::new();
    for version in VERSIONS {
        let ok_before = validate(&tool, &before, version);
        let ok_after = validate(&tool, &after, version);
        for i in 0..before.len() {
            let was = ok_before.contains(&before[i].display().to_string());
            let is = ok_after.contains(&after[i].display().to_string());
            if was && !is {
                let why = Command::new(&tool)
                    .args(["--strict", "-k", version])
                    .arg(&after[i])
                    .output()
                    .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                    .unwrap_or_default();
                failures.push(format!(
                    "{} (k8s {version}): valid before fix, not after: {why}",
                    names[i]
                ));
            }
        }
        eprintln!(
            "kubernetes-validate {version}: {} fixed objects, {} valid before, {} valid after",
            before.len(),
            ok_before.len(),
            ok_after.len()
        );
        assert!(
            ok_after.len() * 10 >= before.len() * 8,
            "most fixed objects should validate on {version}"
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
