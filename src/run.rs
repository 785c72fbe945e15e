//! One text's trip through the pipeline: parse, locate, plan, apply, verify.

use crate::config::Settings;
use crate::finding::Finding;
use crate::plan;
use crate::yaml::edit::{Edit, splice};
use crate::yaml::tree::parse_stream;
use crate::yaml::value::Value;

/// The result of processing one text.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The rewritten text (equal to the input when nothing changes or on a fatal error).
    pub text: String,
    /// Findings of every severity.
    pub findings: Vec<Finding>,
    /// Set when the tool could not do its job on this text (invalid YAML, verification
    /// failure): exit 2, and the text must not be written.
    pub fatal: Option<Finding>,
}

impl Outcome {
    pub fn changed(&self, input: &str) -> bool {
        self.fatal.is_none() && self.text != input
    }

    fn fatal(text: &str, f: Finding) -> Self {
        Outcome {
            text: text.to_string(),
            findings: Vec::new(),
            fatal: Some(f),
        }
    }
}

/// Per-file choices that are not settings.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProcessOptions {
    /// Treat documents without apiVersion/kind as a bare MeshConfig (`--mesh-config`).
    pub force_mesh: bool,
}

/// Processes one YAML stream.
pub fn process(text: &str, settings: &Settings) -> Outcome {
    process_with(text, settings, ProcessOptions::default())
}

/// Processes one YAML stream with per-file options.
pub fn process_with(text: &str, settings: &Settings, opts: ProcessOptions) -> Outcome {
    let docs = match parse_stream(text) {
        Ok(d) => d,
        Err(e) => {
            return Outcome::fatal(
                text,
                Finding::error(
                    e.offset,
                    format!(
                        "invalid YAML: {}; meshjob edits only YAML that parses: fix the syntax \
                         at this line and column, then run again",
                        e.message
                    ),
                ),
            );
        }
    };
    let mut edits: Vec<Edit> = Vec::new();
    let mut findings = Vec::new();
    let mut intended = Vec::with_capacity(docs.len());
    for doc in &docs {
        let p = plan::plan_doc(text, doc, settings, opts);
        findings.extend(p.findings);
        edits.extend(p.editor.edits);
        intended.push(p.editor.intended);
    }
    once_per_text(&mut findings);
    if edits.is_empty() {
        return Outcome {
            text: text.to_string(),
            findings,
            fatal: None,
        };
    }
    let out = match splice(text, &edits) {
        Ok(o) => o,
        Err(o) => {
            return Outcome::fatal(
                text,
                Finding::error(
                    o.at,
                    "internal error: two planned edits overlap; nothing written",
                ),
            );
        }
    };
    if let Err(mut f) = verify(&out, &intended) {
        // The failure's offset is in the edited text; show it at the first edit instead,
        // which is in the input.
        f.offset = edits.iter().map(|e| e.start).min().unwrap_or(0);
        return Outcome::fatal(text, *f);
    }
    Outcome {
        text: out,
        findings,
        fatal: None,
    }
}

/// Keeps only the first of the notes that are said once (the drain interaction).
fn once_per_text(findings: &mut Vec<Finding>) {
    let mut seen = false;
    findings.retain(|f| {
        let note = is_once_note(f);
        let keep = !(note && seen);
        seen |= note;
        keep
    });
}

/// Whether `f` is a note said once per run rather than once per place.
pub fn is_once_note(f: &Finding) -> bool {
    f.severity == crate::finding::Severity::Info
        && f.message == crate::istio::DRAIN_INTERACTION_NOTE
}

/// Re-parses the edited text and checks every document against its intended value.
pub fn verify(out: &str, intended: &[Value]) -> Result<(), Box<Finding>> {
    let docs = parse_stream(out).map_err(|e| {
        Box::new(Finding::error(
            e.offset,
            format!(
                "internal error: the edited text does not parse ({}); nothing written",
                e.message
            ),
        ))
    })?;
    if docs.len() != intended.len() {
        return Err(Box::new(Finding::error(
            0,
            format!(
                "internal error: the edited text has {} documents instead of {}; nothing written",
                docs.len(),
                intended.len()
            ),
        )));
    }
    for (doc, want) in docs.iter().zip(intended) {
        if !want.matches(&Value::from_node(&doc.root)) {
            return Err(Box::new(Finding::error(
                doc.root.start,
                "internal error: an edited document does not read back as intended; nothing \
                 written",
            )));
        }
    }
    Ok(())
}
