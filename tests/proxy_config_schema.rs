//! Every `proxy.istio.io/config` annotation that meshjob writes or changes in the golden
//! outputs is a valid ProxyConfig by Istio's own schema (`../shared/schemas/
//! proxyconfig.schema.json`, from the Sail operator's `Istio` CRD), checked with
//! check-jsonschema. Skips loudly when `../shared` or the tool is missing.

mod common;

use serde_json::Value;
use std::path::Path;
use std::process::Command;

const ANNOTATION: &str = "proxy.istio.io/config";

/// The pod template of a Job or CronJob object.
fn template(o: &Value) -> Option<&Value> {
    let api = o.get("apiVersion")?.as_str()?;
    if !api.starts_with("batch/") {
        return None;
    }
    match o.get("kind")?.as_str()? {
        "Job" => o.pointer("/spec/template"),
        "CronJob" => o.pointer("/spec/jobTemplate/spec/template"),
        _ => None,
    }
}

/// The pod templates of the Jobs and CronJobs in a document (a List's items too).
fn templates(doc: &Value) -> Vec<&Value> {
    match doc.get("items").and_then(Value::as_array) {
        Some(items) => items.iter().filter_map(template).collect(),
        None => template(doc).into_iter().collect(),
    }
}

/// The annotation values of a stream, in order.
fn annotations(text: &str) -> Vec<Option<String>> {
    let docs = serde_saphyr::from_multiple::<Value>(text).unwrap_or_default();
    docs.iter()
        .flat_map(templates)
        .map(|t| {
            t.pointer("/metadata/annotations")
                .and_then(|a| a.get(ANNOTATION))
                .and_then(Value::as_str)
                .map(String::from)
        })
        .collect()
}

#[test]
fn written_proxy_config_is_valid_by_istio_schema() {
    let Some(shared) = common::shared_dir() else {
        return;
    };
    let schema = shared.join("schemas/proxyconfig.schema.json");
    let Some(tool) = common::require_tool(
        "check-jsonschema",
        "validates proxy.istio.io/config against Istio's ProxyConfig schema",
    ) else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut files = Vec::new();
    for dir in common::golden_cases() {
        let Ok(out) = std::fs::read_to_string(dir.join("expected.yaml")) else {
            continue;
        };
        let input = std::fs::read_to_string(dir.join("input.yaml")).unwrap_or_default();
        let before = annotations(&input);
        for (i, value) in annotations(&out).into_iter().enumerate() {
            let Some(text) = value else { continue };
            if before.get(i).cloned().flatten().as_deref() == Some(text.as_str()) {
                continue; // not written by meshjob
            }
            let json: Value = serde_saphyr::from_str(&text).unwrap_or_else(|e| {
                panic!("{}: annotation {i} does not parse: {e}", dir.display())
            });
            let name = format!(
                "{}-{}-{i}.json",
                dir.parent()
                    .and_then(Path::file_name)
                    .unwrap()
                    .to_string_lossy(),
                dir.file_name().unwrap().to_string_lossy()
            );
            let path = tmp.path().join(name);
            std::fs::write(&path, serde_json::to_string(&json).unwrap()).unwrap();
            files.push(path);
        }
    }
    assert!(files.len() >= 20, "only {} annotations found", files.len());
    let out = Command::new(tool)
        .arg("--schemafile")
        .arg(&schema)
        .args(&files)
        .output()
        .expect("run check-jsonschema");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
