//! The service meshes meshjob knows, as data: what differs from one mesh to the next.
//!
//! A [`Mesh`] holds the facts the stages need about one mesh: the proxy container's name,
//! its quit and ready endpoints, how a pod opts out, the per-pod config and native-sidecar
//! annotations, and which documents hold the mesh-wide configuration. Each mesh is one
//! module that fills one in, with the sources of its facts (`istio`). Adding a mesh is
//! adding a module and a [`MeshId`]; the stages read the facts from here, and branch on the
//! id only where a mesh's behaviour (not just a name) differs.

pub mod istio;

/// Which mesh.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MeshId {
    Istio,
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
    /// Label (preferred) or annotation that opts a pod in or out of injection.
    pub inject_key: &'static str,
    /// The value of [`Mesh::inject_key`] that opts out (compared without case).
    pub inject_off: &'static str,
    /// The pod annotation holding per-pod proxy configuration.
    pub pod_config_annotation: &'static str,
    /// The pod annotation that asks for a native sidecar.
    pub native_sidecar_annotation: &'static str,
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
pub const ALL: &[&Mesh] = &[&istio::MESH];
