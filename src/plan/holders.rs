//! What a pod's other holders get (`mesh::holder`: Vault Agent, Dapr, Consul), beside the
//! run's mesh proxy: each holder's fix under the run's strategy, its quit endpoint for the
//! one wrapper that stops every holder of the pod, and the annotations its fix needs.
//!
//! Each holder is decided on its own: a holder that goes native is not called by the
//! wrapper; `none` takes out every annotation meshjob wrote for it (when it still holds
//! meshjob's value), and the wrapper with the mesh's own fix.

use super::annotation;
use super::script::Endpoint;
use crate::config::{Settings, StrategyChoice};
use crate::finding::{Finding, Rule, describe};
use crate::mesh::holder::{self, Holder, Recognised};
use crate::pod::Pod;
use crate::version::{Kubelets, Semver};
use crate::yaml::editor::Editor;
use crate::yaml::emit::Out;

/// What one holder of a pod gets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Fix {
    /// The wrapper calls this endpoint; the holder's `wrapper_needs` annotations are set.
    Wrapper(Endpoint),
    /// The holder's native-sidecar annotation is set.
    Native,
    /// Its `released_by` annotation is set (Vault's pre-populate-only): nothing of it runs.
    Released,
    /// Nothing can stop it from the manifest (a finding said why); only `always` is set.
    Blocked,
    /// What meshjob wrote for it comes out.
    Remove,
}

/// One holder of a pod and its fix.
#[derive(Debug)]
pub(crate) struct Held {
    pub holder: &'static Holder,
    pub fix: Fix,
}

