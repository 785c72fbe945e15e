//! The pod annotation `proxy.istio.io/config`: created, or merged into.

use super::proxy_config::{self, Desired};
use crate::finding::describe;
use crate::finding::{Finding, Rule};
use crate::locate::{object_error as err, shared_node_finding};
use crate::mesh::istio;
use crate::plan::annotation::ensure;
use crate::pod::Pod;
use crate::yaml::editor::Editor;
use crate::yaml::embedded::{self, EmbeddedError, Place};
use crate::yaml::emit::Out;
use crate::yaml::path::child;
use crate::yaml::tree::{Kind, parse_stream};
use crate::yaml::value::Value;

/// The annotation value for a template that has none, with what it means. It depends on
/// the settings alone, the same for every pod of a run: the last few are kept (per thread)
/// rather than written and parsed again.
fn fresh(d: &Desired, json: bool) -> Out {
    thread_local! {
        static FRESH: std::cell::RefCell<crate::memo::Recent<(Desired, bool), Out, 4>> =
            const { std::cell::RefCell::new(crate::memo::Recent::new()) };
    }
    FRESH.with_borrow_mut(|fresh| {
        let made = || {
            let text = d.fresh_text(json);
            let value = std::sync::Arc::new(fresh_value(&text));
            ((d.clone(), json), Out::YamlText { text, value })
        };
        (fresh.find_or(|(d0, j)| d0 == d && *j == json, made)).clone()
    })
}

/// The annotation meshjob adds for the wrapper, as a key and a block value: to put in the
/// place of another annotation.
pub(super) fn fresh_entry(d: &Desired) -> (&'static str, Out) {
    (istio::PROXY_CONFIG_ANNOTATION, fresh(d, false))
}

/// The value of a fresh annotation text.
fn fresh_value(text: &str) -> Value {
    parse_stream(text)
        .ok()
        .and_then(|docs| docs.first().map(|doc| Value::from_node(&doc.root)))
        .unwrap_or(Value::Map(Vec::new()))
}

/// Plans the annotation edits for one pod template.
pub(super) fn plan(ed: &mut Editor<'_>, t: &Pod<'_>, d: &Desired, out: &mut Vec<Finding>) {
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
    let Some(anns) = t.annotations() else {
        return;
    };
    let apath = t.annotations_path();
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
