//! Which mesh injects a pod: its own markers (injection labels and annotations, an injected
//! proxy container), else those of its Namespace, else the `mesh` setting.

use super::Why;
use crate::config::MeshId;
use crate::mesh::{self, Marker, MarkerKey, MarkerPlace, Mesh};
use crate::pod::{Inherited, Pod};
use crate::version::Release;
use crate::yaml::tree::Node;
use std::collections::BTreeMap;

/// One mesh marker that was read: what it says and where, for messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MarkerSeen {
    pub mesh: MeshId,
    pub marker: Marker,
    /// `label sidecar.istio.io/inject: "false"`, `container linkerd-proxy`.
    pub what: String,
}

/// What `keys` (and, for a pod, an injected proxy container) say about `mesh` at one level.
/// An `Off` wins over an `On` at the same level, as a pod's opt-out wins in each injector.
fn level(
    mesh: &Mesh,
    meta: Option<&Node>,
    keys: &[MarkerKey],
    pod: Option<&Pod<'_>>,
    release: Option<Release>,
) -> Option<MarkerSeen> {
    let lookup = |place: &str, key: &str| {
        meta.and_then(|m| m.get(place))
            .and_then(|l| l.get(key))
            .and_then(Node::as_str)
    };
    level_by(mesh, &lookup, keys, pod, release)
}

/// [`level`], reading each key's value in `labels` or `annotations` with `lookup`: for
/// metadata laid in layers (`pod::Variant`). `release` is the mesh's, which some keys'
/// values depend on (unknown: what every release reads alike).
pub(super) fn level_by<'n>(
    mesh: &Mesh,
    lookup: &dyn Fn(&str, &str) -> Option<&'n str>,
    keys: &[MarkerKey],
    pod: Option<&Pod<'_>>,
    release: Option<Release>,
) -> Option<MarkerSeen> {
    let mut found: Vec<(Marker, String)> = Vec::new();
    for k in keys {
        let label = || lookup("labels", k.key).map(|v| ("label", v));
        let annotation = || lookup("annotations", k.key).map(|v| ("annotation", v));
        let hit = match k.place {
            MarkerPlace::Label => label(),
            MarkerPlace::Annotation => annotation(),
            MarkerPlace::LabelThenAnnotation => label().or_else(annotation),
        };
        if let Some((place, v)) = hit
            && let Some(m) = k.read(v, release)
        {
            found.push((m, format!("{place} {}: \"{v}\"", k.key)));
        }
    }
    let injected = pod.is_some_and(|p| {
        (p.containers().chain(p.init_containers())).any(|c| c.name() == mesh.proxy_container)
    });
    if injected {
        found.push((Marker::On, format!("container {}", mesh.proxy_container)));
    }
    let pick = found
        .iter()
        .position(|(m, _)| *m == Marker::Off)
        .or((!found.is_empty()).then_some(0))?;
    let (marker, what) = found.swap_remove(pick);
    Some(MarkerSeen {
        mesh: mesh.id,
        marker,
        what,
    })
}

/// The mesh of a pod: its own markers (as the release `release` gives for each mesh reads
/// them), else its Namespace's, else `default_mesh`. Both meshes, or only an opt-out, is a
/// finding instead.
pub(super) fn which_mesh(
    pod: &Pod<'_>,
    default_mesh: MeshId,
    namespaces: &Namespaces,
    release: &dyn Fn(&'static Mesh) -> Option<Release>,
) -> Result<&'static Mesh, Why> {
    let in_namespace = namespaces.get(&pod.object.namespace);
    // Per mesh: the pod's own markers, else its Namespace's.
    let seen: Vec<MarkerSeen> = mesh::ALL
        .iter()
        .filter_map(|m| {
            level(m, pod.metadata(), m.pod_markers, Some(pod), release(m))
                .or_else(|| in_namespace.iter().find(|s| s.mesh == m.id).cloned())
        })
        .collect();
    let on: Vec<&MarkerSeen> = seen.iter().filter(|s| s.marker == Marker::On).collect();
    match on.as_slice() {
        [a, b, ..] => Err(Why::MeshConflict((*a).clone(), (*b).clone())),
        [one] => Ok(one.mesh.mesh()),
        [] => match seen.first() {
            Some(off) => Err(Why::OptedOut(off.clone())),
            None => Ok(default_mesh.mesh()),
        },
    }
}

