//! The GitHub Action: `action.yml` is validated against the published schema, and its steps
//! are run as the runner runs a composite action: each `run:` with
//! `bash --noprofile --norc -eo pipefail`, its `env:` expressions resolved first, step outputs
//! read from `$GITHUB_OUTPUT`, and the runner's variables pointing at temp paths. The install
//! step is pointed at the built binary through `MESHJOB_BINARY`, so no test runs cargo.

mod common;
mod hosts;

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(120);

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn action() -> Value {
    let text = std::fs::read_to_string(root().join("action.yml")).expect("action.yml");
    serde_saphyr::from_str(&text).expect("action.yml parses")
}

fn steps(action: &Value) -> Vec<Value> {
    action["runs"]["steps"]
        .as_array()
        .expect("runs.steps")
        .clone()
}

struct StepRun {
    id: String,
    stdout: String,
    stderr: String,
    code: Option<i32>,
}

struct ActionRun {
    steps: Vec<StepRun>,
    outputs: BTreeMap<String, String>,
    summary: String,
    succeeded: bool,
}

impl ActionRun {
    fn step(&self, id: &str) -> &StepRun {
        self.steps
            .iter()
            .find(|s| s.id == id)
            .unwrap_or_else(|| panic!("step {id} did not run\n{}", self.log()))
    }

