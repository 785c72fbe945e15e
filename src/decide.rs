//! Decides, per pod, which mesh injects it and which strategy fixes it, or why it needs no
//! fix (a finding).
//!
//! The mesh comes from markers: the pod template's own (injection labels and annotations,
//! an injected proxy container), else those of a Namespace document of the same run (by the
//! object's `metadata.namespace`), else the `mesh` setting. A pod that two meshes would
//! inject is an error, left alone; a pod that only opts out is skipped. The strategy
//! (native sidecars, the wrapper, reverting) comes from the target versions and the pod.

use crate::config::{Settings, StrategyChoice, Version};
use crate::finding::{Finding, Rule};
use crate::locate::describe;
use crate::mesh::{self, Marker, MarkerKey, Mesh, MeshId, Place, istio, linkerd};
use crate::pod::Pod;
use crate::yaml::tree::Node;
use std::collections::BTreeMap;

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

/// What other documents say about the pods: the namespaces that a `Namespace` document of
/// the stream puts in ambient mode, and the mesh markers of the Namespace documents of the
/// run.
#[derive(Clone, Debug, Default)]
pub struct RunContext {
    pub ambient_namespaces: Vec<String>,
    pub namespaces: Namespaces,
}

impl RunContext {
    /// Reads the `Namespace` documents among `pieces` of `text` (cut by `yaml::split`);
    /// `namespaces`: those of the whole run, else the stream's own are read.
    pub fn of_stream(
        text: &str,
        pieces: &[std::ops::Range<usize>],
        namespaces: Option<&Namespaces>,
    ) -> RunContext {
        let mut ctx = RunContext::default();
        for p in pieces {
            ctx.add(&text[p.clone()]);
        }
        if let Some(ns) = namespaces {
            ctx.namespaces = ns.clone();
        }
        ctx
    }

    /// Adds what one piece of a stream says: nothing unless it holds a `Namespace` document
    /// (at the top level, or in a List for the mesh markers). Pieces that never spell
    /// `Namespace`, or that the quick scanner shows are of other kinds, are not parsed.
    /// Returns whether it added anything.
    pub fn add(&mut self, piece: &str) -> bool {
        if !piece.contains("Namespace") {
            return false;
        }
        let wanted = crate::yaml::simple::head(piece).is_none_or(|h| {
            h.opaque || matches!(h.kind, None | Some("Namespace" | "List" | "ResourceList"))
        });
        if !wanted {
            return false;
        }
        // A document that does not parse is reported when it is processed.
        let Ok(docs) = crate::yaml::tree::parse_stream(piece) else {
            return false;
        };
        let mut added = false;
        for d in &docs {
            if let Some(name) = ambient_namespace(&d.root) {
                self.ambient_namespaces.push(name.to_string());
                added = true;
            }
            for (obj, _, _) in crate::locate::objects(&d.root) {
                added |= self.namespaces.add(obj);
            }
        }
        added
    }

    /// The namespaces `other` says something about (ambient mode, a mesh marker) that this
    /// context does not say already.
    pub fn news(&self, other: &RunContext) -> Vec<String> {
        let mut names: Vec<String> = (other.ambient_namespaces.iter())
            .filter(|n| !self.ambient_namespaces.contains(n))
            .cloned()
            .collect();
        for (name, seen) in &other.namespaces.by_name {
            let known = self.namespaces.get(name);
            if seen.iter().any(|s| !known.contains(s)) && !names.contains(name) {
                names.push(name.clone());
            }
        }
        names
    }

    /// Adds what `other` says.
    pub fn extend(&mut self, other: RunContext) {
        self.ambient_namespaces.extend(other.ambient_namespaces);
        self.namespaces.extend(other.namespaces);
    }
}

