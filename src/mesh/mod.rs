//! The service meshes meshjob knows, as data: what differs from one mesh to the next.
//!
//! A [`Mesh`] holds the facts the stages need about one mesh: the proxy container's name,
//! its quit and ready endpoints, how a pod opts out, the per-pod config and native-sidecar
//! annotations, and which documents hold the mesh-wide configuration. Each mesh is one
//! module that fills one in, with the sources of its facts (`istio`, `linkerd`). Adding a mesh is
//! adding a module and a [`MeshId`]; the stages read the facts from here, and branch on the
//! id only where a mesh's behaviour (not just a name) differs.

pub(crate) mod found;
pub(crate) mod istio;
pub(crate) mod linkerd;

pub(crate) use crate::config::MeshId;
use crate::version::{Kubelets, Release, Sourced, Version};
pub(crate) use found::NativeMode;

impl MeshId {
    /// The facts of this mesh.
    pub fn mesh(self) -> &'static Mesh {
        match self {
            MeshId::Istio => &istio::MESH,
            MeshId::Linkerd => &linkerd::MESH,
        }
    }
}

/// Where a marker key is read on a pod or Namespace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkerPlace {
    Label,
    Annotation,
    /// A label, or else (when there is no such label) an annotation of the same key.
    LabelThenAnnotation,
}

/// A key whose value says whether the mesh injects a pod (or the pods of a Namespace).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MarkerKey {
    pub key: &'static str,
    pub place: MarkerPlace,
    /// Values that turn injection on; empty: any value but an `off` one (and not empty).
    pub on: &'static [&'static str],
    /// Values that turn injection off.
    pub off: &'static [&'static str],
    /// Compare values without regard to ASCII case.
    pub ignore_case: bool,
}

impl MarkerKey {
    /// What `value` of this key says.
    pub fn read(&self, value: &str) -> Option<Marker> {
        let is = |set: &[&str]| {
            set.iter().any(|v| {
                if self.ignore_case {
                    v.eq_ignore_ascii_case(value)
                } else {
                    *v == value
                }
            })
        };
        if is(self.off) {
            Some(Marker::Off)
        } else if is(self.on) || (self.on.is_empty() && !value.is_empty()) {
            Some(Marker::On)
        } else {
            None
        }
    }
}

/// What the markers of one level (pod or Namespace) say about one mesh.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    On,
    Off,
}

/// A kind of document that holds mesh-wide configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConfigKind {
    /// API group (`install.istio.io`), or `""` for the core group (`v1`).
    pub group: &'static str,
    pub kind: &'static str,
    /// What meshjob does with it.
    pub role: ConfigRole,
}

/// What meshjob does with a mesh-config kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigRole {
    /// Holds the mesh config as a mapping; edited.
    Operator,
    /// Holds installation values (including the mesh config); edited.
    Values,
    /// A ConfigMap holding the mesh config as text; edited when its name says so.
    ConfigMap,
    /// Written by an operator from another object, which reverts edits; reported, not edited.
    Generated,
}

/// The facts of one mesh.
#[derive(Debug)]
pub struct Mesh {
    pub id: MeshId,
    /// Human name, for messages.
    pub name: &'static str,
    /// The injected proxy container.
    pub proxy_container: &'static str,
    /// The URL the wrapper POSTs by default when the task ends.
    pub default_quit_url: &'static str,
    /// The proxy's readiness endpoint.
    pub ready_url: &'static str,
    /// The pod annotation holding per-pod proxy configuration.
    pub pod_config_annotation: &'static str,
    /// The pod annotation that asks for a native sidecar (the newest spelling).
    pub native_sidecar_annotation: &'static str,
    /// Every pod annotation that asks for a native sidecar, the one that wins first.
    pub native_sidecar_annotations: &'static [&'static str],
    /// What native sidecars need, and how the mesh reads its native annotation.
    pub native: Native,
    /// The flag and config key that give the mesh's version, and what that version is.
    pub version_flag: &'static str,
    pub version_key: &'static str,
    pub version_of: &'static str,
    /// Pod-template keys that say whether this mesh injects the pod.
    pub pod_markers: &'static [MarkerKey],
    /// Namespace keys that say whether this mesh injects the namespace's pods.
    pub namespace_markers: &'static [MarkerKey],
    /// Ambient mode (no sidecar at all), if the mesh has it.
    pub ambient: Option<Ambient>,
    /// What an already-injected proxy means for the fix, after "<proxy> is already injected, ".
    pub injected_note: &'static str,
    /// The pod annotation that moves the quit endpoint's port, if the mesh has one.
    pub quit_port_annotation: Option<&'static str>,
    /// Where a POST stops the proxy, as hand-written fixes call it.
    pub stop_endpoints: &'static [StopEndpoint],
    /// Processes of the proxy that a hand-written fix may kill.
    pub proxy_processes: &'static [&'static str],
    /// The proxy's images, by repository (matched on their last path components), which
    /// mean a proxy that runs until it is stopped wherever they appear.
    pub proxy_images: &'static [&'static str],
    /// The documents that hold mesh-wide configuration.
    pub config_kinds: &'static [ConfigKind],
    /// Whether a ConfigMap of this name holds the mesh config.
    pub is_config_map_name: fn(&str) -> bool,
    /// Reads the versions one object of a manifest says (the injector, the proxy, the
    /// global native-sidecar setting), at the top level or in a list.
    pub(crate) read_versions: fn(&crate::yaml::tree::Node, &mut found::Finder<'_>),
    /// Orders releases: a smaller key is older.
    pub age: fn(Release) -> [u32; 4],
    /// How a pod's manifest opts it out of the mesh, for advice in findings.
    pub opt_out: &'static str,
    /// What Argo Workflows' controller can run in the proxy container to stop it.
    pub argo_kill: KillCommand,
    /// The Namespace annotations that this mesh's injector (of the given version; unknown:
    /// any version) copies onto a pod of the Namespace that lacks them, of those meshjob
    /// reads: a pod has them as if it carried them itself.
    pub namespace_annotations: fn(Option<Release>) -> &'static [&'static str],
    /// Where the wrapper asks the proxy to quit, and polls its readiness, when the pod's
    /// [`Mesh::quit_port_annotation`] is `0` (that server turned off); None: such a pod is
    /// refused with a finding.
    pub port_off: Option<PortOff>,
}

