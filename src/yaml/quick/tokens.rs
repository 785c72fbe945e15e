//! The tokens the quick scanner reads past a key or a dash: one-line quoted scalars and
//! flow sequences, and the byte classes of keys and plain scalars.

use super::masks::View;
use crate::yaml::bytes::find3;

/// A one-line double-quoted scalar without escapes at `v`: the position after it.
pub(super) fn double_quoted(b: &[u8], v: usize) -> Option<usize> {
    let q = find3(b, v + 1, b'"', b'\\', b'\n');
    (b.get(q) == Some(&b'"')).then_some(q + 1)
}

/// A one-line single-quoted scalar at `v`: the position after it.
pub(super) fn single_quoted(b: &[u8], v: usize) -> Option<usize> {
    let mut i = v + 1;
    loop {
        i = find3(b, i, b'\'', b'\n', b'\n');
        if b.get(i) != Some(&b'\'') {
            return None;
        }
        if b.get(i + 1) != Some(&b'\'') {
            return Some(i + 1);
        }
        i += 2;
    }
}

/// A one-line flow sequence of simple scalars at `v`, `[]`, `[a, "b", 'c']`: the position
/// after its `]`. Plain items are limited to key characters; quoted items to one line
/// without escapes.
pub(super) fn flow_seq(t: View<'_>, v: usize) -> Option<usize> {
    let b = t.b;
    let mut i = t.skip_spaces(v + 1);
    if b.get(i) == Some(&b']') {
        return Some(i + 1);
    }
    loop {
        match *b.get(i)? {
            b'"' => i = double_quoted(b, i)?,
            b'\'' => {
                let close = find3(b, i + 1, b'\'', b'\n', b'\n');
                if b.get(close) != Some(&b'\'') || b.get(close + 1) == Some(&b'\'') {
                    return None;
                }
                i = close + 1;
            }
            c if is_key_byte(c) && c != b'-' => i = t.key_end(i),
            _ => return None,
        }
        i = t.skip_spaces(i);
        match *b.get(i)? {
            b',' => i = t.skip_spaces(i + 1),
            b']' => return Some(i + 1),
            _ => return None,
        }
    }
}

#[inline(always)]
pub(super) fn is_dash(b: &[u8], p: usize) -> bool {
    b.get(p) == Some(&b'-') && matches!(b.get(p + 1), None | Some(b' ' | b'\n' | b'\r'))
}

#[inline(always)]
pub(super) fn is_key_byte(b: u8) -> bool {
    KEY_BYTES[b as usize]
}

/// The first bytes of a line that make it a key line for [`Scan::line`](super::Scan::line): key bytes but `-`
/// and `.` (a sequence item or a marker may start with those).
pub(super) static KEY_START: [bool; 256] = {
    let mut t = KEY_BYTES;
    t[b'-' as usize] = false;
    t[b'.' as usize] = false;
    t
};

/// The bytes that start a plain scalar whatever follows them, and that [`Scan::value`](super::Scan::value)
/// reads as one: printable ASCII but space and the indicators.
pub(super) static PLAIN_START: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0x21;
    while b < 0x7f {
        t[b] = true;
        b += 1;
    }
    let indicators = b"-?:,[]{}#&*!|>'\"%@`";
    let mut i = 0;
    while i < indicators.len() {
        t[indicators[i] as usize] = false;
        i += 1;
    }
    t
};

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
