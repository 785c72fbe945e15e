//! Takes Istio's per-pod settings out: the `proxy.istio.io/config` keys meshjob writes while
//! they still hold its values, meshjob's env items on an injected proxy, and the
//! native-sidecar annotation as asked. Used by `--strategy none`, by ambient pods, and
//! before the native strategy writes its own fix.

use super::proxy_config::Desired;
use crate::finding::describe;
use crate::finding::{Finding, ObjectRef, Rule};
use crate::locate::shared_node;
use crate::mesh::{Mesh, istio};
use crate::plan::revert::{settle_annotations, unwrap_pod};
use crate::pod::Pod;
use crate::yaml::editor::Editor;
use crate::yaml::embedded::{self, Place};
use crate::yaml::emit::Out;
use crate::yaml::path::{Seg, child};
use crate::yaml::tree::{Entry, Node};
use crate::yaml::value::{ScalarType, resolve};

/// What to do with the pod's native-sidecar annotation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum NativeAnnotation {
    /// Leave it as it is.
    Keep,
    /// Take it out when it holds meshjob's value.
    Remove,
    /// Make sure it is there with meshjob's value (the native strategy). A value the user
    /// wrote is the native planner's business.
    Ensure,
}

/// Takes meshjob's additions out of one pod template, and sees to the native annotation.
pub(super) fn plan(
    ed: &mut Editor<'_>,
    t: &Pod<'_>,
    mesh: &Mesh,
    d: &Desired,
    native: NativeAnnotation,
    out: &mut Vec<Finding>,
) {
    unwrap_pod(ed, t, out);
    annotations(ed, t, mesh, d, native, out);
    super::injected::revert(ed, t, mesh, d, out);
}

/// The pod's annotations: meshjob's proxy config keys out; the native annotation as asked.
fn annotations(
    ed: &mut Editor<'_>,
    t: &Pod<'_>,
    mesh: &Mesh,
    d: &Desired,
    native: NativeAnnotation,
    out: &mut Vec<Finding>,
) {
    let oref = &t.object;
    let apath = t.annotations_path();
    let meta = t.metadata().filter(|m| m.entries().is_some());
    let anns = meta
        .and_then(|m| m.get("annotations"))
        .filter(|a| a.entries().is_some() && shared_node(a).is_none());
    let native_value = anns
        .and_then(|a| a.get(mesh.native_sidecar_annotation))
        .and_then(Node::as_str);
    let wants_native = native == NativeAnnotation::Ensure && native_value.is_none();
    let mut to_remove: Vec<&str> = Vec::new();
    let mut replace_with_native = None;
    if let Some(anns) = anns {
        if let Some(pc) = anns.entry(mesh.pod_config_annotation)
            && shared_node(&pc.value).is_none()
        {
            match proxy_config(ed, pc, &apath, mesh, d, oref, out) {
                Emptied::Whole if wants_native => replace_with_native = Some(pc),
                Emptied::Whole => to_remove.push(mesh.pod_config_annotation),
                Emptied::Partly | Emptied::Not => {}
            }
        }
        if native == NativeAnnotation::Remove && native_value == Some(istio::NATIVE_ON) {
            to_remove.push(mesh.native_sidecar_annotation);
            out.push(
                Finding::info(
                    Rule::SettingRemoved,
                    anns.start,
                    format!(
                        "{}: {}: \"{}\" taken out",
                        describe(oref),
                        mesh.native_sidecar_annotation,
                        istio::NATIVE_ON
                    ),
                )
                .with_object(Some(oref.clone())),
            );
        }
        to_remove.extend(crate::plan::kill_command::take_out(t, mesh, anns, out));
    }
    if let (Some(pc), Some(anns)) = (replace_with_native, anns) {
        let from = pc.key.as_str().unwrap_or(mesh.pod_config_annotation);
        ed.rename_key(&apath, &pc.key, from, mesh.native_sidecar_annotation);
        ed.replace_value(
            anns,
            &pc.key,
            &pc.value,
            &apath,
            mesh.native_sidecar_annotation,
            &Out::Str(istio::NATIVE_ON.into()),
        );
    }
    let ensure = wants_native && replace_with_native.is_none();
    let add = ensure.then(|| (mesh.native_sidecar_annotation, native_out()));
    match (meta, anns) {
        // The proxy config annotation became the native one: entries are left.
        (Some(_), Some(anns)) if replace_with_native.is_some() => {
            ed.remove_entries(anns, &apath, &to_remove);
        }
        (Some(_), Some(anns)) => settle_annotations(ed, t, anns, &to_remove, add, out),
        _ => {
            if let Some((key, value)) = add {
                crate::plan::annotation::ensure(ed, t, key, |_| value.clone(), out);
            }
        }
    }
}

fn native_out() -> Out {
    Out::Str(istio::NATIVE_ON.into())
}

/// How much of the proxy config annotation meshjob's keys were.
enum Emptied {
    Not,
    Partly,
    Whole,
}

