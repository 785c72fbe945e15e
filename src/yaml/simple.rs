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

#[derive(Clone, Copy, PartialEq, Eq)]
enum Coll {
    Map,
    Seq,
}

/// A value still to come: after `key:` or `-` with nothing on the line.
#[derive(Clone, Copy)]
struct Pending {
    indent: usize,
    after_key: bool,
}

/// Deepest nesting the scanner follows (granit-parser stops at 255).
const MAX_DEPTH: usize = 64;
/// Longest key the scanner reads (YAML limits implicit keys to 1024 characters).
const MAX_KEY: usize = 512;

struct Scan<'a> {
    stack: Vec<(usize, Coll)>,
    pending: Option<Pending>,
    /// A block scalar is open whose parent is at this indentation; its content indentation,
    /// once known.
    block: Option<(usize, Option<usize>)>,
    root_seen: bool,
    /// The top-level key whose value is open (for `metadata.name`).
    root_key: &'a str,
    head: Head<'a>,
    /// The document holds a tab somewhere.
    has_tab: bool,
}

/// Reads one document (a piece from `split::pieces`). `None`: outside the subset.
pub fn head(doc: &str) -> Option<Head<'_>> {
    // One pass over all bytes, without an early exit, that the compiler vectorises; what it
    // finds spares each line its own searches.
    let (mut unprintable, mut has_cr, mut has_tab) = (false, false, false);
    for &b in doc.as_bytes() {
        unprintable |= !is_printable_ascii(b);
        has_cr |= b == b'\r';
        has_tab |= b == b'\t';
    }
    if unprintable {
        return None;
    }
    let mut s = Scan {
        // Deep enough for most manifests without growing.
        stack: Vec::with_capacity(16),
        pending: None,
        block: None,
        root_seen: false,
        root_key: "",
        head: Head::default(),
        has_tab,
    };
    for (i, raw) in lines(doc).enumerate() {
        let line = match raw.strip_suffix('\r') {
            Some(l) if has_cr => l,
            _ => raw,
        };
        if has_cr && line.contains('\r') {
            return None;
        }
        if i == 0 && line.starts_with("---") {
            // The piece's own marker: nothing may follow it but a comment.
            if !rest_is_comment(&line[3..]) {
                return None;
            }
            continue;
        }
        if line.starts_with("---") || line.starts_with("...") {
            return None;
        }
        s.line(line)?;
    }
    // A block scalar still open here just ends with the document (empty if it had no lines).
    Some(s.head)
}

/// The lines of `text`, as `text.split('\n')` gives them, found by a byte loop: faster than
/// the `memchr` behind `split` on lines this short.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let r = rest?;
        match r.bytes().position(|b| b == b'\n') {
            Some(i) => {
                rest = Some(&r[i + 1..]);
                Some(&r[..i])
            }
            None => {
                rest = None;
                Some(r)
            }
        }
    })
}

/// Whether `rest` is empty, whitespace, or whitespace then a comment (which needs a space
/// before its `#`, unless `rest` starts with it right after a space the caller consumed).
fn rest_is_comment(rest: &str) -> bool {
    let t = rest.trim_start_matches(' ');
    t.is_empty() || (t.starts_with('#') && t.len() < rest.len())
}

impl<'a> Scan<'a> {
    fn line(&mut self, line: &'a str) -> Option<()> {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let rest = &line[indent..];
        if let Some((parent, content)) = self.block {
            if rest.is_empty() {
                // Spaces-only lines before the first content line must not be longer than
                // it; stay clear of the rule altogether.
                if content.is_none() && !line.is_empty() {
                    return None;
                }
                return Some(());
            }
            if indent > parent {
                match content {
                    None => self.block = Some((parent, Some(indent))),
                    Some(ci) if indent < ci => return None,
                    Some(_) => {}
                }
                return Some(());
            }
            self.block = None;
        }
        if self.has_tab && rest.contains('\t') {
            return None;
        }
        if rest.is_empty() || rest.starts_with('#') {
            return Some(());
        }
        if let Some(p) = self.pending.take() {
            if indent > p.indent {
                let coll = if is_dash(rest) { Coll::Seq } else { Coll::Map };
                return self.open(indent, coll, rest);
            }
            if indent == p.indent && p.after_key && is_dash(rest) {
                // A sequence at the indentation of its key.
                return self.open(indent, Coll::Seq, rest);
            }
            // Otherwise the value was null: go on with this line.
        }
        if self.stack.is_empty() {
            if self.root_seen || indent != 0 || is_dash(rest) {
                return None;
            }
            self.root_seen = true;
            return self.open(0, Coll::Map, rest);
        }
        while self.stack.last().is_some_and(|&(i, _)| i > indent) {
            self.stack.pop();
        }
        if !is_dash(rest)
            && self.stack.last() == Some(&(indent, Coll::Seq))
            && self.stack.len() >= 2
            && self.stack[self.stack.len() - 2] == (indent, Coll::Map)
        {
            // The end of a sequence that sat at its key's indentation.
            self.stack.pop();
        }
        match self.stack.last() {
            Some(&(i, Coll::Map)) if i == indent => self.entry(indent, rest),
            Some(&(i, Coll::Seq)) if i == indent && is_dash(rest) => self.item(indent, rest),
            _ => None,
        }
    }

