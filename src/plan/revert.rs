//! Takes out what meshjob added to a pod: its wrappers (the original `command` and `args`
//! restored from the marker line), the shared `meshjob` volume and its mounts, the
//! `proxy.istio.io/config` keys it writes while they still hold its values, and the
//! native-sidecar annotation. Used by `--strategy none`, by ambient pods, and before the
//! native strategy writes its own fix.

use super::container::{PEERS_MOUNT, PEERS_VOLUME, item_out, wrapper_script};
use super::editor::Editor;
use super::embedded::{self, Place};
use super::proxy_config::Desired;
use super::script;
use crate::finding::{Finding, ObjectRef, Rule};
use crate::locate::{PodTarget, describe, shared_node, str_of};
use crate::mesh::{Mesh, istio};
use crate::yaml::emit::{self, Out};
use crate::yaml::path::{Seg, child};
use crate::yaml::tree::{Entry, Node};
use crate::yaml::value::{ScalarType, Value, resolve};

/// What to do with the pod's native-sidecar annotation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NativeAnnotation {
    /// Leave it as it is.
    Keep,
    /// Take it out when it holds meshjob's value.
    Remove,
    /// Make sure it is there with meshjob's value (the native strategy). A value the user
    /// wrote is the native planner's business.
    Ensure,
}

/// Takes meshjob's additions out of one pod template, and sees to the native annotation.
pub fn plan(
    ed: &mut Editor<'_>,
    t: &PodTarget<'_>,
    mesh: &Mesh,
    d: &Desired,
    native: NativeAnnotation,
    out: &mut Vec<Finding>,
) {
    unwrap_pod(ed, t, out);
    annotations(ed, t, mesh, d, native, out);
    super::injected::revert(ed, t, mesh, d, out);
}

/// Restores the pod's containers that meshjob wrapped, and the shared volume; the same for
/// every mesh.
pub fn unwrap_pod(ed: &mut Editor<'_>, t: &PodTarget<'_>, out: &mut Vec<Finding>) {
    let spath = child(&t.path, "spec");
    if let Some(spec) = t.template.get("spec").filter(|s| shared_node(s).is_none()) {
        unwrap_containers(ed, spec, &spath, &t.object, out);
    }
}

/// Restores every container meshjob wrapped; then, when no wrapper is left, takes out the
/// shared volume and its mounts.
fn unwrap_containers(
    ed: &mut Editor<'_>,
    spec: &Node,
    spath: &[Seg],
    oref: &ObjectRef,
    out: &mut Vec<Finding>,
) {
    let Some(items) = spec.get("containers").and_then(Node::items) else {
        return;
    };
    let cpath = child(spath, "containers");
    let mut left = 0;
    let mut removed = Vec::new();
    for (i, c) in items.iter().enumerate() {
        let Some(cmd) = c.entry("command") else {
            continue;
        };
        let Some(text) = wrapper_script(&cmd.value) else {
            continue;
        };
        let name = str_of(c, "name").unwrap_or_default();
        let mut path = cpath.clone();
        path.push(Seg::Index(i));
        if !script::is_genuine(text) || shared_node(c).is_some() || !unwrap(ed, c, &path, cmd) {
            left += 1;
            out.push(
                Finding::warning(
                    Rule::EditedWrapper,
                    cmd.value.start,
                    format!(
                        "{}: container {name:?} has a wrapper that meshjob cannot take out as \
                         it stands (edited by hand?); left alone. Restore its original \
                         `command`/`args` by hand",
                        describe(oref)
                    ),
                )
                .with_object(Some(oref.clone())),
            );
            continue;
        }
        removed.push(i);
        out.push(
            Finding::info(
                Rule::WrapperRemoved,
                cmd.value.start,
                format!(
                    "{}: container {name:?}: meshjob's wrapper taken out, its `command` and \
                     `args` restored",
                    describe(oref)
                ),
            )
            .with_object(Some(oref.clone())),
        );
    }
    if removed.is_empty() || left > 0 {
        return;
    }
    for &i in &removed {
        let mut path = cpath.clone();
        path.push(Seg::Index(i));
        remove_named(ed, &items[i], &path, "volumeMounts", |m| {
            str_of(m, "mountPath") == Some(PEERS_MOUNT)
        });
    }
    remove_named(ed, spec, spath, "volumes", |v| {
        v.get("emptyDir")
            .is_some_and(|e| e.entries().is_some_and(<[Entry]>::is_empty))
    });
}

