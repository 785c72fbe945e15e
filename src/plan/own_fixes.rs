//! What the pod already does about its proxy: containers whose own command stops it
//! (hand-written fixes, `plan::stops`) and containers that are long-running sidecars
//! themselves (`plan::sidecars`). meshjob wraps neither and never edits them; it says what
//! it saw.

use super::sidecars;
use super::stops::{self, Found, Stop, Targets};
use super::wrapped::{How, Wrap};
use crate::config::Settings;
use crate::finding::describe;
use crate::finding::{Finding, ObjectRef, Rule, Severity};
use crate::mesh::{Mesh, Support};
use crate::pod::Pod;
use crate::yaml::tree::Node;
use std::borrow::Cow;

/// Where a pod's quit port is set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum PortFrom {
    /// The mesh's port annotation (`status.sidecar.istio.io/port`,
    /// `config.linkerd.io/admin-port`): the pod's own, else its Namespace's (named).
    Annotation(&'static str, Option<String>),
    /// A key of the pod's config annotation (`statusPort` in `proxy.istio.io/config`).
    PodConfig(&'static str, &'static str),
    /// A key of the config the injector gave an already-injected proxy (`PROXY_CONFIG`).
    Injected(&'static str),
    /// The mesh-wide setting, read from a manifest of the run.
    Mesh(crate::version::VersionOrigin),
}

/// A pod's quit port, where something moves it from the mesh's default, and what moves it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct QuitPort {
    pub port: u16,
    pub from: PortFrom,
}

/// The pod's quit port, where a hand-written quit may go instead of the default port and
/// where the wrapper calls, in the order the proxy itself applies them, the last winning
/// (for Istio, pilot-agent's `ConstructProxyConfig`, cited at [`Mesh::quit_port_config_keys`]):
/// the mesh-wide port read from the run's manifests (`support`), the injected proxy's
/// `PROXY_CONFIG`, the pod's config annotation, and the mesh's port annotation (the pod's own,
/// else the one its Namespace gives it). `None`: the mesh's default.
pub(crate) fn quit_port(mesh: &Mesh, pod: &Pod<'_>, support: &Support) -> Option<QuitPort> {
    let annotated = mesh.quit_port_annotation.and_then(|key| {
        let (value, ns) = pod.effective_annotation(key)?;
        let port = value.parse().ok()?;
        Some(QuitPort {
            port,
            from: PortFrom::Annotation(key, ns.map(String::from)),
        })
    });
    let config = || {
        let text = pod.annotation(mesh.pod_config_annotation)?;
        let (key, port) = config_port(mesh, text)?;
        Some(QuitPort {
            port,
            from: PortFrom::PodConfig(mesh.pod_config_annotation, key),
        })
    };
    let injected = || {
        let proxy = pod.container(mesh.proxy_container)?;
        let env = proxy.node.get("env")?.items()?;
        let text = (env.iter())
            .find(|e| e.str("name") == Some("PROXY_CONFIG"))
            .and_then(|e| e.str("value"))?;
        let (key, port) = config_port(mesh, text)?;
        Some(QuitPort {
            port,
            from: PortFrom::Injected(key),
        })
    };
    let mesh_wide = || {
        let s = support.quit_port.as_ref()?;
        Some(QuitPort {
            port: s.value,
            from: PortFrom::Mesh(s.origin.clone()),
        })
    };
    annotated
        .or_else(config)
        .or_else(injected)
        .or_else(mesh_wide)
}

/// The quit port a mesh's config text (YAML or JSON) sets, and its key.
fn config_port(mesh: &Mesh, text: &str) -> Option<(&'static str, u16)> {
    if mesh.quit_port_config_keys.is_empty()
        || !(mesh.quit_port_config_keys.iter()).any(|k| text.contains(k))
    {
        return None;
    }
    let docs = crate::yaml::tree::parse_stream(text).ok()?;
    let root = &docs.first()?.root;
    (mesh.quit_port_config_keys.iter()).find_map(|k| {
        let port = root
            .get(k)?
            .as_str()
            .and_then(crate::mesh::found::parse_port)?;
        Some((*k, port))
    })
}