/// Takes meshjob's keys out of the proxy config annotation (edited inside the string).
fn proxy_config(
    ed: &mut Editor<'_>,
    pc: &Entry,
    apath: &[Seg],
    mesh: &Mesh,
    d: &Desired,
    oref: &ObjectRef,
    out: &mut Vec<Finding>,
) -> Emptied {
    let Some(text) = pc.value.as_str() else {
        return Emptied::Not;
    };
    let Ok(docs) = crate::yaml::tree::parse_stream(text) else {
        return Emptied::Not;
    };
    let Some(root) = docs.first().map(|d| &d.root) else {
        return Emptied::Not;
    };
    let Some(entries) = root.entries() else {
        return Emptied::Not;
    };
    let ours = ours(root, d);
    let mut kept = Vec::new();
    for (k, v) in &ours.kept {
        kept.push(format!("`{k}: {v}`"));
    }
    if !kept.is_empty() {
        out.push(
            Finding::info(
                Rule::AddedValueKept,
                pc.value.start,
                format!(
                    "{}: {}: kept {}: not the value meshjob writes with these settings (run with \
                     the settings the fix was made with, or remove it by hand)",
                    describe(oref),
                    mesh.pod_config_annotation,
                    kept.join(", ")
                ),
            )
            .with_object(Some(oref.clone())),
        );
    }
    if ours.keys.is_empty() && !ours.exit_on_zero {
        return Emptied::Not;
    }
    let metadata_left = root
        .get(istio::PROXY_METADATA)
        .and_then(Node::entries)
        .map_or(0, <[Entry]>::len)
        - usize::from(ours.exit_on_zero);
    let drop_metadata = ours.exit_on_zero && metadata_left == 0;
    let top_left = entries.len() - ours.keys.len() - usize::from(drop_metadata);
    out.push(
        Finding::info(
            Rule::SettingRemoved,
            pc.value.start,
            format!(
                "{}: {}: meshjob's settings taken out",
                describe(oref),
                mesh.pod_config_annotation
            ),
        )
        .with_object(Some(oref.clone())),
    );
    if top_left == 0 {
        return Emptied::Whole;
    }
    let place = Place {
        key_col: ed.col(pc.key.props_start),
        block_allowed: true,
    };
    let ppath = child(apath, mesh.pod_config_annotation);
    let res = embedded::edit_in_string(ed, &pc.value, place, &ppath, |inner, root| {
        let mut top: Vec<&str> = ours.keys.clone();
        if drop_metadata {
            top.push(istio::PROXY_METADATA);
        }
        inner.remove_entries(root, &[], &top);
        if !drop_metadata
            && ours.exit_on_zero
            && let Some(md) = root.get(istio::PROXY_METADATA)
        {
            inner.remove_entries(
                md,
                &[Seg::Key(istio::PROXY_METADATA.into())],
                &[istio::EXIT_ON_ZERO_ACTIVE_CONNECTIONS],
            );
        }
    });
    if res.is_err() {
        return Emptied::Not;
    }
    Emptied::Partly
}

/// meshjob's keys in a ProxyConfig mapping, and those that no longer hold its value.
struct Ours {
    keys: Vec<&'static str>,
    exit_on_zero: bool,
    kept: Vec<(&'static str, String)>,
}

fn ours(root: &Node, d: &Desired) -> Ours {
    let mut o = Ours {
        keys: Vec::new(),
        exit_on_zero: false,
        kept: Vec::new(),
    };
    let typed = |n: &Node| match &n.kind {
        crate::yaml::tree::Kind::Scalar { value, style } => Some((
            resolve(value, *style, n.tag.as_deref(), n.empty),
            value.to_string(),
        )),
        _ => None,
    };
    if let Some(v) = root.get(istio::HOLD_APPLICATION).and_then(typed) {
        match v {
            (ScalarType::Bool, s) if s == "true" => o.keys.push(istio::HOLD_APPLICATION),
            (_, s) => o.kept.push((istio::HOLD_APPLICATION, s)),
        }
    }
    if let Some((ty, s)) = root.get(istio::TERMINATION_DRAIN_DURATION).and_then(typed) {
        if ty == ScalarType::Str && d.drain.same_as(&s) {
            o.keys.push(istio::TERMINATION_DRAIN_DURATION);
        } else {
            o.kept.push((istio::TERMINATION_DRAIN_DURATION, s));
        }
    }
    if let Some((ty, s)) = root
        .path(&[
            istio::PROXY_METADATA,
            istio::EXIT_ON_ZERO_ACTIVE_CONNECTIONS,
        ])
        .and_then(typed)
    {
        if ty == ScalarType::Str && s == "true" {
            o.exit_on_zero = true;
        } else {
            o.kept.push((istio::EXIT_ON_ZERO_ACTIVE_CONNECTIONS, s));
        }
    }
    o
}
