//! The quick path (`split::pieces` and `quick::head`) against the full parse.
//!
//! `run::edit_text` cuts a stream into documents and passes the ones that cannot be targets
//! through unparsed. That is only correct when
//! - whatever the scanner accepts is valid YAML, with the apiVersion, kind and name it read;
//! - the outcome (text, findings, fatal error) equals that of parsing the whole stream.
//!
//! Both are checked on the YAML test suite and the corpus in `../shared/` (skipped loudly
//! when absent), on this repository's `testdata/`, on one large stream made of all of them
//! (which takes the multi-threaded path), and on single-byte mutations of the corpus. The
//! scanner is also held to the one it replaced (`quick_path/previous.rs`): whatever that one
//! read, it reads the same, and reading a whole text's pieces in order with one
//! [`QuickScanner`] gives each piece's answer alone.

mod common;
#[path = "quick_path/previous.rs"]
mod previous;

use common::yaml_texts as inputs;

use meshjob::Rule;
use meshjob::Settings;
use meshjob::{self as run, EditOptions};
use meshjob::{QuickScanner, parse_stream, quick_head, split_pieces};

/// The scanner's answer for every piece must be sound: valid YAML, and the same identity the
/// parser sees.
fn check_head(label: &str, text: &str, failures: &mut Vec<String>) -> usize {
    let pieces = split_pieces(text);
    let mut accepted = 0;
    for r in pieces {
        let piece = &text[r.clone()];
        let Some(head) = quick_head(piece) else {
            continue;
        };
        accepted += 1;
        let docs = match parse_stream(piece) {
            Ok(d) => d,
            Err(e) => {
                failures.push(format!(
                    "{label} @{}: the scanner accepted YAML that does not parse ({}): {piece:?}",
                    r.start, e.message
                ));
                continue;
            }
        };
        // A document of comments only parses to nothing.
        if docs.len() > 1 || docs.is_empty() && (head.api_version, head.kind) != (None, None) {
            failures.push(format!(
                "{label} @{}: the scanner accepted {} documents",
                r.start,
                docs.len()
            ));
            continue;
        }
        let Some(doc) = docs.first() else {
            continue;
        };
        let root = &doc.root;
        let name = root.get("metadata").and_then(|m| m.str("name"));
        let seen = (root.str("apiVersion"), root.str("kind"), name);
        let read = (head.api_version, head.kind, head.name);
        // An opaque head leaves the identity to the parser; a plain one must agree.
        if !head.opaque && read != seen {
            failures.push(format!(
                "{label} @{}: the scanner read {read:?}, the parser {seen:?}",
                r.start
            ));
        }
    }
    accepted
}

/// Documents the previous scanner read that the new one does not, and the other way.
#[derive(Default)]
struct Reach {
    both: usize,
    narrowed: Vec<String>,
    widened: usize,
}

type Key<'a> = (Option<&'a str>, Option<&'a str>, Option<&'a str>, bool);

fn key<'a>(h: &meshjob::QuickHead<'a>) -> Key<'a> {
    (h.api_version, h.kind, h.name, h.opaque)
}

/// Every piece of `text`, read with one scanner over the text in order, alone, and by the
/// previous scanner: the first two must agree exactly; where the previous one reads a
/// piece, the new one must read the same.
fn check_agreement(label: &str, text: &str, reach: &mut Reach, failures: &mut Vec<String>) {
    let mut scanner = QuickScanner::new(text);
    for r in split_pieces(text) {
        let piece = &text[r.clone()];
        let alone = quick_head(piece);
        let in_text = scanner.head(r.clone());
        if in_text.as_ref().map(key) != alone.as_ref().map(key) {
            failures.push(format!(
                "{label} @{}: read in its text {:?}, alone {:?}: {piece:?}",
                r.start,
                in_text.as_ref().map(key),
                alone.as_ref().map(key)
            ));
        }
        let before = previous::head(piece).map(|h| (h.api_version, h.kind, h.name, h.opaque));
        match (before, alone.as_ref().map(key)) {
            (Some(b), Some(a)) if a == b => reach.both += 1,
            (Some(b), a) => reach.narrowed.push(format!(
                "{label} @{}: the previous scanner read {b:?}, this one {a:?}: {piece:?}",
                r.start
            )),
            (None, Some(_)) => reach.widened += 1,
            (None, None) => {}
        }
    }
}

