//! Where Istio's manifests say which Istio injects the pods (istiod), which proxy it injects,
//! and whether istiod makes every proxy a native sidecar. Read in istio/istio@86c9f01fd735
//! (1.31.0-rc.0) unless another tag is named:
//!
//! - IstioOperator (`operator/pkg/apis/types.go` `IstioOperatorSpec`): `spec.tag` becomes
//!   the Helm value `global.tag`, `spec.revision` `revision` and `spec.compatibilityVersion`
//!   `compatibilityVersion` (`operator/pkg/render/manifest.go`
//!   `translateIstioOperatorToHelm`); `spec.components.pilot.tag` overrides the tag for
//!   istiod; `spec.components.pilot.k8s.env` is a strategic-merge patch of the rendered
//!   istiod Deployment's env (`operator/pkg/render/postprocess.go`), so it wins over values.
//! - istiod Helm values (`manifests/charts/istio-control/istio-discovery`): the Deployment's
//!   image is `{hub}/{image|pilot}:{tag | global.tag}` (`templates/deployment.yaml`); the
//!   injected proxy is `{global.hub}/proxyv2:{global.tag}` (`pkg/kube/inject/inject.go`
//!   `ProxyImage`); `pilot.*` is copied onto the top level after the profiles are merged
//!   (`templates/zzy_descope_legacy.yaml`), so `pilot.tag` is `tag` and `pilot.env` wins over
//!   `env`. `compatibilityVersion` merges `files/profile-compatibility-version-X.Y.yaml`
//!   before the user's values (`templates/zzz_profile.yaml`): the 1.25 and 1.26 profiles (and
//!   1.24 at 1.27.0) set `pilot.env.ENABLE_NATIVE_SIDECARS: "false"`, so a user's
//!   `pilot.env.ENABLE_NATIVE_SIDECARS` wins over the profile but a top-level
//!   `env.ENABLE_NATIVE_SIDECARS` does not.
//! - `ENABLE_NATIVE_SIDECARS` (`pilot/pkg/features/pilot.go`): `"true"`, `"false"` or `"auto"`
//!   (the default since 1.27.0; any other value is off).
//! - The rendered `istiod[-<revision>]` Deployment (container `discovery`) and the
//!   `istio-sidecar-injector[-<revision>]` ConfigMap, whose `data.values` holds the values
//!   the injector uses: `global` (the proxy's tag), `revision`, and `pilot.env`
//!   (`templates/istiod-injector-configmap.yaml`).
//! - Sail's `Istio` and `IstioRevision` (sailoperator.io; istio-ecosystem/sail-operator@328df99dc9fc
//!   `api/v1/istio_types.go`): `spec.version` is `vX.Y.Z`, `vX.Y-latest`, `master` or a
//!   pre-release; omitted, the operator's default applies, unknown offline. `spec.values`
//!   are the istiod chart's values (`api/v1/values_types.gen.go`).
//! - An injected pod: its `istio-proxy` container runs `.../proxyv2:TAG`, and the injector
//!   marks the pod with the annotation `sidecar.istio.io/status`
//!   (`pkg/kube/inject/webhook.go`), which a gateway's `istio-proxy` lacks.
//! - The mesh-wide status port, where pilot-agent serves `/quitquitquit` unless a pod moves
//!   it: MeshConfig's `defaultConfig.statusPort` (default 15020, `pkg/config/mesh/mesh.go`
//!   `DefaultProxyConfig`), which the injector merges into each proxy's `PROXY_CONFIG`
//!   (`pkg/kube/inject/inject.go`) and pilot-agent applies first
//!   (`pilot/cmd/pilot-agent/config/config.go` `ConstructProxyConfig`). It is given as the
//!   IstioOperator's `spec.meshConfig` (over `spec.values.meshConfig`), the istiod chart's
//!   `meshConfig` value, or the mesh ConfigMap `istio[-<revision>]`'s `data.mesh`
//!   (`templates/configmap.yaml`). The chart's `global.proxy.statusPort` only fills the
//!   injected pod's `excludeInboundPorts` and `--debug-port`
//!   (`files/injection-template.yaml`): pilot-agent does not listen there.
//! - Revision names: istioctl's `1-24-2`, the AKS add-on's `asm-1-24` ("asm-x-y" is Istio x.y),
//!   Sail's RevisionBased `<name>-v1-24-2` (`controllers/istio/istio_controller.go`
//!   `getActiveRevisionName`: the name, `-`, and the version with dots as dashes).

