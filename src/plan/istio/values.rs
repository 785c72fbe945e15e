//! Istio mesh configuration: finds where a document keeps MeshConfig, sets the mesh-wide
//! proxy defaults (`defaultConfig.terminationDrainDuration` and
//! `defaultConfig.proxyMetadata.EXIT_ON_ZERO_ACTIVE_CONNECTIONS`) there, and lints them.
//!
//! Which documents those are, and where each keeps MeshConfig, is a fact of Istio's
//! (`mesh::istio::documents`). `holdApplicationUntilProxyStarts`
//! is linted but not set here: mesh-wide it would delay the start of every meshed pod, and
//! the pod annotation already sets it on the Jobs that need it.

use super::proxy_config::{self, Desired};
use crate::finding::{Finding, ObjectRef, Rule};
use crate::finding::{describe, object_ref};
use crate::locate::{duplicate_key_message, objects, refusal, shared_node};
use crate::mesh::istio;
use crate::mesh::istio::documents::{Location, Verdict, classify};
use crate::yaml::editor::Editor;
use crate::yaml::embedded::{self, EmbeddedError, Place};
use crate::yaml::emit::Out;
use crate::yaml::path::{Path, key, path_string};
use crate::yaml::tree::{Kind, Node};

/// The mesh-wide settings: the pod settings without `holdApplicationUntilProxyStarts`.
pub(super) fn desired(pod: &Desired) -> Desired {
    Desired {
        hold: false,
        ..pod.clone()
    }
}

/// Plans the mesh-config edits of one document (or of the items of a `kind: List`).
pub(super) fn plan(
    ed: &mut Editor<'_>,
    root: &Node,
    pod: &Desired,
    force_mesh: bool,
    out: &mut Vec<Finding>,
) {
    let d = desired(pod);
    for (obj, path, listed) in objects(root) {
        object(ed, obj, path, &d, force_mesh && !listed, out);
    }
}

fn object(
    ed: &mut Editor<'_>,
    obj: &Node,
    path: Path,
    d: &Desired,
    force_mesh: bool,
    out: &mut Vec<Finding>,
) {
    let oref = object_ref(obj);
    let typed = !oref.kind.is_empty();
    let ctx = Ctx {
        oref: typed.then_some(oref),
    };
    let chain: &[&str] = match classify(obj, force_mesh) {
        Verdict::Ignore => return,
        Verdict::LeaveAlone(why) => {
            out.push(ctx.finding(Finding::info(Rule::MeshConfigLeftAlone, obj.start, why)));
            return;
        }
        Verdict::Edit(Location::ConfigMap) => return config_map(ed, obj, path, d, &ctx, out),
        Verdict::Edit(Location::Operator) => {
            let spec = obj.get("spec");
            let values_only = spec.is_some_and(|s| {
                s.get(istio::MESH_CONFIG).is_none()
                    && s.get("values")
                        .is_some_and(|v| v.get(istio::MESH_CONFIG).is_some())
            });
            if values_only {
                &["spec", "values", istio::MESH_CONFIG, istio::DEFAULT_CONFIG]
            } else {
                &["spec", istio::MESH_CONFIG, istio::DEFAULT_CONFIG]
            }
        }
        Verdict::Edit(Location::Sail) => {
            &["spec", "values", istio::MESH_CONFIG, istio::DEFAULT_CONFIG]
        }
        Verdict::Edit(Location::HelmValues) => &[istio::MESH_CONFIG, istio::DEFAULT_CONFIG],
        Verdict::Edit(Location::Bare) => &[istio::DEFAULT_CONFIG],
    };
    let at = obj.start;
    let mut found = Vec::new();
    ensure(ed, obj, path, chain, d, Some("the document"), &mut found);
    out.extend(found.into_iter().map(|f| ctx.finding(f)));
    note(at, d, out);
}

/// The once-per-run explanation of how the two mesh-wide settings interact.
fn note(at: usize, d: &Desired, out: &mut Vec<Finding>) {
    if d.exit_on_zero {
        out.push(Finding::info(
            Rule::DrainInteraction,
            at,
            istio::DRAIN_INTERACTION_NOTE,
        ));
    }
}

/// Who findings are about: the object, when the document is one.
struct Ctx {
    oref: Option<ObjectRef>,
}

impl Ctx {
    fn finding(&self, f: Finding) -> Finding {
        match &self.oref {
            Some(o) => {
                let mut f = f.with_object(Some(o.clone()));
                f.message = format!("{}: {}", describe(o), f.message);
                f
            }
            None => f,
        }
    }
}

/// The value to write for the missing keys `rest`, ending in the ProxyConfig settings.
fn nested(rest: &[&str], d: &Desired) -> Out {
    rest.iter().rev().fold(Out::Map(d.entries()), |inner, k| {
        Out::Map(vec![(k.to_string(), inner)])
    })
}