/// The holders whose injectors inject a pod template (none for most pods), except those
/// released by the pod itself (Vault's pre-populate-only written by hand), unless meshjob
/// may have written that (`vaultPrePopulateOnly`).
pub(crate) fn of(t: &Pod<'_>, settings: &Settings) -> Vec<&'static Holder> {
    if t.annotations().is_none() {
        return Vec::new();
    }
    let get = |k: &str| t.annotation(k);
    (holder::ALL.iter().copied())
        .filter(|h| holder::injects(h, &get))
        .filter(|h| !holder::released(h, &get) || releases(h, settings))
        .collect()
}

/// Whether the settings give `h` its released fix (Vault: `vaultPrePopulateOnly`).
fn releases(h: &Holder, settings: &Settings) -> bool {
    h.released_by.is_some() && settings.vault_pre_populate_only
}

/// Chooses each holder's fix under the run's strategy, from its injector's version (a flag
/// or config key) and the oldest kubelet: `auto` writes the native key where both are known
/// to read it, else the wrapper fix, which every version the holder names serves.
pub(crate) fn choose(
    t: &Pod<'_>,
    holders: &[&'static Holder],
    settings: &Settings,
    kubelets: Option<Kubelets>,
    out: &mut Vec<Finding>,
) -> Vec<Held> {
    let who = t.describe();
    let at = t.template.start;
    let note = |f: Finding| f.with_object(Some(t.object.clone()));
    let mut held = Vec::new();
    for &h in holders {
        let version = settings.holder_versions.get(h.version_key).copied();
        let said = |v: Semver| {
            let from = (settings.given.holders.get(h.version_key))
                .map_or_else(String::new, |o| format!(" (from {o})"));
            format!("{} {v}{from}", h.version_of)
        };
        let native_ok = |v: Option<Semver>| {
            h.native.is_some() && v.is_none_or(|v| v.at_least_any(h.native_since))
        };
        let fix = match settings.strategy {
            StrategyChoice::None => Fix::Remove,
            _ if releases(h, settings) => Fix::Released,
            StrategyChoice::Native
                if native_ok(version)
                    && h.native
                        .as_ref()
                        .is_some_and(|n| !too_old(kubelets, n.kubernetes_since)) =>
            {
                Fix::Native
            }
            StrategyChoice::Auto
                if version.is_some()
                    && native_ok(version)
                    && h.native
                        .as_ref()
                        .is_some_and(|n| new_enough(kubelets, n.kubernetes_since)) =>
            {
                Fix::Native
            }
            choice => {
                match (&h.native, version) {
                    _ if choice != StrategyChoice::Native => {}
                    (None, _) => out.push(note(Finding::warning(
                        Rule::HolderNoNative,
                        at,
                        format!(
                            "{who}: no {} release can run {} as a native sidecar, so \
                             `--strategy native` gives it the wrapper instead",
                            h.name, h.container
                        ),
                    ))),
                    (Some(n), Some(v)) if !native_ok(Some(v)) => out.push(note(Finding::warning(
                        Rule::HolderNoNative,
                        at,
                        format!(
                            "{who}: {} does not read `{}` (it needs {}), so `--strategy \
                             native` gives {} the wrapper instead",
                            said(v),
                            n.key,
                            n.since,
                            h.name
                        ),
                    ))),
                    (Some(n), _) => out.push(note(Finding::warning(
                        Rule::HolderNoNative,
                        at,
                        format!(
                            "{who}: the oldest kubelet is older than Kubernetes {}, which \
                             runs no native sidecars, so `--strategy native` gives {} the \
                             wrapper instead of `{}`",
                            n.kubernetes_since, h.name, n.key
                        ),
                    ))),
                }
                match version {
                    Some(v) if !v.at_least_any(h.quit_since) => {
                        let instead = match h.released_by {
                            Some(k) => format!(
                                "; `vaultPrePopulateOnly: true` in the config writes `{k}: \
                                 \"true\"` instead"
                            ),
                            None => String::new(),
                        };
                        out.push(note(Finding::warning(
                            Rule::HolderBlocked,
                            at,
                            format!(
                                "{who}: {} has no quit endpoint for {} (it needs {}), so the \
                                 wrapper does not call it and the pod still keeps running \
                                 after the task{instead}",
                                said(v),
                                h.container,
                                h.quit.needs
                            ),
                        )));
                        Fix::Blocked
                    }
                    _ => wrapper_fix(t, h, out),
                }
            }
        };
        match (&fix, h.released_by, &h.native) {
            (Fix::Released, Some(k), _) => out.push(note(Finding::info(
                Rule::HolderFixed,
                at,
                format!(
                    "{who}: `{k}: \"true\"` (vaultPrePopulateOnly): {} injects only its init \
                     container, which fetches the secrets once; they are not renewed during the \
                     task",
                    h.name
                ),
            ))),
            (Fix::Native, _, Some(n)) => out.push(note(Finding::info(
                Rule::HolderFixed,
                at,
                format!(
                    "{who}: {} ({}) is a native sidecar with `{}: \"{}\"` ({}), which the \
                     kubelet stops after the task",
                    h.name,
                    h.container,
                    n.key,
                    n.on,
                    version.map_or_else(|| format!("needs {}", n.since), said)
                ),
            ))),
            _ => {}
        }
        if let Fix::Wrapper(e) = &fix {
            let native = h.native.as_ref().map_or_else(
                || format!("no {} release runs it as a native sidecar", h.name),
                |n| {
                    format!(
                        "`{}` needs {} and Kubernetes {}+",
                        n.key, n.since, n.kubernetes_since
                    )
                },
            );
            let needs = match version {
                Some(v) => format!("{} serves it", said(v)),
                None => format!(
                    "which needs {} ({} unknown: pass {} or set {})",
                    h.quit.needs, h.version_of, h.version_flag, h.version_key
                ),
            };
            out.push(note(Finding::info(
                Rule::HolderFixed,
                at,
                format!(
                    "{who}: {} ({}) is stopped by the wrapper's {} to {e}, {needs}; {native}",
                    h.name, h.container, h.quit.method
                ),
            )));
        }
        held.push(Held { holder: h, fix });
    }
    held
}

/// Whether the kubelets are known to be `since` or newer.
fn new_enough(kubelets: Option<Kubelets>, since: crate::version::Version) -> bool {
    match kubelets {
        Some(Kubelets::Oldest(v) | Kubelets::AtLeast(v)) => v >= since,
        None => false,
    }
}

/// Whether the kubelets are known to be older than `since`.
fn too_old(kubelets: Option<Kubelets>, since: crate::version::Version) -> bool {
    matches!(kubelets, Some(Kubelets::Oldest(v)) if v < since)
}

/// The wrapper fix of one holder, or why there is none.
fn wrapper_fix(t: &Pod<'_>, h: &Holder, out: &mut Vec<Finding>) -> Fix {
    let note = |f: Finding| f.with_object(Some(t.object.clone()));
    if let Some((key, why)) = h.wrapper_blocked_by
        && t.annotation(key).is_some()
    {
        out.push(note(Finding::warning(
            Rule::HolderBlocked,
            t.template.start,
            format!(
                "{}: `{key}` is set: {why}; the wrapper does not call {}, so the pod still \
                 keeps running after the task{}",
                t.describe(),
                h.name,
                h.native.as_ref().map_or_else(String::new, |n| format!(
                    "; `{}: \"{}\"` ({}) stops it",
                    n.key, n.on, n.since
                ))
            ),
        )));
        return Fix::Blocked;
    }
    match endpoint(t, h) {
        Ok(e) => Fix::Wrapper(e),
        Err(m) => {
            out.push(note(Finding::error(Rule::QuitUrl, t.template.start, m)));
            Fix::Blocked
        }
    }
}

/// A holder's quit endpoint for one pod: its default, moved by the pod's annotations.
fn endpoint(t: &Pod<'_>, h: &Holder) -> Result<Endpoint, String> {
    let q = &h.quit;
    let port = match q.port_annotation.and_then(|k| Some((k, t.annotation(k)?))) {
        Some((k, v)) => v
            .trim()
            .parse::<u16>()
            .ok()
            .filter(|p| *p > 0)
            .ok_or_else(|| {
                format!(
                    "{}: `{k}: {v:?}` is not a port, so meshjob cannot tell where {} listens",
                    t.describe(),
                    h.name
                )
            })?,
        None => q.port,
    };
    let path = match q.path_annotation.and_then(|k| Some((k, t.annotation(k)?))) {
        Some((k, v)) => {
            let url = format!("http://{}:{port}{v}", q.host);
            return super::script::parse_quit_url(&url)
                .map_err(|m| format!("{}: `{k}` does not give a usable path: {m}", t.describe()));
        }
        None => q.path,
    };
    Ok(Endpoint {
        host: q.host.to_string(),
        port,
        path: path.to_string(),
    })
}

/// The endpoints the wrapper calls for these holders, in order.
pub(crate) fn endpoints(held: &[Held]) -> Vec<Endpoint> {
    (held.iter())
        .filter_map(|h| match &h.fix {
            Fix::Wrapper(e) => Some(e.clone()),
            _ => None,
        })
        .collect()
}

/// Sets the annotations each holder's fix needs, and takes out those meshjob wrote for
/// another fix (when they still hold meshjob's value).
pub(crate) fn annotate(
    ed: &mut Editor<'_>,
    t: &Pod<'_>,
    held: &[Held],
    settings: &Settings,
    out: &mut Vec<Finding>,
) {
    let force = settings.force;
    let Some(anns) = t.annotations().filter(|a| a.entries().is_some()) else {
        return;
    };
    let mut want: Vec<(&str, &str)> = Vec::new();
    let mut drop: Vec<&str> = Vec::new();
    for h in held {
        let hd = h.holder;
        let native = hd.native.as_ref().map(|n| (n.key, n.on));
        let wanted: Vec<(&str, &str)> = match &h.fix {
            Fix::Wrapper(_) => hd.wrapper_needs.iter().chain(hd.always).copied().collect(),
            Fix::Native => hd.always.iter().copied().chain(native).collect(),
            Fix::Blocked => hd.always.to_vec(),
            Fix::Released => hd.released_by.map(|k| (k, "true")).into_iter().collect(),
            Fix::Remove => Vec::new(),
        };
        for (k, v) in hd.written() {
            // A pre-populate-only that meshjob did not write stays, whatever the strategy.
            let mine = hd.released_by != Some(k) || releases(hd, settings);
            if !mine || wanted.iter().any(|(w, _)| *w == k) {
                continue;
            }
            if anns.str(k) == Some(v) && !drop.contains(&k) {
                drop.push(k);
            }
        }
        want.extend(wanted);
    }
    let apath = t.annotations_path();
    let mut missing: Vec<(&str, &str)> = Vec::new();
    for (k, v) in want {
        match anns.entry(k) {
            None => missing.push((k, v)),
            Some(e) if e.value.as_str() == Some(v) => {}
            Some(e) if force => {
                ed.replace_value(anns, &e.key, &e.value, &apath, k, &Out::Str(v.into()));
            }
            Some(e) => out.push(
                Finding::warning(
                    Rule::HolderAnnotationKept,
                    e.key.start,
                    format!(
                        "{}: `{k}` is {:?}, but the fix needs \"{v}\"; kept as written \
                         (--force overwrites it)",
                        t.describe(),
                        e.value.as_str().unwrap_or_default()
                    ),
                )
                .with_object(Some(t.object.clone())),
            ),
        }
    }
    if !drop.is_empty() {
        ed.remove_entries(anns, &apath, &drop);
        for k in &drop {
            out.push(
                Finding::info(
                    Rule::SettingRemoved,
                    anns.entry(k).map_or(anns.start, |e| e.key.start),
                    format!("{}: {k} taken out", describe(&t.object)),
                )
                .with_object(Some(t.object.clone())),
            );
        }
    }
    if !missing.is_empty() {
        let keys: Vec<&str> = missing.iter().map(|(k, _)| *k).collect();
        annotation::ensure_all(ed, t, &keys, &|i, _| Out::Str(missing[i].1.into()), out);
    }
}

/// The finding that says the pod belongs to a mesh other than the run's.
pub(crate) fn owned(t: &Pod<'_>, owner: &Holder, run_mesh: &str) -> Finding {
    Finding::info(
        Rule::HolderOwnsPod,
        t.template.start,
        format!(
            "{}: `{}` makes it a {} pod, which {run_mesh} does not inject; its {} gets \
             {}'s fix, not {run_mesh}'s",
            t.describe(),
            owner.trigger,
            owner.name,
            owner.container,
            owner.name
        ),
    )
    .with_object(Some(t.object.clone()))
}

/// The finding that says a pod template would change for its holders alone (the mesh's
/// part of the fix changes nothing).
pub(crate) fn would_change(t: &Pod<'_>, held: &[Held]) -> Finding {
    let names: Vec<&str> = held.iter().map(|h| h.holder.container).collect();
    Finding::error(
        Rule::WouldChange,
        t.template.start,
        format!(
            "{}: would be fixed so that {} stops after the task: its pod would keep running \
             after the task otherwise",
            t.describe(),
            names.join(", ")
        ),
    )
    .with_object(Some(t.object.clone()))
    .fixed()
}

/// The injectors meshjob recognises and leaves alone that inject a pod template.
pub(crate) fn recognised(t: &Pod<'_>) -> Vec<&'static Recognised> {
    (holder::RECOGNISED.iter().copied())
        .filter(|r| {
            let value = if r.label {
                t.label(r.key)
            } else {
                t.annotation(r.key)
            };
            value.is_some_and(|v| {
                r.on.is_empty() || r.on.iter().any(|o| o.eq_ignore_ascii_case(v.trim()))
            })
        })
        .collect()
}

/// What is said of the recognised injectors of a pod: why meshjob leaves each alone, a
/// warning where it may still hold the pod (the oldest kubelet known older than where it
/// goes native by itself).
pub(crate) fn recognised_findings(
    t: &Pod<'_>,
    rs: &[&'static Recognised],
    kubelets: Option<Kubelets>,
) -> Vec<Finding> {
    rs.iter()
        .map(|r| {
            let old = r.native_from.filter(|since| too_old(kubelets, *since));
            let mut m = format!("{}: `{}` ({}): {}", t.describe(), r.key, r.name, r.why);
            if let Some(since) = old {
                m.push_str(&format!(
                    "; the oldest kubelet is older than Kubernetes {since}, so it keeps this pod \
                     running"
                ));
            }
            let f = if r.warning || old.is_some() {
                Finding::warning(Rule::HolderRecognised, t.template.start, m)
            } else {
                Finding::info(Rule::HolderRecognised, t.template.start, m)
            };
            f.with_object(Some(t.object.clone()))
        })
        .collect()
}
