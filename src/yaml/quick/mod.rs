//! A quick look at one document: its top-level `apiVersion`, `kind` and `metadata.name`,
//! without building a tree.
//!
//! Most documents in a rendered chart are Deployments, Services and ConfigMaps that meshjob
//! never edits. Parsing them fully would cost most of the run, so each document is first read
//! by this scanner, which accepts only a conservative subset of YAML: block mappings and
//! sequences indented with spaces, plain keys, one-line plain or quoted scalars, empty flow
//! collections and block scalars, all in printable ASCII (no control character anywhere, not
//! even in a comment or a quoted scalar). Whatever it accepts is valid YAML (the tests
//! check this against the YAML test suite and the corpus); anything outside the subset makes
//! it answer `None`, and the caller parses the document fully. The scanner decides nothing
//! else: a document that could be a target is always parsed fully.
//!
//! It runs on every document of every stream, so it is written for speed: it walks the
//! bytes once with positions (no `str` slicing, no line iterator), and finds line ends,
//! indentation, the end of a key and where a plain scalar stops in bitmaps of the text made
//! 64 bytes at a time ([`masks`]), so that a line costs a few dozen instructions whatever its
//! length. A [`Scanner`] reads the pieces of one text (a batch) in order and makes each
//! block of bitmaps once for all of them. Its stack is a fixed array. The bitmaps also say
//! whether a document holds a byte outside printable ASCII; the rare ones that do are
//! checked byte by byte first, and those with a CR or a tab are read by the same code with a
//! few more checks.

#[allow(unsafe_code)]
mod masks;
mod tokens;

use crate::yaml::bytes::{MAX_DEPTH, MAX_KEY, starts_like_marker, trim_end};
use masks::{Masks, View};
use std::ops::Range;
use tokens::{
    KEY_START, PLAIN_START, double_quoted, flow_seq, is_dash, is_key_byte, single_quoted,
};

/// The top-level identity of a document the scanner read to the end.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Head<'a> {
    /// Plain scalar values; `None` when the key is absent or its value is not a plain scalar.
    pub api_version: Option<&'a str>,
    pub kind: Option<&'a str>,
    pub name: Option<&'a str>,
    /// `apiVersion`, `kind` or `metadata.name` was there with a value the scanner does not
    /// read (quoted, a block scalar, a collection).
    pub opaque: bool,
}

/// No indentation: what [`Scan::pending`] and [`Scan::block`] hold when nothing is open. A
/// document is read only when it is shorter, so no indentation reaches it.
const NONE: u32 = u32::MAX;

/// Reads the pieces of one text ([`Scanner::head`]), with the bitmaps of the whole text
/// made once.
pub struct Scanner<'t> {
    text: &'t str,
    masks: Masks,
    indents: [u32; MAX_DEPTH],
}

impl<'t> Scanner<'t> {
    pub fn new(text: &'t str) -> Self {
        Scanner {
            text,
            masks: Masks::new(text.as_bytes()),
            indents: [0; MAX_DEPTH],
        }
    }

    /// Reads the piece at `piece` (from `split::pieces`); `None`: outside the subset.
    pub fn head(&mut self, piece: Range<usize>) -> Option<Head<'t>> {
        let Range { start, end } = piece;
        let doc = self.text.get(..end)?;
        let b = doc.as_bytes();
        if end.checked_sub(start)? >= NONE as usize {
            return None;
        }
        let has_tab = match self.masks.odd_in(start, end) {
            false => false,
            true => check_bytes(b.get(start..)?)?,
        };
        read(
            doc,
            View::new(b, &self.masks),
            &mut self.indents,
            has_tab,
            start,
        )
    }
}

/// Reads one document (a piece from `split::pieces`). `None`: outside the subset.
pub fn head(doc: &str) -> Option<Head<'_>> {
    Scanner::new(doc).head(0..doc.len())
}