/// A command that stops the proxy when run inside its container (Argo Workflows'
/// `workflows.argoproj.io/kill-cmd-<container>` annotation), and the pod annotations it
/// needs.
#[derive(Debug)]
pub struct KillCommand {
    /// The argv, as the JSON text of the annotation.
    pub argv: &'static str,
    /// Pod annotations without which the command does not stop the proxy.
    pub needs: &'static [(&'static str, &'static str)],
}

/// The endpoints of a pod whose quit port is turned off (port `0`).
#[derive(Debug)]
pub struct PortOff {
    pub quit_url: &'static str,
    pub ready_url: &'static str,
    /// What serves them, for messages.
    pub served_by: &'static str,
    /// Keys of the pod's config annotation that move that server: a pod that sets one is
    /// refused, since meshjob cannot tell where it went.
    pub moved_by: &'static [&'static str],
}

impl Mesh {
    /// The mesh-config kind of a document, given its API group and kind.
    pub fn config_kind(&self, group: &str, kind: &str) -> Option<&'static ConfigKind> {
        self.config_kinds
            .iter()
            .find(|k| k.group == group && k.kind == kind)
    }
}

/// How a mesh puts pods in ambient mode, where a pod has no sidecar to stop.
#[derive(Debug)]
pub struct Ambient {
    /// The label, on a pod or a Namespace, that puts its pods in ambient mode, and its value.
    pub label: &'static str,
    pub value: &'static str,
    /// Labels that ask for a sidecar, which wins over ambient: on the pod, on a Namespace.
    pub pod_sidecar: &'static [SidecarLabel],
    pub namespace_sidecar: &'static [SidecarLabel],
}

/// A label that asks for a sidecar: `key` with `value`, or with any non-empty value.
#[derive(Debug)]
pub struct SidecarLabel {
    pub key: &'static str,
    pub value: Option<&'static str>,
}

impl SidecarLabel {
    /// Whether `labels` (a mapping) has this label.
    pub fn on(&self, labels: &crate::yaml::tree::Node) -> bool {
        labels
            .str(self.key)
            .is_some_and(|v| self.value.map_or(!v.is_empty(), |want| v == want))
    }
}

/// A proxy endpoint that stops it on a POST.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StopEndpoint {
    pub port: u16,
    pub path: &'static str,
    /// No other program serves this path: a call to it with the port in a variable
    /// counts, and one without POST is worth a warning.
    pub distinctive: bool,
    /// How findings name a POST to it.
    pub describe: &'static str,
}

