//! Findings about a pod that do not change its fix: values the target mesh reads otherwise
//! than the pod's author meant. Each lint reads the pod and the versions of the run, and
//! says where and what to write instead.

use super::RunContext;
use super::Strategy;
use crate::config::Settings;
use crate::finding::{Finding, Rule};
use crate::mesh::{self, Marker, MarkerPlace, Mesh, Reading};
use crate::pod::Pod;
use crate::yaml::tree::{Entry, Node};

/// Every lint's findings for one pod (none for a pod `meshjob.dev/ignore` leaves out), given
/// what `decide` made of it: `fix` is the mesh and strategy when it is fixed.
pub(crate) fn lints(
    pod: &Pod<'_>,
    settings: &Settings,
    ctx: &RunContext,
    fix: Option<(&'static Mesh, Strategy)>,
) -> Vec<Finding> {
    let mut out = Vec::new();
    if super::pin::ignored(pod).is_some() {
        return out;
    }
    injection_values(pod, settings, ctx, &mut out);
    match fix {
        Some((mesh, Strategy::Wrapper)) => restart_in_place(pod, mesh, settings, ctx, &mut out),
        Some((mesh, Strategy::Native | Strategy::Remove { keep_native: true })) => {
            pod_failure_policy(pod, mesh, &mut out);
        }
        _ => {}
    }
    if let Some((mesh, _)) = fix {
        proxy_resources(pod, mesh, &mut out);
    }
    out
}

/// A wrapped container that Kubernetes can restart in place, inside a pod that keeps
/// running: `restartPolicy` or `restartPolicyRules` on a regular container (KEP-5307,
/// container restart rules: the `ContainerRestartRules` feature gate, alpha in 1.34, beta and
/// on by default from 1.35; kubernetes/kubernetes `pkg/features/kube_features.go`). Once the
/// wrapper has asked the proxy to quit, the restarted task runs without the mesh's network
/// (and its wrapper asks a proxy that is gone). A native sidecar is restarted with it instead.
fn restart_in_place(
    pod: &Pod<'_>,
    mesh: &'static Mesh,
    settings: &Settings,
    ctx: &RunContext,
    out: &mut Vec<Finding>,
) {
    let support = ctx.versions.support(mesh, settings);
    for c in pod.containers() {
        if c.name() == mesh.proxy_container {
            continue;
        }
        let Some(e) = c
            .entry("restartPolicyRules")
            .or_else(|| c.entry("restartPolicy"))
        else {
            continue;
        };
        let key = e.key.as_str().unwrap_or_default();
        let advice = match support.too_old_text() {
            Some(why) => format!(
                "native sidecars would have no such gap, but {why}: take `{key}` out, and \
                 let the Job replace a failed pod instead"
            ),
            None => format!(
                "native sidecars have no such gap (they need {}): give the versions ({} and \
                 --kubernetes-version) or use --strategy native, else take `{key}` out",
                support.needs_text(),
                mesh.version_flag
            ),
        };
        let message = format!(
            "{}: container `{}` has `{key}`, so Kubernetes 1.35+ restarts it in place \
             (container restart rules, KEP-5307); once its wrapper has asked the {} proxy to \
             quit, the restarted task runs without the mesh's network; {advice}",
            pod.describe(),
            c.name(),
            mesh.name,
        );
        out.push(
            Finding::warning(Rule::RestartsInPlace, e.key.start, message)
                .with_object(Some(pod.object.clone())),
        );
    }
}

/// The exit codes a native sidecar that is stopped may end with: 137 (SIGKILL at the end of
/// the grace period) and 143 (SIGTERM not handled). The Job controller matches `onExitCodes`
/// against init containers' statuses too, restartable ones included, and skips exit code 0
/// (kubernetes/kubernetes `pkg/controller/job/pod_failure_policy.go`, `matchOnExitCodes`).
const SIDECAR_EXIT_CODES: [&str; 2] = ["137", "143"];

/// A `podFailurePolicy` rule of the Job that holds a native-sidecar pod, whose `onExitCodes`
/// names no `containerName` and matches a stopped sidecar's exit code.
fn pod_failure_policy(pod: &Pod<'_>, mesh: &'static Mesh, out: &mut Vec<Finding>) {
    let Some(job) = holder_of(pod.object_node, pod.template) else {
        return;
    };
    let rules = (job
        .path(&["podFailurePolicy", "rules"])
        .and_then(Node::items))
    .unwrap_or(&[]);
    let task = pod
        .containers()
        .map(|c| c.name())
        .find(|n| *n != mesh.proxy_container)
        .unwrap_or("<task>");
    for (i, rule) in rules.iter().enumerate() {
        let Some(on) = rule.get("onExitCodes") else {
            continue;
        };
        if on.get("containerName").is_some() {
            continue;
        }
        let values: Vec<&str> = (on.get("values").and_then(Node::items))
            .unwrap_or(&[])
            .iter()
            .filter_map(Node::as_str)
            .collect();
        let listed = |code: &&str| values.contains(code);
        let matches = match on.str("operator") {
            Some("In") => SIDECAR_EXIT_CODES.iter().any(listed),
            Some("NotIn") => !SIDECAR_EXIT_CODES.iter().all(listed),
            _ => continue,
        };
        if !matches {
            continue;
        }
        let action = rule.str("action").unwrap_or("its action");
        let message = format!(
            "{}: podFailurePolicy rule {i} ({action} on exit codes {} {:?}) names no \
             containerName, so it also matches the native {} sidecar when it is stopped \
             (exit code 137 or 143; the Job controller reads init containers' statuses \
             too): add `containerName: {task}` to its onExitCodes",
            pod.describe(),
            on.str("operator").unwrap_or_default(),
            values,
            mesh.name
        );
        out.push(
            Finding::warning(Rule::ExitCodesWithoutContainer, on.start, message)
                .with_object(Some(pod.object.clone())),
        );
    }
}

/// The mapping that holds `template` under its `template` key (a Job spec), searched from
/// `root`.
fn holder_of<'d>(root: &'d Node, template: &Node) -> Option<&'d Node> {
    let entries = root.entries()?;
    if entries
        .iter()
        .any(|e| e.key.as_str() == Some("template") && std::ptr::eq(&e.value, template))
    {
        return Some(root);
    }
    (entries.iter()).find_map(|e| holder_of(&e.value, template))
}

