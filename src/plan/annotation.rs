//! Pod annotations: making sure keys exist, creating the pod metadata and `annotations` as
//! needed, in the surrounding style, and taking `annotations` out again. Where the pod's
//! metadata is comes from the pod view: a template's `metadata`, a mapping that holds it
//! under another key (Argo's `podMetadata`), or the node itself for a kind that keeps pod
//! metadata alone.

use crate::finding::{Finding, Rule};
use crate::locate::{object_error as err, shared_node_finding};
use crate::pod::Pod;
use crate::yaml::editor::Editor;
use crate::yaml::emit::Out;
use crate::yaml::tree::Entry;

/// Makes sure the pod's annotation `key` exists, creating the pod metadata and
/// `annotations` as needed. `value` gets whether the new text stands in a flow context.
/// Returns the existing entry, if there is one; the caller decides what to do with it.
pub(crate) fn ensure<'d>(
    ed: &mut Editor<'_>,
    t: &Pod<'d>,
    key: &str,
    value: impl Fn(bool) -> Out,
    out: &mut Vec<Finding>,
) -> Option<&'d Entry> {
    ensure_all(ed, t, &[key], &|_, flow| value(flow), out)
        .pop()
        .flatten()
}

/// [`ensure`] for several keys at once, so that a pod without metadata gets one new
/// `annotations` holding them all; `value` gets the key's index. Returns, per key, its
/// existing entry; nothing when the annotations are new or cannot be edited (a finding
/// says why).
pub(crate) fn ensure_all<'d>(
    ed: &mut Editor<'_>,
    t: &Pod<'d>,
    keys: &[&str],
    value: &dyn Fn(usize, bool) -> Out,
    out: &mut Vec<Finding>,
) -> Vec<Option<&'d Entry>> {
    let oref = &t.object;
    let anns_of = |flow: bool| {
        Out::Map(
            (keys.iter().enumerate())
                .map(|(i, k)| ((*k).to_string(), value(i, flow)))
                .collect(),
        )
    };
    let meta = match t.metadata_holder() {
        Some((holder, mkey, before)) => {
            let with_annotations = |flow| Out::Map(vec![("annotations".into(), anns_of(flow))]);
            let Some(meta_entry) = holder.entry(mkey) else {
                let before = (!before.is_empty())
                    .then(|| holder.entry(before).map(|e| &e.key))
                    .flatten();
                ed.insert_entry(
                    holder,
                    &t.path,
                    before,
                    mkey,
                    &with_annotations(holder.flow),
                );
                return Vec::new();
            };
            let meta = &meta_entry.value;
            if let Some(f) = shared_node_finding(meta, oref) {
                out.push(f);
                return Vec::new();
            }
            if meta.is_null() {
                let v = with_annotations(holder.flow);
                ed.replace_value(holder, &meta_entry.key, meta, &t.path, mkey, &v);
                return Vec::new();
            }
            meta
        }
        None => t.template,
    };
    if meta.entries().is_none() {
        out.push(err(
            Rule::MetadataNotMapping,
            oref,
            meta.start,
            "pod template metadata is not a mapping; skipped",
        ));
        return Vec::new();
    }
    let mpath = t.metadata_path();
    let Some(ann_entry) = meta.entry("annotations") else {
        ed.insert_entry(meta, &mpath, None, "annotations", &anns_of(meta.flow));
        return Vec::new();
    };
    let anns = &ann_entry.value;
    if let Some(f) = shared_node_finding(anns, oref) {
        out.push(f);
        return Vec::new();
    }
    if anns.is_null() {
        let v = anns_of(meta.flow);
        ed.replace_value(meta, &ann_entry.key, anns, &mpath, "annotations", &v);
        return Vec::new();
    }
    if anns.entries().is_none() {
        out.push(err(
            Rule::MetadataNotMapping,
            oref,
            anns.start,
            "pod template annotations are not a mapping; skipped",
        ));
        return Vec::new();
    }
    let apath = t.annotations_path();
    (keys.iter().enumerate())
        .map(|(i, key)| {
            let existing = anns.entry(key);
            if existing.is_none() {
                ed.insert_entry(anns, &apath, None, key, &value(i, anns.flow));
            }
            existing
        })
        .collect()
}

/// Takes the pod's `annotations` out (their last entry is going), and the pod metadata too
/// when that was all it held and a mapping holds it under a key (the `metadata` of a
/// template, Argo's `podMetadata`); pod metadata that is a mapping of its own kind (a Spark
/// driver) keeps an empty `annotations: {}` when that is its only key, since a block mapping
/// cannot be left empty.
pub(crate) fn remove_all(ed: &mut Editor<'_>, t: &Pod<'_>) {
    let Some(meta) = t.metadata() else { return };
    let only = meta.entries().is_some_and(|es| es.len() == 1);
    let mpath = t.metadata_path();
    match t.metadata_holder() {
        Some((holder, key, _)) => {
            if only || !ed.remove_entry(meta, &mpath, "annotations") {
                ed.remove_entry(holder, &t.path, key);
            }
        }
        None if only => ed.set(meta, &mpath, "annotations", &Out::Map(Vec::new())),
        None => {
            ed.remove_entry(meta, &mpath, "annotations");
        }
    }
}
