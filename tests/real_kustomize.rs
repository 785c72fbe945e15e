//! meshjob under the standalone `kustomize` binary (built by `scripts/peers.sh kustomize` from
//! `sigs.k8s.io/kustomize/kustomize/v5`), in both forms docs/integrations.md describes:
//! - the legacy exec plugin that `meshjob kustomize install` writes, run by
//!   `kustomize build --enable-alpha-plugins` (kustomize api/internal/plugins/execplugin:
//!   the binary runs with the config file's path as its first argument and the resources on
//!   stdin);
//! - the KRM exec function (`config.kubernetes.io/function: exec: path: ...`), run by
//!   `kustomize build --enable-alpha-plugins --enable-exec` (kustomize kyaml/fn/runtime/exec:
//!   a ResourceList on stdin, one on stdout; a non-zero exit fails the build).
//!
//! Needs `kustomize` (MESHJOB_PEERS_BIN or PATH): skipped loudly without it, a failure under
//! MESHJOB_REQUIRE_TOOLS=1.

mod common;

use common::samples::{
    MIGRATE_JOB as JOB, REPORT_CRONJOB as CRONJOB, SETTINGS_CONFIGMAP as CONFIGMAP,
};

use common::hosts::{run_bounded, show};
use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

/// The config: the report image's entrypoint comes from `entrypoints`, and the drain duration
/// is overridden, so that the output shows the config was read.
const SPEC: &str = "\
spec:
  drainDuration: 7s
  entrypoints:
    registry.example/report: [/usr/local/bin/report]
";

fn kustomize() -> Option<std::path::PathBuf> {
    common::require_peer(
        "kustomize",
        "kustomize",
        "the standalone kustomize runs meshjob's plugin and KRM function",
    )
}

/// A command that sees only `home`, whatever the user has set up.
fn isolated(program: &Path, home: &Path) -> Command {
    let mut c = Command::new(program);
    c.env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("xdg"))
        .env_remove("KUSTOMIZE_PLUGIN_HOME")
        .env_remove("KUSTOMIZE_ENABLE_ALPHA_PLUGINS");
    c
}

/// An app dir under `home` with the Job, the CronJob, the ConfigMap and the transformer
/// `transformer` (the config file's text).
fn app(home: &Path, transformer: &str, job: &str) -> std::path::PathBuf {
    let app = home.join("app");
    std::fs::create_dir_all(&app).expect("mkdir");
    for (name, text) in [
        ("job.yaml", job),
        ("cronjob.yaml", CRONJOB),
        ("configmap.yaml", CONFIGMAP),
        ("meshjob.yaml", transformer),
        (
            "kustomization.yaml",
            "resources:\n- job.yaml\n- cronjob.yaml\n- configmap.yaml\ntransformers:\n- meshjob.yaml\n",
        ),
    ] {
        std::fs::write(app.join(name), text).expect("write");
    }
    app
}

fn build(kustomize: &Path, home: &Path, app: &Path, flags: &[&str]) -> Output {
    run_bounded(
        isolated(kustomize, home).arg("build").args(flags).arg(app),
        b"",
        LIMIT,
    )
}