/// The state of one document's reading. Every method is inlined into [`read`], so that the
/// compiler keeps the fields in registers.
struct Scan<'a, 's> {
    /// The text up to the document's end: the document starts further in.
    doc: &'a str,
    v: View<'s>,
    /// The open collections, outermost first: the indentation of each (`depth` of them, at
    /// most [`MAX_DEPTH`]), and bit `i` of `seqs` set when collection `i` is a sequence
    /// (else a mapping).
    indents: &'s mut [u32; MAX_DEPTH],
    seqs: u64,
    depth: usize,
    /// A value still to come (after `key:` or `-` with nothing on the line) at this
    /// indentation, else [`NONE`]; `pending_key`: after a key.
    pending: u32,
    pending_key: bool,
    /// An open block scalar's parent's indentation, else [`NONE`]; its content's
    /// indentation once known, else [`NONE`].
    block: u32,
    content: u32,
    root_seen: bool,
    /// The top-level key whose value is open is `metadata` (for `metadata.name`).
    in_metadata: bool,
    head: Head<'a>,
    /// The document holds a tab somewhere.
    has_tab: bool,
}

/// Checks that every byte is printable ASCII, a tab or a line break, and that every CR ends
/// a line (is followed by a LF, or ends the text): then a CR can only stand right before a
/// line's LF, and the scanner treats it as the end of the line's content. Returns whether the
/// text holds a tab; `None` when a byte is outside that set, or a CR stands alone. One pass
/// for every byte class, so the lone CR is tested here rather than by `bytes::lone_cr`,
/// which also counts a CR that ends the text as lone (the splitter and the editor need
/// that; here the text is one piece, and its last CR ends its last line).
fn check_bytes(b: &[u8]) -> Option<bool> {
    let mut has_tab = false;
    for (i, &c) in b.iter().enumerate() {
        match c {
            b'\t' => has_tab = true,
            b'\r' if matches!(b.get(i + 1), None | Some(b'\n')) => {}
            b'\n' | 0x20..=0x7e => {}
            // Any other control character (the parser rejects it wherever it stands, in a
            // comment or a quoted scalar too), a lone CR (a line break that would hide a
            // line), or not ASCII.
            _ => return None,
        }
    }
    Some(has_tab)
}

/// Reads the document from `start` to the end of `doc`. The state is made here, not passed
/// in: the compiler keeps a local's fields in registers, but a struct handed to a function
/// in memory.
fn read<'a>(
    doc: &'a str,
    v: View<'_>,
    indents: &mut [u32; MAX_DEPTH],
    has_tab: bool,
    start: usize,
) -> Option<Head<'a>> {
    let mut s = Scan {
        doc,
        v,
        indents,
        seqs: 0,
        depth: 0,
        pending: NONE,
        pending_key: false,
        block: NONE,
        content: NONE,
        root_seen: false,
        in_metadata: false,
        head: Head::default(),
        has_tab,
    };
    let b = v.b;
    let mut at = start;
    if b[start..].starts_with(b"---") {
        // The piece's own marker: nothing may follow it but a comment.
        at = s.trailer(start + 3)?;
    }
    while at < b.len() {
        at = s.line(at)?;
    }
    // A block scalar still open here just ends with the document (empty if it had no
    // lines).
    Some(s.head)
}