/// Walks `keys` down from mapping `map` (at `path`), creating what is missing, and merges
/// the settings into the ProxyConfig mapping at the end. Findings carry offsets into
/// `ed.src`; their messages start with the path of the node they are about, or with `root`
/// for the root itself (no prefix when `root` is `None`).
fn ensure(
    ed: &mut Editor<'_>,
    map: &Node,
    path: Path,
    keys: &[&str],
    d: &Desired,
    root: Option<&str>,
    out: &mut Vec<Finding>,
) {
    let here = |p: &Path| match path_string(p) {
        s if s.is_empty() => root.map(str::to_string),
        s => Some(s),
    };
    let prefixed = |p: &Path, msg: String| match here(p) {
        Some(h) => format!("{h}: {msg}"),
        None => msg,
    };
    if let Some(why) = shared_node(map) {
        // Refuse to edit through an anchor, alias or merge key.
        out.push(Finding::error(
            Rule::SharedNode,
            map.props_start,
            prefixed(&path, refusal(why)),
        ));
        return;
    }
    if let Some(k) = map.duplicate_key() {
        let what = match path_string(&path) {
            p if p.is_empty() => root.unwrap_or("the MeshConfig").to_string(),
            p => format!("`{p}`"),
        };
        out.push(Finding::error(
            Rule::DuplicateKey,
            k.start,
            duplicate_key_message(&what, k.as_str().unwrap_or_default()),
        ));
        return;
    }
    let Some((k, rest)) = keys.split_first() else {
        let mut found = Vec::new();
        proxy_config::merge(ed, map, &path, d, &mut found);
        out.extend(found.into_iter().map(|mut f| {
            f.message = prefixed(&path, f.message);
            f
        }));
        return;
    };
    let Some(e) = map.entry(k) else {
        ed.insert_entry(map, &path, None, k, &nested(rest, d));
        return;
    };
    let mut child = path.clone();
    child.push(key(k));
    let v = &e.value;
    if v.entries().is_some() || v.anchor.is_some() || matches!(v.kind, Kind::Alias(_)) {
        // An anchored or aliased node is refused one level down.
        ensure(ed, v, child, rest, d, root, out);
    } else if v.is_null() {
        ed.replace_value(map, &e.key, v, &path, k, &nested(rest, d));
    } else {
        out.push(Finding::error(
            Rule::MeshConfigNotMapping,
            v.start,
            prefixed(&child, "must be a mapping; left alone".to_string()),
        ));
    }
}

/// The mesh ConfigMap: edits the MeshConfig YAML inside `data.mesh`, keeping the string's
/// style, and leaves every other key (`meshNetworks`) alone.
fn config_map(
    ed: &mut Editor<'_>,
    obj: &Node,
    path: Path,
    d: &Desired,
    ctx: &Ctx,
    out: &mut Vec<Finding>,
) {
    let Some(data) = obj.get("data") else { return };
    for (n, what) in [(obj, "the object"), (data, "`data`")] {
        if let Some(k) = n.duplicate_key() {
            let msg = duplicate_key_message(what, k.as_str().unwrap_or_default());
            out.push(ctx.finding(Finding::error(Rule::DuplicateKey, k.start, msg)));
            return;
        }
    }
    let Some(entry) = data.entry(istio::MESH_CONFIGMAP_KEY) else {
        return;
    };
    let mesh = &entry.value;
    let mut mpath = path;
    mpath.push(key("data"));
    mpath.push(key(istio::MESH_CONFIGMAP_KEY));
    let at = mesh.start;
    let err = |rule: Rule, msg: String| {
        ctx.finding(Finding::error(rule, at, format!("data.mesh: {msg}")))
    };
    if data.anchor.is_some() || mesh.anchor.is_some() || !matches!(mesh.kind, Kind::Scalar { .. }) {
        out.push(err(
            Rule::MeshConfigNotMapping,
            "must be a plain string holding MeshConfig YAML (no anchor or alias); left alone"
                .into(),
        ));
        return;
    }
    let place = Place {
        key_col: ed.col(entry.key.props_start),
        block_allowed: !data.flow,
    };
    let mut inner_found = Vec::new();
    let res = embedded::edit_in_string(ed, mesh, place, &mpath, |inner, root| {
        if root.entries().is_some() {
            ensure(
                inner,
                root,
                Vec::new(),
                &[istio::DEFAULT_CONFIG],
                d,
                None,
                &mut inner_found,
            );
            true
        } else {
            false
        }
    });
    match res {
        Ok(true) => {
            for mut f in inner_found {
                f.offset = embedded::outer_offset(ed.src, mesh, f.offset);
                f.message = format!("data.mesh: {}", f.message);
                out.push(ctx.finding(f));
            }
            note(at, d, out);
        }
        Ok(false) => out.push(err(
            Rule::MeshConfigNotMapping,
            "does not hold a MeshConfig mapping; fix it by hand".into(),
        )),
        Err(EmbeddedError::Invalid(why)) => out.push(err(
            Rule::MeshConfigInvalid,
            format!("is not valid YAML ({why}); istiod ignores the whole ConfigMap"),
        )),
        Err(e @ (EmbeddedError::MultiDoc | EmbeddedError::Tagged(_))) => {
            out.push(err(Rule::MeshConfigInvalid, e.reason()));
        }
        Err(EmbeddedError::Verify) => out.push(err(
            Rule::Internal,
            "internal error: the edited text did not read back as intended; left unchanged".into(),
        )),
    }
}
