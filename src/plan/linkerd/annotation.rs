//! Linkerd's per-pod annotation for the wrapper: `config.linkerd.io/proxy-admin-shutdown:
//! enabled`.

use crate::finding::describe;
use crate::finding::{Finding, Rule};
use crate::locate::shared_node_finding;
use crate::mesh::linkerd;
use crate::plan::annotation::ensure;
use crate::pod::Pod;
use crate::yaml::editor::Editor;
use crate::yaml::emit::Out;
use crate::yaml::tree::Kind;

/// Linkerd's shutdown annotation as a new entry.
pub(super) fn fresh_entry() -> (&'static str, Out) {
    (
        linkerd::SHUTDOWN_ANNOTATION,
        Out::Str(linkerd::SHUTDOWN_ENABLED.into()),
    )
}

/// Plans Linkerd's `config.linkerd.io/proxy-admin-shutdown: enabled`, without which the
/// proxy (2.16+) answers the wrapper's POST to `/shutdown` with 404. A `disabled` the user
/// wrote is kept with a warning (replaced with `force`); any other value, which Linkerd
/// ignores, is replaced. A pod without one of its own gets its Namespace's: `enabled` needs
/// nothing more, `disabled` is kept in the same way (with `force` the pod gets `enabled`,
/// which wins over its Namespace's).
pub(super) fn plan(ed: &mut Editor<'_>, t: &Pod<'_>, force: bool, out: &mut Vec<Finding>) {
    let key = linkerd::SHUTDOWN_ANNOTATION;
    let enabled = || Out::Str(linkerd::SHUTDOWN_ENABLED.into());
    if let Some((value, Some(ns))) = t.effective_annotation(key) {
        match value {
            linkerd::SHUTDOWN_ENABLED => return,
            linkerd::SHUTDOWN_DISABLED if !force => {
                out.push(
                    Finding::warning(
                        Rule::KeptUserValue,
                        t.template.start,
                        format!(
                            "{}: keeping `{key}: disabled` of Namespace/{ns}, which Linkerd \
                             copies onto this pod: the proxy then answers the wrapper's POST \
                             to /shutdown with 404 and keeps running, so the Job does not \
                             finish (use --force to set enabled on the pod)",
                            describe(&t.object)
                        ),
                    )
                    .with_object(Some(t.object.clone())),
                );
                return;
            }
            _ => {}
        }
    }
    let Some(e) = ensure(ed, t, key, |_| enabled(), out) else {
        return;
    };
    let Some(anns) = t.annotations() else {
        return;
    };
    let apath = t.annotations_path();
    let oref = &t.object;
    let v = &e.value;
    let name = describe(oref);
    match v.as_str() {
        Some(linkerd::SHUTDOWN_ENABLED) if matches!(v.kind, Kind::Scalar { .. }) => {}
        Some(linkerd::SHUTDOWN_DISABLED) if !force => out.push(
            Finding::warning(
                Rule::KeptUserValue,
                v.start,
                format!(
                    "{name}: keeping `{key}: disabled`: the proxy then answers the wrapper's \
                     POST to /shutdown with 404 and keeps running, so the Job does not finish \
                     (use --force to set enabled)"
                ),
            )
            .with_object(Some(oref.clone())),
        ),
        Some(linkerd::SHUTDOWN_DISABLED) => {
            ed.replace_value(anns, &e.key, v, &apath, key, &enabled());
        }
        _ if shared_node_finding(v, oref).is_some() => {
            out.extend(shared_node_finding(v, oref));
        }
        other => {
            out.push(
                Finding::error(
                    Rule::ShutdownAnnotationValue,
                    v.start,
                    format!(
                        "{name}: `{key}` is {}; Linkerd reads only `enabled` or `disabled` and \
                         ignores anything else (with a warning in the injector's log), which \
                         leaves /shutdown off",
                        other.map_or("not a string".to_string(), |o| format!("{o:?}"))
                    ),
                )
                .with_object(Some(oref.clone()))
                .fixed(),
            );
            ed.replace_value(anns, &e.key, v, &apath, key, &enabled());
        }
    }
}
