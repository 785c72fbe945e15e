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
use crate::mesh::holder::{self, Holder};
use crate::pod::Pod;
use crate::version::Kubelets;
use crate::yaml::editor::Editor;
use crate::yaml::emit::Out;

/// What one holder of a pod gets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Fix {
    /// The wrapper calls this endpoint; the holder's `wrapper_needs` annotations are set.
    Wrapper(Endpoint),
    /// The holder's native-sidecar annotation is set.
    Native,
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

/// The holders of a pod template (none for most pods).
pub(crate) fn of(t: &Pod<'_>) -> Vec<&'static Holder> {
    if t.annotations().is_none() {
        return Vec::new();
    }
    let get = |k: &str| t.annotation(k);
    (holder::ALL.iter().copied())
        .filter(|h| holder::holds(h, &get))
        .collect()
}

/// Chooses each holder's fix under the run's strategy. A native fix is chosen only where the
/// holder has a native key and `--strategy native` asks for it: meshjob does not read the
/// holders' versions yet, so `auto` keeps to the wrapper, which every version it names
/// serves.
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
        let fix = match settings.strategy {
            StrategyChoice::None => Fix::Remove,
            StrategyChoice::Native
                if h.native
                    .as_ref()
                    .is_some_and(|n| !too_old(kubelets, n.kubernetes_since)) =>
            {
                Fix::Native
            }
            choice => {
                if let (StrategyChoice::Native, Some(n)) = (choice, &h.native) {
                    out.push(note(Finding::warning(
                        Rule::HolderNoNative,
                        at,
                        format!(
                            "{who}: the oldest kubelet is older than Kubernetes {}, which \
                             runs no native sidecars, so `--strategy native` gives {} the \
                             wrapper instead of `{}`",
                            n.kubernetes_since, h.name, n.key
                        ),
                    )));
                } else if choice == StrategyChoice::Native {
                    out.push(note(Finding::warning(
                        Rule::HolderNoNative,
                        at,
                        format!(
                            "{who}: no {} release can run {} as a native sidecar, so \
                             `--strategy native` gives it the wrapper instead",
                            h.name, h.container
                        ),
                    )));
                }
                wrapper_fix(t, h, out)
            }
        };
        if let Fix::Wrapper(e) = &fix {
            let native = h.native.as_ref().map_or_else(
                || format!("no {} release runs it as a native sidecar", h.name),
                |n| format!("`{}` needs {} (not read by meshjob)", n.key, n.since),
            );
            out.push(note(Finding::info(
                Rule::HolderFixed,
                at,
                format!(
                    "{who}: {} ({}) is stopped by the wrapper's {} to {e}, which needs {}; {native}",
                    h.name, h.container, h.quit.method, h.quit.needs
                ),
            )));
        }
        held.push(Held { holder: h, fix });
    }
    held
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
    force: bool,
    out: &mut Vec<Finding>,
) {
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
            Fix::Remove => Vec::new(),
        };
        for (k, v) in hd.written() {
            if hd.released_by == Some(k) || wanted.iter().any(|(w, _)| *w == k) {
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
