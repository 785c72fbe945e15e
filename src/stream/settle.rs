//! The first problem of a stream, reported as reading the whole stream would report it.

use super::late::Start;
use super::{Batch, MAX_DOCUMENT_BYTES, Reader};
use crate::finding::{Finding, Rule};
use std::io::Read;

/// What stopped a batch.
#[derive(Clone, Debug)]
pub(crate) enum Cause {
    /// Its bytes are not text (a NUL byte, or not UTF-8): offset in the batch, message.
    Decode(usize, String),
    /// Piece `k` of the batch could not be edited; the finding's offset is in the stream.
    Piece(usize, Finding),
}

/// The first problem of a stream, as the whole stream read at once would report it.
#[derive(Clone, Debug)]
pub(crate) struct Failure {
    /// 1-based line and column.
    pub line: usize,
    pub col: usize,
    /// The finding, its offset in the stream.
    pub finding: Finding,
    /// The bytes were not text (NUL, not UTF-8), rather than text that could not be processed.
    pub decode: bool,
    /// The first edit of the text the error was found in, when it has edits (stream offset).
    pub window_first_edit: Option<u64>,
}

/// 1-based line and column of `at` in a batch that starts on line `first` (0-based):
/// columns count characters, each byte of a broken UTF-8 sequence as one.
pub(crate) fn line_col(first: u64, bytes: &[u8], at: usize) -> (usize, usize) {
    let (line, col) = crate::yaml::text::line_col_bytes(bytes, at);
    (first as usize + line, col)
}

/// Edits a text whole, the text starting at `Start` in the stream: its fatal error and its
/// first edit, their offsets in the stream.
pub(crate) type Reference<'a> = dyn Fn(&str, Start) -> (Option<Finding>, Option<usize>) + 'a;

/// A window of pieces from the one that failed on, grown until the whole-stream reference
/// puts its error before the window's last piece.
struct Window {
    text: String,
    /// Start of the last piece in `text`.
    last: usize,
    offset: u64,
    line: u64,
    found: Option<Finding>,
    /// The first edit of the window's text, from the last run (in the stream).
    first_edit: Option<usize>,
    closed: bool,
}

impl Window {
    fn push(&mut self, piece: &str, reference: &Reference<'_>) {
        if self.closed {
            return;
        }
        self.last = self.text.len();
        self.text.push_str(piece);
        let start = Start {
            offset: self.offset,
            line: self.line,
        };
        let (fatal, first_edit) = reference(&self.text, start);
        if let Some(f) = fatal {
            let at = f.offset - self.offset as usize;
            self.closed = at < self.last || self.text.len() > 2 * MAX_DOCUMENT_BYTES;
            self.found = Some(f);
            self.first_edit = first_edit;
        }
    }
}

