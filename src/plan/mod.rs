//! Plans the edits for each target: one file per concern. Each pod gets the planners of
//! the strategy `decide` chose for it. What differs from one mesh to the next is in the
//! mesh's own folder (`istio/`, `linkerd/`): its [`Planner`], which writes on its pods and
//! in its mesh-wide documents what its facts (`crate::mesh`) call for.

pub(crate) mod annotation;
pub(crate) mod container;
mod endpoint;
pub(crate) mod env;
pub(crate) mod holders;
mod istio;
pub(crate) mod kill_command;
mod linkerd;
pub(crate) mod own_fixes;
mod peers;
pub(crate) mod planner;
pub(crate) mod revert;
pub mod script;
pub(crate) mod sidecar_moves;
pub(crate) mod sidecars;
pub(crate) mod stops;
pub(crate) mod wrapped;

use crate::config::Settings;
use crate::decide::{self, Decision, Strategy};
use crate::finding::{Finding, Rule, Severity};
use crate::locate;
use crate::mesh::{self, Mesh, Support};
use crate::pod::Pod;
use crate::yaml::edit::Edit;
use crate::yaml::editor::Editor;
use crate::yaml::tree::Doc;
use crate::yaml::tree::Node;
use planner::{Planner, PodCx};
use std::fmt::Write;

/// Every mesh's planner, each naming the facts it plans for ([`Planner::mesh`]). A new mesh
/// adds its own here; a test holds this list to [`mesh::ALL`], one planner for each mesh.
static PLANNERS: [&dyn Planner; 2] = [&istio::PLANNER, &linkerd::PLANNER];

/// The planner of a mesh.
pub(crate) fn planner(mesh: &Mesh) -> &'static dyn Planner {
    let of = PLANNERS.iter().find(|p| p.mesh().id == mesh.id);
    *of.expect("every mesh has a planner (`plan::PLANNERS`)")
}

/// The plan for one document: its editor (edits + intended value) and findings.
pub struct DocPlan<'a> {
    pub editor: Editor<'a>,
    pub findings: Vec<Finding>,
    /// How many pods it decided.
    pub pods: usize,
    /// It holds something meshjob handles: a pod of the kinds table, an object of such a
    /// kind that locating reported on, or mesh-wide values (whether or not anything
    /// changes).
    pub handled: bool,
}

/// Plans one document of `src`.
pub fn plan_doc<'a>(
    src: &'a str,
    doc: &'a Doc,
    settings: &Settings,
    force_mesh: bool,
) -> DocPlan<'a> {
    plan_doc_in(
        src,
        doc,
        settings,
        force_mesh,
        &decide::RunContext::default(),
    )
}

