//! The versions a run's manifests say, as facts about the run (the values themselves, and
//! where each came from, are `crate::version`'s). Every document meshjob reads (files, stdin, a
//! ResourceList, and the `versionsFrom` paths) may say which mesh injects the pods, which
//! proxy it injects, how old the kubelets are, and whether the mesh makes proxies native
//! sidecars by itself. They are read in the pass that reads the `Namespace` documents
//! (`decide::RunContext`): only documents of the few kinds that can hold one are parsed
//! ([`may_hold`]); each mesh reads its own (`mesh::istio::versions`,
//! `mesh::linkerd::versions`), Kubernetes' are read here ([`kubernetes`]).
//!
//! A flag beats the config file, which beats what was read ([`Versions::support`]). Where
//! manifests disagree, the oldest decides (the safe side) and [`Versions::conflicts`] says
//! so, naming both places; the injector and the proxy are kept apart, and a proxy that is
//! not the injector's version is a conflict of its own.

mod kubernetes;

use crate::config::Settings;
use crate::finding::{Finding, Rule};
use crate::mesh::found::{Base, Finder, Found, NativeMode, What};
use crate::mesh::{self, Mesh, MeshId, Support};
use crate::version::{Kubelets, Release, Sourced, VersionOrigin};
use crate::yaml::quick::Head;
use crate::yaml::tree::Node;

/// What the documents of a run say about versions, in the order they were read. Shared by
/// every input of a run: a clone is cheap, and an addition copies the list once.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Versions {
    found: std::sync::Arc<Vec<Found>>,
}

/// Kinds whose documents may hold a version; a `Deployment` or `ConfigMap` only by name.
const KINDS: &[&str] = &[
    // Kubernetes: nodes, saved as a `List`, a `NodeList` or one `Node`; Cluster API; kind.
    "Node",
    "NodeList",
    "MachineDeployment",
    "MachinePool",
    "KubeadmControlPlane",
    "Cluster",
    // Istio: the operator's and Sail's resources; revision labels on Namespaces.
    "IstioOperator",
    "Istio",
    "IstioRevision",
    "Namespace",
    // GitOps objects that install a mesh's chart.
    "HelmRelease",
    "Application",
];

/// Whether a document the quick scanner read (`head`) may say something about versions:
/// one of [`KINDS`], istiod's Deployment, the injector's ConfigMap; or a document without a
/// kind (Helm values), a list, or one the scanner cannot read, that spells a word of those
/// ([`batch_may_hold`]).
pub(crate) fn may_hold(head: Option<&Head<'_>>, piece: &str) -> bool {
    let Some(h) = head.filter(|h| !h.opaque) else {
        return batch_may_hold(piece.as_bytes());
    };
    let name = h.name.unwrap_or_default();
    match h.kind {
        None => batch_may_hold(piece.as_bytes()),
        Some("Deployment") => name == "istiod" || name.starts_with("istiod-"),
        Some("ConfigMap") => mesh::istio::is_mesh_configmap_name(name),
        Some("List" | "ResourceList") => batch_may_hold(piece.as_bytes()),
        Some(k) => KINDS.contains(&k),
    }
}

/// Words one of which every document that says something about versions has, so that a
/// batch of documents without any (and a `List` without any) is skipped without a look at
/// each document: what [`KINDS`] holds (a `List` of them has its items' words), istiod's
/// and the injector's names, injected proxies, and the keys read in Helm values.
const NEEDLES: &[&[u8]] = &[
    b"Namespace",
    b"Node",
    b"stio",
    b"Release",
    b"argoproj",
    b"x-k8s.io",
    b"linkerd",
    b"nativeSidecar",
    b"NATIVE_SIDECARS",
    b"compatibilityVersion",
    b"proxyv2",
    b"tag",
    b"revision",
    b"statusPort",
];

/// The length of the longest of [`NEEDLES`]: a search over an input read in parts keeps
/// this many bytes less one from each part for the next.
pub(crate) const LONGEST_NEEDLE: usize = longest(NEEDLES);

const fn longest(needles: &[&[u8]]) -> usize {
    let (mut i, mut n) = (0, 0);
    while i < needles.len() {
        if needles[i].len() > n {
            n = needles[i].len();
        }
        i += 1;
    }
    n
}

