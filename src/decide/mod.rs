//! Decides, per pod, which mesh injects it and which strategy fixes it, or why it needs no
//! fix.
//!
//! The mesh comes from markers (`markers`): the pod's own, else those of a Namespace
//! document of the same run (`context`), else the `mesh` setting. The strategy comes from a
//! table of conditions ([`STEPS`]): the first that holds decides. Each outcome carries a
//! typed reason ([`Why`]), which [`Why::finding`] alone turns into words.

mod context;
mod lints;
mod markers;
mod pin;
mod why;

pub use context::RunContext;
pub(crate) use context::{Lines, may_add};
pub(crate) use lints::{document_lints, lints};
pub(crate) use markers::Namespaces;
pub(crate) use why::Why;

use crate::config::{Settings, StrategyChoice};
use crate::finding::Finding;
use crate::kinds::{Fallback, Wrapper};
use crate::mesh::{Mesh, Support};
use crate::pod::Pod;
use pin::{By, PinPlace};
use why::Blocked;

/// How a pod is fixed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Strategy {
    /// Wrap each container's entrypoint so that it asks the proxy to quit when the task
    /// ends, and set the mesh's per-pod settings (`plan::container`, the mesh's planner).
    Wrapper,
    /// Ask for a native sidecar with the pod annotation, which Kubernetes stops after the
    /// task; what meshjob added for the wrapper is taken out.
    Native,
    /// Take out what meshjob added: `--strategy none`, an ambient pod, a pod whose proxy is
    /// native already. `keep_native`: leave the native-sidecar annotation (the pod is native
    /// because of it).
    Remove { keep_native: bool },
    /// The kind's fallback where native sidecars are impossible and the wrapper not allowed
    /// (Argo's kill-command annotation, `plan::kill_command`).
    Fallback(Fallback),
}

/// What to do with one pod.
#[derive(Debug)]
pub(crate) enum Decision {
    /// Fix it for `mesh` with `strategy`; `why` explains the choice; `support` holds the
    /// versions it was decided with.
    Fix {
        mesh: &'static Mesh,
        strategy: Strategy,
        why: Why,
        support: Box<Support>,
    },
    /// Leave it: it needs no fix, or the chosen fix cannot be made.
    Skip(Why),
}

/// What the conditions read about one pod.
struct Facts<'a, 'd> {
    pod: &'a Pod<'d>,
    mesh: &'static Mesh,
    /// The pod's strategy: its own pin, else the run's.
    choice: StrategyChoice,
    /// Where `choice` comes from.
    by: By,
    /// A strategy pin whose value is not a strategy, and where it is.
    bad_pin: Option<(String, PinPlace)>,
    support: Support,
    ctx: &'a RunContext,
    /// Whether its kind allows the wrapper for this pod; why not.
    wrapper: Result<(), &'static str>,
}

/// What a condition decides.
enum Outcome {
    Fix(Strategy, Why),
    Skip(Why),
    /// Fix, and say once per run that the versions are not known.
    FixUnknown(Strategy, Why),
}

/// A condition: `Some` when it holds, with what it decides.
type Step = fn(&Facts<'_, '_>) -> Option<Outcome>;

/// The conditions, in order; the first that holds decides. The last always holds.
const STEPS: &[Step] = &[
    pin_invalid,
    host_network,
    namespace_never_injected,
    every_variant_opts_out,
    ambient,
    proxy_is_native,
    chosen_none,
    wrapper_not_allowed,
    chosen_wrapper,
    native_not_allowed,
    chosen_native,
    injected_native_only,
    proxy_injected,
    native_off_native_only,
    pod_turns_native_off,
    pod_is_native,
    too_old_native_only,
    versions_too_old,
    only_wrapper,
    mesh_makes_native,
    versions_allow_native,
    unknown_native_only,
    versions_unknown,
];

