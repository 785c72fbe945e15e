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
//! The subset: one document (a leading `---` line and comments allowed) whose root is a
//! block mapping or sequence, in printable ASCII with LF line breaks (no tab, no CR); block
//! mappings (a sequence at its key's indentation included) and sequences (compact nested
//! ones included); comments and blank lines; plain one-line scalars; one-line single- and
//! double-quoted scalars (a few escapes); literal block scalars (`|`, `|-`, `|+`, no
//! indentation indicator, no comment on the header line); `[]`, `{}` and one-line flow
//! sequences of scalars. It declines anchors, aliases, tags, explicit keys, folded
//! scalars, multi-line plain or quoted scalars, directives, `...`, a second document and
//! anything it is not sure of.
//!
//! Debug builds check every tree it returns against the full parser (see
//! `tree::parse_stream`), and `tests/subset_parse.rs` and the fuzz harness compare the two
//! on the corpus, the YAML test suite, meshjob's own outputs and mutations of them.

use super::tree::{Doc, Entry, Kind, Node};
use granit_parser::ScalarStyle;

/// Deepest nesting followed (granit-parser stops at 255).
const MAX_DEPTH: usize = 64;
/// Longest key read (YAML limits implicit keys to 1024 characters).
const MAX_KEY: usize = 512;

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

/// Whether every byte is printable ASCII or a line feed. One pass without an early exit,
/// which the compiler vectorises.
fn printable_ascii(b: &[u8]) -> bool {
    b.iter().fold(true, |ok, &c| {
        ok & ((0x20..0x7f).contains(&c) | (c == b'\n'))
    })
}

// Lines and the tokens on them are short (a few dozen bytes): they are searched eight
// bytes at a time in a register, which costs less than setting up a vector search.

const ONES: u64 = 0x0101_0101_0101_0101;

/// The eight bytes of `c` (a chunk of eight) as one word.
#[inline]
fn word(c: &[u8]) -> u64 {
    u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])
}

/// The high bit of each byte of `w` equal to `byte` (exact up to the first one, which is
/// all that is read of it).
#[inline]
fn equal(w: u64, byte: u8) -> u64 {
    let x = w ^ (u64::from(byte) * ONES);
    x.wrapping_sub(ONES) & !x & (0x80 * ONES)
}