/// The name of a `v1` Namespace in ambient mode: labelled `istio.io/dataplane-mode:
/// ambient` and not for sidecar injection (`istio-injection: enabled`, a non-empty
/// `istio.io/rev`), as Istio's `NamespaceInAmbientMode` reads it.
fn ambient_namespace(root: &Node) -> Option<&str> {
    if root.str("apiVersion") != Some("v1") || root.str("kind") != Some("Namespace") {
        return None;
    }
    let meta = root.get("metadata")?;
    let labels = meta.get("labels")?;
    let ambient = labels.str(istio::DATAPLANE_MODE_LABEL) == Some(istio::DATAPLANE_MODE_AMBIENT);
    let sidecar = labels.str(istio::NAMESPACE_INJECTION_LABEL) == Some("enabled")
        || labels
            .str(istio::REVISION_LABEL)
            .is_some_and(|r| !r.is_empty());
    (ambient && !sidecar).then(|| meta.str("name")).flatten()
}

/// One mesh marker that was read: what it says and where, for messages.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seen {
    pub mesh: MeshId,
    pub marker: Marker,
    /// `label sidecar.istio.io/inject: "false"`, `container linkerd-proxy`.
    pub what: String,
}

/// The mesh markers of the Namespace documents in a run, by namespace name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Namespaces {
    by_name: BTreeMap<String, Vec<Seen>>,
}

impl Namespaces {
    /// Records `obj` when it is a named `v1` Namespace; returns whether it is one.
    pub fn add(&mut self, obj: &Node) -> bool {
        if obj.str("apiVersion") != Some("v1") || obj.str("kind") != Some("Namespace") {
            return false;
        }
        let meta = obj.get("metadata");
        let Some(name) = meta.and_then(|m| m.str("name")) else {
            return false;
        };
        let seen: Vec<Seen> = mesh::ALL
            .iter()
            .filter_map(|m| level(m, meta, m.namespace_markers, None))
            .map(|mut s| {
                s.what = format!("{} on Namespace/{name}", s.what);
                s
            })
            .collect();
        self.by_name
            .entry(name.to_string())
            .or_default()
            .extend(seen);
        true
    }

    /// Adds every Namespace of `other`.
    pub fn extend(&mut self, other: Namespaces) {
        for (name, seen) in other.by_name {
            self.by_name.entry(name).or_default().extend(seen);
        }
    }

    /// The Namespace documents of `text` (at the top level or in a List), found without
    /// parsing the documents that the quick scanner shows are of other kinds, and without
    /// parsing anything in a text that never spells `Namespace` (a kind written with escape
    /// sequences, such as `"Namesp\x61ce"`, is not looked for).
    pub fn scan(text: &str) -> Namespaces {
        if !text.contains("Namespace") {
            return Namespaces::default();
        }
        RunContext::of_stream(text, &crate::yaml::split::pieces(text), None).namespaces
    }

    fn get(&self, name: &str) -> &[Seen] {
        self.by_name.get(name).map_or(&[], Vec::as_slice)
    }
}

/// What `keys` (and an injected proxy container in `spec`) say about `mesh` at one level.
/// An `Off` wins over an `On` at the same level, as a pod's opt-out wins in each injector.
fn level(
    mesh: &Mesh,
    meta: Option<&Node>,
    keys: &[MarkerKey],
    spec: Option<&Node>,
) -> Option<Seen> {
    let lookup = |place: &str, key: &str| {
        meta.and_then(|m| m.get(place))
            .and_then(|l| l.get(key))
            .and_then(Node::as_str)
    };
    let mut found: Vec<(Marker, String)> = Vec::new();
    for k in keys {
        let label = || lookup("labels", k.key).map(|v| ("label", v));
        let annotation = || lookup("annotations", k.key).map(|v| ("annotation", v));
        let hit = match k.place {
            Place::Label => label(),
            Place::Annotation => annotation(),
            Place::LabelThenAnnotation => label().or_else(annotation),
        };
        if let Some((place, v)) = hit
            && let Some(m) = k.read(v)
        {
            found.push((m, format!("{place} {}: \"{v}\"", k.key)));
        }
    }
    let injected = spec.is_some_and(|s| {
        ["containers", "initContainers"].iter().any(|list| {
            s.get(list).and_then(Node::items).is_some_and(|cs| {
                cs.iter()
                    .any(|c| c.str("name") == Some(mesh.proxy_container))
            })
        })
    });
    if injected {
        found.push((Marker::On, format!("container {}", mesh.proxy_container)));
    }
    let pick = found
        .iter()
        .position(|(m, _)| *m == Marker::Off)
        .or((!found.is_empty()).then_some(0))?;
    let (marker, what) = found.swap_remove(pick);
    Some(Seen {
        mesh: mesh.id,
        marker,
        what,
    })
}