use crate::config::MeshId;
use crate::mesh::found::{
    Chart, Finder, NativeMode, Value, Values, What, charts, image_tag, repo_is,
};
use crate::version::{Release, Version};
use crate::yaml::tree::Node;

const INJECTOR: What = What::Injector(MeshId::Istio);
const PROXY: What = What::Proxy(MeshId::Istio);
const NATIVE: What = What::Native(MeshId::Istio);
const QUIT_PORT: What = What::QuitPort(MeshId::Istio);
/// The mesh-wide status port under MeshConfig.
const STATUS_PORT: &str = "defaultConfig.statusPort";
/// The istiod env that sets the global native-sidecar mode.
const NATIVE_ENV: &str = "ENABLE_NATIVE_SIDECARS";
/// The Helm chart of istiod.
const CHART: &str = "istiod";
/// The annotation the injector writes on each pod it injects.
const STATUS_ANNOTATION: &str = "sidecar.istio.io/status";

/// Reads what one object says about Istio.
pub(crate) fn read(obj: &Node, f: &mut Finder<'_>) {
    let api = obj.str("apiVersion");
    let group = api.map(|a| a.split_once('/').map_or("", |(g, _)| g));
    match (group, obj.str("kind")) {
        (Some(super::ISTIO_OPERATOR_GROUP), Some(super::ISTIO_OPERATOR_KIND)) => operator(obj, f),
        (Some(super::SAIL_GROUP), Some(super::SAIL_ISTIO_KIND | super::SAIL_REVISION_KIND)) => {
            sail(obj, f);
        }
        (Some("apps"), Some("Deployment")) => deployment(obj, f),
        (Some(""), Some("ConfigMap")) => {
            injector_config_map(obj, f);
            mesh_config_map(obj, f);
        }
        (Some(""), Some("Namespace")) => {
            let rev = obj.path(&["metadata", "labels", super::REVISION_LABEL]);
            if let Some(rev) = rev {
                revision(rev, &format!("label {}", super::REVISION_LABEL), f);
            }
        }
        (None, None) if is_values(obj) => values(Values::Map(obj), "", f),
        _ => {
            for c in charts(obj).iter().filter(|c| c.name == CHART) {
                chart(c, f);
            }
            for (node, field) in crate::mesh::found::argo_values_text(obj, CHART) {
                f.embedded(node, |root, inner| {
                    values(Values::Map(root), &format!("{field}: "), inner)
                });
            }
        }
    }
    if f.src.contains("proxyv2") {
        injected(obj, "", f);
    }
}

/// The sort key of an Istio release: its version (Istio has no edge releases).
pub(crate) fn age(r: Release) -> [u32; 4] {
    match r {
        Release::Stable(v) => [v.major, v.minor, 0, 0],
        Release::Edge(_) => [0; 4],
    }
}

/// Whether a document without a kind holds istiod Helm values: keys the chart reads that
/// other charts' values rarely have together.
fn is_values(obj: &Node) -> bool {
    let global = obj.get("global");
    let istio_global = global.is_some_and(|g| {
        ["istioNamespace", "meshID", "proxy", "proxy_init", "istiod"]
            .iter()
            .any(|k| g.get(k).is_some())
    });
    istio_global
        || obj.get(super::MESH_CONFIG).is_some()
        || obj.get("pilot").is_some_and(|p| p.entries().is_some())
        || obj.get("compatibilityVersion").is_some()
}

