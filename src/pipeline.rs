//! One text's trip through the engine, on one thread: each piece is parsed, located,
//! planned, spliced and verified. `stream` shares pieces between threads and `run` gathers
//! a text's outcome; both go through [`process_pieces`].

use crate::config::Settings;
use crate::decide::{Namespaces, RunContext};
use crate::finding::{Finding, Rule};
use crate::kinds::Kinds;
use crate::mesh::found::Base;
use crate::plan;
use crate::yaml::apply;
use crate::yaml::bytes::lone_cr;
use crate::yaml::edit::Edit;
use crate::yaml::quick;
use crate::yaml::tree::parse_stream;
use std::ops::Range;

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

    pub(crate) fn fatal(text: &str, f: Finding) -> Self {
        Outcome {
            text: text.to_string(),
            findings: Vec::new(),
            fatal: Some(f),
        }
    }
}

/// Per-file choices that are not settings.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProcessOptions<'a> {
    /// Treat documents without apiVersion/kind as a bare MeshConfig (`--mesh-config`).
    pub force_mesh: bool,
    /// The Namespace documents of the whole run (see `stream::stdin::Stdin::namespaces`); `None`: those of the
    /// text itself.
    pub namespaces: Option<&'a Namespaces>,
}

/// Processes the stream whole, on one thread, parsing every document fully: the reference
/// that the tests hold [`crate::run::process_with`] to.
pub fn process_reference(text: &str, settings: &Settings, opts: ProcessOptions<'_>) -> Outcome {
    let all = 0..text.len();
    let whole = std::slice::from_ref(&all);
    let ctx = RunContext::of_stream(text, whole, opts.namespaces);
    let p = process_pieces(text, whole, settings, opts, &ctx, Growth::None, false);
    if let Some((_, f)) = p.fatal {
        return Outcome::fatal(text, f);
    }
    let mut findings = p.findings;
    once_per_text(&mut findings);
    Outcome {
        text: p
            .outs
            .into_iter()
            .next()
            .flatten()
            .unwrap_or_else(|| text.to_string()),
        findings,
        fatal: None,
    }
}

/// The warnings about versions that the documents of a text in memory say and that
/// disagree, each at the later of its two places in the text (a flag or a config key has
/// none). A host reports them once for its text; a stream read once reports them where they
/// appear (`process_pieces`), and the command line once for its run.
pub(crate) fn conflicts(text: &str, settings: &Settings) -> Vec<Finding> {
    let ctx = RunContext::of_stream(text, &crate::yaml::split::pieces(text), None);
    (ctx.versions.conflicts(settings).into_iter())
        .map(|c| {
            let at = [&c.b.1, &c.a.1]
                .into_iter()
                .find_map(|o| o.place().map(|p| p.offset))
                .unwrap_or(0);
            c.finding(at)
        })
        .collect()
}

/// The outcome of some pieces of a text, processed in order on one thread. Offsets are in
/// the text.
#[derive(Debug, Default)]
pub struct Pieces {
    /// Per piece processed, its rewritten text when it changed.
    pub outs: Vec<Option<String>>,
    pub findings: Vec<Finding>,
    /// The piece that stopped the run (its index), and why; the pieces after it are not
    /// processed.
    pub fatal: Option<(usize, Finding)>,
    /// Where the first edit is.
    pub first_edit: Option<usize>,
    /// Under [`Growth::From`]: what the pieces past the first pass added to the context, in
    /// order, when anything.
    pub adds: Option<RunContext>,
    /// Under [`Growth::From`]: where the first piece that decided a pod starts, and where the
    /// first piece past the first pass that said something about versions does.
    pub first_pod: Option<usize>,
    pub first_versions: Option<usize>,
    /// Under [`Growth::From`]: per piece processed, in order, the namespaces of its pods and
    /// the namespaces its own `Namespace` documents say something new about, for the check
    /// that no Namespace comes after a pod it would have placed.
    pub grown: Vec<Grown>,
    /// A piece holds something meshjob handles (`plan::DocPlan::handled`); a
    /// piece passed through unparsed holds nothing it handles.
    pub handled: bool,
}

/// What one piece says about namespaces, under [`Growth::From`].
#[derive(Debug, Default)]
pub struct Grown {
    /// The piece's index.
    pub piece: usize,
    /// The `metadata.namespace` of each of its pods' objects (when not empty).
    pub pods: Vec<String>,
    /// The namespaces its `Namespace` documents say something new about (mesh markers,
    /// ambient mode, annotations the injectors copy); only for pieces past the first pass.
    pub marks: Vec<String>,
}

