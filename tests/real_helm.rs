//! meshjob as the post-renderer of the real Helm 4 and Helm 3 (built by `scripts/peers.sh
//! helm4 helm3` from `helm.sh/helm/v4` and `helm.sh/helm/v3`), as docs/helm.md describes:
//! Helm 4 through the `postrenderer/v1` plugin in integrations/helm, Helm 3 through
//! `--post-renderer meshjob --post-renderer-args fix --post-renderer-args -`. A chart with a
//! hook Job, a test hook Pod, a CronJob and a Namespace in a late file (`z-namespace.yaml`),
//! rendered by `helm template` (and, on Helm 4, `helm install --dry-run=client`; no cluster):
//! - Helm 4 post-renders every file, hooks included (helm/helm pkg/action/action.go,
//!   annotateAndMerge, then the post-renderer, then SortManifests), in file-name order, so the
//!   Namespace reaches meshjob after the CronJob it places;
//! - Helm 3 post-renders only the regular manifests: the hooks are split out first
//!   (pkg/action/action.go renderResources), so they come out as the chart wrote them;
//! - when meshjob refuses (exit 1), Helm 3 fails with meshjob's stderr in its error
//!   (pkg/postrender/exec.go), Helm 4 with `plugin "meshjob" exited with error`, which keeps
//!   the plugin's stderr to itself: on Linux the plugin's post-render.sh writes meshjob's
//!   findings to Helm's own stderr, so they show before that error.
//!
//! Needs `helm4` and `helm3` (MESHJOB_PEERS_BIN or PATH): skipped loudly without them, a
//! failure under MESHJOB_REQUIRE_TOOLS=1.

mod common;

use common::hosts::{run_bounded, show};
use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(120);

const CHART: &str = "apiVersion: v2\nname: batch\nversion: 0.1.0\n";

const HOOK_JOB: &str = "\
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
spec:
  template:
    spec:
      containers:
      - name: migrate
        image: registry.example/migrate:1
        command: [\"/migrate\", \"up\"]
      restartPolicy: Never
";

const TEST_POD: &str = "\
apiVersion: v1
kind: Pod
metadata:
  name: smoke
  annotations:
    helm.sh/hook: test
spec:
  containers:
  - name: smoke
    image: registry.example/smoke:1
    command: [\"/smoke\"]
  restartPolicy: Never
";

const CRONJOB: &str = "\
apiVersion: batch/v1
kind: CronJob
metadata:
  name: report
  namespace: batch
spec:
  schedule: \"0 3 * * *\"
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - name: report
            image: registry.example/report:2
            command: [\"/report\", \"--daily\"]
          restartPolicy: OnFailure
";

/// In a late file: Helm 4 hands it to meshjob after the CronJob, which it puts in Linkerd.
const NAMESPACE: &str = "\
apiVersion: v1
kind: Namespace
metadata:
  name: batch
  annotations:
    linkerd.io/inject: enabled
";

struct Helm {
    helm: PathBuf,
    home: tempfile::TempDir,
}

impl Helm {
    fn find(name: &str) -> Option<Helm> {
        let helm = common::require_peer(
            name,
            name,
            "the real Helm runs meshjob as its post-renderer",
        )?;
        Some(Helm {
            helm,
            home: tempfile::tempdir().expect("tempdir"),
        })
    }

    /// helm with its config, data and cache in a temp home, no cluster, and meshjob on PATH
    /// (the plugin's command is the bare name `meshjob`).
    fn cmd(&self) -> Command {
        let h = self.home.path();
        let bin_dir = common::bin().parent().expect("bin dir").to_path_buf();
        let path = std::env::join_paths(std::iter::once(bin_dir).chain(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        )))
        .expect("PATH");
        let mut c = Command::new(&self.helm);
        c.env("HOME", h)
            .env("HELM_CONFIG_HOME", h.join("config"))
            .env("HELM_DATA_HOME", h.join("data"))
            .env("HELM_CACHE_HOME", h.join("cache"))
            .env("KUBECONFIG", h.join("no-kubeconfig"))
            .env("PATH", path)
            .current_dir(h);
        c
    }

    fn run(&self, args: &[&str]) -> Output {
        run_bounded(self.cmd().args(args), b"", LIMIT)
    }

    /// The chart, in the temp home; `job` replaces the hook Job's file when given.
    fn chart(&self, extra: Option<(&str, &str)>) -> PathBuf {
        let dir = self.home.path().join("chart");
        let t = dir.join("templates");
        std::fs::create_dir_all(&t).expect("mkdir");
        std::fs::write(dir.join("Chart.yaml"), CHART).expect("write");
        for (name, text) in [
            ("cronjob.yaml", CRONJOB),
            ("hook-job.yaml", HOOK_JOB),
            ("test-pod.yaml", TEST_POD),
            ("z-namespace.yaml", NAMESPACE),
        ] {
            std::fs::write(t.join(name), text).expect("write");
        }
        if let Some((name, text)) = extra {
            std::fs::write(t.join(name), text).expect("write");
        }
        dir
    }
}

/// The document of `text` that holds `kind: KIND` and `name: NAME`.
fn doc<'a>(text: &'a str, kind: &str, name: &str) -> &'a str {
    text.split("\n---")
        .find(|d| d.contains(&format!("kind: {kind}\n")) && d.contains(&format!("name: {name}\n")))
        .unwrap_or_else(|| panic!("no {kind}/{name} in\n{text}"))
}

const WRAPPED: &str = "# meshjob-wrapper v";

fn helm4() -> Option<Helm> {
    let h = Helm::find("helm4")?;
    let plugin = common::root().join("integrations/helm");
    let o = h.run(&["plugin", "install", plugin.to_str().expect("utf-8 path")]);
    assert!(o.status.success(), "helm plugin install: {}", show(&o));
    Some(h)
}

