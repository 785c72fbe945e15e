//! The official YAML test suite (`../shared/yaml-test-suite/`) through `fix`.
//!
//! Every case (`<id>/in.yaml`, or `<id>/<nn>/in.yaml`) goes through the pipeline in a thread
//! with a time bound. Valid YAML has no targets in the suite, so it must come out
//! byte-identical; invalid YAML (an `error` file beside it) must be a fatal error that points
//! inside the text. The shared invariants (`common::invariants`) hold for every case, and no
//! case may panic.
//!
//! granit-parser disagrees with the suite on a few cases. Each is listed with its reason in
//! `tests/yaml-test-suite-allowlist.txt`; a listed case that stops disagreeing fails the test,
//! so the list cannot go stale.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Generous for a debug build; the slowest case takes a few milliseconds.
const PER_CASE: Duration = Duration::from_secs(10);

fn cases(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        if dir.join("in.yaml").is_file() {
            out.push(dir.clone());
        }
        if let Ok(rd) = std::fs::read_dir(&dir) {
            stack.extend(
                rd.filter_map(|e| e.ok().map(|e| e.path()))
                    .filter(|p| p.is_dir()),
            );
        }
    }
    out.sort();
    out
}

fn allowlist() -> BTreeMap<String, String> {
    let path = common::root().join("tests/yaml-test-suite-allowlist.txt");
    let text = std::fs::read_to_string(path).expect("the allowlist exists");
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (id, reason) = l.split_once(char::is_whitespace).unwrap_or((l, ""));
            assert!(
                !reason.trim().is_empty(),
                "allowlist entry {id} has no reason"
            );
            (id.to_string(), reason.trim().to_string())
        })
        .collect()
}

/// What happened to one case, for comparison with what the suite says.
enum Verdict {
    Ok,
    /// Valid per the suite, rejected by the parser.
    RejectedValid(String),
    /// Invalid per the suite, accepted by the parser.
    AcceptedInvalid,
    /// A real failure: never allowlisted.
    Broken(String),
}

fn judge(text: String, invalid: bool) -> Verdict {
    let out = match common::invariants::check(&text) {
        Ok(o) => o,
        Err(e) => return Verdict::Broken(e),
    };
    match (&out.fatal, invalid) {
        (Some(_), true) => Verdict::Ok,
        (Some(f), false) => Verdict::RejectedValid(f.message.clone()),
        (None, true) => Verdict::AcceptedInvalid,
        (None, false) if out.text != text => {
            Verdict::Broken("valid YAML without targets was changed".into())
        }
        (None, false) => Verdict::Ok,
    }
}

