//! Pod annotations: making sure a key exists, creating `metadata` and `annotations` as
//! needed, in the surrounding style.

use crate::finding::{Finding, Rule};
use crate::locate::{object_error as err, shared_node_finding};
use crate::pod::Pod;
use crate::yaml::editor::Editor;
use crate::yaml::emit::Out;
use crate::yaml::path::child;
use crate::yaml::tree::Entry;

/// Makes sure the pod template's annotation `key` exists, creating `metadata` and
/// `annotations` as needed. `value` gets whether the new text stands in a flow context.
/// Returns the existing entry, if there is one; the caller decides what to do with it.
pub fn ensure<'d>(
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
    let mpath = child(&t.path, "metadata");
    if let Some(f) = shared_node_finding(meta, oref) {
        out.push(f);
        return None;
    }
    if meta.is_null() {
        let v = wrap(value(tpl.flow), true);
        ed.replace_value(tpl, &meta_entry.key, meta, &t.path, "metadata", &v);
        return None;
    }
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
    let apath = child(&mpath, "annotations");
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