/// [`quit_port`]'s port alone.
pub(crate) fn status_port(mesh: &Mesh, pod: &Pod<'_>, support: &Support) -> Option<u16> {
    quit_port(mesh, pod, support).map(|q| q.port)
}

/// Warns about the kinds of pods (an Argo template) whose own metadata turns native
/// sidecars off over the pod metadata that turns them on: those pods keep their proxy
/// running.
pub(crate) fn variants_turn_native_off(t: &Pod<'_>, mesh: &Mesh, out: &mut Vec<Finding>) {
    for v in &t.variants {
        let value = (mesh.native_sidecar_annotations.iter())
            .find_map(|k| v.get("annotations", k).map(|value| (*k, value)));
        let Some((key, value)) = value.filter(|(_, value)| (mesh.native.is_off)(value)) else {
            continue;
        };
        let at = v.layers.last().map_or(t.template.start, |m| m.start);
        out.push(
            Finding::warning(
                Rule::NativeTurnedOff,
                at,
                format!(
                    "{}: template `{}` turns native sidecars off ({key}: \"{value}\") over the \
                     pod metadata, so its pods keep their proxy running after the task; take it \
                     out, or opt the template out of the mesh ({})",
                    describe(&t.object),
                    v.name,
                    mesh.opt_out
                ),
            )
            .with_object(Some(t.object.clone())),
        );
    }
}

fn strings(n: Option<&Node>) -> Vec<String> {
    n.and_then(Node::items)
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// A container's argv as written (`command` then `args`), or with the configured
/// entrypoint in front: borrowed from the document where it is written there (every
/// container is looked at).
fn argv<'w>(w: &'w Wrap<'_>) -> Option<Vec<Cow<'w, str>>> {
    let words = |n: Option<&'w Node>| {
        let items = n.and_then(Node::items).unwrap_or(&[]);
        items.iter().filter_map(|i| i.as_str().map(Cow::Borrowed))
    };
    let args = |a: Option<&'w crate::yaml::tree::Entry>| words(a.map(|e| &e.value));
    match &w.how {
        // What an earlier meshjob wrapped: the original argv, from the marker line.
        How::Existing { cmd } => {
            let script = cmd.items()?.get(2)?.as_str()?;
            if !super::script::is_genuine(script) {
                return None;
            }
            let original =
                super::script::original_argv(&strings(Some(cmd)), &strings(w.node.get("args")))?;
            let original = original.command.into_iter().chain(original.args).flatten();
            Some(original.map(Cow::Owned).collect())
        }
        How::Command { cmd, args: a } => Some(words(Some(&cmd.value)).chain(args(*a)).collect()),
        How::Entrypoint { argv, args: a, .. } => {
            let configured = argv.iter().map(|s| Cow::Borrowed(s.as_str()));
            Some(configured.chain(args(*a)).collect())
        }
    }
}

