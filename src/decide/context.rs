//! What the other documents of a run say about a pod: the `Namespace` documents, read for
//! the mesh markers they put on their pods and for ambient mode, and every document that
//! says which versions the run targets (`crate::manifest_versions`).

use super::markers::Namespaces;
use crate::config::MeshId;
use crate::manifest_versions::Versions;
use crate::mesh;
use crate::mesh::found::Base;
use crate::yaml::quick::Head;
use crate::yaml::tree::Node;

/// What other documents say about the pods: the namespaces that a `Namespace` document of
/// the stream puts in ambient mode, the mesh markers of the Namespace documents of the
/// run, and the versions the documents of the run say.
#[derive(Clone, Debug, Default)]
pub struct RunContext {
    /// The namespaces a `Namespace` document puts in a mesh's ambient mode.
    pub ambient_namespaces: Vec<(MeshId, String)>,
    pub namespaces: Namespaces,
    pub(crate) versions: Versions,
}

impl RunContext {
    /// Reads the `Namespace` documents, and the documents that say something about versions,
    /// among `pieces` of `text` (cut by `yaml::split`); `namespaces`: those of the whole run,
    /// else the stream's own are read.
    pub fn of_stream(
        text: &str,
        pieces: &[std::ops::Range<usize>],
        namespaces: Option<&Namespaces>,
    ) -> RunContext {
        let mut ctx = RunContext::default();
        let mut lines = Lines::default();
        for p in pieces {
            let piece = &text[p.clone()];
            let maybe = piece.contains("Namespace")
                || crate::manifest_versions::batch_may_hold(piece.as_bytes());
            if !maybe {
                continue;
            }
            let base = Base {
                file: None,
                offset: p.start,
                line: lines.before(text.as_bytes(), p.start),
            };
            ctx.add(piece, &base);
        }
        if let Some(ns) = namespaces {
            ctx.namespaces = ns.clone();
        }
        ctx
    }

    /// Whether a piece (its quick-scanner `head`) may add anything ([`may_add`]).
    /// `proxies`: look for injected proxies in documents of any kind.
    pub(crate) fn wants(&self, piece: &str, head: Option<&Head<'_>>, proxies: bool) -> bool {
        may_add(piece, head, proxies)
    }

    /// Adds what one piece of a stream says (its place: `base`); returns whether it added
    /// anything. Only a piece [`RunContext::wants`] is parsed.
    pub(crate) fn add(&mut self, piece: &str, base: &Base) -> bool {
        let head = crate::yaml::quick::head(piece);
        self.wants(piece, head.as_ref(), true) && self.add_wanted(piece, base)
    }

    /// [`RunContext::add`] for a piece [`RunContext::wants`].
    pub(crate) fn add_wanted(&mut self, piece: &str, base: &Base) -> bool {
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
            added |= self.versions.read_doc(piece, &d.root, base);
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
        self.versions.extend(other.versions);
    }
}

/// Whether a piece (its quick-scanner `head`) may add anything to a context: a
/// `Namespace`, or a document that says something about versions. `proxies`: look for
/// injected proxies in documents of any kind. It depends on the piece alone, so that
/// pieces can be sorted out on any thread before what they say is read in order.
pub(crate) fn may_add(piece: &str, head: Option<&Head<'_>>, proxies: bool) -> bool {
    let namespace = head.is_none_or(|h| {
        h.opaque || matches!(h.kind, None | Some("Namespace" | "List" | "ResourceList"))
    }) && piece.contains("Namespace");
    namespace
        || crate::manifest_versions::may_hold(head, piece)
        || proxies && crate::manifest_versions::may_hold_proxy(piece)
}

/// Counts line breaks from the start of a text, forward only, for the places of what is
/// read in it.
#[derive(Default)]
pub(crate) struct Lines {
    at: usize,
    lines: usize,
}

impl Lines {
    /// The line breaks before `offset` (not before the last offset asked).
    pub(crate) fn before(&mut self, text: &[u8], offset: usize) -> usize {
        if offset > self.at {
            self.lines += memchr::memchr_iter(b'\n', &text[self.at..offset]).count();
            self.at = offset;
        }
        self.lines
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
