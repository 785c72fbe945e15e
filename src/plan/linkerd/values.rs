//! Linkerd's mesh-wide configuration: the Helm values of the `linkerd-control-plane` chart.
//! Sets `proxy.enableShutdownEndpoint: true` (Linkerd 2.16+) for the wrapper, so that every
//! injected proxy serves the `/shutdown` endpoint the wrapper POSTs, or `proxy.nativeSidecar:
//! true` (2.15+) when the settings give Linkerd pods native sidecars; lints the `proxy`
//! mapping. `--strategy none` leaves the values alone, as it does Istio's mesh config.
//!
//! Which documents those are is a fact of Linkerd's (`mesh::linkerd::documents`).

use crate::config::Settings;
use crate::finding::{Finding, Rule};
use crate::locate::{objects, refusal, shared_node};
use crate::mesh::linkerd;
use crate::mesh::linkerd::documents::{Verdict, classify};
use crate::yaml::editor::Editor;
use crate::yaml::emit::Out;
use crate::yaml::path::{Path, child};
use crate::yaml::tree::{Kind, Node};
use crate::yaml::value::{ScalarType, resolve};

/// The `proxy` booleans the values should hold `true`: `nativeSidecar` when Linkerd pods get
/// native sidecars (`native`: `--strategy native`, or `auto` with the versions of the run),
/// else `enableShutdownEndpoint` for the wrapper.
fn wanted(native: bool) -> &'static [&'static str] {
    if native {
        &[linkerd::VALUES_NATIVE_SIDECAR]
    } else {
        &[linkerd::VALUES_SHUTDOWN]
    }
}

/// Plans the edits of one document's Linkerd values, if it holds some.
pub(super) fn plan(
    ed: &mut Editor<'_>,
    root: &Node,
    settings: &Settings,
    native: bool,
    out: &mut Vec<Finding>,
) {
    for (obj, path, listed) in objects(root) {
        if listed || obj.str("apiVersion").is_some() || obj.str("kind").is_some() {
            continue;
        }
        match classify(obj) {
            Verdict::Ignore => {}
            Verdict::LeaveAlone(why) => {
                out.push(Finding::info(Rule::MeshConfigLeftAlone, obj.start, why));
            }
            Verdict::Edit => values(ed, obj, path, settings, native, out),
        }
    }
}

fn values(
    ed: &mut Editor<'_>,
    obj: &Node,
    path: Path,
    settings: &Settings,
    native: bool,
    out: &mut Vec<Finding>,
) {
    let key = linkerd::VALUES_PROXY;
    let want = wanted(native);
    let fresh = || {
        Out::Map(
            want.iter()
                .map(|k| (k.to_string(), Out::Bool(true)))
                .collect(),
        )
    };
    let Some(e) = obj.entry(key) else {
        ed.insert_entry(obj, &path, None, key, &fresh());
        return;
    };
    let proxy = &e.value;
    if let Some(why) = shared_node(proxy) {
        out.push(Finding::error(
            Rule::SharedNode,
            proxy.props_start,
            format!("{key}: {}", refusal(why)),
        ));
        return;
    }
    if proxy.is_null() {
        ed.replace_value(obj, &e.key, proxy, &path, key, &fresh());
        return;
    }
    if proxy.entries().is_none() {
        out.push(Finding::error(
            Rule::MeshConfigNotMapping,
            proxy.start,
            format!("{key}: must be a mapping; left alone"),
        ));
        return;
    }
    let ppath = child(&path, key);
    lint_keys(proxy, out);
    for k in linkerd::PROXY_BOOL_KEYS {
        boolean(ed, proxy, &ppath, k, want.contains(k), settings.force, out);
    }
}

/// Reports keys of `proxy` the chart does not read that are close to one it does.
fn lint_keys(proxy: &Node, out: &mut Vec<Finding>) {
    for e in proxy.entries().unwrap_or(&[]) {
        let Some(k) = e.key.as_str() else { continue };
        if linkerd::PROXY_KEYS.contains(&k) {
            continue;
        }
        if let Some(known) = crate::config::closest(k, linkerd::PROXY_KEYS.iter().copied()) {
            out.push(Finding::warning(
                Rule::ValuesMisspelled,
                e.key.start,
                format!(
                    "proxy.{k}: the linkerd-control-plane chart has no such value and ignores \
                     it; did you mean `{known}`?"
                ),
            ));
        }
    }
}

/// Checks the boolean `proxy.<k>`; when `ours`, makes it `true`.
fn boolean(
    ed: &mut Editor<'_>,
    proxy: &Node,
    ppath: &Path,
    k: &str,
    ours: bool,
    force: bool,
    out: &mut Vec<Finding>,
) {
    let Some(e) = proxy.entry(k) else {
        if ours {
            ed.insert_entry(proxy, ppath, None, k, &Out::Bool(true));
        }
        return;
    };
    let v = &e.value;
    let Kind::Scalar { value, style } = &v.kind else {
        out.push(Finding::error(
            Rule::ValuesNotBoolean,
            v.start,
            format!("proxy.{k}: must be true or false"),
        ));
        return;
    };
    let text = value.to_ascii_lowercase();
    let as_bool = match resolve(value, *style, v.tag.as_deref(), v.empty) {
        ScalarType::Bool => Some(text == "true"),
        // Helm reads values as YAML 1.1, where these plain words are booleans too.
        ScalarType::Str
            if v.tag.is_none()
                && *style == granit_parser::ScalarStyle::Plain
                && matches!(text.as_str(), "yes" | "no" | "on" | "off" | "y" | "n") =>
        {
            Some(matches!(text.as_str(), "yes" | "on" | "y"))
        }
        ScalarType::Str if text == "true" || text == "false" => {
            let fix = text == "true" || (ours && force);
            out.push(
                Finding::error(
                    Rule::ValuesNotBoolean,
                    v.start,
                    format!(
                        "proxy.{k}: must be a boolean, not the string {value:?}: the chart tests \
                         it with `if`, where any non-empty string (\"false\" too) is true, and \
                         the proxy injector reads it as a Go bool"
                    ),
                )
                .fixed(),
            );
            ed.replace_value(proxy, &e.key, v, ppath, k, &Out::Bool(fix));
            if ours && !fix {
                out.push(kept(k, v.start));
            }
            return;
        }
        _ => {
            out.push(Finding::error(
                Rule::ValuesNotBoolean,
                v.start,
                format!("proxy.{k}: must be true or false, not {value:?}"),
            ));
            return;
        }
    };
    if ours && as_bool == Some(false) {
        if force {
            ed.replace_value(proxy, &e.key, v, ppath, k, &Out::Bool(true));
        } else {
            out.push(kept(k, v.start));
        }
    }
}

fn kept(k: &str, at: usize) -> Finding {
    Finding::warning(
        Rule::KeptUserValue,
        at,
        format!(
            "keeping `proxy.{k}: false`: pods without their own annotation then lack what \
             meshjob's fix needs (use --force to set true)"
        ),
    )
}
