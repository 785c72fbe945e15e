//! Golden cases for the KRM function: each `testdata/krm/<case>/` holds `input.yaml` (a
//! ResourceList, fed to `meshjob krm` on stdin), `expected.yaml` (stdout, absent when there is
//! none) and `expected.stderr` (stderr, then the exit status).
//!
//! Comparison is on raw bytes; `MESHJOB_UPDATE_GOLDEN=1 cargo test --test krm` rewrites the
//! expectations. Every case also checks that kustomize's annotations come back
//! byte-identical and that a second run leaves the items alone.

mod common;

use common::{Run, golden};
use meshjob::{Node, parse_stream};
use std::path::PathBuf;

fn cases() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(common::root().join("testdata/krm"))
        .expect("testdata/krm/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("input.yaml").is_file())
        .collect();
    v.sort();
    v
}

fn run(args: &[&str], input: &[u8]) -> Run {
    common::run(common::meshjob().args(args), Some(input))
}

fn root(text: &str) -> Node {
    let docs = parse_stream(text).expect("output parses");
    assert_eq!(docs.len(), 1, "one ResourceList document");
    docs[0].root.clone()
}

fn items(root: &Node) -> Vec<Node> {
    root.get("items")
        .and_then(Node::items)
        .map(<[Node]>::to_vec)
        .unwrap_or_default()
}

/// `key: value` text of every kustomize annotation of every item, in order.
fn kustomize_annotations(text: &str) -> Vec<String> {
    let prefixes = [
        "config.kubernetes.io/",
        "internal.config.kubernetes.io/",
        "kustomize.config.k8s.io/",
    ];
    let mut v = Vec::new();
    for item in items(&root(text)) {
        let Some(entries) = item
            .path(&["metadata", "annotations"])
            .and_then(Node::entries)
        else {
            continue;
        };
        for e in entries {
            if e.key
                .as_str()
                .is_some_and(|k| prefixes.iter().any(|p| k.starts_with(p)))
            {
                v.push(text[e.key.props_start..e.value.end].to_string());
            }
        }
    }
    v
}

fn items_text(text: &str) -> String {
    let r = root(text);
    r.get("items")
        .map(|n| text[n.props_start..n.end].to_string())
        .unwrap_or_default()
}

#[test]
fn krm_golden_cases() {
    let mut failures = Vec::new();
    let all = cases();
    assert!(all.len() >= 6, "expected the KRM cases under testdata/krm/");
    for dir in all {
        let input = std::fs::read_to_string(dir.join("input.yaml")).expect("input");
        let r = run(&["krm"], input.as_bytes());
        let stderr = format!("{}exit status: {}\n", r.stderr(), r.code);
        failures.extend(golden::check_file(&dir.join("expected.yaml"), &r.stdout).err());
        failures.extend(golden::check_file(&dir.join("expected.stderr"), stderr.as_bytes()).err());
        if r.code == 2 {
            assert!(
                r.stdout.is_empty(),
                "{}: no output on trouble",
                dir.display()
            );
            continue;
        }
        assert_eq!(
            kustomize_annotations(&input),
            kustomize_annotations(r.stdout()),
            "{}: kustomize annotations must come back byte-identical",
            dir.display()
        );
        let again = run(&["krm"], &r.stdout);
        assert_eq!(
            items_text(again.stdout()),
            items_text(r.stdout()),
            "{}: a second run must leave the items alone",
            dir.display()
        );
    }
    golden::assert_none(&failures);
}

#[test]
fn no_arguments_and_a_resource_list_on_stdin_runs_the_function() {
    let dir = common::root().join("testdata/krm/v1-kustomize-annotations");
    let input = std::fs::read(dir.join("input.yaml")).expect("input");
    let bare = run(&[], &input);
    let krm = run(&["krm"], &input);
    assert_eq!(bare.code, 0, "{}", bare.show());
    assert_eq!(bare.stdout, krm.stdout);
}

#[test]
fn results_say_error_only_for_what_is_left_unfixed() {
    let dir = common::root().join("testdata/krm/error-result-exits-1");
    let r = run(
        &["krm"],
        &std::fs::read(dir.join("input.yaml")).expect("input"),
    );
    assert_eq!(r.code, 1);
    let results = root(r.stdout());
    let results = results
        .get("results")
        .and_then(Node::items)
        .expect("results");
    let sev: Vec<&str> = results
        .iter()
        .filter_map(|n| n.get("severity").and_then(Node::as_str))
        .collect();
    // The versions note, the unfixable container, then for the fixed pod: rewritten, the
    // strategy chosen, the kept user value.
    assert_eq!(sev, ["info", "error", "info", "info", "warning"]);
}