/// The proxy's resource annotations, which the mesh's injector refuses unless they are
/// Kubernetes quantities: the pod is then never created.
fn proxy_resources(pod: &Pod<'_>, mesh: &'static Mesh, out: &mut Vec<Finding>) {
    let Some(anns) = pod.annotations() else {
        return;
    };
    for key in mesh.quantity_annotations {
        let Some(e) = anns.entry(key) else { continue };
        let Some(value) = e.value.as_str() else {
            continue;
        };
        if let Err(why) = mesh::quantity::check(value) {
            let message = format!(
                "{}: {key}: {value:?} is not a Kubernetes quantity ({why}); {}",
                pod.describe(),
                mesh.quantity_refusal
            );
            out.push(
                Finding::error(Rule::InvalidProxyResource, e.value.start, message)
                    .with_object(Some(pod.object.clone())),
            );
        }
    }
}

/// The pod's injection label or annotation (of the mesh's marker keys whose reading
/// changed between releases) whose value the target release ignores, or, with the release
/// unknown, reads otherwise than older releases did.
fn injection_values(pod: &Pod<'_>, settings: &Settings, ctx: &RunContext, out: &mut Vec<Finding>) {
    for m in mesh::ALL.iter() {
        let support = ctx.versions.support(m, settings);
        for k in m.pod_markers.iter().filter(|k| k.older.is_some()) {
            let entry = |place: &str| -> Option<(&'static str, &Entry)> {
                let e = pod.metadata()?.get(place)?.entry(k.key)?;
                Some((
                    if place == "labels" {
                        "label"
                    } else {
                        "annotation"
                    },
                    e,
                ))
            };
            let hit = match k.place {
                MarkerPlace::Label => entry("labels"),
                MarkerPlace::Annotation => entry("annotations"),
                MarkerPlace::LabelThenAnnotation => {
                    entry("labels").or_else(|| entry("annotations"))
                }
            };
            let Some((place, e)) = hit else { continue };
            let Some(value) = e.value.as_str() else {
                continue;
            };
            let means = |then: Marker| match then {
                Marker::On => "an opt-in",
                Marker::Off => "an opt-out",
            };
            let write = |then: Marker| match (then, k.on.first(), k.off.first()) {
                (Marker::On, Some(v), _) | (Marker::Off, _, Some(v)) => format!("\"{v}\""),
                _ => "a value it reads".to_string(),
            };
            let who = pod.describe();
            let message = match k.reading(value, support.release()) {
                Reading::Is(_) => continue,
                Reading::Ignored { at, older, then } => {
                    let at = at.map_or_else(String::new, |v| format!(" {v}"));
                    let origin = (support.mesh_version.as_ref())
                        .map_or_else(String::new, |s| format!(" (from {})", s.origin));
                    format!(
                        "{who}: {place} {}: \"{value}\" is not read by {}{at}{origin}, which \
                         reads only {}: it falls back to the namespace's injection default, so \
                         the pod is injected wherever its namespace is, and meshjob fixes it \
                         as such; {} before {} read it as {}: write {}",
                        k.key,
                        m.name,
                        allowed(k.on, k.off),
                        m.name,
                        older.before,
                        means(then),
                        write(then)
                    )
                }
                Reading::Disagree { older, then } => format!(
                    "{who}: {place} {}: \"{value}\" is {} to {} before {} and not read from {} \
                     on (only {} count there: the namespace's injection default decides); the \
                     {} version is unknown, so meshjob fixes the pod as if it were injected: \
                     write {}, or give {}",
                    k.key,
                    means(then),
                    m.name,
                    older.before,
                    older.before,
                    allowed(k.on, k.off),
                    m.name,
                    write(then),
                    m.version_flag
                ),
            };
            out.push(
                Finding::warning(Rule::InjectValueNotRead, e.key.start, message)
                    .with_object(Some(pod.object.clone())),
            );
        }
    }
}

