//! Where Linkerd's manifests say which Linkerd injects the pods, which proxy it injects, and
//! whether proxies are native sidecars by default. Read in linkerd/linkerd2@b24cd4059841
//! (edge-26.8.3):
//!
//! - The `linkerd-control-plane` chart's values: `linkerdVersion`, which `bin/helm-build`
//!   sets to the edge tag when it packages the chart (`setValues 'linkerdVersionValue'
//!   "$fullVersion"`; the source tree holds the placeholder `linkerdVersionValue`);
//!   `proxy.image.version` (the proxy's tag, `linkerdVersion` by default);
//!   `proxy.nativeSidecar`; and `proxy.ports.admin`, the proxy's admin port (default 4191,
//!   `charts/linkerd-control-plane/values.yaml`), where it serves `/shutdown` and `/ready`
//!   (`charts/partials/templates/_proxy.tpl`, `LINKERD2_PROXY_ADMIN_LISTEN_ADDR`) unless a
//!   pod's `config.linkerd.io/admin-port` moves it (`pkg/inject/inject.go`).
//! - Edge charts are published as `YYYY.M.N` for `edge-YY.M.N`
//!   (`bin/compute-edge-version`), so a `HelmRelease` or `Application` of
//!   `linkerd-control-plane` pinned at `2026.5.2` installs `edge-26.5.2`.
//! - An injected pod carries the annotation `linkerd.io/proxy-version` (`pkg/k8s/labels.go`
//!   `ProxyVersionAnnotation`) beside its `linkerd-proxy` container.

use crate::config::MeshId;
use crate::mesh::found::{Finder, NativeMode, Value, Values, What, charts};
use crate::version::{Edge, Release};
use crate::yaml::tree::{Kind, Node};
use crate::yaml::value::{ScalarType, resolve};

const INJECTOR: What = What::Injector(MeshId::Linkerd);
const PROXY: What = What::Proxy(MeshId::Linkerd);
const NATIVE: What = What::Native(MeshId::Linkerd);
const QUIT_PORT: What = What::QuitPort(MeshId::Linkerd);
/// The Helm chart of Linkerd's control plane.
const CHART: &str = "linkerd-control-plane";
/// The annotation the injector writes with the proxy's version.
const PROXY_VERSION_ANNOTATION: &str = "linkerd.io/proxy-version";

/// Reads what one object says about Linkerd.
pub(crate) fn read(obj: &Node, f: &mut Finder<'_>) {
    if obj.str("apiVersion").is_none() && obj.str("kind").is_none() {
        if super::documents::is_values(obj) {
            values(Values::Map(obj), "", f);
        }
    } else {
        for c in charts(obj).iter().filter(|c| c.name == CHART) {
            if let Some((v, field)) = &c.version {
                let value = v.as_str().and_then(Edge::from_chart_version);
                f.push(
                    INJECTOR,
                    value.map(|e| Value::Release(Release::Edge(e))),
                    v,
                    field,
                );
            }
            for (vals, field) in &c.values {
                values(*vals, &format!("{field}: "), f);
            }
        }
        for (node, field) in crate::mesh::found::argo_values_text(obj, CHART) {
            f.embedded(node, |root, inner| {
                values(Values::Map(root), &format!("{field}: "), inner)
            });
        }
    }
    if f.src.contains(PROXY_VERSION_ANNOTATION) {
        injected(obj, f);
    }
}

/// The control-plane chart's values.
fn values(vals: Values<'_>, field: &str, f: &mut Finder<'_>) {
    if let Some(v) = vals.get("linkerdVersion") {
        f.release(INJECTOR, v, &format!("{field}linkerdVersion"));
    }
    if let Some(v) = vals.get("proxy.image.version") {
        f.release(PROXY, v, &format!("{field}proxy.image.version"));
    }
    if let Some(v) = vals.get("proxy.ports.admin") {
        f.port(QUIT_PORT, v, &format!("{field}proxy.ports.admin"));
    }
    if let Some(v) = vals.get(&format!(
        "{}.{}",
        super::VALUES_PROXY,
        super::VALUES_NATIVE_SIDECAR
    )) {
        // A boolean; anything else is linted where the values are edited.
        let mode = match &v.kind {
            Kind::Scalar { value, style }
                if resolve(value, *style, v.tag.as_deref(), v.empty) == ScalarType::Bool =>
            {
                Some(if value.eq_ignore_ascii_case("true") {
                    NativeMode::On
                } else {
                    NativeMode::Off
                })
            }
            _ => None,
        };
        f.push(
            NATIVE,
            mode.map(Value::Native),
            v,
            &format!("{field}proxy.nativeSidecar"),
        );
    }
}

/// The proxies of injected pods in `node` and below: the version annotation of a pod that
/// has a `linkerd-proxy` container.
fn injected(node: &Node, f: &mut Finder<'_>) {
    match &node.kind {
        Kind::Map(entries) => {
            let version = node.path(&["metadata", "annotations", PROXY_VERSION_ANNOTATION]);
            let has_proxy = node.get("spec").is_some_and(|s| {
                ["containers", "initContainers"].iter().any(|l| {
                    (s.get(l).and_then(Node::items).into_iter().flatten())
                        .any(|c| c.str("name") == Some(super::PROXY_CONTAINER))
                })
            });
            if let Some(v) = version.filter(|_| has_proxy) {
                f.release(PROXY, v, &format!("annotation {PROXY_VERSION_ANNOTATION}"));
            }
            for e in entries {
                injected(&e.value, f);
            }
        }
        Kind::Seq(items) => items.iter().for_each(|i| injected(i, f)),
        _ => {}
    }
}
