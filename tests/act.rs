//! The GitHub Action run by a real runner: `act` (nektos/act) runs a workflow that uses the
//! action as `uses: ./`, on the host (`-P ubuntu-latest=-self-hosted`), with no Docker and
//! no download. `actions/checkout` is act's own (it copies the local tree), the action is
//! given the built binary through `MESHJOB_BINARY`, or a release by `version` served from a
//! `file://` mirror, and `actions/cache` (which the action only runs when it builds from
//! source) is pointed at a local stub that fails if it runs.

mod common;

use common::{hosts, root};

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(300);

const WORKFLOW: &str = r#"name: meshjob
on: push
permissions:
  contents: read
jobs:
  check:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v5
      - id: meshjob
        uses: ./
        continue-on-error: true
        with:
          paths: k8s
{with}      - name: Report
        if: always()
        env:
          CHANGED: ${{ steps.meshjob.outputs.changed }}
          FINDINGS: ${{ steps.meshjob.outputs.findings }}
          OUTCOME: ${{ steps.meshjob.outcome }}
        run: printf 'changed=%s\nfindings=%s\noutcome=%s\n' "$CHANGED" "$FINDINGS" "$OUTCOME" >"$MESHJOB_ACT_REPORT"
"#;

const STUB_CACHE: &str = "\
name: cache stub
description: Stands in for actions/cache, which the action must not run here.
runs:
  using: composite
  steps:
    - shell: bash
      run: echo 'the actions/cache stub ran'; exit 1
";

const NEEDS_FIX: &str = "\
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: migrate
        image: registry.example/migrate:2.1
        command: [\"/migrate\", \"--to=latest\"]
      - name: helper
        image: registry.example/helper:1.0
        args: [\"--serve\"]
";

struct ActRun {
    log: String,
    report: String,
    success: bool,
}

impl ActRun {
    /// The workflow commands (`::error ...`) act saw, as the runner would turn them into
    /// annotations.
    fn annotations(&self, level: &str) -> Vec<&str> {
        self.log
            .lines()
            .filter_map(|l| l.find(&format!("::{level} ")).map(|i| &l[i..]))
            .collect()
    }

    /// The first step summary act printed: `Summary - ` up to its next log line.
    fn summary(&self) -> String {
        let Some(start) = self.log.find("Summary - ") else {
            return String::new();
        };
        let rest = &self.log[start + "Summary - ".len()..];
        let end = rest.find("\n[").unwrap_or(rest.len());
        rest[..end].to_string()
    }

    fn report(&self, key: &str) -> &str {
        self.report
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{key}=")))
            .unwrap_or_else(|| panic!("no {key} in the report\n{}", self.log))
    }
}

/// How the action gets meshjob in a run.
enum Install<'a> {
    /// `MESHJOB_BINARY`: the binary under test.
    Binary,
    /// The input `version`, with `MESHJOB_RELEASE_BASE_URL` when given.
    Version(&'a str, Option<&'a str>),
}

/// Runs the workflow with act on a repository holding the action and `files`.
fn act(act: &Path, files: &[(&str, &str)]) -> ActRun {
    act_with(act, files, &Install::Binary)
}

fn act_with(act: &Path, files: &[(&str, &str)], install: &Install<'_>) -> ActRun {
    let tmp = tempfile::tempdir().expect("tempdir");
    let repo = tmp.path().join("repo");
    let wf = repo.join(".github/workflows");
    std::fs::create_dir_all(&wf).expect("mkdir");
    std::fs::create_dir_all(repo.join("scripts")).expect("mkdir");
    std::fs::copy(root().join("action.yml"), repo.join("action.yml")).expect("copy");
    for s in ["action-install.sh", "action-check.sh"] {
        std::fs::copy(root().join("scripts").join(s), repo.join("scripts").join(s)).expect("copy");
    }
    let with = match install {
        Install::Binary => String::new(),
        Install::Version(v, _) => format!("          version: {v}\n"),
    };
    std::fs::write(wf.join("meshjob.yml"), WORKFLOW.replace("{with}", &with)).expect("write");
    for (rel, text) in files {
        let p = repo.join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }
    hosts::git(&repo, &["init", "-q"]);
    hosts::git(&repo, &["add", "-A"]);
    hosts::git(&repo, &["commit", "-q", "-m", "workspace"]);
    let stub = tmp.path().join("cache-stub");
    std::fs::create_dir_all(&stub).expect("mkdir");
    std::fs::write(stub.join("action.yml"), STUB_CACHE).expect("write");
    let event = tmp.path().join("event.json");
    std::fs::write(&event, "{}\n").expect("write");
    let report = tmp.path().join("report");
    let home = tmp.path().join("home");
    std::fs::create_dir_all(&home).expect("mkdir");
    let p = |p: &PathBuf| p.display().to_string();
    let env = match install {
        Install::Binary => vec![format!("MESHJOB_BINARY={}", p(&common::bin()))],
        Install::Version(_, Some(base)) => vec![format!("MESHJOB_RELEASE_BASE_URL={base}")],
        Install::Version(_, None) => vec![],
    };
    let mut cmd = Command::new(act);
    for e in &env {
        cmd.args(["--env", e]);
    }
    let out = hosts::run_bounded(
        cmd.current_dir(&repo)
            .env("HOME", &home)
            .env_remove("GITHUB_TOKEN")
            .args(["push", "-W", ".github/workflows/meshjob.yml"])
            .args(["-P", "ubuntu-latest=-self-hosted"])
            .args(["-e", &p(&event)])
            .args(["--action-cache-path", &p(&tmp.path().join("act-cache"))])
            .args(["--container-daemon-socket", "-", "--no-cache-server"])
            .args([
                "--local-repository",
                &format!("actions/cache@v5={}", p(&stub)),
            ])
            .args(["--env", &format!("MESHJOB_ACT_REPORT={}", p(&report))]),
        b"",
        LIMIT,
    );
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !log.contains("git clone") && !log.contains("the actions/cache stub ran"),
        "act fetched or ran an action it should not have\n{log}"
    );
    ActRun {
        report: std::fs::read_to_string(&report).unwrap_or_default(),
        success: out.status.success(),
        log,
    }
}