/// Decides what to do with one pod. `run_notes` collects the notes said once per run.
pub(crate) fn decide(
    pod: &Pod<'_>,
    settings: &Settings,
    ctx: &RunContext,
    run_notes: &mut Vec<Finding>,
) -> Decision {
    // Before the mesh: a pod left out of meshjob gets no finding about its markers either.
    if let Some((reason, place)) = pin::ignored(pod) {
        return Decision::Skip(Why::Ignored { reason, place });
    }
    let release = |m| ctx.versions.support(m, settings).release();
    let mesh = match markers::which_mesh(pod, settings.mesh, &ctx.namespaces, &release) {
        Ok(m) => m,
        Err(why) => return Decision::Skip(why),
    };
    let (choice, by, bad_pin) = match pin::strategy(pod, settings.strategy) {
        Ok((choice, by)) => (choice, by, None),
        Err(bad) => (settings.strategy, By::Setting, Some(bad)),
    };
    let facts = Facts {
        pod,
        mesh,
        choice,
        by,
        bad_pin,
        support: ctx.versions.support(mesh, settings),
        ctx,
        wrapper: wrapper_allowed(pod),
    };
    let outcome = STEPS.iter().find_map(|step| step(&facts));
    let fix = |strategy, why| Decision::Fix {
        mesh,
        strategy,
        why,
        support: Box::new(facts.support.clone()),
    };
    match outcome {
        Some(Outcome::Fix(strategy, why)) => fix(strategy, why),
        Some(Outcome::FixUnknown(strategy, why)) => {
            let native = strategy == Strategy::Native;
            let note = Why::VersionsUnknown {
                support: Box::new(facts.support.clone()),
                native,
            };
            run_notes.push(note.finding(pod));
            fix(strategy, why)
        }
        Some(Outcome::Skip(why)) => Decision::Skip(why),
        // `versions_unknown` always holds.
        None => fix(
            Strategy::Wrapper,
            Why::Unknown(Box::new(facts.support.clone())),
        ),
    }
}

/// A strategy pin that names no strategy: the pod is left as it is, since the owner asked
/// for something meshjob cannot tell.
fn pin_invalid(f: &Facts<'_, '_>) -> Option<Outcome> {
    let (value, place) = f.bad_pin.clone()?;
    Some(Outcome::Skip(Why::PinInvalid { value, place }))
}

/// A `hostNetwork` pod is never injected, whatever its mesh.
fn host_network(f: &Facts<'_, '_>) -> Option<Outcome> {
    f.pod
        .spec_true("hostNetwork")
        .then_some(Outcome::Skip(Why::HostNetwork))
}

/// A pod of a namespace its mesh's injector never injects (kube-system, ...).
fn namespace_never_injected(f: &Facts<'_, '_>) -> Option<Outcome> {
    let ns = &f.pod.object.namespace;
    let never = (f.mesh.never_injects)(f.support.release());
    never.contains(&ns.as_str()).then(|| {
        Outcome::Skip(Why::NamespaceNeverInjected {
            mesh: f.mesh,
            namespace: ns.clone(),
        })
    })
}

/// An ambient pod has no sidecar: meshjob's changes come out.
fn ambient(f: &Facts<'_, '_>) -> Option<Outcome> {
    let a = f.mesh.ambient.as_ref()?;
    let labels = f.pod.labels();
    let sidecar = labels.is_some_and(|l| a.pod_sidecar.iter().any(|s| s.on(l)));
    if sidecar {
        return None;
    }
    let own = labels
        .and_then(|l| l.str(a.label))
        .filter(|v| *v == a.value)
        .map(|v| format!("label {}: {v}", a.label));
    let ns = &f.pod.object.namespace;
    let in_namespace = || {
        let listed = (f.ctx.ambient_namespaces.iter()).any(|(m, n)| *m == f.mesh.id && n == ns);
        (!ns.is_empty() && listed)
            .then(|| format!("Namespace {ns} is labelled {}: ambient", a.label))
    };
    let by = own.or_else(in_namespace)?;
    Some(Outcome::Fix(
        Strategy::Remove { keep_native: false },
        Why::Ambient { by },
    ))
}

/// The proxy is injected already as a native sidecar, which Kubernetes stops by itself.
fn proxy_is_native(f: &Facts<'_, '_>) -> Option<Outcome> {
    let proxy = f.mesh.proxy_container;
    let native = (f.pod.init_containers()).any(|c| c.name() == proxy && c.is_native_sidecar());
    native.then_some(Outcome::Fix(
        Strategy::Remove { keep_native: true },
        Why::ProxyIsNative(f.mesh),
    ))
}

fn chosen_none(f: &Facts<'_, '_>) -> Option<Outcome> {
    (f.choice == StrategyChoice::None).then(|| {
        Outcome::Fix(
            Strategy::Remove { keep_native: false },
            Why::ChosenNone(f.by.clone()),
        )
    })
}

fn chosen_wrapper(f: &Facts<'_, '_>) -> Option<Outcome> {
    (f.choice == StrategyChoice::Wrapper)
        .then(|| Outcome::Fix(Strategy::Wrapper, Why::ChosenWrapper(f.by.clone())))
}

