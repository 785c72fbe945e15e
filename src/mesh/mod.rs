//! The service meshes meshjob knows, as facts: what is true of each mesh, never what meshjob
//! writes on its pods (that is `plan`'s, which this module does not import).
//!
//! A [`Mesh`] ([`facts`]) holds what the stages need about one mesh: the proxy container's
//! name, its quit and ready endpoints, how a pod opts out, the per-pod config and
//! native-sidecar annotations, which documents hold the mesh-wide configuration, and how to
//! read the versions a manifest says ([`found`]). [`Support`] ([`support`]) is what a pod's
//! native sidecar depends on. Each mesh is one folder that fills a `Mesh` in, with the
//! sources of its facts: its constants (`mod.rs`), the versions its manifests say
//! (`versions.rs`) and the recognisers of its mesh-wide config documents (`documents.rs`).
//! [`MeshId::mesh`] is the one match on the id.
//!
//! # Adding a mesh, or a holder (a sidecar that holds a pod up: Vault, Dapr, Consul)
//!
//! 1. `config/document.rs`: a [`MeshId`] variant. The compiler then asks for the arms of
//!    [`MeshId::mesh`] (here) and of `Settings::mesh_version` and
//!    `Settings::mesh_version_origin` (`config/mod.rs`), with the version setting they read
//!    (a `Settings` field, its flag in `config/flags.rs`, its key in `config/document.rs`).
//! 2. `mesh/<name>/mod.rs`: its facts, each with where it was read upstream, and its
//!    `MESH: Mesh` (the trigger annotation is a pod marker, the native key is
//!    `native_sidecar_annotation`, the quit endpoint is `default_quit_url`);
//!    `mesh/<name>/versions.rs` for [`Mesh::read_versions`], and
//!    `mesh/<name>/documents.rs` if it has mesh-wide config documents.
//! 3. `plan/<name>/mod.rs`: its `Planner` (what its pods get under each strategy, and its
//!    mesh-wide values), added to `plan::PLANNERS`; a test holds that list to [`ALL`].
//! 4. Only if its versions are read from documents whose kinds or words the quick filter
//!    does not list yet: those in `manifest_versions` (`KINDS`, `NEEDLES`, `may_hold`),
//!    which skips every other document unread. No compiler asks for this one.
//!
//! Nothing else branches on the mesh: the stages read its facts from its `Mesh`.

mod facts;
pub(crate) mod found;
pub(crate) mod holder;
pub(crate) mod istio;
pub(crate) mod linkerd;
mod support;

pub(crate) use crate::config::MeshId;
pub(crate) mod quantity;
pub(crate) use facts::{Marker, MarkerKey, MarkerPlace, Mesh, Reading, StopEndpoint};
pub(crate) use found::NativeMode;
pub(crate) use support::Support;

impl MeshId {
    /// The facts of this mesh.
    pub fn mesh(self) -> &'static Mesh {
        match self {
            MeshId::Istio => &istio::MESH,
            MeshId::Linkerd => &linkerd::MESH,
        }
    }
}

/// Every mesh meshjob knows.
pub(crate) static ALL: std::sync::LazyLock<Vec<&'static Mesh>> = std::sync::LazyLock::new(|| {
    // Every `MeshId` (the config's `mesh` values), so that a new mesh cannot be left out.
    <MeshId as clap::ValueEnum>::value_variants()
        .iter()
        .map(|id| id.mesh())
        .collect()
});