/// Removes the item named [`PEERS_VOLUME`] (that `also` accepts) from list `key` of `map`,
/// or the whole key when it is the only item.
fn remove_named(
    ed: &mut Editor<'_>,
    map: &Node,
    path: &[Seg],
    key: &str,
    also: impl Fn(&Node) -> bool,
) {
    let Some(list) = map.get(key) else { return };
    let Some(items) = list.items() else { return };
    let Some(i) = items
        .iter()
        .position(|m| str_of(m, "name") == Some(PEERS_VOLUME) && also(m))
    else {
        return;
    };
    if items.len() == 1 {
        ed.remove_entry(map, path, key);
    } else {
        ed.remove_items(list, &child(path, key), i..i + 1);
    }
}

/// The string values of a sequence of scalars.
fn strings(seq: &Node) -> Option<Vec<String>> {
    seq.items()?
        .iter()
        .map(|n| n.as_str().map(str::to_string))
        .collect()
}

/// Restores one wrapped container from its marker line. False when the layout does not
/// allow it (nothing is changed then).
pub(crate) fn unwrap(ed: &mut Editor<'_>, c: &Node, path: &[Seg], cmd: &Entry) -> bool {
    let Some(command) = strings(&cmd.value) else {
        return false;
    };
    let args_entry = c.entry("args");
    let args = args_entry
        .and_then(|a| strings(&a.value))
        .unwrap_or_default();
    let Some(original) = script::original_argv(&command, &args) else {
        return false;
    };
    let Some(marker) = command.get(2).and_then(|s| script::marker(s)) else {
        return false;
    };
    let n = match marker.origin {
        script::ArgvOrigin::WholeArgv => args.len(),
        script::ArgvOrigin::Command(n) | script::ArgvOrigin::Entrypoint(n) => n,
    };
    let from_entrypoint = matches!(marker.origin, script::ArgvOrigin::Entrypoint(_));
    let rest = original.args.as_ref().map_or(0, Vec::len);
    let Some(a) = args_entry else {
        // Nothing was moved: the wrapper alone goes.
        return n == 0 && ed.remove_entry(c, path, "command");
    };
    match (from_entrypoint, rest) {
        (false, 0) => {
            // The whole of `args` was the command: it becomes `command` again, byte for byte.
            ed.remove_entry(c, path, "command") && {
                ed.rename_key(path, &a.key, "args", "command");
                true
            }
        }
        (false, _) => {
            let Some(words) = a.value.items().and_then(|i| i.get(..n)) else {
                return false;
            };
            // Versions 1 and 2 did not say how `command` was written: the style of `args`.
            let style = marker.style.unwrap_or(if a.value.flow {
                script::CommandStyle::Flow(None)
            } else {
                script::CommandStyle::Block
            });
            let out = restored_command(ed, words, a.value.flow, &style);
            ed.replace_value(c, &cmd.key, &cmd.value, path, "command", &out);
            ed.remove_items(&a.value, &child(path, "args"), 0..n)
        }
        (true, 0) => ed.remove_entry(c, path, "command") && ed.remove_entry(c, path, "args"),
        (true, _) => {
            ed.remove_entry(c, path, "command")
                && ed.remove_items(&a.value, &child(path, "args"), 0..n)
        }
    }
}