/// Plans one document of `src`, with what the rest of the stream says (`ctx`).
pub fn plan_doc_in<'a>(
    src: &'a str,
    doc: &'a Doc,
    settings: &Settings,
    force_mesh: bool,
    ctx: &decide::RunContext,
) -> DocPlan<'a> {
    let mut located = locate(&doc.root, &settings.kinds);
    for pod in &mut located.pods {
        pod.inherited =
            (ctx.namespaces).inherited(pod, &|m| ctx.versions.support(m, settings).release());
    }
    let mut handled = !located.pods.is_empty() || !located.findings.is_empty();
    let mut findings = located.findings;
    let mut editor = Editor::detecting(src, &doc.root);
    let mut run_notes = Vec::new();
    let mut changed_pods = false;
    for target in &mut located.pods {
        let holders = holders::of(target, settings);
        let recognised = holders::recognised(target);
        let owner = holders.iter().copied().find(|h| h.owns_pod);
        // Another mesh that meshjob does not fix owns the pod (Kuma, App Mesh).
        let other_mesh = recognised.iter().any(|r| r.owns_pod);
        // A pod another mesh owns says nothing about the run's mesh, nor its versions.
        let mut scratch = Vec::new();
        let notes = if owner.is_some() || other_mesh {
            &mut scratch
        } else {
            &mut run_notes
        };
        let decision = decide::decide(target, settings, ctx, notes);
        // The run's mesh part of the pod's fix: none where another mesh owns the pod, or
        // where the mesh needs no fix but other holders do.
        let (fix, skipped) = match decision {
            Decision::Skip(why) if matches!(why, decide::Why::Ignored { .. }) => {
                findings.extend(decide::lints(target, settings, ctx, None));
                findings.push(why.finding(target));
                continue;
            }
            Decision::Skip(why) if holders.is_empty() => {
                findings.extend(decide::lints(target, settings, ctx, None));
                findings.push(why.finding(target));
                findings.extend(holders::recognised_findings(target, &recognised, None));
                continue;
            }
            Decision::Skip(why) => (None, Some(why)),
            Decision::Fix { .. } if owner.is_some() || other_mesh => (None, None),
            Decision::Fix {
                mesh,
                strategy,
                why,
                support,
            } => (Some((mesh, strategy, why, support)), None),
        };
        let linted = fix
            .as_ref()
            .map(|(mesh, strategy, _, _)| (*mesh, *strategy));
        findings.extend(decide::lints(target, settings, ctx, linted));
        // Plan each pod on its own, so that a refusal in one leaves the others intact.
        let mut pod_findings = Vec::new();
        let kubelets = (!holders.is_empty() || !recognised.is_empty())
            .then(|| {
                ctx.versions
                    .support(settings.mesh.mesh(), settings)
                    .kubelets()
            })
            .flatten();
        let held = holders::choose(target, &holders, settings, kubelets, &mut pod_findings);
        pod_findings.extend(holders::recognised_findings(target, &recognised, kubelets));
        let also = holders::endpoints(&held);
        let may_wrap = decide::wrapper_allowed(target).is_ok();
        let mesh_wraps = matches!(fix, Some((_, Strategy::Wrapper, _, _)));
        target.keep_wrappers = may_wrap && !also.is_empty() && !mesh_wraps;
        let target = &*target;
        let run_support;
        let (mesh, support): (&'static Mesh, &Support) = match &fix {
            Some((mesh, _, _, support)) => (*mesh, support),
            None => {
                let m = settings.mesh.mesh();
                run_support = ctx.versions.support(m, settings);
                (m, &run_support)
            }
        };
        if fix.is_some() {
            native_keys(target, support, &mut pod_findings);
        }
        let scope = target.edit_scope();
        let mark = editor.begin(&scope);
        let planner = planner(mesh);
        let mut cx = PodCx {
            ed: &mut editor,
            pod: target,
            mesh,
            settings,
            support,
            out: &mut pod_findings,
        };
        let stops = container::Stops {
            mesh: false,
            holders: &also,
        };
        match fix.as_ref().map(|f| f.1) {
            Some(Strategy::Wrapper) => {
                let stops = container::Stops {
                    mesh: true,
                    holders: &also,
                };
                let wrapped =
                    container::plan(cx.ed, target, mesh, settings, support, &stops, cx.out);
                foreign(target, mesh, cx.out);
                planner.wrapper(&mut cx, wrapped);
            }
            Some(Strategy::Native) => planner.native(&mut cx),
            Some(Strategy::Remove { keep_native }) => planner.remove(&mut cx, keep_native),
            Some(Strategy::Fallback(crate::kinds::Fallback::KillCommand { .. })) => {
                kill_command::plan(&mut cx);
            }
            // No mesh fix: a wrapper meshjob wrote earlier served holders that now need none.
            None if !target.keep_wrappers => revert::unwrap_pod(cx.ed, target, cx.out),
            None => {}
        }
        let mesh_changed = fix.is_some() && !editor.edits_since(&mark).is_empty();
        if target.keep_wrappers {
            container::plan(
                &mut editor,
                target,
                mesh,
                settings,
                support,
                &stops,
                &mut pod_findings,
            );
        } else if !may_wrap && !also.is_empty() {
            let why = decide::wrapper_allowed(target).err().unwrap_or_default();
            pod_findings.push(
                Finding::warning(
                    Rule::HolderBlocked,
                    target.template.start,
                    format!(
                        "{}: the wrapper is not allowed here ({why}), so nothing stops {}",
                        target.describe(),
                        held.iter()
                            .map(|h| h.holder.name)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )
                .with_object(Some(target.object.clone())),
            );
        }
        holders::annotate(&mut editor, target, &held, settings, &mut pod_findings);
        let holders_changed = !editor.edits_since(&mark).is_empty() && !mesh_changed;
        let mut moves = sidecar_moves::plan(&mut editor, target, mesh, settings, support);
        moves.settle(&mut pod_findings, settings, support);
        // The choice is explained where it changes something, so a clean run stays quiet.
        let changed = !editor.edits_since(&mark).is_empty();
        changed_pods |= changed;
        match (&fix, &skipped, owner) {
            (Some((_, _, why, _)), _, _) => {
                if changed || why.rule() != Rule::StrategyChosen {
                    pod_findings.insert(0, why.finding(target));
                }
            }
            (None, _, Some(owner)) => {
                pod_findings.insert(0, holders::owned(target, owner, settings.mesh.mesh().name));
            }
            (None, Some(why), None) => pod_findings.insert(0, why.finding(target)),
            // A recognised mesh owns it: its own finding says so.
            (None, None, None) if other_mesh => {}
            (None, None, None) => {}
        }
        let refused = pod_findings
            .iter()
            .any(|f| f.severity == Severity::Error && f.rule.refuses_pod());
        if refused {
            editor.drop_group(mark, &scope);
        } else if !editor.edits_since(&mark).is_empty() {
            if let Some((mesh, strategy, why, support)) = fix.as_ref().filter(|_| mesh_changed) {
                let native_key = mesh.native_key(support.release());
                let pin = matches!(why, decide::Why::MeshNative(_));
                pod_findings.push(would_change(
                    editor.src,
                    target,
                    mesh,
                    *strategy,
                    (native_key, pin),
                    editor.edits_since(&mark),
                ));
            } else if holders_changed {
                pod_findings.push(holders::would_change(target, &held));
            } else {
                pod_findings.push(sidecar_moves::would_change(target, &moves));
            }
        }
        findings.extend(pod_findings);
    }
    if changed_pods {
        findings.extend(run_notes);
    }
    // Mesh configuration lives in other kinds than Jobs, so a stream may hold both. It is
    // not a pod fix: `none` leaves it as it is.
    if !handled {
        handled = (mesh::ALL.iter()).any(|m| planner(m).holds_values(&doc.root, force_mesh));
    }
    findings.extend(decide::document_lints(&doc.root, settings, ctx));
    if settings.strategy != crate::config::StrategyChoice::None {
        for m in mesh::ALL.iter() {
            let support = ctx.versions.support(m, settings);
            let native = match settings.strategy {
                crate::config::StrategyChoice::Native => support.too_old().is_empty(),
                crate::config::StrategyChoice::Auto => {
                    decide::by_versions(&support).0 == Strategy::Native
                }
                _ => false,
            };
            let p = planner(m);
            p.values(
                &mut editor,
                &doc.root,
                settings,
                native,
                force_mesh,
                &mut findings,
            );
        }
    }
    DocPlan {
        editor,
        findings,
        pods: located.pods.len(),
        handled,
    }
}

