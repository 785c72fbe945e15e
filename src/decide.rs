//! Decides, per pod, which mesh injects it and which strategy fixes it, or why it needs no
//! fix (a finding).
//!
//! Today every pod is an Istio pod and every pod that needs a fix gets the entrypoint
//! wrapper. The choice is made here alone, so that more meshes (markers on the pod, Namespace
//! documents, a setting) and more strategies (native sidecars, reverting, chosen by the
//! target Istio and Kubernetes versions) are new arms of [`decide`] and new planners beside
//! the wrapper, not changes to the planners.

use crate::config::{Settings, StrategyChoice, Version};
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
    /// Ask for a native sidecar with the pod annotation, which Kubernetes stops after the
    /// task (`plan::native`); what meshjob added for the wrapper is taken out.
    Native,
    /// Take out what meshjob added (`plan::revert`): `--strategy none`, an ambient pod, a
    /// pod whose proxy is native already. `keep_native`: leave the native-sidecar
    /// annotation (the pod is native because of it).
    Remove { keep_native: bool },
}

/// What to do with one pod.
#[derive(Debug)]
pub enum Decision {
    /// Fix it for `mesh` with `strategy`; `why` explains the choice (info).
    Fix {
        mesh: &'static Mesh,
        strategy: Strategy,
        why: Finding,
    },
    /// Leave it: it needs no fix, or the chosen fix cannot be made. The finding says why.
    Skip(Finding),
}

/// What other documents of the stream say about the pods: the namespaces that a
/// `Namespace` document puts in ambient mode.
#[derive(Clone, Debug, Default)]
pub struct RunContext {
    pub ambient_namespaces: Vec<String>,
}

impl RunContext {
    /// Reads the `Namespace` documents among `pieces` of `text` (cut by `yaml::split`).
    pub fn of_stream(text: &str, pieces: &[std::ops::Range<usize>]) -> RunContext {
        let mut ctx = RunContext::default();
        for p in pieces {
            ctx.add(&text[p.clone()]);
        }
        ctx
    }

    /// Adds what one piece of a stream says (nothing unless it holds a `Namespace`
    /// document). Returns whether it added anything.
    pub fn add(&mut self, piece: &str) -> bool {
        let maybe = crate::yaml::simple::head(piece)
            .is_none_or(|h| h.opaque || h.kind.is_none_or(|k| k == "Namespace"));
        if !maybe || !piece.contains("Namespace") {
            return false;
        }
        let Ok(docs) = crate::yaml::tree::parse_stream(piece) else {
            return false;
        };
        let before = self.ambient_namespaces.len();
        for d in &docs {
            if let Some(name) = ambient_namespace(&d.root) {
                self.ambient_namespaces.push(name.to_string());
            }
        }
        self.ambient_namespaces.len() > before
    }
}

/// The name of a `v1` Namespace in ambient mode: labelled `istio.io/dataplane-mode:
/// ambient` and not for sidecar injection (`istio-injection: enabled`, a non-empty
/// `istio.io/rev`), as Istio's `NamespaceInAmbientMode` reads it.
fn ambient_namespace(root: &Node) -> Option<&str> {
    if str_of(root, "apiVersion") != Some("v1") || str_of(root, "kind") != Some("Namespace") {
        return None;
    }
    let meta = root.get("metadata")?;
    let labels = meta.get("labels")?;
    let ambient =
        str_of(labels, istio::DATAPLANE_MODE_LABEL) == Some(istio::DATAPLANE_MODE_AMBIENT);
    let sidecar = str_of(labels, istio::NAMESPACE_INJECTION_LABEL) == Some("enabled")
        || str_of(labels, istio::REVISION_LABEL).is_some_and(|r| !r.is_empty());
    (ambient && !sidecar)
        .then(|| str_of(meta, "name"))
        .flatten()
}

