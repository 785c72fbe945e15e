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
use crate::finding::{describe, object_ref};
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
pub(crate) const API_VERSIONS: [&str; 2] =
    ["config.kubernetes.io/v1", "config.kubernetes.io/v1alpha1"];

const PATH_ANNOTATIONS: [&str; 2] = [
    "config.kubernetes.io/path",
    "internal.config.kubernetes.io/path",
];
const INDEX_ANNOTATIONS: [&str; 2] = [
    "config.kubernetes.io/index",
    "internal.config.kubernetes.io/index",
];

/// The KRM function.
pub(crate) struct Function;

/// What the function reads from the list before the run: the list's items.
pub(crate) struct ListItems(Vec<Node>);

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
            Some(fc) if is_config_map(fc) => config_map_settings(input, fc)?,
            Some(fc) => function_config(input, fc)?,
            None => crate::config::Resolver::without_flags().without_config(),
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
    let (line, col) = crate::yaml::text::line_col(input, node.props_start);
    let text = format!(
        "{}{}{}",
        "\n".repeat(line - 1),
        " ".repeat(col - 1),
        &input[node.props_start..node.end]
    );
    config_settings(&text, "functionConfig")
}

/// A `v1` ConfigMap: what kpt passes as the functionConfig of `kpt fn eval --exec` without
/// `--fn-config`, named `function-input`, its `data` empty or filled from `-- KEY=VALUE`
/// (kptdev/kpt@v1.0.0-beta.56, thirdparty/cmdconfig/commands/cmdeval/cmdeval.go,
/// `getCLIFunctionConfig`).
fn is_config_map(fc: &Node) -> bool {
    fc.str("apiVersion") == Some("v1") && fc.str("kind") == Some("ConfigMap")
}

/// Settings from a ConfigMap functionConfig: each `data` key is a `MeshJobConfig` spec key.
/// ConfigMap values are strings, so a value goes into the spec as written (`true`, `30`,
/// `[a, b]`) unless the schema says the key takes text, where it is quoted: `1.24` stays
/// the version `1.24`, not a number. An error names the key and its place in the list.
fn config_map_settings(input: &str, fc: &Node) -> Result<Settings, String> {
    let entries = match fc.get("data") {
        None => return Ok(crate::config::Resolver::without_flags().without_config()),
        Some(d) if d.is_null() => {
            return Ok(crate::config::Resolver::without_flags().without_config());
        }
        Some(d) => d.entries().ok_or_else(|| {
            format!(
                "{}: functionConfig: the ConfigMap's data must be a mapping of strings",
                at(input, d.props_start)
            )
        })?,
    };
    let schema: serde_json::Value = serde_json::from_str(&crate::config::schema_json())
        .map_err(|e| format!("internal error: the configuration schema: {e}"))?;
    let mut text = String::from("apiVersion: meshjob.dev/v1alpha1\nkind: MeshJobConfig\nspec:\n");
    // Line 4 of `text` is the first entry's; `lines[i]` is the key and place of line 4 + i.
    let mut lines = Vec::new();
    for e in entries {
        let place = at(input, e.key.props_start);
        let (Some(key), Some(value)) = (e.key.as_str(), e.value.as_str()) else {
            return Err(format!(
                "{place}: functionConfig: ConfigMap data must map string keys to string values"
            ));
        };
        if value.contains(['\n', '\r']) {
            return Err(format!(
                "{place}: functionConfig: data.{key}: a value of one line is expected"
            ));
        }
        let shown = if takes_text(&schema, key) {
            serde_json::Value::String(value.to_string()).to_string()
        } else {
            value.to_string()
        };
        text.push_str(&format!(
            "  {}: {shown}\n",
            serde_json::Value::String(key.into())
        ));
        lines.push((key, place));
    }
    // A config error's line is that of its entry, or 0 for no place in the text.
    let at_entry =
        |e: crate::config::ConfigError| match e.line.checked_sub(4).and_then(|i| lines.get(i)) {
            Some((key, place)) => format!("{place}: functionConfig: data.{key}: {}", e.message),
            None => format!("functionConfig (ConfigMap data): {}", e.message),
        };
    let config = crate::config::parse(&text, "functionConfig").map_err(at_entry)?;
    (crate::config::Resolver::without_flags())
        .settings(Some(&config))
        .map_err(at_entry)
}

