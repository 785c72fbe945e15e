//! Takes out what meshjob added to a pod, the same for every mesh: its wrappers (the
//! original `command` and `args` restored from the marker line), the shared `meshjob` volume
//! and its mounts, and a native-sidecar annotation meshjob wrote. Each mesh's planner takes
//! out its own settings (`mesh::*::plan`).

use super::script;
use super::wrapped::{PEERS_MOUNT, PEERS_VOLUME, item_out, wrapper_script};
use crate::finding::describe;
use crate::finding::{Finding, Rule};
use crate::locate::shared_node;
use crate::pod::Pod;
use crate::yaml::editor::Editor;
use crate::yaml::emit::{self, Out};
use crate::yaml::path::{Seg, child};
use crate::yaml::tree::{Entry, Node};
use crate::yaml::value::Value;

/// Restores the pod's containers that meshjob wrapped, and the shared volume; the same for
/// every mesh.
pub(crate) fn unwrap_pod(ed: &mut Editor<'_>, t: &Pod<'_>, out: &mut Vec<Finding>) {
    if t.keep_wrappers {
        return;
    }
    if let Some(spec) = t.spec().filter(|s| shared_node(s).is_none()) {
        unwrap_containers(ed, spec, t, out);
    }
}

/// Restores every container meshjob wrapped; then, when no wrapper is left, takes out the
/// shared volume and its mounts.
fn unwrap_containers(ed: &mut Editor<'_>, spec: &Node, t: &Pod<'_>, out: &mut Vec<Finding>) {
    let oref = &t.object;
    let mut left = 0;
    let mut removed = Vec::new();
    for container in t.containers() {
        let c = container.node;
        let Some(cmd) = c.entry("command") else {
            continue;
        };
        let Some(text) = wrapper_script(&cmd.value) else {
            continue;
        };
        let name = container.name();
        let path = t.container_path(&container);
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
        removed.push(container);
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
    for c in &removed {
        remove_named(ed, c.node, &t.container_path(c), "volumeMounts", |m| {
            m.str("mountPath") == Some(PEERS_MOUNT)
        });
    }
    remove_named(ed, spec, &t.spec_path(), "volumes", |v| {
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
        .position(|m| m.str("name") == Some(PEERS_VOLUME) && also(m))
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
        _ => emit::flow(&Out::Seq(items), &ed.style()),
    };
    Out::Raw {
        text,
        value,
        flow_safe: true,
    }
}

/// Takes out the native-sidecar annotation `key` when it holds the value meshjob writes
/// (`on`; the wrapper strategy). When it is the pod's only annotation and `replacement` is given,
/// the entry it makes takes its place (true is returned); without one, `annotations` (and a
/// `metadata` left empty) go too.
pub(crate) fn drop_native<'k>(
    ed: &mut Editor<'_>,
    t: &Pod<'_>,
    (key, on): (&str, &str),
    replacement: Option<impl FnOnce() -> (&'k str, Out)>,
    out: &mut Vec<Finding>,
) -> bool {
    let native_key = key;
    if t.metadata().is_none_or(|m| shared_node(m).is_some()) {
        return false;
    }
    let Some(anns) = t.annotations().filter(|a| shared_node(a).is_none()) else {
        return false;
    };
    let Some(e) = anns.entry(native_key) else {
        return false;
    };
    if e.value.as_str() != Some(on) {
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
                on
            ),
        )
        .with_object(Some(t.object.clone())),
    );
    let only = anns.entries().is_some_and(|es| es.len() == 1);
    let apath = t.annotations_path();
    match (only, replacement) {
        (true, Some(replacement)) => {
            let (new_key, value) = replacement();
            ed.rename_key(&apath, &e.key, native_key, new_key);
            ed.replace_value(anns, &e.key, &e.value, &apath, new_key, &value);
            true
        }
        (true, None) => {
            super::annotation::remove_all(ed, t);
            false
        }
        (false, _) => {
            ed.remove_entry(anns, &apath, native_key);
            false
        }
    }
}

/// Takes the entries `remove` out of the pod's annotations `anns` (of pod `t`)
/// and adds `add` when given. A block mapping cannot be emptied and then filled, so when
/// every entry goes and one is added, the first one taken out becomes it; when every entry
/// goes and none is added, `annotations` goes (`annotation::remove_all`).
pub(crate) fn settle_annotations(
    ed: &mut Editor<'_>,
    t: &Pod<'_>,
    anns: &Node,
    remove: &[&str],
    add: Option<(&str, Out)>,
    out: &mut Vec<Finding>,
) {
    if remove.is_empty() && add.is_none() {
        return;
    }
    let apath = t.annotations_path();
    let left = anns.entries().map_or(0, <[Entry]>::len) - remove.len();
    let first = remove.first().and_then(|k| anns.entry(k).map(|e| (*k, e)));
    match (add, first) {
        (Some((key, value)), Some((from, e))) if left == 0 => {
            ed.rename_key(&apath, &e.key, from, key);
            ed.replace_value(anns, &e.key, &e.value, &apath, key, &value);
            ed.remove_entries(anns, &apath, &remove[1..]);
        }
        (Some((key, value)), _) => {
            ed.remove_entries(anns, &apath, remove);
            super::annotation::ensure(ed, t, key, |_| value.clone(), out);
        }
        (None, _) if left == 0 => super::annotation::remove_all(ed, t),
        (None, _) => {
            ed.remove_entries(anns, &apath, remove);
        }
    }
}