/// Decides what to do with one pod. `run_notes` collects the notes said once per run.
pub fn decide(
    target: &PodTarget<'_>,
    settings: &Settings,
    ctx: &RunContext,
    run_notes: &mut Vec<Finding>,
) -> Decision {
    let mesh = &istio::MESH;
    let oref = &target.object;
    let at = target.template.start;
    let name = describe(oref);
    let info = |rule, msg: String| Finding::info(rule, at, msg).with_object(Some(oref.clone()));
    if let Some((rule, reason)) = skip_reason(mesh, target.template) {
        return Decision::Skip(info(rule, format!("{name}: skipped, {reason}")));
    }
    let fix = |strategy, rule, why: String| Decision::Fix {
        mesh,
        strategy,
        why: info(rule, format!("{name}: {why}")),
    };
    let remove_note = "meshjob's own earlier changes, if any, are taken out";
    let ns = &target.object.namespace;
    let in_ambient_ns = !ns.is_empty() && ctx.ambient_namespaces.iter().any(|n| n == ns);
    let ambient_why = ambient(target.template).or_else(|| {
        (in_ambient_ns && !sidecar_labels(target.template)).then(|| {
            format!(
                "Namespace {ns} is labelled {}: ambient",
                istio::DATAPLANE_MODE_LABEL
            )
        })
    });
    if let Some(why) = ambient_why {
        return fix(
            Strategy::Remove { keep_native: false },
            Rule::Ambient,
            format!("ambient mode ({why}): no sidecar to stop; {remove_note}"),
        );
    }
    if native_proxy(mesh, target.template) {
        return fix(
            Strategy::Remove { keep_native: true },
            Rule::NativeSidecar,
            format!(
                "{} is already injected as a native sidecar, which Kubernetes stops by itself; \
                 {remove_note}",
                mesh.proxy_container
            ),
        );
    }
    let injected = proxy_container(mesh, target.template).is_some();
    let (istio_v, kube_v) = (settings.istio_version, settings.kubernetes_version);
    let versions = versions_text(istio_v, kube_v);
    let too_old = native_too_old(istio_v, kube_v);
    let existing = native_annotation(mesh, target.template);
    match settings.strategy {
        StrategyChoice::None => {
            return fix(
                Strategy::Remove { keep_native: false },
                Rule::StrategyChosen,
                format!("strategy none: {remove_note}"),
            );
        }
        StrategyChoice::Wrapper => {
            return fix(
                Strategy::Wrapper,
                Rule::StrategyChosen,
                "the wrapper (--strategy wrapper)".to_string(),
            );
        }
        StrategyChoice::Native => {
            if let Some(why) = too_old {
                return Decision::Skip(
                    Finding::error(
                        Rule::NativeTooOld,
                        at,
                        format!(
                            "{name}: --strategy native needs Istio {} and Kubernetes {}, but \
                             {why}; the pod is left as it is (use the wrapper, or upgrade)",
                            istio::NATIVE_ANNOTATION_SINCE,
                            istio::NATIVE_KUBERNETES_SINCE
                        ),
                    )
                    .with_object(Some(oref.clone())),
                );
            }
            if injected {
                return Decision::Skip(
                    Finding::error(
                        Rule::NativeInjected,
                        at,
                        format!(
                            "{name}: {} is already injected as a regular container, so the \
                             native-sidecar annotation cannot take effect; the pod is left as it \
                             is. Inject it again from the un-injected manifest",
                            mesh.proxy_container
                        ),
                    )
                    .with_object(Some(oref.clone())),
                );
            }
            if istio_v.is_none() || kube_v.is_none() {
                run_notes.push(versions_note(at, true));
            }
            return fix(
                Strategy::Native,
                Rule::StrategyChosen,
                format!("native sidecar (--strategy native; {versions})"),
            );
        }
        StrategyChoice::Auto => {}
    }
    if injected {
        return fix(
            Strategy::Wrapper,
            Rule::StrategyChosen,
            format!(
                "the wrapper: {} is already injected, so native sidecars need a new injection",
                mesh.proxy_container
            ),
        );
    }
    match existing {
        Some(v) if v == istio::NATIVE_OFF => {
            return fix(
                Strategy::Wrapper,
                Rule::StrategyChosen,
                format!(
                    "the wrapper: the pod turns native sidecars off ({}: \"{v}\")",
                    mesh.native_sidecar_annotation
                ),
            );
        }
        Some(v) if too_old.is_none() && istio::native_annotation_on(v, istio_v) => {
            return fix(
                Strategy::Remove { keep_native: true },
                Rule::NativeSidecar,
                format!(
                    "native sidecar mode ({}: \"{v}\") lets the Job complete without a \
                     wrapper; {remove_note}",
                    mesh.native_sidecar_annotation
                ),
            );
        }
        _ => {}
    }
    match (istio_v, kube_v, too_old) {
        (_, _, Some(why)) => fix(
            Strategy::Wrapper,
            Rule::StrategyChosen,
            format!(
                "the wrapper, since {why} (native sidecars need Istio {} and Kubernetes {})",
                istio::NATIVE_ANNOTATION_SINCE,
                istio::NATIVE_KUBERNETES_SINCE
            ),
        ),
        (Some(_), Some(_), None) => fix(
            Strategy::Native,
            Rule::StrategyChosen,
            format!("native sidecar ({versions})"),
        ),
        _ => {
            run_notes.push(versions_note(at, false));
            fix(
                Strategy::Wrapper,
                Rule::StrategyChosen,
                format!("the wrapper ({versions})"),
            )
        }
    }
}

