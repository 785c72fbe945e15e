//! The quick path (`split::pieces` and `simple::head`) against the full parse.
//!
//! `run::process` cuts a stream into documents and passes the ones that cannot be targets
//! through unparsed. That is only correct when
//! - whatever the scanner accepts is valid YAML, with the apiVersion, kind and name it read;
//! - the outcome (text, findings, fatal error) equals that of parsing the whole stream.
//!
//! Both are checked on the YAML test suite and the corpus in `../shared/` (skipped loudly
//! when absent), on this repository's `testdata/`, on one large stream made of all of them
//! (which takes the multi-threaded path), and on single-byte mutations of the corpus.

mod common;

use common::walk;

use meshjob::Rule;
use meshjob::Settings;
use meshjob::{self as run, ProcessOptions};
use meshjob::{parse_stream, quick_head, split_pieces};

/// (label, text) of every input: testdata always, the shared data when present.
fn inputs() -> Vec<(String, String)> {
    let root = common::root();
    let mut paths = Vec::new();
    walk(
        &root.join("testdata"),
        &|n| n.ends_with(".yaml"),
        &mut paths,
    );
    if let Some(shared) = common::shared_dir() {
        walk(&shared.join("corpus"), &|n| !n.ends_with(".md"), &mut paths);
        walk(
            &shared.join("yaml-test-suite"),
            &|n| n == "in.yaml",
            &mut paths,
        );
    }
    paths
        .into_iter()
        .filter_map(|p| {
            let text = String::from_utf8(std::fs::read(&p).ok()?).ok()?;
            Some((p.display().to_string(), text))
        })
        .collect()
}

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

/// The quick path must give exactly the outcome of the full parse.
fn check_outcome(label: &str, text: &str, failures: &mut Vec<String>) {
    let settings = Settings::default();
    for force_mesh in [false, true] {
        let opts = ProcessOptions {
            force_mesh,
            ..ProcessOptions::default()
        };
        let quick = run::process_with(text, &settings, opts);
        let full = run::process_reference(text, &settings, opts);
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
    for (label, text) in &inputs {
        accepted += check_head(label, text, &mut failures);
    }
    eprintln!(
        "quick scanner: {} inputs, {accepted} documents accepted",
        inputs.len()
    );
    assert!(accepted >= 50, "the scanner should read ordinary manifests");
    report("scanner soundness", &failures);
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
    // Every valid input without directives or `...` markers (joined by `---` lines, those
    // would make the stream invalid), one after the other, repeated until the stream is
    // large enough for several threads.
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
                && run::process_reference(t, &Settings::default(), ProcessOptions::default())
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
    let out = run::process(&big, &Settings::default());
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
                check_head(&format!("{label} +{ins:?}@{at}"), &m, &mut failures);
                let next = piece[at..].chars().next().map_or(0, char::len_utf8);
                let deleted = format!("{}{}", &piece[..at], &piece[at + next..]);
                tried += 1;
                check_head(&format!("{label} -@{at}"), &deleted, &mut failures);
            }
        }
    }
    eprintln!("quick scanner: {tried} mutated documents");
    report("mutations", &failures);
}

/// The scanner reads eight bytes at a time where eight are left: every document cut short
/// near its end (where the last words are short), at places spread over it, and written
/// with CRLF line breaks or a tab, must still be read soundly.
#[test]
fn documents_cut_short_or_rewritten_never_fool_the_scanner() {
    let mut failures = Vec::new();
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
                    check_head(&format!("{label} ..{at}"), &piece[..at], &mut failures);
                }
            }
            for (what, from, to) in [("crlf", "\n", "\r\n"), ("tab", ": ", ":\t")] {
                tried += 1;
                let m = piece.replace(from, to);
                check_head(&format!("{label} {what}"), &m, &mut failures);
            }
        }
    }
    eprintln!("quick scanner: {tried} cut or rewritten documents");
    report("cut or rewritten", &failures);
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
            let quick = run::process(&text, &Settings::default());
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
