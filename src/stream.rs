//! Streams: documents cut from a reader as they come, processed across cores, handed back in
//! order.
//!
//! A [`Reader`] reads any `Read` in chunks and closes a [`Batch`] of whole documents at the
//! first document boundary past [`BATCH_BYTES`]. The boundaries are those of
//! `yaml::split` (one [`Cutter`] decides for both), so every batch, and every piece in it,
//! parses alone to exactly the documents the whole stream holds. [`ordered`] shares batches
//! between threads and hands the results back in stream order, with a bounded number in
//! flight: memory follows the largest document and the work in flight, not the stream.

use std::collections::BTreeMap;
use std::io::Read;
use std::ops::Range;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

/// A batch closes at the first document boundary at or past this many bytes.
pub const BATCH_BYTES: usize = 256 << 10;
/// The largest document meshjob edits: the guard against an unbounded piece.
pub const MAX_DOCUMENT_BYTES: usize = 32 << 20;
/// Bytes asked of the reader at a time.
const READ_CHUNK: usize = 64 << 10;

const BOM: &[u8] = "\u{feff}".as_bytes();

/// Whether `line` begins with the marker `m` (`---` or `...`) followed by whitespace, a line
/// break or the end of the text.
fn is_marker(line: &[u8], m: &[u8; 3]) -> bool {
    line.starts_with(m) && matches!(line.get(3), None | Some(b' ' | b'\t' | b'\r' | b'\n'))
}

/// Where a line puts a document boundary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    None,
    /// A new piece starts with this line.
    Before,
    /// A new piece starts after this line.
    After,
}

/// Decides, line by line, where a stream can be cut into pieces that parse alone.
///
/// A `---` line starts a document and cannot be content (`c-forbidden`): cut before it,
/// unless directives (`%` lines) came since the last cut, which that `---` closes. A `...`
/// line ends a document and leaves the parser as at the start of a stream: cut after it.
#[derive(Clone, Debug, Default)]
pub struct Cutter {
    directives: bool,
}

impl Cutter {
    /// `line` from its first byte, with or without its line break.
    pub fn line(&mut self, line: &[u8]) -> Cut {
        let bare = line.strip_prefix(BOM).unwrap_or(line);
        if bare.first() == Some(&b'%') {
            self.directives = true;
            return Cut::None;
        }
        if is_marker(line, b"---") {
            if std::mem::take(&mut self.directives) {
                return Cut::None;
            }
            return Cut::Before;
        }
        if is_marker(line, b"...") {
            self.directives = false;
            return Cut::After;
        }
        Cut::None
    }
}

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
        let len = self.buf.len();
        self.buf.resize(len + READ_CHUNK, 0);
        let n = loop {
            match self.inner.read(&mut self.buf[len..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.buf.truncate(len);
                    return Err(e);
                }
            }
        };
        self.buf.truncate(len + n);
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
        let rest = self.buf.split_off(at);
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

/// Runs `work` on the items of `source` on `threads` threads and gives the results to `sink`
/// in the order of the items, with at most `in_flight` items read but not yet sunk. `sink`
/// returns false to stop: nothing more is read, and the items in flight are dropped. The
/// source is handed back, for whoever wants to read on.
pub fn ordered<S, T, U, W, K>(
    threads: usize,
    in_flight: usize,
    mut source: S,
    work: W,
    mut sink: K,
) -> S
where
    S: Iterator<Item = T> + Send,
    T: Send,
    U: Send,
    W: Fn(T) -> U + Sync,
    K: FnMut(U) -> bool,
{
    let threads = threads.max(1);
    let in_flight = in_flight.max(threads + 1);
    std::thread::scope(|s| {
        let (token_tx, token_rx) = mpsc::sync_channel::<()>(in_flight);
        for _ in 0..in_flight {
            let _ = token_tx.send(());
        }
        let (job_tx, job_rx) = mpsc::sync_channel::<(u64, T)>(in_flight);
        let job_rx = Arc::new(Mutex::new(job_rx));
        let (done_tx, done_rx) = mpsc::channel::<(u64, U)>();
        let reader = s.spawn(move || {
            let mut seq = 0u64;
            while token_rx.recv().is_ok() {
                let Some(item) = source.next() else {
                    break;
                };
                if job_tx.send((seq, item)).is_err() {
                    break;
                }
                seq += 1;
            }
            source
        });
        for _ in 0..threads {
            let job_rx = Arc::clone(&job_rx);
            let done_tx = done_tx.clone();
            let work = &work;
            s.spawn(move || {
                loop {
                    let job = match job_rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => break,
                    };
                    let Ok((seq, item)) = job else {
                        break;
                    };
                    if done_tx.send((seq, work(item))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(done_tx);
        let mut waiting: BTreeMap<u64, U> = BTreeMap::new();
        let mut next = 0u64;
        'outer: while let Ok((seq, u)) = done_rx.recv() {
            waiting.insert(seq, u);
            while let Some(u) = waiting.remove(&next) {
                next += 1;
                if !sink(u) {
                    break 'outer;
                }
                let _ = token_tx.send(());
            }
        }
        drop(token_tx);
        drop(done_rx);
        waiting.clear();
        reader
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e))
    })
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

    #[test]
    fn ordered_keeps_the_order() {
        let mut got = Vec::new();
        ordered(
            3,
            4,
            0..1000u32,
            |i| {
                if i % 7 == 0 {
                    std::thread::yield_now();
                }
                i * 2
            },
            |u| {
                got.push(u);
                true
            },
        );
        assert_eq!(got, (0..1000).map(|i| i * 2).collect::<Vec<_>>());
    }
}
