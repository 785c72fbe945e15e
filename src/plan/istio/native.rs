//! The native-sidecar strategy: one pod annotation, `sidecar.istio.io/nativeSidecar:
//! "true"`, with which Istio 1.24+ injects the proxy as a restartable init container that
//! Kubernetes 1.29+ stops when the task ends. What meshjob added for the wrapper is taken
//! out first; none of it matters in native mode (see `mesh::istio`).

use super::proxy_config::Desired;
use super::revert::{self, NativeAnnotation};
use crate::config::Settings;
use crate::finding::describe;
use crate::finding::{Finding, Rule};
use crate::mesh::{Mesh, istio};
use crate::pod::Pod;
use crate::yaml::editor::Editor;
use crate::yaml::emit::Out;
use crate::yaml::tree::Node;

/// Plans the native strategy for one pod.
pub(super) fn plan(
    ed: &mut Editor<'_>,
    t: &Pod<'_>,
    mesh: &Mesh,
    settings: &Settings,
    support: &crate::mesh::Support,
    d: &Desired,
    out: &mut Vec<Finding>,
) {
    let oref = &t.object;
    let existing = t
        .annotations()
        .and_then(|a| a.get(mesh.native_sidecar_annotation));
    if let Some(v) = existing.and_then(Node::as_str)
        && v == istio::NATIVE_OFF
    {
        if settings.force {
            let apath = t.annotations_path();
            if let Some(anns) = t.annotations()
                && let Some(e) = anns.entry(mesh.native_sidecar_annotation)
            {
                ed.replace_value(
                    anns,
                    &e.key,
                    &e.value,
                    &apath,
                    mesh.native_sidecar_annotation,
                    &Out::Str(istio::NATIVE_ON.into()),
                );
            }
        } else {
            out.push(
                Finding::warning(
                    Rule::NativeTurnedOff,
                    existing.map_or(t.template.start, |n| n.start),
                    format!(
                        "{}: keeping {}: \"{v}\": the pod turns native sidecars off, so it gets \
                         no fix and its proxy keeps running after the task (use --force to set \
                         \"true\", or the wrapper strategy)",
                        describe(oref),
                        mesh.native_sidecar_annotation
                    ),
                )
                .with_object(Some(oref.clone())),
            );
            return;
        }
    }
    revert::plan(ed, t, mesh, d, NativeAnnotation::Ensure, out);
    crate::plan::own_fixes::variants_turn_native_off(t, mesh, out);
    let port = crate::plan::own_fixes::status_port(mesh, t, support);
    let targets = crate::plan::stops::Targets::of(mesh, port);
    crate::plan::own_fixes::native_notes(t, &targets, settings, out);
}