/// Reports native-sidecar annotations of the pod's mesh that do nothing there: a key that
/// looks like one and that no version reads (`sidecar.istio.io/native-side`, as Istio 1.27's
/// release note spells it), and a real one the target version does not read (Linkerd's GA key
/// before 2.20, Istio's before 1.24).
fn native_keys(t: &Pod<'_>, s: &Support, out: &mut Vec<Finding>) {
    let Some(anns) = t.annotations().and_then(Node::entries) else {
        return;
    };
    let (m, who) = (s.mesh, t.describe());
    let release = s.release();
    let version = || match &s.mesh_version {
        Some(v) => format!("{} {} ({})", m.name, v.value, v.origin),
        None => m.name.to_string(),
    };
    for e in anns {
        let Some(key) = e.key.as_str() else { continue };
        let (rule, message) = if m.native.lookalikes.contains(&key) {
            (
                Rule::NativeLookalike,
                format!(
                    "{who}: `{key}` looks like {}'s native-sidecar annotation, but no {} reads \
                     it, so it does nothing; the annotation is `{}`",
                    m.name,
                    m.name,
                    m.native_key(release)
                ),
            )
        } else if m.native_sidecar_annotations.contains(&key) && !s.reads(key) {
            let instead = match (m.native.key_for)(release) {
                Some(k) => format!("it reads `{k}`"),
                None => "that version reads no native-sidecar annotation".to_string(),
            };
            (
                Rule::NativeKeyNotRead,
                format!(
                    "{who}: {} does not read `{key}`, so it does nothing there ({instead})",
                    version()
                ),
            )
        } else {
            continue;
        };
        out.push(Finding::warning(rule, e.key.start, message).with_object(Some(t.object.clone())));
    }
}

