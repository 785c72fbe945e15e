//! The pod template's annotation for its mesh: Istio's `proxy.istio.io/config` (created,
//! or merged into) or Linkerd's `config.linkerd.io/proxy-admin-shutdown: enabled`.

use super::proxy_config::{self, Desired};
use crate::finding::{Finding, Rule};
use crate::locate::{describe, object_error as err, shared_node_finding};
use crate::mesh::{istio, linkerd};
use crate::pod::Pod;
use crate::yaml::editor::Editor;
use crate::yaml::embedded::{self, EmbeddedError, Place};
use crate::yaml::emit::Out;
use crate::yaml::path::child;
use crate::yaml::tree::{Entry, Kind, parse_stream};
use crate::yaml::value::Value;

/// The annotation value for a template that has none, with what it means.
fn fresh(d: &Desired, json: bool) -> Out {
    let text = d.fresh_text(json);
    let value = fresh_value(&text);
    Out::YamlText { text, value }
}

/// The annotation meshjob adds for the wrapper, as a key and a block value: to put in the
/// place of another annotation.
pub fn fresh_entry(d: &Desired) -> (&'static str, Out) {
    (istio::PROXY_CONFIG_ANNOTATION, fresh(d, false))
}

/// The value of a fresh annotation text. A run renders the same few texts for every pod, so
/// the last ones read are kept (per thread) rather than parsed again.
fn fresh_value(text: &str) -> Value {
    thread_local! {
        static SEEN: std::cell::RefCell<Vec<(String, Value)>> = const {
            std::cell::RefCell::new(Vec::new())
        };
    }
    SEEN.with_borrow_mut(|seen| {
        if let Some((_, v)) = seen.iter().find(|(t, _)| t == text) {
            return v.clone();
        }
        let value = parse_stream(text)
            .ok()
            .and_then(|docs| docs.first().map(|doc| Value::from_node(&doc.root)))
            .unwrap_or(Value::Map(Vec::new()));
        if seen.len() == 4 {
            seen.remove(0);
        }
        seen.push((text.to_string(), value.clone()));
        value
    })
}

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

/// Reports the per-pod annotations of the other meshes on a pod of `mesh`: left from an
/// earlier run that took the pod for another mesh, they do nothing there.
pub fn foreign(t: &Pod<'_>, mesh: &crate::mesh::Mesh, out: &mut Vec<Finding>) {
    let Some(anns) = t.template.path(&["metadata", "annotations"]) else {
        return;
    };
    for other in crate::mesh::ALL.iter().filter(|m| m.id != mesh.id) {
        let key = other.pod_config_annotation;
        if let Some(e) = anns.entry(key) {
            out.push(
                Finding::warning(
                    Rule::ForeignAnnotation,
                    e.key.start,
                    format!(
                        "{}: `{key}` is {}'s, but {} injects this pod, which ignores it; \
                         remove it",
                        describe(&t.object),
                        other.name,
                        mesh.name
                    ),
                )
                .with_object(Some(t.object.clone())),
            );
        }
    }
}

/// Linkerd's shutdown annotation as a new entry.
pub fn linkerd_fresh_entry() -> (&'static str, Out) {
    (
        linkerd::SHUTDOWN_ANNOTATION,
        Out::Str(linkerd::SHUTDOWN_ENABLED.into()),
    )
}

/// Plans Linkerd's `config.linkerd.io/proxy-admin-shutdown: enabled`, without which the
/// proxy (2.16+) answers the wrapper's POST to `/shutdown` with 404. A `disabled` the user
/// wrote is kept with a warning (replaced with `force`); any other value, which Linkerd
/// ignores, is replaced.
pub fn plan_linkerd(ed: &mut Editor<'_>, t: &Pod<'_>, force: bool, out: &mut Vec<Finding>) {
    let key = linkerd::SHUTDOWN_ANNOTATION;
    let enabled = || Out::Str(linkerd::SHUTDOWN_ENABLED.into());
    let Some(e) = ensure(ed, t, key, |_| enabled(), out) else {
        return;
    };
    let Some(anns) = t.template.path(&["metadata", "annotations"]) else {
        return;
    };
    let apath = child(&child(&t.path, "metadata"), "annotations");
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

/// Plans the annotation edits for one pod template.
pub fn plan(ed: &mut Editor<'_>, t: &Pod<'_>, d: &Desired, out: &mut Vec<Finding>) {
    let oref = &t.object;
    let Some(pc) = ensure(
        ed,
        t,
        istio::PROXY_CONFIG_ANNOTATION,
        |json| fresh(d, json),
        out,
    ) else {
        return;
    };
    let Some(anns) = t.template.path(&["metadata", "annotations"]) else {
        return;
    };
    let apath = child(&child(&t.path, "metadata"), "annotations");
    let v = &pc.value;
    if let Some(f) = shared_node_finding(v, oref) {
        out.push(f);
        return;
    }
    if !matches!(v.kind, Kind::Scalar { .. }) {
        out.push(err(
            Rule::AnnotationNotConfig,
            oref,
            v.start,
            format!(
                "the {} annotation must be a string holding YAML or JSON",
                istio::PROXY_CONFIG_ANNOTATION
            ),
        ));
        return;
    }
    let place = Place {
        key_col: ed.col(pc.key.props_start),
        block_allowed: !anns.flow,
    };
    let mut inner_findings = Vec::new();
    let ppath = child(&apath, istio::PROXY_CONFIG_ANNOTATION);
    let res = embedded::edit_in_string(ed, v, place, &ppath, |inner, root| {
        if root.entries().is_some() {
            proxy_config::merge(inner, root, &[], d, &mut inner_findings);
            true
        } else {
            false
        }
    });
    let at = v.start;
    let name = describe(oref);
    match res {
        Ok(true) => {
            for f in inner_findings {
                let mut f = f.with_object(Some(oref.clone()));
                f.offset = embedded::outer_offset(ed.src, v, f.offset);
                f.message = format!("{name}: {}: {}", istio::PROXY_CONFIG_ANNOTATION, f.message);
                out.push(f);
            }
        }
        Ok(false) => out.push(err(
            Rule::AnnotationNotConfig,
            oref,
            at,
            format!(
                "the {} annotation does not hold a mapping; fix it by hand",
                istio::PROXY_CONFIG_ANNOTATION
            ),
        )),
        Err(EmbeddedError::Invalid(why)) => out.push(err(
            Rule::AnnotationNotConfig,
            oref,
            at,
            format!(
                "the {} annotation is not valid YAML or JSON ({why}); the injector would refuse \
                 this pod",
                istio::PROXY_CONFIG_ANNOTATION
            ),
        )),
        Err(e @ (EmbeddedError::MultiDoc | EmbeddedError::Tagged(_))) => out.push(err(
            Rule::AnnotationNotConfig,
            oref,
            at,
            format!(
                "the {} annotation {}",
                istio::PROXY_CONFIG_ANNOTATION,
                e.reason()
            ),
        )),
        Err(EmbeddedError::Verify) => out.push(err(
            Rule::Internal,
            oref,
            at,
            format!(
                "internal error: the edited {} annotation did not read back as intended; left \
                 unchanged",
                istio::PROXY_CONFIG_ANNOTATION
            ),
        )),
    }
}
