//! Batches of whole documents, cut from a byte stream as it is read.

use crate::yaml::split::{Cut, Cutter};
use std::io::Read;
use std::ops::Range;

/// A batch closes at the first document boundary at or past this many bytes.
pub(crate) const BATCH_BYTES: usize = 64 << 10;
pub(crate) use crate::source::MAX_DOCUMENT_BYTES;
/// Bytes asked of the reader at a time, at most.
const READ_CHUNK: usize = 256 << 10;
/// Bytes asked of the reader past where a batch may close.
const READ_TAIL: usize = 8 << 10;

/// Documents read whole, in stream order.
#[derive(Debug)]
pub struct Batch {
    /// Position in the stream, from 0.
    pub seq: u64,
    /// Byte offset of `bytes[0]` in the stream.
    pub offset: u64,
    /// Line breaks before `bytes[0]` in the stream (its 0-based line number).
    pub line: u64,
    pub bytes: Vec<u8>,
    /// The pieces, as byte ranges of `bytes`, covering it exactly and in order.
    pub pieces: Vec<Range<usize>>,
}

/// Why reading stopped.
#[derive(Debug)]
pub enum ReadError {
    Io(std::io::Error),
    /// A document grew past [`MAX_DOCUMENT_BYTES`]; where it starts.
    TooBig {
        offset: u64,
        line: u64,
    },
}

/// Cuts a byte stream into batches of whole pieces.
pub struct Reader<R> {
    inner: R,
    buf: Vec<u8>,
    /// Start of the first line of `buf` not yet given to the cutter.
    scanned: usize,
    /// `buf[scanned..searched]` holds no line break.
    searched: usize,
    /// Piece starts in `buf` with the line breaks before each (in the stream).
    starts: Vec<(usize, u64)>,
    cutter: Cutter,
    /// Line breaks before `buf[scanned]`.
    lines: u64,
    offset: u64,
    seq: u64,
    eof: bool,
    done: bool,
    batch_bytes: usize,
    max_document: usize,
}

impl<R: Read> Reader<R> {
    pub fn new(inner: R) -> Self {
        Self::with_sizes(inner, BATCH_BYTES, MAX_DOCUMENT_BYTES)
    }

    /// A reader with other sizes, for tests.
    pub fn with_sizes(inner: R, batch_bytes: usize, max_document: usize) -> Self {
        Reader {
            inner,
            buf: Vec::new(),
            scanned: 0,
            searched: 0,
            starts: vec![(0, 0)],
            cutter: Cutter::default(),
            lines: 0,
            offset: 0,
            seq: 0,
            eof: false,
            done: false,
            batch_bytes,
            max_document,
        }
    }

    /// A reader that cuts with `cutter` (one that also cuts lists into items,
    /// `Cutter::with_items`).
    pub(crate) fn with_cutter(inner: R, cutter: Cutter) -> Self {
        let mut r = Self::new(inner);
        r.cutter = cutter;
        r
    }

    /// The cutter, for what it records of the pieces it cut.
    pub(crate) fn cutter_mut(&mut self) -> &mut Cutter {
        &mut self.cutter
    }

