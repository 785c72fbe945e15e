//! Streams: documents cut from a reader as they come, processed across cores, handed back in
//! order.
//!
//! A [`Reader`] reads any `Read` in chunks and closes a [`Batch`] of whole documents at the
//! first document boundary past [`BATCH_BYTES`]. The boundaries are those of
//! `yaml::split` (one [`Cutter`] decides for both), so every batch, and every piece in it,
//! parses alone to exactly the documents the whole stream holds. [`ordered`] shares batches
//! between threads and hands the results back in stream order, with a bounded number in
//! flight: memory follows the largest document and the work in flight, not the stream.

use crate::config::Settings;
use crate::finding::{Finding, Rule};
use crate::run::{Pieces, ProcessOptions, process_pieces};
use crate::yaml::split::{Cut, Cutter};
use std::collections::BTreeMap;
use std::io::Read;
use std::ops::Range;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};

/// A batch closes at the first document boundary at or past this many bytes.
pub const BATCH_BYTES: usize = 64 << 10;
/// The largest document meshjob edits: the guard against an unbounded piece.
pub const MAX_DOCUMENT_BYTES: usize = 32 << 20;
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

/// Runs `work` on the items of `source` on `threads` threads and gives the results to `sink`
/// in the order of the items, with at most `in_flight` items read but not yet sunk. `sink`
/// returns false to stop: nothing more is read. The source is handed back, for whoever wants
/// to read on, with the results of the items that were in flight, in order.
pub fn ordered<S, T, U, W, K>(
    threads: usize,
    in_flight: usize,
    mut source: S,
    work: W,
    mut sink: K,
) -> (S, Vec<U>)
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
        let (mut token_tx, token_rx) = mpsc::sync_channel::<()>(in_flight);
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
        let mut stopped = false;
        while let Ok((seq, u)) = done_rx.recv() {
            waiting.insert(seq, u);
            if stopped {
                continue;
            }
            while let Some(u) = waiting.remove(&next) {
                next += 1;
                if !sink(u) {
                    // No more tokens: the reader stops, the workers finish what they hold.
                    stopped = true;
                    drop(std::mem::replace(&mut token_tx, mpsc::sync_channel(1).0));
                    break;
                }
                let _ = token_tx.send(());
            }
        }
        drop(token_tx);
        let source = reader
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e));
        (source, waiting.into_values().collect())
    })
}

/// One batch, processed.
#[derive(Debug)]
pub struct Done {
    pub batch: Batch,
    /// The outcome of its pieces; offsets in the batch.
    pub result: Pieces,
    /// The batch is not text: where (in the batch) and why.
    pub decode: Option<(usize, String)>,
}

impl Done {
    /// Whether any piece changed.
    pub fn changed(&self) -> bool {
        self.result.outs.iter().any(Option::is_some)
    }

    /// The batch as text (empty when it is not text).
    pub fn text(&self) -> &str {
        std::str::from_utf8(&self.batch.bytes).unwrap_or_default()
    }

    /// Each piece, as it was and as it is when it changed.
    pub fn pieces(&self) -> impl Iterator<Item = (&str, Option<&str>)> {
        let text = self.text();
        self.batch.pieces.iter().enumerate().map(move |(i, r)| {
            let new = self.result.outs.get(i).and_then(Option::as_deref);
            (text.get(r.clone()).unwrap_or_default(), new)
        })
    }

    /// Appends the batch's output.
    pub fn write_to(&self, out: &mut String) {
        if !self.changed() {
            out.push_str(self.text());
            return;
        }
        for (old, new) in self.pieces() {
            out.push_str(new.unwrap_or(old));
        }
    }
}

/// Where the batches of a stream go, in order.
pub trait Sink {
    /// The next batch, processed without a fatal error. An error stops the stream.
    fn batch(&mut self, done: &Done) -> Result<(), String>;

    /// After a fatal error: the bytes of the failing batch and of every later one, in order.
    fn rest(&mut self, _bytes: &[u8]) {}
}

