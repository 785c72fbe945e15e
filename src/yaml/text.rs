//! Positions in text: lines, columns, and the punctuation around a node.

/// Start of the line holding byte `at`.
pub(crate) fn line_start(src: &str, at: usize) -> usize {
    src[..at].rfind('\n').map_or(0, |i| i + 1)
}

/// 0-based line and byte column of byte `at`.
pub(crate) fn line_and_byte_col(src: &str, at: usize) -> (usize, usize) {
    let before = &src[..at];
    (before.matches('\n').count(), at - line_start(src, at))
}

/// 1-based line and column (in characters) of a byte offset, for people to read. An offset
/// past the end is the end; one inside a character is that character.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut at = offset.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let (line, _) = line_and_byte_col(text, at);
    let col = text[line_start(text, at)..at].chars().count() + 1;
    (line + 1, col)
}

/// 1-based line and column of a byte offset in bytes that may not be valid UTF-8.
pub(crate) fn line_col_bytes(bytes: &[u8], offset: usize) -> (usize, usize) {
    let upto = String::from_utf8_lossy(&bytes[..offset.min(bytes.len())]);
    line_col(&upto, upto.len())
}

/// 1-based lines and columns of ascending offsets in a batch that starts on line `first`, in
/// one pass (see [`line_col_bytes`]).
pub(crate) fn line_cols(first: u64, bytes: &[u8], offsets: &[usize]) -> Vec<(usize, usize)> {
    let mut out = Vec::with_capacity(offsets.len());
    let (mut pos, mut line) = (0usize, first as usize + 1);
    for &off in offsets {
        let off = off.min(bytes.len()).max(pos);
        line += memchr::memchr_iter(b'\n', &bytes[pos..off]).count();
        pos = off;
        let start = memchr::memrchr(b'\n', &bytes[..off]).map_or(0, |i| i + 1);
        let col = String::from_utf8_lossy(&bytes[start..off]).chars().count() + 1;
        out.push((line, col));
    }
    out
}

/// The `:` that follows a block mapping key ending at `key_end`.
pub(crate) fn colon_after(src: &str, key_end: usize) -> Option<usize> {
    let rest = &src[key_end..];
    let skip = rest.len() - rest.trim_start_matches([' ', '\t']).len();
    (rest[skip..].starts_with(':')).then_some(key_end + skip)
}

/// The `-` that introduces a block sequence item starting at `item`, if only whitespace
/// separates them.
/// A comment between them (`- # note`) is skipped, whatever it holds (`- # a-`).
pub(crate) fn dash_before(src: &str, item: usize) -> Option<usize> {
    let mut end = item;
    loop {
        let start = src[..end].rfind(['\n', '\r']).map_or(0, |i| i + 1);
        let line = &src[start..end];
        // A comment starts at a `#` that begins the line's text or follows a space; before
        // an item there is nothing else a `#` could be.
        let content = match line
            .char_indices()
            .find(|&(h, c)| c == '#' && (h == 0 || line[..h].ends_with([' ', '\t'])))
        {
            Some((h, _)) => &line[..h],
            None => line,
        };
        let content = content.trim_end_matches([' ', '\t']);
        if content.trim_start_matches([' ', '\t']).is_empty() {
            if start == 0 {
                return None;
            }
            end = start - 1;
            continue;
        }
        return content.ends_with('-').then(|| start + content.len() - 1);
    }
}

/// Where the mapping entry whose key starts at `key` begins: the `?` of an explicit key
/// (`? a`, or `?` on a line of its own before the key), else the key itself. `floor` is
/// where the entry before it ends (0 for a mapping's first entry): a `?` before that is the
/// end of that entry's text (a plain scalar `a ?`, a block scalar's last line `x ?`), which
/// reads the same as an indicator line by line.
pub(crate) fn entry_start(src: &str, floor: usize, key: usize) -> usize {
    explicit_key_before(src, key)
        .filter(|&q| q >= floor)
        .unwrap_or(key)
}

/// The `?` explicit-key indicator that ends the last line before `at` with content, past
/// blank and comment-only lines and a trailing comment.
pub(crate) fn explicit_key_before(src: &str, at: usize) -> Option<usize> {
    // Bytes, not chars: every byte looked for is ASCII, and the tree asks this for every
    // block mapping it builds.
    let b = src.as_bytes();
    let mut end = at;
    loop {
        let start = memchr::memrchr2(b'\n', b'\r', &b[..end]).map_or(0, |i| i + 1);
        let line = &b[start..end];
        let content = match memchr::memchr(b'#', line) {
            Some(h) if h == 0 || matches!(line[h - 1], b' ' | b'\t') => &line[..h],
            _ => line,
        };
        let trimmed = content.len()
            - content
                .iter()
                .rev()
                .take_while(|c| matches!(c, b' ' | b'\t'))
                .count();
        let content = &content[..trimmed];
        let blank = if content.is_ascii() {
            content
                .iter()
                .all(|c| c.is_ascii_whitespace() || *c == 0x0b)
        } else {
            // Cut at ASCII bytes, so still UTF-8.
            std::str::from_utf8(content).is_ok_and(|t| t.trim_start().is_empty())
        };
        if blank {
            if start == 0 {
                return None;
            }
            end = start - 1;
            continue;
        }
        let before = content.strip_suffix(b"?")?;
        let indicator = before.is_empty()
            || matches!(
                before.last(),
                Some(b' ' | b'\t' | b'-' | b'{' | b'[' | b',')
            );
        return indicator.then_some(start + before.len());
    }
}

