//! Decides, per pod, which mesh injects it and which strategy fixes it, or why it needs no
//! fix.
//!
//! The mesh comes from markers (`markers`): the pod's own, else those of a Namespace
//! document of the same run (`context`), else the `mesh` setting. The strategy comes from a
//! table of conditions ([`STEPS`]): the first that holds decides. Each outcome carries a
//! typed reason ([`Why`]), which [`Why::finding`] alone turns into words.

mod context;
mod markers;
mod why;

pub use context::RunContext;
pub(crate) use markers::Namespaces;
pub(crate) use why::Why;

use crate::config::{Settings, StrategyChoice};
use crate::finding::Finding;
use crate::mesh::{Mesh, Support};
use crate::pod::Pod;

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
}

/// What to do with one pod.
#[derive(Debug)]
pub(crate) enum Decision {
    /// Fix it for `mesh` with `strategy`; `why` explains the choice.
    Fix {
        mesh: &'static Mesh,
        strategy: Strategy,
        why: Why,
    },
    /// Leave it: it needs no fix, or the chosen fix cannot be made.
    Skip(Why),
}

/// What the conditions read about one pod.
struct Facts<'a, 'd> {
    pod: &'a Pod<'d>,
    mesh: &'static Mesh,
    choice: StrategyChoice,
    support: Support,
    ctx: &'a RunContext,
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
    host_network,
    ambient,
    proxy_is_native,
    chosen_none,
    chosen_wrapper,
    chosen_native,
    proxy_injected,
    pod_turns_native_off,
    pod_is_native,
    versions_too_old,
    versions_allow_native,
    versions_unknown,
];

/// Decides what to do with one pod. `run_notes` collects the notes said once per run.
pub(crate) fn decide(
    pod: &Pod<'_>,
    settings: &Settings,
    ctx: &RunContext,
    run_notes: &mut Vec<Finding>,
) -> Decision {
    let mesh = match markers::which_mesh(pod, settings.mesh, &ctx.namespaces) {
        Ok(m) => m,
        Err(why) => return Decision::Skip(why),
    };
    let facts = Facts {
        pod,
        mesh,
        choice: settings.strategy,
        support: mesh.support(settings),
        ctx,
    };
    let outcome = STEPS.iter().find_map(|step| step(&facts));
    let fix = |strategy, why| Decision::Fix {
        mesh,
        strategy,
        why,
    };
    match outcome {
        Some(Outcome::Fix(strategy, why)) => fix(strategy, why),
        Some(Outcome::FixUnknown(strategy, why)) => {
            let native = strategy == Strategy::Native;
            let note = Why::VersionsUnknown {
                support: facts.support,
                native,
            };
            run_notes.push(note.finding(pod));
            fix(strategy, why)
        }
        Some(Outcome::Skip(why)) => Decision::Skip(why),
        // `versions_unknown` always holds.
        None => fix(Strategy::Wrapper, Why::Unknown(facts.support)),
    }
}

/// A `hostNetwork` pod is never injected, whatever its mesh.
fn host_network(f: &Facts<'_, '_>) -> Option<Outcome> {
    f.pod
        .spec_true("hostNetwork")
        .then_some(Outcome::Skip(Why::HostNetwork))
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
    (f.choice == StrategyChoice::None).then_some(Outcome::Fix(
        Strategy::Remove { keep_native: false },
        Why::ChosenNone,
    ))
}

fn chosen_wrapper(f: &Facts<'_, '_>) -> Option<Outcome> {
    (f.choice == StrategyChoice::Wrapper)
        .then_some(Outcome::Fix(Strategy::Wrapper, Why::ChosenWrapper))
}

/// `--strategy native`: refused where the versions are known to be too old or the proxy
/// is injected already; applied without checking when they are not known.
fn chosen_native(f: &Facts<'_, '_>) -> Option<Outcome> {
    if f.choice != StrategyChoice::Native {
        return None;
    }
    let s = f.support;
    Some(if !s.too_old().is_empty() {
        Outcome::Skip(Why::NativeTooOld(s))
    } else if f.pod.container(f.mesh.proxy_container).is_some() {
        Outcome::Skip(Why::NativeInjected(f.mesh))
    } else if !s.known() {
        Outcome::FixUnknown(Strategy::Native, Why::ChosenNative(s))
    } else {
        Outcome::Fix(Strategy::Native, Why::ChosenNative(s))
    })
}

/// The proxy is injected already as a regular container: native needs a new injection.
fn proxy_injected(f: &Facts<'_, '_>) -> Option<Outcome> {
    f.pod
        .container(f.mesh.proxy_container)
        .map(|_| Outcome::Fix(Strategy::Wrapper, Why::ProxyInjected(f.mesh)))
}

/// The pod's native-sidecar annotation that counts (the first the mesh reads), with its
/// value and, when the pod gets it from its Namespace, that Namespace's name.
fn native_annotation(f: &Facts<'_, '_>) -> Option<(&'static str, String, Option<String>)> {
    (f.mesh.native_sidecar_annotations.iter()).find_map(|k| {
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
    (!f.support.too_old().is_empty())
        .then_some(Outcome::Fix(Strategy::Wrapper, Why::TooOld(f.support)))
}

fn versions_allow_native(f: &Facts<'_, '_>) -> Option<Outcome> {
    f.support
        .known()
        .then_some(Outcome::Fix(Strategy::Native, Why::Native(f.support)))
}

fn versions_unknown(f: &Facts<'_, '_>) -> Option<Outcome> {
    Some(Outcome::FixUnknown(
        Strategy::Wrapper,
        Why::Unknown(f.support),
    ))
}

#[cfg(test)]
mod tests;