    fn open(&mut self, indent: usize, coll: Coll, rest: &'a str) -> Option<()> {
        if self.stack.len() >= MAX_DEPTH {
            return None;
        }
        self.stack.push((indent, coll));
        match coll {
            Coll::Map => self.entry(indent, rest),
            Coll::Seq => self.item(indent, rest),
        }
    }

    /// `key: value` at `indent` in the mapping on top of the stack.
    fn entry(&mut self, indent: usize, rest: &'a str) -> Option<()> {
        let key_len = rest
            .bytes()
            .position(|b| !is_key_byte(b))
            .unwrap_or(rest.len());
        if key_len == 0 || key_len > MAX_KEY || rest.as_bytes()[0] == b'-' {
            return None;
        }
        let key = &rest[..key_len];
        let after = rest[key_len..].strip_prefix(':')?;
        if !(after.is_empty() || after.starts_with(' ')) {
            return None;
        }
        let value = after.trim_start_matches(' ');
        let depth = self.stack.len();
        if depth == 1 {
            self.root_key = key;
        }
        let which = match (depth, key) {
            (1, "apiVersion") => Some(0),
            (1, "kind") => Some(1),
            (2, "name") if self.root_key == "metadata" && self.stack[0] == (0, Coll::Map) => {
                Some(2)
            }
            _ => None,
        };
        let plain = self.value(indent, value, true)?;
        if let Some(which) = which {
            let slot = match which {
                0 => &mut self.head.api_version,
                1 => &mut self.head.kind,
                _ => &mut self.head.name,
            };
            if slot.is_some() {
                // Said twice: let the full parse decide what that means.
                return None;
            }
            match plain {
                Some(v) => *slot = Some(v),
                None => self.head.opaque = true,
            }
        }
        Some(())
    }

    /// `- value` at `indent` in the sequence on top of the stack.
    fn item(&mut self, indent: usize, rest: &'a str) -> Option<()> {
        let after = &rest[1..];
        let value = after.trim_start_matches(' ');
        if value.is_empty() || value.starts_with('#') {
            self.pending = Some(Pending {
                indent,
                after_key: false,
            });
            return Some(());
        }
        let col = indent + (rest.len() - value.len());
        if is_dash(value) || value.starts_with(['?', ':']) {
            return None;
        }
        if looks_like_entry(value) {
            // `- key: value`: a mapping whose keys sit at `col`.
            return self.open(col, Coll::Map, value);
        }
        self.value(indent, value, false).map(|_| ())
    }