/// Whether the spec key's schema is a string (after `$ref`, `anyOf` and `oneOf`).
fn takes_text(schema: &serde_json::Value, key: &str) -> bool {
    fn is_text(schema: &serde_json::Value, node: &serde_json::Value, depth: u8) -> bool {
        if depth > 4 {
            return false;
        }
        if let Some(r) = node["$ref"].as_str() {
            let name = r.trim_start_matches("#/$defs/");
            return is_text(schema, &schema["$defs"][name], depth + 1);
        }
        let typed = match &node["type"] {
            serde_json::Value::String(t) => t == "string",
            serde_json::Value::Array(ts) => ts.iter().any(|t| t == "string"),
            _ => false,
        };
        typed
            || ["anyOf", "oneOf"].iter().any(|k| {
                node[*k]
                    .as_array()
                    .is_some_and(|v| v.iter().any(|n| is_text(schema, n, depth + 1)))
            })
    }
    is_text(schema, &schema["$defs"]["ConfigSpec"]["properties"][key], 0)
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
                        value: Value::Scalar(ScalarType::Int, i.to_string().into()),
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
                    "rewritten so that mesh sidecars stop when their tasks end [{}]",
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

/// A finding as a result. Its message loses the `Kind/name: ` it starts with when that is
/// the result's `resourceRef`: orchestrators print the resource before the message (kpt:
/// `[error] batch/v1/Job/migrate: ...`), so it would read twice.
fn result_of(f: Finding, item: Option<&Node>, file: Option<(String, Option<u64>)>) -> KrmResult {
    let object = f.object.clone().or_else(|| item.map(object_ref));
    let field = item.and_then(|i| field_path(i, f.offset));
    let text = match &object {
        Some(o) => f
            .message
            .strip_prefix(&format!("{}: ", describe(o)))
            .unwrap_or(&f.message),
        None => &f.message,
    };
    let (severity, message) = if f.fixed {
        (
            Severity::Info,
            format!("{text}{} [{}]", fixed_note(&f, true), f.rule),
        )
    } else {
        (f.severity, format!("{text} [{}]", f.rule))
    };
    KrmResult {
        severity,
        message,
        object,
        field,
        file,
    }
}

/// The path, in the item, of the deepest field whose text holds `offset` (where a finding
/// is), as the KRM result's `field.path` (a required string whose form the function spec
/// leaves open: kubernetes-sigs/kustomize@635c4fd, kyaml/fn/framework/result.go, `Field`).
/// Written as Kubernetes writes field paths in its errors (kubernetes/apimachinery,
/// pkg/util/validation/field/path.go): `.name` for a field, `[i]` for an item, `[key]` for
/// a key that is not a plain name (an annotation's). A finding at the start of a mapping is
/// about the mapping, not its first key. `None` for the item itself.
fn field_path(item: &Node, offset: usize) -> Option<String> {
    let mut path = String::new();
    let mut n = item;
    loop {
        if offset <= n.props_start {
            break;
        }
        if let Some(entries) = n.entries() {
            let within =
                |x: &Node| x.props_start <= offset && offset < x.end.max(x.props_start + 1);
            let Some(e) = entries.iter().find(|e| within(&e.key) || within(&e.value)) else {
                break;
            };
            let key = e.key.as_str()?;
            let plain = !key.is_empty()
                && (key.bytes()).all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
            match (plain, path.is_empty()) {
                (true, true) => path.push_str(key),
                (true, false) => {
                    path.push('.');
                    path.push_str(key);
                }
                (false, _) => {
                    path.push('[');
                    path.push_str(key);
                    path.push(']');
                }
            }
            if within(&e.key) {
                break;
            }
            n = &e.value;
        } else if let Some(items) = n.items() {
            let Some(i) = (items.iter())
                .position(|x| x.props_start <= offset && offset < x.end.max(x.props_start + 1))
            else {
                break;
            };
            path.push_str(&format!("[{i}]"));
            n = &items[i];
        } else {
            break;
        }
    }
    (!path.is_empty()).then_some(path)
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
    let edits = editor.take_edits();
    let intended = [crate::yaml::apply::Intended::edited(editor.take_intended())];
    crate::yaml::apply::apply(text, docs, &edits, &intended)
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

    fn with_config_map(data: &str) -> String {
        format!(
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n\
             functionConfig:\n  apiVersion: v1\n  kind: ConfigMap\n  \
             metadata: {{name: function-input}}\n  data: {data}\n"
        )
    }

    #[test]
    fn a_config_map_function_config_is_read_by_the_schema() {
        let defaults = |data: &str| match Function.prepare(&with_config_map(data)) {
            Ok((s, _)) => s == Settings::default(),
            Err(e) => panic!("{e}"),
        };
        assert!(defaults("{}"));
        assert!(defaults("null"));
        let (s, _) = Function
            .prepare(&with_config_map(
                "{istioVersion: '1.24', waitForProxy: '30', force: 'true', exclude: '[a, b]'}",
            ))
            .expect("valid");
        assert_eq!(
            s.istio_version.map(|v| v.to_string()),
            Some("1.24".to_string())
        );
        assert_eq!(s.wait_for_proxy_seconds, Some(30));
        assert!(s.force);
        assert_eq!(s.exclude, ["a", "b"]);
        // An error names the key and its place in the list.
        let Err(e) = Function.prepare(&with_config_map("{force: 'true', waitForProxy: soon}"))
        else {
            panic!("soon is not a number");
        };
        assert!(
            e.starts_with("stdin:8:") && e.contains("functionConfig: data.waitForProxy: "),
            "{e}"
        );
        let Err(e) = Function.prepare(&with_config_map("{a: \"x\\ny\"}")) else {
            panic!("two lines");
        };
        assert!(e.contains("data.a: a value of one line is expected"), "{e}");
    }

    #[test]
    fn empty_list_is_echoed_unchanged() {
        let input = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n";
        let r = run_text(&Function, input);
        assert_eq!(r.code, 0);
        assert_eq!(r.stdout.as_deref(), Some(input));
    }
}
