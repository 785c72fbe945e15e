//! Byte searches for the subset parser: lines and the tokens on them are short (a few
//! dozen bytes), so they are searched eight bytes at a time in a register, which costs less
//! than setting up a vector search.

/// Whether every byte is printable ASCII or a line feed. One pass without an early exit,
/// which the compiler vectorises.
pub(super) fn printable_ascii(b: &[u8]) -> bool {
    b.iter().fold(true, |ok, &c| {
        ok & ((0x20..0x7f).contains(&c) | (c == b'\n'))
    })
}

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
pub(super) fn find2(b: &[u8], from: usize, to: usize, x: u8, y: u8) -> Option<usize> {
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
pub(super) fn spaces(line: &[u8]) -> usize {
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

/// The end of `b[from..to]` without the spaces it ends with.
pub(super) fn trim_end(b: &[u8], from: usize, to: usize) -> usize {
    from + b[from..to]
        .iter()
        .rposition(|&c| c != b' ')
        .map_or(0, |i| i + 1)
}

/// Appends `n` line breaks.
pub(super) fn push_breaks(text: &mut String, n: usize) {
    for _ in 0..n {
        text.push('\n');
    }
}

/// Whether `line` (from its first byte) is a document marker, `---` or `...`.
pub(super) fn is_marker(line: &[u8]) -> bool {
    (line.starts_with(b"---") || line.starts_with(b"..."))
        && matches!(line.get(3), None | Some(b' '))
}

/// Whether `line` begins with `n` spaces: a word at a time, the last word overlapping the
/// one before it.
pub(super) fn starts_with_spaces(line: &[u8], n: usize) -> bool {
    const BLANK: u64 = (b' ' as u64) * ONES;
    match line.get(..n) {
        Some(head) if n >= 8 => {
            head.chunks_exact(8).all(|c| word(c) == BLANK) && word(&head[n - 8..]) == BLANK
        }
        Some(head) => head.iter().all(|&c| c == b' '),
        None => false,
    }
}