    fn log(&self) -> String {
        self.steps
            .iter()
            .map(|s| {
                format!(
                    "== step {} (status {:?})\n--- stdout\n{}--- stderr\n{}",
                    s.id, s.code, s.stdout, s.stderr
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Reads a `$GITHUB_OUTPUT` file: `name=value` lines and `name<<DELIM` blocks.
fn parse_outputs(text: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if let Some((name, delim)) = line.split_once("<<") {
            let mut v = Vec::new();
            for l in lines.by_ref() {
                if l == delim {
                    break;
                }
                v.push(l);
            }
            out.insert(name.to_string(), v.join("\n"));
        } else if let Some((name, value)) = line.split_once('=') {
            out.insert(name.to_string(), value.to_string());
        }
    }
    out
}

struct Context<'a> {
    inputs: &'a BTreeMap<String, String>,
    action_path: String,
    temp: String,
    steps: &'a BTreeMap<String, BTreeMap<String, String>>,
}

/// Resolves the `${{ }}` expressions the action uses, as the runner does before a step runs.
/// An expression this harness does not know fails the test, so a new one is noticed.
fn resolve(s: &str, cx: &Context) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("${{") {
        out.push_str(&rest[..i]);
        let end = rest[i..].find("}}").expect("closed expression") + i;
        let expr = rest[i + 3..end].trim();
        let parts: Vec<&str> = expr.split('.').collect();
        let v = match parts.as_slice() {
            ["inputs", name] => cx.inputs.get(*name).cloned().unwrap_or_default(),
            ["github", "action_path"] => cx.action_path.clone(),
            ["github", "action_repository"] => "example/meshjob".to_string(),
            ["runner", "os"] => "Linux".to_string(),
            ["runner", "arch"] => "X64".to_string(),
            ["runner", "temp"] => cx.temp.clone(),
            ["steps", id, "outputs", name] => cx
                .steps
                .get(*id)
                .and_then(|o| o.get(*name))
                .cloned()
                .unwrap_or_default(),
            _ => panic!("the harness does not know the expression `{expr}`"),
        };
        out.push_str(&v);
        rest = &rest[end + 2..];
    }
    out.push_str(rest);
    out
}

/// Evaluates the one form of `if:` the action uses: `steps.ID.outputs.NAME == 'VALUE'`.
fn condition(cond: &str, steps: &BTreeMap<String, BTreeMap<String, String>>) -> bool {
    let (lhs, rhs) = cond.split_once("==").expect("an == condition");
    let parts: Vec<&str> = lhs.trim().split('.').collect();
    let ["steps", id, "outputs", name] = parts.as_slice() else {
        panic!("the harness does not know the condition `{cond}`");
    };
    let want = rhs.trim().trim_matches('\'');
    steps
        .get(*id)
        .and_then(|o| o.get(*name))
        .map(String::as_str)
        == Some(want)
}

struct Workspace {
    tmp: tempfile::TempDir,
}

impl Workspace {
    fn new(files: &[(&str, &str)]) -> Self {
        let tmp = tempfile::tempdir().expect("tempdir");
        for (rel, text) in files {
            let p = tmp.path().join("workspace").join(rel);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(p, text).expect("write");
        }
        std::fs::create_dir_all(tmp.path().join("workspace")).expect("mkdir");
        std::fs::create_dir_all(tmp.path().join("runner-temp")).expect("mkdir");
        Workspace { tmp }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.tmp.path().join(rel)
    }

    /// Runs the action with `with:` inputs and job-level `env`.
    fn run(&self, with: &[(&str, &str)], env: &[(&str, &str)]) -> ActionRun {
        let action = action();
        let mut inputs = BTreeMap::new();
        for (name, spec) in action["inputs"].as_object().expect("inputs") {
            let default = spec["default"].as_str().unwrap_or_default();
            inputs.insert(name.clone(), default.to_string());
        }
        for (k, v) in with {
            assert!(inputs.contains_key(*k), "unknown input {k}");
            inputs.insert(k.to_string(), v.to_string());
        }
        let summary = self.path("step-summary.md");
        std::fs::write(&summary, "").expect("summary");
        let mut outputs: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
        let mut runs = Vec::new();
        let mut succeeded = true;
        for (n, step) in steps(&action).iter().enumerate() {
            let id = step["id"].as_str().map_or(format!("step{n}"), String::from);
            if let Some(uses) = step["uses"].as_str() {
                // The harness runs no other action: such a step must be skipped here.
                let cond = step["if"].as_str().expect("a uses: step has an if:");
                assert!(
                    !condition(cond, &outputs),
                    "the harness cannot run {uses} (if: {cond})"
                );
                continue;
            }
            assert_eq!(step["shell"].as_str(), Some("bash"), "step {id}: shell");
            let script = step["run"].as_str().expect("run:");
            let output_file = self.path(&format!("output-{id}"));
            std::fs::write(&output_file, "").expect("output");
            let script_file = self.path(&format!("script-{id}.sh"));
            std::fs::write(&script_file, script).expect("script");
            let cx = Context {
                inputs: &inputs,
                action_path: root().display().to_string(),
                temp: self.path("runner-temp").display().to_string(),
                steps: &outputs,
            };
            let mut cmd = Command::new("bash");
            cmd.args(["--noprofile", "--norc", "-eo", "pipefail"])
                .arg(&script_file)
                .current_dir(self.path("workspace"))
                .env("GITHUB_ACTIONS", "true")
                .env("GITHUB_ACTION_PATH", root())
                .env("GITHUB_WORKSPACE", self.path("workspace"))
                .env("GITHUB_STEP_SUMMARY", &summary)
                .env("GITHUB_OUTPUT", &output_file)
                .env("GITHUB_PATH", self.path("github-path"))
                .env("RUNNER_TEMP", self.path("runner-temp"));
            for (k, v) in env {
                cmd.env(k, v);
            }
            for (k, v) in step["env"].as_object().into_iter().flatten() {
                let v = v
                    .as_str()
                    .map(String::from)
                    .unwrap_or_else(|| v.to_string());
                cmd.env(k, resolve(&v, &cx));
            }
            let out = hosts::run_bounded(&mut cmd, b"", LIMIT);
            let written = std::fs::read_to_string(&output_file).unwrap_or_default();
            outputs.insert(id.clone(), parse_outputs(&written));
            runs.push(StepRun {
                id,
                stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
                code: out.status.code(),
            });
            if !out.status.success() {
                succeeded = false;
                break;
            }
        }
        let cx = Context {
            inputs: &inputs,
            action_path: String::new(),
            temp: String::new(),
            steps: &outputs,
        };
        let action_outputs = action["outputs"]
            .as_object()
            .expect("outputs")
            .iter()
            .map(|(k, v)| (k.clone(), resolve(v["value"].as_str().expect("value"), &cx)))
            .collect();
        ActionRun {
            steps: runs,
            outputs: action_outputs,
            summary: std::fs::read_to_string(&summary).unwrap_or_default(),
            succeeded,
        }
    }
}

fn binary_env() -> Vec<(&'static str, String)> {
    vec![("MESHJOB_BINARY", common::bin().display().to_string())]
}

fn run(ws: &Workspace, with: &[(&str, &str)], extra: &[(&str, &str)]) -> ActionRun {
    let bin = binary_env();
    let mut env: Vec<(&str, &str)> = bin.iter().map(|(k, v)| (*k, v.as_str())).collect();
    env.extend_from_slice(extra);
    ws.run(with, &env)
}

const NEEDS_FIX: &str = "\
apiVersion: batch/v1
kind: Job
metadata:
  name: pi
spec:
  template:
    spec:
      containers:
      - name: pi
        image: perl:5.34
        command: [\"perl\", \"-e\", \"print 1\"]
      restartPolicy: Never
";

const ARGS_ONLY: &str = "\
apiVersion: batch/v1
kind: Job
metadata:
  name: args-only
spec:
  template:
    spec:
      containers:
      - name: main
        image: registry.example/tool:2.0
        args: [\"--run\"]
      restartPolicy: Never
";

#[test]
fn action_yml_is_valid_against_the_github_actions_schema() {
    let Some(tool) = common::require_tool("check-jsonschema", "it validates action.yml") else {
        return;
    };
    let out = hosts::run_bounded(
        Command::new(tool)
            .args(["--builtin-schema", "vendor.github-actions"])
            .arg(root().join("action.yml")),
        b"",
        LIMIT,
    );
    assert!(out.status.success(), "{}", hosts::show(&out));
}

#[test]
fn action_scripts_pass_shellcheck() {
    let Some(tool) = common::require_tool("shellcheck", "it lints the action's scripts") else {
        return;
    };
    let out = hosts::run_bounded(
        Command::new(tool)
            .arg(root().join("scripts/action-install.sh"))
            .arg(root().join("scripts/action-check.sh")),
        b"",
        LIMIT,
    );
    assert!(out.status.success(), "{}", hosts::show(&out));
}

#[test]
fn inputs_reach_run_steps_only_through_env() {
    for step in steps(&action()) {
        let Some(script) = step["run"].as_str() else {
            assert!(
                step["uses"].is_string(),
                "a step runs a script or an action"
            );
            continue;
        };
        assert!(!script.contains("${{"), "expression inside run:\n{script}");
    }
}

#[test]
fn findings_become_annotations_the_diff_goes_to_the_summary_and_the_step_fails() {
    let ws = Workspace::new(&[
        ("k8s/job.yaml", NEEDS_FIX),
        ("k8s/odd,name: x.yaml", ARGS_ONLY),
        ("other/ignored.yaml", NEEDS_FIX),
    ]);
    let r = run(&ws, &[("paths", "k8s")], &[]);
    let log = r.log();
    assert!(!r.succeeded, "{log}");
    assert!(
        r.step("install")
            .stdout
            .contains("using the binary given in MESHJOB_BINARY"),
        "{log}"
    );
    let check = r.step("check");
    assert_eq!(check.code, Some(1), "{log}");
    assert!(
        check
            .stdout
            .contains("::error file=k8s/odd%2Cname%3A x.yaml,line=9,col=9,title=meshjob error::Job/args-only: container \"main\""),
        "{log}"
    );
    assert!(check.stdout.contains("::stop-commands::"), "{log}");
    assert_eq!(r.outputs["changed"], "true", "{log}");
    assert_eq!(r.outputs["findings"], "1", "{log}");
    assert!(r.summary.contains("### meshjob"), "{}", r.summary);
    assert!(
        r.summary
            .contains("```diff\n--- a/k8s/job.yaml\n+++ b/k8s/job.yaml\n"),
        "{}",
        r.summary
    );
    assert!(
        r.summary.contains("+          # meshjob-wrapper"),
        "{}",
        r.summary
    );
    assert!(!r.summary.contains("other/ignored.yaml"), "{}", r.summary);
    assert!(r.summary.trim_end().ends_with("```"), "{}", r.summary);
    // check changes nothing.
    assert_eq!(
        std::fs::read_to_string(ws.path("workspace/k8s/job.yaml")).expect("read"),
        NEEDS_FIX
    );
}

#[test]
fn fail_on_findings_false_passes_and_summary_false_writes_none() {
    let ws = Workspace::new(&[("a.yaml", NEEDS_FIX), ("b.yaml", NEEDS_FIX)]);
    let r = run(
        &ws,
        &[
            ("paths", "a.yaml\n  b.yaml "),
            ("fail-on-findings", "false"),
            ("summary", "false"),
            ("args", "--drain-duration 9s"),
        ],
        &[],
    );
    assert!(r.succeeded, "{}", r.log());
    assert_eq!(r.outputs["changed"], "true");
    assert_eq!(r.outputs["findings"], "0");
    assert_eq!(r.summary, "");
    let check = &r.step("check").stdout;
    assert!(
        check.contains("+++ b/a.yaml") && check.contains("+++ b/b.yaml"),
        "{check}"
    );
    assert!(check.contains("terminationDrainDuration: 9s"), "{check}");
}

#[test]
fn clean_manifests_pass_with_changed_false() {
    let fixed = hosts::run_bounded(
        Command::new(common::bin()).args(["fix", "-"]),
        NEEDS_FIX.as_bytes(),
        LIMIT,
    );
    let ws = Workspace::new(&[("deploy/job.yaml", &String::from_utf8_lossy(&fixed.stdout))]);
    let r = run(&ws, &[], &[]);
    assert!(r.succeeded, "{}", r.log());
    assert_eq!(r.outputs["changed"], "false");
    assert_eq!(r.outputs["findings"], "0");
    assert!(r.summary.contains("No changes needed"), "{}", r.summary);
}

#[test]
fn a_huge_diff_is_truncated_in_the_summary_with_a_note() {
    let files: Vec<(String, &str)> = (0..40)
        .map(|i| (format!("j{i:02}.yaml"), NEEDS_FIX))
        .collect();
    let refs: Vec<(&str, &str)> = files.iter().map(|(n, t)| (n.as_str(), *t)).collect();
    let ws = Workspace::new(&refs);
    let r = run(&ws, &[], &[("MESHJOB_SUMMARY_LIMIT", "4000")]);
    assert!(!r.succeeded);
    assert!(r.summary.contains("The diff is truncated"), "{}", r.summary);
    assert!(r.summary.len() < 5000, "{}", r.summary.len());
    assert!(r.summary.contains("+++ b/j00.yaml"));
    assert!(!r.summary.contains("+++ b/j39.yaml"));
}

#[test]
fn the_paths_input_cannot_inject_shell() {
    let ws = Workspace::new(&[("job.yaml", NEEDS_FIX)]);
    let marker = ws.path("pwned");
    let m = marker.display().to_string();
    let attempts = [
        format!("'; touch {m} #'"),
        format!("; touch {m} #"),
        format!("$(touch {m})"),
        format!("`touch {m}`"),
        format!("job.yaml && touch {m}"),
        format!("job.yaml\ntouch {m}"),
    ];
    for paths in &attempts {
        for input in ["paths", "args"] {
            let r = run(&ws, &[(input, paths.as_str())], &[]);
            assert!(
                !marker.exists(),
                "{input} {paths:?} ran a command\n{}",
                r.log()
            );
            assert!(
                !r.succeeded,
                "{input} {paths:?}: meshjob sees bad arguments"
            );
        }
    }
    // A glob is a file name, not a pattern.
    let r = run(&ws, &[("paths", "*.yaml")], &[]);
    assert!(
        r.step("check").stdout.contains("file=*.yaml"),
        "{}",
        r.log()
    );
}