fn operator(obj: &Node, f: &mut Finder<'_>) {
    let Some(spec) = obj.get("spec") else { return };
    let pilot = spec.path(&["components", "pilot"]);
    let pilot_tag = pilot.and_then(|p| p.get("tag"));
    let tag = spec.get("tag");
    let vals = spec.get("values").filter(|v| v.entries().is_some());
    // `spec.tag` is set over `values.global.tag`; `components.pilot.tag` over both, for istiod.
    let global_tag = tag.map(|t| (t, "spec.tag")).or_else(|| {
        vals.and_then(|v| v.path(&["global", "tag"]))
            .map(|t| (t, "spec.values.global.tag"))
    });
    let values_tag = vals.and_then(|v| Values::Map(v).get("pilot.tag").or_else(|| v.get("tag")));
    match (pilot_tag, values_tag, global_tag) {
        (Some(t), _, _) => f.release(INJECTOR, t, "spec.components.pilot.tag"),
        (None, Some(t), _) => f.release(INJECTOR, t, "spec.values.pilot.tag"),
        (None, None, Some((t, field))) => f.release(INJECTOR, t, field),
        _ => {}
    }
    if let Some((t, field)) = global_tag {
        f.release(PROXY, t, field);
    }
    if let Some(rev) = spec.get("revision") {
        revision(rev, "spec.revision", f);
    }
    // `spec.meshConfig` is set over `spec.values.meshConfig`.
    let mesh = [
        (spec.get(super::MESH_CONFIG), "spec.meshConfig."),
        (
            vals.and_then(|v| v.get(super::MESH_CONFIG)),
            "spec.values.meshConfig.",
        ),
    ];
    if let Some((port, field)) = mesh
        .into_iter()
        .find_map(|(m, field)| Some((Values::Map(m?).get(STATUS_PORT)?, field)))
    {
        f.port(QUIT_PORT, port, &format!("{field}{STATUS_PORT}"));
    }
    let patched = (pilot
        .and_then(|p| p.path(&["k8s", "env"]))
        .and_then(Node::items))
    .into_iter()
    .flatten()
    .find(|e| e.str("name") == Some(NATIVE_ENV))
    .and_then(|e| e.get("value"));
    if let Some(v) = patched {
        native_env(v, &format!("spec.components.pilot.k8s.env {NATIVE_ENV}"), f);
        return;
    }
    let compat = spec
        .get("compatibilityVersion")
        .map(|c| (c, "spec.compatibilityVersion"));
    native_of_values(vals.map(Values::Map), compat, "spec.values.", f);
}

fn sail(obj: &Node, f: &mut Finder<'_>) {
    let Some(spec) = obj.get("spec") else { return };
    if let Some(v) = spec.get("version") {
        f.release(INJECTOR, v, "spec.version");
    }
    let Some(vals) = spec.get("values").filter(|v| v.entries().is_some()) else {
        return;
    };
    if let Some(t) = vals.path(&["global", "tag"]) {
        f.release(PROXY, t, "spec.values.global.tag");
    }
    status_port_of_values(Values::Map(vals), "spec.values.", f);
    native_of_values(Some(Values::Map(vals)), None, "spec.values.", f);
}

/// The rendered istiod Deployment: its `discovery` container's image and env.
fn deployment(obj: &Node, f: &mut Finder<'_>) {
    let name = obj
        .path(&["metadata", "name"])
        .and_then(Node::as_str)
        .unwrap_or_default();
    if name != "istiod" && !name.starts_with("istiod-") {
        return;
    }
    let containers = obj
        .path(&["spec", "template", "spec", "containers"])
        .and_then(Node::items);
    for c in containers.into_iter().flatten() {
        let Some(image) = c.get("image") else {
            continue;
        };
        let Some((repo, tag)) = image.as_str().and_then(image_tag) else {
            continue;
        };
        if c.str("name") != Some("discovery") && !repo_is(repo, "pilot") {
            continue;
        }
        let value = Release::read(tag).map(Value::Release);
        f.push(INJECTOR, value, image, "image");
        let env = (c.get("env").and_then(Node::items))
            .into_iter()
            .flatten()
            .find(|e| e.str("name") == Some(NATIVE_ENV))
            .and_then(|e| e.get("value"));
        if let Some(v) = env {
            native_env(v, &format!("env {NATIVE_ENV}"), f);
        }
    }
}

