//! One pod of a dump: is it held, and by what.
//!
//! Read from the pod's `spec` and `status` as the API writes them (kubernetes/kubernetes@
//! 815c3d8f7047 `staging/src/k8s.io/api/core/v1/types.go`): `status.phase`
//! (`PodRunning` is `Running`), `spec.restartPolicy`, `spec.containers[].name/image`,
//! `status.containerStatuses[]` by `name`, each with one of `state.running` (`startedAt`),
//! `state.terminated` (`exitCode`, `finishedAt`, `startedAt`) or `state.waiting`, and
//! `metadata.ownerReferences[]` (`apiVersion`, `kind`, `name`, `uid`, `controller`). A native
//! sidecar is an init container with `restartPolicy: Always`, reported under
//! `status.initContainerStatuses`: it never holds a pod, since the kubelet stops it after
//! the regular containers (`ContainerRestartPolicyAlways` on `Container.RestartPolicy`).
//!
//! Nothing read here that a secret could be in (environment, annotations' values, command
//! lines) is kept: only names, kinds, states, exit codes and times.

use super::time;
use crate::kinds::{Kinds, Lookup};
use crate::mesh::MeshId;
use crate::yaml::tree::Node;

/// An owner reference: the object that controls another.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Ref {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub uid: String,
}

/// Where a pod stands, for the summary's counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum State {
    Held,
    /// Running, and a task still runs (or not every container has a state yet).
    TasksRunning,
    /// Running with every container ended or restarting, and nothing that holds it.
    NotHeld,
    Pending,
    Succeeded,
    Failed,
    /// Not a batch pod: owned by a Deployment, StatefulSet, ..., or restarted `Always`.
    NotBatch,
    /// A phase the API does not write, or none.
    Other,
}

impl State {
    pub(crate) const ALL: [State; 8] = [
        State::Held,
        State::TasksRunning,
        State::NotHeld,
        State::Pending,
        State::Succeeded,
        State::Failed,
        State::NotBatch,
        State::Other,
    ];

    /// The summary's word for it.
    pub(crate) fn word(self) -> &'static str {
        match self {
            State::Held => "held",
            State::TasksRunning => "running",
            State::NotHeld => "ending",
            State::Pending => "pending",
            State::Succeeded => "succeeded",
            State::Failed => "failed",
            State::NotBatch => "not batch",
            State::Other => "other",
        }
    }
}

/// What holds a pod: a regular container still running after the tasks ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Holder {
    /// A mesh's injected proxy.
    Proxy { container: String, mesh: MeshId },
    /// A long-running sidecar; why it is taken for one (`plan::sidecars`).
    Sidecar { container: String, why: String },
    /// An injected agent other than a mesh proxy (`mesh::holder`: Vault Agent, Dapr,
    /// Consul).
    Agent {
        container: String,
        holder: &'static crate::mesh::holder::Holder,
    },
}

impl Holder {
    pub(crate) fn container(&self) -> &str {
        match self {
            Holder::Proxy { container, .. }
            | Holder::Sidecar { container, .. }
            | Holder::Agent { container, .. } => container,
        }
    }
}

/// A held pod, as read.
#[derive(Clone, Debug)]
pub(crate) struct Held {
    pub namespace: String,
    pub name: String,
    /// The controlling owner reference, if any.
    pub owner: Option<Ref>,
    pub holding: Vec<Holder>,
    /// The task containers and their exit codes, in `spec.containers` order.
    pub tasks: Vec<(String, i64)>,
    /// When the last task ended (seconds since the epoch), if its status says.
    pub last_finished: Option<i64>,
    /// A task container runs meshjob's wrapper (the marker line of its script).
    pub wrapped: bool,
    /// Offset of the pod in its piece's text.
    pub offset: usize,
}

/// What one pod says.
#[derive(Debug)]
pub(crate) struct PodRecord {
    pub state: State,
    pub held: Option<Box<Held>>,
    /// The newest time the pod records.
    pub newest: Option<i64>,
}

/// Controller kinds whose pods run until deleted, whatever their containers do.
const SERVING: [(&str, &str); 5] = [
    ("apps", "Deployment"),
    ("apps", "ReplicaSet"),
    ("apps", "StatefulSet"),
    ("apps", "DaemonSet"),
    ("", "ReplicationController"),
];

/// The controlling owner of an object: the owner reference with `controller: true`, else
/// the first one.
pub(crate) fn controller(obj: &Node) -> Option<Ref> {
    let refs = obj.path(&["metadata", "ownerReferences"])?.items()?;
    let is_controller = |r: &&Node| r.get("controller").and_then(Node::as_str) == Some("true");
    let r = refs.iter().find(is_controller).or_else(|| refs.first())?;
    Some(Ref {
        api_version: r.str("apiVersion").unwrap_or_default().to_string(),
        kind: r.str("kind")?.to_string(),
        name: r.str("name")?.to_string(),
        uid: r.str("uid").unwrap_or_default().to_string(),
    })
}

fn group(api_version: &str) -> &str {
    api_version.split_once('/').map_or("", |(g, _)| g)
}

/// Whether an owner reference names a batch workload: a `batch` Job or CronJob, or a kind
/// of the kinds table.
pub(crate) fn is_batch_kind(kinds: &Kinds, r: &Ref) -> bool {
    matches!(
        kinds.lookup(&r.api_version, &r.kind),
        Lookup::Row(_) | Lookup::UnknownVersion(_)
    ) || (group(&r.api_version) == "batch" && matches!(r.kind.as_str(), "Job" | "CronJob"))
}

