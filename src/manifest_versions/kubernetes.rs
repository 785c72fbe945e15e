//! Where manifests say which Kubernetes runs the pods: every kubelet's version, or a control
//! plane's, which bounds its kubelets from below (`Kubelets::of_control_plane`).
//!
//! - A `v1` `Node`: `status.nodeInfo.kubeletVersion`. `kubectl get nodes -o yaml` writes a
//!   `v1` `List` of them (kubernetes/kubernetes@873c3ca26a00
//!   `staging/src/k8s.io/kubectl/pkg/cmd/get/get.go` `printGeneric`: several items, or a
//!   list, are printed as `kind: List`, `apiVersion: v1`, with the objects as `items`); the
//!   API's own `NodeList` has them as `items` too.
//! - Cluster API (cluster.x-k8s.io; kubernetes-sigs/cluster-api@ae7ff047db49, v1beta1 and
//!   v1beta2): a `MachineDeployment`'s or `MachinePool`'s `spec.template.spec.version` is
//!   its machines' Kubernetes (`api/core/v1beta2/machine_types.go` `MachineSpec.Version`);
//!   `KubeadmControlPlane.spec.version` (controlplane.cluster.x-k8s.io) and a `Cluster`'s
//!   `spec.topology.version` (ClusterClass) are the control plane's, which the node pools
//!   follow. Templates often say `${KUBERNETES_VERSION}`: unknown.
//! - kind (kind.x-k8s.io; kubernetes-sigs/kind@fed268827e21 `pkg/apis/config/v1alpha4/types.go`):
//!   a `Cluster`'s `nodes[].image`, `kindest/node:vX.Y.Z[@sha256:...]`; a node without an
//!   image gets kind's default, unknown offline.

use crate::mesh::found::{Finder, Value, What, image_tag, repo_is};
use crate::version::Version;
use crate::yaml::tree::Node;

/// Reads what one object says about Kubernetes.
pub(super) fn read(obj: &Node, f: &mut Finder<'_>) {
    let api = obj.str("apiVersion").unwrap_or_default();
    let group = api.split_once('/').map_or("", |(g, _)| g);
    let spec = obj.get("spec");
    match (group, obj.str("kind").unwrap_or_default()) {
        ("", "Node") if api == "v1" => {
            if let Some(v) = obj.path(&["status", "nodeInfo", "kubeletVersion"]) {
                kube(What::Kubelet, v, "status.nodeInfo.kubeletVersion", f);
            }
        }
        ("", "NodeList") if api == "v1" => {
            for item in obj.get("items").and_then(Node::items).into_iter().flatten() {
                f.object = crate::finding::describe(&crate::finding::object_ref(item));
                read(item, f);
            }
        }
        ("cluster.x-k8s.io", "MachineDeployment" | "MachinePool") => {
            if let Some(v) = spec.and_then(|s| s.path(&["template", "spec", "version"])) {
                kube(What::Kubelet, v, "spec.template.spec.version", f);
            }
        }
        ("controlplane.cluster.x-k8s.io", "KubeadmControlPlane") => {
            if let Some(v) = spec.and_then(|s| s.get("version")) {
                kube(What::ControlPlane, v, "spec.version", f);
            }
        }
        ("cluster.x-k8s.io", "Cluster") => {
            if let Some(v) = spec.and_then(|s| s.path(&["topology", "version"])) {
                kube(What::ControlPlane, v, "spec.topology.version", f);
            }
        }
        ("kind.x-k8s.io", "Cluster") => {
            for n in obj.get("nodes").and_then(Node::items).into_iter().flatten() {
                let Some(image) = n.get("image") else {
                    continue;
                };
                let Some((repo, tag)) = image.as_str().and_then(image_tag) else {
                    continue;
                };
                if repo_is(repo, "kindest/node") {
                    let value = Version::read(tag).map(Value::Kubernetes);
                    f.push(What::Kubelet, value, image, "nodes[].image");
                }
            }
        }
        _ => {}
    }
}

fn kube(what: What, v: &Node, field: &str, f: &mut Finder<'_>) {
    let value = v.as_str().and_then(Version::read).map(Value::Kubernetes);
    f.push(what, value, v, field);
}
