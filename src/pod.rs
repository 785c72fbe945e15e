//! The pod view: one type that answers "which containers, init containers, pod metadata and
//! `restartPolicy`, and at which paths" for a pod, however its kind stores it. Every stage
//! after `locate` reads pods through it, never `spec.containers` by hand.

use crate::finding::ObjectRef;
use crate::kinds::{Fallback, Fixes, RestartPolicy, Shape};
use crate::yaml::path::{Path, Seg, child, key};
use crate::yaml::tree::{Entry, Node};

/// One pod of an object: a pod template (or, for kinds whose controller writes the
/// containers, pod metadata), with the path to it.
#[derive(Debug)]
pub struct Pod<'d> {
    pub object: ObjectRef,
    /// The object's mapping node.
    pub object_node: &'d Node,
    /// The mapping at the end of the kind's pattern: a pod template (`metadata` + `spec`),
    /// or pod metadata.
    pub template: &'d Node,
    /// Path from the document root to [`Pod::template`].
    pub path: Path,
    pub(crate) shape: Shape,
    pub(crate) restart: RestartPolicy,
    /// The fixes the pod's kind allows (within those of the kind that embeds it, if any).
    pub fixes: Fixes,
    /// What the pod gets where native sidecars are impossible and the wrapper not allowed.
    pub fallback: Option<Fallback>,
    /// The kinds of pods made from this pod metadata with other metadata laid over it (an
    /// Argo Workflow's templates); empty when every pod gets the metadata as written.
    pub variants: Vec<Variant<'d>>,
    /// Annotations the pod gets from its Namespace document at injection, where the pod has
    /// none of its own (`Mesh::namespace_annotations`); filled in by `plan` from the run.
    pub inherited: Vec<Inherited>,
    /// Other holders of the pod (`plan::holders`) keep its wrapper while the mesh's own fix
    /// is not the wrapper: the mesh's planners then leave wrapped containers to them.
    pub keep_wrappers: bool,
}

/// An annotation a pod gets from its Namespace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Inherited {
    pub key: &'static str,
    pub value: String,
    /// The Namespace's name.
    pub namespace: String,
}

/// One kind of pod made from a pod's metadata with more metadata laid over it, key by key.
#[derive(Debug)]
pub struct Variant<'d> {
    /// Its name (an Argo template's), for messages.
    pub name: &'d str,
    /// The metadata mappings laid over the pod's, in order: the last one that has a key
    /// wins.
    pub layers: Vec<&'d Node>,
}

impl<'d> Variant<'d> {
    /// The value of `key` in the `place` (`labels` or `annotations`) of the layers, the
    /// last that has it.
    pub fn get(&self, place: &str, key: &str) -> Option<&'d str> {
        (self.layers.iter().rev()).find_map(|m| m.get(place)?.get(key)?.as_str())
    }
}

/// Which list of the pod spec a container is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum List {
    Containers,
    InitContainers,
}

impl List {
    pub fn key(self) -> &'static str {
        match self {
            List::Containers => "containers",
            List::InitContainers => "initContainers",
        }
    }
}

/// One container of a pod, with where it is.
#[derive(Clone, Copy, Debug)]
pub struct Container<'d> {
    pub node: &'d Node,
    pub list: List,
    /// Its index in the list.
    pub index: usize,
}

impl<'d> Container<'d> {
    /// Its `name`, or `""`.
    pub fn name(&self) -> &'d str {
        self.node.str("name").unwrap_or_default()
    }

    pub fn image(&self) -> Option<&'d str> {
        self.node.str("image")
    }

    pub fn get(&self, key: &str) -> Option<&'d Node> {
        self.node.get(key)
    }

    pub fn entry(&self, key: &str) -> Option<&'d Entry> {
        self.node.entry(key)
    }

    /// Whether it is a restartable init container (a native sidecar).
    pub fn is_native_sidecar(&self) -> bool {
        self.list == List::InitContainers && self.node.str("restartPolicy") == Some("Always")
    }
}

