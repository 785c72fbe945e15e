//! Linkerd's planner: what a Linkerd pod gets under each strategy, and the control-plane
//! Helm values.

mod annotation;
mod injected;
mod pod;
mod values;

use crate::config::Settings;
use crate::finding::Finding;
use crate::mesh::Mesh;
use crate::mesh::linkerd::{self, documents};
use crate::plan::env;
use crate::plan::planner::{Planner, PodCx};
use crate::yaml::editor::Editor;
use crate::yaml::tree::Node;
use pod::Native;

/// Linkerd as a [`Planner`].
pub(crate) struct Linkerd;

/// The one Linkerd planner.
pub(crate) static PLANNER: Linkerd = Linkerd;

impl Planner for Linkerd {
    fn mesh(&self) -> &'static Mesh {
        &linkerd::MESH
    }

    fn wrapper(&self, cx: &mut PodCx<'_, '_, '_>, wrapped: bool) {
        // meshjob's native annotations (an earlier native run) come out when they are what
        // makes the pod native; the shutdown annotation may take their place.
        let mesh = cx.mesh;
        let effective = (mesh.native_sidecar_annotations.iter()).find_map(|k| cx.pod.annotation(k));
        let drop: &[&str] = match effective {
            Some(linkerd::NATIVE_ON) => mesh.native_sidecar_annotations,
            _ => &[],
        };
        let mut replaced = false;
        for key in drop {
            let replacement = (wrapped && !replaced).then_some(annotation::fresh_entry);
            let native = (*key, linkerd::NATIVE_ON);
            replaced |=
                crate::plan::revert::drop_native(cx.ed, cx.pod, native, replacement, cx.out);
        }
        let force = cx.settings.force;
        if wrapped && !replaced {
            annotation::plan(cx.ed, cx.pod, force, cx.out);
        }
        if wrapped && env::proxy(cx.pod, mesh).is_some() {
            // Injected already: the annotation takes effect only at the next injection, the
            // proxy's env now.
            injected::plan(cx.ed, cx.pod, mesh, force, cx.out);
        }
    }

    fn native(&self, cx: &mut PodCx<'_, '_, '_>) {
        let key = cx.mesh.native_key(cx.support.release());
        let force = cx.settings.force;
        pod::plan(cx.ed, cx.pod, cx.mesh, Native::Ensure(key), force, cx.out);
    }

    fn remove(&self, cx: &mut PodCx<'_, '_, '_>, keep_native: bool) {
        let native = if keep_native {
            Native::Keep
        } else {
            Native::Remove
        };
        let force = cx.settings.force;
        pod::plan(cx.ed, cx.pod, cx.mesh, native, force, cx.out);
    }

    fn values(
        &self,
        ed: &mut Editor<'_>,
        root: &Node,
        settings: &Settings,
        native: bool,
        _force_mesh: bool,
        out: &mut Vec<Finding>,
    ) {
        values::plan(ed, root, settings, native, out);
    }

    fn holds_values(&self, root: &Node, _force_mesh: bool) -> bool {
        documents::holds(root)
    }
}
