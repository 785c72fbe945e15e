//! The config document: golden examples, the committed JSON Schema, and check-jsonschema.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::golden;
use meshjob::Settings;

const SCHEMA_PATH: &str = "schemas/meshjob-config.schema.json";
const VALID_DIR: &str = "testdata/config/valid";
const INVALID_DIR: &str = "testdata/config/invalid";
const EFFECTIVE_DIR: &str = "testdata/config/effective";
/// Rewrites the committed schema.
const UPDATE_SCHEMA: &str = "MESHJOB_UPDATE_SCHEMA";

/// Invalid examples the schema cannot tell apart from valid ones, with the reason.
const SCHEMA_CANNOT_TELL: &[(&str, &str)] = &[
    (
        "quit-url-port-range",
        "a JSON Schema pattern does not check number ranges",
    ),
    (
        "drain-overflow",
        "a JSON Schema pattern does not check number ranges",
    ),
    (
        "kinds-builtin-widened",
        "which kinds are built in, with which fixes, is not in the schema",
    ),
    (
        "kinds-builtin-with-pod-templates",
        "which kinds are built in is not in the schema",
    ),
    (
        "kinds-no-pod-templates",
        "which kinds are built in (and need no podTemplates) is not in the schema",
    ),
];

fn env_set(name: &str) -> bool {
    std::env::var_os(name).is_some_and(|v| !v.is_empty() && v != "0")
}

/// The `*.yaml` files of `dir`, sorted, as paths relative to the crate root.
fn yaml_files(dir: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {dir}: {e}"))
        .map(|entry| entry.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no examples in {dir}");
    files
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .and_then(|s| s.to_str())
        .expect("UTF-8 file name")
        .to_string()
}

#[test]
fn valid_examples_load_and_render_their_effective_settings() {
    let mut problems = Vec::new();
    for path in yaml_files(VALID_DIR) {
        let config = match meshjob::load_config(&path) {
            Ok(config) => config,
            Err(e) => {
                problems.push(format!("{} should load: {e}", path.display()));
                continue;
            }
        };
        let mut settings = Settings::default();
        config
            .apply_to(&mut settings)
            .expect("a loaded config applies");
        let rendered = meshjob::render_effective(&settings);
        let expected = Path::new(EFFECTIVE_DIR).join(format!("{}.yaml", stem(&path)));
        problems.extend(golden::check_file(&expected, rendered.as_bytes()).err());

        // The rendering is itself a config that gives the same settings, and renders the same.
        let again = meshjob::parse_config(&rendered, &expected.display().to_string())
            .unwrap_or_else(|e| panic!("rendered settings should parse: {e}\n{rendered}"));
        let mut from_defaults = Settings::default();
        again.apply_to(&mut from_defaults).expect("applies");
        assert_eq!(from_defaults, settings, "{}", path.display());
        assert_eq!(meshjob::render_effective(&from_defaults), rendered);
    }
    golden::assert_none(&problems);
}

#[test]
fn invalid_examples_give_their_expected_errors() {
    let mut problems = Vec::new();
    for path in yaml_files(INVALID_DIR) {
        let message = match meshjob::load_config(&path) {
            Ok(_) => {
                problems.push(format!("{} should be rejected", path.display()));
                continue;
            }
            Err(e) => format!("{e}\n"),
        };
        assert!(
            message.starts_with(&format!("{}:", path.display())),
            "the error names the file: {message}"
        );
        let expected = path.with_extension("err");
        problems.extend(golden::check_file(&expected, message.as_bytes()).err());
    }
    golden::assert_none(&problems);
}

#[test]
fn every_expectation_file_has_an_example() {
    let mut orphans = Vec::new();
    for (dir, ext, inputs) in [
        (INVALID_DIR, "err", INVALID_DIR),
        (EFFECTIVE_DIR, "yaml", VALID_DIR),
    ] {
        for entry in fs::read_dir(dir).expect("list testdata") {
            let path = entry.expect("entry").path();
            if path.extension().is_some_and(|e| e == ext)
                && !Path::new(inputs)
                    .join(format!("{}.yaml", stem(&path)))
                    .is_file()
            {
                orphans.push(path.display().to_string());
            }
        }
    }
    assert!(
        orphans.is_empty(),
        "expectations without an example: {orphans:?}"
    );
}

#[test]
fn committed_schema_is_fresh() {
    let fresh = meshjob::schema_json();
    if env_set(UPDATE_SCHEMA) {
        fs::create_dir_all("schemas").expect("create schemas/");
        fs::write(SCHEMA_PATH, &fresh).expect("write schema");
        return;
    }
    let committed = fs::read_to_string(SCHEMA_PATH).unwrap_or_default();
    assert!(
        committed == fresh,
        "{SCHEMA_PATH} is stale; regenerate it with {UPDATE_SCHEMA}=1 cargo test --test config"
    );
}

#[test]
fn schema_describes_every_property_and_allows_no_others() {
    fn walk(node: &serde_json::Value, at: &str, problems: &mut Vec<String>) {
        match node {
            serde_json::Value::Object(map) => {
                if let Some(serde_json::Value::Object(props)) = map.get("properties") {
                    if map.get("additionalProperties") != Some(&serde_json::Value::Bool(false)) {
                        problems.push(format!("{at} allows unknown properties"));
                    }
                    for (name, prop) in props {
                        let described = prop
                            .get("description")
                            .and_then(|d| d.as_str())
                            .is_some_and(|d| d.contains("```yaml"));
                        if !described {
                            problems
                                .push(format!("{at}.{name} has no description with an example"));
                        }
                    }
                }
                for (key, child) in map {
                    walk(child, &format!("{at}/{key}"), problems);
                }
            }
            serde_json::Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    walk(child, &format!("{at}/{i}"), problems);
                }
            }
            _ => {}
        }
    }
    let schema: serde_json::Value =
        serde_json::from_str(&meshjob::schema_json()).expect("the schema is JSON");
    let mut problems = Vec::new();
    walk(&schema, "#", &mut problems);
    golden::assert_none(&problems);
    let spec = &schema["$defs"]["ConfigSpec"]["properties"];
    for key in [
        "quitUrl",
        "drainDuration",
        "exitOnZeroActiveConnections",
        "entrypoints",
    ] {
        assert!(spec.get(key).is_some(), "spec.{key} is in the schema");
    }
}