/// The quick path must give exactly the outcome of the full parse.
fn check_outcome(label: &str, text: &str, failures: &mut Vec<String>) {
    let settings = Settings::default();
    for force_mesh in [false, true] {
        let opts = EditOptions {
            force_mesh,
            ..EditOptions::default()
        };
        let quick = run::edit_text_with(text, &settings, opts);
        let full = run::edit_whole(text, &settings, opts);
        // An internal error (meshjob's own edit failing its verification) is a bug whatever
        // its text; the whole-text run finds it in the whole edited stream, the streaming run
        // in the first document that fails, so only the kind is compared. Every other
        // error must be the same, at the same place.
        let fatal = |o: &run::Outcome| {
            o.fatal.as_ref().map(|f| match f.rule {
                Rule::Internal => (0, String::from("internal error")),
                _ => (f.offset, f.message.clone()),
            })
        };
        let same = quick.text == full.text
            && quick.findings == full.findings
            && fatal(&quick) == fatal(&full);
        if !same {
            failures.push(format!(
                "{label} (force_mesh={force_mesh}): quick and full outcomes differ: quick \
                 fatal {:?}, full fatal {:?}, texts equal {}, findings {} vs {}",
                quick.fatal.map(|f| f.message),
                full.fatal.map(|f| f.message),
                quick.text == full.text,
                quick.findings.len(),
                full.findings.len()
            ));
        }
    }
}

fn report(what: &str, failures: &[String]) {
    if !failures.is_empty() {
        let shown: Vec<&str> = failures.iter().take(20).map(String::as_str).collect();
        panic!(
            "{what}: {} failures, the first ones:\n{}",
            failures.len(),
            shown.join("\n")
        );
    }
}

#[test]
fn scanner_accepts_only_what_parses_to_the_same_identity() {
    let mut failures = Vec::new();
    let inputs = inputs();
    let mut accepted = 0;
    let mut reach = Reach::default();
    for (label, text) in &inputs {
        accepted += check_head(label, text, &mut failures);
        check_agreement(label, text, &mut reach, &mut failures);
    }
    eprintln!(
        "quick scanner: {} inputs, {accepted} documents accepted",
        inputs.len()
    );
    assert!(accepted >= 50, "the scanner should read ordinary manifests");
    report("scanner soundness", &failures);
    report_reach("inputs", &reach);
}

/// Fails when the new scanner reads fewer documents than the previous one; says how many
/// more it reads.
fn report_reach(what: &str, reach: &Reach) {
    eprintln!(
        "quick scanner, {what}: {} documents read by both, {} by the new one only",
        reach.both, reach.widened
    );
    report(
        &format!("{what}: the previous scanner's reach"),
        &reach.narrowed,
    );
}

#[test]
fn quick_outcome_equals_the_full_parse() {
    let mut failures = Vec::new();
    for (label, text) in &inputs() {
        check_outcome(label, text, &mut failures);
    }
    report("quick path", &failures);
}

#[test]
fn a_large_stream_split_between_threads_equals_the_full_parse() {
    // Every valid input without directives, `...` markers or a byte order mark past its
    // first byte (joined by `---` lines, those would make the stream invalid), one after
    // the other, repeated until the stream is large enough for several threads.
    let mut big = String::new();
    let marker = |l: &str| {
        let l = l.trim_start_matches('\u{feff}');
        l.starts_with('%') || l == "..." || l.starts_with("... ") || l.starts_with("...\r")
    };
    let parts: Vec<String> = inputs()
        .into_iter()
        .map(|(_, t)| t)
        .filter(|t| {
            !t.split('\n').any(marker)
                && !t.trim_start_matches('\u{feff}').contains('\u{feff}')
                && run::edit_whole(t, &Settings::default(), EditOptions::default())
                    .fatal
                    .is_none()
        })
        .collect();
    while big.len() < 1 << 20 {
        for t in &parts {
            if !big.is_empty() {
                big.push_str("---\n");
            }
            // A BOM may only start the stream.
            big.push_str(t.trim_start_matches('\u{feff}'));
            if !big.ends_with('\n') {
                big.push('\n');
            }
        }
    }
    let mut failures = Vec::new();
    check_outcome("the concatenated stream", &big, &mut failures);
    report("large stream", &failures);
    let out = run::edit_text(&big, &Settings::default());
    assert!(out.fatal.is_none(), "{:?}", out.fatal);
    assert!(out.text != big, "the stream holds targets");
}