/// `"true" and "false"`: the values a marker key's current reading accepts.
fn allowed(on: &[&str], off: &[&str]) -> String {
    let all: Vec<String> = on.iter().chain(off).map(|v| format!("\"{v}\"")).collect();
    match all.as_slice() {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// Findings about a document that holds mesh-wide settings, with the versions of the run:
/// an Istio `compatibilityVersion` that the target istiod's chart has no profile for (the
/// Helm render fails, so nothing is installed, rather than native sidecars being off).
pub(crate) fn document_lints(root: &Node, settings: &Settings, ctx: &RunContext) -> Vec<Finding> {
    let mut out = Vec::new();
    let istio = &mesh::istio::MESH;
    let kind = root.str("kind");
    let group = root
        .str("apiVersion")
        .map(|a| a.split_once('/').map_or("", |(g, _)| g));
    let compat = match (group, kind) {
        (Some(mesh::istio::ISTIO_OPERATOR_GROUP), Some(mesh::istio::ISTIO_OPERATOR_KIND)) => {
            root.path(&["spec", "compatibilityVersion"])
        }
        (Some(mesh::istio::SAIL_GROUP), Some(mesh::istio::SAIL_ISTIO_KIND)) => {
            root.path(&["spec", "values", "compatibilityVersion"])
        }
        // istiod Helm values: a file without a kind.
        (None, None) => root.get("compatibilityVersion"),
        _ => None,
    };
    let Some(node) = compat else {
        return out;
    };
    let Some(asked) = node.as_str().and_then(crate::version::Version::read) else {
        return out;
    };
    let support = ctx.versions.support(istio, settings);
    let Some(istiod) = support.release().and_then(crate::version::Release::stable) else {
        return out;
    };
    let shipped = mesh::istio::compatibility_profiles(istiod);
    if shipped.is_some_and(|(a, b)| a <= asked && asked <= b) {
        return out;
    }
    let ships = match shipped {
        Some((a, b)) if a == b => format!("ships only the {a} profile"),
        Some((a, b)) => format!("ships the profiles {a} to {b}"),
        None => "ships no compatibility profiles".to_string(),
    };
    let origin = (support.mesh_version.as_ref())
        .map_or_else(String::new, |s| format!(" (from {})", s.origin));
    let message = format!(
        "compatibilityVersion {asked}: the istiod {istiod} chart{origin} {ships}, so its Helm \
         render fails (\"unknown compatibility version\") and nothing is installed; pick one \
         it ships, or none"
    );
    out.push(Finding::warning(
        Rule::CompatibilityVersionUnknown,
        node.start,
        message,
    ));
    out
}
