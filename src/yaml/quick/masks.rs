//! The bytes the quick scanner looks at, as bitmaps: 64 bytes of text to a [`Block`], one
//! bit per byte, so that a line's end, its indentation, the end of a key and the places
//! where a plain scalar stops are each found with a shift and a count of trailing zeros
//! instead of a loop over bytes.
//!
//! A text's blocks are made in one pass before it is read ([`Masks::new`]): half a byte of
//! bitmaps per byte of text, for as long as the text is read (a batch, on its worker).
//!
//! On x86_64 a block is classified with AVX2 where the CPU has it, else with SSE2 (part of
//! every x86_64 CPU): compare 32 or 16 bytes at once, then gather the comparisons' top bits
//! with `pmovmskb`. The compiler does not turn a byte loop into that gather (it builds the
//! bits one shift at a time, about four times the instructions), and these functions can
//! only be called in an `unsafe` block, hence the two in [`Masks::new`]. Elsewhere eight
//! bytes are compared at a time in a `u64` (`portable`, built for tests and for other targets); a test holds the three to the
//! same answers.

/// One block's bitmaps: bit `i` stands for byte `64 * k + i` of the text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Block {
    /// Line feeds.
    pub(super) nl: u64,
    pub(super) space: u64,
    /// Bytes that are not key bytes (letters, digits, `_`, `.`, `/`, `-`).
    pub(super) nonkey: u64,
    /// Where a plain scalar cannot go on as text: a `:` followed by a space, a line feed
    /// or the end of the text, and a `#` after a space.
    pub(super) stop: u64,
}

/// The bytes a block is classified from: the byte before it, its 64 bytes, the byte after
/// it (a line feed past the end of the text; at its start, a line feed before it).
pub(super) type Window = [u8; 66];

/// The blocks of a text.
pub(super) struct Masks {
    pub(super) blocks: Vec<Block>,
    /// Bit `k % 64` of word `k / 64`: block `k` holds a byte outside printable ASCII and LF.
    odd: Vec<u64>,
}

impl Masks {
    pub(super) fn new(text: &[u8]) -> Masks {
        let mut m = Masks::empty(text.len());
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2, as just checked.
                unsafe { x86::fill_avx2(text, &mut m) };
            } else {
                // SAFETY: every x86_64 CPU has SSE2 (it is part of the architecture's
                // baseline, and always enabled for x86_64 targets).
                unsafe { x86::fill_sse2(text, &mut m) };
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        fill(text, &mut m, portable::classify);
        m
    }

    /// Room for the blocks of a text of `len` bytes.
    fn empty(len: usize) -> Masks {
        let n = len.div_ceil(64);
        Masks {
            blocks: Vec::with_capacity(n),
            odd: vec![0; n.div_ceil(64)],
        }
    }

    /// Whether bytes `s..e` of the text hold a byte outside printable ASCII and LF (or a
    /// block they share with the text around them does).
    pub(super) fn odd_in(&self, s: usize, e: usize) -> bool {
        if e <= s {
            return false;
        }
        let (first, last) = (s / 64, (e - 1) / 64);
        let word = |k: usize| self.odd.get(k / 64).copied().unwrap_or(0);
        if first / 64 == last / 64 {
            let span = low_bits(last - first + 1) << (first % 64);
            return word(first) & span != 0;
        }
        (first..=last).any(|k| word(k) >> (k % 64) & 1 != 0)
    }
}

/// A text up to the end of the piece being read, with the blocks of the whole text: the
/// queries the scanner asks, each answering with a position at most the piece's end.
#[derive(Clone, Copy)]
pub(super) struct View<'a> {
    pub(super) b: &'a [u8],
    blocks: &'a [Block],
}

impl<'a> View<'a> {
    pub(super) fn new(b: &'a [u8], m: &'a Masks) -> Self {
        View {
            b,
            blocks: &m.blocks,
        }
    }

    /// The first position at or after `i` whose bit `f` sets, else the end.
    #[inline(always)]
    fn next(self, mut i: usize, f: impl Fn(&Block) -> u64) -> usize {
        let end = self.b.len();
        while i < end {
            let Some(block) = self.blocks.get(i / 64) else {
                break;
            };
            let bits = f(block) >> (i % 64);
            if bits != 0 {
                return (i + bits.trailing_zeros() as usize).min(end);
            }
            i = (i | 63) + 1;
        }
        end
    }

