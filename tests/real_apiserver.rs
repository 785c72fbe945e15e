//! meshjob's outputs against a real API server: `kube-apiserver` of Kubernetes 1.37.2 and
//! `etcd` 3.7.3 (built by `scripts/peers.sh kube-apiserver etcd`), started on loopback ports
//! for this test, and `kubectl create --dry-run=server` (the server's admission, defaulting and
//! strict field validation, nothing stored). Every golden output of a core kind (a `batch/v1`
//! Job or CronJob, a `v1` Pod) whose input the server accepts must be accepted too; and, with
//! the batch projects' own CRDs installed (testdata/crds, whose README names each file's
//! source), every golden output of a batch CRD kind, whose input must be accepted as well.
//! A Katib Experiment's CRD checks nothing under its root, so its `trialSpec` is created as
//! the object of its own kind too.
//!
//! The server runs with what it cannot do without (flags of k8s.io/kubernetes
//! cmd/kube-apiserver/app/options and pkg/kubeapiserver/options): etcd's address, a service
//! account key (made here with openssl), a static token for kubectl, AlwaysAllow
//! authorization, and the ServiceAccount admission plugin off (no controller-manager makes
//! the `default` ServiceAccount, which that plugin would require of every pod).
//!
//! Needs `kube-apiserver` and `etcd` (MESHJOB_PEERS_BIN or PATH), `kubectl` and `openssl`:
//! skipped loudly without them, a failure under MESHJOB_REQUIRE_TOOLS=1.

mod common;

use common::hosts::{run_bounded, show};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(60);
const TOKEN: &str = "meshjob-test-token";

