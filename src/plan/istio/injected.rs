//! A pod whose proxy is injected already (`istioctl kube-inject` output): the pod
//! annotation would have no effect there, since `proxyMetadata` becomes env vars only at
//! injection time. So the settings go on the `istio-proxy` container's env instead:
//! `EXIT_ON_ZERO_ACTIVE_CONNECTIONS` (pilot-agent reads it from its env only,
//! `pilot/cmd/pilot-agent/options/options.go`) and `terminationDrainDuration` inside
//! `PROXY_CONFIG` (a ProxyConfig as JSON, which pilot-agent applies over the mesh defaults,
//! `pilot/cmd/pilot-agent/config/config.go` `getMeshConfig`), unless the injector's
//! `PROXY_CONFIG` already means it by leaving it out (see `drain_by_default`).

use super::proxy_config::{self, Desired};
use crate::finding::{Finding, Rule};
use crate::mesh::{Mesh, istio};
use crate::plan::env::{self, item as env_item, set_or_keep};
use crate::pod::Pod;
use crate::yaml::editor::Editor;
use crate::yaml::embedded::{self, Place};
use crate::yaml::emit::Out;
use crate::yaml::path::{Seg, child};
use crate::yaml::tree::Node;
use crate::yaml::value::Value;

/// The env var that carries a ProxyConfig (JSON) to pilot-agent.
const PROXY_CONFIG_ENV: &str = "PROXY_CONFIG";

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

/// Whether a `PROXY_CONFIG` mapping the injector wrote (`root`) already gives pilot-agent meshjob's
/// drain duration by leaving it out: the injector drops every field that equals Istio's
/// default (istio/istio@86c9f01fd735 `pkg/kube/inject/template.go` `cleanProxyConfig`,
/// `TerminationDrainDuration` among them), and pilot-agent then takes the default
/// (`pkg/config/mesh/mesh.go` `DefaultProxyConfig`: 5s), so a `PROXY_CONFIG` mapping without
/// `terminationDrainDuration` means 5s.
fn drain_by_default(root: &Node, d: &Desired) -> bool {
    d.drain.nanos() == crate::config::GoDuration::default_drain().nanos()
        && root.get(istio::TERMINATION_DRAIN_DURATION).is_none()
}

/// Plans the env edits of the injected proxy container of one pod.
pub(super) fn plan(
    ed: &mut Editor<'_>,
    t: &Pod<'_>,
    mesh: &Mesh,
    d: &Desired,
    out: &mut Vec<Finding>,
) {
    let oref = &t.object;
    let Some(proxy) = env::proxy(t, mesh) else {
        return;
    };
    let c = proxy.node;
    if let Some(f) = crate::locate::shared_node_finding(c, oref) {
        out.push(f);
        return;
    }
    let cpath = t.container_path(&proxy);
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
            .find(|(_, e)| e.str("name") == Some(k))
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
                        if root.entries().is_some() && !drain_by_default(root, d) {
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
                                format!("{}: {PROXY_CONFIG_ENV}: {}", t.describe(), f.message);
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
                                t.describe()
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
                                t.describe(),
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

/// Takes out of the injected proxy's env what [`plan`] adds:
/// `EXIT_ON_ZERO_ACTIVE_CONNECTIONS: "true"`, and a `PROXY_CONFIG` of meshjob's: one that
/// holds nothing but meshjob's drain duration, written on one line. The injector writes its
/// own `PROXY_CONFIG` as a block scalar (`value: |`, istio/istio@0134e00
/// manifests/charts/istio-control/istio-discovery/files/injection-template.yaml), `{}` when
/// the pod sets nothing: that entry stays, with a drain duration merged into it.
pub(super) fn revert(
    ed: &mut Editor<'_>,
    t: &Pod<'_>,
    mesh: &Mesh,
    d: &Desired,
    out: &mut Vec<Finding>,
) {
    let ours = |e: &Node| match (e.str("name"), e.str("value")) {
        (Some(istio::EXIT_ON_ZERO_ACTIVE_CONNECTIONS), Some("true")) => true,
        (Some(PROXY_CONFIG_ENV), Some(v)) if !e.get("value").is_some_and(Node::is_block_scalar) => {
            serde_json::from_str::<serde_json::Value>(v)
                .ok()
                .is_some_and(|j| {
                    j.as_object().is_some_and(|o| {
                        o.len() == 1
                            && o.get(istio::TERMINATION_DRAIN_DURATION)
                                .and_then(serde_json::Value::as_str)
                                .is_some_and(|s| d.drain.same_as(s))
                    })
                })
        }
        _ => false,
    };
    env::remove_items(ed, t, mesh, ours, out);
}