/// Why a stream stopped.
#[derive(Debug)]
pub enum Stop {
    /// The input: not text, a document too large, not YAML, or an internal error.
    Failed(Box<Failure>),
    /// It could not be read.
    Read(std::io::Error),
    /// The sink refused a batch (an output that cannot be written).
    Sink(String),
}

/// How many batches a thread may have read ahead of the writer.
const AHEAD_PER_THREAD: usize = 2;

fn work(
    b: Result<Batch, ReadError>,
    settings: &Settings,
    opts: ProcessOptions,
) -> Result<Done, ReadError> {
    let batch = b?;
    let (result, decode) = match crate::source::decode(&batch.bytes) {
        Ok(text) => (
            process_pieces(text, &batch.pieces, settings, opts, true),
            None,
        ),
        Err(d) => (Pieces::default(), Some(d)),
    };
    Ok(Done {
        batch,
        result,
        decode,
    })
}

/// The failure a reader error makes, or the error message.
fn read_stop(e: ReadError) -> Stop {
    match e {
        ReadError::Io(e) => Stop::Read(e),
        ReadError::TooBig { offset, line } => Stop::Failed(Box::new(Failure {
            line: line as usize + 1,
            col: 1,
            finding: Finding::error(
                Rule::Unreadable,
                offset as usize,
                format!(
                    "a document larger than {} MiB; meshjob does not edit documents this big \
                     (split it into smaller documents)",
                    MAX_DOCUMENT_BYTES >> 20
                ),
            ),
            decode: false,
            window_first_edit: None,
        })),
    }
}

/// Cuts `input` into documents, processes them (on every core when there is more than one
/// batch) and hands them to `sink` in order. On the first problem, settles it as reading the
/// whole stream would report it (see [`settle`]).
pub fn process<R: Read + Send>(
    input: R,
    settings: &Settings,
    opts: ProcessOptions,
    sink: &mut dyn Sink,
) -> Result<(), Stop> {
    process_sized(Reader::new(input), settings, opts, sink)
}

/// [`process`] with a reader of chosen sizes, for tests.
pub fn process_sized<R: Read + Send>(
    mut reader: Reader<R>,
    settings: &Settings,
    opts: ProcessOptions,
    sink: &mut dyn Sink,
) -> Result<(), Stop> {
    let Some(first) = reader.next_batch() else {
        return Ok(());
    };
    let mut failing: Option<Done> = None;
    let mut stop: Option<Stop> = None;
    // The stream's first edit, where it is shown (offset, line, column).
    let mut first_edit: Option<(u64, usize, usize)> = None;
    let mut take = |r: Result<Done, ReadError>| -> bool {
        let done = match r {
            Ok(d) => d,
            Err(e) => {
                stop = Some(read_stop(e));
                return false;
            }
        };
        if first_edit.is_none() {
            first_edit = done.result.first_edit.map(|e| {
                let (line, col) = line_col(done.batch.line, &done.batch.bytes, e);
                (done.batch.offset + e as u64, line, col)
            });
        }
        if done.decode.is_some() || done.result.fatal.is_some() {
            failing = Some(done);
            return false;
        }
        if let Err(m) = sink.batch(&done) {
            stop = Some(Stop::Sink(m));
            return false;
        }
        true
    };
    let mut after = Vec::new();
    if reader.at_eof() {
        // All of it is in memory already: no threads.
        let rest = std::iter::once(first).chain(&mut reader);
        for b in rest {
            if !take(work(b, settings, opts)) {
                break;
            }
        }
    } else {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let source = std::iter::once(first).chain(&mut reader);
        let (_, left) = ordered(
            threads,
            AHEAD_PER_THREAD * threads + 2,
            source,
            |b| work(b, settings, opts),
            &mut take,
        );
        after = left;
    }
    if let Some(s) = stop {
        return Err(s);
    }
    let Some(done) = failing else {
        return Ok(());
    };
    let cause = match (done.decode, done.result.fatal) {
        (Some((at, m)), _) => Cause::Decode(at, m),
        (None, Some((k, f))) => Cause::Piece(k, f),
        (None, None) => return Ok(()),
    };
    let after: Vec<Batch> = after
        .into_iter()
        .map_while(Result::ok)
        .map(|d| d.batch)
        .collect();
    let reference = |t: &str| {
        let all = 0..t.len();
        let p = process_pieces(t, std::slice::from_ref(&all), settings, opts, false);
        (p.fatal.map(|(_, f)| f), p.first_edit)
    };
    let mut f = settle(
        done.batch,
        cause,
        after,
        &mut reader,
        |b| sink.rest(b),
        &reference,
    );
    if let (Some((at, line, col)), Some(window_first)) = (first_edit, f.window_first_edit) {
        // The whole-stream reference puts a failure found in the edited text at the first
        // edit of the whole stream.
        if f.finding.rule == Rule::Internal
            && f.finding.offset as u64 == window_first
            && at < window_first
        {
            (f.finding.offset, f.line, f.col) = (at as usize, line, col);
        }
    }
    Err(Stop::Failed(Box::new(f)))
}