/// Where a text starts in its stream (a batch of stdin): the places of the versions its
/// documents say are in the stream.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Start {
    /// Byte offset and line breaks before the text.
    pub offset: usize,
    pub line: usize,
}

/// Where the pieces' own context documents (`Namespace` documents, and documents that say
/// something about versions) count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Growth {
    /// `ctx` holds what the whole stream says (a first pass read it all).
    None,
    /// `ctx` holds what the stream says up to offset `from` in the text (a first pass read
    /// that far: stdin's read-ahead); a piece that starts there or later adds what it says,
    /// which applies from that piece on, and a version that disagrees with what came before
    /// is reported there. Each piece reports what it says about namespaces
    /// ([`Pieces::grown`]). `start`: where the text starts in its stream.
    From { from: usize, start: Start },
}

/// Runs the pieces of `text` in order. `quick`: pass documents that cannot be targets
/// through unparsed. `growth`: whether `ctx` holds what the whole stream says, or only what
/// it says before some offset.
#[allow(clippy::too_many_arguments)]
pub fn process_pieces(
    text: &str,
    pieces: &[Range<usize>],
    settings: &Settings,
    opts: ProcessOptions<'_>,
    ctx: &RunContext,
    growth: Growth,
    quick: bool,
) -> Pieces {
    let mut run = Pieces {
        outs: Vec::with_capacity(pieces.len()),
        ..Pieces::default()
    };
    let mut grown: Option<RunContext> = None;
    // Injected proxies are looked for in documents of any kind only where the batch spells
    // a word of theirs.
    let growing = matches!(growth, Growth::From { .. });
    let proxies = growing && memchr::memmem::find(text.as_bytes(), b"proxy").is_some();
    let mut lines = crate::decide::Lines::default();
    // One scanner for the text: it makes the bitmaps of each part of it once.
    let mut scanner = (quick || growing).then(|| quick::Scanner::new(text));
    for (i, p) in pieces.iter().enumerate() {
        let piece = &text[p.clone()];
        let head = scanner.as_mut().and_then(|s| s.head(p.clone()));
        let mut said = growing.then(|| Grown {
            piece: i,
            ..Grown::default()
        });
        if let (Growth::From { from, start }, Some(said)) = (growth, &mut said)
            && p.start >= from
            && ctx.wants(piece, head.as_ref(), proxies)
        {
            let base = Base {
                file: None,
                offset: start.offset + p.start,
                line: start.line + lines.before(text.as_bytes(), p.start),
            };
            let mut here = RunContext::default();
            if here.add_wanted(piece, &base) {
                let before = grown.as_ref().unwrap_or(ctx);
                said.marks = before.news(&here);
                if !here.versions.is_empty() {
                    run.first_versions.get_or_insert(p.start);
                    let news = before.versions.new_conflicts(&here.versions, settings);
                    let range = start.offset + p.start..start.offset + p.end;
                    run.findings.extend(news.iter().map(|c| {
                        c.finding(c.offset_in(&range).map_or(p.start, |o| o - start.offset))
                    }));
                }
                run.adds
                    .get_or_insert_with(RunContext::default)
                    .extend(here.clone());
                grown.get_or_insert_with(|| ctx.clone()).extend(here);
            }
        }
        let ctx = grown.as_ref().unwrap_or(ctx);
        let target = !quick
            || head
                .as_ref()
                .is_none_or(|h| may_be_target_head(h, &settings.kinds));
        let part = if target {
            process_piece(piece, settings, opts, ctx, said.is_some())
        } else {
            Part::default()
        };
        if part.pods {
            run.first_pod.get_or_insert(p.start);
        }
        run.handled |= part.handled;
        if let Some(mut said) = said {
            said.pods = part.namespaces;
            if !said.pods.is_empty() || !said.marks.is_empty() {
                run.grown.push(said);
            }
        }
        let shift = |mut f: Finding| {
            f.offset += p.start;
            f
        };
        if run.first_edit.is_none() {
            run.first_edit = part.first_edit.map(|e| e + p.start);
        }
        if let Some(f) = part.fatal {
            run.fatal = Some((i, shift(f)));
            return run;
        }
        run.findings.extend(part.findings.into_iter().map(shift));
        run.outs.push(part.out);
    }
    run
}

/// Whether a document the quick scanner read (`h`) must be parsed fully: every kind that
/// meshjob edits or reports on ([`may_matter`]), and documents without a kind. (One it
/// cannot read always is.)
fn may_be_target_head(h: &quick::Head<'_>, kinds: &Kinds) -> bool {
    if h.opaque {
        return true;
    }
    match (h.api_version, h.kind) {
        (Some(_), Some(kind)) => may_matter(kinds, kind, h.name),
        _ => true,
    }
}