#[test]
fn every_case_is_handled() {
    let Some(shared) = common::shared_dir() else {
        return;
    };
    let root = shared.join("yaml-test-suite");
    let all = cases(&root);
    assert!(
        all.len() > 300,
        "expected the whole suite, found {}",
        all.len()
    );
    let allowed = allowlist();
    let mut failures = Vec::new();
    let mut disagreeing = Vec::new();
    let mut slowest = (Duration::ZERO, String::new());
    for dir in &all {
        let id = dir
            .strip_prefix(&root)
            .unwrap_or(dir)
            .to_string_lossy()
            .into_owned();
        let invalid = dir.join("error").exists();
        let bytes = std::fs::read(dir.join("in.yaml")).expect("read in.yaml");
        let Ok(text) = String::from_utf8(bytes) else {
            failures.push(format!("{id}: in.yaml is not UTF-8"));
            continue;
        };
        let (tx, rx) = mpsc::channel();
        let started = Instant::now();
        std::thread::spawn(move || {
            let verdict = std::panic::catch_unwind(|| judge(text, invalid))
                .unwrap_or_else(|_| Verdict::Broken("panicked".into()));
            let _ = tx.send(verdict);
        });
        let verdict = match rx.recv_timeout(PER_CASE) {
            Ok(v) => v,
            Err(_) => Verdict::Broken(format!("took longer than {PER_CASE:?}")),
        };
        let took = started.elapsed();
        if took > slowest.0 {
            slowest = (took, id.clone());
        }
        let mismatch = match verdict {
            Verdict::Ok => None,
            Verdict::Broken(why) => {
                failures.push(format!("{id}: {why}"));
                None
            }
            Verdict::RejectedValid(m) => Some(format!("valid, but rejected: {m}")),
            Verdict::AcceptedInvalid => Some("invalid, but accepted".to_string()),
        };
        match (mismatch, allowed.contains_key(&id)) {
            (Some(_), true) => disagreeing.push(id),
            (Some(m), false) => failures.push(format!("{id}: {m} (not in the allowlist)")),
            (None, true) => failures.push(format!(
                "{id}: listed in the allowlist but handled as the suite says; remove it"
            )),
            (None, false) => {}
        }
    }
    for id in allowed.keys() {
        if !all
            .iter()
            .any(|d| d.strip_prefix(&root).is_ok_and(|p| p == Path::new(id)))
        {
            failures.push(format!(
                "{id}: listed in the allowlist but not in the suite"
            ));
        }
    }
    eprintln!(
        "yaml-test-suite: {} cases, {} known disagreements, slowest {:?} ({})",
        all.len(),
        disagreeing.len(),
        slowest.0,
        slowest.1
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A handful of cases through the real binary: stdin in, exit status and stderr out.
#[test]
fn some_cases_through_the_binary() {
    let Some(shared) = common::shared_dir() else {
        return;
    };
    let root = shared.join("yaml-test-suite");
    let allowed = allowlist();
    let all: Vec<PathBuf> = cases(&root)
        .into_iter()
        .filter(|d| {
            let id = d
                .strip_prefix(&root)
                .unwrap_or(d)
                .to_string_lossy()
                .into_owned();
            !allowed.contains_key(&id)
        })
        .collect();
    let (invalid, valid): (Vec<_>, Vec<_>) = all.iter().partition(|d| d.join("error").exists());
    let pick = |v: &[&PathBuf]| -> Vec<PathBuf> {
        v.iter()
            .step_by((v.len() / 6).max(1))
            .map(|p| p.to_path_buf())
            .collect()
    };
    for dir in pick(&invalid).iter().chain(pick(&valid).iter()) {
        let input = std::fs::read(dir.join("in.yaml")).expect("read");
        let out = common::run_stdin(common::meshjob().args(["fix", "-"]), &input);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let name = dir.display();
        assert_eq!(
            out.stdout, input,
            "{name}: stdout must be the input, unchanged"
        );
        if dir.join("error").exists() {
            assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
            let first = stderr.lines().next().unwrap_or("");
            let mut parts = first.splitn(4, ':');
            let ok = parts.next() == Some("-")
                && parts.next().is_some_and(|l| l.parse::<usize>().is_ok())
                && parts.next().is_some_and(|c| c.parse::<usize>().is_ok())
                && first.contains("error: invalid YAML");
            assert!(
                ok,
                "{name}: want `-:LINE:COL: error: invalid YAML...`, got {stderr}"
            );
        } else {
            assert_eq!(out.status.code(), Some(0), "{name}: {stderr}");
        }
    }
}

/// Why the three allowlisted cases are accepted (docs/deviations.md): granit-parser rejects
/// them only in its opt-in strict mode, which would also refuse a third-party manifest that
/// Kubernetes' YAML readers take (a closing `"]` at the indentation of its key).
#[test]
fn strict_indentation_would_refuse_real_manifests() {
    let Some(shared) = common::shared_dir() else {
        return;
    };
    let parses = |text: &str, strict: bool| {
        let mut options = granit_parser::Options::default();
        options.strict_indentation = strict;
        granit_parser::Parser::new_from_str_with_options(text, options).all(|e| e.is_ok())
    };
    for id in ["9C9N", "DK95/01", "QB6E"] {
        let text = std::fs::read_to_string(shared.join("yaml-test-suite").join(id).join("in.yaml"))
            .expect("the case is there");
        assert!(parses(&text, false) && !parses(&text, true), "{id}");
    }
    let argo = shared.join("corpus/jobs/argoproj__argo-workflows__examples__sidecar.yaml");
    let text = std::fs::read_to_string(argo).expect("the corpus file is there");
    assert!(parses(&text, false) && !parses(&text, true));
    let out = meshjob::edit_text(&text, &meshjob::Settings::default());
    assert!(out.fatal.is_none(), "{:?}", out.fatal);
}
