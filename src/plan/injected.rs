//! A pod whose proxy is injected already (`istioctl kube-inject` output): the pod
//! annotation would have no effect there, since `proxyMetadata` becomes env vars only at
//! injection time. So the settings go on the `istio-proxy` container's env instead:
//! `EXIT_ON_ZERO_ACTIVE_CONNECTIONS` (pilot-agent reads it from its env only,
//! `pilot/cmd/pilot-agent/options/options.go`) and `terminationDrainDuration` inside
//! `PROXY_CONFIG` (a ProxyConfig as JSON, which pilot-agent applies over the mesh defaults,
//! `pilot/cmd/pilot-agent/config/config.go` `getMeshConfig`).
//!
//! An injected `linkerd-proxy` likewise takes its settings from its env: the shutdown
//! endpoint the wrapper calls is on only with `LINKERD2_PROXY_SHUTDOWN_ENDPOINT_ENABLED=true`
//! (what the `config.linkerd.io/proxy-admin-shutdown` annotation becomes at injection,
//! linkerd2 `charts/partials/templates/_proxy.tpl`). The proxy parses it with Rust's
//! `bool::from_str` (linkerd2-proxy `linkerd/app/src/env.rs`, `env/types.rs` `parse_bool`),
//! so only `true` turns it on, and a value that is neither `true` nor `false` keeps the proxy
//! from starting.

use super::editor::Editor;
use super::embedded::{self, Place};
use super::proxy_config::{self, Desired};
use crate::finding::{Finding, Rule};
use crate::locate::{PodTarget, describe, shared_node_finding, str_of};
use crate::mesh::{Mesh, istio};
use crate::yaml::emit::Out;
use crate::yaml::path::{Seg, child};
use crate::yaml::tree::Node;
use crate::yaml::value::Value;

/// The env var that carries a ProxyConfig (JSON) to pilot-agent.
const PROXY_CONFIG_ENV: &str = "PROXY_CONFIG";
/// The env var that turns the Linkerd proxy's shutdown endpoint on.
pub const LINKERD_SHUTDOWN_ENV: &str = "LINKERD2_PROXY_SHUTDOWN_ENDPOINT_ENABLED";

pub use crate::decide::proxy_container;

fn env_item(name: &str, value: Out) -> Out {
    Out::Map(vec![
        ("name".into(), Out::Str(name.into())),
        ("value".into(), value),
    ])
}

/// `PROXY_CONFIG` for a container that has none: only the drain duration.
fn fresh_proxy_config(d: &Desired) -> Out {
    let text = format!(
        "{{\"{}\": \"{}\"}}",
        istio::TERMINATION_DRAIN_DURATION,
        d.drain
    );
    Out::Raw {
        text: format!("'{text}'"),
        value: Value::str(text),
        flow_safe: true,
    }
}