/// Reads one pod. `sidecars`: the `sidecars` setting.
pub(crate) fn read(pod: &Node, kinds: &Kinds, sidecars: &[String]) -> PodRecord {
    let newest = newest(pod);
    let state = |state| PodRecord {
        state,
        held: None,
        newest,
    };
    let status = pod.get("status");
    match status.and_then(|s| s.str("phase")) {
        Some("Running") => {}
        Some("Pending") => return state(State::Pending),
        Some("Succeeded") => return state(State::Succeeded),
        Some("Failed") => return state(State::Failed),
        _ => return state(State::Other),
    }
    let owner = controller(pod);
    let serving = owner
        .as_ref()
        .is_some_and(|o| SERVING.contains(&(group(&o.api_version), o.kind.as_str())));
    let spec = pod.get("spec");
    let restart = spec.and_then(|s| s.str("restartPolicy"));
    let batch = owner.as_ref().is_some_and(|o| is_batch_kind(kinds, o))
        || matches!(restart, Some("Never" | "OnFailure"));
    if serving || !batch {
        return state(State::NotBatch);
    }
    let statuses = status
        .and_then(|s| s.get("containerStatuses"))
        .and_then(Node::items)
        .unwrap_or(&[]);
    let status_of = |name: &str| statuses.iter().find(|s| s.str("name") == Some(name));
    let mut held = Held {
        namespace: meta(pod, "namespace"),
        name: meta(pod, "name"),
        owner,
        holding: Vec::new(),
        tasks: Vec::new(),
        last_finished: None,
        wrapped: false,
        offset: pod.start,
    };
    let mut task_running = false;
    let containers = spec.and_then(|s| s.get("containers")).and_then(Node::items);
    for c in containers.unwrap_or(&[]) {
        let Some(name) = c.str("name") else { continue };
        let st = status_of(name).and_then(|s| s.get("state"));
        let running = st.and_then(|s| s.get("running")).is_some();
        let terminated = st.and_then(|s| s.get("terminated"));
        if let Some(holder) = holder(name, c, sidecars) {
            if running {
                held.holding.push(holder);
            }
            continue;
        }
        match terminated {
            Some(t) => {
                let code = t.str("exitCode").and_then(|c| c.parse().ok()).unwrap_or(-1);
                held.tasks.push((name.to_string(), code));
                let end = t.str("finishedAt").and_then(time::parse);
                held.last_finished = held.last_finished.max(end);
            }
            None => task_running = true,
        }
        held.wrapped |= runs_wrapper(c);
    }
    if task_running || held.tasks.is_empty() {
        return state(State::TasksRunning);
    }
    if held.holding.is_empty() {
        return state(State::NotHeld);
    }
    PodRecord {
        state: State::Held,
        held: Some(Box::new(held)),
        newest,
    }
}

/// What a regular container that does not end by itself is, by name and image.
fn holder(name: &str, c: &Node, sidecars: &[String]) -> Option<Holder> {
    let image = c.str("image");
    let container = name.to_string();
    for m in crate::mesh::ALL.iter() {
        if m.proxy_container == name {
            return Some(Holder::Proxy {
                container,
                mesh: m.id,
            });
        }
    }
    // consul-k8s names the dataplane of each service of a multi-port pod
    // `consul-dataplane-<service>` (control-plane/connect-inject/webhook/consul_dataplane_sidecar.go).
    let agent = (crate::mesh::holder::ALL.iter()).find(|h| {
        name == h.container
            || (name.strip_prefix(h.container))
                .is_some_and(|rest| rest.starts_with('-') && h.owns_pod)
    });
    if let Some(holder) = agent {
        return Some(Holder::Agent { container, holder });
    }
    let why = crate::plan::sidecars::sidecar(c, sidecars)?;
    // A mesh's proxy image under another name is that mesh's proxy.
    if let Some(mesh) = image.and_then(crate::plan::sidecars::proxy_image_mesh) {
        return Some(Holder::Proxy { container, mesh });
    }
    Some(Holder::Sidecar { container, why })
}

/// Whether a container's `command` runs meshjob's wrapper (its script's marker line).
fn runs_wrapper(c: &Node) -> bool {
    let items = c.get("command").and_then(Node::items).unwrap_or(&[]);
    items
        .iter()
        .filter_map(Node::as_str)
        .any(|s| crate::plan::script::marker_version(s).is_some())
}

fn meta(obj: &Node, key: &str) -> String {
    obj.path(&["metadata", key])
        .and_then(Node::as_str)
        .unwrap_or_default()
        .to_string()
}

/// The newest time a pod records: its creation, its start, its containers' states and its
/// conditions' transitions.
fn newest(pod: &Node) -> Option<i64> {
    let mut best: Option<i64> = None;
    let mut see = |n: Option<&Node>| {
        if let Some(t) = n.and_then(Node::as_str).and_then(time::parse) {
            best = best.max(Some(t));
        }
    };
    see(pod.path(&["metadata", "creationTimestamp"]));
    let Some(status) = pod.get("status") else {
        return best;
    };
    see(status.get("startTime"));
    for c in status
        .get("conditions")
        .and_then(Node::items)
        .unwrap_or(&[])
    {
        see(c.get("lastTransitionTime"));
    }
    for key in ["containerStatuses", "initContainerStatuses"] {
        for c in status.get(key).and_then(Node::items).unwrap_or(&[]) {
            let Some(state) = c.get("state") else {
                continue;
            };
            see(state.path(&["running", "startedAt"]));
            see(state.path(&["terminated", "startedAt"]));
            see(state.path(&["terminated", "finishedAt"]));
        }
    }
    best
}
