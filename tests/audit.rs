//! `meshjob audit` on dumps shaped as `kubectl get -o yaml|json` writes them
//! (testdata/audit/, made by bench/audit_dump.py): the held pods, their owners, causes and
//! fixes; the same findings from YAML, JSON and stdin; no secret of the dump in the output;
//! the exit statuses. `MESHJOB_UPDATE_GOLDEN=1` rewrites testdata/audit/expected/.

mod common;

use common::{golden, meshjob, run_stdin};
use std::path::Path;
use std::process::Output;

const NOW: &str = "2024-05-01T12:00:00Z";
const SECRET: &str = "s3cr3t-do-not-print";

/// Runs `meshjob audit ARGS` in a directory holding the dumps, with `stdin`.
fn audit(args: &[&str], stdin: &[u8]) -> Output {
    let dir = tempfile::tempdir().expect("temp dir");
    for f in ["dump.yaml", "dump.json"] {
        let from = common::root().join("testdata/audit").join(f);
        std::fs::copy(&from, dir.path().join(f)).expect("copy dump");
    }
    let mut cmd = meshjob();
    cmd.arg("audit").args(args).current_dir(dir.path());
    run_stdin(&mut cmd, stdin)
}

fn expected(name: &str) -> std::path::PathBuf {
    common::root().join("testdata/audit/expected").join(name)
}

