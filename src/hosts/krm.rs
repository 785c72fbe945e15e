//! KRM exec function: a `ResourceList` in, the same `ResourceList` out, its items rewritten
//! and its `results` carrying the findings.
//!
//! The whole input text goes through the pipeline, which treats the list's `items` as
//! objects, so every byte outside the edits is kept: comments, layout, the
//! `functionConfig`, and the `config.kubernetes.io/*`, `internal.config.kubernetes.io/*` and
//! `kustomize.config.k8s.io/*` annotations that orchestrators map resources back by. Then
//! `results` is set (added, or its old value replaced) with the same style-matching editor.
//!
//! Findings the output already repairs are reported as `info` with "(fixed)": the function
//! exits 1 only for error results, as `fix` does only for errors it leaves behind.

use super::{Host, at, config_settings};
use crate::config::Settings;
use crate::exit;
use crate::finding::{Finding, ObjectRef, Rule, Severity};
use crate::locate::{describe, object_ref};
use crate::output::console::Reply;
use crate::output::report::fixed_note;
use crate::run::Outcome;
use crate::yaml::editor::Editor;
use crate::yaml::embedded::looks_json;
use crate::yaml::emit::Out;
use crate::yaml::style::detect_style;
use crate::yaml::tree::{Doc, Node, parse_stream};
use crate::yaml::value::{ScalarType, Value};

/// The `ResourceList` versions accepted; the input's is echoed back.
pub const API_VERSIONS: [&str; 2] = ["config.kubernetes.io/v1", "config.kubernetes.io/v1alpha1"];

const PATH_ANNOTATIONS: [&str; 2] = [
    "config.kubernetes.io/path",
    "internal.config.kubernetes.io/path",
];
const INDEX_ANNOTATIONS: [&str; 2] = [
    "config.kubernetes.io/index",
    "internal.config.kubernetes.io/index",
];

/// The KRM function.
pub struct Function;

/// What the function reads from the list before the run: the list's items.
pub struct ListItems(Vec<Node>);

impl Host for Function {
    type Input = ListItems;

    fn label(&self) -> &'static str {
        "meshjob krm"
    }

    fn prepare(&self, input: &str) -> Result<(Settings, ListItems), String> {
        let docs = parse_stream(input)
            .map_err(|e| format!("{}: invalid YAML: {}", at(input, e.offset), e.message))?;
        let [doc] = docs.as_slice() else {
            return Err(format!(
                "expected one ResourceList document on stdin, found {} documents",
                docs.len()
            ));
        };
        let root = &doc.root;
        let api = root.str("apiVersion").unwrap_or_default();
        let kind = root.str("kind").unwrap_or_default();
        if kind != "ResourceList" || !API_VERSIONS.contains(&api) {
            return Err(format!(
                "expected a ResourceList (apiVersion {}), found apiVersion {api:?} kind {kind:?}",
                API_VERSIONS.join(" or ")
            ));
        }
        let settings = match root.get("functionConfig").filter(|n| !n.is_null()) {
            Some(fc) => function_config(input, fc)?,
            None => Settings::default(),
        };
        let items = items_of(root).into_iter().cloned().collect();
        Ok((settings, ListItems(items)))
    }

    fn reply(&self, input: &str, items: ListItems, outcome: Outcome) -> Result<Reply, String> {
        let in_items: Vec<&Node> = items.0.iter().collect();
        let out_docs = parse_stream(&outcome.text).map_err(|e| {
            format!(
                "internal error: the rewritten list does not parse: {}",
                e.message
            )
        })?;
        let out_root = &out_docs[0].root;
        let out_items = items_of(out_root);
        let results = build_results(
            input,
            &in_items,
            &outcome.text,
            &out_items,
            outcome.findings,
        );
        let failed = results.iter().any(|r| r.severity == Severity::Error);
        let text = set_results(&outcome.text, &out_docs, &results)?;
        Ok(Reply {
            stdout: Some(text),
            stderr: String::new(),
            code: if failed { exit::FINDINGS } else { exit::OK },
        })
    }
}

fn items_of(root: &Node) -> Vec<&Node> {
    root.get("items")
        .and_then(Node::items)
        .map(|i| i.iter().collect())
        .unwrap_or_default()
}

/// Settings from the `functionConfig` node. Its text is parsed where it stands: it is
/// padded with the line breaks and spaces that precede it, so positions in config errors
/// are positions in the ResourceList.
fn function_config(input: &str, node: &Node) -> Result<Settings, String> {
    let (line, col) = crate::finding::line_col(input, node.props_start);
    let text = format!(
        "{}{}{}",
        "\n".repeat(line - 1),
        " ".repeat(col - 1),
        &input[node.props_start..node.end]
    );
    config_settings(&text, "functionConfig")
}

/// One entry of `results`.
#[derive(Debug)]
struct KrmResult {
    severity: Severity,
    message: String,
    object: Option<ObjectRef>,
    field: Option<String>,
    file: Option<(String, Option<u64>)>,
}

