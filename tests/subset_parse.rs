//! The subset parser (`yaml::subset`) against the full parser (granit-parser and the tree
//! builder).
//!
//! `parse_stream` reads a text in the common subset of YAML without the full parser. That
//! is only correct when the subset parser never accepts a text the full parser refuses, and
//! gives exactly its tree (every node's kind, value, style and span) wherever it accepts.
//! Checked here on every piece (`split::pieces`) of `testdata/`, of the corpus and of the
//! YAML test suite in `../shared/` (skipped loudly when absent), on meshjob's own outputs
//! of them, and on systematic mutations of the accepted pieces: single-byte deletions,
//! insertions of the bytes that change YAML's structure, and indentation changes. It must
//! also accept most manifests and outputs, or it saves nothing.

mod common;

use common::Origin as From;
use meshjob::{Settings, parse_full, parse_subset, split_pieces, tree_difference};

/// (label, text, origin) of each input or document.
type Texts = Vec<(String, String, From)>;

/// (label, text, origin) of every input: testdata always, the shared data when present.
fn inputs() -> Texts {
    common::yaml_inputs()
}

/// Where the subset parser accepts `text`, the full parser must accept it too and give the
/// same tree. Returns whether it accepted.
fn check(label: &str, text: &str, failures: &mut Vec<String>) -> bool {
    let Some(fast) = parse_subset(text) else {
        return false;
    };
    match parse_full(text) {
        Err(e) => failures.push(format!(
            "{label}: the subset parser accepted a text the full parser refuses ({}): {text:?}",
            e.message
        )),
        Ok(full) => {
            if let Some(d) = tree_difference(&fast, &full) {
                failures.push(format!("{label}: {d}: {text:?}"));
            }
        }
    }
    true
}

fn report(failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} differences, the first ones:\n{}",
        failures.len(),
        failures
            .iter()
            .take(10)
            .map(|f| f.chars().take(2000).collect::<String>())
            .collect::<Vec<_>>()
            .join("\n\n")
    );
}

/// Counts of pieces: accepted by the subset parser, and read by the full parser.
#[derive(Default)]
struct Share {
    accepted: usize,
    parsed: usize,
}

impl Share {
    fn add(&mut self, text: &str, accepted: bool) {
        // Only documents with content count: a piece of comments is no manifest.
        if parse_full(text).is_ok_and(|d| !d.is_empty()) {
            self.parsed += 1;
            self.accepted += usize::from(accepted);
        }
    }

    fn percent(&self) -> f64 {
        100.0 * self.accepted as f64 / self.parsed.max(1) as f64
    }
}

/// The pieces of every input, and of meshjob's output of every manifest.
fn pieces_and_outputs() -> (Texts, Texts) {
    let settings = Settings::default();
    let mut pieces = Vec::new();
    let mut outputs = Vec::new();
    for (label, text, from) in inputs() {
        for r in split_pieces(&text) {
            pieces.push((format!("{label} @{}", r.start), text[r].to_string(), from));
        }
        if from != From::Suite {
            let out = meshjob::edit_text(&text, &settings);
            if out.fatal.is_none() && out.text != text {
                for r in split_pieces(&out.text) {
                    let piece = &out.text[r.clone()];
                    if !text.contains(piece) {
                        outputs.push((
                            format!("output of {label} @{}", r.start),
                            piece.to_string(),
                            from,
                        ));
                    }
                }
            }
        }
    }
    (pieces, outputs)
}

