//! The invariants every input must keep, whatever it is: shared by the property tests, the
//! YAML test suite sweep, the regression cases and the fuzz target (`fuzz/`), so that all of
//! them assert the same thing.
//!
//! For any text: no panic; the outcome is the one of the reference path that parses every
//! document fully (so the quick path never changes it); wherever the subset parser accepts
//! the input or the output, the full parser gives the same tree; on a fatal error the text
//! is returned unchanged and the error points inside it; otherwise the output parses, a
//! second run changes nothing, and the unified diff applied to the input gives the output.

use super::patch;
use meshjob::Settings;
use meshjob::parse_stream;
use meshjob::{self as run, Outcome};

/// Runs `fix` on `input` and checks the invariants. Returns the outcome for further checks.
pub fn check(input: &str) -> Result<Outcome, String> {
    let settings = Settings::default();
    let out = run::edit_text(input, &settings);
    same_as_reference(input, &out, &settings)?;
    subset_agrees(input)?;
    if out.text != input {
        subset_agrees(&out.text)?;
    }
    if let Some(f) = &out.fatal {
        if out.text != input {
            return Err(format!("fatal ({}) but the text was changed", f.message));
        }
        if f.offset > input.len() {
            return Err(format!(
                "fatal error offset {} past the end ({})",
                f.offset,
                input.len()
            ));
        }
        return Ok(out);
    }
    if out.text != input {
        parse_stream(&out.text)
            .map_err(|e| format!("the output does not parse: {} at {}", e.message, e.offset))?;
        let diff = meshjob::unified_diff("input.yaml", input, &out.text);
        let patched =
            patch::apply(input, &diff).map_err(|e| format!("diff does not apply: {e}"))?;
        if patched != out.text {
            return Err("the diff applied to the input does not give the output".into());
        }
        let again = run::edit_text(&out.text, &settings);
        if let Some(f) = &again.fatal {
            return Err(format!("fix on its own output is fatal: {}", f.message));
        }
        if again.text != out.text {
            return Err("fix is not idempotent: a second run changed the output".into());
        }
    }
    Ok(out)
}

/// The quick path (documents that cannot be targets passed through unparsed) must give the
/// outcome of parsing every document: the same text, findings and fatal error.
fn same_as_reference(input: &str, out: &Outcome, settings: &Settings) -> Result<(), String> {
    let full = run::edit_whole(input, settings, run::EditOptions::default());
    let fatal = |o: &Outcome| o.fatal.as_ref().map(|f| (f.offset, f.message.clone()));
    if fatal(out) != fatal(&full) {
        return Err(format!(
            "the quick path's fatal error {:?} differs from the full parse's {:?}",
            fatal(out),
            fatal(&full)
        ));
    }
    if out.text != full.text || out.findings != full.findings {
        return Err("the quick path's output or findings differ from the full parse's".into());
    }
    Ok(())
}

/// Where the subset parser (what `parse_stream` tries first) accepts a text, the full parser
/// must accept it too and give the same tree: checked on the whole text and on each of its
/// documents (`split_pieces`, what the pipeline parses). Debug builds check every text the
/// subset parser accepts on their own; release builds (the fuzzers) rely on this.
pub fn subset_agrees(text: &str) -> Result<(), String> {
    let pieces = meshjob::split_pieces(text);
    let several = pieces.len() > 1;
    let whole = std::iter::once(0..text.len()).filter(|_| several);
    for r in whole.chain(pieces) {
        let piece = &text[r.clone()];
        let Some(fast) = meshjob::parse_subset(piece) else {
            continue;
        };
        let full = meshjob::parse_full(piece).map_err(|e| {
            format!(
                "the subset parser accepted the document at byte {} that the full parser \
                 refuses ({})",
                r.start, e.message
            )
        })?;
        if let Some(d) = meshjob::tree_difference(&fast, &full) {
            return Err(format!(
                "the subset parser differs from the full parser on the document at byte {}: {d}",
                r.start
            ));
        }
    }
    Ok(())
}
