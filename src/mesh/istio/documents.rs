//! Istio's mesh-wide configuration documents, recognised: where a document keeps
//! MeshConfig, or why it is not edited though it looks like one.
//!
//! Locations: an IstioOperator's `spec.meshConfig`, the `istio` / `istio-<rev>` ConfigMap's
//! `data.mesh` string, istiod Helm values (`meshConfig`), a Sail `Istio` CR
//! (`spec.values.meshConfig`) and a bare MeshConfig file. What meshjob writes there is the
//! Istio planner's.

use crate::finding::object_ref;
use crate::locate::objects;
use crate::mesh::facts::ConfigRole;
use crate::mesh::istio;
use crate::yaml::tree::Node;

/// Where a document keeps its MeshConfig.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Location {
    /// `spec.meshConfig` (or `spec.values.meshConfig` when only that is written).
    Operator,
    /// `data.mesh`, a string holding MeshConfig YAML.
    ConfigMap,
    /// Top-level `meshConfig` of istiod Helm values.
    HelmValues,
    /// `spec.values.meshConfig` of a Sail `Istio` CR.
    Sail,
    /// The document is a MeshConfig.
    Bare,
}

/// What to do with one object.
pub(crate) enum Verdict {
    Edit(Location),
    /// Looks like mesh configuration but is not edited; the reason is shown as an info.
    LeaveAlone(String),
    /// Nothing mesh-related.
    Ignore,
}

/// Whether a document holds an object that the planner edits or reports on.
pub(crate) fn holds(root: &Node, force_mesh: bool) -> bool {
    objects(root)
        .into_iter()
        .any(|(obj, _, listed)| !matches!(classify(obj, force_mesh && !listed), Verdict::Ignore))
}

fn group(api_version: &str) -> &str {
    api_version.split_once('/').map_or("", |(g, _)| g)
}

pub(crate) fn classify(obj: &Node, force_mesh: bool) -> Verdict {
    let api = obj.str("apiVersion");
    let kind = obj.str("kind");
    let (Some(api), Some(kind)) = (api, kind) else {
        return match (api, kind) {
            (None, None) => classify_untyped(obj, force_mesh),
            _ => Verdict::Ignore,
        };
    };
    let mesh = &istio::MESH;
    let Some(found) = mesh.config_kind(group(api), kind) else {
        return Verdict::Ignore;
    };
    match found.role {
        ConfigRole::Operator => Verdict::Edit(Location::Operator),
        ConfigRole::Values => Verdict::Edit(Location::Sail),
        ConfigRole::Generated => Verdict::LeaveAlone(
            "the Sail operator writes IstioRevision objects from the Istio CR and reverts \
             edits; set spec.values.meshConfig in the Istio CR instead; left alone"
                .to_string(),
        ),
        ConfigRole::ConfigMap if api == "v1" => {
            let name = object_ref(obj).name;
            if !(mesh.is_config_map_name)(&name) {
                return Verdict::Ignore;
            }
            let data = obj.get("data");
            let has = |k: &str| data.is_some_and(|d| d.get(k).is_some());
            if has(istio::MESH_CONFIGMAP_KEY) {
                Verdict::Edit(Location::ConfigMap)
            } else if name != "istio" && !has(istio::MESH_NETWORKS_KEY) {
                // istio-galley-configuration, istio-ca-root-cert, ...: other istio-* maps.
                Verdict::Ignore
            } else {
                Verdict::LeaveAlone(format!(
                    "no data.{} key, so not a mesh config; left alone",
                    istio::MESH_CONFIGMAP_KEY
                ))
            }
        }
        ConfigRole::ConfigMap => Verdict::Ignore,
    }
}

/// A document without apiVersion and kind: istiod Helm values, a bare MeshConfig, or
/// something else.
fn classify_untyped(obj: &Node, force_mesh: bool) -> Verdict {
    let entries = obj.entries().unwrap_or(&[]);
    if obj.get(istio::MESH_CONFIG).is_some() {
        return Verdict::Edit(Location::HelmValues);
    }
    if obj
        .get(istio::HELM_INTERNAL_DEFAULTS)
        .is_some_and(|n| n.get(istio::MESH_CONFIG).is_some())
    {
        return Verdict::LeaveAlone(format!(
            "these are the istiod chart's built-in defaults ({}.{}); set {} in your own values \
             file instead; left alone",
            istio::HELM_INTERNAL_DEFAULTS,
            istio::MESH_CONFIG,
            istio::MESH_CONFIG
        ));
    }
    if force_mesh {
        return Verdict::Edit(Location::Bare);
    }
    let keys: Vec<&str> = entries.iter().filter_map(|e| e.key.key_str()).collect();
    let others: Vec<&str> = keys
        .iter()
        .copied()
        .filter(|k| !istio::is_mesh_config_field(k))
        .collect();
    if !keys.is_empty() && keys.len() == entries.len() && others.is_empty() {
        return Verdict::Edit(Location::Bare);
    }
    if keys.contains(&istio::DEFAULT_CONFIG) {
        return Verdict::LeaveAlone(format!(
            "has `{}` but also keys that are not MeshConfig fields ({}), so it may not be a \
             mesh config; left alone (pass --mesh-config to edit it as one)",
            istio::DEFAULT_CONFIG,
            others.join(", ")
        ));
    }
    Verdict::Ignore
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::tree::parse_stream;

    fn verdict(src: &str, force: bool) -> &'static str {
        let docs = parse_stream(src).unwrap();
        match classify(&docs[0].root, force) {
            Verdict::Edit(Location::Operator) => "operator",
            Verdict::Edit(Location::ConfigMap) => "configmap",
            Verdict::Edit(Location::HelmValues) => "helm",
            Verdict::Edit(Location::Sail) => "sail",
            Verdict::Edit(Location::Bare) => "bare",
            Verdict::LeaveAlone(_) => "alone",
            Verdict::Ignore => "ignore",
        }
    }

    #[test]
    fn detection() {
        let iop = "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\n";
        assert_eq!(verdict(iop, false), "operator");
        let sail = "apiVersion: sailoperator.io/v1\nkind: Istio\n";
        assert_eq!(verdict(sail, false), "sail");
        let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: istio-rev}\ndata: {mesh: ''}\n";
        assert_eq!(verdict(cm, false), "configmap");
        let other_cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: istio-x}\ndata: {a: b}\n";
        assert_eq!(verdict(other_cm, false), "ignore");
        assert_eq!(verdict("meshConfig: {}\nglobal: {}\n", false), "helm");
        assert_eq!(
            verdict("defaultConfig: {}\nenableTracing: true\n", false),
            "bare"
        );
        assert_eq!(verdict("defaultConfig: {}\nreplicas: 1\n", false), "alone");
        assert_eq!(verdict("defaultConfig: {}\nreplicas: 1\n", true), "bare");
        // Unrelated YAML without apiVersion/kind never fires on its own.
        assert_eq!(verdict("resources:\n- a.yaml\n", false), "ignore");
        assert_eq!(verdict("replicaCount: 1\nimage: {}\n", false), "ignore");
        assert_eq!(
            verdict("accessLogFile: x\nresources: {}\n", false),
            "ignore"
        );
        let job = "apiVersion: batch/v1\nkind: Job\n";
        assert_eq!(verdict(job, true), "ignore");
    }
}
