//! What the other documents of a run say about a pod: the `Namespace` documents, read for
//! the mesh markers they put on their pods and for ambient mode.

use super::markers::Namespaces;
use crate::config::MeshId;
use crate::mesh;
use crate::yaml::tree::Node;

/// What other documents say about the pods: the namespaces that a `Namespace` document of
/// the stream puts in ambient mode, and the mesh markers of the Namespace documents of the
/// run.
#[derive(Clone, Debug, Default)]
pub struct RunContext {
    /// The namespaces a `Namespace` document puts in a mesh's ambient mode.
    pub ambient_namespaces: Vec<(MeshId, String)>,
    pub namespaces: Namespaces,
}

impl RunContext {
    /// Reads the `Namespace` documents among `pieces` of `text` (cut by `yaml::split`);
    /// `namespaces`: those of the whole run, else the stream's own are read.
    pub fn of_stream(
        text: &str,
        pieces: &[std::ops::Range<usize>],
        namespaces: Option<&Namespaces>,
    ) -> RunContext {
        let mut ctx = RunContext::default();
        for p in pieces {
            ctx.add(&text[p.clone()]);
        }
        if let Some(ns) = namespaces {
            ctx.namespaces = ns.clone();
        }
        ctx
    }

    /// Adds what one piece of a stream says: nothing unless it holds a `Namespace` document
    /// (at the top level, or in a List for the mesh markers). Pieces that never spell
    /// `Namespace`, or that the quick scanner shows are of other kinds, are not parsed.
    /// Returns whether it added anything.
    pub fn add(&mut self, piece: &str) -> bool {
        if !piece.contains("Namespace") {
            return false;
        }
        let wanted = crate::yaml::simple::head(piece).is_none_or(|h| {
            h.opaque || matches!(h.kind, None | Some("Namespace" | "List" | "ResourceList"))
        });
        if !wanted {
            return false;
        }
        // A document that does not parse is reported when it is processed.
        let Ok(docs) = crate::yaml::tree::parse_stream(piece) else {
            return false;
        };
        let mut added = false;
        for d in &docs {
            for (mesh, name) in ambient_namespaces(&d.root) {
                self.ambient_namespaces.push((mesh, name.to_string()));
                added = true;
            }
            for (obj, _, _) in crate::locate::objects(&d.root) {
                added |= self.namespaces.add(obj);
            }
        }
        added
    }

    /// The namespaces `other` says something about (ambient mode, a mesh marker, an
    /// annotation the injectors copy to pods) that this context does not say already.
    pub fn news(&self, other: &RunContext) -> Vec<String> {
        let mut names: Vec<String> = (other.ambient_namespaces.iter())
            .filter(|a| !self.ambient_namespaces.contains(a))
            .map(|(_, n)| n.clone())
            .collect();
        for name in self.namespaces.news(&other.namespaces) {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        names
    }

    /// Adds what `other` says.
    pub fn extend(&mut self, other: RunContext) {
        self.ambient_namespaces.extend(other.ambient_namespaces);
        self.namespaces.extend(other.namespaces);
    }
}

/// The name of a `v1` Namespace in each mesh's ambient mode: labelled so, and without a
/// label that asks for sidecars (Istio's `NamespaceInAmbientMode`).
fn ambient_namespaces(root: &Node) -> impl Iterator<Item = (MeshId, &str)> {
    let namespace = root.str("apiVersion") == Some("v1") && root.str("kind") == Some("Namespace");
    let meta = root.get("metadata").filter(|_| namespace);
    let labels = meta.and_then(|m| m.get("labels"));
    let name = meta.and_then(|m| m.str("name"));
    mesh::ALL.iter().filter_map(move |m| {
        let a = m.ambient.as_ref()?;
        let labels = labels?;
        let ambient = labels.str(a.label) == Some(a.value);
        let sidecar = a.namespace_sidecar.iter().any(|l| l.on(labels));
        (ambient && !sidecar).then_some((m.id, name?))
    })
}

impl Namespaces {
    /// The Namespace documents of `text` (at the top level or in a List), found without
    /// parsing the documents that the quick scanner shows are of other kinds, and without
    /// parsing anything in a text that never spells `Namespace` (a kind written with escape
    /// sequences, such as `"Namesp\x61ce"`, is not looked for).
    pub fn scan(text: &str) -> Namespaces {
        if !text.contains("Namespace") {
            return Namespaces::default();
        }
        RunContext::of_stream(text, &crate::yaml::split::pieces(text), None).namespaces
    }
}