impl<'a> Scan<'a, '_> {
    /// Where the line after the one `i` is on starts (the document's end after its last
    /// line).
    #[inline(always)]
    fn next_line(&self, i: usize) -> usize {
        (self.v.line_end(i) + 1).min(self.v.b.len())
    }

    /// Reads the line that starts at `ls`; returns where the next one starts.
    #[inline(always)]
    fn line(&mut self, ls: usize) -> Option<usize> {
        let b = self.v.b;
        let p = self.v.skip_spaces(ls);
        let c = b.get(p).copied().unwrap_or(b'\n');
        if self.block != NONE || self.has_tab || !KEY_START[usize::from(c)] {
            return self.line_general(ls, p);
        }
        // A key line (most are): resolved as `line_general` resolves one that is no marker,
        // no sequence item and not empty.
        let indent = p - ls;
        let d = self.depth;
        if self.pending == NONE && d > 0 && self.top() == indent && !self.is_seq(d - 1) {
            // Mostly a key of the mapping on top of the stack: nothing opens or closes.
            return self.entry(indent, p);
        }
        if self.pending != NONE {
            let pd = self.pending as usize;
            self.pending = NONE;
            if indent > pd {
                self.push(indent, false)?;
                return self.entry(indent, p);
            }
            // Otherwise the value was null: go on with this line.
        }
        let mut d = self.depth;
        if d == 0 {
            if self.root_seen || indent != 0 {
                return None;
            }
            self.root_seen = true;
            self.push(0, false)?;
            return self.entry(0, p);
        }
        while d > 1 && self.indents[d - 1] as usize > indent {
            d -= 1;
        }
        if d >= 2
            && self.is_seq(d - 1)
            && self.indents[d - 1] as usize == indent
            && !self.is_seq(d - 2)
            && self.indents[d - 2] as usize == indent
        {
            // The end of a sequence that sat at its key's indentation.
            d -= 1;
        }
        self.depth = d;
        if self.indents[d - 1] as usize != indent || self.is_seq(d - 1) {
            return None;
        }
        self.entry(indent, p)
    }

    /// Any line that starts at `ls`, its first byte that is not a space at `p`.
    #[inline(always)]
    fn line_general(&mut self, ls: usize, p: usize) -> Option<usize> {
        let b = self.v.b;
        let indent = p - ls;
        let c = b.get(p).copied().unwrap_or(b'\n');
        // A CR stands only before a LF (`check_bytes`): either ends the line's content.
        let empty = c == b'\n' || c == b'\r';
        if self.block != NONE {
            if empty {
                // Spaces-only lines before the first content line must not be longer than
                // it; stay clear of the rule altogether.
                if self.content == NONE && indent > 0 {
                    return None;
                }
                return Some(self.next_line(p));
            }
            if indent > self.block as usize {
                if self.content == NONE {
                    self.content = indent as u32;
                } else if indent < self.content as usize {
                    return None;
                }
                return Some(self.next_line(p));
            }
            self.block = NONE;
        }
        if self.has_tab && b.get(p..self.v.line_end(p))?.contains(&b'\t') {
            return None;
        }
        if empty || c == b'#' {
            return Some(self.next_line(p));
        }
        let d = self.depth;
        if self.pending == NONE
            && d > 0
            && self.indents[d - 1] as usize == indent
            && !self.is_seq(d - 1)
            && is_key_byte(c)
            && c != b'-'
            && c != b'.'
        {
            // The most common line, a key of the mapping on top of the stack: nothing opens
            // or closes, and no marker or sequence item can start with a key byte but `-`
            // and `.` (the checks below would all pass through to `entry`).
            return self.entry(indent, p);
        }
        if indent == 0 && (c == b'-' || c == b'.') && starts_like_marker(&b[p..]) {
            return None;
        }
        let dash = is_dash(b, p);
        if self.pending != NONE {
            let (pd, after_key) = (self.pending as usize, self.pending_key);
            self.pending = NONE;
            if indent > pd {
                return self.open(indent, dash, p);
            }
            if indent == pd && after_key && dash {
                // A sequence at the indentation of its key.
                return self.open(indent, true, p);
            }
            // Otherwise the value was null: go on with this line.
        }
        if self.depth == 0 {
            if self.root_seen || indent != 0 || dash {
                return None;
            }
            self.root_seen = true;
            return self.open(0, false, p);
        }
        while self.depth > 1 && self.indents[self.depth - 1] as usize > indent {
            self.depth -= 1;
        }
        let d = self.depth;
        if !dash
            && d >= 2
            && self.is_seq(d - 1)
            && self.indents[d - 1] as usize == indent
            && !self.is_seq(d - 2)
            && self.indents[d - 2] as usize == indent
        {
            // The end of a sequence that sat at its key's indentation.
            self.depth -= 1;
        }
        let d = self.depth;
        if self.indents[d - 1] as usize != indent {
            return None;
        }
        match (self.is_seq(d - 1), dash) {
            (false, _) => self.entry(indent, p),
            (true, true) => self.item(indent, p),
            (true, false) => None,
        }
    }

    /// The indentation of the collection on top of the stack (of the outermost when there
    /// is none). The mask keeps the index in bounds without a check: `depth` is at most 64.
    #[inline(always)]
    fn top(&self) -> usize {
        self.indents[self.depth.wrapping_sub(1) % MAX_DEPTH] as usize
    }

    #[inline(always)]
    fn is_seq(&self, level: usize) -> bool {
        self.seqs >> level & 1 == 1
    }

    /// Opens a collection at `indent` whose first entry (or item) starts at `p`.
    #[inline(always)]
    fn open(&mut self, indent: usize, seq: bool, p: usize) -> Option<usize> {
        self.push(indent, seq)?;
        match seq {
            false => self.entry(indent, p),
            true => self.item(indent, p),
        }
    }

    /// Puts a collection at `indent` on the stack.
    #[inline(always)]
    fn push(&mut self, indent: usize, seq: bool) -> Option<()> {
        let d = self.depth;
        if d >= MAX_DEPTH {
            return None;
        }
        self.indents[d] = indent as u32;
        self.seqs = self.seqs & !(1 << d) | u64::from(seq) << d;
        self.depth = d + 1;
        Some(())
    }

    /// `key: value` at `p`, at `indent` in the mapping on top of the stack.
    #[inline(always)]
    fn entry(&mut self, indent: usize, p: usize) -> Option<usize> {
        let b = self.v.b;
        let ke = self.v.key_end(p);
        let key = b.get(p..ke)?;
        if key.is_empty() || key.len() > MAX_KEY || key[0] == b'-' || b.get(ke) != Some(&b':') {
            return None;
        }
        let v = match (b.get(ke + 1), b.get(ke + 2)) {
            // Mostly one space.
            (Some(b' '), Some(&c)) if c != b' ' => ke + 2,
            (None | Some(b'\n' | b'\r'), _) => ke + 1,
            (Some(b' '), _) => self.v.skip_spaces(ke + 1),
            (Some(_), _) => return None,
        };
        let which = match self.depth {
            1 => {
                self.in_metadata = false;
                match key {
                    b"apiVersion" => 1,
                    b"kind" => 2,
                    b"metadata" => {
                        self.in_metadata = true;
                        0
                    }
                    _ => 0,
                }
            }
            2 if self.in_metadata
                && key == b"name"
                && self.seqs & 1 == 0
                && self.indents[0] == 0 =>
            {
                3
            }
            _ => 0,
        };
        // Mostly a plain scalar to the line's end; anything else is read by `value`.
        let (plain, next) = match self.plain_to_line_end(v) {
            Some((end, next)) => (Some((v, end)), next),
            None => self.value(indent, v, true)?,
        };
        if which != 0 {
            // Fields chosen by value, not through a reference to one: a reference would keep
            // the whole state in memory instead of registers.
            let h = &self.head;
            let seen = match which {
                1 => h.api_version.is_some(),
                2 => h.kind.is_some(),
                _ => h.name.is_some(),
            };
            if seen {
                // Said twice: let the full parse decide what that means.
                return None;
            }
            match plain {
                Some((s, e)) => {
                    let text = Some(self.doc.get(s..e)?);
                    match which {
                        1 => self.head.api_version = text,
                        2 => self.head.kind = text,
                        _ => self.head.name = text,
                    }
                }
                None => self.head.opaque = true,
            }
        }
        Some(next)
    }

    /// The common plain scalar at `v`: one that starts with a byte that needs no look at
    /// the next one ([`PLAIN_START`]) and runs to the line's LF without a stop, a trailing
    /// space or a CR. Its end and where the next line starts; `None` for any other value,
    /// which [`Scan::value`] reads (to the same answer for this one).
    #[inline(always)]
    fn plain_to_line_end(&self, v: usize) -> Option<(usize, usize)> {
        let b = self.v.b;
        if !PLAIN_START[usize::from(*b.get(v)?)] {
            return None;
        }
        let s = self.v.stop_or_line_end(v);
        if b.get(s) == Some(&b'\n') && !matches!(b[s - 1], b' ' | b'\r') {
            return Some((s, s + 1));
        }
        None
    }

    /// `- value` at `p`, at `indent` in the sequence on top of the stack.
    #[inline(always)]
    fn item(&mut self, indent: usize, p: usize) -> Option<usize> {
        let b = self.v.b;
        let v = self.v.skip_spaces(p + 1);
        let c = b.get(v).copied().unwrap_or(b'\n');
        if matches!(c, b'\n' | b'\r' | b'#') {
            self.pending = indent as u32;
            self.pending_key = false;
            return Some(self.next_line(v));
        }
        if is_dash(b, v) || c == b'?' || c == b':' {
            return None;
        }
        // `- key: value`: a mapping whose keys sit at the value's column.
        let ke = self.v.key_end(v);
        if ke > v
            && b.get(ke) == Some(&b':')
            && matches!(b.get(ke + 1), None | Some(b' ' | b'\n' | b'\r'))
        {
            self.push(indent + (v - p), false)?;
            return self.entry(indent + (v - p), v);
        }
        self.value(indent, v, false).map(|(_, next)| next)
    }

    /// A value at `v` after `key:` or `-` on the same line. Returns the span of a plain
    /// scalar (`None` for any other accepted value) and where the next line starts; `None`
    /// outside the subset.
    #[allow(clippy::type_complexity)]
    #[inline(always)]
    fn value(
        &mut self,
        indent: usize,
        v: usize,
        after_key: bool,
    ) -> Option<(Option<(usize, usize)>, usize)> {
        let b = self.v.b;
        let c = b.get(v).copied().unwrap_or(b'\n');
        let next = match c {
            b'\n' | b'\r' | b'#' => {
                if after_key {
                    self.pending = indent as u32;
                    self.pending_key = true;
                }
                self.next_line(v)
            }
            b'|' | b'>' => {
                // An optional chomping indicator; an indentation indicator is refused.
                let h = v + 1 + usize::from(matches!(b.get(v + 1), Some(b'-' | b'+')));
                let next = self.trailer(h)?;
                self.block = indent as u32;
                self.content = NONE;
                next
            }
            b'"' | b'\'' | b'{' | b'[' => {
                let end = match c {
                    b'"' => double_quoted(b, v)?,
                    b'\'' => single_quoted(b, v)?,
                    b'{' => (b.get(v + 1) == Some(&b'}')).then_some(v + 2)?,
                    _ => flow_seq(self.v, v)?,
                };
                self.trailer(end)?
            }
            _ => {
                let (end, next) = self.plain(v)?;
                return Some((Some((v, end)), next));
            }
        };
        Some((None, next))
    }

    /// After a value that ends at `from`: nothing but spaces, then the line's end or a
    /// comment (which needs a space before its `#`). Returns where the next line starts.
    #[inline(always)]
    fn trailer(&self, from: usize) -> Option<usize> {
        let i = self.v.skip_spaces(from);
        match self.v.b.get(i) {
            None => Some(i),
            Some(b'\n' | b'\r') => Some(self.next_line(i)),
            Some(b'#') if i > from => Some(self.next_line(i)),
            Some(_) => None,
        }
    }

    /// A one-line plain scalar in block context at `v`, with an optional comment after it:
    /// the end of its text and where the next line starts.
    #[inline(always)]
    fn plain(&self, v: usize) -> Option<(usize, usize)> {
        let b = self.v.b;
        match b.get(v)? {
            // A plain scalar only when a non-space character follows (`ns-plain-first`).
            b'-' | b'?' | b':' if !b.get(v + 1).is_some_and(u8::is_ascii_graphic) => return None,
            b',' | b']' | b'}' | b'#' | b'&' | b'*' | b'!' | b'%' | b'@' | b'`' => return None,
            _ => {}
        }
        // The text ends at the first ` #` (a comment), and may hold no `: ` (nor a `:` at
        // its end): the line's first stop tells.
        let s = self.v.stop_or_line_end(v);
        match b.get(s) {
            Some(b':') => return None,
            // A `#` after a space (a plain scalar's first byte is no `#`).
            Some(b'#') => return Some((trim_end(b, v, s - 1), self.next_line(s))),
            _ => {}
        }
        // The line's end (a CR before it is not text), or the document's. A `:` before a
        // CR or at the document's end is no stop in the bitmaps (they know neither).
        let ce = if b[s - 1] == b'\r' { s - 1 } else { s };
        if (ce < s || s == b.len()) && b[ce - 1] == b':' {
            return None;
        }
        Some((trim_end(b, v, ce), (s + 1).min(b.len())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(doc: &str) -> Option<(Option<&str>, Option<&str>, Option<&str>)> {
        head(doc).map(|h| (h.api_version, h.kind, h.name))
    }

    #[test]
    fn reads_the_head_of_ordinary_manifests() {
        let dep = "---\n# c\napiVersion: apps/v1\nkind: Deployment # x\nmetadata:\n  name: web\n  \
                   labels:\n    app: web\nspec:\n  template:\n    spec:\n      containers:\n      \
                   - name: web\n        image: \"nginx:1\"\n        args: ['a', \"b c\", x.y]\n        \
                   ports:\n        - containerPort: 80\n        env: []\n      volumes:\n      - \
                   name: v\n        configMap: {}\n";
        assert_eq!(
            kind(dep),
            Some((Some("apps/v1"), Some("Deployment"), Some("web")))
        );
        let cm = "apiVersion: v1\r\nkind: ConfigMap\r\nmetadata:\r\n  name: istio\r\ndata:\r\n  \
                  mesh: |-\r\n    a: 1\r\n\r\n      b\r\n  other: >\r\n    x\r\n";
        assert_eq!(
            kind(cm),
            Some((Some("v1"), Some("ConfigMap"), Some("istio")))
        );
        // A sequence at its key's indentation, then more keys.
        let s = "a:\n- x\n- y: 1\n  z: 2\nb: 1\nkind: K\n";
        assert_eq!(kind(s), Some((None, Some("K"), None)));
        // Null values.
        assert_eq!(kind("a:\nb:\n-\nkind:\n"), Some((None, None, None)));
        assert_eq!(kind("a:\nb:\nkind: K\n"), Some((None, Some("K"), None)));
        assert_eq!(kind("---\n"), Some((None, None, None)));
        // A comment ends a plain scalar; what it says does not count.
        assert_eq!(kind("kind: K # x: y\n"), Some((None, Some("K"), None)));
        assert_eq!(kind("kind: K:x #\n"), Some((None, Some("K:x"), None)));
    }

    #[test]
    fn quoted_or_repeated_heads_are_opaque_or_refused() {
        let h = head("apiVersion: v1\nkind: \"Job\"\n").unwrap();
        assert_eq!((h.kind, h.opaque), (None, true));
        assert_eq!(head("kind: A\nkind: B\n"), None);
    }

    #[test]
    fn anything_outside_the_subset_is_refused() {
        for doc in [
            "a: &x 1\n",
            "a: *x\n",
            "a: !!str 1\n",
            "? a\n: b\n",
            "\"a\": 1\n",
            "a: [1, [2]]\n",
            "a: [1, 2\n",
            "a: [a: 1]\n",
            "a: [1,]x\n",
            "a: ['a''b']\n",
            "a: [\"a\\\"\"]\n",
            "a: [-x]\n",
            "a: [1 2]\n",
            "a: {b: 1}\n",
            "a: b\n  c\n",
            "a: b: c\n",
            "a:\tb\n",
            "\ta: b\n",
            "a: \"b\\\"\"\n",
            "a: 'b\n",
            "a: \"b\n",
            "- a\n",
            "a\n",
            " a: 1\nb: 1\n",
            "a:\n  b: 1\n c: 2\n",
            "a:\n  - x\n  b: 1\n",
            "a: |2\n   x\n",
            "a: |\n    x\n  y\n",
            "a: |\n   \n  x\n",
            "a: |x\n",
            "a: - b\n",
            "a: é\n",
            "a: b\rc\n",
            "a:#b\n",
            "a: b:  # c\n",
            "a: b: # c\n",
            "a: b:\n",
            "--- a\n",
            "--- |\n x\n",
            "a: 1\n--- \n",
            "- - a\n",
            "a:\n- - b\n",
            "a: -\n",
            "a: :\n",
            "a: - \n",
            "a: @x\n",
            "a: x\u{7}\n",
            // Control characters the parser rejects wherever they stand.
            "a: \"x\u{4}\"\n",
            "a: 'x\u{1b}'\n",
            "a: 1 # x\u{7f}\n",
            "# \u{0}\na: 1\n",
            "a: |\n  x\u{c}\n",
            "a: [\"\u{8}\"]\n",
        ] {
            assert_eq!(head(doc), None, "{doc:?}");
        }
    }

    #[test]
    fn a_piece_ends_where_it_is_told_whatever_follows_in_the_text() {
        // The bitmaps are of the whole text: a `:` or a key at the piece's end must still
        // be read as at the end of the text.
        let text = "a: b:c\nkind: K\n---\nkind: J\n";
        let mut s = Scanner::new(text);
        assert_eq!(s.head(0..5), None);
        assert_eq!(s.head(0..4).map(|h| h.kind), Some(None));
        assert_eq!(s.head(7..11), None);
        assert_eq!(s.head(7..14).map(|h| h.kind), Some(Some("K")));
        assert_eq!(s.head(15..27).map(|h| h.kind), Some(Some("J")));
        // Out of order and overlapping: each piece is read on its own.
        assert_eq!(s.head(0..7).map(|h| h.kind), Some(None));
        assert_eq!(s.head(0..text.len()), None);
    }
}
