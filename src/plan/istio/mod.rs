//! Istio's planner: what an Istio pod gets under each strategy, and Istio's mesh-wide
//! configuration.

mod annotation;
mod injected;
mod native;
mod proxy_config;
mod revert;
mod values;

use crate::config::Settings;
use crate::finding::Finding;
use crate::mesh::Mesh;
use crate::mesh::istio::{self, documents};
use crate::plan::env;
use crate::plan::planner::{Planner, PodCx};
use crate::yaml::editor::Editor;
use crate::yaml::tree::Node;
use proxy_config::Desired;
use revert::NativeAnnotation;

/// Istio as a [`Planner`].
pub(crate) struct Istio;

/// The one Istio planner.
pub(crate) static PLANNER: Istio = Istio;

impl Planner for Istio {
    fn mesh(&self) -> &'static Mesh {
        &istio::MESH
    }

    fn wrapper(&self, cx: &mut PodCx<'_, '_, '_>, wrapped: bool) {
        let d = Desired::from_settings(cx.settings);
        let native = (cx.mesh.native_sidecar_annotation, istio::NATIVE_ON);
        let replacement = wrapped.then_some(|| annotation::fresh_entry(&d));
        let replaced = crate::plan::revert::drop_native(cx.ed, cx.pod, native, replacement, cx.out);
        if env::proxy(cx.pod, cx.mesh).is_some() {
            // The annotation would have no effect: the proxy's env instead.
            if wrapped {
                injected::plan(cx.ed, cx.pod, cx.mesh, &d, cx.out);
            }
        } else if wrapped && !replaced {
            annotation::plan(cx.ed, cx.pod, &d, cx.out);
        }
    }

    fn native(&self, cx: &mut PodCx<'_, '_, '_>) {
        let d = Desired::from_settings(cx.settings);
        native::plan(cx.ed, cx.pod, cx.mesh, cx.settings, cx.support, &d, cx.out);
    }

    fn remove(&self, cx: &mut PodCx<'_, '_, '_>, keep_native: bool) {
        let d = Desired::from_settings(cx.settings);
        let native = if keep_native {
            NativeAnnotation::Keep
        } else {
            NativeAnnotation::Remove
        };
        revert::plan(cx.ed, cx.pod, cx.mesh, &d, native, cx.out);
    }

    fn values(
        &self,
        ed: &mut Editor<'_>,
        root: &Node,
        settings: &Settings,
        _native: bool,
        force_mesh: bool,
        out: &mut Vec<Finding>,
    ) {
        // Most documents hold no mesh configuration: nothing to set up for them.
        if !documents::holds(root, force_mesh) {
            return;
        }
        let d = Desired::from_settings(settings);
        values::plan(ed, root, &d, force_mesh, out);
    }

    fn holds_values(&self, root: &Node, force_mesh: bool) -> bool {
        documents::holds(root, force_mesh)
    }
}
