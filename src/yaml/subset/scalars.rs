//! Scalars and flow sequences on one line, and block scalars: what the subset parser reads
//! inside a line, and the lines of a block scalar.

use super::{Decline, Inline, Parser, R, collection, scalar};
use crate::yaml::bytes::{MAX_KEY, find2, spaces, starts_with_spaces, trim_end};
use crate::yaml::node::{Kind, Node, Text};
use granit_parser::ScalarStyle;

impl Parser<'_> {
    /// A scalar (or a flow collection) at `p`, on a line that ends at `eol`, and whether it
    /// is a key.
    pub(super) fn inline(&self, p: usize, eol: usize) -> R<Inline> {
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
        // The scalar up to `to`, without the spaces before it.
        let node = |to: usize| {
            let end = trim_end(b, p, to);
            scalar(&self.src[p..end], ScalarStyle::Plain, p, end)
        };
        let mut i = p;
        while let Some(j) = find2(b, i, eol, b':', b'#') {
            if b[j] == b':' {
                if j + 1 == eol || b[j + 1] == b' ' {
                    if j - p > MAX_KEY {
                        return Err(Decline);
                    }
                    return Ok(Inline::Key(node(j), j));
                }
            } else if b[j - 1] == b' ' {
                return Ok(Inline::Value(node(j)));
            }
            i = j + 1;
        }
        Ok(Inline::Value(node(eol)))
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
            Text::from(text.replace("''", "'"))
        } else {
            Text::new(text)
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
            let value = &self.src[p + 1..first];
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
        let end = trim_end(b, p, i);
        Ok((scalar(&self.src[p..end], ScalarStyle::Plain, p, end), end))
    }

    /// A literal (`|`) or folded (`>`) block scalar whose indicator is at `p`, on a line that
    /// ends at `eol`; its content is indented more than `parent`.
    pub(super) fn block_scalar(&mut self, p: usize, eol: usize, parent: usize) -> R<(Node, usize)> {
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
        let value = read.is_ok().then(|| Text::new(&text));
        self.scratch.text = text;
        let ((end, stop), value) = (read?, value.unwrap_or_else(|| Text::new("")));
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

/// Appends `n` line breaks.
fn push_breaks(text: &mut String, n: usize) {
    for _ in 0..n {
        text.push('\n');
    }
}