impl<'d> Pod<'d> {
    /// `Job/pi`: the object, for messages.
    pub fn describe(&self) -> String {
        crate::finding::describe(&self.object)
    }

    /// The mapping that holds the pod's metadata, the key it holds it under, and the key
    /// before which a new one goes (`""`: at the end); `None` when the pod's node is its
    /// metadata itself.
    pub fn metadata_holder(&self) -> Option<(&'d Node, &'static str, &'static str)> {
        match self.shape {
            Shape::Template | Shape::Object => Some((self.template, "metadata", "spec")),
            Shape::MetadataIn { key, before } => Some((self.template, key, before)),
            Shape::Metadata => None,
        }
    }

    /// For the pod of a `batch` CronJob (`spec.jobTemplate.spec.template`), a view of the
    /// Job template `spec.jobTemplate` whose metadata is its `metadata`, and which has no pod
    /// spec: `istioctl kube-inject` reads and writes a CronJob's `spec.jobTemplate.metadata`
    /// as the pod's (istio/istio@86c9f01fd735 `pkg/kube/inject/inject.go` `IntoObject`, the
    /// `*batch.CronJob` case), so a planner writes some of the pod's annotations there too.
    pub fn cronjob_job_template(&self) -> Option<Pod<'d>> {
        let template = self.job_template_node()?;
        let at = [key("spec"), key("jobTemplate")];
        Some(Pod {
            object: self.object.clone(),
            object_node: self.object_node,
            template,
            path: at.to_vec(),
            shape: Shape::MetadataIn {
                key: "metadata",
                before: "spec",
            },
            restart: self.restart,
            fixes: self.fixes,
            fallback: None,
            variants: Vec::new(),
            inherited: Vec::new(),
            keep_wrappers: self.keep_wrappers,
        })
    }

    /// The path the edits of this pod's fix lie under: the pod's own, or, for a `batch`
    /// CronJob, its `spec.jobTemplate` (see [`Pod::cronjob_job_template`]).
    pub fn edit_scope(&self) -> Path {
        match self.job_template_node() {
            Some(_) => vec![key("spec"), key("jobTemplate")],
            None => self.path.clone(),
        }
    }

    /// The `spec.jobTemplate` mapping of a `batch` CronJob's pod, without building its view
    /// ([`Pod::cronjob_job_template`]).
    pub fn job_template_node(&self) -> Option<&'d Node> {
        let in_batch = (self.object.api_version.split_once('/')).is_some_and(|(g, _)| g == "batch");
        let at = [
            key("spec"),
            key("jobTemplate"),
            key("spec"),
            key("template"),
        ];
        if !in_batch || self.object.kind != "CronJob" || self.path != at {
            return None;
        }
        let template = self.object_node.get("spec")?.get("jobTemplate")?;
        template.entries().map(|_| template)
    }

    /// The pod's metadata mapping node (`metadata` of a template; the node itself for pod
    /// metadata), if written.
    pub fn metadata(&self) -> Option<&'d Node> {
        match self.metadata_holder() {
            Some((holder, key, _)) => holder.get(key),
            None => Some(self.template),
        }
    }

    /// Path to the pod's metadata.
    pub fn metadata_path(&self) -> Path {
        match self.metadata_holder() {
            Some((_, key, _)) => child(&self.path, key),
            None => self.path.clone(),
        }
    }

    /// The pod's annotations mapping, if written.
    pub fn annotations(&self) -> Option<&'d Node> {
        self.metadata()?.get("annotations")
    }

    pub fn annotations_path(&self) -> Path {
        child(&self.metadata_path(), "annotations")
    }

    /// The pod's labels mapping, if written.
    pub fn labels(&self) -> Option<&'d Node> {
        self.metadata()?.get("labels")
    }

    /// The string value of annotation `key`.
    pub fn annotation(&self, key: &str) -> Option<&'d str> {
        self.annotations()?.str(key)
    }

    /// The value annotation `key` has for the mesh's injector: the pod's own, else the one
    /// its Namespace gives it, with that Namespace's name.
    pub fn effective_annotation(&self, key: &str) -> Option<(&str, Option<&str>)> {
        if let Some(v) = self.annotation(key) {
            return Some((v, None));
        }
        (self.inherited.iter())
            .find(|i| i.key == key)
            .map(|i| (i.value.as_str(), Some(i.namespace.as_str())))
    }

    /// The string value of label `key`.
    pub fn label(&self, key: &str) -> Option<&'d str> {
        self.labels()?.str(key)
    }

    /// The pod spec, if the kind's pods have one written.
    pub fn spec(&self) -> Option<&'d Node> {
        match self.shape {
            Shape::Template => self.template.get("spec"),
            Shape::Metadata | Shape::MetadataIn { .. } | Shape::Object => None,
        }
    }

    pub fn spec_path(&self) -> Path {
        child(&self.path, "spec")
    }

    /// Whether the containers are written in the object (not by the kind's controller).
    pub fn has_pod_spec(&self) -> bool {
        self.shape == Shape::Template
    }

    /// The containers of one list, when it is a list. A strategic-merge-patch directive
    /// among the items (kustomize, `kubectl patch`) is no container: an item whose `$patch`
    /// is `delete` removes the container of its name from the base, and an item holding only
    /// `$patch` (`- $patch: replace`) says how to merge the list; neither runs
    /// (kubernetes/kubernetes
    /// `staging/src/k8s.io/apimachinery/pkg/util/strategicpatch/patch.go`, `directiveMarker`,
    /// `deleteDirective`, `replaceDirective`).
    pub fn list(&self, list: List) -> impl Iterator<Item = Container<'d>> + use<'d> {
        let items = self
            .spec()
            .and_then(|s| s.get(list.key()))
            .and_then(Node::items)
            .unwrap_or(&[]);
        items
            .iter()
            .enumerate()
            .filter(|(_, node)| !is_patch_directive(node))
            .map(move |(index, node)| Container { node, list, index })
    }

    /// The regular containers.
    pub fn containers(&self) -> impl Iterator<Item = Container<'d>> + use<'d> {
        self.list(List::Containers)
    }

    /// The init containers.
    pub fn init_containers(&self) -> impl Iterator<Item = Container<'d>> + use<'d> {
        self.list(List::InitContainers)
    }

    /// The regular container named `name`, if there is one.
    pub fn container(&self, name: &str) -> Option<Container<'d>> {
        self.containers().find(|c| c.name() == name)
    }

    /// The path to list `list` of the pod spec.
    pub fn list_path(&self, list: List) -> Path {
        let mut p = Vec::with_capacity(self.path.len() + 3);
        p.extend_from_slice(&self.path);
        p.extend([key("spec"), key(list.key())]);
        p
    }

    /// The path to a container.
    pub fn container_path(&self, c: &Container<'_>) -> Path {
        let mut p = self.list_path(c.list);
        p.push(Seg::Index(c.index));
        p
    }

    /// The pod's `restartPolicy`, read where its kind keeps it.
    pub fn restart_policy(&self) -> RestartPolicy {
        self.restart
    }

    /// Whether the pod spec's boolean `key` (`hostNetwork`, `shareProcessNamespace`) is true
    /// as Kubernetes reads it: `true`, `True`, `yes`, `on`, ... ([`crate::yaml::value::is_true`]).
    pub fn spec_true(&self, key: &str) -> bool {
        self.spec()
            .and_then(|s| s.get(key))
            .is_some_and(crate::yaml::value::is_true)
    }
}

/// The key of a strategic-merge-patch directive in a list item.
const PATCH_DIRECTIVE: &str = "$patch";

/// Whether a list item is a strategic-merge-patch directive rather than an element: its
/// `$patch` is `delete`, or it has no key but `$patch`.
fn is_patch_directive(item: &Node) -> bool {
    let Some(entries) = item.entries() else {
        return false;
    };
    let directive = |e: &Entry| e.key.as_str() == Some(PATCH_DIRECTIVE);
    item.str(PATCH_DIRECTIVE) == Some("delete")
        || (!entries.is_empty() && entries.iter().all(directive))
}