/// Whether the `:` at `at` is a value indicator: followed by white space or the end (in a
/// flow collection, also by `,`, `[`, `]`, `{` or `}`), not the first character of a plain
/// scalar such as `:a`.
pub(crate) fn value_indicator(src: &str, at: usize, flow: bool) -> bool {
    let b = src.as_bytes();
    b.get(at) == Some(&b':')
        && match b.get(at + 1) {
            None | Some(b' ' | b'\t' | b'\n' | b'\r') => true,
            Some(b',' | b'[' | b']' | b'{' | b'}') => flow,
            Some(_) => false,
        }
}

/// The first token after `from` when it is a `:` value indicator of a block mapping (past
/// spaces, line breaks and comments): that of an entry whose key ends at `from`.
pub(crate) fn colon_at_next_token(src: &str, from: usize) -> Option<usize> {
    let bytes = src.as_bytes();
    let mut i = from;
    let mut after_space = true;
    while let Some(&b) = bytes.get(i) {
        match b {
            b' ' | b'\t' | b'\n' | b'\r' => after_space = true,
            b'#' if after_space => {
                i += bytes[i..]
                    .iter()
                    .position(|&c| c == b'\n' || c == b'\r')
                    .unwrap_or(bytes.len() - i);
                continue;
            }
            b':' if value_indicator(src, i, false) => return Some(i),
            _ => return None,
        }
        i += 1;
    }
    None
}

/// Byte column of `at` on its line, where a lone CR also ends a line.
pub(crate) fn byte_col(src: &str, at: usize) -> usize {
    at - src[..at].rfind(['\n', '\r']).map_or(0, |i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `explicit_key_before` as it was written with `str` searches, which the byte version
    /// must answer like at every offset.
    fn explicit_key_before_by_chars(src: &str, at: usize) -> Option<usize> {
        let mut end = at;
        loop {
            let start = src[..end].rfind(['\n', '\r']).map_or(0, |i| i + 1);
            let line = &src[start..end];
            let content = match line.find('#') {
                Some(h) if h == 0 || line[..h].ends_with([' ', '\t']) => &line[..h],
                _ => line,
            };
            let content = content.trim_end_matches([' ', '\t']);
            if content.trim_start().is_empty() {
                if start == 0 {
                    return None;
                }
                end = start - 1;
                continue;
            }
            let before = content.strip_suffix('?')?;
            let indicator = before.is_empty() || before.ends_with([' ', '\t', '-', '{', '[', ',']);
            return indicator.then_some(start + before.len());
        }
    }

    #[test]
    fn explicit_key_before_answers_as_the_char_version() {
        let texts = [
            "? a\n: b\n",
            "?\n  a: 1\n: b",
            "- ? x\n  : y",
            "a: ?\n  b: 1",
            "x?\n  b: 1",
            "? # c\n\n  # d\n\t \n  b: 1",
            "?#c\n  b",
            "{ ?\n b",
            "[?, ?\r\n b",
            "\u{3000}\n?\u{85}\n é ?\n\x0b\x0c\n b",
            "? é # ?\r\r\n\n b",
        ];
        for t in texts {
            for at in (0..=t.len()).filter(|&i| t.is_char_boundary(i)) {
                assert_eq!(
                    explicit_key_before(t, at),
                    explicit_key_before_by_chars(t, at),
                    "{t:?} at {at}"
                );
            }
        }
    }

    #[test]
    fn positions() {
        let s = "ab\nçd\n";
        assert_eq!(line_col(s, 0), (1, 1));
        assert_eq!(line_col(s, 3), (2, 1));
        assert_eq!(line_col(s, 5), (2, 2));
        assert_eq!(line_col(s, 4), (2, 1), "inside a character");
        assert_eq!(line_col(s, 99), (3, 1));
        assert_eq!(line_and_byte_col(s, 5), (1, 2));
        assert_eq!(dash_before("- \n  x", 5), Some(0));
        assert_eq!(dash_before("a x", 2), None);
        assert_eq!(dash_before("- # c d\n  x", 10), Some(0));
        assert_eq!(dash_before("a # c\n  x", 8), None);
        // A comment that ends in `-` is not the indicator (fuzz seed 19470069).
        assert_eq!(dash_before("  - # c dat-\n    x", 17), Some(2));
        assert_eq!(dash_before("- a-\n  x", 8), None);
        assert_eq!(dash_before("- - x", 4), Some(2));
        assert_eq!(dash_before("-\r\n  x", 5), Some(0));
        assert_eq!(dash_before("- # é\n  x", 9), Some(0));
        assert_eq!(dash_before("é\n x", 5), None);
        assert_eq!(colon_after("k  : v", 1), Some(3));
        assert_eq!(entry_start("a:\n  ? k\n", 0, 7), 5);
        assert_eq!(entry_start("?\n  k\n", 0, 4), 0);
        assert_eq!(entry_start("a?k", 0, 2), 2);
        assert_eq!(entry_start("  k: v", 0, 2), 2);
        assert_eq!(entry_start("a: é\n  k", 0, 8), 8);
        // A `?` that ends the entry before is its text, not an indicator.
        assert_eq!(entry_start("a: x ?\nb: 1", 6, 7), 7);
        assert_eq!(entry_start("a: x\n?\nb: 1", 4, 7), 5);
        assert_eq!(colon_at_next_token(" ? a\n # c\n: b", 4), Some(10));
        assert_eq!(colon_at_next_token("? a\n#c: b", 3), None);
        assert_eq!(colon_at_next_token("? a b", 3), None);
        // `:a` is a plain scalar, not the indicator (fuzz seed 2724862855).
        assert_eq!(colon_at_next_token("? a\n:a: 1", 3), None);
        assert_eq!(colon_at_next_token("? a\n:", 3), Some(4));
        assert!(value_indicator("{a:}", 2, true) && !value_indicator("a:}", 1, false));
        assert_eq!(byte_col("ab\rcd", 4), 1);
    }
}