/// Whether `bytes` (a batch of documents, or a list) may hold a document that says
/// something about versions.
pub(crate) fn batch_may_hold(bytes: &[u8]) -> bool {
    // Built once: a search set up for each call costs more than the search of a small file.
    static FINDERS: std::sync::LazyLock<Vec<memchr::memmem::Finder<'static>>> =
        std::sync::LazyLock::new(|| NEEDLES.iter().map(memchr::memmem::Finder::new).collect());
    // Every needle is searched for in one block before the next block: the block is read
    // from memory once and searched from the cache (on a 50 MB input, 27 ms -> 15 ms for
    // all of them). Blocks overlap by a needle's length less one, so that every occurrence
    // lies whole within one.
    const BLOCK: usize = 64 << 10;
    let mut start = 0;
    while let Some(rest) = bytes.get(start..) {
        let block = &rest[..rest.len().min(BLOCK + LONGEST_NEEDLE - 1)];
        if FINDERS.iter().any(|f| f.find(block).is_some()) {
            return true;
        }
        if block.len() == rest.len() {
            return false;
        }
        start += BLOCK;
    }
    false
}

/// [`batch_may_hold`] on every core, for a large input (the whole of a stream read ahead):
/// the same answer. The input is checked in parts that overlap by a needle's length less
/// one, so that every occurrence lies whole within a part; the threads stop at the first
/// part that holds one.
pub(crate) fn may_hold_anywhere(bytes: &[u8]) -> bool {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    const PART: usize = 1 << 20;
    if bytes.len() < 2 * PART {
        return batch_may_hold(bytes);
    }
    // Asked only here: the answer costs system calls (the cgroup's quota files), too many
    // for every small file of a directory.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    if threads < 2 {
        return batch_may_hold(bytes);
    }
    let (next, found) = (AtomicUsize::new(0), AtomicBool::new(false));
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                while !found.load(Ordering::Relaxed) {
                    let start = next.fetch_add(1, Ordering::Relaxed).saturating_mul(PART);
                    let Some(part) = bytes.get(start..) else {
                        break;
                    };
                    let part = &part[..part.len().min(PART + LONGEST_NEEDLE - 1)];
                    if batch_may_hold(part) {
                        found.store(true, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    found.load(Ordering::Relaxed)
}

/// Whether a document holds an injected proxy whose version its pod records, whatever its
/// kind (`proxyv2` images, Linkerd's `linkerd.io/proxy-version`).
pub(crate) fn may_hold_proxy(piece: &str) -> bool {
    // Searchers built once: this runs for every document of a batch that spells `proxy`.
    static FINDERS: std::sync::LazyLock<[memchr::memmem::Finder<'static>; 2]> =
        std::sync::LazyLock::new(|| {
            [b"proxyv2".as_slice(), b"linkerd.io/proxy-version"].map(memchr::memmem::Finder::new)
        });
    FINDERS.iter().any(|f| f.find(piece.as_bytes()).is_some())
}

impl Versions {
    pub(crate) fn is_empty(&self) -> bool {
        self.found.is_empty()
    }

    /// Everything read, in order.
    pub(crate) fn found(&self) -> &[Found] {
        &self.found
    }

    /// Adds what `other` read, but what was read at a place already read (a file that is
    /// both an input and among `--versions-from`) once.
    pub(crate) fn extend(&mut self, other: Versions) {
        if other.found.is_empty() {
            return;
        }
        let other = std::sync::Arc::try_unwrap(other.found).unwrap_or_else(|a| (*a).clone());
        let found = std::sync::Arc::make_mut(&mut self.found);
        for f in other {
            let p = &f.place;
            let seen = (found.iter())
                .any(|g| g.what == f.what && g.place.offset == p.offset && g.place.file == p.file);
            if !seen || p.file.is_none() {
                found.push(f);
            }
        }
    }

    /// Reads one parsed document of `src` (a piece of a stream, at `base`): its objects, at
    /// the top level or in a list. Returns whether it said anything.
    pub(crate) fn read_doc(&mut self, src: &str, root: &Node, base: &Base) -> bool {
        let objects = crate::locate::objects(root);
        self.read_objects(src, objects.iter().map(|(obj, _, _)| *obj), base)
    }

    /// Reads objects of `src` (a piece of a stream, at `base`) wherever they sit in it.
    /// Returns whether they said anything.
    pub(crate) fn read_objects<'n>(
        &mut self,
        src: &str,
        objects: impl IntoIterator<Item = &'n Node>,
        base: &Base,
    ) -> bool {
        let mut f = Finder::new(src, base);
        for obj in objects {
            f.object = object_name(obj);
            kubernetes::read(obj, &mut f);
            for m in mesh::ALL.iter() {
                (m.read_versions)(obj, &mut f);
            }
        }
        let said = !f.found.is_empty();
        if said {
            std::sync::Arc::make_mut(&mut self.found).extend(f.found);
        }
        said
    }

    /// The oldest release read for `what` (the injector or the proxy of a mesh).
    fn oldest_release(&self, what: What, mesh: &Mesh) -> Option<Sourced<Release>> {
        (self.found.iter().filter(|f| f.what == what))
            .filter_map(|f| f.release().map(|r| (r, f)))
            .min_by_key(|(r, _)| (mesh.age)(*r))
            .map(|(r, f)| Sourced::new(r, VersionOrigin::Read(f.place.clone())))
    }

    /// The oldest kubelet read; else the bound the oldest control plane read puts on its
    /// kubelets.
    pub(crate) fn kubelets(&self) -> Option<Sourced<Kubelets>> {
        let oldest = |what: What| {
            (self.found.iter().filter(|f| f.what == what))
                .filter_map(|f| f.kubernetes().map(|v| (v, f)))
                .min_by_key(|(v, _)| *v)
        };
        if let Some((v, f)) = oldest(What::Kubelet) {
            return Some(Sourced::new(
                Kubelets::Oldest(v),
                VersionOrigin::Read(f.place.clone()),
            ));
        }
        oldest(What::ControlPlane).map(|(v, f)| {
            Sourced::new(
                Kubelets::of_control_plane(v),
                VersionOrigin::Read(f.place.clone()),
            )
        })
    }

    /// The mesh's global native-sidecar setting read: the one least in favour of native
    /// sidecars when they disagree (off, then auto, then on).
    fn native(&self, id: MeshId) -> Option<Sourced<NativeMode>> {
        (self.found.iter().filter(|f| f.what == What::Native(id)))
            .filter_map(|f| f.native().map(|m| (m, f)))
            .min_by_key(|(m, _)| native_rank(*m))
            .map(|(m, f)| Sourced::new(m, VersionOrigin::Read(f.place.clone())))
    }

    /// The mesh-wide quit port read (Istio's `defaultConfig.statusPort`); where two
    /// disagree, the smaller (a conflict says so: neither is safer).
    fn quit_port(&self, id: MeshId) -> Option<Sourced<u16>> {
        (self.found.iter().filter(|f| f.what == What::QuitPort(id)))
            .filter_map(|f| f.port().map(|p| (p, f)))
            .min_by_key(|(p, _)| *p)
            .map(|(p, f)| Sourced::new(p, VersionOrigin::Read(f.place.clone())))
    }

    /// What native sidecars need for a pod of `mesh`: a version given by a flag or the
    /// config, else the oldest one read.
    pub(crate) fn support(&self, mesh: &'static Mesh, settings: &Settings) -> Support {
        let mut s = Support::given(mesh, settings);
        if s.mesh_version.is_none() {
            s.mesh_version = self.oldest_release(What::Injector(mesh.id), mesh);
        }
        if s.kubernetes.is_none() {
            s.kubernetes = self.kubelets();
        }
        s.native = self.native(mesh.id);
        s.quit_port = self.quit_port(mesh.id);
        s
    }

    /// The proxy `mesh` injects, as read (the oldest).
    pub(crate) fn proxy(&self, mesh: &'static Mesh) -> Option<Sourced<Release>> {
        self.oldest_release(What::Proxy(mesh.id), mesh)
    }

    /// The conflicts that reading `added` after `self` brings.
    pub(crate) fn new_conflicts(&self, added: &Versions, settings: &Settings) -> Vec<Conflict> {
        let old = self.conflicts(settings);
        let mut all = self.clone();
        all.extend(added.clone());
        (all.conflicts(settings).into_iter())
            .filter(|c| !old.iter().any(|o| o.id() == c.id()))
            .collect()
    }

    /// Where what was read disagrees: two versions of one injector, proxy or global setting;
    /// and, per mesh, a proxy whose version is not the injector's (given or read), which
    /// says what two proxies that disagree would say too.
    pub(crate) fn conflicts(&self, settings: &Settings) -> Vec<Conflict> {
        let mut out = Vec::new();
        for m in mesh::ALL.iter() {
            let injector = self.support(m, settings).mesh_version;
            let drift = match (injector, self.proxy(m)) {
                (Some(i), Some(p)) if i.value != p.value => Some(Conflict {
                    mesh: m,
                    what: What::Proxy(m.id),
                    drift: true,
                    a: (i.value.to_string(), i.origin),
                    b: (p.value.to_string(), p.origin),
                    decided: None,
                }),
                _ => None,
            };
            let before = out.len();
            let whats = [
                What::Injector(m.id),
                What::Proxy(m.id),
                What::Native(m.id),
                What::QuitPort(m.id),
            ];
            for what in whats {
                if what == What::Proxy(m.id) && drift.is_some() {
                    continue;
                }
                let with: Vec<&Found> = (self.found.iter())
                    .filter(|f| f.what == what && f.value.is_some())
                    .collect();
                let (Some(old), Some(new)) = (
                    with.iter().min_by_key(|f| key(m, f)),
                    with.iter().max_by_key(|f| key(m, f)),
                ) else {
                    continue;
                };
                if old.shown() != new.shown() {
                    out.push(Conflict {
                        mesh: m,
                        what,
                        drift: false,
                        a: shown(old),
                        b: shown(new),
                        decided: match what {
                            What::Injector(_) => settings.mesh_version_origin(m.id).cloned(),
                            _ => None,
                        },
                    });
                }
            }
            // Injectors that disagree say what a proxy that differs from the oldest would.
            let injectors = out[before..].iter().any(|c| c.what == What::Injector(m.id));
            out.extend(drift.filter(|_| !injectors));
        }
        out
    }
}

/// `Deployment/istiod`, or `Helm values` for a document without a kind.
fn object_name(obj: &Node) -> String {
    if obj.str("kind").is_none() {
        return "Helm values".to_string();
    }
    crate::finding::describe(&crate::finding::object_ref(obj))
}

fn native_rank(m: NativeMode) -> u8 {
    match m {
        NativeMode::Off => 0,
        NativeMode::Auto => 1,
        NativeMode::On => 2,
    }
}

/// Orders what was read of one kind: older (or less in favour of native sidecars) first.
fn key(m: &Mesh, f: &Found) -> [u32; 4] {
    if let Some(r) = f.release() {
        return (m.age)(r);
    }
    if let Some(v) = f.kubernetes() {
        return [v.major, v.minor, 0, 0];
    }
    if let Some(p) = f.port() {
        return [u32::from(p), 0, 0, 0];
    }
    f.native()
        .map_or([0; 4], |n| [u32::from(native_rank(n)), 0, 0, 0])
}

fn shown(f: &Found) -> (String, VersionOrigin) {
    (f.shown(), VersionOrigin::Read(f.place.clone()))
}

/// Two versions of one thing that disagree.
#[derive(Clone, Debug)]
pub(crate) struct Conflict {
    pub mesh: &'static Mesh,
    /// What disagrees.
    pub what: What,
    /// The proxy is not its injector's version: `a` is the injector's, `b` the proxy's.
    /// Otherwise two reads of `what`, `a` the older (the one that decides).
    pub drift: bool,
    pub a: (String, VersionOrigin),
    pub b: (String, VersionOrigin),
    /// A flag or config key that decides instead of what was read.
    pub decided: Option<VersionOrigin>,
}

impl Conflict {
    /// The offset of the place of `a` or `b` that lies in `range` (of a stream), if one does.
    pub(crate) fn offset_in(&self, range: &std::ops::Range<usize>) -> Option<usize> {
        [&self.b.1, &self.a.1]
            .into_iter()
            .filter_map(VersionOrigin::place)
            .map(|p| p.offset)
            .find(|o| range.contains(o))
    }

    /// What tells two conflicts apart.
    fn id(&self) -> (What, bool, &str, &str) {
        (self.what, self.drift, &self.a.0, &self.b.0)
    }

    /// The warning that says so, at `offset` of the text it is reported in.
    pub(crate) fn finding(&self, offset: usize) -> Finding {
        let name = self.mesh.name;
        let ((a, at), (b, bt)) = (&self.a, &self.b);
        if self.drift {
            return Finding::warning(
                Rule::ProxyDrift,
                offset,
                format!(
                    "the {name} proxy is not its injector's version: the injector is {a} from \
                     {at}, the proxy {b} from {bt}; the injector decides which native-sidecar annotation \
                     works, the proxy how a quit request stops it: make them match"
                ),
            );
        }
        let of = match self.what {
            What::Injector(_) => format!("the {name} that injects the pods"),
            What::Proxy(_) => format!("the {name} proxy"),
            What::QuitPort(_) => format!("the port {name}'s proxies are stopped on"),
            _ => format!("{name}'s global native-sidecar setting"),
        };
        let then = match (&self.decided, self.what) {
            (Some(o), _) => format!("{o} decides instead"),
            (None, What::QuitPort(_)) => format!(
                "the wrapper calls {a}, which is not always the one the pods get: set the port \
                 on the pods ({}), or pass --quit-url",
                self.mesh.quit_port_annotation.unwrap_or("--quit-url")
            ),
            (None, _) => format!("meshjob takes {a}, the safe side"),
        };
        Finding::warning(
            Rule::VersionsDisagree,
            offset,
            format!("the manifests disagree on {of}: {a} at {at} and {b} at {bt}; {then}"),
        )
    }
}

#[cfg(test)]
mod tests;
