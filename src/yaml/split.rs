//! Cheap document boundaries: where a stream can be cut into pieces that parse alone.
//!
//! A line that starts with `---` followed by a space, a tab, a line break or the end of the
//! text starts a new document (YAML 1.2, `c-directives-end`). Such a line cannot be content of
//! any scalar or collection (`c-forbidden`), so cutting there gives pieces that each parse to
//! exactly the documents the whole stream holds, with the same bytes.
//!
//! Directives (`%YAML`, `%TAG`) belong to the document whose `---` follows them: after a `%`
//! line the next `---` is not a cut. A document-end marker (`...`) leaves the parser as at the
//! start of a stream, where directives and bare documents may follow: the cut is after it.
//! [`Cutter`] decides line by line, for whole texts ([`pieces`]) and for the stream reader
//! (`stream::Reader`) alike. `tests/stream_cuts.rs` and `tests/quick_path.rs` hold the pieces
//! to the whole-stream parse.

use super::bytes::{BOM, is_marker, lone_cr};
use super::items::Items;
use std::ops::Range;

/// Whether `line` holds a CR that is not the first byte of a CRLF.
fn has_lone_cr(line: &[u8]) -> bool {
    lone_cr(line).is_some()
}

/// Where a line puts a piece boundary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cut {
    None,
    /// A new piece starts with this line.
    Before,
    /// A new piece starts after this line.
    After,
}

/// Decides, line by line, where a stream can be cut.
#[derive(Clone, Debug, Default)]
pub(crate) struct Cutter {
    /// A `%` line came since the last cut, and no `---` since.
    directives: bool,
    /// Cuts at the items of list documents as well (`items`), for readers of dumps.
    items: Option<Box<Items>>,
}

impl Cutter {
    /// A cutter that also cuts list documents into their items ([`Items`]).
    pub(crate) fn with_items() -> Self {
        Cutter {
            directives: false,
            items: Some(Box::default()),
        }
    }

    /// The item cuts' state, with the tags of the pieces cut so far.
    pub(crate) fn items_mut(&mut self) -> Option<&mut Items> {
        self.items.as_deref_mut()
    }

    /// Whether no `%` line is pending, so that a `---` line cuts before itself, and only
    /// marker lines cut (no item cuts, which need every line).
    pub(crate) fn settled(&self) -> bool {
        !self.directives && self.items.is_none()
    }

    /// [`Cutter::line`] for a line that starts with `---` and holds no CR, when the cutter
    /// is [`settled`](Cutter::settled): the same answer (and no change of state), without
    /// the checks that cannot apply, for the stream reader's fast path.
    pub(crate) fn dashes(&self, line: &[u8]) -> Cut {
        debug_assert!(self.settled() && line.starts_with(b"---") && !line.contains(&b'\r'));
        if is_marker(line, b"---") {
            Cut::Before
        } else {
            Cut::None
        }
    }

    /// The boundary `line` (from its first byte, with or without its line break) makes.
    pub(crate) fn line(&mut self, line: &[u8]) -> Cut {
        let cut = self.document_line(line);
        let Some(items) = self.items.as_deref_mut() else {
            return cut;
        };
        match cut {
            Cut::Before => {
                items.document(items.offset());
                items.skip(line);
            }
            Cut::After => {
                items.skip(line);
                items.document(items.offset());
            }
            Cut::None if has_lone_cr(line) => items.give_up(line),
            Cut::None if items.line(line) => return Cut::Before,
            Cut::None => {}
        }
        cut
    }

    /// The document boundary `line` makes.
    fn document_line(&mut self, line: &[u8]) -> Cut {
        if has_lone_cr(line) {
            // A lone CR is a line break to YAML, so this holds more than one line, and a
            // marker may hide after it. Cut nowhere on it, and let the next `---` not cut
            // either (as after a directive, which may be among the hidden lines): pieces
            // only grow, and a grown piece still parses alone to the same documents.
            self.directives = true;
            return Cut::None;
        }
        // Directives start with `%` in column 0; a BOM may precede one.
        let bare = line.strip_prefix(BOM).unwrap_or(line);
        if bare.first() == Some(&b'%') {
            self.directives = true;
            return Cut::None;
        }
        if is_marker(line, b"---") {
            if std::mem::take(&mut self.directives) {
                return Cut::None;
            }
            return Cut::Before;
        }
        if is_marker(line, b"...") {
            self.directives = false;
            return Cut::After;
        }
        Cut::None
    }
}

