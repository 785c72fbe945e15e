//! The byte layer under meshjob's own YAML readers: the quick scanner (`yaml::quick`), the
//! subset parser (`yaml::subset`) and the stream splitter (`yaml::split`, and through it
//! `stream::Reader`). What they share is written once here: the limits they read within,
//! the word-at-a-time searches of short lines, the document marker test and the lone CR.
//! It imports nothing of the crate.
//!
//! Lines and the tokens on them are short (a few dozen bytes), so they are searched eight
//! bytes at a time in a register, which costs less than setting up a vector search. The
//! words are read little-endian, so the lowest marked byte of a mask is the first in the
//! text; [`zero_bytes`] marks a zero byte exactly when no zero byte comes before it, which
//! is all a search for the first one needs.

/// Deepest nesting the readers follow (granit-parser stops at 255). At most 64: the quick
/// scanner keeps one bit of a `u64` per level, and indexes its stack modulo this.
pub(crate) const MAX_DEPTH: usize = 64;
const _: () = assert!(MAX_DEPTH <= 64 && MAX_DEPTH.is_power_of_two());

/// Longest key the readers read (YAML limits implicit keys to 1024 characters).
pub(crate) const MAX_KEY: usize = 512;

/// A byte order mark, as UTF-8.
pub(crate) const BOM: &[u8] = "\u{feff}".as_bytes();

/// Whether `line` (from its start) begins with the marker `m` (`---` or `...`) followed by
/// whitespace, a line break or the end of the text (YAML 1.2, `c-directives-end` and
/// `c-document-end`).
#[inline]
pub(crate) fn is_marker(line: &[u8], m: &[u8; 3]) -> bool {
    line.starts_with(m) && matches!(line.get(3), None | Some(b' ' | b'\t' | b'\r' | b'\n'))
}

/// Whether `b` begins with `---` or `...`, whatever follows: a line the quick scanner and
/// the subset parser leave to the full parser, marker or not.
#[inline(always)]
pub(crate) fn starts_like_marker(b: &[u8]) -> bool {
    b.starts_with(b"---") || b.starts_with(b"...")
}

/// The offset of the first CR that is not part of a CRLF (one at the end of `b` is lone
/// too). YAML reads it as a line break, so a line that holds one holds more than one line.
#[inline]
pub(crate) fn lone_cr(b: &[u8]) -> Option<usize> {
    memchr::memchr_iter(b'\r', b).find(|&i| b.get(i + 1) != Some(&b'\n'))
}

/// Whether every byte is printable ASCII or a line feed. One pass without an early exit,
/// which the compiler vectorises.
pub(crate) fn printable_ascii(b: &[u8]) -> bool {
    b.iter().fold(true, |ok, &c| {
        ok & ((0x20..0x7f).contains(&c) | (c == b'\n'))
    })
}

/// Each byte of a word set to 1.
pub(crate) const ONES: u64 = u64::from_ne_bytes([1; 8]);
/// The high bit of each byte of a word.
pub(crate) const HIGH: u64 = ONES << 7;

/// The eight bytes of `c` (a chunk of eight) as one word.
#[inline]
fn chunk_word(c: &[u8]) -> u64 {
    u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])
}

/// The eight bytes at `i`, when there are eight.
#[inline(always)]
fn word_at(b: &[u8], i: usize) -> Option<u64> {
    let w = b.get(i..)?.first_chunk::<8>()?;
    Some(u64::from_le_bytes(*w))
}

/// The high bit of each byte of `x` that is zero (exact up to the first one, which is all
/// that is read of it).
#[inline(always)]
fn zero_bytes(x: u64) -> u64 {
    x.wrapping_sub(ONES) & !x & HIGH
}

/// The high bit of each byte of `w` equal to `byte` (exact up to the first one).
#[inline(always)]
fn equal(w: u64, byte: u8) -> u64 {
    zero_bytes(w ^ (u64::from(byte) * ONES))
}