fn act_bin() -> Option<PathBuf> {
    let act = common::require_tool("act", "it runs the action's workflow as a runner would")?;
    common::require_tool("git", "act reads the repository's ref and commit")?;
    Some(act)
}

#[test]
fn act_runs_the_action_on_a_workspace_that_needs_fixing() {
    let Some(act_bin) = act_bin() else { return };
    let r = act(&act_bin, &[("k8s/migrate.yaml", NEEDS_FIX)]);
    let log = &r.log;
    // The job goes on past the failed step (continue-on-error) and succeeds.
    assert!(r.success, "{log}");
    assert!(
        log.contains("using the binary given in MESHJOB_BINARY"),
        "{log}"
    );
    let errors = r.annotations("error");
    assert!(
        errors.iter().any(|e| e.starts_with(
            "::error file=k8s/migrate.yaml,line=13,col=9,title=meshjob error::Job/migrate: container \"helper\""
        )),
        "{errors:#?}\n{log}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("::error title=meshjob::Jobs need fixing")),
        "{errors:#?}"
    );
    assert_eq!(r.report("changed"), "true", "{log}");
    // The args-only container, the pod that would change (MJ701), the strategy chosen for
    // it (MJ120) and the note on the unknown versions (MJ121).
    assert_eq!(r.report("findings"), "4", "{log}");
    assert_eq!(r.report("outcome"), "failure", "{log}");
    let summary = r.summary();
    assert!(summary.starts_with("### meshjob"), "{summary}");
    assert!(
        summary.contains("```diff\n--- a/k8s/migrate.yaml\n+++ b/k8s/migrate.yaml\n"),
        "{summary}"
    );
    assert!(
        summary.contains("+          # meshjob-wrapper v"),
        "{summary}"
    );
}