/// The pieces of `text`: they cover it exactly, in order, and each starts at the text's
/// start or at a cut. An empty text is one empty piece.
pub fn pieces(text: &str) -> Vec<Range<usize>> {
    let bytes = text.as_bytes();
    let mut starts = vec![0];
    let mut cutter = Cutter::default();
    let mut at = 0;
    while at < bytes.len() {
        let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |i| at + i + 1);
        let cut = match cutter.line(&bytes[at..end]) {
            Cut::Before => Some(at),
            Cut::After => Some(end),
            Cut::None => None,
        };
        if let Some(c) = cut.filter(|&c| c > starts.last().copied().unwrap_or(0) && c < bytes.len())
        {
            starts.push(c);
        }
        at = end;
    }
    let mut out = Vec::with_capacity(starts.len());
    for (i, &s) in starts.iter().enumerate() {
        let e = starts.get(i + 1).copied().unwrap_or(bytes.len());
        out.push(s..e);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(t: &str) -> Vec<&str> {
        pieces(t).into_iter().map(|r| &t[r]).collect()
    }

    #[test]
    fn cuts_at_document_starts_only() {
        assert_eq!(
            cut("a: 1\n---\nb: 2\n--- # c\nc: |\n  ---x\n----\n"),
            vec!["a: 1\n", "---\nb: 2\n", "--- # c\nc: |\n  ---x\n----\n"]
        );
        assert_eq!(cut("---\r\na: 1\r\n---"), vec!["---\r\na: 1\r\n", "---"]);
        assert_eq!(cut(""), vec![""]);
        assert_eq!(cut("---\n"), vec!["---\n"]);
        // Not markers: more text on the line, or not in column 0.
        assert_eq!(cut("a: ...\n ---\nb: '%'\n....\n").len(), 1);
    }

    #[test]
    fn directives_go_with_their_document_and_ends_cut_after() {
        assert_eq!(
            cut("%YAML 1.2\n---\na: 1\n---\nb: 2\n"),
            vec!["%YAML 1.2\n---\na: 1\n", "---\nb: 2\n"]
        );
        assert_eq!(
            cut("\u{feff}%YAML 1.2\n---\na: 1\n"),
            vec!["\u{feff}%YAML 1.2\n---\na: 1\n"]
        );
        assert_eq!(
            cut("a: 1\n...\n%TAG ! x:\n---\nb: 2\n...\n---\nc\n"),
            vec!["a: 1\n...\n", "%TAG ! x:\n---\nb: 2\n...\n", "---\nc\n"]
        );
        assert_eq!(cut("a: 1\n..."), vec!["a: 1\n..."]);
        // A `%` line inside a document keeps the next `---` from cutting: fewer pieces, never
        // a wrong one.
        assert_eq!(cut("--- |\n%x\n---\ny\n---\nz\n").len(), 2);
    }

    #[test]
    fn a_line_with_a_lone_cr_cuts_nowhere_nor_does_the_next_marker() {
        // `...` ended by a lone CR: `nd` is a bare document in the same stream, so the
        // `spec:` after it belongs with it (the whole text is invalid YAML there).
        assert_eq!(
            cut("a: x\r\n...\rnd\r\nspec:\r\n---\r\nb\r\n---\r\nc\r\n"),
            vec!["a: x\r\n...\rnd\r\nspec:\r\n---\r\nb\r\n", "---\r\nc\r\n"]
        );
        // A directive hidden behind a lone CR keeps its `---`.
        assert_eq!(cut("a\n...\r%TAG ! x:\n---\nb\n").len(), 1);
        // A marker hidden after a lone CR is not a cut either.
        assert_eq!(cut("a\r---\nb\n").len(), 1);
        // A CR at the end of the text is lone too.
        assert_eq!(cut("a\n...\r"), vec!["a\n...\r"]);
    }
}