    /// The line feed that ends the line `i` is on, or the end.
    #[inline(always)]
    pub(super) fn line_end(self, i: usize) -> usize {
        self.next(i, |b| b.nl)
    }

    /// The first byte at or after `i` that is not a space, or the end.
    #[inline(always)]
    pub(super) fn skip_spaces(self, i: usize) -> usize {
        self.next(i, |b| !b.space)
    }

    /// The first byte at or after `i` that is not a key byte, or the end.
    #[inline(always)]
    pub(super) fn key_end(self, i: usize) -> usize {
        self.next(i, |b| b.nonkey)
    }

    /// The first stop ([`Block::stop`]) or line feed at or after `i`, or the end.
    #[inline(always)]
    pub(super) fn stop_or_line_end(self, i: usize) -> usize {
        self.next(i, |b| b.stop | b.nl)
    }
}

/// Classifies every block of `text` into `m` with `classify`.
#[inline(always)]
fn fill(text: &[u8], m: &mut Masks, classify: impl Fn(&Window) -> (Block, bool)) {
    let n = text.len().div_ceil(64);
    for k in 0..n {
        let at = 64 * k;
        let inner = at.checked_sub(1).and_then(|s| text.get(s..at + 65));
        let (block, odd) = match inner.and_then(|w| w.first_chunk::<66>()) {
            Some(w) => classify(w),
            None => {
                // At the text's ends: line feeds around it.
                let mut w = [b'\n'; 66];
                let from = at.saturating_sub(1);
                let to = (at + 65).min(text.len());
                let skip = 1 - (at - from);
                w[skip..skip + (to - from)].copy_from_slice(&text[from..to]);
                classify(&w)
            }
        };
        m.blocks.push(block);
        if odd && let Some(w) = m.odd.get_mut(k / 64) {
            *w |= 1 << (k % 64);
        }
    }
}