struct Cluster {
    dir: tempfile::TempDir,
    kubectl: PathBuf,
    children: Vec<Child>,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for c in self.children.iter_mut().rev() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

fn spawn(program: &Path, args: &[String], log: &Path) -> Child {
    let out = std::fs::File::create(log).expect("log");
    Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(out.try_clone().expect("log"))
        .stderr(out)
        .spawn()
        .unwrap_or_else(|e| panic!("start {}: {e}", program.display()))
}

impl Cluster {
    fn start() -> Option<Cluster> {
        let etcd = common::require_peer("etcd", "etcd", "the API server's store")?;
        let api = common::require_peer(
            "kube-apiserver",
            "kube-apiserver",
            "the real API server judges meshjob's outputs",
        )?;
        let kubectl = common::require_tool("kubectl", "server-side dry-run create")?;
        let openssl = common::require_tool("openssl", "the service account key")?;
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        let key = d.join("sa.key");
        let o = run_bounded(
            Command::new(openssl)
                .args(["genrsa", "-out"])
                .arg(&key)
                .arg("2048"),
            b"",
            LIMIT,
        );
        assert!(o.status.success(), "openssl genrsa: {}", show(&o));
        std::fs::write(
            d.join("tokens.csv"),
            format!("{TOKEN},admin,admin,system:masters\n"),
        )
        .expect("tokens");
        let (client, peer, secure) = (free_port(), free_port(), free_port());
        let mut cluster = Cluster {
            kubectl,
            children: Vec::new(),
            dir,
        };
        let d = cluster.dir.path().to_path_buf();
        let s = |p: &Path| p.display().to_string();
        cluster.children.push(spawn(
            &etcd,
            &[
                "--name=t".into(),
                format!("--data-dir={}", s(&d.join("etcd"))),
                format!("--listen-client-urls=http://127.0.0.1:{client}"),
                format!("--advertise-client-urls=http://127.0.0.1:{client}"),
                format!("--listen-peer-urls=http://127.0.0.1:{peer}"),
                format!("--initial-advertise-peer-urls=http://127.0.0.1:{peer}"),
                format!("--initial-cluster=t=http://127.0.0.1:{peer}"),
                "--unsafe-no-fsync=true".into(),
            ],
            &d.join("etcd.log"),
        ));
        cluster.children.push(spawn(
            &api,
            &[
                format!("--etcd-servers=http://127.0.0.1:{client}"),
                "--bind-address=127.0.0.1".into(),
                "--advertise-address=127.0.0.1".into(),
                format!("--secure-port={secure}"),
                format!("--cert-dir={}", s(&d.join("certs"))),
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local".into(),
                format!("--service-account-key-file={}", s(&key)),
                format!("--service-account-signing-key-file={}", s(&key)),
                format!("--token-auth-file={}", s(&d.join("tokens.csv"))),
                "--authorization-mode=AlwaysAllow".into(),
                "--service-cluster-ip-range=10.96.0.0/24".into(),
                "--disable-admission-plugins=ServiceAccount".into(),
                // The endpoint reconciler refuses a loopback address for the kubernetes
                // Service (pkg/controlplane/reconcilers); nothing here needs that Service.
                "--endpoint-reconciler-type=none".into(),
            ],
            &d.join("apiserver.log"),
        ));
        std::fs::write(
            d.join("kubeconfig"),
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: t\n  cluster:\n    server: \
                 https://127.0.0.1:{secure}\n    insecure-skip-tls-verify: true\nusers:\n- name: \
                 t\n  user:\n    token: {TOKEN}\ncontexts:\n- name: t\n  context:\n    cluster: \
                 t\n    user: t\n    namespace: default\ncurrent-context: t\n"
            ),
        )
        .expect("kubeconfig");
        let start = Instant::now();
        loop {
            let o = run_bounded(
                cluster.kubectl().args(["get", "--raw", "/readyz"]),
                b"",
                LIMIT,
            );
            // The default namespace is made by the server's own controller after /readyz.
            let ns = run_bounded(
                cluster
                    .kubectl()
                    .args(["get", "namespace", "default", "-o", "name"]),
                b"",
                LIMIT,
            );
            if o.status.success() && ns.status.success() {
                eprintln!("the API server was ready after {:?}", start.elapsed());
                break;
            }
            let exited = cluster
                .children
                .iter_mut()
                .any(|c| c.try_wait().ok().flatten().is_some());
            assert!(
                !exited && start.elapsed() < Duration::from_secs(120),
                "the API server is not ready (it or etcd exited, or 120 s passed): {}\n--- its log\n{}\n--- etcd's log\n{}",
                show(&o),
                std::fs::read_to_string(d.join("apiserver.log")).unwrap_or_default(),
                std::fs::read_to_string(d.join("etcd.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(500));
        }
        Some(cluster)
    }

    fn kubectl(&self) -> Command {
        let mut c = Command::new(&self.kubectl);
        c.env("KUBECONFIG", self.dir.path().join("kubeconfig"))
            .env("HOME", self.dir.path());
        c
    }

    /// Creates the CRDs and waits until the server serves their kinds.
    fn install(&self, crds: &[(PathBuf, Value)]) {
        for (path, _) in crds {
            let o = run_bounded(self.kubectl().arg("create").arg("-f").arg(path), b"", LIMIT);
            assert!(
                o.status.success(),
                "create {}: {}",
                path.display(),
                show(&o)
            );
        }
        let o = run_bounded(
            self.kubectl().args([
                "wait",
                "--for=condition=Established",
                "crd",
                "--all",
                "--timeout=60s",
            ]),
            b"",
            Duration::from_secs(90),
        );
        assert!(o.status.success(), "CRDs not established: {}", show(&o));
    }

    /// `kubectl create --dry-run=server` of `doc` in the default namespace: Ok, or the
    /// server's answer.
    fn accepts(&self, doc: &Value) -> Result<(), String> {
        let mut d = doc.clone();
        if let Some(m) = d["metadata"].as_object_mut() {
            m.remove("namespace");
        }
        let o = run_bounded(
            self.kubectl()
                .args(["create", "--dry-run=server", "-o", "name", "-f", "-"]),
            serde_json::to_string(&d).expect("json").as_bytes(),
            LIMIT,
        );
        if o.status.success() {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&o.stderr).trim().to_string())
        }
    }
}

fn core_kind(d: &Value) -> bool {
    matches!(
        (d["apiVersion"].as_str(), d["kind"].as_str()),
        (Some("batch/v1"), Some("Job" | "CronJob")) | (Some("v1"), Some("Pod"))
    )
}

/// The kinds of the CRDs under testdata/crds, as `(apiVersion, kind)` for each served
/// version.
fn crd_kinds(crds: &[Value]) -> Vec<(String, String)> {
    let mut v = Vec::new();
    for c in crds {
        let spec = &c["spec"];
        let (group, kind) = (
            spec["group"].as_str().expect("group"),
            spec["names"]["kind"].as_str().expect("kind"),
        );
        for ver in spec["versions"].as_array().expect("versions") {
            if ver["served"].as_bool() == Some(true) {
                let name = ver["name"].as_str().expect("version");
                v.push((format!("{group}/{name}"), kind.to_string()));
            }
        }
    }
    v
}

fn read_crds() -> Vec<(PathBuf, Value)> {
    let dir = common::root().join("testdata/crds");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("testdata/crds")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("crd");
            let v: Value =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            assert_eq!(v["kind"], "CustomResourceDefinition", "{}", p.display());
            (p, v)
        })
        .collect()
}