/// The `command` value for words taken back from `args`, written as the marker says it was:
/// a block list, or a flow list in its own layout (its words' text is theirs in `args`), or
/// `[a, b]` when the layout was not recorded or a word's text did not survive.
fn restored_command(
    ed: &Editor<'_>,
    words: &[Node],
    args_flow: bool,
    style: &script::CommandStyle,
) -> Out {
    let items: Vec<Out> = words
        .iter()
        .map(|w| item_out(ed.src, w, args_flow))
        .collect();
    if *style == script::CommandStyle::Block {
        return Out::Seq(items);
    }
    let value = Value::Seq(items.iter().map(Out::value).collect());
    let texts: Option<Vec<&str>> = items
        .iter()
        .map(|i| match i {
            Out::Raw {
                text,
                flow_safe: true,
                ..
            } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    let text = match (style, texts) {
        (script::CommandStyle::Flow(Some(layout)), Some(texts)) => layout.join(&texts),
        _ => emit::flow(&Out::Seq(items), &ed.style),
    };
    Out::Raw {
        text,
        value,
        flow_safe: true,
    }
}

/// The pod's annotations: meshjob's proxy config keys out; the native annotation as asked.
fn annotations(
    ed: &mut Editor<'_>,
    t: &PodTarget<'_>,
    mesh: &Mesh,
    d: &Desired,
    native: NativeAnnotation,
    out: &mut Vec<Finding>,
) {
    let oref = &t.object;
    let tpl = t.template;
    let mpath = child(&t.path, "metadata");
    let apath = child(&mpath, "annotations");
    let meta = tpl.get("metadata").filter(|m| m.entries().is_some());
    let anns = meta
        .and_then(|m| m.get("annotations"))
        .filter(|a| a.entries().is_some() && shared_node(a).is_none());
    let native_value = anns
        .and_then(|a| a.get(mesh.native_sidecar_annotation))
        .and_then(Node::as_str);
    let mut to_remove: Vec<&str> = Vec::new();
    let mut replace_with_native = None;
    if let Some(anns) = anns {
        if let Some(pc) = anns.entry(mesh.pod_config_annotation)
            && shared_node(&pc.value).is_none()
        {
            match proxy_config(ed, pc, &apath, mesh, d, oref, out) {
                Emptied::Whole => {
                    let native_wanted =
                        native == NativeAnnotation::Ensure && native_value.is_none();
                    if native_wanted {
                        replace_with_native = Some(pc);
                    } else {
                        to_remove.push(mesh.pod_config_annotation);
                    }
                }
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
    }
    if let Some(pc) = replace_with_native {
        ed.rename_key(
            &apath,
            &pc.key,
            mesh.pod_config_annotation,
            mesh.native_sidecar_annotation,
        );
        if let Some(anns) = anns {
            ed.replace_value(
                anns,
                &pc.key,
                &pc.value,
                &apath,
                mesh.native_sidecar_annotation,
                &Out::Str(istio::NATIVE_ON.into()),
            );
        }
    }
    let (Some(meta), Some(anns)) = (meta, anns) else {
        if native == NativeAnnotation::Ensure && native_value.is_none() {
            super::annotation::ensure(ed, t, mesh.native_sidecar_annotation, |_| native_out(), out);
        }
        return;
    };
    let left = anns.entries().map_or(0, <[Entry]>::len) - to_remove.len();
    if left == 0 && replace_with_native.is_none() {
        remove_empty_annotations(ed, tpl, &t.path, meta, &mpath);
    } else {
        ed.remove_entries(anns, &apath, &to_remove);
    }
    if native == NativeAnnotation::Ensure && native_value.is_none() && replace_with_native.is_none()
    {
        super::annotation::ensure(ed, t, mesh.native_sidecar_annotation, |_| native_out(), out);
    }
}

/// Takes out the native-sidecar annotation `key` when it holds the value meshjob writes
/// (the wrapper strategy). When it is the pod's only annotation and `replacement` is given,
/// the replacement takes its place (true is returned); without one, `annotations` (and a
/// `metadata` left empty) go too.
pub fn drop_native(
    ed: &mut Editor<'_>,
    t: &PodTarget<'_>,
    key: &str,
    replacement: Option<(&str, Out)>,
    out: &mut Vec<Finding>,
) -> bool {
    let native_key = key;
    let mpath = child(&t.path, "metadata");
    let apath = child(&mpath, "annotations");
    let Some(meta) = t
        .template
        .get("metadata")
        .filter(|m| shared_node(m).is_none())
    else {
        return false;
    };
    let Some(anns) = meta.get("annotations").filter(|a| shared_node(a).is_none()) else {
        return false;
    };
    let Some(e) = anns.entry(native_key) else {
        return false;
    };
    if e.value.as_str() != Some(istio::NATIVE_ON) {
        return false;
    }
    out.push(
        Finding::info(
            Rule::SettingRemoved,
            e.key.start,
            format!(
                "{}: {}: \"{}\" taken out",
                describe(&t.object),
                native_key,
                istio::NATIVE_ON
            ),
        )
        .with_object(Some(t.object.clone())),
    );
    let only = anns.entries().is_some_and(|es| es.len() == 1);
    match (only, replacement) {
        (true, Some((new_key, value))) => {
            ed.rename_key(&apath, &e.key, native_key, new_key);
            ed.replace_value(anns, &e.key, &e.value, &apath, new_key, &value);
            true
        }
        (true, None) => {
            remove_empty_annotations(ed, t.template, &t.path, meta, &mpath);
            false
        }
        (false, _) => {
            ed.remove_entry(anns, &apath, native_key);
            false
        }
    }
}

fn native_out() -> Out {
    Out::Str(istio::NATIVE_ON.into())
}

/// Takes out `annotations` (and `metadata`, when that was all it held).
pub(super) fn remove_empty_annotations(
    ed: &mut Editor<'_>,
    tpl: &Node,
    tpath: &[Seg],
    meta: &Node,
    mpath: &[Seg],
) {
    let only = meta.entries().is_some_and(|es| es.len() == 1);
    if only || !ed.remove_entry(meta, mpath, "annotations") {
        ed.remove_entry(tpl, tpath, "metadata");
    }
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
            value.clone(),
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
        let want = istio::parse_go_duration(&d.drain).ok();
        if ty == ScalarType::Str && istio::parse_go_duration(&s).ok() == want {
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