fn check_jsonschema() -> Option<PathBuf> {
    common::require_tool(
        "check-jsonschema",
        "validates the config examples against the committed schema; pip install check-jsonschema",
    )
}

/// Runs check-jsonschema once over `files` and returns, for each file it rejected, the JSON
/// text of its errors (schema errors and parse errors alike).
fn rejected_by_check_jsonschema(tool: &Path, files: &[PathBuf]) -> Vec<(String, String)> {
    let out = Command::new(tool)
        .args(["--output-format", "json", "--schemafile", SCHEMA_PATH])
        .args(files)
        .output()
        .expect("run check-jsonschema");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "check-jsonschema printed no JSON report ({e}):\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let entries = ["errors", "parse_errors"]
        .iter()
        .filter_map(|key| report[key].as_array())
        .flatten();
    let rejected: Vec<(String, String)> = entries
        .map(|e| {
            (
                e["filename"].as_str().unwrap_or_default().to_string(),
                e.to_string(),
            )
        })
        .collect();
    assert_eq!(
        out.status.success(),
        rejected.is_empty(),
        "check-jsonschema's exit status disagrees with its report: {report}"
    );
    rejected
}

#[test]
fn check_jsonschema_accepts_the_valid_examples_and_renderings() {
    let Some(tool) = check_jsonschema() else {
        return;
    };
    let mut files = yaml_files(VALID_DIR);
    files.extend(yaml_files(EFFECTIVE_DIR));
    let rejected = rejected_by_check_jsonschema(&tool, &files);
    assert!(
        rejected.is_empty(),
        "check-jsonschema rejected valid examples: {rejected:#?}"
    );
}

#[test]
fn check_jsonschema_rejects_the_invalid_examples() {
    let Some(tool) = check_jsonschema() else {
        return;
    };
    let files = yaml_files(INVALID_DIR);
    let rejected = rejected_by_check_jsonschema(&tool, &files);
    let mut problems = Vec::new();
    for path in &files {
        let (name, file) = (stem(path), path.display().to_string());
        let errors: Vec<&str> = (rejected.iter())
            .filter(|(f, _)| *f == file)
            .map(|(_, e)| e.as_str())
            .collect();
        let exempt = SCHEMA_CANNOT_TELL.iter().any(|(case, _)| *case == name);
        match (errors.is_empty(), exempt) {
            (true, false) => problems.push(format!("check-jsonschema accepted {file}")),
            (false, true) => problems.push(format!(
                "the schema rejects {name} now; take it off SCHEMA_CANNOT_TELL"
            )),
            _ => {}
        }
        // Unknown keys must be caught by the schema itself (`additionalProperties: false`),
        // not by a YAML parse failure.
        let says_unknown = errors
            .iter()
            .any(|e| e.contains("Additional properties are not allowed"));
        if name.starts_with("unknown-key") && !says_unknown {
            problems.push(format!(
                "{name}: the schema did not reject the key: {errors:?}"
            ));
        }
    }
    golden::assert_none(&problems);
}
