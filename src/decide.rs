//! Decides, per pod, which mesh injects it and which strategy fixes it, or why it needs no
//! fix (a finding).
//!
//! Today every pod is an Istio pod and every pod that needs a fix gets the entrypoint
//! wrapper. The choice is made here alone, so that more meshes (markers on the pod, Namespace
//! documents, a setting) and more strategies (native sidecars, reverting, chosen by the
//! target Istio and Kubernetes versions) are new arms of [`decide`] and new planners beside
//! the wrapper, not changes to the planners.

use crate::finding::{Finding, Rule};
use crate::locate::{PodTarget, describe, str_of};
use crate::mesh::{Mesh, istio};
use crate::yaml::tree::Node;

/// How a pod is fixed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Wrap each container's entrypoint so that it asks the proxy to quit when the task
    /// ends, and set the per-pod proxy configuration (`plan::container`, `plan::annotation`).
    Wrapper,
}

/// What to do with one pod.
#[derive(Debug)]
pub enum Decision {
    /// Fix it for `mesh` with `strategy`.
    Fix {
        mesh: &'static Mesh,
        strategy: Strategy,
    },
    /// Leave it: it needs no fix. The finding says why.
    Skip(Finding),
}

/// Decides what to do with one pod.
pub fn decide(target: &PodTarget<'_>) -> Decision {
    let mesh = &istio::MESH;
    if let Some((rule, reason)) = skip_reason(mesh, target.template) {
        let f = Finding::info(
            rule,
            target.template.start,
            format!("{}: skipped, {reason}", describe(&target.object)),
        )
        .with_object(Some(target.object.clone()));
        return Decision::Skip(f);
    }
    Decision::Fix {
        mesh,
        strategy: Strategy::Wrapper,
    }
}

/// Why a pod template is not to be touched, if it is not.
fn skip_reason(mesh: &Mesh, template: &Node) -> Option<(Rule, String)> {
    let meta = template.get("metadata");
    let label = meta
        .and_then(|m| m.get("labels"))
        .and_then(|l| l.get(mesh.inject_key))
        .and_then(Node::as_str);
    let annotation = meta
        .and_then(|m| m.get("annotations"))
        .and_then(|a| a.get(mesh.inject_key))
        .and_then(Node::as_str);
    // The label wins over the deprecated annotation when both are present.
    match (label, annotation) {
        (Some(v), _) if v.eq_ignore_ascii_case(mesh.inject_off) => {
            return Some((
                Rule::OptedOut,
                format!(
                    "opted out of injection (label {}: \"{}\")",
                    mesh.inject_key, mesh.inject_off
                ),
            ));
        }
        (None, Some(v)) if v.eq_ignore_ascii_case(mesh.inject_off) => {
            return Some((
                Rule::OptedOut,
                format!(
                    "opted out of injection (annotation {}: \"{}\")",
                    mesh.inject_key, mesh.inject_off
                ),
            ));
        }
        _ => {}
    }
    let spec = template.get("spec");
    if spec
        .and_then(|s| s.get("hostNetwork"))
        .and_then(Node::as_str)
        .is_some_and(|v| v == "true")
    {
        return Some((
            Rule::HostNetwork,
            "hostNetwork pods are never injected".to_string(),
        ));
    }
    if meta
        .and_then(|m| m.get("annotations"))
        .and_then(|a| a.get(mesh.native_sidecar_annotation))
        .and_then(Node::as_str)
        .is_some_and(|v| v == "true")
    {
        return Some((
            Rule::NativeSidecar,
            format!(
                "native sidecar mode ({}: \"true\") lets the Job complete without a wrapper",
                mesh.native_sidecar_annotation
            ),
        ));
    }
    let native_proxy = spec
        .and_then(|s| s.get("initContainers"))
        .and_then(Node::items)
        .is_some_and(|inits| {
            inits.iter().any(|c| {
                str_of(c, "name") == Some(mesh.proxy_container)
                    && str_of(c, "restartPolicy") == Some("Always")
            })
        });
    if native_proxy {
        return Some((
            Rule::NativeSidecar,
            format!(
                "{} is already injected as a native sidecar, which Kubernetes stops by itself",
                mesh.proxy_container
            ),
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::locate::locate;
    use crate::yaml::tree::parse_stream;

    /// How many pods of the document get a fix, and the messages of those that do not.
    fn count(src: &str) -> (usize, Vec<String>) {
        let docs = parse_stream(src).unwrap();
        let mut fixed = 0;
        let mut msgs = Vec::new();
        for pod in &locate(&docs[0].root).pods {
            match decide(pod) {
                Decision::Fix { .. } => fixed += 1,
                Decision::Skip(f) => msgs.push(f.message),
            }
        }
        (fixed, msgs)
    }

    #[test]
    fn opt_outs() {
        let t = |meta: &str, spec: &str| {
            count(&format!(
                "apiVersion: batch/v1\nkind: Job\nspec:\n  template:\n    metadata: {meta}\n    spec: {spec}\n"
            ))
        };
        assert_eq!(
            t("{labels: {sidecar.istio.io/inject: \"false\"}}", "{}").0,
            0
        );
        assert_eq!(
            t("{annotations: {sidecar.istio.io/inject: \"false\"}}", "{}").0,
            0
        );
        // The label wins.
        assert_eq!(
            t(
                "{labels: {sidecar.istio.io/inject: \"true\"}, annotations: {sidecar.istio.io/inject: \"false\"}}",
                "{}"
            )
            .0,
            1
        );
        assert_eq!(t("{}", "{hostNetwork: true}").0, 0);
        assert_eq!(
            t(
                "{annotations: {sidecar.istio.io/nativeSidecar: \"true\"}}",
                "{}"
            )
            .0,
            0
        );
    }
}