/// `Istio 1.24, Kubernetes unknown`.
fn versions_text(istio_v: Option<Version>, kube_v: Option<Version>) -> String {
    let show = |v: Option<Version>| v.map_or_else(|| "unknown".to_string(), |v| v.to_string());
    format!("Istio {}, Kubernetes {}", show(istio_v), show(kube_v))
}

/// Why the known versions cannot run a native sidecar from the pod annotation, if they
/// cannot.
fn native_too_old(istio_v: Option<Version>, kube_v: Option<Version>) -> Option<String> {
    let mut why = Vec::new();
    if let Some(v) = istio_v.filter(|v| *v < istio::NATIVE_ANNOTATION_SINCE) {
        why.push(format!("Istio {v} does not read the pod annotation"));
    }
    if let Some(v) = kube_v.filter(|v| *v < istio::NATIVE_KUBERNETES_SINCE) {
        why.push(format!(
            "Kubernetes {v} has no native sidecars on by default"
        ));
    }
    (!why.is_empty()).then(|| why.join(" and "))
}

/// The once-per-run note about the versions that were not given.
fn versions_note(at: usize, native: bool) -> Finding {
    let tail = if native {
        "--strategy native was applied without checking them; it needs Istio 1.24+ and \
         Kubernetes 1.29+"
    } else {
        "with both given, pods on Istio 1.24+ and Kubernetes 1.29+ get a native sidecar (one \
         pod annotation, no wrapper, no command needed) instead of the wrapper"
    };
    Finding::info(
        Rule::VersionsUnknown,
        at,
        format!(
            "the target versions are not known: pass --istio-version (the injecting Istio) and \
             --kubernetes-version (the oldest kubelet), or set istioVersion and \
             kubernetesVersion in the config; {tail}"
        ),
    )
}

/// The pod's native-sidecar annotation value, if it has one.
fn native_annotation<'n>(mesh: &Mesh, template: &'n Node) -> Option<&'n str> {
    template
        .path(&["metadata", "annotations", mesh.native_sidecar_annotation])
        .and_then(Node::as_str)
}

/// Why the pod is in ambient mode, if it is: the label on the pod template, unless the pod
/// also asks for a sidecar (a pod with a sidecar is never enrolled in ambient).
fn ambient(template: &Node) -> Option<String> {
    let labels = template.path(&["metadata", "labels"])?;
    let mode = str_of(labels, istio::DATAPLANE_MODE_LABEL)?;
    if mode != istio::DATAPLANE_MODE_AMBIENT {
        return None;
    }
    (!sidecar_labels(template)).then(|| format!("label {}: {}", istio::DATAPLANE_MODE_LABEL, mode))
}

/// Whether the pod template asks for a sidecar by label (which wins over ambient).
fn sidecar_labels(template: &Node) -> bool {
    template
        .path(&["metadata", "labels"])
        .is_some_and(|labels| {
            str_of(labels, istio::INJECT_KEY) == Some("true")
                || str_of(labels, istio::REVISION_LABEL).is_some_and(|r| !r.is_empty())
        })
}

/// Whether the proxy is injected already, as a native sidecar.
fn native_proxy(mesh: &Mesh, template: &Node) -> bool {
    template
        .path(&["spec", "initContainers"])
        .and_then(Node::items)
        .is_some_and(|inits| {
            inits.iter().any(|c| {
                str_of(c, "name") == Some(mesh.proxy_container)
                    && str_of(c, "restartPolicy") == Some("Always")
            })
        })
}