/// Reports the per-pod annotations of the other meshes on a pod of `mesh`: left from an
/// earlier run that took the pod for another mesh, they do nothing there.
fn foreign(t: &Pod<'_>, mesh: &Mesh, out: &mut Vec<Finding>) {
    let Some(anns) = t.annotations() else {
        return;
    };
    for other in mesh::ALL.iter().filter(|m| m.id != mesh.id) {
        let key = other.pod_config_annotation;
        if let Some(e) = anns.entry(key) {
            out.push(
                Finding::warning(
                    Rule::ForeignAnnotation,
                    e.key.start,
                    format!(
                        "{}: `{key}` is {}'s, but {} injects this pod, which ignores it; \
                         remove it",
                        t.describe(),
                        other.name,
                        mesh.name
                    ),
                )
                .with_object(Some(t.object.clone())),
            );
        }
    }
}

/// The finding that says a pod template would change, so that every such pod gets a line
/// (and a pull-request annotation) of its own: at the first container that would be
/// wrapped, else at the pod's config annotation, else at the pod template. `native`: the
/// native annotation's key, and whether it only pins what the mesh does by itself (every
/// proxy native already): a warning then, as the pod completes without it.
fn would_change(
    src: &str,
    t: &Pod<'_>,
    mesh: &Mesh,
    strategy: Strategy,
    native: (&str, bool),
    edits: &[Edit],
) -> Finding {
    let tpl = t.template;
    let who = t.describe();
    let (native_key, pin) = native;
    if strategy == Strategy::Native && pin {
        let message = format!(
            "{who}: {native_key}: \"{}\" would be set: {} already makes this pod's proxy a \
             native sidecar, so the pod completes without it; the annotation pins that, so \
             that the pod stays native if the mesh's setting changes",
            mesh.native.on, mesh.name
        );
        return Finding::warning(Rule::WouldChange, tpl.start, message)
            .with_object(Some(t.object.clone()))
            .fixed();
    }
    let other = match strategy {
        Strategy::Wrapper => None,
        Strategy::Native => Some(format!(
            "{who}: {native_key}: \"{}\" would be set: its pod would keep running after the \
             task, because the {} proxy does not stop",
            mesh.native.on, mesh.name
        )),
        // A pod native by its own annotation, whose CronJob's Job template alone changes
        // (`plan::istio` copies the annotation there): the webhook already makes its pods
        // native, only `istioctl kube-inject` of the CronJob would not, so a warning.
        Strategy::Remove { keep_native: true }
            if t.job_template_node().is_some()
                && (edits.iter()).all(|e| e.start < tpl.start || e.start > tpl.end) =>
        {
            let message = format!(
                "{who}: spec.jobTemplate.metadata would get the pod's {native_key} \
                 annotation: the webhook injects these pods as native sidecars already, but \
                 `istioctl kube-inject` of the CronJob reads the annotation there and would \
                 give it a proxy that keeps its pods running"
            );
            return Finding::warning(Rule::WouldChange, tpl.start, message)
                .with_object(Some(t.object.clone()))
                .fixed();
        }
        Strategy::Remove { .. } => Some(format!(
            "{who}: what meshjob added earlier would be taken out"
        )),
        Strategy::Fallback(crate::kinds::Fallback::KillCommand { prefix }) => Some(format!(
            "{who}: {prefix}{} would be set: its pods would keep running after the task, \
             because the {} proxy does not stop",
            mesh.proxy_container, mesh.name
        )),
    };
    if let Some(message) = other {
        return Finding::error(Rule::WouldChange, tpl.start, message)
            .with_object(Some(t.object.clone()))
            .fixed();
    }
    let containers: Vec<&Node> = t.containers().map(|c| c.node).collect();
    let is_touched = |c: &&Node| edits.iter().any(|e| c.start <= e.start && e.start <= c.end);
    // An injected proxy is never wrapped: its env may get the settings instead.
    let is_proxy = |c: &&Node| c.str("name") == Some(mesh.proxy_container);
    // A new entry at the end of a container lands on the line after its last one.
    let line_end = |at: usize| src[at..].find('\n').map_or(src.len(), |i| at + i + 1);
    let proxy = containers.iter().copied().find(|c| {
        is_proxy(c) && (edits.iter()).any(|e| c.start <= e.start && e.start <= line_end(c.end))
    });
    let touched: Vec<&Node> = containers
        .into_iter()
        .filter(|c| !is_proxy(c) && is_touched(c))
        .collect();
    let (offset, message) = match touched.first() {
        Some(first) => {
            // Worded in one String: every wrapped pod gets this finding.
            let (containers, their) = match touched.len() {
                1 => ("container", "its"),
                _ => ("containers", "their"),
            };
            let mut m = who;
            let _ = write!(m, ": {containers} ");
            for (i, c) in touched.iter().enumerate() {
                m.push_str(if i == 0 { "`" } else { ", `" });
                m.push_str(c.str("name").unwrap_or_default());
                m.push('`');
            }
            let _ = write!(
                m,
                " would be wrapped: {their} pod would keep running after the task, because \
                 the {} proxy does not stop",
                mesh.name
            );
            (first.start, m)
        }
        None if proxy.is_some() => (
            proxy.map_or(tpl.start, |c| c.start),
            format!(
                "{who}: the env of {} would get the proxy settings the task needs",
                mesh.proxy_container
            ),
        ),
        None => {
            let annotation = t
                .annotations()
                .and_then(|a| a.entry(mesh.pod_config_annotation));
            let verb = if annotation.is_some() {
                "updated"
            } else {
                "added"
            };
            (
                annotation.map_or(tpl.start, |e| e.key.start),
                format!(
                    "{who}: {} would be {verb} with the proxy settings the task needs",
                    mesh.pod_config_annotation
                ),
            )
        }
    };
    Finding::error(Rule::WouldChange, offset, message)
        .with_object(Some(t.object.clone()))
        .fixed()
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_mesh_has_one_planner() {
        for m in super::mesh::ALL.iter() {
            let of = super::PLANNERS.iter().filter(|p| p.mesh().id == m.id);
            assert_eq!(of.count(), 1, "{}", m.name);
        }
        assert_eq!(super::PLANNERS.len(), super::mesh::ALL.len());
    }
}
