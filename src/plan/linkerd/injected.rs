//! An injected `linkerd-proxy` takes its settings from its env: the shutdown endpoint the
//! wrapper calls is on only with `LINKERD2_PROXY_SHUTDOWN_ENDPOINT_ENABLED=true` (what the
//! `config.linkerd.io/proxy-admin-shutdown` annotation becomes at injection, linkerd2
//! `charts/partials/templates/_proxy.tpl`). The proxy parses it with Rust's
//! `bool::from_str` (linkerd2-proxy `linkerd/app/src/env.rs`, `env/types.rs` `parse_bool`),
//! so only `true` turns it on, and a value that is neither `true` nor `false` keeps the proxy
//! from starting.

use crate::finding::Finding;
use crate::mesh::Mesh;
use crate::plan::env::{self, item as env_item, set_or_keep};
use crate::pod::Pod;
use crate::yaml::editor::Editor;
use crate::yaml::emit::Out;
use crate::yaml::path::child;
use crate::yaml::tree::Node;

/// The env var that turns the Linkerd proxy's shutdown endpoint on.
pub(super) const SHUTDOWN_ENV: &str = "LINKERD2_PROXY_SHUTDOWN_ENDPOINT_ENABLED";

/// Plans the env of an injected `linkerd-proxy`: `LINKERD2_PROXY_SHUTDOWN_ENDPOINT_ENABLED:
/// "true"`, so that the wrapper's `POST /shutdown` is answered.
pub(super) fn plan(
    ed: &mut Editor<'_>,
    t: &Pod<'_>,
    mesh: &Mesh,
    force: bool,
    out: &mut Vec<Finding>,
) {
    let Some(proxy) = env::proxy(t, mesh) else {
        return;
    };
    let c = proxy.node;
    if let Some(f) = crate::locate::shared_node_finding(c, &t.object) {
        out.push(f);
        return;
    }
    let cpath = t.container_path(&proxy);
    let item = || env_item(SHUTDOWN_ENV, Out::Str("true".into()));
    let Some(env) = c.entry("env").filter(|e| !e.value.is_null()) else {
        let items = Out::Seq(vec![item()]);
        match c.entry("env") {
            Some(e) => ed.replace_value(c, &e.key, &e.value, &cpath, "env", &items),
            None => ed.insert_entry(c, &cpath, None, "env", &items),
        }
        return;
    };
    if let Some(f) = crate::locate::shared_node_finding(&env.value, &t.object) {
        out.push(f);
        return;
    }
    let Some(items) = env.value.items() else {
        return;
    };
    let epath = child(&cpath, "env");
    match items
        .iter()
        .position(|e| e.str("name") == Some(SHUTDOWN_ENV))
    {
        None => ed.append_items(&env.value, &epath, &[item()]),
        Some(j) => {
            let why = "the proxy's shutdown endpoint stays off, so the wrapper cannot stop it \
                       and the Job keeps running";
            set_or_keep(ed, &items[j], &epath, j, force, why, (t, mesh), out);
        }
    }
}

/// Takes out of the injected `linkerd-proxy`'s env what [`plan`] adds.
pub(super) fn revert(ed: &mut Editor<'_>, t: &Pod<'_>, mesh: &Mesh, out: &mut Vec<Finding>) {
    let ours = |e: &Node| e.str("name") == Some(SHUTDOWN_ENV) && e.str("value") == Some("true");
    env::remove_items(ed, t, mesh, ours, out);
}
