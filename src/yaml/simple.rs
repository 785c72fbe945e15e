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
//! bytes once with positions (no `str` slicing, no line iterator), finds line ends, special
//! bytes, indentation and the end of a key eight bytes at a time (SWAR: a `u64` per step), and
//! keeps its stack in a fixed array. One pass over the whole document first makes sure that
//! every byte is printable ASCII; the rare documents with a CR or a tab are read by the
//! same code with a few more checks.

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

/// A value still to come: after `key:` or `-` with nothing on the line.
#[derive(Clone, Copy)]
struct Pending {
    indent: usize,
    after_key: bool,
}

/// Deepest nesting the scanner follows (granit-parser stops at 255). At most 64: one bit of
/// [`Scan::seqs`] per level.
const MAX_DEPTH: usize = 64;
/// Longest key the scanner reads (YAML limits implicit keys to 1024 characters).
const MAX_KEY: usize = 512;

struct Scan<'a, 's> {
    doc: &'a str,
    b: &'a [u8],
    /// The open collections, outermost first: the indentation of each (`depth` of them),
    /// and bit `i` of `seqs` set when collection `i` is a sequence (else a mapping). The
    /// array lives outside, so that the compiler keeps the other fields in registers.
    indents: &'s mut [u32; MAX_DEPTH],
    seqs: u64,
    depth: usize,
    pending: Option<Pending>,
    /// A block scalar is open whose parent is at this indentation; its content indentation,
    /// once known.
    block: Option<(usize, Option<usize>)>,
    root_seen: bool,
    /// The top-level key whose value is open is `metadata` (for `metadata.name`).
    in_metadata: bool,
    head: Head<'a>,
    /// The document holds a tab somewhere.
    has_tab: bool,
}

/// Reads one document (a piece from `split::pieces`). `None`: outside the subset.
pub fn head(doc: &str) -> Option<Head<'_>> {
    let b = doc.as_bytes();
    let has_tab = check_bytes(b)?;
    let mut indents = [0; MAX_DEPTH];
    let mut s = Scan {
        doc,
        b,
        indents: &mut indents,
        seqs: 0,
        depth: 0,
        pending: None,
        block: None,
        root_seen: false,
        in_metadata: false,
        head: Head::default(),
        has_tab,
    };
    let mut at = 0;
    if b.starts_with(b"---") {
        // The piece's own marker: nothing may follow it but a comment.
        at = s.trailer(3)?;
    }
    while at < b.len() {
        at = s.line(at)?;
    }
    // A block scalar still open here just ends with the document (empty if it had no lines).
    Some(s.head)
}

