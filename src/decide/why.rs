//! Why a pod gets its fix, or none: typed reasons, and the one function that words them.

use super::markers::MarkerSeen;
use super::pin::{By, IGNORE_KEY, PinPlace, STRATEGY_KEY};
use crate::config::StrategyChoice;
use crate::finding::{Finding, Rule, Severity};
use crate::mesh::{Mesh, Support};
use crate::pod::Pod;
use std::fmt::Write;

/// What [`Why::finding`] says after the reason when meshjob's earlier changes come out.
const REMOVE_NOTE: &str = "meshjob's own earlier changes, if any, are taken out";

/// The reason for a decision about one pod.
#[derive(Clone, Debug)]
pub(crate) enum Why {
    /// Two meshes would inject the pod: left alone.
    MeshConflict(MarkerSeen, MarkerSeen),
    /// The pod opts out of injection.
    OptedOut(MarkerSeen),
    HostNetwork,
    /// The pod's namespace is one the mesh's injector never injects.
    NamespaceNeverInjected {
        mesh: &'static Mesh,
        namespace: String,
    },
    /// Ambient mode, by a label on the pod or its Namespace (`by` says which).
    Ambient {
        by: String,
    },
    ProxyIsNative(&'static Mesh),
    /// The pod's annotation [`IGNORE_KEY`] (its value is the reason): left alone.
    Ignored {
        reason: String,
        place: PinPlace,
    },
    /// The pod's annotation [`STRATEGY_KEY`] names no strategy: left alone.
    PinInvalid {
        value: String,
        place: PinPlace,
    },
    /// `none`, `wrapper` or `native` from `--strategy` or the pod's pin (`By`).
    ChosenNone(By),
    ChosenWrapper(By),
    ChosenNative(Box<Support>, By),
    /// Native sidecars asked for, with versions known to be too old: left alone.
    NativeTooOld(Box<Support>, By),
    /// `--strategy native` on a pod whose proxy is injected already: left alone.
    NativeInjected(&'static Mesh),
    ProxyInjected(&'static Mesh),
    /// `from`: the Namespace that gives the pod the annotation, when not the pod itself.
    PodTurnsNativeOff {
        key: &'static str,
        value: String,
        from: Option<String>,
    },
    PodIsNative {
        key: &'static str,
        value: String,
        from: Option<String>,
    },
    TooOld(Box<Support>),
    /// The mesh makes every proxy a native sidecar by itself.
    MeshNative(Box<Support>),
    Native(Box<Support>),
    Unknown(Box<Support>),
    /// Said once per run: the versions are not known (`native`: `--strategy native` was
    /// applied anyway).
    VersionsUnknown {
        support: Box<Support>,
        native: bool,
    },
    /// Every kind of pod made from the pod metadata opts out (`first` is the first one's
    /// name, `seen` its marker).
    EveryVariantOptsOut {
        count: usize,
        first: String,
        seen: MarkerSeen,
    },
    /// The wrapper asked for on a pod whose kind does not allow it: left alone.
    WrapperNotAllowed {
        why: &'static str,
        by: By,
    },
    /// Native sidecars asked for on a pod whose kind does not allow them: left alone.
    NativeNotAllowed(By),
    /// The kind allows only the wrapper.
    OnlyWrapper,
    /// Only native sidecars fix the pod, and the versions are not known: nothing written.
    NativeOnlyUnknown {
        support: Box<Support>,
        why: &'static str,
    },
    /// Only native sidecars fix the pod, and it cannot have them: nothing written.
    NoFix {
        mesh: &'static Mesh,
        why: &'static str,
        cause: Blocked,
    },
    /// The kind's fallback, since native sidecars are out.
    Fallback {
        mesh: &'static Mesh,
        cause: Blocked,
        fallback: crate::kinds::Fallback,
    },
}

/// Why a pod cannot have native sidecars.
#[derive(Clone, Debug)]
pub(crate) enum Blocked {
    TooOld(Box<Support>),
    /// The pod turns them off.
    TurnedOff {
        key: &'static str,
        value: String,
    },
    /// Its proxy is injected already as a regular container.
    Injected(&'static Mesh),
}

impl Blocked {
    /// What stops native sidecars, after "but".
    fn text(&self) -> String {
        match self {
            Blocked::TooOld(s) => format!(
                "{} (native sidecars need {})",
                s.too_old_text().unwrap_or_default(),
                s.needs_text()
            ),
            Blocked::TurnedOff { key, value } => {
                format!("the pod turns native sidecars off ({key}: \"{value}\")")
            }
            Blocked::Injected(mesh) => format!(
                "{} is already injected as a regular container (inject it again from the \
                 un-injected manifest)",
                mesh.proxy_container
            ),
        }
    }
}

impl Why {
    /// The rule of the finding this reason becomes.
    pub(crate) fn rule(&self) -> Rule {
        match self {
            Why::MeshConflict(..) => Rule::MeshConflict,
            Why::OptedOut(_) => Rule::OptedOut,
            Why::HostNetwork => Rule::HostNetwork,
            Why::NamespaceNeverInjected { .. } => Rule::NamespaceNeverInjected,
            Why::Ambient { .. } => Rule::Ambient,
            Why::ProxyIsNative(_) | Why::PodIsNative { .. } => Rule::NativeSidecar,
            Why::NativeTooOld(..) => Rule::NativeTooOld,
            Why::Ignored { .. } => Rule::Ignored,
            Why::PinInvalid { .. } => Rule::PinInvalid,
            Why::NativeInjected(_) => Rule::NativeInjected,
            Why::VersionsUnknown { .. } => Rule::VersionsUnknown,
            Why::EveryVariantOptsOut { .. } => Rule::OptedOut,
            Why::WrapperNotAllowed { .. } | Why::NativeNotAllowed(_) => Rule::FixNotAllowed,
            Why::NativeOnlyUnknown { .. } => Rule::NativeOnlyUnknown,
            Why::NoFix { .. } => Rule::NoFixPossible,
            Why::Fallback { .. } => Rule::KillCommand,
            Why::OnlyWrapper
            | Why::ChosenNone(_)
            | Why::ChosenWrapper(_)
            | Why::ChosenNative(..)
            | Why::ProxyInjected(_)
            | Why::PodTurnsNativeOff { .. }
            | Why::TooOld(_)
            | Why::MeshNative(_)
            | Why::Native(_)
            | Why::Unknown(_) => Rule::StrategyChosen,
        }
    }

    /// The finding that says this about `pod`, at its template.
    pub(crate) fn finding(&self, pod: &Pod<'_>) -> Finding {
        let at = pod.template.start;
        let severity = match self {
            Why::MeshConflict(..)
            | Why::NativeTooOld(..)
            | Why::NativeInjected(_)
            | Why::PinInvalid { .. }
            | Why::WrapperNotAllowed { .. }
            | Why::NativeNotAllowed(_) => Severity::Error,
            Why::NativeOnlyUnknown { .. } | Why::NoFix { .. } | Why::Fallback { .. } => {
                Severity::Warning
            }
            _ => Severity::Info,
        };
        if let Why::VersionsUnknown { support, native } = self {
            let message = versions_unknown(support, *native);
            return Finding::info(self.rule(), at, message).with_versions(support.json());
        }
        let mut message = String::with_capacity(128);
        crate::finding::write_describe(&mut message, &pod.object);
        message.push_str(": ");
        let _ = self.write_reason(&mut message);
        let finding =
            Finding::new(severity, self.rule(), at, message).with_object(Some(pod.object.clone()));
        match self.support() {
            Some(s) => finding.with_versions(s.json()),
            None => finding,
        }
    }

    /// What it says, without naming the pod.
    pub(crate) fn reason(&self) -> String {
        let mut s = String::new();
        let _ = self.write_reason(&mut s);
        s
    }

    /// [`Why::reason`], written to `out`: a finding's message is put together in one String.
    fn write_reason(&self, out: &mut String) -> std::fmt::Result {
        match self {
            Why::MeshConflict(a, b) => write!(
                out,
                "both {} ({}) and {} ({}) would inject this pod, and two proxies in one \
                 pod break its traffic; left alone: opt it out of one of the two",
                a.mesh.mesh().name,
                a.what,
                b.mesh.mesh().name,
                b.what
            ),
            Why::OptedOut(off) => {
                write!(out, "skipped, opted out of injection ({})", off.what)
            }
            Why::HostNetwork => out.write_str("skipped, hostNetwork pods are never injected"),
            Why::NamespaceNeverInjected { mesh, namespace } => write!(
                out,
                "skipped, {}'s injector never injects a pod of namespace {namespace}, whatever \
                 its labels say",
                mesh.name
            ),
            Why::Ambient { by } => {
                write!(
                    out,
                    "ambient mode ({by}): no sidecar to stop; {REMOVE_NOTE}"
                )
            }
            Why::ProxyIsNative(mesh) => write!(
                out,
                "{} is already injected as a native sidecar, which Kubernetes stops by \
                 itself; {REMOVE_NOTE}",
                mesh.proxy_container
            ),
            Why::Ignored { reason, place } => {
                write!(out, "left alone: {IGNORE_KEY} {}", place.text())?;
                match reason.trim() {
                    "" => {}
                    r => write!(out, ": {r}")?,
                }
                out.write_str("; nothing is written")
            }
            Why::PinInvalid { value, place } => write!(
                out,
                "{STRATEGY_KEY}: {value:?} {} is not a strategy (auto, wrapper, native or \
                 none); the pod is left as it is",
                place.text()
            ),
            Why::ChosenNone(by) => {
                out.write_str("strategy none")?;
                match by {
                    By::Setting => {}
                    By::Pin { .. } => write!(out, " ({})", by.text(StrategyChoice::None))?,
                }
                write!(out, ": {REMOVE_NOTE}")
            }
            Why::ChosenWrapper(by) => {
                write!(out, "the wrapper ({})", by.text(StrategyChoice::Wrapper))
            }
            Why::ChosenNative(s, by) => {
                write!(out, "native sidecar ({}; ", by.text(StrategyChoice::Native))?;
                s.write_versions_text(out)?;
                out.write_str(")")
            }
            Why::NativeTooOld(s, by) => write!(
                out,
                "{} needs {}, but {}; the pod is left as it is (use the wrapper, or upgrade)",
                by.text(StrategyChoice::Native),
                s.needs_text(),
                s.too_old_text().unwrap_or_default()
            ),
            Why::NativeInjected(mesh) => write!(
                out,
                "{} is already injected as a regular container, so the native-sidecar \
                 annotation cannot take effect; the pod is left as it is. Inject it again from \
                 the un-injected manifest",
                mesh.proxy_container
            ),
            Why::ProxyInjected(mesh) => write!(
                out,
                "the wrapper: {} is already injected, so native sidecars need a new \
                 injection",
                mesh.proxy_container
            ),
            Why::PodTurnsNativeOff { key, value, from } => write!(
                out,
                "the wrapper: the pod turns native sidecars off ({key}: \"{value}\"{})",
                on_namespace(from)
            ),
            Why::PodIsNative { key, value, from } => write!(
                out,
                "native sidecar mode ({key}: \"{value}\"{}) lets the Job complete without a \
                 wrapper; {REMOVE_NOTE}",
                on_namespace(from)
            ),
            Why::TooOld(s) => write!(
                out,
                "the wrapper, since {} (native sidecars need {})",
                s.too_old_text().unwrap_or_default(),
                s.needs_text()
            ),
            Why::MeshNative(s) => {
                write!(
                    out,
                    "native sidecar: {}; the annotation keeps it one (",
                    mesh_native(s)
                )?;
                s.write_versions_text(out)?;
                out.write_str(")")
            }
            Why::Native(s) => {
                out.write_str("native sidecar (")?;
                s.write_versions_text(out)?;
                write!(out, "){}", own_setting(s))
            }
            Why::Unknown(s) => {
                out.write_str("the wrapper (")?;
                s.write_versions_text(out)?;
                out.write_str(")")
            }
            Why::VersionsUnknown { support, native } => {
                out.write_str(&versions_unknown(support, *native))
            }
            Why::EveryVariantOptsOut { count, first, seen } => {
                out.write_str("skipped, ")?;
                match count {
                    1 => out.write_str("its one template that runs pods opts")?,
                    n => write!(out, "every one of its {n} templates that run pods opts")?,
                }
                write!(out, " out of injection (`{first}`: {})", seen.what)
            }
            Why::WrapperNotAllowed { why, by } => write!(
                out,
                "{} cannot fix this pod: {why}; the pod is left as it is ({})",
                by.text(StrategyChoice::Wrapper),
                match by {
                    By::Setting => "use --strategy auto or native",
                    By::Pin { .. } => "pin auto or native instead",
                }
            ),
            Why::NativeNotAllowed(by) => write!(
                out,
                "{}: its entry in the config's `kinds` does not allow native sidecars; the pod \
                 is left as it is",
                by.text(StrategyChoice::Native)
            ),
            Why::OnlyWrapper => out.write_str(
                "the wrapper (its entry in the config's `kinds` allows only the wrapper)",
            ),
            Why::NativeOnlyUnknown { support, why } => {
                let m = support.mesh;
                write!(
                    out,
                    "only a native sidecar fixes this pod ({why}); it needs {}, and the versions \
                     are not known (",
                    support.needs_text(),
                )?;
                support.write_versions_text(out)?;
                write!(
                    out,
                    "), so nothing is written: pass {} and --kubernetes-version, or set {} and \
                     kubernetesVersion in the config (or let meshjob read them from the \
                     manifests, docs/versions.md)",
                    m.version_flag, m.version_key
                )
            }
            Why::NoFix { mesh, why, cause } => write!(
                out,
                "only a native sidecar fixes this pod ({why}), but {}; nothing is written and \
                 its proxy keeps running after the task: opt the pod out of the mesh ({})",
                cause.text(),
                mesh.opt_out
            ),
            Why::Fallback {
                mesh,
                cause,
                fallback,
            } => {
                let crate::kinds::Fallback::KillCommand { prefix } = fallback;
                let argv = mesh.argo_kill.argv;
                write!(
                    out,
                    "native sidecars are out: {}; so the workflow controller is told to stop the \
                     proxy instead ({prefix}{}: '{argv}') once the main containers end. It races \
                     the `wait` container, which may still be uploading outputs and logs through \
                     the proxy (argo-workflows#12919)",
                    cause.text(),
                    mesh.proxy_container
                )
            }
        }
    }

    /// The versions the reason rests on, if it rests on any.
    fn support(&self) -> Option<&Support> {
        match self {
            Why::ChosenNative(s, _) | Why::NativeTooOld(s, _) => Some(s),
            Why::TooOld(s) | Why::MeshNative(s) | Why::Native(s) | Why::Unknown(s) => Some(s),
            _ => None,
        }
    }
}

/// Why the mesh makes every proxy a native sidecar: its global setting as read, or its
/// default for the versions known.
fn mesh_native(s: &Support) -> String {
    let m = s.mesh.name;
    match &s.native {
        Some(n) => format!(
            "{m}'s global setting makes every proxy one (`{}` at {}{})",
            n.value.as_str(),
            n.origin,
            match n.value {
                crate::mesh::NativeMode::Auto => ", every kubelet being new enough",
                _ => "",
            }
        ),
        None => format!(
            "by default {m} makes every proxy one ({})",
            s.mesh.native.by_default
        ),
    }
}

/// The mesh's own global setting, when one was read that does not make every proxy native:
/// the annotation is what does it for this pod.
fn own_setting(s: &Support) -> String {
    match &s.native {
        Some(n) if s.global_native() != Some(true) => format!(
            "; {}'s global setting (`{}` at {}) leaves proxies regular, the annotation makes this \
             one native",
            s.mesh.name,
            n.value.as_str(),
            n.origin
        ),
        _ => String::new(),
    }
}

/// The once-per-run note about the versions that were not given. Its words come from the
/// mesh table and `native` alone, and every pod of a run without versions gets it: each
/// thread keeps the last few.
fn versions_unknown(s: &Support, native: bool) -> String {
    type Notes = crate::memo::Recent<(crate::mesh::MeshId, bool), String, 4>;
    thread_local! {
        static NOTES: std::cell::RefCell<Notes> =
            const { std::cell::RefCell::new(crate::memo::Recent::new()) };
    }
    let key = (s.mesh.id, native);
    NOTES.with_borrow_mut(|notes| {
        let word = || (key, word_versions_unknown(s.mesh, native));
        notes.find_or(|k| *k == key, word).clone()
    })
}

fn word_versions_unknown(m: &Mesh, native: bool) -> String {
    let n = &m.native;
    let tail = if native {
        format!(
            "--strategy native was applied without checking them{}; it needs {} {}+ and \
             Kubernetes {}+",
            n.unknown_version, m.name, n.since, n.kubernetes_since
        )
    } else {
        format!(
            "with both given, pods on {} {}+ and Kubernetes {}+ get a native sidecar (one pod \
             annotation, no wrapper, no command needed) instead of the wrapper",
            m.name, n.since, n.kubernetes_since
        )
    };
    format!(
        "the target versions are not known: pass {} ({}) and --kubernetes-version (the oldest \
         kubelet), or set {} and kubernetesVersion in the config, or have them read from the \
         manifests that install the mesh and a saved `kubectl get nodes -o yaml` (add their \
         paths to the run, or to --versions-from); {tail}",
        m.version_flag, m.version_of, m.version_key
    )
}

/// ` on Namespace/NAME` for an annotation the pod gets from its Namespace, else nothing.
fn on_namespace(from: &Option<String>) -> String {
    from.as_ref()
        .map_or_else(String::new, |ns| format!(" on Namespace/{ns}"))
}