    /// A value after `key:` or `-` on the same line. `Some(Some(text))` for a plain scalar,
    /// `Some(None)` for any other accepted value, `None` outside the subset.
    fn value(&mut self, indent: usize, v: &'a str, after_key: bool) -> Option<Option<&'a str>> {
        if v.is_empty() || v.starts_with('#') {
            if after_key {
                self.pending = Some(Pending {
                    indent,
                    after_key: true,
                });
            }
            return Some(None);
        }
        match v.as_bytes()[0] {
            b'|' | b'>' => {
                let header = &v[1..];
                // An optional chomping indicator; an indentation indicator is refused.
                let tail = header.strip_prefix(['-', '+']).unwrap_or(header);
                if !rest_is_comment(tail) {
                    return None;
                }
                self.block = Some((indent, None));
                Some(None)
            }
            b'"' => {
                let body = &v[1..];
                let close = body.find('"')?;
                if body[..close].contains('\\') || !rest_is_comment(&body[close + 1..]) {
                    return None;
                }
                Some(None)
            }
            b'\'' => {
                let body = &v.as_bytes()[1..];
                let mut i = 0;
                loop {
                    match body.get(i)? {
                        b'\'' if body.get(i + 1) == Some(&b'\'') => i += 2,
                        b'\'' => break,
                        _ => i += 1,
                    }
                }
                if !rest_is_comment(&v[1 + i + 1..]) {
                    return None;
                }
                Some(None)
            }
            b'{' => {
                if !v.starts_with("{}") || !rest_is_comment(&v[2..]) {
                    return None;
                }
                Some(None)
            }
            b'[' => {
                let end = flow_seq(v)?;
                if !rest_is_comment(&v[end..]) {
                    return None;
                }
                Some(None)
            }
            _ => plain(v).map(Some),
        }
    }
}

/// A one-line plain scalar in block context, with an optional comment after it. Returns the
/// scalar's text.
fn plain(v: &str) -> Option<&str> {
    let b = v.as_bytes();
    match b[0] {
        // A plain scalar only when a non-space character follows (`ns-plain-first`).
        b'-' | b'?' | b':' if !b.get(1).is_some_and(|c| c.is_ascii_graphic()) => return None,
        b',' | b']' | b'}' | b'#' | b'&' | b'*' | b'!' | b'%' | b'@' | b'`' => return None,
        _ => {}
    }
    // One pass over the bytes (this runs for most values of most documents): the text ends
    // at the first ` #` (a comment), and may hold no `: ` nor control character. A `: `
    // whose space is trimmed off the end leaves a text ending in `:`, refused below.
    let mut cut = b.len();
    for (i, &c) in b.iter().enumerate() {
        if c.is_ascii_control() {
            return None;
        }
        let next = b.get(i + 1);
        if i < cut {
            if c == b' ' && next == Some(&b'#') {
                cut = i;
            } else if c == b':' && next == Some(&b' ') && i + 1 < cut {
                return None;
            }
        }
    }
    let text = v[..cut].trim_end_matches(' ');
    if text.ends_with(':') {
        return None;
    }
    Some(text)
}

/// A one-line flow sequence of simple scalars, `[]`, `[a, "b", 'c']`: the length up to and
/// including its `]`. Plain items are limited to key characters; quoted items to one line
/// without escapes.
fn flow_seq(v: &str) -> Option<usize> {
    let b = v.as_bytes();
    let mut i = 1;
    let skip_spaces = |i: &mut usize| {
        while b.get(*i) == Some(&b' ') {
            *i += 1;
        }
    };
    skip_spaces(&mut i);
    if b.get(i) == Some(&b']') {
        return Some(i + 1);
    }
    loop {
        match *b.get(i)? {
            b'"' => {
                let close = v[i + 1..].find('"')?;
                if v[i + 1..i + 1 + close].contains('\\') {
                    return None;
                }
                i += close + 2;
            }
            b'\'' => {
                let close = v[i + 1..].find('\'')?;
                if b.get(i + 1 + close + 1) == Some(&b'\'') {
                    return None;
                }
                i += close + 2;
            }
            c if is_key_byte(c) && c != b'-' => {
                while b.get(i).copied().is_some_and(is_key_byte) {
                    i += 1;
                }
            }
            _ => return None,
        }
        skip_spaces(&mut i);
        match *b.get(i)? {
            b',' => {
                i += 1;
                skip_spaces(&mut i);
            }
            b']' => return Some(i + 1),
            _ => return None,
        }
    }
}

/// The ASCII part of YAML's printable set (`c-printable`): tab, line breaks and `0x20..=0x7E`.
/// Every other ASCII byte (C0 controls, DEL) is an error for the parser wherever it stands,
/// in a comment or a quoted scalar too, so the scanner must not pass it through.
fn is_printable_ascii(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | b'\r' | 0x20..=0x7e)
}

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

fn is_dash(rest: &str) -> bool {
    rest == "-" || rest.starts_with("- ")
}

/// Whether `v` starts with a plain key followed by `:` and a space or the end.
fn looks_like_entry(v: &str) -> bool {
    let n = v.bytes().position(|b| !is_key_byte(b)).unwrap_or(v.len());
    n > 0 && v[n..].starts_with(':') && matches!(v.as_bytes().get(n + 1), None | Some(b' '))
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
}
