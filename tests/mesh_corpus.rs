//! Sweep over the third-party mesh configurations in `../shared/corpus/mesh`: every mesh
//! document comes out with the settings (read back from the output, including the YAML
//! inside a ConfigMap's `data.mesh`), the output parses, a second run changes nothing, and
//! a file without a mesh document says why in its findings.

mod common;

use common::Run;
use meshjob::parse_stream;
use meshjob::{ScalarType, Value};
use std::path::Path;

fn fix(input: &[u8]) -> Run {
    common::run(
        common::meshjob().args(["fix", "--color", "never", "-"]),
        Some(input),
    )
}

fn path<'v>(v: &'v Value, keys: &[&str]) -> Option<&'v Value> {
    keys.iter().try_fold(v, |v, k| v.get(k))
}

fn str_at<'v>(v: &'v Value, keys: &[&str]) -> Option<&'v str> {
    path(v, keys).and_then(Value::as_str)
}

/// Where this document keeps its ProxyConfig defaults, judged from the output alone.
fn default_config(doc: &Value) -> Option<Result<Value, String>> {
    let api = str_at(doc, &["apiVersion"]);
    let kind = str_at(doc, &["kind"]);
    let group = api.and_then(|a| a.split_once('/')).map(|(g, _)| g);
    let found = |keys: &[&str]| {
        path(doc, keys)
            .cloned()
            .ok_or_else(|| format!("no {}", keys.join(".")))
    };
    match (group, kind) {
        (Some("install.istio.io"), Some("IstioOperator")) => {
            let spec = path(doc, &["spec"]);
            let values_only = spec.is_some_and(|s| {
                s.get("meshConfig").is_none() && path(s, &["values", "meshConfig"]).is_some()
            });
            Some(if values_only {
                found(&["spec", "values", "meshConfig", "defaultConfig"])
            } else {
                found(&["spec", "meshConfig", "defaultConfig"])
            })
        }
        (Some("sailoperator.io"), Some("Istio")) => {
            Some(found(&["spec", "values", "meshConfig", "defaultConfig"]))
        }
        (None, Some("ConfigMap")) | (Some(_), Some("ConfigMap")) => {
            let name = str_at(doc, &["metadata", "name"])?;
            if name != "istio" && !name.starts_with("istio-") {
                return None;
            }
            let text = str_at(doc, &["data", "mesh"])?;
            Some(match parse_stream(text) {
                Ok(docs) if docs.len() == 1 => {
                    let mesh = Value::from_node(&docs[0].root);
                    mesh.get("defaultConfig")
                        .cloned()
                        .ok_or_else(|| "no defaultConfig inside data.mesh".to_string())
                }
                Ok(_) => Err("data.mesh does not hold one document".to_string()),
                Err(e) => Err(format!("data.mesh does not parse: {}", e.message)),
            })
        }
        _ if api.is_none() && kind.is_none() => {
            if doc.get("meshConfig").is_some() {
                Some(found(&["meshConfig", "defaultConfig"]))
            } else if doc.get("defaultConfig").is_some() {
                Some(found(&["defaultConfig"]))
            } else {
                None
            }
        }
        _ => None,
    }
}

fn check_settings(pc: &Value) -> Result<(), String> {
    let drain = path(pc, &["terminationDrainDuration"]);
    if !matches!(drain, Some(Value::Scalar(ScalarType::Str, _))) {
        return Err(format!("terminationDrainDuration is {drain:?}"));
    }
    let md = path(pc, &["proxyMetadata"]).ok_or("no proxyMetadata")?;
    if str_at(md, &["EXIT_ON_ZERO_ACTIVE_CONNECTIONS"]) != Some("true") {
        return Err(format!("EXIT_ON_ZERO_ACTIVE_CONNECTIONS is {md:?}"));
    }
    if let Value::Map(entries) = md {
        for (k, v) in entries {
            if !matches!(v, Value::Scalar(ScalarType::Str, _)) {
                return Err(format!("proxyMetadata {k:?} is not a string: {v:?}"));
            }
        }
    }
    Ok(())
}

/// `data.meshNetworks` of every ConfigMap, in order: the tool must leave it alone.
fn mesh_networks(docs: &[Value]) -> Vec<Option<String>> {
    docs.iter()
        .map(|d| str_at(d, &["data", "meshNetworks"]).map(String::from))
        .collect()
}

fn values(text: &str) -> Result<Vec<Value>, String> {
    parse_stream(text)
        .map(|docs| docs.iter().map(|d| Value::from_node(&d.root)).collect())
        .map_err(|e| format!("output does not parse at byte {}: {}", e.offset, e.message))
}

fn sweep_file(file: &Path) -> Result<&'static str, String> {
    let input = std::fs::read(file).map_err(|e| e.to_string())?;
    let first = fix(&input);
    if first.code == 2 {
        return Err(format!("exit 2:\n{}", first.stderr()));
    }
    let docs = values(first.stdout())?;
    let before = values(&String::from_utf8_lossy(&input))?;
    if mesh_networks(&before) != mesh_networks(&docs) {
        return Err("meshNetworks changed".into());
    }
    let mut mesh_docs = 0;
    for (i, doc) in docs.iter().enumerate() {
        match default_config(doc) {
            None => {}
            Some(Ok(pc)) => {
                check_settings(&pc).map_err(|e| format!("document {}: {e}", i + 1))?;
                mesh_docs += 1;
            }
            Some(Err(e)) => return Err(format!("document {}: {e}", i + 1)),
        }
    }
    let again = fix(&first.stdout);
    if again.stdout != first.stdout {
        return Err("a second run changed the output".into());
    }
    if mesh_docs > 0 {
        return Ok("edited");
    }
    if first.stdout != input {
        return Err("changed, yet no mesh document has the settings".into());
    }
    if !first.stderr().contains("left alone") {
        return Err(format!(
            "left alone without a reason in the findings:\n{}",
            first.stderr()
        ));
    }
    Ok("left alone")
}

#[test]
fn mesh_corpus_sweep() {
    let Some(shared) = common::shared_dir() else {
        return;
    };
    let dir = shared.join("corpus/mesh");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("corpus/mesh")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(files.len() >= 20, "expected the mesh corpus in {dir:?}");
    let mut failures = Vec::new();
    let (mut edited, mut alone) = (0, 0);
    for f in &files {
        match sweep_file(f) {
            Ok("edited") => edited += 1,
            Ok(_) => alone += 1,
            Err(e) => failures.push(format!("{}: {e}", f.display())),
        }
    }
    eprintln!(
        "mesh corpus: {} files, {edited} edited, {alone} left alone with a reason",
        files.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(edited > alone, "most of the mesh corpus should be edited");
}
