//! The GitHub Action: `action.yml` is validated against the published schema, and its steps
//! are run as the runner runs a composite action: each `run:` with
//! `bash --noprofile --norc -eo pipefail`, its `env:` expressions resolved first, step outputs
//! read from `$GITHUB_OUTPUT`, and the runner's variables pointing at temp paths. The install
//! step is pointed at the built binary through `MESHJOB_BINARY`, so no test runs cargo.

mod common;

use common::{hosts, root};

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(120);

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
fn resolve(s: &str, cx: &Context<'_>) -> String {
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

/// docs/github-action.md's tables: every input with its default, and every output, as
/// action.yml has them.
#[test]
fn the_docs_list_every_input_and_output_as_action_yml_has_them() {
    let docs = std::fs::read_to_string(root().join("docs/github-action.md")).expect("docs");
    let mut inputs = Vec::new();
    let mut outputs = Vec::new();
    for line in docs.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
        let name = cells[0].trim_matches('`').to_string();
        match cells.len() {
            3 => inputs.push((name, cells[1].to_string())),
            2 => outputs.push(name),
            _ => panic!("a table row of 2 or 3 cells: {line}"),
        }
    }
    let a = action();
    let want_inputs: Vec<(String, String)> = a["inputs"]
        .as_object()
        .expect("inputs")
        .iter()
        .map(|(k, v)| {
            let default = v["default"].as_str().unwrap_or("");
            let shown = if default.is_empty() {
                "empty".to_string()
            } else {
                format!("`{default}`")
            };
            (k.clone(), shown)
        })
        .collect();
    // serde_json keeps object keys sorted; the docs keep action.yml's order.
    inputs.sort();
    assert_eq!(inputs, want_inputs);
    let want_outputs: Vec<String> = a["outputs"]
        .as_object()
        .expect("outputs")
        .keys()
        .cloned()
        .collect();
    outputs.sort();
    assert_eq!(outputs, want_outputs);
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
    // The args-only container (its pod gets no annotation, so it does not change), the pod
    // that would change (MJ701), its strategy (MJ120) and the note on the versions (MJ121).
    assert_eq!(r.outputs["findings"], "4", "{log}");
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
    // Each pod that would change (MJ701) with its strategy (MJ120), and the note on the
    // versions once (MJ121).
    assert_eq!(r.outputs["findings"], "5");
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
fn the_exclude_input_leaves_files_out() {
    let ws = Workspace::new(&[
        ("deploy/job.yaml", NEEDS_FIX),
        ("vendor/a/job.yaml", NEEDS_FIX),
        ("legacy/old.yaml", NEEDS_FIX),
    ]);
    let r = run(&ws, &[("exclude", "vendor\nlegacy/old.yaml")], &[]);
    assert!(
        !r.succeeded,
        "deploy/job.yaml still needs fixing\n{}",
        r.log()
    );
    let check = &r.step("check").stdout;
    assert!(check.contains("file=deploy/job.yaml"), "{}", r.log());
    assert!(!check.contains("file=vendor/"), "{}", r.log());
    assert!(!check.contains("file=legacy/"), "{}", r.log());
    // With every file left out, there is nothing to fix.
    let r = run(&ws, &[("exclude", "deploy vendor legacy")], &[]);
    assert!(r.succeeded, "{}", r.log());
    assert_eq!(r.outputs["changed"], "false");
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
        for input in ["paths", "exclude", "args"] {
            let r = run(&ws, &[(input, paths.as_str())], &[]);
            assert!(
                !marker.exists(),
                "{input} {paths:?} ran a command\n{}",
                r.log()
            );
            // An exclude pattern is only a pattern (this one may leave job.yaml out); paths
            // and args that are not meshjob's are refused.
            assert!(
                input == "exclude" || !r.succeeded,
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

/// Runs one phase of scripts/action-install.sh with the runner's variables, returning the
/// run and the step outputs it wrote.
fn install_script(
    phase: &str,
    action_path: &Path,
    env: &[(&str, &str)],
) -> (std::process::Output, BTreeMap<String, String>) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let output = tmp.path().join("output");
    std::fs::write(&output, "").expect("output");
    let mut cmd = Command::new("bash");
    cmd.arg(root().join("scripts/action-install.sh"))
        .arg(phase)
        .env_remove("MESHJOB_BINARY")
        .env_remove("MESHJOB_VERSION")
        .env("GITHUB_ACTION_PATH", action_path)
        .env("GITHUB_OUTPUT", &output)
        .env("RUNNER_TEMP", tmp.path())
        .env("MESHJOB_RUNNER_OS", "Linux")
        .env("MESHJOB_RUNNER_ARCH", "X64")
        .env("MESHJOB_REPOSITORY", "example/meshjob");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = hosts::run_bounded(&mut cmd, b"", LIMIT);
    let written = std::fs::read_to_string(&output).unwrap_or_default();
    (out, parse_outputs(&written))
}

/// The archive the install script downloads for a Linux X64 runner.
const LINUX_X64: &str = "x86_64-unknown-linux-musl";

#[test]
fn a_release_version_installs_the_prebuilt_archive_after_checking_its_sum() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let base = hosts::fake_release(tmp.path(), "9.8.7", LINUX_X64, &common::bin());
    let env = [
        ("MESHJOB_VERSION", "v9.8.7"),
        ("MESHJOB_RELEASE_BASE_URL", base.as_str()),
    ];
    let (out, plan) = install_script("plan", root(), &env);
    assert!(out.status.success(), "{}", hosts::show(&out));
    assert_eq!(plan["mode"], "release");
    let (out, o) = install_script("install", root(), &env);
    assert!(out.status.success(), "{}", hosts::show(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!(
            "installed the prebuilt release asset meshjob-v9.8.7-{LINUX_X64}.tar.gz"
        )),
        "{stdout}"
    );
    assert!(o["bin"].ends_with("/meshjob-action/bin/meshjob"), "{o:?}");

    // A tampered archive is refused.
    let v = tmp.path().join("v9.8.7");
    let asset = v.join(format!("meshjob-v9.8.7-{LINUX_X64}.tar.gz"));
    let mut bytes = std::fs::read(&asset).expect("read");
    bytes.push(0);
    std::fs::write(&asset, bytes).expect("write");
    let (out, o) = install_script("install", root(), &env);
    assert_eq!(out.status.code(), Some(1), "{}", hosts::show(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("::error title=meshjob::checksum mismatch")
    );
    assert!(!o.contains_key("bin"));
}

#[test]
fn a_version_that_cannot_be_downloaded_is_a_clear_error_not_a_build() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let base = hosts::fake_release(tmp.path(), "9.8.7", LINUX_X64, &common::bin());
    let cases = [
        ("1.2.3", "Linux", "X64", "cannot download"),
        (
            "9.8.7",
            "Windows",
            "ARM64",
            "has no prebuilt binary for Windows/ARM64",
        ),
        ("9.8.7", "Windows", "X64", "cannot download"),
        ("9.8.7", "Linux", "ARM64", "cannot download"),
        ("9.8.7", "macOS", "ARM64", "cannot download"),
        (
            "1.2.3; rm -rf /",
            "Linux",
            "X64",
            "version must look like 1.2.3",
        ),
    ];
    for (version, os, arch, message) in cases {
        let env = [
            ("MESHJOB_VERSION", version),
            ("MESHJOB_RELEASE_BASE_URL", base.as_str()),
            ("MESHJOB_RUNNER_OS", os),
            ("MESHJOB_RUNNER_ARCH", arch),
            // Were it to build, it would find no cargo.
            ("PATH", "/usr/bin:/bin"),
        ];
        let start = std::time::Instant::now();
        let (out, o) = install_script("install", root(), &env);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{version}: {}",
            hosts::show(&out)
        );
        assert!(
            stdout.contains("::error title=meshjob::") && stdout.contains(message),
            "{version} {os}/{arch}: {stdout}"
        );
        assert!(!stdout.contains("building"), "{stdout}");
        assert!(!o.contains_key("bin"));
        assert!(start.elapsed() < Duration::from_secs(30));
    }
}

#[test]
fn a_version_without_a_repository_to_download_from_says_what_to_do() {
    // `uses: ./` leaves github.action_repository empty.
    let env = [
        ("MESHJOB_VERSION", "1.2.3"),
        ("MESHJOB_REPOSITORY", ""),
        ("PATH", "/usr/bin:/bin"),
    ];
    let (out, o) = install_script("install", root(), &env);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{}", hosts::show(&out));
    for hint in [
        "::error title=meshjob::version is set to 1.2.3, but the action cannot tell which repository",
        "uses: OWNER/meshjob@REF",
        "MESHJOB_RELEASE_BASE_URL",
        "leave `version` empty",
    ] {
        assert!(stdout.contains(hint), "{hint}: {stdout}");
    }
    assert!(!o.contains_key("bin"));

    // With the download URL given, no repository is needed.
    let tmp = tempfile::tempdir().expect("tempdir");
    let base = hosts::fake_release(tmp.path(), "1.2.3", LINUX_X64, &common::bin());
    let env = [
        ("MESHJOB_VERSION", "1.2.3"),
        ("MESHJOB_REPOSITORY", ""),
        ("MESHJOB_RELEASE_BASE_URL", base.as_str()),
    ];
    let (out, o) = install_script("install", root(), &env);
    assert!(out.status.success(), "{}", hosts::show(&out));
    assert!(o.contains_key("bin"), "{o:?}");
}

#[test]
fn a_windows_runner_installs_the_zip_after_checking_its_sum() {
    let Some(zip) = common::require_tool("zip", "makes the Windows release archive") else {
        return;
    };
    if common::require_tool("unzip", "the install script opens the zip with it").is_none() {
        return;
    }
    // A release as the workflow makes it for Windows: meshjob.exe in a zip (the Linux build
    // stands in for it here, under the Windows name) and its sum.
    let tmp = tempfile::tempdir().expect("tempdir");
    let target = "x86_64-pc-windows-gnu";
    let v = tmp.path().join("v9.8.7");
    std::fs::create_dir_all(&v).expect("mkdir");
    std::fs::copy(common::bin(), tmp.path().join("meshjob.exe")).expect("copy");
    let asset = format!("meshjob-v9.8.7-{target}.zip");
    let zipped = hosts::run_bounded(
        Command::new(zip)
            .args(["-q", "-j"])
            .arg(v.join(&asset))
            .arg(tmp.path().join("meshjob.exe")),
        b"",
        LIMIT,
    );
    assert!(zipped.status.success(), "{}", hosts::show(&zipped));
    let sum = hosts::run_bounded(
        Command::new("sha256sum").arg(&asset).current_dir(&v),
        b"",
        LIMIT,
    );
    std::fs::write(v.join(format!("{asset}.sha256")), &sum.stdout).expect("write");
    let base = format!("file://{}", tmp.path().display());
    let env = [
        ("MESHJOB_VERSION", "9.8.7"),
        ("MESHJOB_RELEASE_BASE_URL", base.as_str()),
        ("MESHJOB_RUNNER_OS", "Windows"),
        ("MESHJOB_RUNNER_ARCH", "X64"),
    ];
    let (out, plan) = install_script("plan", root(), &env);
    assert!(out.status.success(), "{}", hosts::show(&out));
    assert_eq!(plan["mode"], "release");
    let (out, o) = install_script("install", root(), &env);
    assert!(out.status.success(), "{}", hosts::show(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("installed the prebuilt release asset {asset}")),
        "{stdout}"
    );
    assert!(
        o["bin"].ends_with("/meshjob-action/bin/meshjob.exe"),
        "{o:?}"
    );
    // A tampered archive is refused.
    let mut bytes = std::fs::read(v.join(&asset)).expect("read");
    bytes.push(0);
    std::fs::write(v.join(&asset), bytes).expect("write");
    let (out, o) = install_script("install", root(), &env);
    assert_eq!(out.status.code(), Some(1), "{}", hosts::show(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("::error title=meshjob::checksum mismatch")
    );
    assert!(!o.contains_key("bin"));
}

/// Copies what the source build depends on, so a test can change it.
fn source_copy(to: &Path) {
    for f in ["Cargo.toml", "Cargo.lock"] {
        std::fs::copy(root().join(f), to.join(f)).expect("copy");
    }
    let out = hosts::run_bounded(
        Command::new("cp").arg("-R").arg(root().join("src")).arg(to),
        b"",
        LIMIT,
    );
    assert!(out.status.success(), "{}", hosts::show(&out));
}

#[test]
fn the_source_build_cache_key_follows_the_sources_and_a_hit_skips_cargo() {
    if common::which("cargo").is_none() {
        common::skip("cargo is not on PATH (the plan step asks rustc for its version)");
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    source_copy(tmp.path());
    let (out, a) = install_script("plan", tmp.path(), &[]);
    assert!(out.status.success(), "{}", hosts::show(&out));
    assert_eq!(a["mode"], "source");
    assert!(a["key"].starts_with(&a["restore-key"]), "{a:?}");
    assert!(
        a["key"].contains(&format!("-{}-", env!("CARGO_PKG_VERSION"))),
        "the key names the crate version: {a:?}"
    );
    let (_, same) = install_script("plan", tmp.path(), &[]);
    assert_eq!(a["key"], same["key"], "the key is stable");
    // A change to a source file is a new key with the same restore prefix.
    std::fs::write(tmp.path().join("src/zz_new.rs"), "// new\n").expect("write");
    let (_, b) = install_script("plan", tmp.path(), &[]);
    assert_ne!(a["key"], b["key"]);
    assert_eq!(a["restore-key"], b["restore-key"]);
    // A change to Cargo.lock changes the restore prefix too.
    let lock = std::fs::read_to_string(tmp.path().join("Cargo.lock")).expect("read");
    std::fs::write(tmp.path().join("Cargo.lock"), format!("{lock}\n")).expect("write");
    let (_, c) = install_script("plan", tmp.path(), &[]);
    assert_ne!(b["restore-key"], c["restore-key"]);

    // A restored cache whose key matches is used as is, without cargo.
    let dir = tmp.path().join("build");
    std::fs::create_dir_all(dir.join("bin")).expect("mkdir");
    std::fs::copy(common::bin(), dir.join("bin/meshjob")).expect("copy");
    std::fs::write(dir.join("key"), format!("{}\n", c["key"])).expect("write");
    let d = dir.display().to_string();
    let env = [
        ("MESHJOB_BUILD_DIR", d.as_str()),
        ("MESHJOB_BUILD_KEY", c["key"].as_str()),
        ("PATH", "/usr/bin:/bin"),
    ];
    let (out, o) = install_script("install", tmp.path(), &env);
    assert!(out.status.success(), "{}", hosts::show(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("using the binary cached for this source")
    );
    assert_eq!(o["bin"], format!("{d}/bin/meshjob"));
}

#[test]
fn workflows_pass_actionlint() {
    let Some(tool) = common::require_tool("actionlint", "it lints the workflows") else {
        return;
    };
    let dir = root().join(".github/workflows");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect(".github/workflows")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yml" || e == "yaml"))
        .collect();
    files.sort();
    let names: Vec<String> = files
        .iter()
        .map(|p| p.file_name().expect("name").to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["ci.yml", "release.yml"]);
    let out = hosts::run_bounded(
        Command::new(tool)
            .arg("-no-color")
            .args(&files)
            .current_dir(root()),
        b"",
        LIMIT,
    );
    assert!(out.status.success(), "{}", hosts::show(&out));
}

/// The `target` (or another key) of the entries of a release job's matrix that have it.
fn matrix(wf: &Value, job: &str, key: &str) -> Vec<String> {
    wf["jobs"][job]["strategy"]["matrix"]["include"]
        .as_array()
        .unwrap_or_else(|| panic!("jobs.{job}.strategy.matrix.include"))
        .iter()
        .filter_map(|e| e[key].as_str().map(String::from))
        .collect()
}

#[test]
fn release_workflow_builds_every_target_the_action_downloads() {
    let script = std::fs::read_to_string(root().join("scripts/action-install.sh")).expect("read");
    let release =
        std::fs::read_to_string(root().join(".github/workflows/release.yml")).expect("read");
    let wf: Value = serde_saphyr::from_str(&release).expect("release.yml parses");
    let mut built = matrix(&wf, "archive", "target");
    // The Windows zip has a job of its own, cross-built on Linux and run on Windows.
    let windows = wf["jobs"]["windows"]["env"]["TARGET"]
        .as_str()
        .expect("jobs.windows.env.TARGET");
    built.push(windows.to_string());
    assert_eq!(
        built,
        [
            "x86_64-unknown-linux-gnu",
            "aarch64-unknown-linux-gnu",
            "x86_64-unknown-linux-musl",
            "aarch64-unknown-linux-musl",
            "x86_64-apple-darwin",
            "aarch64-apple-darwin",
            "x86_64-pc-windows-gnu",
        ],
        "the archives docs/releases.md lists"
    );
    let docs = std::fs::read_to_string(root().join("docs/releases.md")).expect("releases.md");
    let documented: Vec<&str> = docs
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split_once('`').map(|(t, _)| t))
        .collect();
    assert_eq!(
        documented, built,
        "docs/releases.md names the archives built"
    );
    let wanted: Vec<&str> = script
        .lines()
        .filter_map(|l| {
            l.split_once(") echo ")
                .map(|(_, t)| t.trim_end_matches(" ;;").trim())
        })
        .collect();
    assert_eq!(wanted.len(), 5, "{wanted:?}");
    for t in &wanted {
        assert!(built.iter().any(|b| b == t), "the action downloads {t}");
    }
    // A wheel for each platform that has an archive: glibc (manylinux) and musl Linux on
    // both architectures, and macOS on both.
    assert_eq!(
        matrix(&wf, "wheel", "name"),
        [
            "linux-x86_64",
            "linux-aarch64",
            "musllinux-x86_64",
            "musllinux-aarch64",
            "macos-x86_64",
            "macos-arm64",
        ]
    );
    // The Windows wheel is built in the `windows` job, and only published once it ran on
    // Windows (`windows-release`, which `publish` waits for).
    assert!(release.contains("--target \"$TARGET\" --out dist"));
    assert!(release.contains("name: wheel-windows-x86_64"));
    let publish_needs = &wf["jobs"]["publish"]["needs"];
    assert!(
        publish_needs
            .as_array()
            .is_some_and(|n| n.iter().any(|j| j == "windows-release")),
        "{publish_needs:?}"
    );
    // The archive and checksum names the install script asks for.
    assert!(script.contains(r#"asset="meshjob-v$version-$target.tar.gz""#));
    assert!(script.contains(r#"asset="meshjob-v$version-$target.zip""#));
    assert!(release.contains(r#"asset="meshjob-$GITHUB_REF_NAME-$TARGET.tar.gz""#));
    assert!(release.contains(r#"asset="meshjob-$GITHUB_REF_NAME-$TARGET.zip""#));
    assert!(release.contains(r#"gh release upload "$GITHUB_REF_NAME" "$f" "$f.sha256""#));
    assert!(release.contains(r#""$ASSET" "$ASSET.sha256""#));
    assert!(release.contains(r#""$wheel" "$wheel.sha256""#));
    // The image is built from the static archives' binaries, for the platforms the
    // Dockerfile's prebuilt stage expects.
    assert_eq!(
        matrix(&wf, "archive", "image-platform"),
        ["linux-amd64", "linux-arm64"]
    );
    let dockerfile = std::fs::read_to_string(root().join("Dockerfile")).expect("Dockerfile");
    assert!(dockerfile.contains("COPY --chmod=0755 dist/linux-${TARGETARCH}/meshjob /out/meshjob"));
    assert!(release.contains("build-args: MESHJOB_BINARY=prebuilt"));
    assert!(release.contains("platforms: linux/amd64,linux/arm64"));
}