/// Whether a document of this kind (and, for a ConfigMap, name) may be one meshjob edits or
/// reports on: what the quick path must not skip. Groups are not checked here.
pub(crate) fn may_matter(kinds: &Kinds, kind: &str, name: Option<&str>) -> bool {
    if kinds.has_kind(kind) || matches!(kind, "List" | "ResourceList") {
        return true;
    }
    let config_kind = |m: &&crate::mesh::Mesh| m.config_kinds.iter().any(|c| c.kind == kind);
    if !crate::mesh::ALL.iter().any(config_kind) {
        return false;
    }
    kind != "ConfigMap"
        || name.is_none_or(|n| crate::mesh::ALL.iter().any(|m| (m.is_config_map_name)(n)))
}

/// The result of one piece (or of a whole text). Offsets are in the piece.
#[derive(Default)]
struct Part {
    /// The rewritten piece, when it changed.
    out: Option<String>,
    findings: Vec<Finding>,
    fatal: Option<Finding>,
    /// Where its first edit is.
    first_edit: Option<usize>,
    /// It decided a pod.
    pods: bool,
    /// The namespaces of its pods, when asked for.
    namespaces: Vec<String>,
    /// It holds something meshjob handles.
    handled: bool,
}

/// Parses, plans, splices and verifies one piece of text. `list_namespaces`: list the
/// namespaces of its pods ([`Part::namespaces`]).
fn process_piece(
    text: &str,
    settings: &Settings,
    opts: ProcessOptions<'_>,
    ctx: &RunContext,
    list_namespaces: bool,
) -> Part {
    let fatal = |f: Finding| Part {
        fatal: Some(f),
        ..Part::default()
    };
    let docs = match parse_stream(text) {
        Ok(d) => d,
        Err(e) => {
            return fatal(Finding::error(
                Rule::InvalidYaml,
                e.offset,
                format!(
                    "invalid YAML: {}; meshjob edits only YAML that parses: fix the syntax at \
                     this line and column, then run again",
                    e.message
                ),
            ));
        }
    };
    let mut edits: Vec<Edit> = Vec::new();
    let mut findings = Vec::new();
    // The editors, whose intended values are built only once something is to be verified.
    let mut editors = Vec::with_capacity(docs.len());
    let mut pods = false;
    let mut handled = false;
    let mut namespaces = Vec::new();
    for doc in docs.iter().filter(|_| list_namespaces) {
        for t in crate::locate::locate(&doc.root, &settings.kinds).pods {
            if !t.object.namespace.is_empty() && !namespaces.contains(&t.object.namespace) {
                namespaces.push(t.object.namespace.clone());
            }
        }
    }
    for doc in &docs {
        let mut p = plan::plan_doc_in(text, doc, settings, opts.force_mesh, ctx);
        pods |= p.pods > 0;
        handled |= p.handled;
        // The lines of the document's content, from its first node's line to its last
        // node's line end: the comments around it belong to the stream, and where the
        // stream is cut into documents does not change them.
        let from = text[..doc.root.props_start]
            .rfind('\n')
            .map_or(0, |i| i + 1);
        let to = text[doc.root.end..]
            .find('\n')
            .map_or(text.len(), |i| doc.root.end + i + 1);
        // And the blank lines after it, where an entry appended at the end lands.
        let rest = &text[to..];
        let to = to + rest.len() - rest.trim_start_matches([' ', '\t', '\r', '\n']).len();
        if !p.editor.edits().is_empty()
            && let Some(at) = lone_cr(&text.as_bytes()[from..to])
        {
            return fatal(Finding::error(
                Rule::LoneCarriageReturn,
                from + at,
                "this document has a line break written as a lone CR (\\r without \\n), which \
                 meshjob does not edit around: convert the file's line breaks to LF or CRLF, \
                 then run again",
            ));
        }
        if !p.editor.edits().is_empty()
            && let Some(at) = inner_bom(text, from..to)
        {
            return fatal(Finding::error(
                Rule::InnerByteOrderMark,
                at,
                "this document holds a byte order mark (U+FEFF) past its start, which YAML \
                 allows only at the start of a document or inside a quoted scalar, and which \
                 meshjob does not edit around: remove it (inside quotes, write it as \\uFEFF), \
                 then run again",
            ));
        }
        // `select` / `ignore`: what is reported, never what is planned (a refusal of an
        // ignored rule has already dropped its pod's edits).
        findings.extend(
            p.findings
                .into_iter()
                .filter(|f| settings.rules.shows(f.rule)),
        );
        let edited = !p.editor.edits().is_empty();
        edits.append(&mut p.editor.take_edits());
        editors.push((edited, p.editor));
    }
    if edits.is_empty() {
        return Part {
            findings,
            pods,
            namespaces,
            handled,
            ..Part::default()
        };
    }
    let first_edit = edits.iter().map(|e| e.start).min();
    let intended: Vec<apply::Intended> = (editors.iter_mut())
        .map(|(edited, ed)| apply::Intended {
            edited: *edited,
            value: ed.take_intended(),
        })
        .collect();
    match apply::apply(text, &docs, &edits, &intended) {
        Ok(out) => Part {
            out: (out != text).then_some(out),
            findings,
            fatal: None,
            first_edit,
            pods,
            namespaces,
            handled,
        },
        Err(e) => Part {
            first_edit,
            pods,
            ..fatal(Finding::error(
                Rule::Internal,
                e.source_offset(&edits),
                format!("{e}; nothing written"),
            ))
        },
    }
}