/// Plans the env edits of the injected proxy container of one pod.
pub fn plan(
    ed: &mut Editor<'_>,
    t: &PodTarget<'_>,
    mesh: &Mesh,
    d: &Desired,
    out: &mut Vec<Finding>,
) {
    let oref = &t.object;
    let Some((i, c)) = proxy_container(mesh, t.template) else {
        return;
    };
    if let Some(f) = shared_node_finding(c, oref) {
        out.push(f);
        return;
    }
    let mut cpath = child(&child(&t.path, "spec"), "containers");
    cpath.push(Seg::Index(i));
    let exit_item = || {
        env_item(
            istio::EXIT_ON_ZERO_ACTIVE_CONNECTIONS,
            Out::Str("true".into()),
        )
    };
    let Some(env) = c.entry("env").filter(|e| !e.value.is_null()) else {
        let mut items = Vec::new();
        if d.exit_on_zero {
            items.push(exit_item());
        }
        items.push(env_item(PROXY_CONFIG_ENV, fresh_proxy_config(d)));
        match c.entry("env") {
            Some(e) => ed.replace_value(c, &e.key, &e.value, &cpath, "env", &Out::Seq(items)),
            None => ed.insert_entry(c, &cpath, None, "env", &Out::Seq(items)),
        }
        return;
    };
    let Some(items) = env.value.items() else {
        return;
    };
    let epath = child(&cpath, "env");
    let mut add = Vec::new();
    let find = |k: &str| {
        items
            .iter()
            .enumerate()
            .find(|(_, e)| str_of(e, "name") == Some(k))
    };
    if d.exit_on_zero {
        match find(istio::EXIT_ON_ZERO_ACTIVE_CONNECTIONS) {
            None => add.push(exit_item()),
            Some((j, e)) => {
                let why = "the proxy then sits out the whole drain before it exits";
                set_or_keep(ed, e, &epath, j, d.force, why, (t, mesh), out);
            }
        }
    }
    match find(PROXY_CONFIG_ENV) {
        None => add.push(env_item(PROXY_CONFIG_ENV, fresh_proxy_config(d))),
        Some((j, e)) => {
            if let Some(ve) = e.entry("value")
                && matches!(ve.value.kind, crate::yaml::tree::Kind::Scalar { .. })
            {
                let mut p = epath.clone();
                p.push(Seg::Index(j));
                let place = Place {
                    key_col: ed.col(ve.key.props_start),
                    block_allowed: !e.flow,
                };
                let only_drain = Desired {
                    hold: false,
                    exit_on_zero: false,
                    ..d.clone()
                };
                let mut inner = Vec::new();
                let res = embedded::edit_in_string(
                    ed,
                    &ve.value,
                    place,
                    &child(&p, "value"),
                    |ied, root| {
                        if root.entries().is_some() {
                            proxy_config::merge(ied, root, &[], &only_drain, &mut inner);
                        }
                    },
                );
                match res {
                    Ok(()) => {
                        for f in inner.into_iter().filter(|f| f.rule == Rule::KeptUserValue) {
                            let mut f = f.with_object(Some(oref.clone()));
                            f.offset = embedded::outer_offset(ed.src, &ve.value, f.offset);
                            f.message =
                                format!("{}: {PROXY_CONFIG_ENV}: {}", describe(oref), f.message);
                            out.push(f);
                        }
                    }
                    Err(embedded::EmbeddedError::Verify) => out.push(
                        Finding::error(
                            Rule::Internal,
                            ve.value.start,
                            format!(
                                "internal error: {}: the edited env {PROXY_CONFIG_ENV} did not \
                                 read back as intended; left unchanged",
                                describe(oref)
                            ),
                        )
                        .with_object(Some(oref.clone())),
                    ),
                    Err(e) => out.push(
                        Finding::warning(
                            Rule::ProxyConfigEnvLeftAlone,
                            ve.value.start,
                            format!(
                                "{}: {}: env {PROXY_CONFIG_ENV} {}; left as it is, so \
                                 terminationDrainDuration is not set there",
                                describe(oref),
                                mesh.proxy_container,
                                e.reason()
                            ),
                        )
                        .with_object(Some(oref.clone())),
                    ),
                }
            }
        }
    }
    if !add.is_empty() {
        ed.append_items(&env.value, &epath, &add);
    }
}

/// An env item `e` (at `epath[j]`) that should hold `"true"` and does not: set with
/// `force`, else kept with a warning that says `why` it matters.
#[allow(clippy::too_many_arguments)]
fn set_or_keep(
    ed: &mut Editor<'_>,
    e: &Node,
    epath: &[Seg],
    j: usize,
    force: bool,
    why: &str,
    (t, mesh): (&PodTarget<'_>, &Mesh),
    out: &mut Vec<Finding>,
) {
    let v = e.get("value");
    if v.and_then(Node::as_str) == Some("true") {
        return;
    }
    let shown = v.and_then(Node::as_str).unwrap_or("");
    let name = str_of(e, "name").unwrap_or_default();
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
                    describe(&t.object),
                    mesh.proxy_container,
                ),
            )
            .with_object(Some(t.object.clone())),
        ),
    }
}