/// Checks that every byte is printable ASCII, a tab or a line break, and that every CR ends
/// a line (is followed by a LF, or ends the text): then a CR can only stand right before a
/// line's LF, and the scanner treats it as the end of the line's content. Returns whether the
/// text holds a tab; `None` when a byte is outside that set, or a CR stands alone.
fn check_bytes(b: &[u8]) -> Option<bool> {
    // One pass without an early exit, that the compiler vectorises: anything but LF and
    // `0x20..=0x7E` is rare, and looked at again only when there is some.
    let odd = b.iter().fold(false, |o, &c| {
        o | (c != b'\n' && c.wrapping_sub(0x20) > 0x5e)
    });
    if !odd {
        return Some(false);
    }
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

impl<'a> Scan<'a, '_> {
    /// Reads the line that starts at `ls`; returns where the next one starts.
    #[inline(always)]
    fn line(&mut self, ls: usize) -> Option<usize> {
        let b = self.b;
        let p = skip_spaces(b, ls);
        let indent = p - ls;
        let c = b.get(p).copied().unwrap_or(b'\n');
        // A CR stands only before a LF (`check_bytes`): either ends the line's content.
        let empty = c == b'\n' || c == b'\r';
        if let Some((parent, content)) = self.block {
            if empty {
                // Spaces-only lines before the first content line must not be longer than
                // it; stay clear of the rule altogether.
                if content.is_none() && indent > 0 {
                    return None;
                }
                return Some(next_line(b, p));
            }
            if indent > parent {
                match content {
                    None => self.block = Some((parent, Some(indent))),
                    Some(ci) if indent < ci => return None,
                    Some(_) => {}
                }
                return Some(next_line(b, p));
            }
            self.block = None;
        }
        if self.has_tab && b.get(p..find_line_end(b, p))?.contains(&b'\t') {
            return None;
        }
        if empty || c == b'#' {
            return Some(next_line(b, p));
        }
        let d = self.depth;
        if self.pending.is_none()
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
        if indent == 0 && (b[p..].starts_with(b"---") || b[p..].starts_with(b"...")) {
            return None;
        }
        let dash = is_dash(b, p);
        if let Some(pd) = self.pending.take() {
            if indent > pd.indent {
                return self.open(indent, dash, p);
            }
            if indent == pd.indent && pd.after_key && dash {
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

    #[inline(always)]
    fn is_seq(&self, level: usize) -> bool {
        self.seqs >> level & 1 == 1
    }

    /// Opens a collection at `indent` whose first entry (or item) starts at `p`.
    #[inline(always)]
    fn open(&mut self, indent: usize, seq: bool, p: usize) -> Option<usize> {
        let d = self.depth;
        if d >= MAX_DEPTH {
            return None;
        }
        self.indents[d] = u32::try_from(indent).ok()?;
        self.seqs = self.seqs & !(1 << d) | u64::from(seq) << d;
        self.depth = d + 1;
        match seq {
            false => self.entry(indent, p),
            true => self.item(indent, p),
        }
    }

    /// `key: value` at `p`, at `indent` in the mapping on top of the stack.
    #[inline(always)]
    fn entry(&mut self, indent: usize, p: usize) -> Option<usize> {
        let b = self.b;
        let ke = key_end(b, p);
        let key = &b[p..ke];
        if key.is_empty() || key.len() > MAX_KEY || key[0] == b'-' || b.get(ke) != Some(&b':') {
            return None;
        }
        let v = match (b.get(ke + 1), b.get(ke + 2)) {
            (None | Some(b'\n' | b'\r'), _) => ke + 1,
            // Mostly one space.
            (Some(b' '), Some(&c)) if c != b' ' => ke + 2,
            (Some(b' '), _) => skip_spaces(b, ke + 1),
            (Some(_), _) => return None,
        };
        let which = match self.depth {
            1 => {
                self.in_metadata = key == b"metadata";
                match key {
                    b"apiVersion" => 1,
                    b"kind" => 2,
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
        let (plain, next) = self.value(indent, v, true)?;
        if which != 0 {
            let slot = match which {
                1 => &mut self.head.api_version,
                2 => &mut self.head.kind,
                _ => &mut self.head.name,
            };
            if slot.is_some() {
                // Said twice: let the full parse decide what that means.
                return None;
            }
            match plain {
                Some((s, e)) => *slot = Some(self.doc.get(s..e)?),
                None => self.head.opaque = true,
            }
        }
        Some(next)
    }

    /// `- value` at `p`, at `indent` in the sequence on top of the stack.
    fn item(&mut self, indent: usize, p: usize) -> Option<usize> {
        let b = self.b;
        let v = skip_spaces(b, p + 1);
        let c = b.get(v).copied().unwrap_or(b'\n');
        if matches!(c, b'\n' | b'\r' | b'#') {
            self.pending = Some(Pending {
                indent,
                after_key: false,
            });
            return Some(next_line(b, v));
        }
        if is_dash(b, v) || c == b'?' || c == b':' {
            return None;
        }
        // `- key: value`: a mapping whose keys sit at the value's column.
        let ke = key_end(b, v);
        if ke > v
            && b.get(ke) == Some(&b':')
            && matches!(b.get(ke + 1), None | Some(b' ' | b'\n' | b'\r'))
        {
            return self.open(indent + (v - p), false, v);
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
        let b = self.b;
        let c = b.get(v).copied().unwrap_or(b'\n');
        let next = match c {
            b'\n' | b'\r' | b'#' => {
                if after_key {
                    self.pending = Some(Pending {
                        indent,
                        after_key: true,
                    });
                }
                next_line(b, v)
            }
            b'|' | b'>' => {
                // An optional chomping indicator; an indentation indicator is refused.
                let h = v + 1 + usize::from(matches!(b.get(v + 1), Some(b'-' | b'+')));
                let next = self.trailer(h)?;
                self.block = Some((indent, None));
                next
            }
            b'"' => {
                // One line, without escapes.
                let q = find3(b, v + 1, b'"', b'\\', b'\n');
                if b.get(q) != Some(&b'"') {
                    return None;
                }
                self.trailer(q + 1)?
            }
            b'\'' => {
                let mut i = v + 1;
                loop {
                    i = find3(b, i, b'\'', b'\n', b'\n');
                    if b.get(i) != Some(&b'\'') {
                        return None;
                    }
                    if b.get(i + 1) != Some(&b'\'') {
                        break;
                    }
                    i += 2;
                }
                self.trailer(i + 1)?
            }
            b'{' => {
                if b.get(v + 1) != Some(&b'}') {
                    return None;
                }
                self.trailer(v + 2)?
            }
            b'[' => {
                let end = flow_seq(b, v)?;
                self.trailer(end)?
            }
            _ => {
                let (end, next) = plain(b, v)?;
                return Some((Some((v, end)), next));
            }
        };
        Some((None, next))
    }

    /// After a value that ends at `from`: nothing but spaces, then the line's end or a
    /// comment (which needs a space before its `#`). Returns where the next line starts.
    #[inline(always)]
    fn trailer(&self, from: usize) -> Option<usize> {
        let b = self.b;
        let i = skip_spaces(b, from);
        match b.get(i) {
            None => Some(b.len()),
            Some(b'\n' | b'\r') => Some(next_line(b, i)),
            Some(b'#') if i > from => Some(next_line(b, i)),
            Some(_) => None,
        }
    }
}

/// A one-line plain scalar in block context at `v`, with an optional comment after it: the
/// end of its text and where the next line starts.
#[inline(always)]
fn plain(b: &[u8], v: usize) -> Option<(usize, usize)> {
    match b.get(v)? {
        // A plain scalar only when a non-space character follows (`ns-plain-first`).
        b'-' | b'?' | b':' if !b.get(v + 1).is_some_and(u8::is_ascii_graphic) => return None,
        b',' | b']' | b'}' | b'#' | b'&' | b'*' | b'!' | b'%' | b'@' | b'`' => return None,
        _ => {}
    }
    // The text ends at the first ` #` (a comment), and may hold no `: ` (nor a `:` at its
    // end); only `:`, `#` and the line's end need a look.
    let mut i = v;
    loop {
        i = find3(b, i, b'\n', b':', b'#');
        match b.get(i) {
            Some(b':') => {
                if matches!(b.get(i + 1), None | Some(b' ' | b'\n' | b'\r')) {
                    return None;
                }
                i += 1;
            }
            Some(b'#') => {
                if i > v && b[i - 1] == b' ' {
                    return Some((trim_end(b, v, i - 1), next_line(b, i)));
                }
                i += 1;
            }
            _ => {
                // The line's end (a CR before it is not text), or the text's.
                let end = if i > v && b[i - 1] == b'\r' { i - 1 } else { i };
                return Some((trim_end(b, v, end), (i + 1).min(b.len())));
            }
        }
    }
}

/// A one-line flow sequence of simple scalars at `v`, `[]`, `[a, "b", 'c']`: the position
/// after its `]`. Plain items are limited to key characters; quoted items to one line
/// without escapes.
fn flow_seq(b: &[u8], v: usize) -> Option<usize> {
    let mut i = skip_spaces(b, v + 1);
    if b.get(i) == Some(&b']') {
        return Some(i + 1);
    }
    loop {
        match *b.get(i)? {
            b'"' => {
                let close = find3(b, i + 1, b'"', b'\\', b'\n');
                if b.get(close) != Some(&b'"') {
                    return None;
                }
                i = close + 1;
            }
            b'\'' => {
                let close = find3(b, i + 1, b'\'', b'\n', b'\n');
                if b.get(close) != Some(&b'\'') || b.get(close + 1) == Some(&b'\'') {
                    return None;
                }
                i = close + 1;
            }
            c if is_key_byte(c) && c != b'-' => i = key_end(b, i),
            _ => return None,
        }
        i = skip_spaces(b, i);
        match *b.get(i)? {
            b',' => i = skip_spaces(b, i + 1),
            b']' => return Some(i + 1),
            _ => return None,
        }
    }
}

/// `end` with the spaces before it (down to `from`) taken off.
#[inline(always)]
fn trim_end(b: &[u8], from: usize, mut end: usize) -> usize {
    while end > from && b[end - 1] == b' ' {
        end -= 1;
    }
    end
}

#[inline(always)]
fn is_dash(b: &[u8], p: usize) -> bool {
    b.get(p) == Some(&b'-') && matches!(b.get(p + 1), None | Some(b' ' | b'\n' | b'\r'))
}

#[inline(always)]
fn is_key_byte(b: u8) -> bool {
    KEY_BYTES[b as usize]
}

/// The bytes of a plain key the scanner reads: letters, digits, `_`, `.`, `/` and `-`.
static KEY_BYTES: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'/' | b'-');
        b += 1;
    }
    t
};

// Eight bytes at a time. The words are read little-endian, so the lowest marked byte of a
// mask is the first in the text; `has_zero` marks a zero byte exactly when no zero byte
// comes before it, which is all a search for the first one needs.

const ONES: u64 = u64::from_ne_bytes([1; 8]);
const HIGH: u64 = ONES << 7;

/// The eight bytes at `i`, when there are eight.
#[inline(always)]
fn word(b: &[u8], i: usize) -> Option<u64> {
    let w = b.get(i..)?.first_chunk::<8>()?;
    Some(u64::from_le_bytes(*w))
}

/// The high bit of each byte of `x` that is zero (and maybe of bytes after the first).
#[inline(always)]
fn has_zero(x: u64) -> u64 {
    x.wrapping_sub(ONES) & !x & HIGH
}

/// The position of the first byte in a mask of high bits.
#[inline(always)]
fn first(mask: u64) -> usize {
    (mask.trailing_zeros() / 8) as usize
}

/// The position of the first `x`, `y` or `z` at or after `i`, or the text's length.
#[inline(always)]
fn find3(b: &[u8], mut i: usize, x: u8, y: u8, z: u8) -> usize {
    let (xs, ys, zs) = (
        ONES * u64::from(x),
        ONES * u64::from(y),
        ONES * u64::from(z),
    );
    while let Some(w) = word(b, i) {
        let m = has_zero(w ^ xs) | has_zero(w ^ ys) | has_zero(w ^ zs);
        if m != 0 {
            return i + first(m);
        }
        i += 8;
    }
    while i < b.len() && b[i] != x && b[i] != y && b[i] != z {
        i += 1;
    }
    i.min(b.len())
}

/// The position of the LF that ends the line `i` is on, or the text's length.
#[inline(always)]
fn find_line_end(b: &[u8], i: usize) -> usize {
    find3(b, i, b'\n', b'\n', b'\n')
}

/// Where the line after the one `i` is on starts (the text's length after the last line).
#[inline(always)]
fn next_line(b: &[u8], i: usize) -> usize {
    (find_line_end(b, i) + 1).min(b.len())
}

/// The position of the first byte at or after `i` that is not a space.
#[inline(always)]
fn skip_spaces(b: &[u8], mut i: usize) -> usize {
    while let Some(w) = word(b, i) {
        let other = w ^ (ONES * u64::from(b' '));
        if other != 0 {
            return i + (other.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while b.get(i) == Some(&b' ') {
        i += 1;
    }
    i.min(b.len())
}

/// The position of the first byte at or after `i` that is not a key byte ([`KEY_BYTES`]).
#[inline(always)]
fn key_end(b: &[u8], mut i: usize) -> usize {
    while let Some(w) = word(b, i) {
        let m = non_key(w);
        if m != 0 {
            return i + first(m);
        }
        i += 8;
    }
    while b.get(i).copied().is_some_and(is_key_byte) {
        i += 1;
    }
    i.min(b.len())
}

/// The high bit of each byte of `x` that is not a key byte ([`KEY_BYTES`]), exactly.
#[inline(always)]
fn non_key(x: u64) -> u64 {
    // On seven-bit bytes, adding `0x80 - k` to each sets its high bit exactly when it is at
    // least `k`, and never carries into the next byte.
    let low = x & !HIGH;
    let at_least = |v: u64, k: u8| v.wrapping_add(ONES * u64::from(0x80 - k)) & HIGH;
    // `-`, `.`, `/` and the digits are 0x2D..=0x39; letters, folded to lower case, 0x61..=0x7A.
    let digit = at_least(low, 0x2d) & !at_least(low, 0x3a);
    let lower = low | (ONES * 0x20);
    let letter = at_least(lower, b'a') & !at_least(lower, b'z' + 1);
    let under = at_least(low, b'_') & !at_least(low, b'_' + 1);
    // A byte with its high bit set is not ASCII: never a key byte.
    !(digit | letter | under) & HIGH | x & HIGH
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
    fn word_at_a_time_helpers_agree_with_byte_loops() {
        // Every byte value at every place of a word, and texts ending within a word.
        for c in 0..=255u8 {
            for at in 0..12 {
                let mut t = [b'a'; 12];
                t[at] = c;
                for len in [at + 1, 12] {
                    let b = &t[..len];
                    let key = b.iter().position(|&x| !is_key_byte(x)).unwrap_or(len);
                    assert_eq!(key_end(b, 0), key, "{c} {at} {len}");
                    let nl = b.iter().position(|&x| x == b'\n').unwrap_or(len);
                    assert_eq!(find_line_end(b, 0), nl, "{c} {at} {len}");
                    let of3 = b.iter().position(|&x| matches!(x, b':' | b'#' | b'\n'));
                    assert_eq!(find3(b, 0, b'\n', b':', b'#'), of3.unwrap_or(len));
                    let mut s = [b' '; 12];
                    s[at] = c;
                    let s = &s[..len];
                    let sp = s.iter().position(|&x| x != b' ').unwrap_or(len);
                    assert_eq!(skip_spaces(s, 0), sp, "{c} {at} {len}");
                }
            }
        }
    }
}
