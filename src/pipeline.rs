//! One text's trip through the engine, on one thread: each piece is parsed, located,
//! planned, spliced and verified. `stream` shares pieces between threads and `run` gathers
//! a text's outcome; both go through [`edit_pieces`], whose result ([`Pieces`]) is the one
//! type a piece's outcome travels in to the sink, its offsets absolute in the input.

use crate::config::Settings;
use crate::decide::{Namespaces, RunContext};
use crate::finding::{Finding, Rule};
use crate::kinds::Kinds;
use crate::plan;
use crate::yaml::apply;
use crate::yaml::bytes::lone_cr;
use crate::yaml::edit::Edit;
use crate::yaml::quick;
use crate::yaml::tree::parse_stream;
use std::ops::Range;

/// What became of one text in memory: its rewritten text and its findings.
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
pub struct EditOptions<'a> {
    /// Treat documents without apiVersion/kind as a bare MeshConfig (`--mesh-config`).
    pub force_mesh: bool,
    /// The Namespace documents of the whole run (see `stream::stdin::Stdin::namespaces`); `None`: those of the
    /// text itself.
    pub namespaces: Option<&'a Namespaces>,
}

/// Edits the stream whole, on one thread, parsing every document fully: the reference
/// that the tests hold [`crate::run::edit_text_with`] to.
pub fn edit_whole(text: &str, settings: &Settings, opts: EditOptions<'_>) -> Outcome {
    let all = 0..text.len();
    let whole = std::slice::from_ref(&all);
    let ctx = RunContext::of_stream(text, whole, opts.namespaces);
    let p = edit_pieces(text, 0, whole, settings, opts, &ctx, false);
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
/// appear (`stream::late`), and the command line once for its run.
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

/// What the engine made of some pieces of a text: the one result a piece's outcome travels
/// in, from [`edit_pieces`] to the sink that writes it (`stream::Done` carries it with its
/// batch). Every offset in it is absolute in the input (the stream the text was cut from),
/// set once, where a piece's findings leave the coordinates of its own text
/// ([`edit_pieces`]).
#[derive(Debug, Default)]
pub struct Pieces {
    /// Per piece edited, its rewritten text when it changed.
    pub outs: Vec<Option<String>>,
    pub findings: Vec<Finding>,
    /// The piece that stopped the run (its index), and why; the pieces after it are not
    /// edited.
    pub fatal: Option<(usize, Finding)>,
    /// Where the first edit is.
    pub first_edit: Option<usize>,
    /// A piece holds something meshjob handles (`plan::DocPlan::handled`); a
    /// piece passed through unparsed holds nothing it handles.
    pub handled: bool,
}

/// The context each piece of a text is decided with: what the stream's `Namespace`
/// documents and the documents that say something about versions say. A fixed
/// [`RunContext`] is one; stdin past its read-ahead grows its own as its pieces come
/// (`stream::late`).
pub trait Context {
    /// The context to decide piece `range` of `text` with (`head`: what the quick scanner
    /// read of it, when it did); findings about the context itself (a version that
    /// disagrees with an earlier one) go to `out`, their offsets absolute in the input.
    fn before(
        &mut self,
        text: &str,
        range: Range<usize>,
        head: Option<&quick::Head<'_>>,
        out: &mut Vec<Finding>,
    ) -> &RunContext;

    /// Whether [`Context::before`] reads the quick scanner's heads, and
    /// [`Context::after`] the namespaces of each piece's pods.
    fn grows(&self) -> bool {
        false
    }

    /// After a piece: whether it decided a pod, and (when [`Context::grows`]) the
    /// `metadata.namespace` of its pods.
    fn after(&mut self, _pods: bool, _namespaces: Vec<String>) {}
}

impl Context for &RunContext {
    fn before(
        &mut self,
        _: &str,
        _: Range<usize>,
        _: Option<&quick::Head<'_>>,
        _: &mut Vec<Finding>,
    ) -> &RunContext {
        self
    }
}

impl<C: Context + ?Sized> Context for &mut C {
    fn before(
        &mut self,
        text: &str,
        range: Range<usize>,
        head: Option<&quick::Head<'_>>,
        out: &mut Vec<Finding>,
    ) -> &RunContext {
        (**self).before(text, range, head, out)
    }

    fn grows(&self) -> bool {
        (**self).grows()
    }

    fn after(&mut self, pods: bool, namespaces: Vec<String>) {
        (**self).after(pods, namespaces);
    }
}

/// Edits the pieces of `text` in order, each with the context `ctx` gives it. `at`: where
/// `text` starts in its input, which every offset of the result counts from. `quick`: pass
/// documents that cannot be targets through unparsed.
#[allow(clippy::too_many_arguments)]
pub fn edit_pieces(
    text: &str,
    at: usize,
    pieces: &[Range<usize>],
    settings: &Settings,
    opts: EditOptions<'_>,
    mut ctx: impl Context,
    quick: bool,
) -> Pieces {
    let mut run = Pieces {
        outs: Vec::with_capacity(pieces.len()),
        ..Pieces::default()
    };
    let grows = ctx.grows();
    // One scanner for the text: it makes the bitmaps of each part of it once.
    let mut scanner = (quick || grows).then(|| quick::Scanner::new(text));
    for (i, p) in pieces.iter().enumerate() {
        let piece = &text[p.clone()];
        let head = scanner.as_mut().and_then(|s| s.head(p.clone()));
        let ctx_here = ctx.before(text, p.clone(), head.as_ref(), &mut run.findings);
        let target = !quick
            || head
                .as_ref()
                .is_none_or(|h| may_be_target_head(h, &settings.kinds));
        let decided = match target {
            true => edit_piece(
                piece,
                i,
                at + p.start,
                settings,
                opts,
                ctx_here,
                grows,
                &mut run,
            ),
            false => {
                run.outs.push(None);
                Decided::default()
            }
        };
        ctx.after(decided.pods, decided.namespaces);
        if run.fatal.is_some() {
            return run;
        }
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

/// What a piece decided, for its [`Context`].
#[derive(Default)]
struct Decided {
    /// It decided a pod.
    pods: bool,
    /// The namespaces of its pods, when asked for.
    namespaces: Vec<String>,
}

/// Parses, plans, splices and verifies piece `i` of a text, `text` (at `base` in the input),
/// into `out`: its findings, rewritten text and first edit, or the failure that stops the
/// run. The one place where offsets in the piece become offsets in the input.
/// `list_namespaces`: list the namespaces of its pods ([`Decided::namespaces`]).
#[allow(clippy::too_many_arguments)]
fn edit_piece(
    text: &str,
    i: usize,
    base: usize,
    settings: &Settings,
    opts: EditOptions<'_>,
    ctx: &RunContext,
    list_namespaces: bool,
    out: &mut Pieces,
) -> Decided {
    let mut decided = Decided::default();
    let mut fatal = |f: Finding| {
        out.fatal = Some((i, f.shifted(base)));
    };
    let docs = match parse_stream(text) {
        Ok(d) => d,
        Err(e) => {
            fatal(Finding::error(
                Rule::InvalidYaml,
                e.offset,
                format!(
                    "invalid YAML: {}; meshjob edits only YAML that parses: fix the syntax at \
                     this line and column, then run again",
                    e.message
                ),
            ));
            return decided;
        }
    };
    let mut edits: Vec<Edit> = Vec::new();
    let mut findings = Vec::new();
    // The editors, whose intended values are built only once something is to be verified.
    let mut editors = Vec::with_capacity(docs.len());
    let mut handled = false;
    for doc in docs.iter().filter(|_| list_namespaces) {
        for t in crate::locate::locate(&doc.root, &settings.kinds).pods {
            let ns = &t.object.namespace;
            if !ns.is_empty() && !decided.namespaces.contains(ns) {
                decided.namespaces.push(ns.clone());
            }
        }
    }
    for doc in &docs {
        let mut p = plan::plan_doc_in(text, doc, settings, opts.force_mesh, ctx);
        decided.pods |= p.pods > 0;
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
            fatal(
                Finding::error(
                    Rule::LoneCarriageReturn,
                    from + at,
                    "this document has a line break written as a lone CR (\\r without \\n), which \
                 meshjob does not edit around: convert the file's line breaks to LF or CRLF, \
                 then run again",
                )
                .with_span(from + at..from + at + 1),
            );
            return decided;
        }
        if !p.editor.edits().is_empty()
            && let Some(at) = inner_bom(text, from..to)
        {
            fatal(
                Finding::error(
                    Rule::InnerByteOrderMark,
                    at,
                    "this document holds a byte order mark (U+FEFF) past its start, which YAML \
                 allows only at the start of a document or inside a quoted scalar, and which \
                 meshjob does not edit around: remove it (inside quotes, write it as \\uFEFF), \
                 then run again",
                )
                .with_span(at..at + '\u{feff}'.len_utf8()),
            );
            return decided;
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
    out.handled |= handled;
    let first_edit = edits.iter().map(|e| e.start).min();
    if out.first_edit.is_none() {
        out.first_edit = first_edit.map(|e| base + e);
    }
    let mut new = None;
    if !edits.is_empty() {
        let intended: Vec<apply::Intended> = (editors.iter_mut())
            .map(|(edited, ed)| apply::Intended {
                edited: *edited,
                value: ed.take_intended(),
            })
            .collect();
        match apply::apply(text, &docs, &edits, &intended) {
            Ok(o) => new = (o != text).then_some(o),
            Err(e) => {
                let at = e.source_offset(&edits);
                out.fatal = Some((
                    i,
                    Finding::error(Rule::Internal, at, format!("{e}; nothing written"))
                        .shifted(base),
                ));
                return decided;
            }
        }
    }
    out.findings
        .extend(findings.into_iter().map(|f| f.shifted(base)));
    out.outs.push(new);
    decided
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
    fn a_pieces_offsets_are_the_inputs() {
        // A Job to edit whose name holds a byte order mark (allowed inside quotes, refused
        // around an edit), as the second piece of a text that starts 100 bytes into its
        // input: the failure's span is the mark's bytes, counted from the input's start.
        let first = "a: 1\n---\n";
        let job = "apiVersion: batch/v1\nkind: Job\nmetadata: {name: \"a\u{feff}b\"}\nspec:\n  \
                   template:\n    metadata:\n      annotations: {sidecar.istio.io/inject: \
                   \"true\"}\n    spec:\n      restartPolicy: Never\n      containers:\n      - \
                   name: a\n        image: x\n        command: [a]\n";
        let text = format!("{first}{job}");
        let pieces = [0..first.len(), first.len()..text.len()];
        let settings = Settings::default();
        let ctx = RunContext::default();
        let opts = EditOptions::default();
        let p = edit_pieces(&text, 100, &pieces, &settings, opts, &ctx, true);
        let (k, f) = p.fatal.expect("the mark is refused");
        assert_eq!((k, f.rule), (1, Rule::InnerByteOrderMark));
        let mark = text.find('\u{feff}').expect("a mark");
        assert_eq!(f.span(), 100 + mark..100 + mark + 3);
        // Without the mark, the findings and the first edit are the input's too.
        let text = text.replace('\u{feff}', "");
        let pieces = [0..first.len(), first.len()..text.len()];
        let p = edit_pieces(&text, 100, &pieces, &settings, opts, &ctx, true);
        assert!(p.fatal.is_none());
        let job_at = 100 + first.len();
        assert!(
            p.first_edit.is_some_and(|e| e > job_at),
            "{:?}",
            p.first_edit
        );
        assert!(!p.findings.is_empty());
        assert!(
            p.findings.iter().all(|f| f.offset >= job_at),
            "{:?}",
            p.findings
        );
        let job = job.replace('\u{feff}', "");
        let all = 0..job.len();
        let whole = std::slice::from_ref(&all);
        let alone = edit_pieces(&job, 0, whole, &settings, opts, &ctx, true);
        let shifted: Vec<usize> = alone.findings.iter().map(|f| f.offset + job_at).collect();
        let got: Vec<usize> = p.findings.iter().map(|f| f.offset).collect();
        assert_eq!(got, shifted);
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
            let opts = EditOptions {
                force_mesh,
                namespaces: None,
            };
            let all = 0..text.len();
            let whole = std::slice::from_ref(&all);
            let ctx = RunContext::default();
            let by = |quick| {
                let p = edit_pieces(text, 0, whole, &settings, opts, &ctx, quick);
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