/// Settles the first problem of a stream with the precedence of reading it whole: a NUL byte
/// anywhere, then the first bytes that are not UTF-8, then the first error of the
/// whole-stream parse (`reference` processes a text whole and gives its fatal error).
///
/// `failing` is the batch that stopped, `cause` why; `after` the batches read after it and
/// already processed, in order; `reader` gives the rest of the stream, which is read to its
/// end. `echo` gets the failing batch's bytes and every later byte of the stream, in order;
/// when it returns false (they cannot be written), nothing more is read, and the problem is
/// the first one found so far.
pub(crate) fn settle<R: Read>(
    failing: Batch,
    cause: Cause,
    after: Vec<Batch>,
    reader: &mut Reader<R>,
    mut echo: impl FnMut(&[u8]) -> bool,
    reference: &Reference<'_>,
    in_memory: bool,
) -> Failure {
    let mut first_utf8: Option<Failure> = None;
    let mut window: Option<Window> = None;
    let decode_failure = |b: &Batch, at: usize, message: String| {
        let (line, col) = line_col(b.line, &b.bytes, at);
        Failure {
            line,
            col,
            finding: Finding::error(Rule::NotText, b.offset as usize + at, message),
            decode: true,
            window_first_edit: None,
        }
    };
    // Looks at one batch: Some when the answer is known (a NUL byte).
    let look = |b: &Batch,
                from_piece: usize,
                window: &mut Option<Window>,
                first_utf8: &mut Option<Failure>|
     -> Option<Failure> {
        // A text in memory is text already: a NUL byte there is the parser's to report.
        if let Some(at) = memchr::memchr(0, &b.bytes).filter(|_| !in_memory) {
            let msg = match crate::source::decode_part(&b.bytes, b.offset) {
                Err((_, m)) => m,
                Ok(_) => String::new(),
            };
            return Some(decode_failure(b, at, msg));
        }
        match std::str::from_utf8(&b.bytes) {
            Err(e) => {
                if first_utf8.is_none() {
                    let msg = match crate::source::decode_part(&b.bytes, b.offset) {
                        Err((_, m)) => m,
                        Ok(_) => String::new(),
                    };
                    *first_utf8 = Some(decode_failure(b, e.valid_up_to(), msg));
                }
            }
            Ok(text) if first_utf8.is_none() => {
                for r in &b.pieces[from_piece.min(b.pieces.len())..] {
                    let w = window.get_or_insert_with(|| Window {
                        text: String::new(),
                        last: 0,
                        offset: b.offset + r.start as u64,
                        line: b.line
                            + memchr::memchr_iter(b'\n', &b.bytes[..r.start]).count() as u64,
                        found: None,
                        first_edit: None,
                        closed: false,
                    });
                    w.push(&text[r.clone()], reference);
                }
            }
            Ok(_) => {}
        }
        None
    };
    let (own_k, own) = match &cause {
        Cause::Decode(at, m) => (usize::MAX, Some(decode_failure(&failing, *at, m.clone()))),
        Cause::Piece(k, _) => (*k, None),
    };
    let mut open = echo(&failing.bytes);
    if let Some(f) = own
        .as_ref()
        .filter(|_| failing.offset == 0 && crate::source::wide_encoding(&failing.bytes).is_some())
    {
        // UTF-16 or UTF-32 is told by the stream's start, before anything else.
        let f = f.clone();
        let mut after = after.into_iter();
        while open {
            let Some(Ok(b)) = after.next().map(Ok).or_else(|| reader.next_batch()) else {
                break;
            };
            open = echo(&b.bytes);
        }
        return f;
    }
    if own.is_some() {
        // The batch is not text: only a NUL byte can come first.
        if let Some(f) = look(&failing, usize::MAX, &mut window, &mut first_utf8) {
            return f;
        }
        first_utf8 = own;
    } else if let Some(f) = look(&failing, own_k, &mut window, &mut first_utf8) {
        return f;
    }
    let mut after = after.into_iter();
    while open {
        let Some(Ok(b)) = after.next().map(Ok).or_else(|| reader.next_batch()) else {
            break;
        };
        open = echo(&b.bytes);
        if let Some(f) = look(&b, 0, &mut window, &mut first_utf8) {
            return f;
        }
    }
    if let Some(f) = first_utf8 {
        return f;
    }
    let piece_fatal = match cause {
        Cause::Piece(_, f) => Some(f),
        Cause::Decode(..) => None,
    };
    let (finding, offset_base, line_base, text, first_edit) = match window {
        Some(Window {
            found: Some(f),
            offset,
            line,
            text,
            first_edit,
            ..
        }) => (f, offset, line, text, first_edit),
        _ => {
            // The window never failed: the piece's own error stands.
            let f = piece_fatal.unwrap_or_else(|| {
                Finding::error(Rule::Internal, failing.offset as usize, "internal error")
            });
            let at = f.offset - failing.offset as usize;
            let (line, col) = line_col(failing.line, &failing.bytes, at);
            return Failure {
                line,
                col,
                finding: f,
                decode: false,
                window_first_edit: None,
            };
        }
    };
    let at = finding.offset - offset_base as usize;
    let (line, col) = line_col(line_base, text.as_bytes(), at);
    Failure {
        line,
        col,
        finding,
        decode: false,
        window_first_edit: first_edit.map(|e| e as u64),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Processes `text` batch by batch the way a host does, settling the first problem; the
    /// problem as (line, col, offset, message), or None.
    fn first_problem(text: &[u8]) -> Option<(usize, usize, usize, String)> {
        let settings = crate::config::Settings::default();
        let opts = crate::pipeline::EditOptions::default();
        let reference = |t: &str, start: Start| {
            let at = start.offset as usize;
            let fatal = crate::pipeline::edit_whole(t, &settings, opts).fatal;
            (fatal.map(|f| f.shifted(at)), None)
        };
        let mut reader = Reader::with_sizes(text, 1, 1 << 20);
        while let Some(b) = reader.next_batch() {
            let b = b.expect("batch");
            let cause = match crate::source::decode_part(&b.bytes, b.offset) {
                Err((at, m)) => Some(Cause::Decode(at, m)),
                Ok(t) => b.pieces.iter().enumerate().find_map(|(k, r)| {
                    let start = Start {
                        offset: b.offset + r.start as u64,
                        line: 0,
                    };
                    reference(&t[r.clone()], start)
                        .0
                        .map(|f| Cause::Piece(k, f))
                }),
            };
            if let Some(cause) = cause {
                let mut echoed: Vec<u8> = Vec::new();
                let start = b.offset as usize;
                let f = settle(
                    b,
                    cause,
                    Vec::new(),
                    &mut reader,
                    |x| {
                        echoed.extend(x);
                        true
                    },
                    &reference,
                    false,
                );
                assert_eq!(echoed, &text[start..], "the rest is echoed");
                return Some((f.line, f.col, f.finding.offset, f.finding.message));
            }
        }
        None
    }

    /// What reading the whole text at once reports.
    fn whole_problem(text: &[u8]) -> Option<(usize, usize, usize, String)> {
        match crate::source::decode(text) {
            Err((at, m)) => {
                let (l, c) = crate::yaml::text::line_col_bytes(text, at);
                Some((l, c, at, m))
            }
            Ok(t) => {
                let settings = crate::config::Settings::default();
                let opts = crate::pipeline::EditOptions::default();
                crate::pipeline::edit_whole(t, &settings, opts)
                    .fatal
                    .map(|f| {
                        let (l, c) = crate::yaml::text::line_col_bytes(text, f.offset);
                        (l, c, f.offset, f.message)
                    })
            }
        }
    }

    #[test]
    fn settled_problems_are_those_of_the_whole_stream() {
        let ok = "a: 1\n---\nb: 2\n";
        let cases: Vec<Vec<u8>> = vec![
            format!("{ok}---\nc: \"x\n---\nd: 1\n---\ne: 2\n").into(),
            format!("{ok}---\nc: \"x\n").into(),
            format!("{ok}---\nc: [x\n---\nd: 1\n").into(),
            format!("{ok}---\nc: [x\n---\nd: {{\n---\ne: 1\n").into(),
            [
                format!("{ok}---\nc: [x\n---\nd: ").as_bytes(),
                b"\xff\n---\ne: 1\n",
            ]
            .concat(),
            [
                format!("{ok}---\nc: [x\n---\nd: ").as_bytes(),
                b"\xff\n---\ne: \0\n",
            ]
            .concat(),
            [format!("{ok}---\nc: ").as_bytes(), b"\xfe\n---\nd: 1\n"].concat(),
            [format!("{ok}---\nc: ").as_bytes(), b"\xfe\n---\nd: \0\n"].concat(),
            format!("{ok}---\nc: {{\n...\n%YAML 1.2\n---\nd: 1\n").into(),
            ok.into(),
        ];
        let first = first_problem(cases[0].as_slice()).expect("an error");
        assert!(first.3.contains("document indicator"), "{first:?}");
        let nul = first_problem(cases[5].as_slice()).expect("an error");
        assert!(nul.3.contains("NUL"), "{nul:?}");
        for text in cases {
            assert_eq!(
                first_problem(&text),
                whole_problem(&text),
                "{}",
                String::from_utf8_lossy(&text)
            );
        }
    }
}
