//! The kustomize legacy exec plugin: installed with `meshjob kustomize install`, run by the
//! real `kubectl kustomize --enable-alpha-plugins`, and run directly as kustomize runs it.

mod common;

use common::samples::{
    MIGRATE_JOB as JOB, REPORT_CRONJOB as CRONJOB, SETTINGS_CONFIGMAP as CONFIGMAP,
};

use common::hosts;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(60);

/// The transformer config: the report image's entrypoint comes from `entrypoints`, and the
/// drain duration is overridden, so the output shows the config was read.
const CONFIG: &str = "\
apiVersion: meshjob.dev/v1alpha1
kind: MeshJobConfig
metadata:
  name: meshjob
spec:
  drainDuration: 7s
  entrypoints:
    registry.example/report: [/usr/local/bin/report]
";

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).expect("write fixture");
}

/// A command that sees only the temp config home, whatever the user has set up.
fn isolated(program: &Path, home: &Path) -> Command {
    let mut c = Command::new(program);
    c.env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("xdg"))
        .env_remove("KUSTOMIZE_PLUGIN_HOME")
        .env_remove("KUSTOMIZE_ENABLE_ALPHA_PLUGINS");
    c
}

/// `meshjob kustomize install` into the config home `home`.
fn install(home: &Path) -> std::process::Output {
    let install = hosts::run_bounded(
        isolated(&common::bin(), home).args(["kustomize", "install"]),
        b"",
        LIMIT,
    );
    assert!(install.status.success(), "{}", hosts::show(&install));
    install
}

/// `kubectl kustomize --enable-alpha-plugins APP` with the config home `home`; its stdout.
fn build(kubectl: &Path, home: &Path, app: &Path) -> String {
    let out = hosts::run_bounded(
        isolated(kubectl, home)
            .args(["kustomize", "--enable-alpha-plugins"])
            .arg(app),
        b"",
        LIMIT,
    );
    assert!(out.status.success(), "{}", hosts::show(&out));
    String::from_utf8(out.stdout).expect("utf-8")
}

#[test]
fn kubectl_kustomize_runs_the_installed_plugin() {
    let Some(kubectl) = common::require_tool("kubectl", "kubectl kustomize runs the plugin") else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path();
    let install = install(home);
    let plugin = home.join("xdg/kustomize/plugin/meshjob.dev/v1alpha1/meshjobconfig/MeshJobConfig");
    assert!(
        String::from_utf8_lossy(&install.stdout).contains(&plugin.display().to_string()),
        "{}",
        hosts::show(&install)
    );
    assert!(plugin.is_file(), "plugin installed at {}", plugin.display());

    let app = home.join("app");
    std::fs::create_dir(&app).expect("mkdir");
    write(&app, "job.yaml", JOB);
    write(&app, "cronjob.yaml", CRONJOB);
    write(&app, "configmap.yaml", CONFIGMAP);
    write(&app, "meshjob.yaml", CONFIG);
    write(
        &app,
        "kustomization.yaml",
        "resources:\n- job.yaml\n- cronjob.yaml\n- configmap.yaml\ntransformers:\n- meshjob.yaml\n",
    );
    let text = build(&kubectl, home, &app);
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
        assert!(d.contains("quitquitquit"), "{kind}:\n{d}");
    }
    // The Job keeps its argv as args; the CronJob's entrypoint comes from the config.
    assert!(
        find("Job").contains("- args:\n        - /migrate\n        - up\n"),
        "{text}"
    );
    assert!(
        find("CronJob").contains("- /usr/local/bin/report\n"),
        "{text}"
    );
    assert!(find("CronJob").contains("- --daily\n"), "{text}");
    assert!(find("ConfigMap").contains("mode: fast"), "{text}");
    assert!(!find("ConfigMap").contains("meshjob"), "{text}");
    // kustomize's bookkeeping annotation must not leak into the output.
    assert!(!text.contains("kustomize.config.k8s.io/id"), "{text}");
}

