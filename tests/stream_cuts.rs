//! The stream reader's cuts against the whole-stream parse.
//!
//! `stream::Reader` cuts a stream into pieces as it reads, also where directives (`%` lines)
//! and document-end markers (`...`) are. Processing the pieces one by one must give the
//! outcome of processing the whole stream: the same text and findings; and where the whole
//! stream has a fatal error, the first piece that fails, processed with as many pieces after
//! it as it takes for the error to fall before the last of them, gives the same error at the
//! same offset. Checked on `testdata/`, and on the corpus and the YAML test suite in
//! `../shared/` (skipped loudly when absent).

mod common;

use common::yaml_texts as inputs;

use meshjob::Reader;
use meshjob::RunContext;
use meshjob::Settings;
use meshjob::{self as run, EditOptions, Outcome};
use meshjob::{Finding, Rule};
use std::ops::Range;

/// The reader's pieces, as ranges of the text (every piece its own batch).
fn pieces(text: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    for b in Reader::with_sizes(text.as_bytes(), 1, usize::MAX) {
        let b = b.expect("no limit, no I/O error");
        let base = b.offset as usize;
        out.extend(b.pieces.iter().map(|r| r.start + base..r.end + base));
    }
    out
}

fn shifted(mut f: Finding, by: usize) -> Finding {
    f.offset += by;
    f
}

fn reference(text: &str, opts: EditOptions<'_>) -> Outcome {
    run::edit_whole(text, &Settings::default(), opts)
}

/// What processing piece by piece gives: the text, the findings, or the first fatal error
/// found through the growing window.
fn by_pieces(text: &str, cuts: &[Range<usize>], opts: EditOptions<'_>) -> Outcome {
    // The `Namespace` documents of the whole stream decide, as the engine's first pass does.
    let ctx = RunContext::of_stream(text, cuts, None);
    let mut out = String::new();
    let mut findings = Vec::new();
    for (k, r) in cuts.iter().enumerate() {
        let p = one_piece(&text[r.clone()], &ctx, opts);
        if p.fatal.is_some() {
            return Outcome {
                text: text.to_string(),
                findings: Vec::new(),
                fatal: Some(window_fatal(text, cuts, k, opts)),
            };
        }
        let piece_out = p.outs.into_iter().next().flatten();
        out.push_str(piece_out.as_deref().unwrap_or(&text[r.clone()]));
        findings.extend(p.findings.into_iter().map(|f| shifted(f, r.start)));
    }
    meshjob::once_per_text(&mut findings);
    Outcome {
        text: out,
        findings,
        fatal: None,
    }
}

/// One piece processed alone (fully parsed), with the stream's context.
fn one_piece(piece: &str, ctx: &RunContext, opts: EditOptions<'_>) -> run::Pieces {
    let all = 0..piece.len();
    let settings = Settings::default();
    run::edit_pieces(
        piece,
        0,
        std::slice::from_ref(&all),
        &settings,
        opts,
        ctx,
        false,
    )
}

/// The fatal error of pieces k.. processed together, grown until the error lies before the
/// last piece of the window (or the stream ends).
fn window_fatal(text: &str, cuts: &[Range<usize>], k: usize, opts: EditOptions<'_>) -> Finding {
    let start = cuts[k].start;
    let mut last = k;
    loop {
        let end = cuts[last].end;
        let o = reference(&text[start..end], opts);
        if let Some(f) = o.fatal {
            let f = shifted(f, start);
            if last + 1 == cuts.len() || f.offset < cuts[last].start {
                return f;
            }
        }
        last += 1;
        if last == cuts.len() {
            // The window reached the end without an error before its last piece: the whole
            // rest is the window, and its error is the answer.
            let o = reference(&text[start..], opts);
            return o.fatal.map(|f| shifted(f, start)).unwrap_or_else(|| {
                panic!("piece {k} failed alone, the rest of the stream does not fail")
            });
        }
    }
}

/// Compares the piece-by-piece outcome with the whole stream's; a line in `failures` when
/// they differ.
fn compare(label: &str, text: &str, failures: &mut Vec<String>) {
    let cuts = pieces(text);
    assert_eq!(cuts.first().map(|r| r.start), Some(0), "{label}");
    assert_eq!(cuts.last().map(|r| r.end), Some(text.len()), "{label}");
    assert!(cuts.windows(2).all(|w| w[0].end == w[1].start), "{label}");
    for force_mesh in [false, true] {
        let opts = EditOptions {
            force_mesh,
            namespaces: None,
        };
        let whole = reference(text, opts);
        if whole
            .fatal
            .as_ref()
            .is_some_and(|f| f.message.starts_with("internal error") && cuts.len() > 1)
        {
            // The whole text's editor failed its own verification (an edit at the end of a
            // document, just before a `---` line): nothing to compare the pieces with. The
            // pieces, edited alone, pass theirs; the quick-path tests hold `run::edit_text` to
            // the whole-text outcome on the unmutated inputs.
            continue;
        }
        let parts = by_pieces(text, &cuts, opts);
        // An internal error (a failed verification) is placed at the first edit of the
        // text processed, which here is the piece, not the stream: the engine keeps the
        // stream's first edit for that; this test compares the message only.
        let fatal = |o: &Outcome| {
            o.fatal.as_ref().map(|f| {
                let internal = f.message.starts_with("internal error");
                ((!internal).then_some(f.offset), f.message.clone())
            })
        };
        // A document refused for a lone CR or a byte order mark is refused where the stream
        // reaches it, before a syntax error further on that the whole text's parse reports
        // first: both stop the input with nothing written, and only the message differs.
        let refused_first = matches!(
            (&whole.fatal, &parts.fatal),
            (Some(w), Some(p)) if (matches!(p.rule, Rule::LoneCarriageReturn | Rule::InnerByteOrderMark)
                && p.offset < w.offset)
                // Likewise a piece meshjob fails on (an internal error, exit 2, nothing
                // written) before a syntax error that the whole text's parse reports first;
                // `run::edit_text` reports the syntax error, as the whole parse does.
                || (p.rule == Rule::Internal && w.rule == Rule::InvalidYaml)
        );
        if (fatal(&whole) != fatal(&parts) && !refused_first)
            || (whole.fatal.is_none()
                && (whole.text != parts.text || whole.findings != parts.findings))
        {
            failures.push(format!(
                "{label} (force_mesh={force_mesh}, {} pieces): whole fatal {:?}, pieces fatal \
                 {:?}, texts equal {}, findings {} vs {}",
                cuts.len(),
                fatal(&whole),
                fatal(&parts),
                whole.text == parts.text,
                whole.findings.len(),
                parts.findings.len()
            ));
        }
    }
}