/// The proxy container among the pod's regular containers (injected already), with its
/// index.
pub fn proxy_container<'d>(mesh: &Mesh, template: &'d Node) -> Option<(usize, &'d Node)> {
    template
        .path(&["spec", "containers"])
        .and_then(Node::items)?
        .iter()
        .enumerate()
        .find(|(_, c)| str_of(c, "name") == Some(mesh.proxy_container))
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
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::locate::locate;
    use crate::yaml::tree::parse_stream;

    /// The strategy of the first pod of the document, or None when it is skipped.
    fn strategy(src: &str, settings: &Settings) -> Option<Strategy> {
        let docs = parse_stream(src).unwrap();
        let pods = locate(&docs[0].root).pods;
        match decide(&pods[0], settings, &RunContext::default(), &mut Vec::new()) {
            Decision::Fix { strategy, .. } => Some(strategy),
            Decision::Skip(_) => None,
        }
    }

    fn job(meta: &str, spec: &str) -> String {
        format!(
            "apiVersion: batch/v1\nkind: Job\nspec:\n  template:\n    metadata: {meta}\n    spec: {spec}\n"
        )
    }

    fn with(istio: Option<(u32, u32)>, kube: Option<(u32, u32)>, s: StrategyChoice) -> Settings {
        Settings {
            istio_version: istio.map(|(a, b)| Version::new(a, b)),
            kubernetes_version: kube.map(|(a, b)| Version::new(a, b)),
            strategy: s,
            ..Settings::default()
        }
    }

    #[test]
    fn opt_outs() {
        let d = Settings::default();
        let t = |meta: &str, spec: &str| strategy(&job(meta, spec), &d);
        assert_eq!(
            t("{labels: {sidecar.istio.io/inject: \"false\"}}", "{}"),
            None
        );
        assert_eq!(
            t("{annotations: {sidecar.istio.io/inject: \"false\"}}", "{}"),
            None
        );
        // The label wins.
        assert_eq!(
            t(
                "{labels: {sidecar.istio.io/inject: \"true\"}, annotations: {sidecar.istio.io/inject: \"false\"}}",
                "{}"
            ),
            Some(Strategy::Wrapper)
        );
        assert_eq!(t("{}", "{hostNetwork: true}"), None);
        assert_eq!(
            t(
                "{annotations: {sidecar.istio.io/nativeSidecar: \"true\"}}",
                "{}"
            ),
            Some(Strategy::Remove { keep_native: true })
        );
    }

    #[test]
    fn versions_decide() {
        use StrategyChoice::{Auto, Native, Wrapper};
        let plain = job("{}", "{containers: [{name: a, command: [x]}]}");
        let cases = [
            (Some((1, 24)), Some((1, 29)), Auto, Some(Strategy::Native)),
            (Some((1, 23)), Some((1, 33)), Auto, Some(Strategy::Wrapper)),
            (Some((1, 30)), Some((1, 28)), Auto, Some(Strategy::Wrapper)),
            (Some((1, 30)), None, Auto, Some(Strategy::Wrapper)),
            (None, None, Auto, Some(Strategy::Wrapper)),
            (
                Some((1, 27)),
                Some((1, 33)),
                Wrapper,
                Some(Strategy::Wrapper),
            ),
            (Some((1, 22)), Some((1, 33)), Native, None),
            (None, None, Native, Some(Strategy::Native)),
            (
                None,
                None,
                StrategyChoice::None,
                Some(Strategy::Remove { keep_native: false }),
            ),
        ];
        for (i, k, s, want) in cases {
            assert_eq!(strategy(&plain, &with(i, k, s)), want, "{i:?} {k:?} {s:?}");
        }
        let ambient = job("{labels: {istio.io/dataplane-mode: ambient}}", "{}");
        assert_eq!(
            strategy(&ambient, &with(Some((1, 24)), Some((1, 29)), Auto)),
            Some(Strategy::Remove { keep_native: false })
        );
        let both = job(
            "{labels: {istio.io/dataplane-mode: ambient, sidecar.istio.io/inject: \"true\"}}",
            "{}",
        );
        assert_eq!(
            strategy(&both, &with(Some((1, 24)), Some((1, 29)), Auto)),
            Some(Strategy::Native)
        );
        let off = job(
            "{annotations: {sidecar.istio.io/nativeSidecar: \"false\"}}",
            "{}",
        );
        assert_eq!(
            strategy(&off, &with(Some((1, 27)), Some((1, 33)), Auto)),
            Some(Strategy::Wrapper)
        );
        // The annotation does nothing on Istio 1.23: the wrapper, and the annotation goes.
        let on = job(
            "{annotations: {sidecar.istio.io/nativeSidecar: \"true\"}}",
            "{}",
        );
        assert_eq!(
            strategy(&on, &with(Some((1, 23)), Some((1, 29)), Auto)),
            Some(Strategy::Wrapper)
        );
    }
}