/// kustomize hands a legacy plugin its resources in `resources:` order and sorts them only
/// afterwards (`api/krusty/kustomizer.go`, `applySortOrder`, v5.8.1): a Namespace listed
/// after its Job reaches the plugin after it, and still places the Job in Linkerd.
#[test]
fn kubectl_kustomize_plugin_sees_a_namespace_listed_after_its_job() {
    let Some(kubectl) = common::require_tool("kubectl", "kubectl kustomize runs the plugin") else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let home = tmp.path();
    install(home);
    let app = home.join("app");
    std::fs::create_dir(&app).expect("mkdir");
    write(
        &app,
        "job.yaml",
        &JOB.replace("  name: migrate\n", "  name: migrate\n  namespace: batch\n"),
    );
    write(
        &app,
        "namespace.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: batch\n  annotations:\n    linkerd.io/inject: enabled\n",
    );
    write(&app, "meshjob.yaml", CONFIG);
    write(
        &app,
        "kustomization.yaml",
        "resources:\n- job.yaml\n- namespace.yaml\ntransformers:\n- meshjob.yaml\n",
    );
    let text = build(&kubectl, home, &app);
    // kustomize's own output puts the Namespace first; the plugin saw it last.
    assert!(
        text.find("kind: Namespace") < text.find("kind: Job"),
        "{text}"
    );
    assert!(
        text.contains("for q in localhost:4191/shutdown;"),
        "Linkerd's wrapper:\n{text}"
    );
    assert!(!text.contains("quitquitquit"), "not Istio's:\n{text}");
}

#[test]
fn install_dir_links_the_binary_and_argv0_selects_the_plugin() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("plugins");
    let install = hosts::run_bounded(
        Command::new(common::bin())
            .args(["kustomize", "install", "--dir"])
            .arg(&dir),
        b"",
        LIMIT,
    );
    assert!(install.status.success(), "{}", hosts::show(&install));
    let plugin = dir.join("meshjob.dev/v1alpha1/meshjobconfig/MeshJobConfig");
    let meta = std::fs::symlink_metadata(&plugin).expect("installed");
    assert!(meta.file_type().is_symlink(), "a link to the binary");
    // Installing again replaces the link.
    let again = hosts::run_bounded(
        Command::new(common::bin())
            .args(["kustomize", "install", "--dir"])
            .arg(&dir),
        b"",
        LIMIT,
    );
    assert!(again.status.success(), "{}", hosts::show(&again));

    // As kustomize runs it: config path in argv[1], the stream on stdin, with kustomize's
    // id annotation, which must come back byte-identical.
    let config = tmp.path().join("kust-plugin-config-1");
    std::fs::write(&config, CONFIG).expect("config");
    let id = "    kustomize.config.k8s.io/id: |\n      group: batch\n      kind: Job\n      name: migrate\n      version: v1\n";
    let input = JOB.replace(
        "  name: migrate\n",
        &format!("  name: migrate\n  annotations:\n{id}"),
    );
    let stream = format!("{input}---\n{CONFIGMAP}");
    let out = hosts::run_bounded(Command::new(&plugin).arg(&config), stream.as_bytes(), LIMIT);
    assert!(out.status.success(), "{}", hosts::show(&out));
    let text = String::from_utf8(out.stdout).expect("utf-8");
    assert!(text.contains(id), "{text}");
    assert!(text.contains("terminationDrainDuration: 7s"), "{text}");
    assert!(text.ends_with(CONFIGMAP), "{text}");

    // Unfixable errors fail the build, and say why.
    let out = hosts::run_bounded(
        Command::new(&plugin).arg(&config),
        CRONJOB
            .replace("registry.example/report:2", "other/image:1")
            .as_bytes(),
        LIMIT,
    );
    assert_eq!(out.status.code(), Some(1), "{}", hosts::show(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("meshjob: error: CronJob/report"));

    // A config with a typo is trouble, named with its place.
    std::fs::write(&config, CONFIG.replace("drainDuration", "drainDuraton")).expect("config");
    let out = hosts::run_bounded(Command::new(&plugin).arg(&config), JOB.as_bytes(), LIMIT);
    assert_eq!(out.status.code(), Some(2), "{}", hosts::show(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("drainDuraton") && err.contains(":6:"), "{err}");
    assert!(out.stdout.is_empty());

    // Without the config path it explains how it is meant to run.
    let out = hosts::run_bounded(&mut Command::new(&plugin), JOB.as_bytes(), LIMIT);
    assert_eq!(out.status.code(), Some(2), "{}", hosts::show(&out));
}
