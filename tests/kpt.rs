//! The KRM function under the real kpt, as its users run it: `kpt fn eval DIR --exec meshjob`
//! on a package directory, with kpt's own functionConfig (an empty ConfigMap, or `data` from
//! `-- KEY=VALUE`) or a `--fn-config` file. kpt re-serialises the resources it writes back, so
//! the rewritten Job is compared by value with `meshjob fix`'s; a file with nothing to fix
//! must come back byte for byte, and a second run must change nothing.

mod common;

use common::hosts;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(120);

const JOB: &str = "\
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
";

const CONFIG_MAP: &str = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings # kept
data:
  a: \"1\"
";

const ARGS_ONLY: &str = "\
apiVersion: batch/v1
kind: Job
metadata:
  name: args-only
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: main
        image: registry.example/tool:2.0
        args: [\"--run\"]
";

fn kpt() -> Option<PathBuf> {
    common::require_tool("kpt", "it runs the KRM function as kpt users do")
}

/// A package directory holding `files`.
fn package(files: &[(&str, &str)]) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    for (rel, text) in files {
        let p = tmp.path().join("pkg").join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    }
    tmp
}

/// `kpt fn eval PKG --exec <meshjob> ARGS...`, with kpt's home in the temp directory.
fn eval(kpt: &Path, tmp: &Path, args: &[&str]) -> (Output, String) {
    let out = hosts::run_bounded(
        Command::new(kpt)
            .current_dir(tmp)
            .env("HOME", tmp)
            .args(["fn", "eval", "pkg", "--exec"])
            .arg(common::bin())
            .args(args),
        b"",
        LIMIT,
    );
    let log = hosts::show(&out);
    (out, log)
}

fn read(tmp: &Path, rel: &str) -> String {
    std::fs::read_to_string(tmp.join("pkg").join(rel)).expect("read")
}

/// A YAML document as a value.
fn value(text: &str) -> Value {
    serde_saphyr::from_str(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// What `meshjob fix ARGS -` makes of `text`.
fn fixed(text: &str, args: &[&str]) -> String {
    let out = hosts::run_bounded(
        common::meshjob().args(["fix"]).args(args).arg("-"),
        text.as_bytes(),
        LIMIT,
    );
    assert_eq!(out.status.code(), Some(0), "{}", hosts::show(&out));
    String::from_utf8(out.stdout).expect("utf-8")
}

#[test]
fn kpt_runs_the_function_and_writes_the_fixed_job_back() {
    let Some(kpt) = kpt() else { return };
    let tmp = package(&[("jobs/migrate.yaml", JOB), ("settings.yaml", CONFIG_MAP)]);
    let (out, log) = eval(&kpt, tmp.path(), &[]);
    assert!(out.status.success(), "{log}");
    assert!(log.contains("[PASS] \""), "{log}");
    // kpt names the resource; the message does not repeat it.
    assert!(
        log.contains(
            "[info] batch/v1/Job/migrate: rewritten so that mesh sidecars stop when their tasks end [MJ010]"
        ),
        "{log}"
    );
    assert!(!log.contains("Job/migrate: Job/migrate"), "{log}");
    let job = read(tmp.path(), "jobs/migrate.yaml");
    assert!(job.contains("# meshjob-wrapper v"), "{job}");
    assert_eq!(value(&job), value(&fixed(JOB, &[])), "{job}");
    assert_eq!(read(tmp.path(), "settings.yaml"), CONFIG_MAP);

    // A second run finds nothing to do and changes no byte.
    let (out, log) = eval(&kpt, tmp.path(), &[]);
    assert!(out.status.success(), "{log}");
    assert!(!log.contains("[MJ010]"), "{log}");
    assert_eq!(read(tmp.path(), "jobs/migrate.yaml"), job);
}

#[test]
fn kpt_key_value_arguments_are_settings() {
    let Some(kpt) = kpt() else { return };
    let tmp = package(&[("job.yaml", JOB)]);
    let (out, log) = eval(
        &kpt,
        tmp.path(),
        &[
            "--",
            "istioVersion=1.24",
            "kubernetesVersion=1.29",
            "drainDuration=10s",
        ],
    );
    assert!(out.status.success(), "{log}");
    assert!(
        log.contains(
            "[info] batch/v1/Job/migrate spec.template: native sidecar (Istio 1.24 from \
             istioVersion in functionConfig:4, Kubernetes 1.29 from kubernetesVersion in functionConfig:5)"
        ),
        "{log}"
    );
    let want = fixed(
        JOB,
        &[
            "--istio-version",
            "1.24",
            "--kubernetes-version",
            "1.29",
            "--drain-duration",
            "10s",
        ],
    );
    assert_eq!(value(&read(tmp.path(), "job.yaml")), value(&want));

    // A value that does not fit its key stops the run, pointing at the key; nothing written.
    let tmp = package(&[("job.yaml", JOB)]);
    let (out, log) = eval(&kpt, tmp.path(), &["--", "waitForProxy=soon"]);
    assert!(!out.status.success(), "{log}");
    assert!(log.contains("[FAIL] \""), "{log}");
    assert!(
        log.contains("functionConfig: data.waitForProxy: invalid type: string \\\"soon\\\""),
        "{log}"
    );
    assert_eq!(read(tmp.path(), "job.yaml"), JOB);
}

#[test]
fn kpt_fn_config_file_is_a_mesh_job_config() {
    let Some(kpt) = kpt() else { return };
    let tmp = package(&[("job.yaml", JOB)]);
    std::fs::write(
        tmp.path().join("meshjob.yaml"),
        "apiVersion: meshjob.dev/v1alpha1\nkind: MeshJobConfig\nmetadata:\n  name: meshjob\nspec:\n  drainDuration: 10s\n",
    )
    .expect("write");
    let (out, log) = eval(&kpt, tmp.path(), &["--fn-config", "meshjob.yaml"]);
    assert!(out.status.success(), "{log}");
    let want = fixed(JOB, &["--drain-duration", "10s"]);
    assert_eq!(value(&read(tmp.path(), "job.yaml")), value(&want));
}

#[test]
fn kpt_shows_an_error_result_and_writes_nothing() {
    let Some(kpt) = kpt() else { return };
    let tmp = package(&[("args-only.yaml", ARGS_ONLY), ("job.yaml", JOB)]);
    let (out, log) = eval(&kpt, tmp.path(), &[]);
    assert!(!out.status.success(), "{log}");
    assert!(
        log.contains(
            "[error] batch/v1/Job/args-only spec.template.spec.containers[0]: container \"main\" (image \"registry.example/tool:2.0\") has args but no command"
        ),
        "{log}"
    );
    assert!(!log.contains("Job/args-only: Job/args-only"), "{log}");
    assert_eq!(read(tmp.path(), "args-only.yaml"), ARGS_ONLY);
    assert_eq!(read(tmp.path(), "job.yaml"), JOB);
}