/// What stopped a batch.
#[derive(Clone, Debug)]
pub enum Cause {
    /// Its bytes are not text (a NUL byte, or not UTF-8): offset in the batch, message.
    Decode(usize, String),
    /// Piece `k` of the batch could not be processed; the finding's offset is in the batch.
    Piece(usize, Finding),
}

/// The first problem of a stream, as the whole stream read at once would report it.
#[derive(Clone, Debug)]
pub struct Failure {
    /// 1-based line and column.
    pub line: usize,
    pub col: usize,
    /// The finding, its offset in the stream.
    pub finding: Finding,
    /// The bytes were not text (NUL, not UTF-8), rather than text that could not be processed.
    pub decode: bool,
    /// The first edit of the text the error was found in, when it has edits (stream offset).
    pub window_first_edit: Option<u64>,
}

/// 1-based line and column of `at` in a batch that starts on line `first` (0-based):
/// columns count characters, each byte of a broken UTF-8 sequence as one.
pub fn line_col(first: u64, bytes: &[u8], at: usize) -> (usize, usize) {
    let (line, col) = crate::source::line_col_bytes(bytes, at);
    (first as usize + line, col)
}

/// Processes a text whole: its fatal error and its first edit.
pub type Reference<'a> = dyn Fn(&str) -> (Option<Finding>, Option<usize>) + 'a;

