//! The env of a mesh's injected proxy container: the shared steps of adding meshjob's
//! settings there and taking them out again (each mesh decides which items).

use crate::finding::{Finding, Rule};
use crate::mesh::Mesh;
use crate::pod::{Container, Pod};
use crate::yaml::editor::Editor;
use crate::yaml::emit::Out;
use crate::yaml::path::{Seg, child};
use crate::yaml::tree::Node;

/// The mesh's proxy container among the pod's regular containers (injected already).
pub(crate) fn proxy<'d>(pod: &Pod<'d>, mesh: &Mesh) -> Option<Container<'d>> {
    pod.container(mesh.proxy_container)
}

/// An env item `{name, value}`.
pub(crate) fn item(name: &str, value: Out) -> Out {
    Out::Map(vec![
        ("name".into(), Out::Str(name.into())),
        ("value".into(), value),
    ])
}

/// An env item `e` (at `epath[j]`) that should hold `"true"` and does not: set with
/// `force`, else kept with a warning that says `why` it matters.
#[allow(clippy::too_many_arguments)]
pub(crate) fn set_or_keep(
    ed: &mut Editor<'_>,
    e: &Node,
    epath: &[Seg],
    j: usize,
    force: bool,
    why: &str,
    (t, mesh): (&Pod<'_>, &Mesh),
    out: &mut Vec<Finding>,
) {
    let v = e.get("value");
    if v.and_then(Node::as_str) == Some("true") {
        return;
    }
    let shown = v.and_then(Node::as_str).unwrap_or("");
    let name = e.str("name").unwrap_or_default();
    match (force, e.entry("value")) {
        (true, Some(ve)) => {
            let mut p = epath.to_vec();
            p.push(Seg::Index(j));
            ed.replace_value(e, &ve.key, &ve.value, &p, "value", &Out::Str("true".into()));
        }
        _ => out.push(
            Finding::warning(
                Rule::KeptUserValue,
                e.start,
                format!(
                    "{}: {}: keeping env {name}={shown:?}: {why} (use --force to set \"true\")",
                    t.describe(),
                    mesh.proxy_container,
                ),
            )
            .with_object(Some(t.object.clone())),
        ),
    }
}

/// Takes the env items `ours` picks out of the pod's proxy container (the whole `env` when
/// nothing else is left), and says so.
pub(crate) fn remove_items(
    ed: &mut Editor<'_>,
    t: &Pod<'_>,
    mesh: &Mesh,
    ours: impl Fn(&Node) -> bool,
    out: &mut Vec<Finding>,
) {
    let Some(proxy) = proxy(t, mesh) else {
        return;
    };
    let c = proxy.node;
    let Some(env) = c.get("env") else { return };
    let Some(items) = env.items() else { return };
    if crate::locate::shared_node(c).is_some() || crate::locate::shared_node(env).is_some() {
        return;
    }
    let gone: Vec<usize> = (0..items.len()).filter(|&j| ours(&items[j])).collect();
    if gone.is_empty() {
        return;
    }
    let cpath = t.container_path(&proxy);
    if gone.len() == items.len() {
        ed.remove_entry(c, &cpath, "env");
    } else {
        // Runs of neighbouring items go as one piece (their texts touch), highest first, so
        // that the indices of the intended value stay right.
        let epath = child(&cpath, "env");
        let mut runs: Vec<std::ops::Range<usize>> = Vec::new();
        for &j in &gone {
            match runs.last_mut() {
                Some(r) if r.end == j => r.end = j + 1,
                _ => runs.push(j..j + 1),
            }
        }
        for r in runs.into_iter().rev() {
            ed.remove_items(env, &epath, r);
        }
    }
    out.push(
        Finding::info(
            Rule::SettingRemoved,
            env.start,
            format!(
                "{}: {}: meshjob's env settings taken out",
                t.describe(),
                mesh.proxy_container
            ),
        )
        .with_object(Some(t.object.clone())),
    );
}