/// What a mesh's native sidecars need, and how it reads its per-pod native annotation.
#[derive(Debug)]
pub struct Native {
    /// The first mesh version with a per-pod native annotation.
    pub since: Version,
    /// The first Kubernetes with native sidecars on by default.
    pub kubernetes_since: Version,
    /// What a version older than [`Native::since`] lacks, after "Istio 1.22 ".
    pub too_old: &'static str,
    /// The annotation to write for a mesh release (unknown: the one every version reads);
    /// `None` when that release has none.
    pub key_for: fn(Option<Release>) -> Option<&'static str>,
    /// Whether a release reads this native annotation key (unknown: any it may read).
    pub reads: fn(&str, Option<Release>) -> bool,
    /// Keys that look like a native annotation and that no release reads.
    pub lookalikes: &'static [&'static str],
    /// The value meshjob writes into it.
    pub on: &'static str,
    /// Whether an annotation value turns native sidecars on, as the given release reads it
    /// (unknown: only what every version reads as on).
    pub is_on: fn(&str, Option<Release>) -> bool,
    /// Whether an annotation value turns them off.
    pub is_off: fn(&str) -> bool,
    /// How `--strategy native` copes with an unknown version, said in the note about it.
    pub unknown_version: &'static str,
    /// Whether the mesh makes every pod's proxy a native sidecar without an annotation,
    /// from its global setting (as read), its release and the oldest kubelet; `None` when
    /// that is not known.
    pub(crate) global: fn(Option<NativeMode>, Option<Release>, Option<Kubelets>) -> Option<bool>,
    /// When the mesh makes every proxy a native sidecar by default, in parentheses after
    /// "by default Istio makes every proxy one".
    pub by_default: &'static str,
}

/// The versions a pod's native sidecar depends on, each with where it came from: its mesh's
/// release and the oldest kubelet, and the mesh's global native-sidecar setting.
#[derive(Clone, Debug)]
pub(crate) struct Support {
    pub mesh: &'static Mesh,
    pub(crate) mesh_version: Option<Sourced<Release>>,
    pub(crate) kubernetes: Option<Sourced<Kubelets>>,
    /// The mesh's global native-sidecar setting, as read from a manifest.
    pub(crate) native: Option<Sourced<NativeMode>>,
}

/// A known version too old for native sidecars.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TooOld {
    Mesh(Release),
    Kubernetes(Version),
}

impl Mesh {
    /// The native annotation meshjob writes for a pod of this mesh, for `release`.
    pub fn native_key(&self, release: Option<Release>) -> &'static str {
        (self.native.key_for)(release).unwrap_or(self.native_sidecar_annotation)
    }
}

impl Support {
    /// What native sidecars need for a pod of `mesh`, from the settings alone.
    pub(crate) fn given(mesh: &'static Mesh, settings: &crate::config::Settings) -> Support {
        use crate::version::VersionOrigin;
        let origin =
            |o: Option<&VersionOrigin>, flag| o.cloned().unwrap_or(VersionOrigin::Flag(flag));
        Support {
            mesh,
            mesh_version: settings.mesh_version(mesh.id).map(|v| {
                Sourced::new(
                    v,
                    origin(settings.mesh_version_origin(mesh.id), mesh.version_flag),
                )
            }),
            kubernetes: settings.kubernetes_version.map(|v| {
                Sourced::new(
                    Kubelets::Oldest(v),
                    origin(settings.given.kubernetes.as_ref(), "--kubernetes-version"),
                )
            }),
            native: None,
        }
    }

    /// The mesh's release, when known.
    pub(crate) fn release(&self) -> Option<Release> {
        self.mesh_version.as_ref().map(|s| s.value)
    }

    /// What is known of the oldest kubelet.
    pub(crate) fn kubelets(&self) -> Option<Kubelets> {
        self.kubernetes.as_ref().map(|s| s.value)
    }

    /// Whether the kubelets are known to run native sidecars (the oldest one, or a bound
    /// from the control plane, is new enough), or known not to (the oldest one is too old).
    fn kubernetes_known(&self) -> bool {
        match self.kubelets() {
            Some(Kubelets::Oldest(_)) => true,
            Some(Kubelets::AtLeast(v)) => v >= self.mesh.native.kubernetes_since,
            None => false,
        }
    }

    /// Both versions are known well enough to decide.
    pub(crate) fn known(&self) -> bool {
        self.mesh_version.is_some() && self.kubernetes_known()
    }

    /// The known versions that are too old for native sidecars.
    pub(crate) fn too_old(&self) -> Vec<TooOld> {
        let n = &self.mesh.native;
        let mesh = self
            .release()
            .filter(|v| (n.key_for)(Some(*v)).is_none())
            .map(TooOld::Mesh);
        let kube = match self.kubelets() {
            Some(Kubelets::Oldest(v)) if v < n.kubernetes_since => Some(TooOld::Kubernetes(v)),
            _ => None,
        };
        mesh.into_iter().chain(kube).collect()
    }

    /// Whether the mesh makes every proxy a native sidecar by itself.
    pub(crate) fn global_native(&self) -> Option<bool> {
        (self.mesh.native.global)(
            self.native.as_ref().map(|s| s.value),
            self.release(),
            self.kubelets(),
        )
    }

