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
    let mut p = Parser {
        src,
        b: src.as_bytes(),
        depth: 0,
        lines: Vec::new(),
    };
    p.document().ok()
}

/// Whether every byte is printable ASCII or a line feed. One pass without an early exit,
/// which the compiler vectorises.
fn printable_ascii(b: &[u8]) -> bool {
    b.iter().fold(true, |ok, &c| {
        ok & ((0x20..0x7f).contains(&c) | (c == b'\n'))
    })
}

/// Number of spaces `line` starts with.
fn spaces(line: &[u8]) -> usize {
    line.iter().take_while(|&&c| c == b' ').count()
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
    /// The lines of the block scalar being read, kept between scalars.
    lines: Vec<(usize, usize)>,
}

impl Parser<'_> {
    /// Where the line that starts at `at` ends.
    fn line_end(&self, at: usize) -> usize {
        memchr::memchr(b'\n', &self.b[at..]).map_or(self.b.len(), |i| at + i)
    }

    /// The start of the line after the one that ends at `end`.
    fn after(&self, end: usize) -> usize {
        (end + 1).min(self.b.len())
    }

    /// The byte at `i` if it lies before `eol`.
    fn at(&self, i: usize, eol: usize) -> Option<u8> {
        (i < eol).then(|| self.b[i])
    }

    /// The first line from `at` (a line start) with content, or `None` at the end of the
    /// text. A document marker declines: it would end the document.
    fn next_line(&self, mut at: usize) -> R<Option<Line>> {
        while at < self.b.len() {
            let end = self.line_end(at);
            let line = &self.b[at..end];
            let col = spaces(line);
            if col == line.len() || line[col] == b'#' {
                at = end + 1;
                continue;
            }
            if col == 0 && is_marker(line) {
                return Err(Decline);
            }
            return Ok(Some(Line {
                start: at,
                col,
                end,
            }));
        }
        Ok(None)
    }

    fn document(&mut self) -> R<Vec<Doc>> {
        // Comments, blank lines and at most one `---` line (with nothing but a comment
        // after it) before the root.
        let mut at = 0;
        let mut marker = None;
        while at < self.b.len() {
            let end = self.line_end(at);
            let line = &self.b[at..end];
            let col = spaces(line);
            if col == line.len() || line[col] == b'#' {
                at = end + 1;
                continue;
            }
            if col == 0 && marker.is_none() && line.starts_with(b"---") {
                let rest = &line[3..];
                let s = spaces(rest);
                if rest.is_empty() || (s > 0 && (s == rest.len() || rest[s] == b'#')) {
                    marker = Some(at);
                    at = end + 1;
                    continue;
                }
                return Err(Decline);
            }
            break;
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
        let mut items = Vec::new();
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
            items.push(item);
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
        // The tree starts a mapping at the `?` of an explicit key before its first key,
        // looked for past comments: a comment that ends in `?` looks like one.
        if super::text::explicit_key_before(self.src, key.start).is_some() {
            return Err(Decline);
        }
        let start = key.start;
        let mut entries = Vec::new();
        let next = loop {
            let (value, after) = self.value(colon, eol, col)?;
            entries.push(Entry { key, value });
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
            Some(l) if l.col > col => self.block(l.start + l.col, l.col, l.end, None),
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
        while let Some(j) = memchr::memchr2(b':', b'#', &b[i..eol]).map(|j| i + j) {
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
            let j = memchr::memchr(b'\'', &b[i..eol]).ok_or(Decline)? + i;
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
        let first = memchr::memchr2(b'"', b'\\', &b[p + 1..eol]).ok_or(Decline)? + p + 1;
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
            j = memchr::memchr2(b'"', b'\\', &b[run..eol]).ok_or(Decline)? + run;
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
        // The lines of the scalar, up to the first less indented line with content.
        let mut lines = std::mem::take(&mut self.lines);
        lines.clear();
        let mut at = first;
        let mut last_content = None;
        let mut size = 0;
        while at < b.len() {
            let end = self.line_end(at);
            let line = &b[at..end];
            if line.len() > n && line[..n].iter().all(|&c| c == b' ') {
                last_content = Some(lines.len());
                size += line.len() - n + 1;
            } else if line.iter().any(|&c| c != b' ') {
                break;
            } else {
                size += 1;
            }
            lines.push((at, end));
            at = end + 1;
        }
        let stop = at.min(b.len());
        let Some(last) = last_content else {
            self.lines = lines;
            return Err(Decline);
        };
        let folded = b[p] == b'>';
        let mut value = String::with_capacity(size);
        if folded {
            self.fold(&lines[..=last], n, &mut value)?;
        } else {
            for &(ls, le) in &lines[..last] {
                value.push_str(self.src.get(ls + n..le).unwrap_or(""));
                value.push('\n');
            }
            value.push_str(&self.src[lines[last].0 + n..lines[last].1]);
        }
        let content_end = value.len();
        // The line breaks after the last line with content (one per line that has one).
        for &(_, le) in &lines[last..] {
            if le < b.len() {
                value.push('\n');
            }
        }
        let last_line = lines[last];
        let trailing_spaces = lines[last + 1..].iter().any(|&(ls, le)| le > ls);
        self.lines = lines;
        // A last line that ends in spaces, or kept blank lines that hold spaces, are left
        // to the full parser: the tree places the end of such scalars by what follows.
        if value[..content_end].ends_with(' ') {
            return Err(Decline);
        }
        let end = match chomp {
            Some(b'-') => {
                value.truncate(content_end);
                last_line.1
            }
            Some(_) => {
                if trailing_spaces {
                    return Err(Decline);
                }
                // Kept line breaks are content: the scalar ends before the last of them.
                if b[stop - 1] == b'\n' { stop - 1 } else { stop }
            }
            None => {
                value.truncate((content_end + 1).min(value.len()));
                last_line.1
            }
        };
        let style = if folded {
            ScalarStyle::Folded
        } else {
            ScalarStyle::Literal
        };
        Ok((scalar(value, style, p, end), stop))
    }

    /// The content of a folded block scalar from its `lines` (indented by `n`, the last one
    /// with content): a line break between two lines of text becomes a space, one with blank
    /// lines after it becomes those lines' breaks, and lines that begin with a space
    /// (beyond the indentation) keep their breaks.
    fn fold(&self, lines: &[(usize, usize)], n: usize, value: &mut String) -> R<()> {
        // (the previous line with content began with a space, blank lines since it)
        let mut prev: Option<(bool, usize)> = None;
        for &(ls, le) in lines {
            if le - ls <= n {
                if let Some((_, blank)) = &mut prev {
                    *blank += 1;
                }
                continue;
            }
            let text = &self.src[ls + n..le];
            let spaced = text.starts_with(' ');
            if spaced && text.bytes().all(|c| c == b' ') {
                // A line of spaces alone: left to the full parser.
                return Err(Decline);
            }
            match prev {
                Some((false, 0)) if !spaced => value.push(' '),
                Some((was_spaced, blank)) => {
                    let breaks = blank + usize::from(was_spaced || spaced);
                    value.extend(std::iter::repeat_n('\n', breaks));
                }
                None => {}
            }
            value.push_str(text);
            prev = Some((spaced, 0));
        }
        Ok(())
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
        ] {
            same(src);
        }
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
