//! Linkerd pods under the native strategy, and when meshjob's changes are taken out (`none`,
//! a proxy that is native already). The wrapper comes out as for Istio (`revert::unwrap_pod`);
//! meshjob's `config.linkerd.io/proxy-admin-shutdown: enabled` comes out; the native
//! strategy writes the native-sidecar annotation of the target Linkerd version, pinned even
//! where native sidecars are the default (2.20), so that the pod does not depend on the
//! chart's setting.

use crate::finding::describe;
use crate::finding::{Finding, Rule};
use crate::locate::shared_node;
use crate::mesh::{Mesh, linkerd};
use crate::plan::revert;
use crate::pod::Pod;
use crate::yaml::editor::Editor;
use crate::yaml::emit::Out;
use crate::yaml::tree::Node;

/// What to do with the pod's native-sidecar annotations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Native {
    /// Leave them (the pod is native because of one).
    Keep,
    /// Take out those that hold meshjob's value.
    Remove,
    /// Make sure this one holds meshjob's value.
    Ensure(&'static str),
}

/// Plans one Linkerd pod.
pub(super) fn plan(
    ed: &mut Editor<'_>,
    t: &Pod<'_>,
    mesh: &Mesh,
    native: Native,
    force: bool,
    out: &mut Vec<Finding>,
) {
    let oref = &t.object;
    let name = describe(oref);
    let apath = t.annotations_path();
    let meta = t.metadata().filter(|m| m.entries().is_some());
    let anns = meta
        .and_then(|m| m.get("annotations"))
        .filter(|a| a.entries().is_some() && shared_node(a).is_none());
    if let Native::Ensure(key) = native
        && let Some(a) = anns
        && let Some(e) = a.entry(key)
        && let Some(v) = e.value.as_str()
        && !(mesh.native.is_on)(v, None)
    {
        if !force {
            out.push(
                Finding::warning(
                    Rule::NativeTurnedOff,
                    e.value.start,
                    format!(
                        "{name}: keeping {key}: \"{v}\": the pod turns native sidecars off, so it \
                         gets no fix and its proxy keeps running after the task (use --force to \
                         set \"true\", or the wrapper strategy)"
                    ),
                )
                .with_object(Some(oref.clone())),
            );
            return;
        }
        ed.replace_value(a, &e.key, &e.value, &apath, key, &on());
    }
    revert::unwrap_pod(ed, t, out);
    super::injected::revert(ed, t, mesh, out);
    let mut to_remove: Vec<&str> = Vec::new();
    if let Some(a) = anns {
        let shutdown = linkerd::SHUTDOWN_ANNOTATION;
        if a.get(shutdown).and_then(Node::as_str) == Some(linkerd::SHUTDOWN_ENABLED) {
            to_remove.push(shutdown);
            out.push(taken_out(t, a, shutdown, linkerd::SHUTDOWN_ENABLED));
        }
        if native == Native::Remove {
            for key in mesh.native_sidecar_annotations {
                if a.get(key).and_then(Node::as_str) == Some(linkerd::NATIVE_ON) {
                    to_remove.push(key);
                    out.push(taken_out(t, a, key, linkerd::NATIVE_ON));
                }
            }
        }
        to_remove.extend(crate::plan::kill_command::take_out(t, mesh, a, out));
    }
    let ensure = match native {
        Native::Ensure(key) if anns.and_then(|a| a.get(key)).is_none() => Some(key),
        _ => None,
    };
    let add = ensure.map(|key| (key, on()));
    match (meta, anns) {
        (Some(_), Some(a)) => revert::settle_annotations(ed, t, a, &to_remove, add, out),
        _ => {
            if let Some((key, value)) = add {
                crate::plan::annotation::ensure(ed, t, key, |_| value.clone(), out);
            }
        }
    }
    if matches!(native, Native::Ensure(_)) {
        crate::plan::own_fixes::variants_turn_native_off(t, mesh, out);
    }
}

fn on() -> Out {
    Out::Str(linkerd::NATIVE_ON.into())
}

fn taken_out(t: &Pod<'_>, anns: &Node, key: &str, value: &str) -> Finding {
    Finding::info(
        Rule::SettingRemoved,
        anns.start,
        format!("{}: {key}: \"{value}\" taken out", describe(&t.object)),
    )
    .with_object(Some(t.object.clone()))
}
