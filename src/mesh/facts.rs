//! The facts of one mesh, as data: the [`Mesh`] each mesh module fills in, and its parts.

use super::found::{self, NativeMode};
use crate::config::MeshId;
use crate::version::{Kubelets, Release, Version};

/// Where a marker key is read on a pod or Namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkerPlace {
    Label,
    Annotation,
    /// A label, or else (when there is no such label) an annotation of the same key.
    LabelThenAnnotation,
}

/// A key whose value says whether the mesh injects a pod (or the pods of a Namespace).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MarkerKey {
    pub key: &'static str,
    pub place: MarkerPlace,
    /// Values that turn injection on; empty: any value but an `off` one (and not empty).
    pub on: &'static [&'static str],
    /// Values that turn injection off.
    pub off: &'static [&'static str],
    /// Compare values without regard to ASCII case.
    pub ignore_case: bool,
}

impl MarkerKey {
    /// What `value` of this key says.
    pub fn read(&self, value: &str) -> Option<Marker> {
        let is = |set: &[&str]| {
            set.iter().any(|v| {
                if self.ignore_case {
                    v.eq_ignore_ascii_case(value)
                } else {
                    *v == value
                }
            })
        };
        if is(self.off) {
            Some(Marker::Off)
        } else if is(self.on) || (self.on.is_empty() && !value.is_empty()) {
            Some(Marker::On)
        } else {
            None
        }
    }
}

/// What the markers of one level (pod or Namespace) say about one mesh.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    On,
    Off,
}

/// A kind of document that holds mesh-wide configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConfigKind {
    /// API group (`install.istio.io`), or `""` for the core group (`v1`).
    pub group: &'static str,
    pub kind: &'static str,
    /// What meshjob does with it.
    pub role: ConfigRole,
}

/// What meshjob does with a mesh-config kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigRole {
    /// Holds the mesh config as a mapping; edited.
    Operator,
    /// Holds installation values (including the mesh config); edited.
    Values,
    /// A ConfigMap holding the mesh config as text; edited when its name says so.
    ConfigMap,
    /// Written by an operator from another object, which reverts edits; reported, not edited.
    Generated,
}

/// The facts of one mesh.
#[derive(Debug)]
pub struct Mesh {
    pub id: MeshId,
    /// Human name, for messages.
    pub name: &'static str,
    /// The injected proxy container.
    pub proxy_container: &'static str,
    /// The URL the wrapper POSTs by default when the task ends.
    pub default_quit_url: &'static str,
    /// The proxy's readiness endpoint.
    pub ready_url: &'static str,
    /// The pod annotation holding per-pod proxy configuration.
    pub pod_config_annotation: &'static str,
    /// The pod annotation that asks for a native sidecar (the newest spelling).
    pub native_sidecar_annotation: &'static str,
    /// Every pod annotation that asks for a native sidecar, the one that wins first.
    pub native_sidecar_annotations: &'static [&'static str],
    /// What native sidecars need, and how the mesh reads its native annotation.
    pub native: Native,
    /// The flag and config key that give the mesh's version, and what that version is.
    pub version_flag: &'static str,
    pub version_key: &'static str,
    pub version_of: &'static str,
    /// Pod-template keys that say whether this mesh injects the pod.
    pub pod_markers: &'static [MarkerKey],
    /// Namespace keys that say whether this mesh injects the namespace's pods.
    pub namespace_markers: &'static [MarkerKey],
    /// Ambient mode (no sidecar at all), if the mesh has it.
    pub ambient: Option<Ambient>,
    /// What an already-injected proxy means for the fix, after `<proxy> is already injected, `.
    pub injected_note: &'static str,
    /// The pod annotation that moves the quit endpoint's port, if the mesh has one.
    pub quit_port_annotation: Option<&'static str>,
    /// The keys of the pod's config annotation ([`Mesh::pod_config_annotation`]) that move
    /// the quit endpoint's port, below [`Mesh::quit_port_annotation`] and above the
    /// mesh-wide port.
    pub quit_port_config_keys: &'static [&'static str],
    /// Where a POST stops the proxy, as hand-written fixes call it.
    pub stop_endpoints: &'static [StopEndpoint],
    /// Processes of the proxy that a hand-written fix may kill.
    pub proxy_processes: &'static [&'static str],
    /// The proxy's images, by repository (matched on their last path components), which
    /// mean a proxy that runs until it is stopped wherever they appear.
    pub proxy_images: &'static [&'static str],
    /// The init containers the injector adds, which set up the pod's network and so come
    /// before a sidecar that uses it.
    pub init_containers: &'static [&'static str],
    /// The documents that hold mesh-wide configuration.
    pub config_kinds: &'static [ConfigKind],
    /// Whether a ConfigMap of this name holds the mesh config.
    pub is_config_map_name: fn(&str) -> bool,
    /// Reads the versions one object of a manifest says (the injector, the proxy, the
    /// global native-sidecar setting), at the top level or in a list.
    pub(crate) read_versions: fn(&crate::yaml::tree::Node, &mut found::Finder<'_>),
    /// Orders releases: a smaller key is older.
    pub age: fn(Release) -> [u32; 4],
    /// How a pod's manifest opts it out of the mesh, for advice in findings.
    pub opt_out: &'static str,
    /// What Argo Workflows' controller can run in the proxy container to stop it.
    pub argo_kill: KillCommand,
    /// The Namespace annotations that this mesh's injector (of the given version; unknown:
    /// any version) copies onto a pod of the Namespace that lacks them, of those meshjob
    /// reads: a pod has them as if it carried them itself.
    pub namespace_annotations: fn(Option<Release>) -> &'static [&'static str],
    /// Where the wrapper asks the proxy to quit, and polls its readiness, when the pod's
    /// [`Mesh::quit_port_annotation`] is `0` (that server turned off); None: such a pod is
    /// refused with a finding.
    pub port_off: Option<PortOff>,
}

