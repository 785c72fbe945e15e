//! One text's outcome, through the same engine as a file or stdin (`stream`), and the
//! single-threaded reference it is held to (`pipeline::edit_whole`).

pub use crate::pipeline::{
    Context, EditOptions, Outcome, Pieces, edit_pieces, edit_whole, once_per_text,
};

use crate::config::Settings;
use crate::decide::RunContext;
use crate::finding::{Finding, Rule};

/// Edits one YAML stream in memory: its outcome.
pub fn edit_text(text: &str, settings: &Settings) -> Outcome {
    edit_text_with(text, settings, EditOptions::default())
}

/// Edits one YAML stream in memory, with per-file options.
///
/// The stream goes through the same engine as a file or stdin (`stream::edit_stream`): it is cut
/// into documents at their `---` lines (`split::pieces`), and each document is read by the
/// quick scanner first (`quick::head`): one whose kind can never be a target is passed
/// through without a full parse. Every other document goes through the whole pipeline on its
/// own. Large streams are shared between threads in batches of documents, put back in order,
/// so the outcome never depends on the number of threads. A fatal error is the one the whole
/// stream's parse reports.
pub fn edit_text_with(text: &str, settings: &Settings, opts: EditOptions<'_>) -> Outcome {
    let mut sink = Collect {
        text,
        out: None,
        findings: Vec::new(),
    };
    // The text is in memory already: no per-document limit (that guards the inputs).
    let reader =
        crate::stream::Reader::with_sizes(text.as_bytes(), crate::stream::BATCH_BYTES, usize::MAX);
    let ctx = RunContext::of_stream(text, &crate::yaml::split::pieces(text), opts.namespaces);
    let ns = crate::stream::Namespaces::Whole(&ctx);
    match crate::stream::edit_reader(reader, settings, opts, ns, true, &mut sink) {
        Ok(()) => {
            once_per_text(&mut sink.findings);
            Outcome {
                // Pieces of a text, in order: text again.
                text: match sink.out.map(String::from_utf8) {
                    Some(Ok(out)) => out,
                    Some(Err(e)) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
                    None => text.to_string(),
                },
                findings: sink.findings,
                fatal: None,
            }
        }
        // A document refused for a lone CR or a byte order mark (or one meshjob fails on) is
        // met where the stream reaches it, which can be before a syntax error further on;
        // the whole text's parse reports that error first, so a text in memory says what
        // the reference says.
        Err(crate::stream::Stop::Failed(f))
            if matches!(
                f.finding.rule,
                Rule::LoneCarriageReturn | Rule::InnerByteOrderMark | Rule::Internal
            ) && crate::yaml::tree::parse_stream(text).is_err() =>
        {
            edit_whole(text, settings, opts)
        }
        Err(crate::stream::Stop::Failed(f)) => Outcome::fatal(text, f.finding),
        // A text in memory cannot fail to be read, and `Collect` takes every batch.
        Err(crate::stream::Stop::Read(e)) => {
            Outcome::fatal(text, Finding::error(Rule::Internal, 0, e.to_string()))
        }
        Err(crate::stream::Stop::Sink(e)) => {
            Outcome::fatal(text, Finding::error(Rule::Internal, 0, e.to_string()))
        }
    }
}

/// Gathers a stream's outcome as one text.
struct Collect<'a> {
    text: &'a str,
    /// The output so far, from the first batch that changed on.
    out: Option<Vec<u8>>,
    findings: Vec<Finding>,
}

impl crate::stream::Sink for Collect<'_> {
    fn batch(&mut self, done: &crate::stream::Done) -> std::io::Result<()> {
        let base = done.batch.offset as usize;
        self.findings.extend(done.result.findings.iter().cloned());
        let out = match &mut self.out {
            Some(out) => out,
            None if done.changed() => self.out.insert(self.text.as_bytes()[..base].to_vec()),
            None => return Ok(()),
        };
        let Ok(()) = done.write_into(out);
        Ok(())
    }
}
