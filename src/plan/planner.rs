//! The one trait each mesh implements: what its pods get under each strategy, and its
//! mesh-wide values. The stages call `planner(mesh).native(&mut cx)`, never an `if` on the
//! mesh, so a new mesh cannot silently inherit another mesh's annotation.

use crate::config::Settings;
use crate::finding::Finding;
use crate::mesh::{Mesh, Support};
use crate::pod::Pod;
use crate::yaml::editor::Editor;
use crate::yaml::tree::Node;

/// What a pod planner works on: one pod of one document, its mesh and the settings.
pub(crate) struct PodCx<'e, 'a, 'd> {
    pub ed: &'e mut Editor<'a>,
    pub pod: &'e Pod<'d>,
    pub mesh: &'static Mesh,
    pub settings: &'e Settings,
    /// The versions the pod was decided with, and where they came from.
    pub support: &'e Support,
    pub out: &'e mut Vec<Finding>,
}

/// A mesh's planners. Each mesh has one, in its own module under `plan/` (`plan::istio`,
/// `plan::linkerd`), listed in `plan::PLANNERS`.
pub(crate) trait Planner: Sync {
    /// The facts of the mesh this plans for.
    fn mesh(&self) -> &'static Mesh;

    /// The wrapper strategy, after `plan::container` wrapped the pod's containers:
    /// `wrapped` says whether something in the pod now stops the proxy, so that the pod
    /// needs the mesh's per-pod settings (an annotation, or the env of a proxy injected
    /// already). An earlier native fix comes out.
    fn wrapper(&self, cx: &mut PodCx<'_, '_, '_>, wrapped: bool);

    /// The native-sidecar strategy: the mesh's native annotation on the pod, and what
    /// meshjob added for the wrapper taken out.
    fn native(&self, cx: &mut PodCx<'_, '_, '_>);

    /// Takes out what meshjob added to the pod; `keep_native`: the native annotation stays
    /// (the pod is native because of it).
    fn remove(&self, cx: &mut PodCx<'_, '_, '_>, keep_native: bool);

    /// The mesh-wide values in one document (mesh config, control-plane Helm values), if it
    /// holds some. `force_mesh`: an untyped document is the mesh's config whatever its keys.
    /// `native`: the mesh's pods get native sidecars (the chosen strategy, or what `auto`
    /// picks with the versions of the run).
    fn values(
        &self,
        ed: &mut Editor<'_>,
        root: &Node,
        settings: &Settings,
        native: bool,
        force_mesh: bool,
        out: &mut Vec<Finding>,
    );

    /// Whether one document holds mesh-wide values that [`Planner::values`] edits or reports
    /// on (the same documents, whether or not they need an edit).
    fn holds_values(&self, root: &Node, force_mesh: bool) -> bool;
}