/// The first offset in `b[from..to]` that holds `x` or `y`.
#[inline]
fn find2(b: &[u8], from: usize, to: usize, x: u8, y: u8) -> Option<usize> {
    let mut chunks = b[from..to].chunks_exact(8);
    let mut at = from;
    for c in &mut chunks {
        let w = word(c);
        let m = equal(w, x) | equal(w, y);
        if m != 0 {
            return Some(at + (m.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    let rest = chunks.remainder();
    rest.iter().position(|&c| c == x || c == y).map(|i| at + i)
}

/// Number of spaces `line` starts with.
fn spaces(line: &[u8]) -> usize {
    let mut chunks = line.chunks_exact(8);
    let mut n = 0;
    for c in &mut chunks {
        let other = word(c) ^ (u64::from(b' ') * ONES);
        if other != 0 {
            return n + (other.trailing_zeros() / 8) as usize;
        }
        n += 8;
    }
    n + chunks
        .remainder()
        .iter()
        .take_while(|&&c| c == b' ')
        .count()
}

/// Appends `n` line breaks.
fn push_breaks(text: &mut String, n: usize) {
    for _ in 0..n {
        text.push('\n');
    }
}

/// Whether `line` (from its first byte) is a document marker, `---` or `...`.
fn is_marker(line: &[u8]) -> bool {
    (line.starts_with(b"---") || line.starts_with(b"..."))
        && matches!(line.get(3), None | Some(b' '))
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

fn scalar(value: String, style: ScalarStyle, start: usize, end: usize) -> Node {
    Node {
        kind: Kind::Scalar { value, style },
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
            Some(l) if l.col == 0 && is_marker(&self.b[l.start..l.end]) => Err(Decline),
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
                    let mut root = scalar("~".to_string(), ScalarStyle::Plain, m + 3, m + 3);
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
        let line_start = p - col;
        let mut line_start = line_start;
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
                let mut node = scalar("~".to_string(), ScalarStyle::Plain, at, at);
                node.empty = true;
                Ok((node, l.map_or(b.len(), |l| l.start)))
            }
        }
    }

    /// A scalar (or a flow collection) at `p`, on a line that ends at `eol`, and whether it
    /// is a key.
    fn inline(&self, p: usize, eol: usize) -> R<Inline> {
        let b = self.b;
        let (node, after) = match b[p] {
            b'"' => self.double_quoted(p, eol)?,
            b'\'' => self.single_quoted(p, eol)?,
            b'[' | b'{' => {
                let (node, after) = self.flow(p, eol)?;
                let q = after + spaces(&b[after..eol]);
                return match self.at(q, eol) {
                    None => Ok(Inline::Value(node)),
                    Some(b'#') if q > after => Ok(Inline::Value(node)),
                    _ => Err(Decline),
                };
            }
            _ => return self.plain(p, eol),
        };
        let q = after + spaces(&b[after..eol]);
        match self.at(q, eol) {
            None => Ok(Inline::Value(node)),
            Some(b'#') if q > after => Ok(Inline::Value(node)),
            Some(b':') if self.at(q + 1, eol).is_none_or(|c| c == b' ') => {
                if after - p > MAX_KEY {
                    return Err(Decline);
                }
                Ok(Inline::Key(node, q))
            }
            _ => Err(Decline),
        }
    }

    /// A plain scalar on one line, in block context.
    fn plain(&self, p: usize, eol: usize) -> R<Inline> {
        let b = self.b;
        match b[p] {
            // `-x` is plain; `- x` is not, nor `?`, `:` and the other indicators.
            b'-' if self.at(p + 1, eol).is_some_and(|c| c != b' ') => {}
            b'-' | b'?' | b':' | b',' | b'[' | b']' | b'{' | b'}' | b'#' | b'&' | b'*' | b'!'
            | b'|' | b'>' | b'\'' | b'"' | b'%' | b'@' | b'`' | b' ' => return Err(Decline),
            _ => {}
        }
        let trim = |end: usize| {
            p + b[p..end]
                .iter()
                .rposition(|&c| c != b' ')
                .map_or(0, |i| i + 1)
        };
        let mut i = p;
        while let Some(j) = find2(b, i, eol, b':', b'#') {
            if b[j] == b':' {
                if j + 1 == eol || b[j + 1] == b' ' {
                    let end = trim(j);
                    if end - p > MAX_KEY {
                        return Err(Decline);
                    }
                    return Ok(Inline::Key(
                        scalar(self.src[p..end].to_string(), ScalarStyle::Plain, p, end),
                        j,
                    ));
                }
            } else if b[j - 1] == b' ' {
                let end = trim(j);
                return Ok(Inline::Value(scalar(
                    self.src[p..end].to_string(),
                    ScalarStyle::Plain,
                    p,
                    end,
                )));
            }
            i = j + 1;
        }
        let end = trim(eol);
        Ok(Inline::Value(scalar(
            self.src[p..end].to_string(),
            ScalarStyle::Plain,
            p,
            end,
        )))
    }

    /// A one-line single-quoted scalar at `p`, and the offset past its closing quote.
    fn single_quoted(&self, p: usize, eol: usize) -> R<(Node, usize)> {
        let b = self.b;
        let mut i = p + 1;
        let mut escaped = false;
        let close = loop {
            let j = find2(b, i, eol, b'\'', b'\'').ok_or(Decline)?;
            if self.at(j + 1, eol) == Some(b'\'') {
                escaped = true;
                i = j + 2;
                continue;
            }
            break j;
        };
        let text = &self.src[p + 1..close];
        let value = if escaped {
            text.replace("''", "'")
        } else {
            text.to_string()
        };
        Ok((
            scalar(value, ScalarStyle::SingleQuoted, p, close + 1),
            close + 1,
        ))
    }

    /// A one-line double-quoted scalar at `p` with at most the escapes `\\`, `\"`, `\/`,
    /// `\n`, `\t` and `\r`, and the offset past its closing quote.
    fn double_quoted(&self, p: usize, eol: usize) -> R<(Node, usize)> {
        let b = self.b;
        let first = find2(b, p + 1, eol, b'"', b'\\').ok_or(Decline)?;
        if b[first] == b'"' {
            let value = self.src[p + 1..first].to_string();
            return Ok((
                scalar(value, ScalarStyle::DoubleQuoted, p, first + 1),
                first + 1,
            ));
        }
        let mut value = String::with_capacity(eol - p);
        let mut run = p + 1;
        let mut j = first;
        loop {
            value.push_str(&self.src[run..j]);
            if b[j] == b'"' {
                return Ok((scalar(value, ScalarStyle::DoubleQuoted, p, j + 1), j + 1));
            }
            value.push(match self.at(j + 1, eol) {
                Some(b'\\') => '\\',
                Some(b'"') => '"',
                Some(b'/') => '/',
                Some(b'n') => '\n',
                Some(b't') => '\t',
                Some(b'r') => '\r',
                _ => return Err(Decline),
            });
            run = j + 2;
            j = find2(b, run, eol, b'"', b'\\').ok_or(Decline)?;
        }
    }

    /// `[]`, `{}`, or a one-line flow sequence of scalars at `p`, and the offset past its
    /// closing bracket.
    fn flow(&self, p: usize, eol: usize) -> R<(Node, usize)> {
        let b = self.b;
        let mut q = p + 1 + spaces(&b[p + 1..eol]);
        if b[p] == b'{' {
            return match self.at(q, eol) {
                Some(b'}') => Ok((collection(Kind::Map(Vec::new()), p, q + 1, true), q + 1)),
                _ => Err(Decline),
            };
        }
        let mut items = Vec::new();
        if self.at(q, eol) == Some(b']') {
            return Ok((collection(Kind::Seq(items), p, q + 1, true), q + 1));
        }
        loop {
            let (item, after) = match self.at(q, eol).ok_or(Decline)? {
                b'"' => self.double_quoted(q, eol)?,
                b'\'' => self.single_quoted(q, eol)?,
                _ => self.flow_plain(q, eol)?,
            };
            items.push(item);
            q = after + spaces(&b[after..eol]);
            match self.at(q, eol) {
                Some(b',') => {
                    q += 1;
                    q += spaces(&b[q..eol]);
                    // A trailing comma is left to the full parser.
                    if self.at(q, eol) == Some(b']') {
                        return Err(Decline);
                    }
                }
                Some(b']') => return Ok((collection(Kind::Seq(items), p, q + 1, true), q + 1)),
                _ => return Err(Decline),
            }
        }
    }

    /// A plain scalar inside a flow sequence: up to the next `,` or `]`.
    fn flow_plain(&self, p: usize, eol: usize) -> R<(Node, usize)> {
        let b = self.b;
        // Inside a flow collection, a `:` or `#` is part of a plain scalar only next to
        // other characters of it (`a:b`, `a#b`), and `-` may begin one (`-c`).
        let safe = |i: usize| {
            self.at(i, eol)
                .is_some_and(|c| !matches!(c, b' ' | b',' | b'[' | b']' | b'{' | b'}'))
        };
        match b[p] {
            b'-' if safe(p + 1) => {}
            b'-' | b'?' | b':' | b',' | b'[' | b']' | b'{' | b'}' | b'#' | b'&' | b'*' | b'!'
            | b'|' | b'>' | b'\'' | b'"' | b'%' | b'@' | b'`' | b' ' => return Err(Decline),
            _ => {}
        }
        let mut i = p;
        while i < eol {
            match b[i] {
                b',' | b']' => break,
                b'[' | b'{' | b'}' => return Err(Decline),
                b':' if !safe(i + 1) => return Err(Decline),
                b'#' if b[i - 1] == b' ' => return Err(Decline),
                _ => {}
            }
            i += 1;
        }
        let end = p + b[p..i]
            .iter()
            .rposition(|&c| c != b' ')
            .map_or(0, |k| k + 1);
        Ok((
            scalar(self.src[p..end].to_string(), ScalarStyle::Plain, p, end),
            end,
        ))
    }

    /// A literal (`|`) or folded (`>`) block scalar whose indicator is at `p`, on a line that
    /// ends at `eol`; its content is indented more than `parent`.
    fn block_scalar(&mut self, p: usize, eol: usize, parent: usize) -> R<(Node, usize)> {
        let b = self.b;
        let chomp = match self.at(p + 1, eol) {
            Some(c @ (b'-' | b'+')) => Some(c),
            _ => None,
        };
        let header = p + 1 + usize::from(chomp.is_some());
        if spaces(&b[header..eol]) != eol - header || eol >= b.len() {
            // A comment, an indentation indicator, or no content at all.
            return Err(Decline);
        }
        // The first line sets the indentation; a leading blank line is left to the full
        // parser.
        let first = eol + 1;
        let first_end = self.line_end(first);
        let n = spaces(&b[first..first_end]);
        if n == first_end - first || n <= parent {
            return Err(Decline);
        }
        let folded = b[p] == b'>';
        // The content is gathered in a buffer kept between scalars, then copied once into
        // a string of its length.
        let mut text = std::mem::take(&mut self.scratch.text);
        text.clear();
        let read = self
            .block_lines(first, first_end, n, folded, &mut text)
            .and_then(|lines| chomped(&mut text, &lines, chomp, b).map(|end| (end, lines.stop)));
        let value = read.is_ok().then(|| text.as_str().to_owned());
        self.scratch.text = text;
        let ((end, stop), value) = (read?, value.unwrap_or_default());
        let style = if folded {
            ScalarStyle::Folded
        } else {
            ScalarStyle::Literal
        };
        Ok((scalar(value, style, p, end), stop))
    }

    /// Reads the lines of a block scalar from `first` (which ends at `first_end`), indented
    /// by `n`, into `text`: its content up to the end of its last line with content.
    fn block_lines(
        &self,
        first: usize,
        first_end: usize,
        n: usize,
        folded: bool,
        text: &mut String,
    ) -> R<BlockLines> {
        let b = self.b;
        // Line breaks since the last line with content (its own included), and whether a
        // blank line since then holds spaces.
        let mut breaks = 0;
        let mut spaced_blank = false;
        // The end of the last line with content, and whether it began with a space.
        let mut last: Option<(usize, bool)> = None;
        let (mut at, mut end) = (first, first_end);
        let stop = loop {
            let line = &b[at..end];
            if line.len() > n && starts_with_spaces(line, n) {
                let content = &self.src[at + n..end];
                let spaced = content.as_bytes()[0] == b' ';
                match last {
                    // Folded: a line break between two lines of text becomes a space, one
                    // followed by blank lines becomes their breaks, and lines that begin
                    // with a space keep theirs. A line of spaces alone is left to the full
                    // parser.
                    _ if folded && spaced && content.bytes().all(|c| c == b' ') => {
                        return Err(Decline);
                    }
                    Some((_, was_spaced)) if folded => {
                        if !was_spaced && !spaced && breaks == 1 {
                            text.push(' ');
                        } else {
                            let kept = breaks - 1 + usize::from(was_spaced || spaced);
                            push_breaks(text, kept);
                        }
                    }
                    Some(_) => push_breaks(text, breaks),
                    None => {}
                }
                text.push_str(content);
                last = Some((end, spaced));
                breaks = 0;
                spaced_blank = false;
            } else if line.iter().all(|&c| c == b' ') {
                spaced_blank |= !line.is_empty();
            } else {
                break at;
            }
            if end == b.len() {
                break end;
            }
            breaks += 1;
            at = end + 1;
            if at == b.len() {
                break at;
            }
            end = self.line_end(at);
        };
        let (last_end, _) = last.ok_or(Decline)?;
        Ok(BlockLines {
            last_end,
            stop,
            breaks,
            spaced_blank,
        })
    }
}

/// Appends to the `text` of a block scalar the line breaks its `chomp` indicator keeps,
/// and returns where the scalar ends.
fn chomped(text: &mut String, lines: &BlockLines, chomp: Option<u8>, b: &[u8]) -> R<usize> {
    // A last line that ends in spaces, or kept blank lines that hold spaces, are left to the
    // full parser: the tree places the end of such scalars by what follows.
    if text.ends_with(' ') || (chomp == Some(b'+') && lines.spaced_blank) {
        return Err(Decline);
    }
    Ok(match chomp {
        Some(b'-') => lines.last_end,
        Some(_) => {
            push_breaks(text, lines.breaks);
            // Kept line breaks are content: the scalar ends before the last of them.
            let stop = lines.stop;
            if b[stop - 1] == b'\n' { stop - 1 } else { stop }
        }
        None => {
            if lines.breaks > 0 {
                text.push('\n');
            }
            lines.last_end
        }
    })
}

/// What the lines of a block scalar end with.
struct BlockLines {
    /// The end of its last line with content.
    last_end: usize,
    /// The start of the first line after it (or the end of the text).
    stop: usize,
    /// The line breaks after its last line with content.
    breaks: usize,
    /// A blank line after its last line with content holds spaces.
    spaced_blank: bool,
}

/// Whether `line` begins with `n` spaces: a word at a time, the last word overlapping the
/// one before it.
fn starts_with_spaces(line: &[u8], n: usize) -> bool {
    const BLANK: u64 = (b' ' as u64) * ONES;
    match line.get(..n) {
        Some(head) if n >= 8 => {
            head.chunks_exact(8).all(|c| word(c) == BLANK) && word(&head[n - 8..]) == BLANK
        }
        Some(head) => head.iter().all(|&c| c == b' '),
        None => false,
    }
}

/// The first difference between two parses of one text, described; `None` when they are
/// equal in every field.
pub fn difference(a: &[Doc], b: &[Doc]) -> Option<String> {
    if a.len() != b.len() {
        return Some(format!("{} documents against {}", a.len(), b.len()));
    }
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        if x.range != y.range {
            return Some(format!(
                "document {i}: range {:?} against {:?}",
                x.range, y.range
            ));
        }
        let mut path = format!("document {i}: root");
        if let Some(d) = node_difference(&x.root, &y.root, &mut path) {
            return Some(d);
        }
    }
    None
}

fn node_difference(a: &Node, b: &Node, path: &mut String) -> Option<String> {
    let fields = |n: &Node| (n.start, n.end, n.props_start, n.empty, n.flow);
    if fields(a) != fields(b) || a.anchor != b.anchor || a.tag != b.tag {
        return Some(format!(
            "{path}: (start, end, props_start, empty, flow) {:?} anchor {:?} tag {:?} against \
             {:?} anchor {:?} tag {:?}",
            fields(a),
            a.anchor,
            a.tag,
            fields(b),
            b.anchor,
            b.tag
        ));
    }
    match (&a.kind, &b.kind) {
        (Kind::Scalar { value: v, style: s }, Kind::Scalar { value: w, style: t }) => {
            (v != w || s != t).then(|| format!("{path}: {s:?} {v:?} against {t:?} {w:?}"))
        }
        (Kind::Alias(x), Kind::Alias(y)) => {
            (x != y).then(|| format!("{path}: alias {x:?} against {y:?}"))
        }
        (Kind::Seq(x), Kind::Seq(y)) => {
            if x.len() != y.len() {
                return Some(format!("{path}: {} items against {}", x.len(), y.len()));
            }
            let len = path.len();
            for (i, (m, n)) in x.iter().zip(y).enumerate() {
                path.push_str(&format!("[{i}]"));
                if let Some(d) = node_difference(m, n, path) {
                    return Some(d);
                }
                path.truncate(len);
            }
            None
        }
        (Kind::Map(x), Kind::Map(y)) => {
            if x.len() != y.len() {
                return Some(format!("{path}: {} entries against {}", x.len(), y.len()));
            }
            let len = path.len();
            for (i, (m, n)) in x.iter().zip(y).enumerate() {
                path.push_str(&format!(".key{i}"));
                if let Some(d) = node_difference(&m.key, &n.key, path) {
                    return Some(d);
                }
                path.truncate(len);
                path.push_str(&format!(".{:?}", m.key.as_str().unwrap_or("?")));
                if let Some(d) = node_difference(&m.value, &n.value, path) {
                    return Some(d);
                }
                path.truncate(len);
            }
            None
        }
        _ => Some(format!("{path}: {:?} against {:?}", a.kind, b.kind)),
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