#[test]
fn mutated_documents_never_fool_the_scanner() {
    const INSERTS: &[&str] = &[
        " ", ":", "-", "#", "'", "\"", "\n", "  ", "[", "]", "{", "|", ">", "&", "*", "!", "\t",
        "? ", ": ", "- ", "---\n", "\r", "%", ",", "\u{4}", "\u{7f}", "\u{85}", "\u{feff}",
        "\u{2028}", "\u{fffe}",
    ];
    let mut failures = Vec::new();
    let mut reach = Reach::default();
    let mut tried = 0;
    for (label, text) in inputs().iter().filter(|(_, t)| t.len() < 4000) {
        let pieces = split_pieces(text);
        for r in pieces {
            let piece = &text[r];
            if quick_head(piece).is_none() {
                continue;
            }
            // A handful of positions per document, spread over it.
            let step = (piece.len() / 7).max(1);
            for (n, at) in (0..piece.len()).step_by(step).enumerate() {
                if !piece.is_char_boundary(at) {
                    continue;
                }
                let ins = INSERTS[n % INSERTS.len()];
                let mut m = String::with_capacity(piece.len() + ins.len());
                m.push_str(&piece[..at]);
                m.push_str(ins);
                m.push_str(&piece[at..]);
                tried += 1;
                let what = format!("{label} +{ins:?}@{at}");
                check_head(&what, &m, &mut failures);
                check_agreement(&what, &m, &mut reach, &mut failures);
                let next = piece[at..].chars().next().map_or(0, char::len_utf8);
                let deleted = format!("{}{}", &piece[..at], &piece[at + next..]);
                tried += 1;
                let what = format!("{label} -@{at}");
                check_head(&what, &deleted, &mut failures);
                check_agreement(&what, &deleted, &mut reach, &mut failures);
            }
        }
    }
    eprintln!("quick scanner: {tried} mutated documents");
    report("mutations", &failures);
    report_reach("mutations", &reach);
}

/// The scanner reads eight bytes at a time where eight are left: every document cut short
/// near its end (where the last words are short), at places spread over it, and written
/// with CRLF line breaks or a tab, must still be read soundly.
#[test]
fn documents_cut_short_or_rewritten_never_fool_the_scanner() {
    let mut failures = Vec::new();
    let mut reach = Reach::default();
    let mut tried = 0;
    for (label, text) in inputs().iter().filter(|(_, t)| t.len() < 4000) {
        for r in split_pieces(text) {
            let piece = &text[r];
            if quick_head(piece).is_none() {
                continue;
            }
            let step = (piece.len() / 11).max(1);
            let near_end = piece.len().saturating_sub(17)..piece.len();
            for at in (0..piece.len()).step_by(step).chain(near_end) {
                if piece.is_char_boundary(at) {
                    tried += 1;
                    let what = format!("{label} ..{at}");
                    check_head(&what, &piece[..at], &mut failures);
                    check_agreement(&what, &piece[..at], &mut reach, &mut failures);
                }
            }
            for (what, from, to) in [("crlf", "\n", "\r\n"), ("tab", ": ", ":\t")] {
                tried += 1;
                let m = piece.replace(from, to);
                let what = format!("{label} {what}");
                check_head(&what, &m, &mut failures);
                check_agreement(&what, &m, &mut reach, &mut failures);
            }
        }
    }
    eprintln!("quick scanner: {tried} cut or rewritten documents");
    report("cut or rewritten", &failures);
    report_reach("cut or rewritten", &reach);
}

/// Every class of character YAML restricts, in every kind of place a document that cannot be
/// a target may hold it: the quick path must reject exactly what the parser rejects, so the
/// outcome never depends on which path read the document.
#[test]
fn every_character_class_gets_the_same_outcome_on_both_paths() {
    // YAML 1.2 `c-printable` is tab, LF, CR, 0x20-0x7E, NEL, 0xA0-0xD7FF, 0xE000-0xFFFD and
    // 0x10000 and above; a BOM is allowed only at a document's start. Surrogates cannot occur
    // in a Rust string.
    let mut chars: Vec<char> = (0u8..0x20).map(char::from).collect();
    chars.extend([
        '\u{7f}',     // DEL
        '\u{80}',     // C1, first
        '\u{85}',     // NEL
        '\u{9f}',     // C1, last
        '\u{a0}',     // no-break space, the first printable after C1
        '\u{feff}',   // BOM, in the middle
        '\u{fffe}',   // noncharacters
        '\u{ffff}',   //
        '\u{2028}',   // line separator
        '\u{2029}',   // paragraph separator
        '\u{e000}',   // private use
        '\u{10ffff}', // the last code point
    ]);
    // `@` marks where the character goes, in a ConfigMap (never a target) beside a Job.
    const PLACES: &[&str] = &[
        "  a: x@y\n",
        "  a: \"x@y\"\n",
        "  a: 'x@y'\n",
        "  a: x # c@\n",
        "# c@\n",
        "  a: |\n    x@y\n",
        "  a: >-\n    @\n",
        "  a@b: x\n",
        "  a: [x, \"@\"]\n",
        "  a: x@\n",
        "@  a: x\n",
        "  @a: x\n",
    ];
    const JOB: &str = "---\napiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\nspec:\n  \
                       template:\n    spec:\n      containers:\n      - name: c\n        image: \
                       i\n        command: [run]\n";
    let mut failures = Vec::new();
    let mut rejected = 0;
    for place in PLACES {
        for &c in &chars {
            let cm = format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n{}",
                place.replace('@', c.encode_utf8(&mut [0; 4]))
            );
            let text = format!("{cm}{JOB}");
            let label = format!("U+{:04X} in {place:?}", c as u32);
            check_head(&label, &text, &mut failures);
            check_outcome(&label, &text, &mut failures);
            let quick = run::edit_text(&text, &Settings::default());
            rejected += usize::from(quick.fatal.is_some());
        }
    }
    eprintln!(
        "character classes: {} cases, {rejected} rejected as invalid YAML",
        PLACES.len() * chars.len()
    );
    // The C0 controls other than tab and line breaks, and DEL, are invalid in every place.
    assert!(rejected >= PLACES.len() * 30, "{rejected}");
    report("character classes", &failures);
}