/// What both forms must give: the Job and the CronJob fixed with the config's settings, the
/// ConfigMap untouched, none of kustomize's bookkeeping annotations left over.
fn check_fixed(text: &str) {
    let docs: Vec<&str> = text.split("\n---\n").collect();
    assert_eq!(docs.len(), 3, "{text}");
    let find = |kind: &str| {
        docs.iter()
            .find(|d| d.contains(&format!("kind: {kind}\n")))
            .unwrap_or_else(|| panic!("no {kind} in\n{text}"))
    };
    for kind in ["Job", "CronJob"] {
        let d = find(kind);
        assert!(d.contains("terminationDrainDuration: 7s"), "{kind}:\n{d}");
        assert!(
            d.contains("EXIT_ON_ZERO_ACTIVE_CONNECTIONS: \"true\""),
            "{kind}:\n{d}"
        );
        assert!(d.contains("# meshjob-wrapper"), "{kind}:\n{d}");
    }
    assert!(
        find("CronJob").contains("- /usr/local/bin/report\n"),
        "{text}"
    );
    assert!(find("CronJob").contains("- --daily\n"), "{text}");
    assert!(find("ConfigMap").contains("mode: fast"), "{text}");
    assert!(!find("ConfigMap").contains("meshjob"), "{text}");
    for leak in [
        "kustomize.config.k8s.io/id",
        "config.kubernetes.io/index",
        "internal.config.kubernetes.io",
    ] {
        assert!(!text.contains(leak), "{leak} left in the output:\n{text}");
    }
}

#[test]
fn kustomize_runs_the_installed_legacy_plugin() {
    let Some(kustomize) = kustomize() else { return };
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path();
    let o = run_bounded(
        isolated(&common::bin(), home).args(["kustomize", "install"]),
        b"",
        LIMIT,
    );
    assert!(o.status.success(), "{}", show(&o));
    let config = format!(
        "apiVersion: meshjob.dev/v1alpha1\nkind: MeshJobConfig\nmetadata:\n  name: meshjob\n{SPEC}"
    );
    let app = app(home, &config, JOB);
    let o = build(&kustomize, home, &app, &["--enable-alpha-plugins"]);
    assert!(o.status.success(), "{}", show(&o));
    check_fixed(&String::from_utf8(o.stdout).expect("utf-8"));
}

fn krm_config() -> String {
    format!(
        "apiVersion: meshjob.dev/v1alpha1\nkind: MeshJobConfig\nmetadata:\n  name: meshjob\n  \
         annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: {}\n{SPEC}",
        common::bin().display()
    )
}

#[test]
fn kustomize_runs_the_krm_exec_function() {
    let Some(kustomize) = kustomize() else { return };
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path();
    let app = app(home, &krm_config(), JOB);
    let o = build(
        &kustomize,
        home,
        &app,
        &["--enable-alpha-plugins", "--enable-exec"],
    );
    assert!(o.status.success(), "{}", show(&o));
    check_fixed(&String::from_utf8(o.stdout).expect("utf-8"));
}

/// A Job meshjob cannot fix (`args` and no `command`, an image the config does not map): the
/// function exits 1 with an error result, and kustomize fails the build, printing nothing.
fn refused_build() -> Option<Output> {
    let kustomize = kustomize()?;
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path();
    let job = JOB.replace(
        "        command: [\"/migrate\", \"up\"]\n",
        "        args: [\"up\"]\n",
    );
    let app = app(home, &krm_config(), &job);
    Some(build(
        &kustomize,
        home,
        &app,
        &["--enable-alpha-plugins", "--enable-exec"],
    ))
}

#[test]
fn kustomize_fails_the_build_when_the_krm_function_refuses() {
    let Some(o) = refused_build() else { return };
    assert!(!o.status.success(), "the build succeeded: {}", show(&o));
    assert!(
        o.stdout.is_empty(),
        "kustomize printed a build: {}",
        show(&o)
    );
}

/// kustomize runs an exec function with its stderr passed through and keeps its stdout only
/// on success (kustomize kyaml/fn/runtime/exec/exec.go, Filter.Run: `cmd.Stderr = os.Stderr`):
/// the function writes its error results on stderr too.
#[test]
fn kustomize_shows_meshjobs_finding_when_the_krm_function_refuses() {
    let Some(o) = refused_build() else { return };
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("meshjob: error: ")
            && err.contains("Job/migrate: ")
            && err.contains("has args but no command")
            && err.contains("[MJ204]"),
        "kustomize does not show meshjob's finding: {}",
        show(&o)
    );
    eprintln!("kustomize says, when meshjob refuses: {}", err.trim());
}