fn report(what: &str, failures: &[String]) {
    if !failures.is_empty() {
        panic!(
            "{what}: {} failures, the first ones:\n{}",
            failures.len(),
            failures
                .iter()
                .take(30)
                .cloned()
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

/// Lines that end documents, open them or come before them, inserted at line starts.
const MARKER_LINES: &[&str] = &[
    "...\n",
    "... # end\n",
    "%YAML 1.2\n",
    "%TAG !e! tag:example.com,2000:\n",
    "---\n",
    "--- |\n",
    "\u{feff}...\n",
    "\u{feff}%YAML 1.2\n",
    "...\n%YAML 1.2\n---\n",
];

#[test]
fn marker_lines_inserted_anywhere_keep_the_outcome() {
    let mut failures = Vec::new();
    let mut tried = 0;
    for (label, text) in inputs().iter().filter(|(_, t)| t.len() < 3000) {
        let starts: Vec<usize> = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .filter(|&i| i < text.len())
            .collect();
        let step = (starts.len() / 5).max(1);
        for (n, &at) in starts.iter().step_by(step).enumerate() {
            let ins = MARKER_LINES[(n + label.len()) % MARKER_LINES.len()];
            let m = format!("{}{ins}{}", &text[..at], &text[at..]);
            tried += 1;
            compare(&format!("{label} +{ins:?}@{at}"), &m, &mut failures);
        }
    }
    eprintln!("stream cuts: {tried} streams with a marker line inserted");
    report("marker lines", &failures);
}

#[test]
fn pieces_processed_one_by_one_equal_the_whole_stream() {
    let mut failures = Vec::new();
    let mut cut_more = 0;
    let inputs = inputs();
    for (label, text) in &inputs {
        compare(label, text, &mut failures);
        let cuts = pieces(text);
        if cuts != meshjob::split_pieces(text) {
            cut_more += 1;
        }
    }
    eprintln!(
        "stream cuts: {} inputs, {cut_more} cut otherwise than split::pieces",
        inputs.len()
    );
    report("pieces", &failures);
}

/// The diff built piece by piece (`output::hunks`) against the whole-text diff, on every
/// input that changes: the same bytes.
#[test]
fn the_diff_built_piece_by_piece_equals_the_whole_text_diff() {
    use meshjob::{Hunks, unified_diff};
    let mut failures = Vec::new();
    let mut changed = 0;
    for (label, text) in &inputs() {
        let cuts = pieces(text);
        let opts = EditOptions::default();
        if reference(text, opts).fatal.is_some() {
            continue;
        }
        let whole_new = by_pieces(text, &cuts, opts).text;
        if whole_new == *text {
            continue;
        }
        changed += 1;
        let mut out = String::new();
        let mut h = Hunks::new(label);
        let ctx = RunContext::of_stream(text, &cuts, None);
        for r in &cuts {
            let piece = &text[r.clone()];
            match one_piece(piece, &ctx, opts)
                .outs
                .into_iter()
                .next()
                .flatten()
            {
                Some(new) => h.change(piece, &new, &mut out),
                None => h.equal(piece, &mut out),
            }
        }
        h.finish(&mut out);
        if out != unified_diff(label, text, &whole_new) {
            failures.push(format!("{label}: the diffs differ"));
        }
    }
    eprintln!("stream diff: {changed} inputs that change");
    assert!(changed >= 20, "testdata has many inputs that change");
    report("diffs", &failures);
}

/// The reader in its own batch size, over every input and over all of them joined into one
/// stream of several batches (each input after a `---` line): the pieces of
/// `split::pieces`, which gives every line to the cutter, wherever the reader skims past
/// lines that cannot cut.
#[test]
fn the_reader_cuts_where_split_does() {
    let inputs = inputs();
    let mut joined = String::new();
    for (_, text) in &inputs {
        joined.push_str("---\n");
        joined.push_str(text);
        if !text.ends_with('\n') {
            joined.push('\n');
        }
    }
    let mut failures = Vec::new();
    for (label, text) in inputs.iter().chain([&("joined".to_string(), joined)]) {
        let mut got = Vec::new();
        for b in Reader::new(text.as_bytes()) {
            let b = b.expect("no I/O error");
            let base = b.offset as usize;
            got.extend(
                (b.pieces.iter())
                    .filter(|r| !r.is_empty() || base == 0)
                    .map(|r| r.start + base..r.end + base),
            );
        }
        if got != meshjob::split_pieces(text) {
            failures.push(label.clone());
        }
    }
    report("reader cuts", &failures);
}