/// The scanner reads bitmaps of 64 bytes at a time, made once for a whole text, and a
/// batch's pieces in order with one scanner: every accepted document placed at every offset
/// of a block after another document, padded to lengths around multiples of 64 (with and
/// without its last line break), given bytes the bitmaps single out (not ASCII, CR, tab,
/// NUL, DEL) at places spread over it, and documents of many blocks or with a line of many
/// blocks, must be read as the full parse and the previous scanner read them.
#[test]
fn block_edges_and_odd_bytes_never_fool_the_scanner() {
    let mut failures = Vec::new();
    let mut reach = Reach::default();
    let mut tried = 0;
    let mut docs: Vec<String> = Vec::new();
    for (_, text) in inputs().iter().filter(|(_, t)| t.len() < 4000) {
        for r in split_pieces(text) {
            let piece = &text[r];
            if quick_head(piece).is_some() && !piece.starts_with('\u{feff}') {
                docs.push(piece.trim_start_matches("---\n").to_string());
            }
        }
    }
    docs.sort();
    docs.dedup();
    // Large documents and long lines, of many blocks.
    let mut big = String::from("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n");
    for i in 0..400 {
        big.push_str(&format!("  key-{i}: value {i} # c\n"));
    }
    docs.push(big.clone());
    for tail in ["x", "x # c", "x:", "x: y", "x #", "x:y", "'q'", "[a, b]"] {
        let long = "v".repeat(9000);
        docs.push(format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: long\ndata:\n  a: {long}{tail}\n  b: 1\n"
        ));
        docs.push(format!("{big}  z: {long} {tail}\n"));
    }
    let mut check = |what: &str, text: &str| {
        tried += 1;
        check_head(what, text, &mut failures);
        check_agreement(what, text, &mut reach, &mut failures);
    };
    for (n, doc) in docs.iter().enumerate() {
        // At every offset of a block, after a document.
        let offsets: Vec<usize> = if n % 4 == 0 {
            (0..64).collect()
        } else {
            vec![n % 64]
        };
        for k in offsets {
            let text = format!("a: {}\n---\n{doc}---\nb: 1\n", "x".repeat(k));
            check(&format!("doc {n} after {k}"), &text);
        }
        // Lengths just under, at and over multiples of 64, with the last line break and
        // without.
        let base = doc.trim_end_matches('\n');
        for target in [64, 128, 192, 256, 512, 4096] {
            for delta in [-2i64, -1, 0, 1, 2] {
                let want = target as i64 + delta;
                let pad = want - base.len() as i64 - 3;
                if pad < 0 {
                    continue;
                }
                let padded = format!("{base}\n#{}", "c".repeat(pad as usize));
                check(&format!("doc {n} to {want}"), &padded);
                check(
                    &format!("doc {n} to {want}, broken"),
                    &format!("{padded}\n"),
                );
                let no_comment = format!("{base}{}", " ".repeat(pad as usize + 2));
                check(&format!("doc {n} spaced to {want}"), &no_comment);
            }
        }
        // Bytes the bitmaps single out, spread over the document.
        if n % 3 == 0 {
            let step = (doc.len() / 9).max(1);
            for (j, at) in (0..doc.len()).step_by(step).enumerate() {
                if !doc.is_char_boundary(at) {
                    continue;
                }
                for ins in ["\u{e9}", "\r", "\t", "\0", "\u{7f}", "\r\n", "\u{85}"] {
                    let m = format!("{}{ins}{}", &doc[..at], &doc[at..]);
                    check(&format!("doc {n} +{ins:?}@{at} ({j})"), &m);
                    let text = format!("a: {}\n---\n{m}", "y".repeat(j * 7));
                    check(&format!("doc {n} +{ins:?}@{at} after {}", j * 7), &text);
                }
            }
        }
    }
    eprintln!("quick scanner: {tried} texts at block edges or with odd bytes");
    report("block edges and odd bytes", &failures);
    report_reach("block edges and odd bytes", &reach);
}