/// `Kind.group`, as kubectl names a kind.
fn group_kind(d: &Value) -> String {
    let group = d["apiVersion"].as_str().unwrap_or_default();
    let group = group.rsplit_once('/').map_or("", |(g, _)| g);
    format!("{}.{group}", d["kind"].as_str().unwrap_or_default())
}

/// The objects a golden document holds that the server can judge on their own: the document,
/// and a Katib Experiment's trial (its CRD keeps every field unchecked, so the trial is
/// created as the object of its own kind, named for the test).
fn judged(doc: &Value) -> Vec<(String, Value)> {
    let mut v = vec![(String::new(), doc.clone())];
    if doc["apiVersion"] == "kubeflow.org/v1beta1" && doc["kind"] == "Experiment" {
        let mut trial = doc["spec"]["trialTemplate"]["trialSpec"].clone();
        if let Some(t) = trial.as_object_mut() {
            t.insert("metadata".into(), serde_json::json!({"name": "trial"}));
            v.push((" (its trialSpec)".into(), trial));
        }
    }
    v
}

#[test]
fn the_api_server_accepts_every_golden_output_of_a_core_or_batch_crd_kind() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let crds = read_crds();
    let start = Instant::now();
    cluster.install(&crds);
    eprintln!(
        "{} CRDs established after {:?}",
        crds.len(),
        start.elapsed()
    );
    let crd_kinds = crd_kinds(&crds.iter().map(|(_, c)| c.clone()).collect::<Vec<_>>());
    let is_crd = |d: &Value| {
        crd_kinds
            .iter()
            .any(|(a, k)| d["apiVersion"] == a.as_str() && d["kind"] == k.as_str())
    };
    let mut failures = Vec::new();
    let (mut core, mut core_changed) = (0, 0);
    // For each CRD kind: outputs checked, and how many meshjob changed.
    let mut by_kind: std::collections::BTreeMap<String, (usize, usize)> = crd_kinds
        .iter()
        .map(|(a, k)| {
            (
                group_kind(&serde_json::json!({"apiVersion": a, "kind": k})),
                (0, 0),
            )
        })
        .collect();
    for dir in common::golden_cases() {
        let read = |name: &str| {
            std::fs::read_to_string(dir.join(name))
                .ok()
                .and_then(|t| serde_saphyr::from_multiple::<Value>(&t).ok())
        };
        let (Some(input), Some(output)) = (read("input.yaml"), read("expected.yaml")) else {
            continue;
        };
        if input.len() != output.len() {
            continue;
        }
        let name = dir
            .strip_prefix(common::root())
            .unwrap_or(&dir)
            .display()
            .to_string();
        for (i, (before, after)) in input.iter().zip(&output).enumerate() {
            let crd = is_crd(after);
            if !core_kind(after) && !crd {
                continue;
            }
            for ((what, before), (_, after)) in judged(before).into_iter().zip(judged(after)) {
                if let Err(e) = cluster.accepts(&before) {
                    // The inputs of the kinds cases are the projects' own examples.
                    if crd {
                        failures.push(format!("{name} document {}{what}: the input: {e}", i + 1));
                    }
                    continue;
                }
                let changed = usize::from(before != after);
                if crd {
                    let n = by_kind.entry(group_kind(&after)).or_default();
                    n.0 += 1;
                    n.1 += changed;
                } else {
                    core += 1;
                    core_changed += changed;
                }
                if let Err(e) = cluster.accepts(&after) {
                    failures.push(format!("{name} document {}{what}: {e}", i + 1));
                }
            }
        }
    }
    eprintln!("{core} golden outputs of core kinds checked ({core_changed} changed by meshjob)");
    for (kind, (n, changed)) in &by_kind {
        eprintln!("{kind}: {n} golden outputs checked ({changed} changed by meshjob)");
    }
    assert!(
        core_changed >= 50,
        "too few changed outputs of core kinds found: {core_changed}"
    );
    // Every CRD kept under testdata/crds is there for outputs that meshjob changes.
    let unused: Vec<_> = by_kind.iter().filter(|(_, n)| n.1 == 0).collect();
    assert!(
        unused.is_empty(),
        "CRD kinds with no changed output checked: {unused:?}"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