/// The `n` lowest bits (`n` at most 64).
fn low_bits(n: usize) -> u64 {
    u64::MAX.checked_shr(64 - n as u32).unwrap_or(0)
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{Block, Masks, Window, fill};
    use std::arch::x86_64::*;

    /// [`super::fill`] with [`classify_sse2`].
    #[target_feature(enable = "sse2")]
    pub(super) fn fill_sse2(text: &[u8], m: &mut Masks) {
        fill(text, m, |w| classify_sse2(w));
    }

    /// [`super::fill`] with [`classify_avx2`].
    #[target_feature(enable = "avx2")]
    pub(super) fn fill_avx2(text: &[u8], m: &mut Masks) {
        fill(text, m, |w| classify_avx2(w));
    }

    /// The sixteen bytes of `w` from `i`.
    #[inline]
    #[target_feature(enable = "sse2")]
    fn load(w: &Window, i: usize) -> __m128i {
        let b = &w[i..i + 16];
        // SAFETY: `b` holds the sixteen bytes read (an unaligned load may read any).
        unsafe { _mm_loadu_si128(b.as_ptr().cast()) }
    }

    /// Sixteen bytes at a time: compare, then gather one bit per byte with `pmovmskb`.
    /// The stops compare the bytes one before and one after as well (loaded at those
    /// offsets), so that no bitmap is shifted across the vectors. Kept out of line: inlined
    /// into [`fill`]'s loop, the compiler took the bitmaps apart bit by bit.
    #[inline(never)]
    #[target_feature(enable = "sse2")]
    pub(super) fn classify_sse2(w: &Window) -> (Block, bool) {
        let splat = |b: u8| _mm_set1_epi8(b as i8);
        let zero = _mm_setzero_si128();
        let mut r = Block::default();
        let mut fine = _mm_set1_epi8(-1);
        for k in 0..4 {
            let at = 16 * k;
            let (prev, v, next) = (load(w, at), load(w, at + 1), load(w, at + 2));
            let bits = |m: __m128i| u64::from(_mm_movemask_epi8(m) as u16) << at;
            let eq = |x: __m128i, b: u8| _mm_cmpeq_epi8(x, splat(b));
            // `x` within `lo..=lo + n`: `x - lo`, saturated down by `n`, is zero.
            let within = |x: __m128i, lo: u8, n: u8| {
                let d = _mm_sub_epi8(x, splat(lo));
                _mm_cmpeq_epi8(_mm_subs_epu8(d, splat(n)), zero)
            };
            let nl = eq(v, b'\n');
            r.nl |= bits(nl);
            r.space |= bits(eq(v, b' '));
            // `-`, `.`, `/` and the digits; letters, folded to lower case; `_`.
            let dig = within(v, b'-', b'9' - b'-');
            let letter = within(_mm_or_si128(v, splat(0x20)), b'a', b'z' - b'a');
            let key = _mm_or_si128(_mm_or_si128(dig, letter), eq(v, b'_'));
            r.nonkey |= bits(_mm_cmpeq_epi8(key, zero));
            let ends = _mm_or_si128(eq(next, b' '), eq(next, b'\n'));
            let colon = _mm_and_si128(eq(v, b':'), ends);
            let hash = _mm_and_si128(eq(v, b'#'), eq(prev, b' '));
            r.stop |= bits(_mm_or_si128(colon, hash));
            let printable = within(v, 0x20, 0x7e - 0x20);
            fine = _mm_and_si128(fine, _mm_or_si128(printable, nl));
        }
        (r, _mm_movemask_epi8(fine) != 0xffff)
    }

    /// The 32 bytes of `w` from `i`.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn load256(w: &Window, i: usize) -> __m256i {
        let b = &w[i..i + 32];
        // SAFETY: `b` holds the 32 bytes read (an unaligned load may read any).
        unsafe { _mm256_loadu_si256(b.as_ptr().cast()) }
    }

    /// [`classify_sse2`], 32 bytes at a time.
    #[inline(never)]
    #[target_feature(enable = "avx2")]
    pub(super) fn classify_avx2(w: &Window) -> (Block, bool) {
        let splat = |b: u8| _mm256_set1_epi8(b as i8);
        let zero = _mm256_setzero_si256();
        let mut r = Block::default();
        let mut fine = _mm256_set1_epi8(-1);
        for k in 0..2 {
            let at = 32 * k;
            let (prev, v, next) = (load256(w, at), load256(w, at + 1), load256(w, at + 2));
            let bits = |m: __m256i| u64::from(_mm256_movemask_epi8(m) as u32) << at;
            let eq = |x: __m256i, b: u8| _mm256_cmpeq_epi8(x, splat(b));
            let within = |x: __m256i, lo: u8, n: u8| {
                let d = _mm256_sub_epi8(x, splat(lo));
                _mm256_cmpeq_epi8(_mm256_subs_epu8(d, splat(n)), zero)
            };
            let nl = eq(v, b'\n');
            r.nl |= bits(nl);
            r.space |= bits(eq(v, b' '));
            let dig = within(v, b'-', b'9' - b'-');
            let letter = within(_mm256_or_si256(v, splat(0x20)), b'a', b'z' - b'a');
            let key = _mm256_or_si256(_mm256_or_si256(dig, letter), eq(v, b'_'));
            r.nonkey |= bits(_mm256_cmpeq_epi8(key, zero));
            let ends = _mm256_or_si256(eq(next, b' '), eq(next, b'\n'));
            let colon = _mm256_and_si256(eq(v, b':'), ends);
            let hash = _mm256_and_si256(eq(v, b'#'), eq(prev, b' '));
            r.stop |= bits(_mm256_or_si256(colon, hash));
            let printable = within(v, 0x20, 0x7e - 0x20);
            fine = _mm256_and_si256(fine, _mm256_or_si256(printable, nl));
        }
        (r, _mm256_movemask_epi8(fine) != -1)
    }
}

/// Eight bytes at a time in a `u64`, on any target (and the reference the SSE2 form is
/// tested against).
#[cfg(any(test, not(target_arch = "x86_64")))]
pub(super) mod portable {
    use super::{Block, Window};
    use crate::yaml::bytes::{HIGH, ONES};

    const LOW7: u64 = !HIGH;