#[test]
fn act_runs_the_action_on_a_clean_workspace() {
    let Some(act_bin) = act_bin() else { return };
    let fixed = hosts::run_bounded(
        Command::new(common::bin()).args(["fix", "-"]),
        NEEDS_FIX
            .replace("args: [\"--serve\"]", "command: [\"/helper\", \"--serve\"]")
            .as_bytes(),
        Duration::from_secs(60),
    );
    assert_eq!(fixed.status.code(), Some(0), "{}", hosts::show(&fixed));
    let r = act(
        &act_bin,
        &[("k8s/migrate.yaml", &String::from_utf8_lossy(&fixed.stdout))],
    );
    let log = &r.log;
    assert!(r.success, "{log}");
    assert_eq!(r.annotations("error"), Vec::<&str>::new(), "{log}");
    assert_eq!(r.report("changed"), "false", "{log}");
    assert_eq!(r.report("findings"), "0", "{log}");
    assert_eq!(r.report("outcome"), "success", "{log}");
    assert!(
        r.summary().starts_with("### meshjob\n\nNo changes needed."),
        "{}",
        r.summary()
    );
}

#[test]
fn act_installs_a_release_by_version_after_checking_its_sum() {
    let Some(act_bin) = act_bin() else { return };
    let mirror = tempfile::tempdir().expect("tempdir");
    // act runs the job on this host: Linux, X64 or ARM64.
    let target = match std::env::consts::ARCH {
        "aarch64" => "aarch64-unknown-linux-musl",
        _ => "x86_64-unknown-linux-musl",
    };
    let base = hosts::fake_release(mirror.path(), "9.8.7", target, &common::bin());
    let r = act_with(
        &act_bin,
        &[("k8s/migrate.yaml", NEEDS_FIX)],
        &Install::Version("9.8.7", Some(&base)),
    );
    let log = &r.log;
    assert!(r.success, "{log}");
    assert!(
        log.contains(&format!(
            "installed the prebuilt release asset meshjob-v9.8.7-{target}.tar.gz"
        )),
        "{log}"
    );
    assert_eq!(r.report("changed"), "true", "{log}");
    assert_eq!(r.report("outcome"), "failure", "{log}");

    // A tampered archive stops the step before anything runs.
    let asset = mirror
        .path()
        .join(format!("v9.8.7/meshjob-v9.8.7-{target}.tar.gz"));
    let mut bytes = std::fs::read(&asset).expect("read");
    bytes.push(0);
    std::fs::write(&asset, bytes).expect("write");
    let r = act_with(
        &act_bin,
        &[("k8s/migrate.yaml", NEEDS_FIX)],
        &Install::Version("9.8.7", Some(&base)),
    );
    let log = &r.log;
    assert!(
        r.annotations("error")
            .iter()
            .any(|e| e.contains("checksum mismatch")),
        "{log}"
    );
    assert_eq!(r.report("changed"), "", "{log}");
    assert_eq!(r.report("outcome"), "failure", "{log}");
}

#[test]
fn act_with_a_version_and_a_local_action_says_what_to_do() {
    let Some(act_bin) = act_bin() else { return };
    let r = act_with(
        &act_bin,
        &[("k8s/migrate.yaml", NEEDS_FIX)],
        &Install::Version("9.8.7", None),
    );
    let log = &r.log;
    let errors = r.annotations("error");
    assert!(
        errors.iter().any(|e| e
            .contains("the action cannot tell which repository's releases to download from")
            && e.contains("MESHJOB_RELEASE_BASE_URL")),
        "{errors:#?}\n{log}"
    );
    assert_eq!(r.report("outcome"), "failure", "{log}");
}

#[test]
fn the_act_workflow_passes_actionlint() {
    let Some(tool) = common::require_tool("actionlint", "it lints the workflows") else {
        return;
    };
    for with in ["", "          version: 9.8.7\n"] {
        let out = hosts::run_bounded(
            Command::new(&tool).args(["-no-color", "-"]),
            WORKFLOW.replace("{with}", with).as_bytes(),
            Duration::from_secs(60),
        );
        assert!(out.status.success(), "{}", hosts::show(&out));
    }
}