#[test]
fn agrees_with_the_full_parser_on_every_piece_and_output() {
    let mut failures = Vec::new();
    let (pieces, outputs) = pieces_and_outputs();
    // Shares of documents accepted: [testdata, corpus, suite], as read and as edited.
    let mut read: [Share; 3] = Default::default();
    let mut edited: [Share; 3] = Default::default();
    let index = |from: &From| *from as usize;
    for (label, piece, from) in &pieces {
        let accepted = check(label, piece, &mut failures);
        read[index(from)].add(piece, accepted);
    }
    for (label, piece, from) in &outputs {
        let accepted = check(label, piece, &mut failures);
        edited[index(from)].add(piece, accepted);
    }
    let [t, c, s] = &read;
    let [te, ce, _] = &edited;
    eprintln!(
        "subset parser accepts: corpus {}/{} documents ({:.1}%), {}/{} edited ({:.1}%); \
         testdata {}/{} ({:.1}%), {}/{} edited ({:.1}%); YAML test suite {}/{} ({:.1}%)",
        c.accepted,
        c.parsed,
        c.percent(),
        ce.accepted,
        ce.parsed,
        ce.percent(),
        t.accepted,
        t.parsed,
        t.percent(),
        te.accepted,
        te.parsed,
        te.percent(),
        s.accepted,
        s.parsed,
        s.percent()
    );
    report(&failures);
    if common::shared_dir().is_some() {
        assert!(
            c.percent() >= 90.0,
            "too few documents of the corpus accepted"
        );
        assert!(
            ce.percent() >= 90.0,
            "too few edited documents of the corpus accepted"
        );
    }
}

/// Texts one edit away from `text`: each byte deleted, each of the bytes that make YAML's
/// structure inserted before it, and each line indented by one more and one fewer space.
/// `stride` > 1 looks at every stride-th offset only.
fn mutations(text: &str, stride: usize, out: &mut Vec<String>) {
    const INSERTS: [&str; 8] = [" ", ":", "#", "-", "'", "\"", "|", "\n"];
    let b = text.as_bytes();
    for at in (0..=b.len()).step_by(stride.max(1)) {
        if !text.is_char_boundary(at) {
            continue;
        }
        if at < b.len() && text.is_char_boundary(at + 1) {
            out.push(format!("{}{}", &text[..at], &text[at + 1..]));
        }
        for ins in INSERTS {
            out.push(format!("{}{ins}{}", &text[..at], &text[at..]));
        }
    }
    let starts = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1));
    for at in starts.filter(|&at| at < b.len()) {
        out.push(format!("{} {}", &text[..at], &text[at..]));
        out.push(format!("{}  {}", &text[..at], &text[at..]));
        if b[at] == b' ' {
            out.push(format!("{}{}", &text[..at], &text[at + 1..]));
        }
    }
}

#[test]
fn agrees_with_the_full_parser_on_mutations() {
    let mut failures = Vec::new();
    let (pieces, outputs) = pieces_and_outputs();
    let mut seeds: Vec<(String, String)> = pieces
        .into_iter()
        .chain(outputs)
        .map(|(label, piece, _)| (label, piece))
        .filter(|(_, piece)| parse_subset(piece).is_some())
        .collect();
    // Every seed the subset parser accepts, from the smallest, within a budget of texts:
    // each mutant it accepts is parsed fully as well, which costs most of the time.
    seeds.sort_by_key(|(_, p)| p.len());
    seeds.dedup_by(|a, b| a.1 == b.1);
    let mut budget: usize = 250_000;
    let (mut tried, mut accepted) = (0, 0);
    let mut variants = Vec::new();
    for (label, seed) in &seeds {
        if budget == 0 {
            break;
        }
        // At most about 3,000 mutants of one seed: large seeds get a stride.
        let stride = (seed.len() * 9 / 3000).max(1);
        variants.clear();
        mutations(seed, stride, &mut variants);
        budget = budget.saturating_sub(variants.len());
        for v in &variants {
            tried += 1;
            accepted += usize::from(check(&format!("mutant of {label}"), v, &mut failures));
        }
        if failures.len() > 20 {
            break;
        }
    }
    eprintln!(
        "subset parser: {} seeds, {tried} mutants, {accepted} accepted",
        seeds.len()
    );
    report(&failures);
}