    /// After a stop: the bytes read but not given in a batch, then the rest of the input as
    /// it is read, to `f`, until the input ends or fails or `f` returns false.
    pub fn drain(&mut self, mut f: impl FnMut(&[u8]) -> bool) {
        let buf = std::mem::take(&mut self.buf);
        if !buf.is_empty() && !f(&buf) {
            return;
        }
        drop(buf);
        if self.eof {
            return;
        }
        let mut chunk = vec![0; READ_CHUNK];
        loop {
            match self.inner.read(&mut chunk) {
                Ok(0) => return,
                Ok(n) => {
                    if !f(&chunk[..n]) {
                        return;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return,
            }
        }
    }

    /// Whether the stream has been read to its end (the last batch may still be to come).
    pub fn at_eof(&self) -> bool {
        self.eof
    }

    /// The next batch; `None` after the last one. An empty stream gives one empty batch.
    pub fn next_batch(&mut self) -> Option<Result<Batch, ReadError>> {
        if self.done {
            return None;
        }
        loop {
            if let Some(b) = self.scan() {
                return Some(b);
            }
            if self.eof {
                self.done = true;
                return Some(Ok(self.close(self.buf.len())));
            }
            if let Err(e) = self.fill() {
                self.done = true;
                return Some(Err(ReadError::Io(e)));
            }
        }
    }

    fn fill(&mut self) -> std::io::Result<()> {
        // Up to a little past where the batch may close, then a little at a time (more for a
        // long document): what is read past the cut is copied into the next batch's buffer.
        let len = self.buf.len();
        let want = match self.batch_bytes.checked_sub(len) {
            Some(short) => short.saturating_add(READ_TAIL),
            None => READ_TAIL.max(len / 8),
        };
        // `read_to_end` on a `take` appends without zeroing the buffer first (for a reader
        // that reads into uninitialised memory), and retries interrupted reads.
        let n = (&mut self.inner)
            .take(want.min(READ_CHUNK) as u64)
            .read_to_end(&mut self.buf)?;
        if n == 0 {
            self.eof = true;
        }
        Ok(())
    }

    /// Gives the complete lines read so far to the cutter; a batch when one is due.
    fn scan(&mut self) -> Option<Result<Batch, ReadError>> {
        if let Some(b) = self.skim() {
            return Some(b);
        }
        loop {
            let end = match memchr::memchr(b'\n', &self.buf[self.searched..]) {
                Some(i) => self.searched + i + 1,
                None if self.eof && self.scanned < self.buf.len() => self.buf.len(),
                None => {
                    self.searched = self.buf.len();
                    let (s, line) = self.starts.last().copied().unwrap_or((0, 0));
                    if self.buf.len() - s > self.max_document {
                        self.done = true;
                        return Some(Err(ReadError::TooBig {
                            offset: self.offset + s as u64,
                            line,
                        }));
                    }
                    return None;
                }
            };
            let start = self.scanned;
            let cut = self.cutter.line(&self.buf[start..end]);
            let line_before = self.lines;
            self.scanned = end;
            self.searched = end;
            if self.buf[end - 1] == b'\n' {
                self.lines += 1;
            }
            let new_start = match cut {
                Cut::Before => Some((start, line_before)),
                Cut::After => Some((end, self.lines)),
                Cut::None => None,
            };
            let Some((s, line)) = new_start else {
                continue;
            };
            if let Some(b) = self.start_at(s, line) {
                return Some(b);
            }
        }
    }

    /// The fast form of [`Self::scan`] over the complete lines read so far, when only `---`
    /// lines can cut there: no directive pending, no CR (a lone one hides lines), and no
    /// line that starts with `.`, `%` or a byte-order mark ([`quiet`]). Then the marker
    /// lines are found by a vectorised search for `\n---` and the line breaks between them
    /// counted in bulk, instead of giving the cutter every line; each line found gets the
    /// cutter's answer ([`Cutter::dashes`]), so the cuts are the same. Leaves anything else
    /// (and the last, unfinished line) to `scan`.
    fn skim(&mut self) -> Option<Result<Batch, ReadError>> {
        if !self.cutter.settled() {
            return None;
        }
        let from = self.scanned;
        let end = from + memchr::memrchr(b'\n', &self.buf[from..])? + 1;
        if !quiet(&self.buf[from..end]) {
            return None;
        }
        let markers = memchr::memmem::Finder::new(b"\n---");
        let mut next = if self.buf[from..end].starts_with(b"---") {
            Some(from)
        } else {
            markers.find(&self.buf[from..end]).map(|i| from + i + 1)
        };
        while let Some(at) = next {
            // `end` is a line end, so this line has its break.
            let line_end =
                at + memchr::memchr(b'\n', &self.buf[at..end]).map_or(end - at, |i| i + 1);
            self.lines += count_line_breaks(&self.buf[self.scanned..at]);
            let line_before = self.lines;
            let cut = self.cutter.dashes(&self.buf[at..line_end]);
            self.scanned = line_end;
            self.searched = line_end;
            self.lines += 1;
            next = markers
                .find(&self.buf[line_end - 1..end])
                .map(|i| line_end + i);
            if cut == Cut::Before
                && let Some(b) = self.start_at(at, line_before)
            {
                return Some(b);
            }
        }
        self.lines += count_line_breaks(&self.buf[self.scanned..end]);
        self.scanned = end;
        self.searched = end;
        None
    }

    /// A piece starts at `s` (`line` line breaks before it): records it; a batch when one
    /// is due, an error when the piece before it is too big.
    fn start_at(&mut self, s: usize, line: u64) -> Option<Result<Batch, ReadError>> {
        let (last, last_line) = self.starts.last().copied().unwrap_or((0, 0));
        // A cut where a piece already starts (a `---` right after a `...` line, or the
        // first line of a batch) changes nothing.
        if s <= last {
            return None;
        }
        if s - last > self.max_document {
            self.done = true;
            return Some(Err(ReadError::TooBig {
                offset: self.offset + last as u64,
                line: last_line,
            }));
        }
        self.starts.push((s, line));
        if s >= self.batch_bytes {
            return Some(Ok(self.close(s)));
        }
        None
    }

    /// Closes the batch at `at`, a piece start (or the end of the buffer at the end).
    fn close(&mut self, at: usize) -> Batch {
        // The next batch's buffer starts with the unfinished piece, with room for a batch.
        let mut rest = Vec::with_capacity(
            (self.buf.len() - at).max(self.batch_bytes.min(BATCH_BYTES)) + 2 * READ_TAIL,
        );
        rest.extend_from_slice(&self.buf[at..]);
        self.buf.truncate(at);
        let bytes = std::mem::replace(&mut self.buf, rest);
        let line = self.starts.first().map_or(0, |&(_, l)| l);
        let mut pieces = Vec::with_capacity(self.starts.len());
        let mut next_line = line;
        let kept: Vec<(usize, u64)> = self
            .starts
            .iter()
            .copied()
            .filter(|&(s, _)| s < at)
            .collect();
        for (i, &(s, _)) in kept.iter().enumerate() {
            let e = kept.get(i + 1).map_or(at, |&(n, _)| n);
            pieces.push(s..e);
        }
        if pieces.is_empty() {
            // An empty stream: one empty piece, as `split::pieces` gives.
            pieces.push(0..at);
        }
        if let Some(&(_, l)) = self.starts.iter().find(|&&(s, _)| s == at) {
            next_line = l;
        }
        let batch = Batch {
            seq: self.seq,
            offset: self.offset,
            line,
            bytes,
            pieces,
        };
        self.seq += 1;
        self.offset += at as u64;
        self.scanned -= at.min(self.scanned);
        self.searched -= at.min(self.searched);
        self.starts = vec![(0, next_line)];
        batch
    }
}

/// The line breaks in `b`, counted in blocks of 255 bytes with a byte-wide sum that the
/// compiler vectorises (fewer instructions than memchr's count on text this dense).
fn count_line_breaks(b: &[u8]) -> u64 {
    b.chunks(255)
        .map(|c| {
            let n = c
                .iter()
                .fold(0u8, |n, &x| n.wrapping_add(u8::from(x == b'\n')));
            u64::from(n)
        })
        .sum()
}

/// Whether only `---` lines can cut in `region` (whole lines, from a line start): it holds
/// no CR, and no line of it starts with `.`, `%` or a byte-order mark's first byte. One
/// vectorised search finds the rare bytes (a CR anywhere; `%` and 0xEF anywhere, each
/// then looked at for a line start), one more the lines that start with `.`.
fn quiet(region: &[u8]) -> bool {
    if matches!(region.first(), Some(b'.' | b'%' | 0xEF)) {
        return false;
    }
    let rare = memchr::memchr3_iter(b'\r', b'%', 0xEF, region)
        .any(|i| region[i] == b'\r' || i > 0 && region[i - 1] == b'\n');
    !rare && memchr::memmem::find(region, b"\n.").is_none()
}

impl<R: Read> Iterator for Reader<R> {
    type Item = Result<Batch, ReadError>;
    fn next(&mut self) -> Option<Self::Item> {
        self.next_batch()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batches(text: &str, batch: usize) -> Vec<(u64, u64, Vec<String>)> {
        Reader::with_sizes(text.as_bytes(), batch, 1 << 20)
            .map(|b| {
                let b = b.expect("batch");
                let pieces = b
                    .pieces
                    .iter()
                    .map(|r| String::from_utf8_lossy(&b.bytes[r.clone()]).into_owned())
                    .collect();
                (b.offset, b.line, pieces)
            })
            .collect()
    }

    #[test]
    fn cuts_like_split_and_batches_at_boundaries() {
        let t = "a: 1\n---\nb: 2\n--- # c\nc: |\n  ---x\n----\n";
        assert_eq!(
            batches(t, 1 << 20),
            vec![(
                0,
                0,
                vec![
                    "a: 1\n".to_string(),
                    "---\nb: 2\n".into(),
                    "--- # c\nc: |\n  ---x\n----\n".into()
                ]
            )]
        );
        let got = batches(t, 1);
        assert_eq!(got.len(), 3);
        assert_eq!(got[1], (5, 1, vec!["---\nb: 2\n".to_string()]));
        assert_eq!(got[2].0, 14);
        assert_eq!(got[2].1, 3);
        assert_eq!(batches("", 1), vec![(0, 0, vec![String::new()])]);
    }

    #[test]
    fn directives_and_document_ends() {
        let t = "a: 1\n...\n%YAML 1.2\n---\nb: 2\n---\nc: 3\n";
        let got = batches(t, 1 << 20);
        assert_eq!(
            got[0].2,
            vec![
                "a: 1\n...\n".to_string(),
                "%YAML 1.2\n---\nb: 2\n".into(),
                "---\nc: 3\n".into()
            ]
        );
    }

    /// Gives at most `n` bytes per read, so that lines and markers straddle reads.
    struct Trickle<'a>(&'a [u8], usize);

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            let n = self.1.min(out.len()).min(self.0.len());
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    /// The reader's pieces and the line each starts on, as positions in the whole text.
    fn cuts(r: impl Read, batch: usize) -> Vec<(Range<usize>, u64)> {
        let mut out = Vec::new();
        for b in Reader::with_sizes(r, batch, usize::MAX) {
            let b = b.expect("no limit, no I/O error");
            let base = b.offset as usize;
            let mut line = b.line;
            // A batch closed at a `...` that ends the text leaves an empty last batch,
            // which `split::pieces` does not have.
            for p in b.pieces.iter().filter(|p| !p.is_empty() || base == 0) {
                out.push((p.start + base..p.end + base, line));
                line += count_line_breaks(&b.bytes[p.clone()]);
            }
        }
        out
    }

    #[test]
    fn skimming_cuts_where_the_cutter_does_line_by_line() {
        // Streams of lines drawn from ones that cut, ones that stop the skim (a CR, a
        // directive, a document end, a BOM) and ordinary ones, read whole and in small
        // reads, in batches of every size: the pieces and their lines are those of
        // `split::pieces`, which gives every line to the cutter.
        let lines = [
            "---\n",
            "--- # c\n",
            "----\n",
            "a: 1\n",
            "  ---\n",
            "b: |\n",
            "  --- x\n",
            "...\n",
            "%YAML 1.2\n",
            "a: x\r\n",
            "a\rb\n",
            "\u{feff}%TAG ! x:\n",
            "- c\n",
            ".a\n",
            "\n",
        ];
        let mut seed = 0x2545_f491_u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..400 {
            let quiet = round % 2 == 0;
            let mut text = String::new();
            for _ in 0..(next() % 60) {
                let pick = (next() % lines.len() as u64) as usize;
                // Half the streams hold only lines the skim reads past.
                let pick = if quiet { pick % 5 } else { pick };
                text.push_str(lines[pick]);
            }
            if next() % 3 == 0 {
                text.push_str("a: end");
            }
            let pieces = crate::yaml::split::pieces(&text);
            let want: Vec<(Range<usize>, u64)> = pieces
                .iter()
                .map(|p| (p.clone(), count_line_breaks(&text.as_bytes()[..p.start])))
                .collect();
            for batch in [1, 7, 40, 1 << 20] {
                assert_eq!(cuts(text.as_bytes(), batch), want, "{text:?} {batch}");
                for step in [1, 3, 16] {
                    let got = cuts(Trickle(text.as_bytes(), step), batch);
                    assert_eq!(got, want, "{text:?} {batch} {step}");
                }
            }
        }
    }

    #[test]
    fn quiet_is_its_definition() {
        // Regions of bytes drawn from those the check looks for and ordinary ones.
        let pool = [b'\n', b'.', b'%', 0xEF, b'\r', b'a', b'-', b' '];
        let mut seed = 0x9e37_79b9_u64;
        for _ in 0..20_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let len = (seed % 12) as usize;
            let region: Vec<u8> = (0..len)
                .map(|k| pool[((seed >> (4 + 3 * k)) % pool.len() as u64) as usize])
                .collect();
            let starts = |n: &[u8]| region.windows(n.len()).any(|w| w == n);
            let want = !matches!(region.first(), Some(b'.' | b'%' | 0xEF))
                && !region.contains(&b'\r')
                && !starts(b"\n.")
                && !starts(b"\n%")
                && !starts(b"\n\xEF");
            assert_eq!(quiet(&region), want, "{region:?}");
        }
    }

    #[test]
    fn a_document_past_the_limit_is_refused() {
        let t = format!("a: 1\n---\nb: {}\n---\nc: 1\n", "x".repeat(100));
        let r: Vec<_> = Reader::with_sizes(t.as_bytes(), 1, 50).collect();
        assert!(matches!(
            r.last(),
            Some(Err(ReadError::TooBig { offset: 5, line: 1 }))
        ));
    }
}