/// Whether container `w` stops the proxy by itself, with the findings that says. `native`:
/// the pod gets a native sidecar, so the quit is no longer needed (a warning).
pub(crate) fn own_stop(
    w: &Wrap<'_>,
    targets: &Targets,
    shared_pid: bool,
    native: bool,
    oref: &ObjectRef,
    out: &mut Vec<Finding>,
) -> bool {
    let Some(argv) = argv(w) else {
        return false;
    };
    let words: Vec<&str> = argv.iter().map(|w| w.as_ref()).collect();
    let at = w.node.start;
    let name = &w.name;
    let found = stops::find(&words, targets);
    if found == Found::Nothing {
        // Most containers: nothing to say, so nothing worded.
        return false;
    }
    let obj = describe(oref);
    let push = |out: &mut Vec<Finding>, sev, rule, msg: String| {
        out.push(Finding::new(sev, rule, at, msg).with_object(Some(oref.clone())));
    };
    match found {
        Found::Nothing => false,
        Found::QuitNotPost => {
            if !native {
                push(
                    out,
                    Severity::Warning,
                    Rule::QuitNotPost,
                    format!(
                        "{obj}: container {name:?} calls /quitquitquit without POST; the proxy \
                         answers 405 and keeps running, so the container is wrapped (the \
                         wrapper POSTs)"
                    ),
                );
            }
            false
        }
        Found::Stops(stop) => {
            let how = stop.describe();
            if native {
                push(
                    out,
                    Severity::Warning,
                    Rule::AlreadyStops,
                    format!(
                        "{obj}: container {name:?} already stops the proxy ({how}); with a \
                         native sidecar that is no longer needed, and Kubernetes restarts a \
                         native sidecar that exits: remove it from the script (meshjob does \
                         not edit scripts)"
                    ),
                );
            } else {
                push(
                    out,
                    Severity::Info,
                    Rule::AlreadyStops,
                    format!(
                        "{obj}: container {name:?} already stops the proxy ({how}); not wrapped"
                    ),
                );
            }
            if stop == Stop::Kill && !shared_pid {
                push(
                    out,
                    Severity::Warning,
                    Rule::KillNeedsSharedPid,
                    format!(
                        "{obj}: container {name:?} kills the proxy's process, which it can see \
                         only with `shareProcessNamespace: true` in the pod spec"
                    ),
                );
            }
            let has_env = |k: &str| {
                w.node
                    .get("env")
                    .and_then(Node::items)
                    .is_some_and(|es| es.iter().any(|e| e.str("name") == Some(k)))
            };
            if stop == Stop::Scuttle && !has_env("ENVOY_ADMIN_API") {
                push(
                    out,
                    Severity::Warning,
                    Rule::ScuttleWithoutEnv,
                    format!(
                        "{obj}: container {name:?} runs scuttle without ENVOY_ADMIN_API in its \
                         env; scuttle then skips stopping the proxy (set ENVOY_ADMIN_API and \
                         ISTIO_QUIT_API, unless envFrom provides them)"
                    ),
                );
            }
            true
        }
    }
}

/// A finding when container `c` is a long-running sidecar: never wrapped.
pub(crate) fn sidecar_finding(
    c: &Node,
    name: &str,
    settings: &Settings,
    oref: &ObjectRef,
) -> Option<Finding> {
    let why = sidecars::sidecar(c, &settings.sidecars)?;
    Some(
        Finding::warning(
            Rule::LongRunningSidecar,
            c.start,
            format!(
                "{}: container {name:?} is a long-running sidecar ({why}): it is not wrapped, \
                 and it alone keeps the pod from finishing",
                describe(oref)
            ),
        )
        .with_object(Some(oref.clone())),
    )
}

/// When no container of a pod can be wrapped and none stops the proxy, the errors of its
/// containers say that no annotation is added either, and what would fix the pod.
pub(crate) fn note_unfixed(support: &Support, oref: &ObjectRef, out: &mut [Finding]) {
    let m = support.mesh;
    let native = match support.release() {
        Some(_) if support.known() && support.too_old().is_empty() => format!(
            "; --strategy native would fix it without a command ({} allow native sidecars)",
            support.versions_text()
        ),
        _ if !support.known() => format!(
            "; a native sidecar needs no command: on {} {}+ with Kubernetes {}+, pass {} and \
             --kubernetes-version",
            m.name, m.native.since, m.native.kubernetes_since, m.version_flag
        ),
        _ => String::new(),
    };
    for f in out
        .iter_mut()
        .filter(|f| f.rule == Rule::UnknownEntrypoint && f.object.as_ref() == Some(oref))
    {
        f.message.push_str(&format!(
            ". Nothing else in this pod stops the proxy, so meshjob adds no {} annotation \
             either{native}",
            m.pod_config_annotation
        ));
    }
}

/// Under the native strategy: what the containers do about the proxy, said as warnings.
pub(crate) fn native_notes(
    pod: &Pod<'_>,
    targets: &Targets,
    settings: &Settings,
    out: &mut Vec<Finding>,
) {
    let oref = &pod.object;
    for container in pod.containers() {
        let c = container.node;
        let name = container.name().to_string();
        if let Some(f) = sidecar_finding(c, &name, settings, oref) {
            out.push(f);
            continue;
        }
        let (Some(cmd), args) = (c.entry("command"), c.entry("args")) else {
            continue;
        };
        let w = Wrap {
            node: c,
            index: container.index,
            name,
            how: How::Command { cmd, args },
        };
        own_stop(&w, targets, true, true, oref, out);
    }
}