fn stdout(o: &Output) -> String {
    assert!(o.status.success(), "{}", show(o));
    String::from_utf8(o.stdout.clone()).expect("utf-8")
}

/// Helm 4: every file, hooks included, is post-rendered; the late Namespace still places the
/// CronJob in Linkerd; Helm takes its bookkeeping annotation back out.
fn check_helm4(text: &str, what: &str) {
    let job = doc(text, "Job", "migrate");
    assert!(
        job.contains(WRAPPED) && job.contains("quitquitquit"),
        "{what}: the hook Job:\n{job}"
    );
    let pod = doc(text, "Pod", "smoke");
    assert!(
        pod.contains(WRAPPED) && pod.contains("quitquitquit"),
        "{what}: the test Pod:\n{pod}"
    );
    let cron = doc(text, "CronJob", "report");
    assert!(
        cron.contains(WRAPPED) && cron.contains("/shutdown"),
        "{what}: the CronJob in the Linkerd namespace:\n{cron}"
    );
    assert!(
        !doc(text, "Namespace", "batch").contains("meshjob"),
        "{what}:\n{text}"
    );
    assert!(
        !text.contains("postrenderer.helm.sh/postrender-filename"),
        "{what}:\n{text}"
    );
}

#[test]
fn helm4_template_and_dry_run_post_render_hooks_with_the_plugin() {
    let Some(h) = helm4() else { return };
    let chart = h.chart(None);
    let chart = chart.to_str().expect("utf-8 path");
    let v = h.run(&["version", "--short"]);
    eprintln!("helm4: {}", String::from_utf8_lossy(&v.stdout).trim());
    let t = stdout(&h.run(&["template", "db", chart, "--post-renderer", "meshjob"]));
    check_helm4(&t, "helm template");
    let d = stdout(&h.run(&[
        "install",
        "db",
        chart,
        "--dry-run=client",
        "--post-renderer",
        "meshjob",
    ]));
    check_helm4(&d, "helm install --dry-run=client");
}

#[test]
fn helm3_template_post_renders_all_but_the_hooks() {
    let Some(h) = Helm::find("helm3") else { return };
    let chart = h.chart(None);
    let chart = chart.to_str().expect("utf-8 path");
    let meshjob = common::bin();
    let meshjob = meshjob.to_str().expect("utf-8 path");
    let pr = [
        "--post-renderer",
        meshjob,
        "--post-renderer-args",
        "fix",
        "--post-renderer-args",
        "-",
    ];
    // Only `helm template`: Helm 3's `install --dry-run=client` asks the cluster first
    // whatever its help says (helm.sh/helm/v3 v3.21.4 pkg/action/install.go, RunWithContext:
    // `if !i.ClientOnly { ... IsReachable() }`, and only `helm template` sets ClientOnly), so
    // without a cluster it fails with "Kubernetes cluster unreachable".
    for (what, args) in [("helm template", vec!["template", "db", chart])] {
        let text = stdout(&h.run(&[&args[..], &pr[..]].concat()));
        let cron = doc(&text, "CronJob", "report");
        assert!(
            cron.contains(WRAPPED) && cron.contains("/shutdown"),
            "{what}: the CronJob in the Linkerd namespace:\n{cron}"
        );
        // Hooks never reach Helm 3's post-renderer (docs/helm.md, the hooks table).
        for (kind, name) in [("Job", "migrate"), ("Pod", "smoke")] {
            let d = doc(&text, kind, name);
            assert!(
                !d.contains("meshjob") && !d.contains("istio"),
                "{what}: Helm 3 post-rendered the hook {kind}/{name}:\n{d}"
            );
        }
    }
}

/// A regular Job meshjob refuses: `args` and no `command`.
const REFUSED: &str = "\
apiVersion: batch/v1
kind: Job
metadata:
  name: hidden-entrypoint
spec:
  template:
    spec:
      containers:
      - name: task
        image: registry.example/task:1
        args: [\"run\"]
      restartPolicy: Never
";

#[test]
fn helm_fails_the_render_when_meshjob_refuses() {
    if let Some(h) = Helm::find("helm3") {
        let chart = h.chart(Some(("refused.yaml", REFUSED)));
        let meshjob = common::bin();
        let o = h.run(&[
            "template",
            "db",
            chart.to_str().expect("utf-8"),
            "--post-renderer",
            meshjob.to_str().expect("utf-8"),
            "--post-renderer-args",
            "fix",
            "--post-renderer-args",
            "-",
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "helm 3 rendered it: {}", show(&o));
        assert!(
            err.contains("hidden-entrypoint") && err.contains("command"),
            "Helm 3 shows meshjob's stderr: {}",
            show(&o)
        );
    }
    if let Some(h) = helm4() {
        let chart = h.chart(Some(("refused.yaml", REFUSED)));
        let o = h.run(&[
            "template",
            "db",
            chart.to_str().expect("utf-8"),
            "--post-renderer",
            "meshjob",
        ]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "helm 4 rendered it: {}", show(&o));
        assert!(
            err.contains("meshjob") && err.contains("exit"),
            "Helm 4's error: {}",
            show(&o)
        );
        // On Linux the plugin sends meshjob's findings to Helm's own stderr.
        if cfg!(target_os = "linux") {
            assert!(
                err.contains("error: Job/hidden-entrypoint: ")
                    && err.contains("has args but no command")
                    && err.contains("[MJ204]"),
                "Helm 4 does not show meshjob's finding: {}",
                show(&o)
            );
        }
        eprintln!("Helm 4 says, when meshjob refuses: {}", err.trim());
    }
}