/// The `istio-sidecar-injector[-<revision>]` ConfigMap: the values the injector uses.
fn injector_config_map(obj: &Node, f: &mut Finder<'_>) {
    let name = obj
        .path(&["metadata", "name"])
        .and_then(Node::as_str)
        .unwrap_or_default();
    if name != "istio-sidecar-injector" && !name.starts_with("istio-sidecar-injector-") {
        return;
    }
    if let Some(v) = obj.path(&["data", "values"]) {
        f.embedded(v, |root, inner| {
            let vals = Values::Map(root);
            if let Some(t) = vals.get("global.tag") {
                inner.release(PROXY, t, "data.values: global.tag");
            }
            if let Some(rev) = root.get("revision") {
                revision(rev, "data.values: revision", inner);
            }
            native_of_values(Some(vals), None, "data.values: ", inner);
        });
    }
}

/// istiod Helm values, wherever they are given: a values file, a `HelmRelease`'s or an
/// `Application`'s. `field` is what comes before each key in messages.
fn values(vals: Values<'_>, field: &str, f: &mut Finder<'_>) {
    let tag = vals
        .get("pilot.tag")
        .map(|t| (t, "pilot.tag"))
        .or_else(|| vals.get("tag").map(|t| (t, "tag")));
    let global_tag = vals.get("global.tag");
    match (tag, global_tag) {
        (Some((t, k)), _) => f.release(INJECTOR, t, &format!("{field}{k}")),
        (None, Some(t)) => f.release(INJECTOR, t, &format!("{field}global.tag")),
        _ => {}
    }
    if let Some(t) = global_tag {
        f.release(PROXY, t, &format!("{field}global.tag"));
    }
    if let Some(rev) = vals.get("revision") {
        revision(rev, &format!("{field}revision"), f);
    }
    status_port_of_values(vals, field, f);
    native_of_values(Some(vals), None, field, f);
}

/// The mesh-wide status port in istiod Helm values (`meshConfig.defaultConfig.statusPort`).
fn status_port_of_values(vals: Values<'_>, field: &str, f: &mut Finder<'_>) {
    let key = format!("{}.{STATUS_PORT}", super::MESH_CONFIG);
    if let Some(port) = vals.get(&key) {
        f.port(QUIT_PORT, port, &format!("{field}{key}"));
    }
}

/// The mesh ConfigMap (`istio[-<revision>]`): MeshConfig as YAML text in `data.mesh`.
fn mesh_config_map(obj: &Node, f: &mut Finder<'_>) {
    let name = obj.path(&["metadata", "name"]).and_then(Node::as_str);
    if !name.is_some_and(super::is_mesh_configmap_name) {
        return;
    }
    let Some(mesh) = obj.path(&["data", super::MESH_CONFIGMAP_KEY]) else {
        return;
    };
    f.embedded(mesh, |root, inner| {
        if let Some(port) = Values::Map(root).get(STATUS_PORT) {
            let field = format!("data.{}: {STATUS_PORT}", super::MESH_CONFIGMAP_KEY);
            inner.port(QUIT_PORT, port, &field);
        }
    });
}

/// The istiod chart installed by a `HelmRelease` or an `Application`, at a pinned version
/// (a semver range, or none, is unknown).
fn chart(c: &Chart<'_>, f: &mut Finder<'_>) {
    if let Some((v, field)) = &c.version {
        f.release(INJECTOR, v, field);
    }
    for (vals, field) in &c.values {
        values(*vals, &format!("{field}: "), f);
    }
}

/// The global native mode that values give: `pilot.env` wins over a compatibility profile,
/// which wins over `env` (see the module's notes). `compat`: a `compatibilityVersion` given
/// outside the values (IstioOperator's `spec.compatibilityVersion`).
fn native_of_values(
    vals: Option<Values<'_>>,
    compat: Option<(&Node, &str)>,
    field: &str,
    f: &mut Finder<'_>,
) {
    let get = |k: &str| vals.and_then(|v| v.get(k));
    let key = format!("env.{NATIVE_ENV}");
    if let Some(v) = get(&format!("pilot.{key}")) {
        return native_env(v, &format!("{field}pilot.{key}"), f);
    }
    let compat = compat.map(|(n, k)| (n, k.to_string())).or_else(|| {
        get("compatibilityVersion").map(|n| (n, format!("{field}compatibilityVersion")))
    });
    if let Some((node, k)) = compat {
        // Every compatibility profile of a release before 1.27 keeps native sidecars off:
        // before 1.27 that was the default, and from 1.27 the 1.24 to 1.26 profiles set it.
        let old = node
            .as_str()
            .and_then(Version::read)
            .is_some_and(|v| v < Version::new(1, 27));
        if old {
            f.push(NATIVE, Some(Value::Native(NativeMode::Off)), node, &k);
            return;
        }
    }
    if let Some(v) = get(&key) {
        native_env(v, &format!("{field}{key}"), f);
    }
}

