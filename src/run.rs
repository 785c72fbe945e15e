//! One text's trip through the pipeline: parse, locate, plan, apply, verify.

use crate::apply::{self, Edit};
use crate::config::Settings;
use crate::decide::{Namespaces, RunContext};
use crate::finding::{Finding, Rule};
use crate::locate;
use crate::plan;
use crate::yaml::tree::parse_stream;
use crate::yaml::{simple, split};
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
pub struct ProcessOptions<'a> {
    /// Treat documents without apiVersion/kind as a bare MeshConfig (`--mesh-config`).
    pub force_mesh: bool,
    /// The Namespace documents of the whole run (see [`namespaces`]); `None`: those of the
    /// text itself.
    pub namespaces: Option<&'a Namespaces>,
}

/// The mesh markers of the Namespace documents in `text` (see [`Namespaces::scan`]).
pub fn namespaces(text: &str) -> Namespaces {
    Namespaces::scan(text)
}

/// Processes one YAML stream.
pub fn process(text: &str, settings: &Settings) -> Outcome {
    process_with(text, settings, ProcessOptions::default())
}

/// Processes one YAML stream with per-file options.
///
/// The stream is cut into documents at their `---` lines (`split::pieces`), and each
/// document is read by the quick scanner first (`simple::head`): one whose kind can never be
/// a target is passed through without a full parse. Every other document goes through the
/// whole pipeline on its own. A stream that cannot be cut (directives, `...` markers) goes
/// through it whole. Large streams are shared between threads in contiguous runs of
/// documents; the results are put back together in order, so the outcome never depends on
/// the number of threads.
pub fn process_with(text: &str, settings: &Settings, opts: ProcessOptions<'_>) -> Outcome {
    let all = 0..text.len();
    let pieces = split::pieces(text);
    let pieces: &[Range<usize>] = pieces.as_deref().unwrap_or(std::slice::from_ref(&all));
    let runs = runs(text.len(), pieces);
    let ctx = &RunContext::of_stream(text, pieces, opts.namespaces);
    let done: Vec<Run> = if runs.len() > 1 {
        std::thread::scope(|s| {
            let handles: Vec<_> = runs
                .iter()
                .map(|r| {
                    s.spawn(move || {
                        process_run(text, &pieces[r.clone()], settings, opts, ctx, true)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        })
    } else {
        vec![process_run(text, pieces, settings, opts, ctx, true)]
    };
    let out = assemble(text, pieces, &runs, done);
    if out.fatal.is_some() && pieces.len() > 1 {
        // Report what the whole stream's parse says: an error near a cut reads better
        // there (an unclosed quote runs into the next `---`), and it is the reference.
        return process_reference(text, settings, opts);
    }
    out
}

/// Processes the stream whole, on one thread, parsing every document fully: the reference
/// that the tests hold [`process_with`] to.
pub fn process_reference(text: &str, settings: &Settings, opts: ProcessOptions<'_>) -> Outcome {
    let (all, first) = (0..text.len(), 0..1);
    let whole = std::slice::from_ref(&all);
    let ctx = RunContext::of_stream(text, whole, opts.namespaces);
    let done = vec![process_run(text, whole, settings, opts, &ctx, false)];
    assemble(text, whole, std::slice::from_ref(&first), done)
}

/// Puts the runs' results back together in order. The first fatal finding wins.
fn assemble(text: &str, pieces: &[Range<usize>], runs: &[Range<usize>], done: Vec<Run>) -> Outcome {
    let mut findings = Vec::new();
    let mut changed = false;
    for run in &done {
        if let Some(f) = &run.fatal {
            return Outcome::fatal(text, f.clone());
        }
        changed |= run.out.is_some();
    }
    // The first run's text grows into the whole output, so the runs' texts are not all
    // copied at once: the output is by far the largest thing held (about 7 KB a container).
    let mut out: Option<String> = None;
    for (run, r) in done.into_iter().zip(runs) {
        findings.extend(run.findings);
        if !changed {
            continue;
        }
        let piece = run.out.unwrap_or_else(|| text[span(pieces, r)].to_string());
        match &mut out {
            None => out = Some(piece),
            Some(o) => o.push_str(&piece),
        }
    }
    once_per_text(&mut findings);
    Outcome {
        text: out.unwrap_or_else(|| text.to_string()),
        findings,
        fatal: None,
    }
}

/// Streams smaller than this are processed on one thread: a thread costs more than it saves.
const PARALLEL_MIN_BYTES: usize = 256 * 1024;

/// Splits the pieces into contiguous runs of about equal bytes, one per thread.
fn runs(len: usize, pieces: &[Range<usize>]) -> Vec<Range<usize>> {
    let threads = if len < PARALLEL_MIN_BYTES || pieces.len() < 2 {
        1
    } else {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(pieces.len())
    };
    let mut out = Vec::with_capacity(threads);
    let mut first = 0;
    for t in 1..threads {
        let goal = len / threads * t;
        let mut end = first + 1;
        while end < pieces.len() && pieces[end].start < goal {
            end += 1;
        }
        if end < pieces.len() {
            out.push(first..end);
            first = end;
        }
    }
    out.push(first..pieces.len());
    out
}

/// The bytes a run of pieces covers.
fn span(pieces: &[Range<usize>], run: &Range<usize>) -> Range<usize> {
    pieces[run.start].start..pieces[run.end - 1].end
}

/// The result of a run of documents. Offsets are in the whole text.
struct Run {
    /// The run's rewritten bytes, when any document in it changed.
    out: Option<String>,
    findings: Vec<Finding>,
    /// The first fatal finding; the run stops there.
    fatal: Option<Finding>,
}

/// Runs the pieces in order. `quick`: pass documents that cannot be targets through unparsed.
fn process_run(
    text: &str,
    pieces: &[Range<usize>],
    settings: &Settings,
    opts: ProcessOptions<'_>,
    ctx: &RunContext,
    quick: bool,
) -> Run {
    let run_start = pieces.first().map_or(0, |p| p.start);
    let mut run = Run {
        out: None,
        findings: Vec::new(),
        fatal: None,
    };
    for p in pieces {
        let piece = &text[p.clone()];
        let part = if !quick || may_be_target(piece) {
            process_piece(piece, settings, opts, ctx)
        } else {
            Part::default()
        };
        let shift = |mut f: Finding| {
            f.offset += p.start;
            f
        };
        if let Some(f) = part.fatal {
            run.fatal = Some(shift(f));
            return run;
        }
        run.findings.extend(part.findings.into_iter().map(shift));
        match (part.out, &mut run.out) {
            (Some(new), Some(out)) => out.push_str(&new),
            (Some(new), None) => {
                let mut out = String::with_capacity(p.start - run_start + new.len());
                out.push_str(&text[run_start..p.start]);
                out.push_str(&new);
                run.out = Some(out);
            }
            (None, Some(out)) => out.push_str(piece),
            (None, None) => {}
        }
    }
    run
}

/// Whether a document must be parsed fully: anything the quick scanner cannot read, every
/// kind that meshjob edits or reports on (`locate::may_matter`), and documents without a
/// kind.
fn may_be_target(doc: &str) -> bool {
    let Some(h) = simple::head(doc) else {
        return true;
    };
    if h.opaque {
        return true;
    }
    match (h.api_version, h.kind) {
        (Some(_), Some(kind)) => locate::may_matter(kind, h.name),
        _ => true,
    }
}

/// The result of one piece (or of a whole text). Offsets are in the piece.
#[derive(Default)]
struct Part {
    /// The rewritten piece, when it changed.
    out: Option<String>,
    findings: Vec<Finding>,
    fatal: Option<Finding>,
}

/// Parses, plans, splices and verifies one piece of text.
fn process_piece(
    text: &str,
    settings: &Settings,
    opts: ProcessOptions<'_>,
    ctx: &RunContext,
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
    let mut intended = Vec::with_capacity(docs.len());
    for doc in &docs {
        let p = plan::plan_doc_in(text, doc, settings, opts.force_mesh, ctx);
        // The lines of the document's content, from its first node's line to its last
        // node's line end: the comments around it belong to the stream, and where the
        // stream is cut into documents does not change them.
        let from = text[..doc.root.props_start]
            .rfind('\n')
            .map_or(0, |i| i + 1);
        let to = text[doc.root.end..]
            .find('\n')
            .map_or(text.len(), |i| doc.root.end + i + 1);
        if !p.editor.edits.is_empty()
            && let Some(at) = lone_cr(&text[from..to])
        {
            return fatal(Finding::error(
                Rule::LoneCarriageReturn,
                from + at,
                "this document has a line break written as a lone CR (\\r without \\n), which \
                 meshjob does not edit around: convert the file's line breaks to LF or CRLF, \
                 then run again",
            ));
        }
        findings.extend(p.findings);
        intended.push(apply::Intended {
            edited: !p.editor.edits.is_empty(),
            value: p.editor.intended,
        });
        edits.extend(p.editor.edits);
    }
    if edits.is_empty() {
        return Part {
            out: None,
            findings,
            fatal: None,
        };
    }
    match apply::apply(text, &docs, &edits, &intended) {
        Ok(out) => Part {
            out: (out != text).then_some(out),
            findings,
            fatal: None,
        },
        Err(e) => fatal(Finding::error(
            Rule::Internal,
            e.source_offset(&edits),
            format!("{e}; nothing written"),
        )),
    }
}

/// The offset of the first CR that is not part of a CRLF. YAML reads it as a line break,
/// but the editor lays out new lines by LF.
fn lone_cr(text: &str) -> Option<usize> {
    let b = text.as_bytes();
    (0..b.len()).find(|&i| b[i] == b'\r' && b.get(i + 1) != Some(&b'\n'))
}

/// Keeps only the first of each note that is said once (the drain interaction, the
/// versions that would decide the strategy).
fn once_per_text(findings: &mut Vec<Finding>) {
    let mut seen: Vec<Rule> = Vec::new();
    findings.retain(|f| {
        if !f.rule.once_per_run() {
            return true;
        }
        if seen.contains(&f.rule) {
            return false;
        }
        seen.push(f.rule);
        true
    });
}
