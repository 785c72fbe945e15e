//! Batches of whole documents, cut from a byte stream as it is read.

use crate::yaml::split::{Cut, Cutter};
use std::io::Read;
use std::ops::Range;

/// A batch closes at the first document boundary at or past this many bytes.
pub(crate) const BATCH_BYTES: usize = 64 << 10;
pub(crate) use crate::source::MAX_DOCUMENT_BYTES;
/// Bytes asked of the reader at a time.
const READ_CHUNK: usize = 64 << 10;

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
        // `read_to_end` on a `take` appends without zeroing the buffer first, and retries
        // interrupted reads.
        let n = (&mut self.inner)
            .take(READ_CHUNK as u64)
            .read_to_end(&mut self.buf)?;
        if n == 0 {
            self.eof = true;
        }
        Ok(())
    }

    /// Gives the complete lines read so far to the cutter; a batch when one is due.
    fn scan(&mut self) -> Option<Result<Batch, ReadError>> {
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
            let (last, last_line) = self.starts.last().copied().unwrap_or((0, 0));
            // A cut where a piece already starts (a `---` right after a `...` line, or the
            // first line of a batch) changes nothing.
            if s <= last {
                continue;
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
        }
    }

    /// Closes the batch at `at`, a piece start (or the end of the buffer at the end).
    fn close(&mut self, at: usize) -> Batch {
        // The next batch's buffer starts with the unfinished piece, with room for a batch.
        let mut rest = Vec::with_capacity((self.buf.len() - at).max(self.batch_bytes) + READ_CHUNK);
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