/// An `ENABLE_NATIVE_SIDECARS` value: `true`, `false`, `auto`; any other is not known.
fn native_env(v: &Node, field: &str, f: &mut Finder<'_>) {
    let mode = match v.as_str() {
        Some("true") => Some(NativeMode::On),
        Some("false") => Some(NativeMode::Off),
        Some("auto") => Some(NativeMode::Auto),
        _ => None,
    };
    f.push(NATIVE, mode.map(Value::Native), v, field);
}

/// A revision name that spells a version gives the injector's; a free name (`canary`) says
/// nothing and is not recorded.
fn revision(node: &Node, field: &str, f: &mut Finder<'_>) {
    if let Some(v) = node.as_str().and_then(revision_version) {
        f.push(
            INJECTOR,
            Some(Value::Release(Release::Stable(v))),
            node,
            field,
        );
    }
}

/// The version a revision name spells at its end: `1-24-2`, `asm-1-24`, `default-v1-24-2`,
/// `default-v1-30-latest`. Revisions came with Istio 1.6, so an older minor is taken for a
/// free name.
pub(crate) fn revision_version(name: &str) -> Option<Version> {
    let parts: Vec<&str> = name.split('-').collect();
    let n = parts.len();
    let num = |p: &str| {
        (!p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            .then(|| p.parse::<u32>().ok())
            .flatten()
    };
    let tail = match parts.last() {
        Some(&"latest") => 1,
        _ => 0,
    };
    for len in [3, 2] {
        if n < len + tail {
            continue;
        }
        let at = n - tail - len;
        let major = parts[at].strip_prefix('v').unwrap_or(parts[at]);
        let rest = &parts[at + 1..n - tail];
        if num(major) != Some(1) || !rest.iter().all(|p| num(p).is_some()) {
            continue;
        }
        let minor = num(rest[0])?;
        return (minor >= 6).then_some(Version::new(1, minor));
    }
    None
}

/// The proxies of injected pods in `node` and below: an `istio-proxy` container running
/// `proxyv2` in a pod the injector marked. `at` starts the field's name.
fn injected(node: &Node, at: &str, f: &mut Finder<'_>) {
    match &node.kind {
        crate::yaml::tree::Kind::Map(entries) => {
            let marked = node
                .path(&["metadata", "annotations", STATUS_ANNOTATION])
                .is_some();
            let spec = node.get("spec");
            if marked && let Some(spec) = spec {
                for list in ["containers", "initContainers"] {
                    for c in spec.get(list).and_then(Node::items).into_iter().flatten() {
                        if c.str("name") != Some(super::PROXY_CONTAINER) {
                            continue;
                        }
                        let Some(image) = c.get("image") else {
                            continue;
                        };
                        let Some((repo, tag)) = image.as_str().and_then(image_tag) else {
                            continue;
                        };
                        if repo_is(repo, "proxyv2") {
                            let value = Release::read(tag).map(Value::Release);
                            let field = format!("{at}image of injected container istio-proxy");
                            f.push(PROXY, value, image, &field);
                        }
                    }
                }
            }
            for e in entries {
                injected(&e.value, at, f);
            }
        }
        crate::yaml::tree::Kind::Seq(items) => {
            for item in items {
                injected(item, at, f);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revision_names() {
        let v = |m| Some(Version::new(1, m));
        assert_eq!(revision_version("1-24-2"), v(24));
        assert_eq!(revision_version("1-24"), v(24));
        assert_eq!(revision_version("asm-1-24"), v(24));
        assert_eq!(revision_version("default-v1-24-2"), v(24));
        assert_eq!(revision_version("default-v1-30-latest"), v(30));
        for free in [
            "canary",
            "default",
            "stable",
            "prod-1",
            "1-2",
            "v2-1-3",
            "1-24-2-3-x",
            "",
        ] {
            assert_eq!(revision_version(free), None, "{free}");
        }
    }
}