/// The first offset in `b[from..to]` that holds `x` or `y`.
#[inline]
pub(crate) fn find2(b: &[u8], from: usize, to: usize, x: u8, y: u8) -> Option<usize> {
    let mut chunks = b[from..to].chunks_exact(8);
    let mut at = from;
    for c in &mut chunks {
        let w = chunk_word(c);
        let m = equal(w, x) | equal(w, y);
        if m != 0 {
            return Some(at + (m.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    let rest = chunks.remainder();
    rest.iter().position(|&c| c == x || c == y).map(|i| at + i)
}

/// The position of the first `x`, `y` or `z` at or after `i`, or the text's length.
#[inline(always)]
pub(crate) fn find3(b: &[u8], mut i: usize, x: u8, y: u8, z: u8) -> usize {
    let (xs, ys, zs) = (
        ONES * u64::from(x),
        ONES * u64::from(y),
        ONES * u64::from(z),
    );
    while let Some(w) = word_at(b, i) {
        let m = zero_bytes(w ^ xs) | zero_bytes(w ^ ys) | zero_bytes(w ^ zs);
        if m != 0 {
            return i + (m.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while i < b.len() && b[i] != x && b[i] != y && b[i] != z {
        i += 1;
    }
    i.min(b.len())
}

/// Number of spaces `line` starts with.
pub(crate) fn spaces(line: &[u8]) -> usize {
    let mut chunks = line.chunks_exact(8);
    let mut n = 0;
    for c in &mut chunks {
        let other = chunk_word(c) ^ (u64::from(b' ') * ONES);
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

/// Whether `line` begins with `n` spaces: a word at a time, the last word overlapping the
/// one before it.
pub(crate) fn starts_with_spaces(line: &[u8], n: usize) -> bool {
    const BLANK: u64 = (b' ' as u64) * ONES;
    match line.get(..n) {
        Some(head) if n >= 8 => {
            head.chunks_exact(8).all(|c| chunk_word(c) == BLANK)
                && chunk_word(&head[n - 8..]) == BLANK
        }
        Some(head) => head.iter().all(|&c| c == b' '),
        None => false,
    }
}

/// `end` with the spaces before it (down to `from`) taken off.
#[inline(always)]
pub(crate) fn trim_end(b: &[u8], from: usize, mut end: usize) -> usize {
    while end > from && b[end - 1] == b' ' {
        end -= 1;
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_searches_agree_with_a_byte_loop() {
        // Every byte value at every place of a word, and texts ending within a word.
        for c in 0..=255u8 {
            for at in 0..12 {
                let mut t = [b'a'; 12];
                t[at] = c;
                for len in [at + 1, 12] {
                    let b = &t[..len];
                    let of3 = b.iter().position(|&x| matches!(x, b'"' | b'\\' | b'\n'));
                    assert_eq!(find3(b, 0, b'"', b'\\', b'\n'), of3.unwrap_or(len));
                    let of2 = b.iter().position(|&x| matches!(x, b':' | b'#'));
                    assert_eq!(find2(b, 0, len, b':', b'#'), of2);
                }
            }
        }
    }

    #[test]
    fn spaces_trim_and_markers() {
        for n in 0..20 {
            let line = format!("{}x ", " ".repeat(n));
            assert_eq!(spaces(line.as_bytes()), n);
            assert!(starts_with_spaces(line.as_bytes(), n));
            assert!(!starts_with_spaces(line.as_bytes(), n + 1));
        }
        assert_eq!(trim_end(b"ab   ", 0, 5), 2);
        assert_eq!(trim_end(b"   ", 1, 3), 1);
        for (line, marker) in [
            ("---", true),
            ("--- a", true),
            ("---\t", true),
            ("---\r\n", true),
        ] {
            assert_eq!(is_marker(line.as_bytes(), b"---"), marker, "{line:?}");
        }
        for line in ["---a", "--", "...x", " ---"] {
            assert!(!is_marker(line.as_bytes(), b"---"), "{line:?}");
            assert!(!is_marker(line.as_bytes(), b"..."), "{line:?}");
        }
        assert!(
            starts_like_marker(b"---a") && starts_like_marker(b"...") && !starts_like_marker(b"--")
        );
    }

    #[test]
    fn a_lone_cr_is_one_without_a_line_feed_after_it() {
        assert_eq!(lone_cr(b"a\r\nb\r\n"), None);
        assert_eq!(lone_cr(b"a\r\nb\rc"), Some(4));
        assert_eq!(lone_cr(b"a\r"), Some(1));
        assert_eq!(lone_cr(b""), None);
    }
}