    /// Whether an annotation value turns native sidecars on, as the target reads it.
    pub(crate) fn is_on(&self, value: &str) -> bool {
        (self.mesh.native.is_on)(value, self.release())
    }

    pub(crate) fn is_off(&self, value: &str) -> bool {
        (self.mesh.native.is_off)(value)
    }

    /// Whether the target reads this native annotation key.
    pub(crate) fn reads(&self, key: &str) -> bool {
        (self.mesh.native.reads)(key, self.release())
    }

    /// `Istio 1.24 (--istio-version), Kubernetes unknown`: each version with where it came
    /// from.
    pub(crate) fn versions_text(&self) -> String {
        let mut s = String::new();
        let _ = self.write_versions_text(&mut s);
        s
    }

    /// [`Support::versions_text`], written to `s` (a finding's message, being put together).
    pub(crate) fn write_versions_text(&self, s: &mut impl std::fmt::Write) -> std::fmt::Result {
        match &self.mesh_version {
            Some(v) => write!(s, "{} {} from {}, ", self.mesh.name, v.value, v.origin)?,
            None => {
                s.write_str(self.mesh.name)?;
                s.write_str(" unknown, ")?;
            }
        }
        self.write_kubernetes_text(s)
    }

    /// `Kubernetes 1.29 (nodes.yaml:4 ...)`, `Kubernetes 1.29 or newer (...)`.
    pub(crate) fn kubernetes_text(&self) -> String {
        let mut s = String::new();
        let _ = self.write_kubernetes_text(&mut s);
        s
    }

    fn write_kubernetes_text(&self, s: &mut impl std::fmt::Write) -> std::fmt::Result {
        match &self.kubernetes {
            Some(Sourced {
                value: Kubelets::Oldest(v),
                origin,
            }) => write!(s, "Kubernetes {v} from {origin}"),
            Some(Sourced {
                value: Kubelets::AtLeast(v),
                origin,
            }) => write!(
                s,
                "Kubernetes {v} or newer (the version skew policy's bound for the control \
                 plane at {origin})"
            ),
            None => s.write_str("Kubernetes unknown"),
        }
    }

    /// The JSON list of the versions that decided, each with where it came from.
    pub(crate) fn json(&self) -> Vec<crate::finding::VersionUsed> {
        let mut out = Vec::new();
        if let Some(s) = &self.mesh_version {
            out.push(crate::finding::VersionUsed {
                of: self.mesh.name,
                version: s.value.to_string(),
                origin: s.origin.clone(),
            });
        }
        if let Some(s) = &self.kubernetes {
            let version = match s.value {
                Kubelets::Oldest(v) => v.to_string(),
                Kubelets::AtLeast(v) => format!("{v}+"),
            };
            out.push(crate::finding::VersionUsed {
                of: "Kubernetes",
                version,
                origin: s.origin.clone(),
            });
        }
        if let Some(s) = &self.native {
            out.push(crate::finding::VersionUsed {
                of: "native sidecars",
                version: s.value.as_str().to_string(),
                origin: s.origin.clone(),
            });
        }
        out
    }

    /// `Istio 1.24 and Kubernetes 1.29`.
    pub(crate) fn needs_text(&self) -> String {
        let n = &self.mesh.native;
        format!(
            "{} {} and Kubernetes {}",
            self.mesh.name, n.since, n.kubernetes_since
        )
    }

    /// Why the known versions cannot run a native sidecar, if they cannot.
    pub(crate) fn too_old_text(&self) -> Option<String> {
        let from = |o: Option<&crate::version::VersionOrigin>| {
            o.map(|o| format!(" (from {o})")).unwrap_or_default()
        };
        let why: Vec<String> = (self.too_old().into_iter())
            .map(|t| match t {
                TooOld::Mesh(v) => format!(
                    "{} {v}{} {}",
                    self.mesh.name,
                    from(self.mesh_version.as_ref().map(|s| &s.origin)),
                    self.mesh.native.too_old
                ),
                TooOld::Kubernetes(v) => format!(
                    "Kubernetes {v}{} has no native sidecars on by default",
                    from(self.kubernetes.as_ref().map(|s| &s.origin))
                ),
            })
            .collect();
        (!why.is_empty()).then(|| why.join(" and "))
    }
}

/// Every mesh meshjob knows.
pub(crate) static ALL: std::sync::LazyLock<Vec<&'static Mesh>> = std::sync::LazyLock::new(|| {
    // Every `MeshId` (the config's `mesh` values), so that a new mesh cannot be left out.
    <MeshId as clap::ValueEnum>::value_variants()
        .iter()
        .map(|id| id.mesh())
        .collect()
});