/// A command that stops the proxy when run inside its container (Argo Workflows'
/// `workflows.argoproj.io/kill-cmd-<container>` annotation), and the pod annotations it
/// needs.
#[derive(Debug)]
pub struct KillCommand {
    /// The argv, as the JSON text of the annotation.
    pub argv: &'static str,
    /// Pod annotations without which the command does not stop the proxy.
    pub needs: &'static [(&'static str, &'static str)],
}

/// The endpoints of a pod whose quit port is turned off (port `0`).
#[derive(Debug)]
pub struct PortOff {
    pub quit_url: &'static str,
    pub ready_url: &'static str,
    /// What serves them, for messages.
    pub served_by: &'static str,
    /// Keys of the pod's config annotation that move that server: a pod that sets one is
    /// refused, since meshjob cannot tell where it went.
    pub moved_by: &'static [&'static str],
}

impl Mesh {
    /// The mesh-config kind of a document, given its API group and kind.
    pub fn config_kind(&self, group: &str, kind: &str) -> Option<&'static ConfigKind> {
        self.config_kinds
            .iter()
            .find(|k| k.group == group && k.kind == kind)
    }
}

/// How a mesh puts pods in ambient mode, where a pod has no sidecar to stop.
#[derive(Debug)]
pub struct Ambient {
    /// The label, on a pod or a Namespace, that puts its pods in ambient mode, and its value.
    pub label: &'static str,
    pub value: &'static str,
    /// Labels that ask for a sidecar, which wins over ambient: on the pod, on a Namespace.
    pub pod_sidecar: &'static [SidecarLabel],
    pub namespace_sidecar: &'static [SidecarLabel],
}

/// A label that asks for a sidecar: `key` with `value`, or with any non-empty value.
#[derive(Debug)]
pub struct SidecarLabel {
    pub key: &'static str,
    pub value: Option<&'static str>,
}

impl SidecarLabel {
    /// Whether `labels` (a mapping) has this label.
    pub fn on(&self, labels: &crate::yaml::tree::Node) -> bool {
        labels
            .str(self.key)
            .is_some_and(|v| self.value.map_or(!v.is_empty(), |want| v == want))
    }
}

/// A proxy endpoint that stops it on a POST.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StopEndpoint {
    pub port: u16,
    pub path: &'static str,
    /// No other program serves this path: a call to it with the port in a variable
    /// counts, and one without POST is worth a warning.
    pub distinctive: bool,
    /// How findings name a POST to it.
    pub describe: &'static str,
}

/// What a mesh's native sidecars need, and how it reads its per-pod native annotation.
#[derive(Debug)]
pub struct Native {
    /// The first mesh version with a per-pod native annotation.
    pub since: Version,
    /// The first Kubernetes with native sidecars on by default.
    pub kubernetes_since: Version,
    /// What a version older than [`Native::since`] lacks, after "Istio 1.22 ".
    pub too_old: &'static str,
    /// The annotation to write for a mesh release (unknown: the one every version reads);
    /// `None` when that release has none.
    pub key_for: fn(Option<Release>) -> Option<&'static str>,
    /// Whether a release reads this native annotation key (unknown: any it may read).
    pub reads: fn(&str, Option<Release>) -> bool,
    /// Keys that look like a native annotation and that no release reads.
    pub lookalikes: &'static [&'static str],
    /// The value meshjob writes into it.
    pub on: &'static str,
    /// Whether an annotation value turns native sidecars on, as the given release reads it
    /// (unknown: only what every version reads as on).
    pub is_on: fn(&str, Option<Release>) -> bool,
    /// Whether an annotation value turns them off.
    pub is_off: fn(&str) -> bool,
    /// How `--strategy native` copes with an unknown version, said in the note about it.
    pub unknown_version: &'static str,
    /// Whether the mesh makes every pod's proxy a native sidecar without an annotation,
    /// from its global setting (as read), its release and the oldest kubelet; `None` when
    /// that is not known.
    pub(crate) global: fn(Option<NativeMode>, Option<Release>, Option<Kubelets>) -> Option<bool>,
    /// When the mesh makes every proxy a native sidecar by default, in parentheses after
    /// "by default Istio makes every proxy one".
    pub by_default: &'static str,
}

impl Mesh {
    /// The native annotation meshjob writes for a pod of this mesh, for `release`.
    pub fn native_key(&self, release: Option<Release>) -> &'static str {
        (self.native.key_for)(release).unwrap_or(self.native_sidecar_annotation)
    }
}