    /// The high bit of each byte of `x` equal to `c`, exactly.
    fn eq(x: u64, c: u8) -> u64 {
        let y = x ^ (ONES * u64::from(c));
        !((y & LOW7).wrapping_add(LOW7) | y) & HIGH
    }

    /// The high bit of each byte of `x` within `lo..=hi` (both below 0x80), exactly.
    fn within(x: u64, lo: u8, hi: u8) -> u64 {
        // On seven-bit bytes, adding `0x80 - k` sets the high bit exactly when the byte is
        // at least `k`, and never carries into the next byte.
        let low = x & LOW7;
        let at_least = |k: u8| low.wrapping_add(ONES * u64::from(0x80 - k)) & HIGH;
        at_least(lo) & !at_least(hi + 1) & !x & HIGH
    }

    /// One bit per byte from a mask of high bits: byte `j` to bit `j`.
    fn gather(m: u64) -> u64 {
        (m >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56
    }

    pub(super) fn classify(w: &Window) -> (Block, bool) {
        let word = |i: usize| {
            let mut q = [0; 8];
            q.copy_from_slice(&w[i..i + 8]);
            u64::from_le_bytes(q)
        };
        let mut r = Block::default();
        let mut fine = HIGH;
        for k in 0..8 {
            let (prev, x, next) = (word(8 * k), word(8 * k + 1), word(8 * k + 2));
            let sh = 8 * k;
            let nl = eq(x, b'\n');
            r.nl |= gather(nl) << sh;
            r.space |= gather(eq(x, b' ')) << sh;
            let key = within(x, b'-', b'9') | within(x | (ONES * 0x20), b'a', b'z') | eq(x, b'_');
            r.nonkey |= gather(!key & HIGH) << sh;
            let colon = eq(x, b':') & (eq(next, b' ') | eq(next, b'\n'));
            let hash = eq(x, b'#') & eq(prev, b' ');
            r.stop |= gather(colon | hash) << sh;
            // 0x7F is the only seven-bit byte at or past 0x20 that is not printable.
            fine &= (within(x, 0x20, 0x7e) | nl) | !HIGH;
        }
        (r, fine != HIGH)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Byte by byte: what every form must give.
    fn reference(w: &Window) -> (Block, bool) {
        let mut r = Block::default();
        let mut odd = false;
        for i in 0..64 {
            let (b, prev, next) = (w[i + 1], w[i], w[i + 2]);
            let bit = |t: bool| u64::from(t) << i;
            r.nl |= bit(b == b'\n');
            r.space |= bit(b == b' ');
            r.nonkey |= bit(!(b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'/' | b'-')));
            r.stop |= bit(b == b':' && matches!(next, b' ' | b'\n') || b == b'#' && prev == b' ');
            odd |= b != b'\n' && !(0x20..=0x7e).contains(&b);
        }
        (r, odd)
    }

    /// Every form this machine can run.
    fn forms(w: &Window) -> Vec<(Block, bool)> {
        #[allow(unused_mut)]
        let mut out = vec![portable::classify(w)];
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: every x86_64 CPU has SSE2.
            out.push(unsafe { x86::classify_sse2(w) });
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2, as just checked.
                out.push(unsafe { x86::classify_avx2(w) });
            }
        }
        out
    }

    #[test]
    fn every_form_classifies_every_byte_in_every_place() {
        let mut seed = 0x853c_49e6_748f_ea9b_u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let check = |c: &Window| {
            let want = reference(c);
            for (i, got) in forms(c).into_iter().enumerate() {
                assert_eq!(got, want, "form {i}: {c:?}");
            }
        };
        for b in 0..=255u8 {
            for at in 0..66 {
                for fill in [b'a', b' ', b':', b'#', b'\n'] {
                    let mut c = [fill; 66];
                    c[at] = b;
                    check(&c);
                }
            }
        }
        // Mostly the bytes around the class edges.
        let pool = b"\n :#-./09AZaz_@[`{\x7f\x80\xff\x1f\r\t";
        for _ in 0..20_000 {
            let r = next();
            let c: Window = std::array::from_fn(|i| {
                let s = next().rotate_left(i as u32) ^ r;
                match s % 4 {
                    0 => s.to_le_bytes()[3],
                    _ => pool[(s >> 8) as usize % pool.len()],
                }
            });
            check(&c);
        }
    }

    /// A text's blocks made by every form this machine can run, the one [`Masks::new`]
    /// chooses first.
    fn every_fill(text: &[u8]) -> Vec<Masks> {
        let mut out = vec![Masks::new(text)];
        let mut m = Masks::empty(text.len());
        fill(text, &mut m, portable::classify);
        out.push(m);
        #[cfg(target_arch = "x86_64")]
        {
            let mut m = Masks::empty(text.len());
            // SAFETY: every x86_64 CPU has SSE2.
            unsafe { x86::fill_sse2(text, &mut m) };
            out.push(m);
            if std::arch::is_x86_feature_detected!("avx2") {
                let mut m = Masks::empty(text.len());
                // SAFETY: the CPU has AVX2, as just checked.
                unsafe { x86::fill_avx2(text, &mut m) };
                out.push(m);
            }
        }
        out
    }

    /// Each query against a loop over the bytes, with the blocks of every form, on texts of
    /// lengths around multiples of 64 (so with a last block cut short), from spread starts
    /// to spread ends; the blocks' odd bytes against the bytes. The texts are mostly the
    /// bytes the bitmaps tell apart, CR, tab and a non-ASCII byte among them; every fourth
    /// is random bytes.
    #[test]
    fn queries_agree_with_byte_loops() {
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let pool = b"\n\n   ::##aa-_.\xc3\t\r\"";
        for round in 0..44 {
            let len = [0, 1, 63, 64, 65, 127, 128, 129, 4095, 4096, 9000][round % 11];
            let text: Vec<u8> = (0..len)
                .map(|_| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    match round % 4 {
                        3 => seed.to_le_bytes()[5],
                        _ => pool[(seed % pool.len() as u64) as usize],
                    }
                })
                .collect();
            let t = &text[..];
            let all = every_fill(t);
            for m in &all[1..] {
                assert_eq!(m.blocks, all[0].blocks, "{len}");
                assert_eq!(m.odd, all[0].odd, "{len}");
            }
            for m in &all {
                queries_on(t, m);
            }
        }
    }

    /// The queries on `t` with its blocks `m`, against loops over the bytes.
    fn queries_on(t: &[u8], m: &Masks) {
        let len = t.len();
        let key = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'/' | b'-');
        let stop = |i: usize| match t[i] {
            b':' => matches!(t.get(i + 1), None | Some(b' ' | b'\n')),
            b'#' => i > 0 && t[i - 1] == b' ',
            _ => false,
        };
        let odd = |b: u8| b != b'\n' && !(0x20..=0x7e).contains(&b);
        // Odd steps, so that over a long text every place in a block is met; longer on long
        // texts, which are there for their many blocks.
        let step = |short: usize| if len > 1000 { short * 10 + 1 } else { short };
        let ends: Vec<usize> = (0..=len).step_by(step(13)).chain([len]).collect();
        for &end in &ends {
            let v = View::new(&t[..end], m);
            let find =
                |from: usize, p: &dyn Fn(usize) -> bool| (from..end).find(|&i| p(i)).unwrap_or(end);
            for i in (0..=end).step_by(step(7)) {
                assert_eq!(v.line_end(i), find(i, &|j| t[j] == b'\n'));
                assert_eq!(v.skip_spaces(i), find(i, &|j| t[j] != b' '));
                assert_eq!(v.key_end(i), find(i, &|j| !key(t[j])));
                let want = find(i, &|j| t[j] == b'\n' || stop(j));
                assert_eq!(v.stop_or_line_end(i), want, "{i} {end}");
            }
            for s in (0..end).step_by(step(29)) {
                let (got, has) = (m.odd_in(s, end), t[s..end].iter().any(|&b| odd(b)));
                // A block shared with the bytes around may say yes for them.
                assert!(got || !has, "{s} {end}");
                let (first, last) = (s / 64, (end - 1) / 64);
                let blocks = t[64 * first..(64 * (last + 1)).min(len)].iter();
                assert_eq!(got, blocks.copied().any(odd), "{s} {end}");
            }
        }
    }
}