/// Where `text[range]`, the lines of a document's content, holds a byte order mark other
/// than one at their start (where YAML allows one, and which the editor steps over, see
/// `Editor::col`). The editor lays out the lines it adds by byte columns, and the parser
/// reads a line that begins with a mark further on as if the mark were not there; a mark
/// elsewhere in a line is in a scalar (allowed inside quotes) or an error of the parser.
fn inner_bom(text: &str, range: Range<usize>) -> Option<usize> {
    const BOM: &[u8] = "\u{feff}".as_bytes();
    let start = range.start;
    memchr::memmem::find_iter(&text.as_bytes()[range], BOM)
        .map(|i| start + i)
        .find(|&at| at != start)
}

/// Keeps only the first of each note that is said once (the drain interaction, the
/// versions that would decide the strategy).
pub fn once_per_text(findings: &mut Vec<Finding>) {
    let mut said = crate::verdict::Verdict::default();
    findings.retain(|f| said.first(f));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::Kinds;

    #[test]
    fn one_table_of_kinds() {
        let k = Kinds::builtin();
        for kind in [
            "Job",
            "CronJob",
            "Pod",
            "Workflow",
            "PyTorchJob",
            "Experiment",
            "List",
            "ResourceList",
            "IstioOperator",
            "Istio",
        ] {
            assert!(may_matter(k, kind, Some("x")), "{kind}");
        }
        assert!(may_matter(k, "IstioRevision", None));
        assert!(may_matter(k, "ConfigMap", Some("istio-1-22")));
        assert!(may_matter(k, "ConfigMap", None));
        assert!(!may_matter(k, "ConfigMap", Some("app")));
        for kind in [
            "Deployment",
            "StatefulSet",
            "DaemonSet",
            "Service",
            "Task",
            "RayCluster",
        ] {
            assert!(!may_matter(k, kind, None), "{kind}");
        }
    }

    #[test]
    fn what_a_text_holds_that_meshjob_handles() {
        let job = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: a}\nspec:\n  template:\n    \
                   spec:\n      restartPolicy: Never\n      containers:\n      - name: a\n        \
                   image: x\n        command: [a]\n";
        let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec:\n  \
                          template:\n    spec:\n      containers:\n      - {name: d, image: x}\n";
        let server = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  restartPolicy: \
                      Always\n  containers:\n  - {name: p, image: x}\n";
        let operator = "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nmetadata: \
                        {name: o}\nspec:\n  meshConfig: {}\n";
        let untyped = "defaultConfig: {}\nsomething: else\n";
        let handled = |text: &str, force_mesh: bool| {
            let settings = Settings::default();
            let opts = ProcessOptions {
                force_mesh,
                namespaces: None,
            };
            let all = 0..text.len();
            let whole = std::slice::from_ref(&all);
            let ctx = RunContext::default();
            let by = |quick| {
                let p = process_pieces(text, whole, &settings, opts, &ctx, Growth::None, quick);
                p.handled
            };
            assert_eq!(by(true), by(false), "{text}");
            by(true)
        };
        assert!(handled(job, false));
        assert!(handled(&format!("{deployment}---\n{job}"), false));
        assert!(handled(operator, false));
        assert!(!handled("", false));
        assert!(!handled(deployment, false));
        assert!(!handled(server, false));
        assert!(!handled(
            "apiVersion: v1\nkind: Service\nmetadata: {name: s}\n",
            false
        ));
        assert!(handled(untyped, true));
    }
}
