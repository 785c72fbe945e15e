//! Pod annotations: making sure a key exists, creating `metadata` and `annotations` as
//! needed, in the surrounding style, and taking `annotations` out again. Where the pod's
//! metadata is comes from the pod view: a template's `metadata`, or the node itself for a
//! kind that keeps pod metadata alone.

use crate::finding::{Finding, Rule};
use crate::locate::{object_error as err, shared_node_finding};
use crate::pod::Pod;
use crate::yaml::editor::Editor;
use crate::yaml::emit::Out;
use crate::yaml::tree::Entry;

/// Makes sure the pod template's annotation `key` exists, creating `metadata` and
/// `annotations` as needed. `value` gets whether the new text stands in a flow context.
/// Returns the existing entry, if there is one; the caller decides what to do with it.
pub(crate) fn ensure<'d>(
    ed: &mut Editor<'_>,
    t: &Pod<'d>,
    key: &str,
    value: impl Fn(bool) -> Out,
    out: &mut Vec<Finding>,
) -> Option<&'d Entry> {
    let tpl = t.template;
    let oref = &t.object;
    let wrap = |inner: Out, with_annotations: bool| {
        let anns = Out::Map(vec![(key.to_string(), inner)]);
        if with_annotations {
            Out::Map(vec![("annotations".into(), anns)])
        } else {
            anns
        }
    };
    let meta = if t.metadata_is_template() {
        tpl
    } else {
        let Some(meta_entry) = tpl.entry("metadata") else {
            let before = tpl.entry("spec").map(|e| &e.key);
            ed.insert_entry(
                tpl,
                &t.path,
                before,
                "metadata",
                &wrap(value(tpl.flow), true),
            );
            return None;
        };
        let meta = &meta_entry.value;
        if let Some(f) = shared_node_finding(meta, oref) {
            out.push(f);
            return None;
        }
        if meta.is_null() {
            let v = wrap(value(tpl.flow), true);
            ed.replace_value(tpl, &meta_entry.key, meta, &t.path, "metadata", &v);
            return None;
        }
        meta
    };
    let mpath = t.metadata_path();
    if meta.entries().is_none() {
        out.push(err(
            Rule::MetadataNotMapping,
            oref,
            meta.start,
            "pod template metadata is not a mapping; skipped",
        ));
        return None;
    }
    let Some(ann_entry) = meta.entry("annotations") else {
        ed.insert_entry(
            meta,
            &mpath,
            None,
            "annotations",
            &wrap(value(meta.flow), false),
        );
        return None;
    };
    let anns = &ann_entry.value;
    let apath = t.annotations_path();
    if let Some(f) = shared_node_finding(anns, oref) {
        out.push(f);
        return None;
    }
    if anns.is_null() {
        let v = wrap(value(meta.flow), false);
        ed.replace_value(meta, &ann_entry.key, anns, &mpath, "annotations", &v);
        return None;
    }
    if anns.entries().is_none() {
        out.push(err(
            Rule::MetadataNotMapping,
            oref,
            anns.start,
            "pod template annotations are not a mapping; skipped",
        ));
        return None;
    }
    let existing = anns.entry(key);
    if existing.is_none() {
        ed.insert_entry(anns, &apath, None, key, &value(anns.flow));
    }
    existing
}

/// Takes the pod's `annotations` out (their last entry is going), and its `metadata` too
/// when that was all a template's metadata held.
pub(crate) fn remove_all(ed: &mut Editor<'_>, t: &Pod<'_>) {
    let Some(meta) = t.metadata() else { return };
    let mpath = t.metadata_path();
    if t.metadata_is_template() {
        ed.remove_entry(meta, &mpath, "annotations");
        return;
    }
    let only = meta.entries().is_some_and(|es| es.len() == 1);
    if only || !ed.remove_entry(meta, &mpath, "annotations") {
        ed.remove_entry(t.template, &t.path, "metadata");
    }
}