/// Plans the env of an injected `linkerd-proxy`: `LINKERD2_PROXY_SHUTDOWN_ENDPOINT_ENABLED:
/// "true"`, so that the wrapper's `POST /shutdown` is answered.
pub fn plan_linkerd(
    ed: &mut Editor<'_>,
    t: &PodTarget<'_>,
    mesh: &Mesh,
    force: bool,
    out: &mut Vec<Finding>,
) {
    let Some((i, c)) = proxy_container(mesh, t.template) else {
        return;
    };
    if let Some(f) = shared_node_finding(c, &t.object) {
        out.push(f);
        return;
    }
    let mut cpath = child(&child(&t.path, "spec"), "containers");
    cpath.push(Seg::Index(i));
    let item = || env_item(LINKERD_SHUTDOWN_ENV, Out::Str("true".into()));
    let Some(env) = c.entry("env").filter(|e| !e.value.is_null()) else {
        let items = Out::Seq(vec![item()]);
        match c.entry("env") {
            Some(e) => ed.replace_value(c, &e.key, &e.value, &cpath, "env", &items),
            None => ed.insert_entry(c, &cpath, None, "env", &items),
        }
        return;
    };
    if let Some(f) = shared_node_finding(&env.value, &t.object) {
        out.push(f);
        return;
    }
    let Some(items) = env.value.items() else {
        return;
    };
    let epath = child(&cpath, "env");
    match items
        .iter()
        .position(|e| str_of(e, "name") == Some(LINKERD_SHUTDOWN_ENV))
    {
        None => ed.append_items(&env.value, &epath, &[item()]),
        Some(j) => {
            let why = "the proxy's shutdown endpoint stays off, so the wrapper cannot stop it \
                       and the Job keeps running";
            set_or_keep(ed, &items[j], &epath, j, force, why, (t, mesh), out);
        }
    }
}

/// Takes out of the injected proxy's env what [`plan`] and [`plan_linkerd`] add:
/// `EXIT_ON_ZERO_ACTIVE_CONNECTIONS: "true"`, `LINKERD2_PROXY_SHUTDOWN_ENDPOINT_ENABLED:
/// "true"`, and a `PROXY_CONFIG` of meshjob's: one that holds nothing but meshjob's drain
/// duration, written on one line. The injector writes its own `PROXY_CONFIG` as a block
/// scalar (`value: |`, istio/istio@0134e00 manifests/charts/istio-control/istio-discovery/
/// files/injection-template.yaml), `{}` when the pod sets nothing: that entry stays, with a
/// drain duration merged into it.
pub fn revert(
    ed: &mut Editor<'_>,
    t: &PodTarget<'_>,
    mesh: &Mesh,
    d: &Desired,
    out: &mut Vec<Finding>,
) {
    let want_drain = istio::parse_go_duration(&d.drain).ok();
    let ours = |e: &Node| match (str_of(e, "name"), str_of(e, "value")) {
        (Some(istio::EXIT_ON_ZERO_ACTIVE_CONNECTIONS | LINKERD_SHUTDOWN_ENV), Some("true")) => true,
        (Some(PROXY_CONFIG_ENV), Some(v)) if !e.get("value").is_some_and(Node::is_block_scalar) => {
            serde_json::from_str::<serde_json::Value>(v)
                .ok()
                .is_some_and(|j| {
                    j.as_object().is_some_and(|o| {
                        o.len() == 1
                            && o.get(istio::TERMINATION_DRAIN_DURATION)
                                .and_then(serde_json::Value::as_str)
                                .is_some_and(|s| istio::parse_go_duration(s).ok() == want_drain)
                    })
                })
        }
        _ => false,
    };
    remove_env_items(ed, t, mesh, ours, out);
}

/// Takes out of the injected `linkerd-proxy`'s env what [`plan_linkerd`] adds.
pub fn revert_linkerd(ed: &mut Editor<'_>, t: &PodTarget<'_>, mesh: &Mesh, out: &mut Vec<Finding>) {
    let ours = |e: &Node| {
        str_of(e, "name") == Some(LINKERD_SHUTDOWN_ENV) && str_of(e, "value") == Some("true")
    };
    remove_env_items(ed, t, mesh, ours, out);
}

/// Takes the env items `ours` picks out of the pod's proxy container (the whole `env` when
/// nothing else is left), and says so.
fn remove_env_items(
    ed: &mut Editor<'_>,
    t: &PodTarget<'_>,
    mesh: &Mesh,
    ours: impl Fn(&Node) -> bool,
    out: &mut Vec<Finding>,
) {
    let Some((i, c)) = proxy_container(mesh, t.template) else {
        return;
    };
    let Some(env) = c.get("env") else { return };
    let Some(items) = env.items() else { return };
    if crate::locate::shared_node(c).is_some() || crate::locate::shared_node(env).is_some() {
        return;
    }
    let gone: Vec<usize> = (0..items.len()).filter(|&j| ours(&items[j])).collect();
    if gone.is_empty() {
        return;
    }
    let mut cpath = child(&child(&t.path, "spec"), "containers");
    cpath.push(Seg::Index(i));
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
                describe(&t.object),
                mesh.proxy_container
            ),
        )
        .with_object(Some(t.object.clone())),
    );
}
