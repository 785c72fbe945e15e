//! The service meshes meshjob knows, as data: what differs from one mesh to the next.
//!
//! A [`Mesh`] holds the facts the stages need about one mesh: the proxy container's name,
//! its quit and ready endpoints, how a pod opts out, the per-pod config and native-sidecar
//! annotations, and which documents hold the mesh-wide configuration. Each mesh is one
//! module that fills one in, with the sources of its facts (`istio`, `linkerd`). Adding a mesh is
//! adding a module and a [`MeshId`]; the stages read the facts from here, and branch on the
//! id only where a mesh's behaviour (not just a name) differs.

pub mod istio;
pub mod linkerd;

pub use crate::config::MeshId;

impl MeshId {
    /// The facts of this mesh.
    pub fn mesh(self) -> &'static Mesh {
        match self {
            MeshId::Istio => &istio::MESH,
            MeshId::Linkerd => &linkerd::MESH,
        }
    }
}

/// Where a marker key is read on a pod or Namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    Label,
    Annotation,
    /// A label, or else (when there is no such label) an annotation of the same key.
    LabelThenAnnotation,
}

/// A key whose value says whether the mesh injects a pod (or the pods of a Namespace).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MarkerKey {
    pub key: &'static str,
    pub place: Place,
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
    /// Whether the value of a native-sidecar annotation turns it on.
    pub native_sidecar_on: fn(&str) -> bool,
    /// Pod-template keys that say whether this mesh injects the pod.
    pub pod_markers: &'static [MarkerKey],
    /// Namespace keys that say whether this mesh injects the namespace's pods.
    pub namespace_markers: &'static [MarkerKey],
    /// What an already-injected proxy means for the fix, after "<proxy> is already injected, ".
    pub injected_note: &'static str,
    /// The pod annotation that moves the quit endpoint's port, if the mesh has one.
    pub quit_port_annotation: Option<&'static str>,
    /// The documents that hold mesh-wide configuration.
    pub config_kinds: &'static [ConfigKind],
    /// Whether a ConfigMap of this name holds the mesh config.
    pub is_config_map_name: fn(&str) -> bool,
}

impl Mesh {
    /// The mesh-config kind of a document, given its API group and kind.
    pub fn config_kind(&self, group: &str, kind: &str) -> Option<&'static ConfigKind> {
        self.config_kinds
            .iter()
            .find(|k| k.group == group && k.kind == kind)
    }
}

/// Every mesh meshjob knows.
pub const ALL: &[&Mesh] = &[&istio::MESH, &linkerd::MESH];