/// The mesh markers of the Namespace documents in a run, by namespace name, and the
/// annotations the meshes' injectors copy from them onto their pods.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Namespaces {
    by_name: BTreeMap<String, Vec<MarkerSeen>>,
    annotations: BTreeMap<String, Vec<(&'static str, String)>>,
}

impl Namespaces {
    /// Records `obj` when it is a named `v1` Namespace; returns whether it is one.
    pub fn add(&mut self, obj: &Node) -> bool {
        if obj.str("apiVersion") != Some("v1") || obj.str("kind") != Some("Namespace") {
            return false;
        }
        let meta = obj.get("metadata");
        let Some(name) = meta.and_then(|m| m.str("name")) else {
            return false;
        };
        let seen: Vec<MarkerSeen> = mesh::ALL
            .iter()
            .filter_map(|m| level(m, meta, m.namespace_markers, None, None))
            .map(|mut s| {
                s.what = format!("{} on Namespace/{name}", s.what);
                s
            })
            .collect();
        self.by_name
            .entry(name.to_string())
            .or_default()
            .extend(seen);
        let anns = meta.and_then(|m| m.get("annotations"));
        let copied = (mesh::ALL.iter())
            .flat_map(|m| (m.namespace_annotations)(None))
            .filter_map(|k| Some((*k, anns?.str(k)?.to_string())));
        self.annotations
            .entry(name.to_string())
            .or_default()
            .extend(copied);
        true
    }

    /// The namespaces `other` says something about (a mesh marker, an annotation the
    /// injectors copy to pods) that this does not say already.
    pub fn news(&self, other: &Namespaces) -> Vec<String> {
        fn new<T: PartialEq>(known: Option<&Vec<T>>, said: &[T]) -> bool {
            said.iter().any(|s| known.is_none_or(|k| !k.contains(s)))
        }
        let mut names: Vec<String> = (other.by_name.iter())
            .filter(|(n, seen)| new(self.by_name.get(*n), seen))
            .map(|(n, _)| n.clone())
            .collect();
        for (n, anns) in &other.annotations {
            if new(self.annotations.get(n), anns) && !names.contains(n) {
                names.push(n.clone());
            }
        }
        names
    }

    /// Adds every Namespace of `other`.
    pub fn extend(&mut self, other: Namespaces) {
        for (name, seen) in other.by_name {
            self.by_name.entry(name).or_default().extend(seen);
        }
        for (name, anns) in other.annotations {
            self.annotations.entry(name).or_default().extend(anns);
        }
    }

    /// The annotations `pod` gets from its Namespace: those the injectors (of the releases
    /// `release` says, given or read) copy, where the pod has none of its own.
    pub(crate) fn inherited(
        &self,
        pod: &Pod<'_>,
        release: &dyn Fn(&'static Mesh) -> Option<Release>,
    ) -> Vec<Inherited> {
        let ns = &pod.object.namespace;
        let Some(anns) = self.annotations.get(ns) else {
            return Vec::new();
        };
        let copied = |k: &str| {
            (mesh::ALL.iter()).any(|m| (m.namespace_annotations)(release(m)).contains(&k))
        };
        anns.iter()
            .filter(|(k, _)| copied(k) && pod.annotation(k).is_none())
            .map(|(key, value)| Inherited {
                key,
                value: value.clone(),
                namespace: ns.clone(),
            })
            .collect()
    }

    pub(super) fn get(&self, name: &str) -> &[MarkerSeen] {
        self.by_name.get(name).map_or(&[], Vec::as_slice)
    }
}
