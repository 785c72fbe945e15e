//! The node tree of a document in the common subset of YAML, built without the full parser.
//!
//! Manifests, and what meshjob writes into them, are mostly block mappings and sequences
//! of one-line scalars, with a literal block scalar for a script or an embedded
//! configuration. [`parse`] reads exactly that, line by line, and returns the tree that
//! `tree::parse_stream` (granit-parser and the span-normalising builder) returns for the
//! same text: every node's kind, value, style and span. Anything outside the subset makes
//! it answer `None`, and the caller runs the full parser, which also reports every error:
//! this parser never refuses a text, it only declines it.
//!
//! The subset: one document (comments and at most one `---` line before it; `---` alone is
//! an empty document) whose root is a block mapping or sequence, in printable ASCII with LF
//! line breaks (no tab, no CR); block mappings (a sequence at its key's indentation
//! included) and sequences (compact nested ones included); comments and blank lines; plain
//! one-line scalars; one-line single- and double-quoted scalars (a few escapes); literal
//! and folded block scalars (`|`, `>`, with `-` or `+`; no indentation indicator, no
//! comment on the header line); `[]`, `{}` and one-line flow sequences of scalars. It
//! declines anchors, aliases, tags, explicit keys, multi-line plain or quoted scalars,
//! flow mappings with entries, directives, `...`, a second document and anything it is not
//! sure of.
//!
//! Debug builds check every tree it returns against the full parser (see
//! `tree::parse_stream`), and `tests/subset_parse.rs` and `tests/fuzz_smoke.rs` compare the
//! two on the corpus, the YAML test suite, meshjob's own outputs and mutations of them.

mod compare;
mod scalars;

use super::bytes::{MAX_DEPTH, find2, is_marker, printable_ascii, spaces};
use super::node::{Doc, Entry, Kind, Node, Text};
use granit_parser::ScalarStyle;

pub use compare::difference;

/// Whether `line` (a line's content, without its break) is a document marker, `---` or
/// `...`.
fn is_document_marker(line: &[u8]) -> bool {
    is_marker(line, b"---") || is_marker(line, b"...")
}

/// The text is outside the subset.
#[derive(Debug)]
struct Decline;

type R<T> = Result<T, Decline>;

/// The documents of `src`, exactly as `tree::parse_stream` gives them, or `None` when the
/// text is outside the subset.
pub fn parse(src: &str) -> Option<Vec<Doc>> {
    if !printable_ascii(src.as_bytes()) {
        return None;
    }
    SCRATCH.with(|cell| {
        let mut p = Parser {
            src,
            b: src.as_bytes(),
            depth: 0,
            scratch: cell.take(),
        };
        let docs = p.document().ok();
        p.scratch.clear();
        cell.set(p.scratch);
        docs
    })
}

/// Room to build a tree in, kept per thread from one text to the next: the children of
/// every open collection on one stack, so that each collection gets a vector of exactly its
/// length, and the content of a block scalar.
#[derive(Default)]
struct Scratch {
    items: Vec<Node>,
    entries: Vec<Entry>,
    text: String,
}

/// The most room the scratch keeps, in children and in bytes of block scalar: a document
/// with more gets its own, given back once it is read, so that a thread does not hold on to
/// the memory of the largest document it ever read.
const KEPT_CHILDREN: usize = 256;
const KEPT_TEXT: usize = 64 << 10;

impl Scratch {
    fn clear(&mut self) {
        self.items.clear();
        self.entries.clear();
        self.text.clear();
        self.items.shrink_to(KEPT_CHILDREN);
        self.entries.shrink_to(KEPT_CHILDREN);
        self.text.shrink_to(KEPT_TEXT);
    }
}

thread_local! {
    static SCRATCH: std::cell::Cell<Scratch> = const {
        std::cell::Cell::new(Scratch {
            items: Vec::new(),
            entries: Vec::new(),
            text: String::new(),
        })
    };
}

/// A line with content (neither blank nor a comment).
#[derive(Clone, Copy)]
struct Line {
    start: usize,
    /// Its indentation: the column of its first byte of content.
    col: usize,
    /// Where it ends: its line feed, or the end of the text.
    end: usize,
}

