//! What a pod's native sidecar depends on: its mesh's release, the oldest kubelet and the
//! mesh's global native-sidecar setting, each with where it came from ([`Support`]).

use super::facts::Mesh;
use super::found::NativeMode;
use crate::version::{Kubelets, Release, Sourced, Version, VersionOrigin};

/// The versions a pod's native sidecar depends on, each with where it came from: its mesh's
/// release and the oldest kubelet, and the mesh's global native-sidecar setting.
#[derive(Clone, Debug)]
pub(crate) struct Support {
    pub mesh: &'static Mesh,
    pub(crate) mesh_version: Option<Sourced<Release>>,
    pub(crate) kubernetes: Option<Sourced<Kubelets>>,
    /// The mesh's global native-sidecar setting, as read from a manifest.
    pub(crate) native: Option<Sourced<NativeMode>>,
    /// The port the mesh's proxies serve their quit endpoint on mesh-wide, as read from a
    /// manifest (Istio's `defaultConfig.statusPort`).
    pub(crate) quit_port: Option<Sourced<u16>>,
}

/// A known version too old for native sidecars.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TooOld {
    Mesh(Release),
    Kubernetes(Version),
}

impl Support {
    /// What native sidecars need for a pod of `mesh`, from the settings alone.
    pub(crate) fn given(mesh: &'static Mesh, settings: &crate::config::Settings) -> Support {
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
            quit_port: None,
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
        let from =
            |o: Option<&VersionOrigin>| o.map(|o| format!(" (from {o})")).unwrap_or_default();
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