/// `--strategy native`: refused where the versions are known to be too old or the proxy
/// is injected already; applied without checking when they are not known.
fn chosen_native(f: &Facts<'_, '_>) -> Option<Outcome> {
    if f.choice != StrategyChoice::Native {
        return None;
    }
    let s = Box::new(f.support.clone());
    let by = f.by.clone();
    Some(if !s.too_old().is_empty() {
        Outcome::Skip(Why::NativeTooOld(s, by))
    } else if f.pod.container(f.mesh.proxy_container).is_some() {
        Outcome::Skip(Why::NativeInjected(f.mesh))
    } else if !s.known() {
        Outcome::FixUnknown(Strategy::Native, Why::ChosenNative(s, by))
    } else {
        Outcome::Fix(Strategy::Native, Why::ChosenNative(s, by))
    })
}

/// The proxy is injected already as a regular container: native needs a new injection.
fn proxy_injected(f: &Facts<'_, '_>) -> Option<Outcome> {
    f.pod
        .container(f.mesh.proxy_container)
        .map(|_| Outcome::Fix(Strategy::Wrapper, Why::ProxyInjected(f.mesh)))
}

/// The pod's native-sidecar annotation that counts (the first the target reads), with its
/// value and, when the pod gets it from its Namespace, that Namespace's name.
fn native_annotation(f: &Facts<'_, '_>) -> Option<(&'static str, String, Option<String>)> {
    (f.mesh.native_sidecar_annotations.iter())
        .filter(|k| f.support.reads(k))
        .find_map(|k| {
            let (v, ns) = f.pod.effective_annotation(k)?;
            Some((*k, v.to_string(), ns.map(str::to_string)))
        })
}

fn pod_turns_native_off(f: &Facts<'_, '_>) -> Option<Outcome> {
    let (key, value, from) = native_annotation(f).filter(|(_, v, _)| f.support.is_off(v))?;
    Some(Outcome::Fix(
        Strategy::Wrapper,
        Why::PodTurnsNativeOff { key, value, from },
    ))
}

/// The pod (or its Namespace) asks for a native sidecar, and the versions allow it.
fn pod_is_native(f: &Facts<'_, '_>) -> Option<Outcome> {
    let (key, value, from) = native_annotation(f).filter(|(_, v, _)| f.support.is_on(v))?;
    f.support.too_old().is_empty().then_some(Outcome::Fix(
        Strategy::Remove { keep_native: true },
        Why::PodIsNative { key, value, from },
    ))
}

fn versions_too_old(f: &Facts<'_, '_>) -> Option<Outcome> {
    too_old(&f.support).map(|(st, why)| Outcome::Fix(st, why))
}

fn mesh_makes_native(f: &Facts<'_, '_>) -> Option<Outcome> {
    mesh_native(&f.support).map(|(st, why)| Outcome::Fix(st, why))
}

fn versions_allow_native(f: &Facts<'_, '_>) -> Option<Outcome> {
    allow_native(&f.support).map(|(st, why)| Outcome::Fix(st, why))
}

fn versions_unknown(f: &Facts<'_, '_>) -> Option<Outcome> {
    let (st, why) = unknown(&f.support);
    Some(Outcome::FixUnknown(st, why))
}

fn too_old(s: &Support) -> Option<(Strategy, Why)> {
    (!s.too_old().is_empty()).then(|| (Strategy::Wrapper, Why::TooOld(Box::new(s.clone()))))
}

/// The mesh makes every proxy a native sidecar by itself (its global setting, or its
/// default with the kubelets known): the wrapper would only quit a proxy the kubelet starts
/// again, so the pod gets the native annotation too, which keeps it native if the global
/// setting changes.
fn mesh_native(s: &Support) -> Option<(Strategy, Why)> {
    (s.global_native() == Some(true))
        .then(|| (Strategy::Native, Why::MeshNative(Box::new(s.clone()))))
}

fn allow_native(s: &Support) -> Option<(Strategy, Why)> {
    s.known()
        .then(|| (Strategy::Native, Why::Native(Box::new(s.clone()))))
}

fn unknown(s: &Support) -> (Strategy, Why) {
    (Strategy::Wrapper, Why::Unknown(Box::new(s.clone())))
}

/// What `auto` does, by the versions alone, with a pod that nothing else decides (no
/// markers of its own, no native annotation, no proxy injected): the last rows of
/// [`STEPS`].
pub(crate) fn by_versions(s: &Support) -> (Strategy, Why) {
    too_old(s)
        .or_else(|| mesh_native(s))
        .or_else(|| allow_native(s))
        .unwrap_or_else(|| unknown(s))
}