impl KrmResult {
    fn out(&self) -> Out {
        let s = |v: &str| Out::Str(v.to_string());
        let mut map = vec![
            ("message".to_string(), s(&self.message)),
            ("severity".to_string(), s(self.severity.as_str())),
        ];
        if let Some(o) = &self.object {
            let mut r = vec![
                ("apiVersion".to_string(), s(&o.api_version)),
                ("kind".to_string(), s(&o.kind)),
                ("name".to_string(), s(&o.name)),
            ];
            if !o.namespace.is_empty() {
                r.push(("namespace".to_string(), s(&o.namespace)));
            }
            map.push(("resourceRef".to_string(), Out::Map(r)));
        }
        if let Some(f) = &self.field {
            map.push((
                "field".to_string(),
                Out::Map(vec![("path".to_string(), s(f))]),
            ));
        }
        if let Some((path, index)) = &self.file {
            let mut f = vec![("path".to_string(), s(path))];
            if let Some(i) = index {
                f.push((
                    "index".to_string(),
                    Out::Raw {
                        text: i.to_string(),
                        value: Value::Scalar(ScalarType::Int, i.to_string()),
                        flow_safe: true,
                    },
                ));
            }
            map.push(("file".to_string(), Out::Map(f)));
        }
        Out::Map(map)
    }
}

/// The annotation value of an item for the first of `keys` that it has.
fn annotation<'n>(item: &'n Node, keys: &[&str]) -> Option<&'n str> {
    let ann = item.path(&["metadata", "annotations"])?;
    keys.iter().find_map(|k| ann.str(k))
}

fn file_of(item: &Node) -> Option<(String, Option<u64>)> {
    let path = annotation(item, &PATH_ANNOTATIONS)?;
    let index = annotation(item, &INDEX_ANNOTATIONS).and_then(|i| i.parse().ok());
    Some((path.to_string(), index))
}

/// Results in item order: for each item, a note when it was rewritten, then its findings.
fn build_results(
    input: &str,
    in_items: &[&Node],
    output: &str,
    out_items: &[&Node],
    mut findings: Vec<Finding>,
) -> Vec<KrmResult> {
    findings.sort_by_key(|f| f.offset);
    let item_of = |offset: usize| {
        in_items
            .iter()
            .position(|n| n.props_start <= offset && offset < n.end.max(n.props_start + 1))
    };
    let mut per_item: Vec<Vec<Finding>> = vec![Vec::new(); in_items.len()];
    let mut loose = Vec::new();
    for f in findings {
        match item_of(f.offset) {
            Some(i) => per_item[i].push(f),
            None => loose.push(f),
        }
    }
    let mut results = Vec::new();
    for (i, item) in in_items.iter().enumerate() {
        let file = file_of(item);
        let changed = out_items
            .get(i)
            .is_some_and(|o| output[o.props_start..o.end] != input[item.props_start..item.end]);
        if changed {
            let obj = object_ref(item);
            results.push(KrmResult {
                severity: Severity::Info,
                message: format!(
                    "{}: rewritten so that the Istio sidecar stops when the task ends [{}]",
                    describe(&obj),
                    Rule::Rewritten
                ),
                object: Some(obj),
                field: None,
                file: file.clone(),
            });
        }
        for f in per_item[i].drain(..) {
            results.push(result_of(f, Some(item), file.clone()));
        }
    }
    results.extend(loose.into_iter().map(|f| result_of(f, None, None)));
    results
}

fn result_of(f: Finding, item: Option<&Node>, file: Option<(String, Option<u64>)>) -> KrmResult {
    let (severity, message) = if f.fixed {
        (
            Severity::Info,
            format!("{}{} [{}]", f.message, fixed_note(&f, true), f.rule),
        )
    } else {
        (f.severity, format!("{} [{}]", f.message, f.rule))
    };
    KrmResult {
        severity,
        message,
        object: f.object.or_else(|| item.map(object_ref)),
        field: f.field,
        file,
    }
}

/// Sets `results` in the list's root mapping, in the list's own style, and checks that the
/// edited text reads back as the list with those results.
fn set_results(text: &str, docs: &[Doc], results: &[KrmResult]) -> Result<String, String> {
    let Some(root) = docs.first().map(|d| &d.root) else {
        return Err("internal error: the rewritten list is empty".into());
    };
    if results.is_empty() && root.get("results").is_none() {
        return Ok(text.to_string());
    }
    let mut style = detect_style(text, root);
    style.json = root.flow && looks_json(&text[root.props_start..]);
    let mut editor = Editor::new(text, root, style);
    let out = Out::Seq(results.iter().map(KrmResult::out).collect());
    editor.set(root, &[], "results", &out);
    crate::apply::apply(
        text,
        docs,
        &editor.edits,
        &[crate::apply::Intended::edited(editor.intended)],
    )
    .map_err(|e| format!("{e} while setting results"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hosts::run_text;

    #[test]
    fn rejects_what_is_not_a_resource_list() {
        for input in [
            "",
            "apiVersion: v1\nkind: List\nitems: []\n",
            "a: 1\n---\nb: 2\n",
        ] {
            let r = run_text(&Function, input);
            assert_eq!(r.code, 2, "{input:?}");
            assert!(r.stdout.is_none());
            assert!(r.stderr.contains("ResourceList"), "{}", r.stderr);
        }
    }

    #[test]
    fn empty_list_is_echoed_unchanged() {
        let input = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n";
        let r = run_text(&Function, input);
        assert_eq!(r.code, 0);
        assert_eq!(r.stdout.as_deref(), Some(input));
    }
}