/// Decides what to do with one pod. `run_notes` collects the notes said once per run.
pub fn decide(
    target: &Pod<'_>,
    settings: &Settings,
    ctx: &RunContext,
    run_notes: &mut Vec<Finding>,
) -> Decision {
    let oref = &target.object;
    let at = target.template.start;
    let name = describe(oref);
    let info = |rule, msg: String| Finding::info(rule, at, msg).with_object(Some(oref.clone()));
    let mesh = match which_mesh(target, settings.mesh, &ctx.namespaces) {
        Ok(m) => m,
        Err(f) => return Decision::Skip(*f),
    };
    if let Some((rule, reason)) = skip_reason(target.template) {
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
    if let Some(why) = ambient_why.filter(|_| mesh.id == MeshId::Istio) {
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
    let t = Target::of(mesh, settings);
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
            if let Some(why) = &t.too_old {
                return Decision::Skip(
                    Finding::error(
                        Rule::NativeTooOld,
                        at,
                        format!(
                            "{name}: --strategy native needs {}, but {why}; the pod is left as \
                             it is (use the wrapper, or upgrade)",
                            t.needs
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
            if !t.known {
                run_notes.push((t.note)(at, true));
            }
            return fix(
                Strategy::Native,
                Rule::StrategyChosen,
                format!("native sidecar (--strategy native; {})", t.versions),
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
        Some((key, v)) if (t.is_off)(v) => {
            return fix(
                Strategy::Wrapper,
                Rule::StrategyChosen,
                format!("the wrapper: the pod turns native sidecars off ({key}: \"{v}\")"),
            );
        }
        Some((key, v)) if t.too_old.is_none() && (t.is_on)(v) => {
            return fix(
                Strategy::Remove { keep_native: true },
                Rule::NativeSidecar,
                format!(
                    "native sidecar mode ({key}: \"{v}\") lets the Job complete without a \
                     wrapper; {remove_note}"
                ),
            );
        }
        _ => {}
    }
    match (t.known, t.too_old) {
        (_, Some(why)) => fix(
            Strategy::Wrapper,
            Rule::StrategyChosen,
            format!(
                "the wrapper, since {why} (native sidecars need {})",
                t.needs
            ),
        ),
        (true, None) => fix(
            Strategy::Native,
            Rule::StrategyChosen,
            format!("native sidecar ({})", t.versions),
        ),
        (false, None) => {
            run_notes.push((t.note)(at, false));
            fix(
                Strategy::Wrapper,
                Rule::StrategyChosen,
                format!("the wrapper ({})", t.versions),
            )
        }
    }
}

/// The mesh of a pod: its own markers, else its Namespace's, else `default_mesh`. Both
/// meshes, or only an opt-out, is a finding instead.
fn which_mesh(
    target: &Pod<'_>,
    default_mesh: MeshId,
    namespaces: &Namespaces,
) -> Result<&'static Mesh, Box<Finding>> {
    let meta = target.template.get("metadata");
    let spec = target.template.get("spec");
    let in_namespace = namespaces.get(&target.object.namespace);
    // Per mesh: the pod's own markers, else its Namespace's.
    let seen: Vec<Seen> = mesh::ALL
        .iter()
        .filter_map(|m| {
            level(m, meta, m.pod_markers, spec)
                .or_else(|| in_namespace.iter().find(|s| s.mesh == m.id).cloned())
        })
        .collect();
    let on: Vec<&Seen> = seen.iter().filter(|s| s.marker == Marker::On).collect();
    let mesh = match on.as_slice() {
        [a, b, ..] => {
            let f = Finding::error(
                Rule::MeshConflict,
                target.template.start,
                format!(
                    "{}: both {} ({}) and {} ({}) would inject this pod, and two proxies in one \
                     pod break its traffic; left alone: opt it out of one of the two",
                    describe(&target.object),
                    a.mesh.mesh().name,
                    a.what,
                    b.mesh.mesh().name,
                    b.what
                ),
            )
            .with_object(Some(target.object.clone()));
            return Err(Box::new(f));
        }
        [one] => one.mesh.mesh(),
        [] => {
            if let Some(off) = seen.first() {
                let f = Finding::info(
                    Rule::OptedOut,
                    target.template.start,
                    format!(
                        "{}: skipped, opted out of injection ({})",
                        describe(&target.object),
                        off.what
                    ),
                )
                .with_object(Some(target.object.clone()));
                return Err(Box::new(f));
            }
            default_mesh.mesh()
        }
    };
    Ok(mesh)
}

/// What the target versions say about native sidecars for a pod of one mesh.
struct Target {
    /// `Istio 1.24, Kubernetes unknown`.
    versions: String,
    /// Both the mesh's and Kubernetes' versions are given.
    known: bool,
    /// Why the known versions cannot run a native sidecar, if they cannot.
    too_old: Option<String>,
    /// `Istio 1.24 and Kubernetes 1.29`.
    needs: String,
    /// The once-per-run note about versions that were not given.
    note: fn(usize, bool) -> Finding,
    /// Whether an annotation value turns native sidecars on, or off, as the target reads it.
    is_on: Box<dyn Fn(&str) -> bool>,
    is_off: fn(&str) -> bool,
}

impl Target {
    fn of(mesh: &Mesh, settings: &Settings) -> Target {
        let kube_v = settings.kubernetes_version;
        let show = |v: Option<Version>| v.map_or_else(|| "unknown".to_string(), |v| v.to_string());
        match mesh.id {
            MeshId::Istio => {
                let istio_v = settings.istio_version;
                Target {
                    versions: versions_text(istio_v, kube_v),
                    known: istio_v.is_some() && kube_v.is_some(),
                    too_old: native_too_old(istio_v, kube_v),
                    needs: format!(
                        "Istio {} and Kubernetes {}",
                        istio::NATIVE_ANNOTATION_SINCE,
                        istio::NATIVE_KUBERNETES_SINCE
                    ),
                    note: versions_note,
                    is_on: Box::new(move |v| istio::native_annotation_on(v, istio_v)),
                    is_off: |v| v == istio::NATIVE_OFF,
                }
            }
            MeshId::Linkerd => {
                let linkerd_v = settings.linkerd_version;
                let mut old = Vec::new();
                if let Some(v) =
                    linkerd_v.filter(|v| linkerd::native_annotation(Some(*v)).is_none())
                {
                    old.push(format!("Linkerd {v} has no native sidecars"));
                }
                if let Some(v) = kube_v.filter(|v| *v < linkerd::NATIVE_KUBERNETES_SINCE) {
                    old.push(format!(
                        "Kubernetes {v} has no native sidecars on by default"
                    ));
                }
                Target {
                    versions: format!("Linkerd {}, Kubernetes {}", show(linkerd_v), show(kube_v)),
                    known: linkerd_v.is_some() && kube_v.is_some(),
                    too_old: (!old.is_empty()).then(|| old.join(" and ")),
                    needs: format!(
                        "Linkerd {} and Kubernetes {}",
                        linkerd::NATIVE_SINCE,
                        linkerd::NATIVE_KUBERNETES_SINCE
                    ),
                    note: linkerd_versions_note,
                    is_on: Box::new(linkerd::is_go_true),
                    is_off: |v| !linkerd::is_go_true(v),
                }
            }
        }
    }
}

/// The once-per-run note about the versions that were not given, for Linkerd pods.
fn linkerd_versions_note(at: usize, native: bool) -> Finding {
    let tail = if native {
        "--strategy native was applied without checking them (with the alpha annotation, \
         which every Linkerd from 2.15 reads); it needs Linkerd 2.15+ and Kubernetes 1.29+"
    } else {
        "with both given, pods on Linkerd 2.15+ and Kubernetes 1.29+ get a native sidecar (one \
         pod annotation, no wrapper) instead of the wrapper"
    };
    Finding::info(
        Rule::VersionsUnknown,
        at,
        format!(
            "the target versions are not known: pass --linkerd-version (the injecting Linkerd) \
             and --kubernetes-version (the oldest kubelet), or set linkerdVersion and \
             kubernetesVersion in the config; {tail}"
        ),
    )
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

/// The pod's native-sidecar annotation that counts (the first the mesh reads), with its
/// value, if it has one.
fn native_annotation<'n>(mesh: &Mesh, template: &'n Node) -> Option<(&'static str, &'n str)> {
    let anns = template.path(&["metadata", "annotations"])?;
    mesh.native_sidecar_annotations
        .iter()
        .find_map(|k| anns.get(k).and_then(Node::as_str).map(|v| (*k, v)))
}

/// Why the pod is in ambient mode, if it is: the label on the pod template, unless the pod
/// also asks for a sidecar (a pod with a sidecar is never enrolled in ambient).
fn ambient(template: &Node) -> Option<String> {
    let labels = template.path(&["metadata", "labels"])?;
    let mode = labels.str(istio::DATAPLANE_MODE_LABEL)?;
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
            labels.str(istio::INJECT_KEY) == Some("true")
                || labels
                    .str(istio::REVISION_LABEL)
                    .is_some_and(|r| !r.is_empty())
        })
}

/// Whether the proxy is injected already, as a native sidecar.
fn native_proxy(mesh: &Mesh, template: &Node) -> bool {
    template
        .path(&["spec", "initContainers"])
        .and_then(Node::items)
        .is_some_and(|inits| {
            inits.iter().any(|c| {
                c.str("name") == Some(mesh.proxy_container)
                    && c.str("restartPolicy") == Some("Always")
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
        .find(|(_, c)| c.str("name") == Some(mesh.proxy_container))
}

/// Why a pod template is not to be touched whatever its mesh, if it is not.
fn skip_reason(template: &Node) -> Option<(Rule, String)> {
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
        let pods = locate(&docs[0].root, crate::kinds::Kinds::builtin()).pods;
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

    /// The meshes of the pods of the document that get the wrapper, and the messages of
    /// those that do not, with the Namespace documents of the same text.
    fn decide_all(src: &str, default_mesh: MeshId) -> (Vec<MeshId>, Vec<String>) {
        let docs = parse_stream(src).unwrap();
        let mut namespaces = Namespaces::default();
        for d in &docs {
            namespaces.add(&d.root);
        }
        let ctx = RunContext {
            namespaces,
            ..RunContext::default()
        };
        let settings = Settings {
            mesh: default_mesh,
            ..Settings::default()
        };
        let mut fixed = Vec::new();
        let mut msgs = Vec::new();
        for d in &docs {
            for pod in &locate(&d.root, crate::kinds::Kinds::builtin()).pods {
                match decide(pod, &settings, &ctx, &mut Vec::new()) {
                    Decision::Fix {
                        mesh,
                        strategy: Strategy::Wrapper,
                        ..
                    } => fixed.push(mesh.id),
                    Decision::Fix { why, .. } => {
                        msgs.push(format!("{}: {}", why.severity, why.message))
                    }
                    Decision::Skip(f) => msgs.push(format!("{}: {}", f.severity, f.message)),
                }
            }
        }
        (fixed, msgs)
    }

    fn job_in(ns: &str, meta: &str, spec: &str) -> String {
        format!(
            "apiVersion: batch/v1\nkind: Job\nmetadata: {{name: j, namespace: {ns}}}\nspec:\n  template:\n    metadata: {meta}\n    spec: {spec}\n"
        )
    }

    #[test]
    fn mesh_of_each_pod() {
        use MeshId::{Istio, Linkerd};
        let on = "{annotations: {linkerd.io/inject: enabled}}";
        assert_eq!(decide_all(&job_in("a", on, "{}"), Istio).0, [Linkerd]);
        let ingress = "{annotations: {linkerd.io/inject: ingress}}";
        assert_eq!(decide_all(&job_in("a", ingress, "{}"), Istio).0, [Linkerd]);
        // Linkerd reads annotations only, and values exactly.
        let label = "{labels: {linkerd.io/inject: enabled}}";
        assert_eq!(decide_all(&job_in("a", label, "{}"), Istio).0, [Istio]);
        let upper = "{annotations: {linkerd.io/inject: Enabled}}";
        assert_eq!(decide_all(&job_in("a", upper, "{}"), Istio).0, [Istio]);
        // No marker: the setting.
        assert_eq!(decide_all(&job_in("a", "{}", "{}"), Linkerd).0, [Linkerd]);
        let rev = "{labels: {istio.io/rev: canary}}";
        assert_eq!(decide_all(&job_in("a", rev, "{}"), Linkerd).0, [Istio]);
        let proxy = "{containers: [{name: linkerd-proxy}, {name: t, command: [x]}]}";
        assert_eq!(decide_all(&job_in("a", "{}", proxy), Istio).0, [Linkerd]);
        // A Namespace of the run, matched by name.
        let ns = "apiVersion: v1\nkind: Namespace\nmetadata: {name: batch, annotations: {linkerd.io/inject: enabled}}\n---\n";
        let both = format!(
            "{ns}{}---\n{}",
            job_in("batch", "{}", "{}"),
            job_in("other", "{}", "{}")
        );
        assert_eq!(decide_all(&both, Istio).0, [Linkerd, Istio]);
        // The pod's own opt-out wins over its Namespace.
        let off = "{annotations: {linkerd.io/inject: disabled}}";
        let (fixed, msgs) = decide_all(&format!("{ns}{}", job_in("batch", off, "{}")), Istio);
        assert!(fixed.is_empty());
        assert_eq!(
            msgs,
            [
                "info: Job/j: skipped, opted out of injection (annotation linkerd.io/inject: \"disabled\")"
            ]
        );
        // An opt-out of Linkerd does not make the pod an Istio pod.
        assert_eq!(decide_all(&job_in("a", off, "{}"), Istio).0, []);
        // Opting out of Istio in a Linkerd namespace leaves a Linkerd pod.
        let istio_off = "{labels: {sidecar.istio.io/inject: \"false\"}}";
        let (fixed, _) = decide_all(&format!("{ns}{}", job_in("batch", istio_off, "{}")), Istio);
        assert_eq!(fixed, [Linkerd]);
    }

    #[test]
    fn two_meshes_are_an_error() {
        let meta = "{labels: {sidecar.istio.io/inject: \"true\"}, annotations: {linkerd.io/inject: enabled}}";
        let (fixed, msgs) = decide_all(&job_in("a", meta, "{}"), MeshId::Istio);
        assert!(fixed.is_empty());
        assert_eq!(msgs.len(), 1);
        assert!(msgs[0].starts_with("error: Job/j: both Istio (label sidecar.istio.io/inject: \"true\") and Linkerd (annotation linkerd.io/inject: \"enabled\")"), "{}", msgs[0]);
        let ns = "apiVersion: v1\nkind: Namespace\nmetadata: {name: batch, labels: {istio-injection: enabled}}\n---\n";
        let pod = "{annotations: {linkerd.io/inject: enabled}}";
        let (fixed, msgs) = decide_all(
            &format!("{ns}{}", job_in("batch", pod, "{}")),
            MeshId::Istio,
        );
        assert!(fixed.is_empty());
        assert!(
            msgs[0].contains("label istio-injection: \"enabled\" on Namespace/batch"),
            "{}",
            msgs[0]
        );
    }

    #[test]
    fn linkerd_native_sidecar_annotations() {
        let t = |anns: &str| {
            decide_all(
                &job_in(
                    "a",
                    &format!("{{annotations: {{linkerd.io/inject: enabled, {anns}}}}}"),
                    "{}",
                ),
                MeshId::Istio,
            )
        };
        assert_eq!(
            t("config.alpha.linkerd.io/proxy-enable-native-sidecar: \"true\"").0,
            []
        );
        assert_eq!(
            t("config.beta.linkerd.io/proxy-enable-native-sidecar: \"1\"").0,
            []
        );
        assert_eq!(
            t("config.linkerd.io/proxy-enable-native-sidecar: \"True\"").0,
            []
        );
        // GA wins over alpha.
        let (fixed, _) = t(
            "config.linkerd.io/proxy-enable-native-sidecar: \"false\", config.alpha.linkerd.io/proxy-enable-native-sidecar: \"true\"",
        );
        assert_eq!(fixed, [MeshId::Linkerd]);
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