/// Whether the pod's kind allows the wrapper for it; why not.
pub(crate) fn wrapper_allowed(pod: &Pod<'_>) -> Result<(), &'static str> {
    match pod.fixes.wrapper {
        Wrapper::Allowed => Ok(()),
        Wrapper::Never(why) => Err(why),
        Wrapper::WhenFirstCommand(why) => {
            let first = pod.containers().next();
            match first.and_then(|c| c.get("command")) {
                Some(_) => Ok(()),
                None => Err(why),
            }
        }
    }
}

/// Every kind of pod made from the pod metadata opts out of the mesh in its own metadata
/// (an Argo Workflow whose every template says `sidecar.istio.io/inject: "false"`, as
/// Kubeflow Pipelines writes them): no pod gets a sidecar.
fn every_variant_opts_out(f: &Facts<'_, '_>) -> Option<Outcome> {
    let variants = &f.pod.variants;
    let pod_meta = f.pod.metadata();
    let mut first = None;
    for v in variants {
        let lookup = |place: &str, key: &str| {
            v.get(place, key)
                .or_else(|| pod_meta?.get(place)?.get(key)?.as_str())
        };
        let seen = markers::level_by(
            f.mesh,
            &lookup,
            f.mesh.pod_markers,
            None,
            f.support.release(),
        )
        .filter(|s| s.marker == crate::mesh::Marker::Off)?;
        first.get_or_insert((v.name, seen));
    }
    let (name, seen) = first?;
    Some(Outcome::Skip(Why::EveryVariantOptsOut {
        count: variants.len(),
        first: name.to_string(),
        seen,
    }))
}

/// `--strategy wrapper` on a pod whose kind does not allow it.
fn wrapper_not_allowed(f: &Facts<'_, '_>) -> Option<Outcome> {
    let why = f.wrapper.err()?;
    (f.choice == StrategyChoice::Wrapper).then(|| {
        Outcome::Skip(Why::WrapperNotAllowed {
            why,
            by: f.by.clone(),
        })
    })
}

/// `--strategy native` on a pod whose kind does not allow it (a config row).
fn native_not_allowed(f: &Facts<'_, '_>) -> Option<Outcome> {
    (f.choice == StrategyChoice::Native && !f.pod.fixes.native)
        .then(|| Outcome::Skip(Why::NativeNotAllowed(f.by.clone())))
}

/// Only native sidecars could fix the pod, and they are out: the kind's fallback, or
/// nothing (with a warning).
fn no_native(f: &Facts<'_, '_>, cause: Blocked) -> Option<Outcome> {
    let why = f.wrapper.err()?;
    Some(match f.pod.fallback {
        Some(fb) if !matches!(cause, Blocked::Injected(_)) => Outcome::Fix(
            Strategy::Fallback(fb),
            Why::Fallback {
                mesh: f.mesh,
                cause,
                fallback: fb,
            },
        ),
        _ => Outcome::Skip(Why::NoFix {
            mesh: f.mesh,
            why,
            cause,
        }),
    })
}

/// The proxy is injected already, which rules native out, and the kind allows no wrapper.
fn injected_native_only(f: &Facts<'_, '_>) -> Option<Outcome> {
    f.pod.container(f.mesh.proxy_container)?;
    no_native(f, Blocked::Injected(f.mesh))
}

/// The pod turns native sidecars off, and the kind allows no wrapper.
fn native_off_native_only(f: &Facts<'_, '_>) -> Option<Outcome> {
    let (key, value, _) = native_annotation(f).filter(|(_, v, _)| f.support.is_off(v))?;
    no_native(f, Blocked::TurnedOff { key, value })
}

/// The versions are too old for native sidecars, and the kind allows no wrapper.
fn too_old_native_only(f: &Facts<'_, '_>) -> Option<Outcome> {
    if f.support.too_old().is_empty() {
        return None;
    }
    no_native(f, Blocked::TooOld(Box::new(f.support.clone())))
}

/// The kind allows only the wrapper (a config row).
fn only_wrapper(f: &Facts<'_, '_>) -> Option<Outcome> {
    (!f.pod.fixes.native).then_some(Outcome::Fix(Strategy::Wrapper, Why::OnlyWrapper))
}

/// Only native sidecars can fix the pod and the versions are not known: a native
/// annotation on a cluster that cannot run it breaks pod creation, so nothing is written.
fn unknown_native_only(f: &Facts<'_, '_>) -> Option<Outcome> {
    let why = f.wrapper.err()?;
    Some(Outcome::Skip(Why::NativeOnlyUnknown {
        support: Box::new(f.support.clone()),
        why,
    }))
}

#[cfg(test)]
mod tests;