fn check(name: &str, o: &Output, status: i32) {
    let mut failures = Vec::new();
    if let Err(e) = golden::check_file(&expected(name), &o.stdout) {
        failures.push(e);
    }
    if o.status.code() != Some(status) {
        failures.push(format!(
            "{name}: status {:?}, want {status}; stderr: {}",
            o.status.code(),
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    golden::assert_none(&failures);
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).expect("one JSON document")
}

/// The findings of a JSON report without where they were read.
fn placeless(mut v: serde_json::Value) -> serde_json::Value {
    for h in v["held"].as_array_mut().into_iter().flatten() {
        h["at"] = serde_json::Value::Null;
        h["fix"]["meshVersion"]["source"] = serde_json::Value::Null;
        h["fix"]["oldestKubelet"]["source"] = serde_json::Value::Null;
        let why = h["fix"]["why"].as_str().unwrap_or_default().to_string();
        // The why names the places too.
        h["fix"]["why"] = why.split(" (from ").next().unwrap_or_default().into();
    }
    v
}

#[test]
fn held_pods_of_a_yaml_dump() {
    let o = audit(&["--now", NOW, "dump.yaml"], b"");
    check("dump.txt", &o, 1);
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn held_pods_as_json() {
    let o = audit(&["--now", NOW, "--format", "json", "dump.json"], b"");
    check("dump.json", &o, 1);
}

#[test]
fn yaml_json_and_stdin_say_the_same() {
    let yaml = audit(&["--now", NOW, "--format", "json", "dump.yaml"], b"");
    let from_json = audit(&["--now", NOW, "--format", "json", "dump.json"], b"");
    let text = std::fs::read(common::root().join("testdata/audit/dump.json")).expect("dump");
    let stdin = audit(&["--now", NOW, "--format", "json", "-"], &text);
    let y = placeless(json(&yaml));
    assert_eq!(y["held"].as_array().map(Vec::len), Some(9), "{y:#}");
    assert_eq!(y, placeless(json(&from_json)));
    assert_eq!(y, placeless(json(&stdin)));
    // Without --now, the newest time in the dump (a pod created at 12:00).
    let newest = audit(&["--format", "json", "dump.yaml"], b"");
    assert_eq!(json(&newest)["now"], NOW);
}

#[test]
fn the_report_shows_no_secret_of_the_dump() {
    for args in [&["dump.yaml"][..], &["--format", "json", "dump.json"]] {
        let o = audit(args, b"");
        let all = [o.stdout, o.stderr].concat();
        let all = String::from_utf8_lossy(&all);
        assert!(!all.contains(SECRET), "{args:?}: {all}");
        // Nor a command line, nor an annotation's value.
        assert!(
            !all.contains("/bin/report") && !all.contains("istio-init"),
            "{all}"
        );
    }
}

#[test]
fn exit_statuses() {
    let empty = "apiVersion: v1\nitems: []\nkind: List\nmetadata:\n  resourceVersion: \"\"\n";
    let o = audit(&["-"], empty.as_bytes());
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "0 held pods (0 pods; now unknown)\n"
    );
    // Bad input: where, and exit 2, nothing on stdout.
    let bad = "apiVersion: v1\nitems:\n- kind: Pod\n  metadata: {name: [x\n";
    let o = audit(&["-"], bad.as_bytes());
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.starts_with("meshjob: error: stdin:4:"), "{err}");
    let o = audit(&["missing.yaml"], b"");
    assert_eq!(o.status.code(), Some(2));
    let o = audit(&["--now", "yesterday", "dump.yaml"], b"");
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn a_dump_larger_than_a_document_is_read_item_by_item() {
    // 40 MiB of pods in one List: past the 32 MiB cap on one document.
    let pod = "- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: p\n    namespace: n\n  spec:\n    restartPolicy: Never\n    containers:\n    - name: t\n      image: x\n  status:\n    phase: Succeeded\n";
    let n = (40 << 20) / pod.len() + 1;
    let mut text = String::from("apiVersion: v1\nitems:\n");
    for _ in 0..n {
        text.push_str(pod);
    }
    text.push_str("kind: List\nmetadata:\n  resourceVersion: \"\"\n");
    let o = audit(&["-"], text.as_bytes());
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains(&format!("{n} pods: {n} succeeded")), "{out}");
    assert!(Path::new(&expected("dump.txt")).exists() || golden::updating());
}

/// Runs `meshjob audit ARGS` in testdata/audit, beside its `repo/` (the diff writes nothing).
fn audit_in_testdata(args: &[&str]) -> Output {
    let mut cmd = meshjob();
    cmd.arg("audit")
        .args(args)
        .current_dir(common::root().join("testdata/audit"));
    run_stdin(&mut cmd, b"")
}

#[test]
fn the_repository_holds_some_owners_and_their_fix_is_shown() {
    let o = audit_in_testdata(&["--now", NOW, "dump.yaml", "--repo", "repo"]);
    check("repo.txt", &o, 1);
    let out = String::from_utf8_lossy(&o.stdout);
    // The CronJob by its own namespace; the Job by its kustomization's; the others nowhere.
    assert!(
        out.contains("  source:  repo/cronjobs/nightly.yaml:2\n"),
        "{out}"
    );
    assert!(
        out.contains("repo/data/export-job.yaml:2 (no namespace of its own; repo/data/kustomization.yaml sets `namespace: data`)"),
        "{out}"
    );
    assert_eq!(
        out.matches("  source:  not in the repository").count(),
        7,
        "{out}"
    );
    // Pods held by injected agents: the cause and the endpoint that stops each.
    for (agent, url) in [
        ("vault-agent", "http://127.0.0.1:8200/agent/v1/quit"),
        ("daprd", "http://127.0.0.1:3500/v1.0/shutdown"),
        (
            "consul-dataplane",
            "http://127.0.0.1:20600/graceful_shutdown",
        ),
    ] {
        assert!(
            out.contains(&format!("    holding: {agent}\n")),
            "{agent}: {out}"
        );
        assert!(out.contains(url), "{agent}: {out}");
    }
    // Each matched file's fix, as `meshjob diff` prints it (the dump's kubelets let the
    // user sidecar move).
    assert!(out.contains("+++ b/repo/cronjobs/nightly.yaml\n"), "{out}");
    assert!(
        out.contains("restartPolicy: Always # meshjob: moved from containers[1]"),
        "{out}"
    );
    let o = audit_in_testdata(&[
        "--now",
        NOW,
        "--format",
        "json",
        "dump.yaml",
        "--repo",
        "repo",
    ]);
    let v = json(&o);
    let sources: Vec<&serde_json::Value> = (v["held"].as_array().into_iter().flatten())
        .map(|h| &h["source"])
        .collect();
    assert_eq!(sources[0]["path"], "repo/cronjobs/nightly.yaml");
    assert_eq!(sources[0]["line"], 2);
    assert!(sources[1].is_null(), "{sources:?}");
    assert_eq!(v["repositorySearched"], true);
    // A --repo path that does not exist is bad input.
    let o = audit_in_testdata(&["dump.yaml", "--repo", "nowhere"]);
    assert_eq!(o.status.code(), Some(2));
}