/// A scalar on one line, and what follows it.
enum Inline {
    /// It is a mapping key; the `:` is at this offset.
    Key(Node, usize),
    /// It is a value, followed by nothing but spaces or a comment.
    Value(Node),
}

fn scalar(value: impl Into<Text>, style: ScalarStyle, start: usize, end: usize) -> Node {
    Node {
        kind: Kind::Scalar {
            value: value.into(),
            style,
        },
        start,
        end,
        props_start: start,
        anchor: None,
        tag: None,
        flow: false,
        empty: false,
    }
}

fn collection(kind: Kind, start: usize, end: usize, flow: bool) -> Node {
    Node {
        kind,
        start,
        end,
        props_start: start,
        anchor: None,
        tag: None,
        flow,
        empty: false,
    }
}

struct Parser<'a> {
    src: &'a str,
    b: &'a [u8],
    depth: usize,
    scratch: Scratch,
}

impl Parser<'_> {
    /// Where the line that starts at `at` ends.
    fn line_end(&self, at: usize) -> usize {
        let len = self.b.len();
        find2(self.b, at, len, b'\n', b'\n').unwrap_or(len)
    }

    /// The start of the line after the one that ends at `end`.
    fn after(&self, end: usize) -> usize {
        (end + 1).min(self.b.len())
    }

    /// The byte at `i` if it lies before `eol`.
    fn at(&self, i: usize, eol: usize) -> Option<u8> {
        (i < eol).then(|| self.b[i])
    }

    /// The first line from `at` (a line start) with content (neither blank nor a comment),
    /// or `None` at the end of the text.
    fn content_line(&self, mut at: usize) -> Option<Line> {
        while at < self.b.len() {
            let end = self.line_end(at);
            let line = &self.b[at..end];
            let col = spaces(line);
            if col < line.len() && line[col] != b'#' {
                return Some(Line {
                    start: at,
                    col,
                    end,
                });
            }
            at = end + 1;
        }
        None
    }

    /// [`Self::content_line`] within the document: a document marker declines, as it would
    /// end the document.
    fn next_line(&self, at: usize) -> R<Option<Line>> {
        match self.content_line(at) {
            Some(l) if l.col == 0 && is_document_marker(&self.b[l.start..l.end]) => Err(Decline),
            l => Ok(l),
        }
    }

    fn document(&mut self) -> R<Vec<Doc>> {
        // At most one `---` line (with nothing but a comment after it) among the comments
        // and blank lines before the root.
        let mut at = 0;
        let mut marker = None;
        while let Some(l) = self.content_line(at) {
            let line = &self.b[l.start..l.end];
            if l.col > 0 || marker.is_some() || !line.starts_with(b"---") {
                break;
            }
            let rest = &line[3..];
            let s = spaces(rest);
            if !rest.is_empty() && (s == 0 || (s < rest.len() && rest[s] != b'#')) {
                return Err(Decline);
            }
            marker = Some(l.start);
            at = l.end + 1;
        }
        let Some(first) = self.next_line(at.min(self.b.len()))? else {
            return Ok(match marker {
                // A bare `---` is a document whose root is an empty null, just past it.
                Some(m) => {
                    let mut root = scalar("~", ScalarStyle::Plain, m + 3, m + 3);
                    root.empty = true;
                    vec![Doc {
                        root,
                        range: 0..self.b.len(),
                    }]
                }
                None => Vec::new(),
            });
        };
        let (root, next) = self.block(first.start + first.col, first.col, first.end, None)?;
        if self.next_line(next)?.is_some() {
            return Err(Decline);
        }
        Ok(vec![Doc {
            root,
            range: 0..self.b.len(),
        }])
    }

    /// The block node that starts at `p` (column `col`) on a line that ends at `eol`: a
    /// sequence, a mapping or, where `scalar_parent` gives the indentation its content must
    /// exceed, a scalar. Returns the node and the start of the line where its parent goes
    /// on.
    fn block(
        &mut self,
        p: usize,
        col: usize,
        eol: usize,
        scalar_parent: Option<usize>,
    ) -> R<(Node, usize)> {
        let b = self.b;
        if b[p] == b'-' && self.at(p + 1, eol).is_none_or(|c| c == b' ') {
            return self.seq(p, col, eol);
        }
        if matches!(b[p], b'|' | b'>') {
            let parent = scalar_parent.ok_or(Decline)?;
            return self.block_scalar(p, eol, parent);
        }
        match self.inline(p, eol)? {
            Inline::Key(key, colon) => self.map(key, colon, col, eol),
            Inline::Value(node) if scalar_parent.is_some() => Ok((node, self.after(eol))),
            Inline::Value(_) => Err(Decline),
        }
    }

    fn deeper(&mut self) -> R<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Decline);
        }
        Ok(())
    }

    /// A block sequence whose first `-` is at `p`, column `col`.
    fn seq(&mut self, p: usize, col: usize, mut eol: usize) -> R<(Node, usize)> {
        self.deeper()?;
        let b = self.b;
        let first = self.scratch.items.len();
        let mut dash = p;
        let mut line_start = p - col;
        let next = loop {
            // The item's content is on the dash's line: an item on the lines below (or an
            // empty one) is left to the full parser.
            let q = dash + 1 + spaces(&b[(dash + 1).min(eol)..eol]);
            if q >= eol || b[q] == b'#' {
                return Err(Decline);
            }
            let (item, after) = self.block(q, q - line_start, eol, Some(col))?;
            self.scratch.items.push(item);
            match self.next_line(after)? {
                Some(l) if l.col == col && b[l.start + col] == b'-' => {
                    dash = l.start + col;
                    eol = l.end;
                    line_start = l.start;
                    if self.at(dash + 1, eol).is_some_and(|c| c != b' ') {
                        // `-x` is a key or a scalar, not an item.
                        return Err(Decline);
                    }
                }
                Some(l) if l.col > col => return Err(Decline),
                l => break l.map_or(b.len(), |l| l.start),
            }
        };
        self.depth -= 1;
        let items: Vec<Node> = self.scratch.items.drain(first..).collect();
        let end = items.last().map_or(p, |n| n.end);
        Ok((collection(Kind::Seq(items), p, end, false), next))
    }

    /// A block mapping at column `col` whose first key is `key`, with its `:` at `colon`,
    /// on a line that ends at `eol`.
    fn map(
        &mut self,
        mut key: Node,
        mut colon: usize,
        col: usize,
        mut eol: usize,
    ) -> R<(Node, usize)> {
        self.deeper()?;
        let start = key.start;
        let first = self.scratch.entries.len();
        let next = loop {
            let (value, after) = self.value(colon, eol, col)?;
            self.scratch.entries.push(Entry { key, value });
            match self.next_line(after)? {
                Some(l) if l.col == col => match self.inline(l.start + col, l.end)? {
                    Inline::Key(k, c) => {
                        key = k;
                        colon = c;
                        eol = l.end;
                    }
                    Inline::Value(_) => return Err(Decline),
                },
                Some(l) if l.col > col => return Err(Decline),
                l => break l.map_or(self.b.len(), |l| l.start),
            }
        };
        self.depth -= 1;
        let entries: Vec<Entry> = self.scratch.entries.drain(first..).collect();
        let end = entries.last().map_or(start, |e| e.value.end.max(e.key.end));
        Ok((collection(Kind::Map(entries), start, end, false), next))
    }

    /// The value of the key whose `:` is at `colon`, in a mapping at column `col`.
    fn value(&mut self, colon: usize, eol: usize, col: usize) -> R<(Node, usize)> {
        let b = self.b;
        let q = colon + 1 + spaces(&b[(colon + 1).min(eol)..eol]);
        if q < eol && b[q] != b'#' {
            return match b[q] {
                b'|' | b'>' => self.block_scalar(q, eol, col),
                _ => match self.inline(q, eol)? {
                    Inline::Value(node) => Ok((node, self.after(eol))),
                    Inline::Key(..) => Err(Decline),
                },
            };
        }
        // Nothing more on the line: a collection on the lines below, or an empty value.
        let below = self.after(eol);
        match self.next_line(below)? {
            Some(l) if l.col > col => {
                // The tree starts a mapping at the `?` of an explicit key that ends the last
                // line with content before its first key (past blank and comment lines):
                // this line, whose comment may end in a `?` that looks like one. (Nothing
                // else comes before a mapping here; before a compact one in a sequence item
                // there is its `-`, before the root at most a `---`.)
                if b[l.start + l.col] != b'-'
                    && super::text::explicit_key_before(self.src, eol).is_some()
                {
                    return Err(Decline);
                }
                self.block(l.start + l.col, l.col, l.end, None)
            }
            Some(l)
                if l.col == col
                    && b[l.start + col] == b'-'
                    && self.at(l.start + col + 1, l.end).is_none_or(|c| c == b' ') =>
            {
                self.seq(l.start + col, col, l.end)
            }
            l => {
                // Empty: a null just past the `:`.
                let at = colon + 1;
                let mut node = scalar("~", ScalarStyle::Plain, at, at);
                node.empty = true;
                Ok((node, l.map_or(b.len(), |l| l.start)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::tree::parse_full;

    /// Accepted, with the full parser's tree.
    fn same(src: &str) {
        let fast = parse(src).unwrap_or_else(|| panic!("declined: {src:?}"));
        let full = parse_full(src).expect("parses");
        assert_eq!(difference(&fast, &full), None, "{src:?}");
    }

    #[test]
    fn reads_what_manifests_and_meshjob_write() {
        for src in [
            "",
            "# only a comment\n",
            "---\n",
            "# Source: chart/templates/job.yaml\n--- # doc\n# c\na: 1\n",
            "a: 1\nb:\nc:   # c\n  d: 'it''s'\n  e: \"q\\\"\\\\x\\n\"\n",
            "k:\n- a\n- b: 1\n  c: -x\n-   - z\n    - y\nm: [a, \"b\", 'c', -d, e:f]\nn: []\no: { }\n",
            "- |\n  one\n\n  two\n- |-\n    x\n     y\n- |+\n  k\n\n- >\n  a\n  b\n\n  c\n   d\n  e\n",
            "a:\n  b: |\n    x\n  c: >-\n    y\n    z\n  d: |+\n    k\n\n  e: 1",
            "s: |\n  k\n  l",
            "  a: 1\n  b: 2\n",
            "key with spaces : value # comment\nurl: http://x:80/#a\n",
            // A `#` in a key is no comment: the line ends in `?` only in the text after it.
            "a#b: # x?\n  c: 1\n",
        ] {
            same(src);
        }
    }

    #[test]
    fn declines_a_mapping_the_tree_starts_at_a_question_mark() {
        // The tree takes a line that ends in ` ?` (past what looks like a comment) for an
        // explicit key before the mapping below it, and starts the mapping there.
        let src = "\"a ? #b\":\n  c: 1\n";
        assert!(parse(src).is_none());
        let full = parse_full(src).expect("parses");
        assert_eq!(full[0].root.get("a ? #b").map(|m| m.start), Some(3));
    }

    #[test]
    fn declines_everything_else() {
        for src in [
            "a: &x 1\nb: *x\n",
            "a: !!str 1\n",
            "a:\tb\n",
            "a: b\r\n",
            "a: é\n",
            "a: one\n  two\n",
            "a: 'one\n  two'\n",
            "a: 1\n...\n",
            "a: 1\n---\nb: 2\n",
            "? a\n: b\n",
            "a: |2\n   x\n",
            "a: | # c\n  x\n",
            "a: {b: c}\n",
            "a: [b,]\n",
            "a: [b: c]\n",
            "plain scalar\n",
            "%YAML 1.2\n---\na: 1\n",
            "a: b: c\n",
            "-\n  a: 1\n",
        ] {
            assert!(parse(src).is_none(), "accepted {src:?}");
        }
    }
}