/// 1-based lines and columns of ascending offsets in a batch that starts on line `first`, in
/// one pass (see [`line_col`]).
pub fn line_cols(first: u64, bytes: &[u8], offsets: &[usize]) -> Vec<(usize, usize)> {
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

/// A window of pieces from the one that failed on, grown until the whole-stream reference
/// puts its error before the window's last piece.
struct Window {
    text: String,
    /// Start of the last piece in `text`.
    last: usize,
    offset: u64,
    line: u64,
    found: Option<Finding>,
    /// The first edit of the window's text, from the last run.
    first_edit: Option<usize>,
    closed: bool,
}

impl Window {
    fn push(&mut self, piece: &str, reference: &Reference<'_>) {
        if self.closed {
            return;
        }
        self.last = self.text.len();
        self.text.push_str(piece);
        let (fatal, first_edit) = reference(&self.text);
        if let Some(f) = fatal {
            self.closed = f.offset < self.last || self.text.len() > 2 * MAX_DOCUMENT_BYTES;
            self.found = Some(f);
            self.first_edit = first_edit;
        }
    }
}

/// Settles the first problem of a stream with the precedence of reading it whole: a NUL byte
/// anywhere, then the first bytes that are not UTF-8, then the first error of the
/// whole-stream parse (`reference` processes a text whole and gives its fatal error).
///
/// `failing` is the batch that stopped, `cause` why; `after` the batches read after it and
/// already processed, in order; `reader` gives the rest of the stream, which is read to its
/// end. `echo` gets the failing batch's bytes and every later byte of the stream, in order.
pub fn settle<R: Read>(
    failing: Batch,
    cause: Cause,
    after: Vec<Batch>,
    reader: &mut Reader<R>,
    mut echo: impl FnMut(&[u8]),
    reference: &Reference<'_>,
) -> Failure {
    let mut first_utf8: Option<Failure> = None;
    let mut window: Option<Window> = None;
    let decode_failure = |b: &Batch, at: usize, message: String| {
        let (line, col) = line_col(b.line, &b.bytes, at);
        Failure {
            line,
            col,
            finding: Finding::error(Rule::NotText, b.offset as usize + at, message),
            decode: true,
            window_first_edit: None,
        }
    };
    // Looks at one batch: Some when the answer is known (a NUL byte).
    let look = |b: &Batch,
                from_piece: usize,
                window: &mut Option<Window>,
                first_utf8: &mut Option<Failure>|
     -> Option<Failure> {
        if let Some(at) = memchr::memchr(0, &b.bytes) {
            let msg = match crate::source::decode(&b.bytes) {
                Err((_, m)) => m,
                Ok(_) => String::new(),
            };
            return Some(decode_failure(b, at, msg));
        }
        match std::str::from_utf8(&b.bytes) {
            Err(e) => {
                if first_utf8.is_none() {
                    let msg = match crate::source::decode(&b.bytes) {
                        Err((_, m)) => m,
                        Ok(_) => String::new(),
                    };
                    *first_utf8 = Some(decode_failure(b, e.valid_up_to(), msg));
                }
            }
            Ok(text) if first_utf8.is_none() => {
                for r in &b.pieces[from_piece.min(b.pieces.len())..] {
                    let w = window.get_or_insert_with(|| Window {
                        text: String::new(),
                        last: 0,
                        offset: b.offset + r.start as u64,
                        line: b.line
                            + memchr::memchr_iter(b'\n', &b.bytes[..r.start]).count() as u64,
                        found: None,
                        first_edit: None,
                        closed: false,
                    });
                    w.push(&text[r.clone()], reference);
                }
            }
            Ok(_) => {}
        }
        None
    };
    let (own_k, own) = match &cause {
        Cause::Decode(at, m) => (usize::MAX, Some(decode_failure(&failing, *at, m.clone()))),
        Cause::Piece(k, _) => (*k, None),
    };
    echo(&failing.bytes);
    if own.is_some() {
        // The batch is not text: only a NUL byte can come first.
        if let Some(f) = look(&failing, usize::MAX, &mut window, &mut first_utf8) {
            return f;
        }
        first_utf8 = own;
    } else if let Some(f) = look(&failing, own_k, &mut window, &mut first_utf8) {
        return f;
    }
    let rest = after
        .into_iter()
        .map(Ok)
        .chain(std::iter::from_fn(|| reader.next_batch()));
    for b in rest {
        let Ok(b) = b else {
            break;
        };
        echo(&b.bytes);
        if let Some(f) = look(&b, 0, &mut window, &mut first_utf8) {
            return f;
        }
    }
    if let Some(f) = first_utf8 {
        return f;
    }
    let piece_fatal = match cause {
        Cause::Piece(_, f) => Some(f),
        Cause::Decode(..) => None,
    };
    let (finding, offset_base, line_base, text, first_edit) = match window {
        Some(Window {
            found: Some(f),
            offset,
            line,
            text,
            first_edit,
            ..
        }) => (f, offset, line, text, first_edit),
        _ => {
            // The window never failed: the piece's own error stands.
            let f =
                piece_fatal.unwrap_or_else(|| Finding::error(Rule::Internal, 0, "internal error"));
            let (line, col) = line_col(failing.line, &failing.bytes, f.offset);
            let mut f = f;
            f.offset += failing.offset as usize;
            return Failure {
                line,
                col,
                finding: f,
                decode: false,
                window_first_edit: None,
            };
        }
    };
    let (line, col) = line_col(line_base, text.as_bytes(), finding.offset);
    let mut finding = finding;
    finding.offset += offset_base as usize;
    Failure {
        line,
        col,
        finding,
        decode: false,
        window_first_edit: first_edit.map(|e| offset_base + e as u64),
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

    /// Processes `text` batch by batch the way a host does, settling the first problem; the
    /// problem as (line, col, offset, message), or None.
    fn first_problem(text: &[u8]) -> Option<(usize, usize, usize, String)> {
        let settings = crate::config::Settings::default();
        let opts = crate::run::ProcessOptions::default();
        let reference = |t: &str| {
            (
                crate::run::process_reference(t, &settings, opts).fatal,
                None,
            )
        };
        let mut reader = Reader::with_sizes(text, 1, 1 << 20);
        while let Some(b) = reader.next_batch() {
            let b = b.expect("batch");
            let cause = match crate::source::decode(&b.bytes) {
                Err((at, m)) => Some(Cause::Decode(at, m)),
                Ok(t) => b.pieces.iter().enumerate().find_map(|(k, r)| {
                    reference(&t[r.clone()]).0.map(|mut f| {
                        f.offset += r.start;
                        Cause::Piece(k, f)
                    })
                }),
            };
            if let Some(cause) = cause {
                let mut echoed: Vec<u8> = Vec::new();
                let start = b.offset as usize;
                let f = settle(
                    b,
                    cause,
                    Vec::new(),
                    &mut reader,
                    |x| echoed.extend(x),
                    &reference,
                );
                assert_eq!(echoed, &text[start..], "the rest is echoed");
                return Some((f.line, f.col, f.finding.offset, f.finding.message));
            }
        }
        None
    }

    /// What reading the whole text at once reports.
    fn whole_problem(text: &[u8]) -> Option<(usize, usize, usize, String)> {
        match crate::source::decode(text) {
            Err((at, m)) => {
                let (l, c) = crate::source::line_col_bytes(text, at);
                Some((l, c, at, m))
            }
            Ok(t) => {
                let settings = crate::config::Settings::default();
                let opts = crate::run::ProcessOptions::default();
                crate::run::process_reference(t, &settings, opts)
                    .fatal
                    .map(|f| {
                        let (l, c) = crate::source::line_col_bytes(text, f.offset);
                        (l, c, f.offset, f.message)
                    })
            }
        }
    }

    #[test]
    fn settled_problems_are_those_of_the_whole_stream() {
        let ok = "a: 1\n---\nb: 2\n";
        let cases: Vec<Vec<u8>> = vec![
            format!("{ok}---\nc: \"x\n---\nd: 1\n---\ne: 2\n").into(),
            format!("{ok}---\nc: \"x\n").into(),
            format!("{ok}---\nc: [x\n---\nd: 1\n").into(),
            format!("{ok}---\nc: [x\n---\nd: {{\n---\ne: 1\n").into(),
            [
                format!("{ok}---\nc: [x\n---\nd: ").as_bytes(),
                b"\xff\n---\ne: 1\n",
            ]
            .concat(),
            [
                format!("{ok}---\nc: [x\n---\nd: ").as_bytes(),
                b"\xff\n---\ne: \0\n",
            ]
            .concat(),
            [format!("{ok}---\nc: ").as_bytes(), b"\xfe\n---\nd: 1\n"].concat(),
            [format!("{ok}---\nc: ").as_bytes(), b"\xfe\n---\nd: \0\n"].concat(),
            format!("{ok}---\nc: {{\n...\n%YAML 1.2\n---\nd: 1\n").into(),
            ok.into(),
        ];
        let first = first_problem(cases[0].as_slice()).expect("an error");
        assert!(first.3.contains("document indicator"), "{first:?}");
        let nul = first_problem(cases[5].as_slice()).expect("an error");
        assert!(nul.3.contains("NUL"), "{nul:?}");
        for text in cases {
            assert_eq!(
                first_problem(&text),
                whole_problem(&text),
                "{}",
                String::from_utf8_lossy(&text)
            );
        }
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
