//! Plans the edits for each target: one file per concern. Each pod gets the planners of
//! the strategy `decide` chose for it.

pub mod annotation;
pub mod container;
pub mod editor;
pub mod embedded;
pub mod mesh;
pub mod proxy_config;
pub mod script;

use crate::apply::Edit;
use crate::config::Settings;
use crate::decide::{self, Decision, Strategy};
use crate::finding::{Finding, Rule, Severity};
use crate::locate;
use crate::mesh::Mesh;
use crate::yaml::style::detect_style;
use crate::yaml::tree::Doc;
use crate::yaml::tree::Node;
use editor::Editor;

/// The plan for one document: its editor (edits + intended value) and findings.
pub struct DocPlan<'a> {
    pub editor: Editor<'a>,
    pub findings: Vec<Finding>,
}

/// Plans one document of `src`.
pub fn plan_doc<'a>(src: &'a str, doc: &Doc, settings: &Settings, force_mesh: bool) -> DocPlan<'a> {
    let located = locate::locate(&doc.root);
    let mut findings = located.findings;
    let mut editor = Editor::new(src, &doc.root, detect_style(src, &doc.root));
    let desired = proxy_config::Desired::from_settings(settings);
    for target in &located.pods {
        let (mesh, strategy) = match decide::decide(target) {
            Decision::Skip(f) => {
                findings.push(f);
                continue;
            }
            Decision::Fix { mesh, strategy } => (mesh, strategy),
        };
        // Plan each pod on its own, so that a refusal in one leaves the others intact.
        let mut pod_findings = Vec::new();
        let mark = editor.edits.len();
        let before = editor.snapshot(&target.path);
        match strategy {
            Strategy::Wrapper => {
                container::plan(&mut editor, target, mesh, settings, &mut pod_findings);
                annotation::plan(&mut editor, target, &desired, &mut pod_findings);
            }
        }
        let refused = pod_findings
            .iter()
            .any(|f| f.severity == Severity::Error && f.rule.refuses_pod());
        if refused {
            editor.edits.truncate(mark);
            if let Some(v) = before {
                editor.restore(&target.path, v);
            }
        } else if editor.edits.len() > mark {
            pod_findings.push(would_change(target, mesh, &editor.edits[mark..]));
        }
        findings.extend(pod_findings);
    }
    // Mesh configuration lives in other kinds than Jobs, so a stream may hold both.
    mesh::plan(&mut editor, &doc.root, &desired, force_mesh, &mut findings);
    DocPlan { editor, findings }
}

/// The finding that says a pod template would change, so that every such pod gets a line
/// (and a pull-request annotation) of its own: at the first container that would be
/// wrapped, else at the pod's config annotation, else at the pod template.
fn would_change(t: &locate::PodTarget<'_>, mesh: &Mesh, edits: &[Edit]) -> Finding {
    let tpl = t.template;
    let containers: Vec<&Node> = (tpl.get("spec"))
        .and_then(|s| s.get("containers"))
        .and_then(Node::items)
        .map(|items| items.iter().collect())
        .unwrap_or_default();
    let touched: Vec<&Node> = containers
        .into_iter()
        // `+ 1`: a value given to a last key written without one (`command:`) starts just
        // after the `:`, which ends the container.
        .filter(|c| {
            edits
                .iter()
                .any(|e| c.start <= e.start && e.start <= c.end + 1)
        })
        .collect();
    let names: Vec<String> = touched
        .iter()
        .map(|c| format!("`{}`", locate::str_of(c, "name").unwrap_or_default()))
        .collect();
    let who = locate::describe(&t.object);
    let (offset, message) = match touched.first() {
        Some(first) => (
            first.start,
            match names.as_slice() {
                [one] => format!(
                    "{who}: container {one} would be wrapped: its pod would keep running \
                     after the task, because the {} proxy does not stop",
                    mesh.name
                ),
                many => format!(
                    "{who}: containers {} would be wrapped: their pod would keep running \
                     after the task, because the {} proxy does not stop",
                    many.join(", "),
                    mesh.name
                ),
            },
        ),
        None => {
            let annotation = (tpl.get("metadata"))
                .and_then(|m| m.get("annotations"))
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
