//! The directory that several wrapped containers of one pod share, so that the last one to
//! finish stops the proxy: the `meshjob` emptyDir volume and its mounts.

use super::wrapped::{PEERS_MOUNT, PEERS_VOLUME, Wrap};
use crate::finding::{Finding, ObjectRef, Rule};
use crate::locate::{object_error as err, shared_node_finding};
use crate::yaml::editor::Editor;
use crate::yaml::emit::Out;
use crate::yaml::path::{Seg, child};
use crate::yaml::tree::Node;

/// List `k` of `map`, which the peers volume (or mount) goes into: `None` when absent or
/// null; a finding when it is shared or not a list.
fn peers_list<'n>(
    map: &'n Node,
    k: &str,
    oref: &ObjectRef,
) -> Result<Option<&'n [Node]>, Box<Finding>> {
    let Some(n) = map.get(k).filter(|n| !n.is_null()) else {
        return Ok(None);
    };
    if let Some(f) = shared_node_finding(n, oref) {
        return Err(Box::new(f));
    }
    n.items().map(Some).ok_or_else(|| {
        Box::new(err(
            Rule::PeersVolumeTaken,
            oref,
            n.start,
            format!("`{k}` is not a list, so meshjob cannot add its shared volume to it"),
        ))
    })
}

/// Why the pod cannot get the shared peers volume ([`PEERS_VOLUME`] at [`PEERS_MOUNT`] in
/// each wrapped container), if it cannot: the name or the path is taken by something else,
/// or a list meshjob would add to is shared or not a list. meshjob's own volume and mounts,
/// from an earlier run, are not a conflict.
pub(super) fn peers_conflict(spec: &Node, wraps: &[Wrap<'_>], oref: &ObjectRef) -> Option<Finding> {
    let taken = |at: usize, what: String| {
        Some(err(
            Rule::PeersVolumeTaken,
            oref,
            at,
            format!(
                "{what}; meshjob needs the volume name `{PEERS_VOLUME}` and the path \
                 {PEERS_MOUNT} for the directory its wrappers share when a pod has several \
                 containers. Rename or move yours, then run again"
            ),
        ))
    };
    let volumes = match peers_list(spec, "volumes", oref) {
        Ok(v) => v.unwrap_or(&[]),
        Err(f) => return Some(*f),
    };
    for v in volumes {
        if v.str("name") == Some(PEERS_VOLUME)
            && (v.get("emptyDir").is_none() || v.entries().is_some_and(|e| e.len() != 2))
        {
            return taken(
                v.start,
                format!(
                    "the pod already has a volume named `{PEERS_VOLUME}` that is not an emptyDir"
                ),
            );
        }
    }
    let is_peers_path = |p: &str| p.trim_end_matches('/') == PEERS_MOUNT;
    for w in wraps {
        let mounts = match peers_list(w.node, "volumeMounts", oref) {
            Ok(m) => m.unwrap_or(&[]),
            Err(f) => return Some(*f),
        };
        for m in mounts {
            let ours = m.str("name") == Some(PEERS_VOLUME);
            let path = m.str("mountPath").unwrap_or_default();
            let read_only = m.get("readOnly").is_some_and(crate::yaml::value::is_true);
            if ours && (!is_peers_path(path) || read_only || m.get("subPath").is_some()) {
                return taken(
                    m.start,
                    format!(
                        "container {:?} mounts a volume named `{PEERS_VOLUME}` at {path:?}{}",
                        w.name,
                        if read_only { " read-only" } else { "" }
                    ),
                );
            }
            if !ours && is_peers_path(path) {
                return taken(
                    m.start,
                    format!(
                        "container {:?} already mounts another volume at {PEERS_MOUNT}",
                        w.name
                    ),
                );
            }
        }
    }
    None
}

/// Makes sure list `key` of mapping `map` has an item named [`PEERS_VOLUME`].
pub(super) fn ensure_named_item(
    ed: &mut Editor<'_>,
    map: &Node,
    path: &[Seg],
    key: &str,
    item: Out,
) {
    match map.entry(key) {
        None => ed.insert_entry(map, path, None, key, &Out::Seq(vec![item])),
        Some(e) if e.value.is_null() => {
            ed.replace_value(map, &e.key, &e.value, path, key, &Out::Seq(vec![item]));
        }
        Some(e) => {
            let present = e
                .value
                .items()
                .is_some_and(|items| items.iter().any(|i| i.str("name") == Some(PEERS_VOLUME)));
            if !present && e.value.items().is_some() {
                ed.append_items(&e.value, &child(path, key), &[item]);
            }
        }
    }
}
