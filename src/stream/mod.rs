//! Streams: documents cut from a reader as they come, processed across cores, written in
//! order.
//!
//! A [`Reader`] reads any `Read` in chunks and closes a [`Batch`] of whole documents at the
//! first document boundary past [`BATCH_BYTES`]. The boundaries are those of `yaml::split`
//! (one `Cutter` decides for both), so every batch, and every piece in it, parses alone to
//! exactly the documents the whole stream holds. [`ordered()`] shares batches between threads
//! and hands the results back in stream order, with a bounded number in flight: memory
//! follows the largest document and the work in flight, not the stream. [`edit_stream`] puts it
//! together for one input and a [`Sink`]; on the first problem, [`settle()`] reports it as
//! reading the whole stream would. Stdin longer than its read-ahead ([`stdin`]) grows its
//! context as its documents come: all of that is in `late`.

mod late;
mod ordered;
mod read;
mod settle;
pub(crate) mod stdin;

pub(crate) use crate::yaml::text::line_cols;
pub(crate) use late::Namespaces;
pub(crate) use ordered::ordered;
pub use read::Reader;
pub(crate) use read::{BATCH_BYTES, Batch, MAX_DOCUMENT_BYTES, ReadError};
pub(crate) use settle::{Cause, Failure, line_col, settle};

use crate::config::Settings;
use crate::decide::RunContext;
use crate::finding::{Finding, Rule};
use crate::mesh::found::Base;
use crate::pipeline::{EditOptions, Pieces, edit_pieces};
use late::{Contexts, Late, Start};
use std::io::Read;
use std::sync::Arc;

/// Whether the bytes of `input` spell a word of the documents a first pass reads
/// (`Namespace`, or one of the words of the documents that say something about versions,
/// `manifest_versions::batch_may_hold`): a first pass need not cut an input that does not
/// into documents. An input that cannot be read is said to, for the first pass to meet the
/// error.
pub(crate) fn spells_context<R: Read>(mut input: R) -> bool {
    // Large parts, each searched on every core (`manifest_versions::may_hold_anywhere`); a
    // small input (most files of a directory) never gets the large buffer.
    const FIRST: usize = 256 << 10;
    const PART: usize = 4 << 20;
    let mut buf = vec![0u8; FIRST];
    // The last bytes of the previous part, which may begin a word.
    let mut kept = 0;
    loop {
        let mut end = kept;
        let mut eof = false;
        while end < buf.len() {
            match input.read(&mut buf[end..]) {
                Ok(0) => {
                    eof = true;
                    break;
                }
                Ok(n) => end += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return true,
            }
        }
        if end > kept && crate::manifest_versions::may_hold_anywhere(&buf[..end]) {
            return true;
        }
        if eof {
            return false;
        }
        kept = (crate::manifest_versions::LONGEST_NEEDLE - 1).min(end);
        buf.copy_within(end - kept..end, 0);
        buf.resize(PART, 0);
    }
}

/// The first pass over a file: only the documents that may add to the context are parsed
/// (`Namespace` documents, and those that may say something about versions, as
/// `decide::RunContext::wants` tells from the quick scanner), in batches that spell a word
/// of theirs. `file` names the file in the places of what is read. A problem in the input
/// is left for the pass that edits it to report.
pub(crate) fn first_pass<R: Read + Send>(
    mut reader: Reader<R>,
    file: Option<Arc<str>>,
) -> RunContext {
    let mut ctx = RunContext::default();
    let Some(first) = reader.next_batch() else {
        return ctx;
    };
    // Which pieces of a batch may add to the context: the search and the quick scanner,
    // the costly part, on every core; what they say is read in stream order.
    let wanted = |b: Result<Batch, ReadError>| -> Option<(Batch, Vec<usize>)> {
        let b = b.ok()?;
        let namespace = memchr::memmem::find(&b.bytes, b"Namespace").is_some();
        if !namespace && !crate::manifest_versions::batch_may_hold(&b.bytes) {
            return Some((b, Vec::new()));
        }
        // One scanner for the batch, which makes its bitmaps once, when it is text (else
        // each piece that is text is read alone).
        let text = std::str::from_utf8(&b.bytes).ok();
        let mut scanner = text.map(crate::yaml::quick::Scanner::new);
        let want = (b.pieces.iter().enumerate())
            .filter(|(_, r)| match (text, scanner.as_mut()) {
                (Some(text), Some(scanner)) => {
                    let head = scanner.head((*r).clone());
                    crate::decide::may_add(&text[(*r).clone()], head.as_ref(), true)
                }
                _ => (b.bytes.get((*r).clone()))
                    .and_then(|p| std::str::from_utf8(p).ok())
                    .is_some_and(|p| {
                        let head = crate::yaml::quick::head(p);
                        crate::decide::may_add(p, head.as_ref(), true)
                    }),
            })
            .map(|(i, _)| i)
            .collect();
        Some((b, want))
    };
    let mut read = |w: Option<(Batch, Vec<usize>)>| -> bool {
        let Some((b, want)) = w else {
            return false;
        };
        let mut lines = crate::decide::Lines::default();
        for r in want.iter().filter_map(|&i| b.pieces.get(i)) {
            if let Some(piece) = b
                .bytes
                .get(r.clone())
                .and_then(|p| std::str::from_utf8(p).ok())
            {
                let base = Base {
                    file: file.clone(),
                    offset: b.offset as usize + r.start,
                    line: b.line as usize + lines.before(&b.bytes, r.start),
                };
                ctx.add_wanted(piece, &base);
            }
        }
        true
    };
    if reader.at_eof() {
        // All of it is in memory already: no threads.
        for b in std::iter::once(first).chain(&mut reader) {
            if !read(wanted(b)) {
                break;
            }
        }
    } else {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let source = std::iter::once(first).chain(&mut reader);
        let _ = ordered(
            threads,
            AHEAD_PER_THREAD * threads + 2,
            source,
            wanted,
            &mut read,
        );
    }
    ctx
}

/// One batch, edited: the batch and its result, as the sink takes them.
#[derive(Debug)]
pub(crate) struct Done {
    pub batch: Batch,
    /// The outcome of its pieces; offsets in the stream.
    pub result: Pieces,
    /// The batch is not text: where (in the batch) and why.
    pub decode: Option<(usize, String)>,
    /// What the stream's `Namespace` documents said before this batch.
    pub ctx: Arc<RunContext>,
    /// Stdin past its read-ahead: what its pieces said about the context.
    late: Late,
}

impl Done {
    /// Whether any piece changed.
    pub(crate) fn changed(&self) -> bool {
        self.result.outs.iter().any(Option::is_some)
    }

    /// The batch as text (empty when it is not text).
    pub(crate) fn text(&self) -> &str {
        std::str::from_utf8(&self.batch.bytes).unwrap_or_default()
    }

    /// Each piece, as it was and as it is when it changed.
    pub(crate) fn pieces(&self) -> impl Iterator<Item = (&str, Option<&str>)> {
        let text = self.text();
        self.batch.pieces.iter().enumerate().map(move |(i, r)| {
            let new = self.result.outs.get(i).and_then(Option::as_deref);
            (text.get(r.clone()).unwrap_or_default(), new)
        })
    }

    /// The batch's output, in parts: the batch as it was when nothing changed, else each
    /// piece, as it is now.
    pub(crate) fn output(&self) -> impl Iterator<Item = &[u8]> {
        let whole = (!self.changed()).then_some(&self.batch.bytes[..]);
        let pieces = self
            .pieces()
            .filter(move |_| whole.is_none())
            .map(|(old, new)| new.unwrap_or(old).as_bytes());
        whole.into_iter().chain(pieces)
    }

    /// Writes the batch's output ([`Done::output`]) to `out`: the one loop every host's
    /// output (stdout, a file's replacement, a text in memory) goes through.
    pub(crate) fn write_into<O: Output + ?Sized>(&self, out: &mut O) -> Result<(), O::Error> {
        self.output().try_for_each(|o| out.put(o))
    }
}

/// Where a batch's output is written ([`Done::write_into`]).
pub(crate) trait Output {
    type Error;
    fn put(&mut self, bytes: &[u8]) -> Result<(), Self::Error>;
}

impl Output for Vec<u8> {
    type Error = std::convert::Infallible;
    fn put(&mut self, bytes: &[u8]) -> Result<(), Self::Error> {
        self.extend_from_slice(bytes);
        Ok(())
    }
}

/// Where the batches of a stream go, in order.
pub(crate) trait Sink {
    /// The next batch, edited without a fatal error. An error (an output that cannot be
    /// written) stops the stream: nothing more is read.
    fn batch(&mut self, done: &Done) -> std::io::Result<()>;

    /// After a fatal error: the bytes of the failing batch and of every later one, in order.
    /// False when they cannot be written: the rest of the stream is not read.
    fn rest(&mut self, _bytes: &[u8]) -> bool {
        true
    }

    /// Whether the sink writes the input back on a failure (`fix -`): then a document too
    /// big to edit, and what follows it, are read to be written back.
    fn gives_back(&self) -> bool {
        false
    }
}

/// Why a stream stopped.
#[derive(Debug)]
pub(crate) enum Stop {
    /// The input: not text, a document too large, not YAML, or an internal error.
    Failed(Box<Failure>),
    /// It could not be read.
    Read(std::io::Error),
    /// The sink refused a batch: its output could not be written.
    Sink(std::io::Error),
}

/// How many batches a thread may have read ahead of the writer.
const AHEAD_PER_THREAD: usize = 2;

fn work(
    b: Result<(Batch, Arc<RunContext>), ReadError>,
    settings: &Settings,
    opts: EditOptions<'_>,
    ns: Namespaces<'_>,
    in_memory: bool,
) -> Result<Done, ReadError> {
    let (batch, ctx) = b?;
    Ok(work_on(batch, ctx, settings, opts, ns, in_memory))
}

/// Edits one batch, with `ctx`, what the stream said before it.
fn work_on(
    batch: Batch,
    ctx: Arc<RunContext>,
    settings: &Settings,
    opts: EditOptions<'_>,
    ns: Namespaces<'_>,
    in_memory: bool,
) -> Done {
    let decoded = if in_memory {
        // A text in memory is text already (batches begin at line starts).
        std::str::from_utf8(&batch.bytes).map_err(|e| (e.valid_up_to(), e.to_string()))
    } else {
        crate::source::decode_part(&batch.bytes, batch.offset)
    };
    let start = Start {
        offset: batch.offset,
        line: batch.line,
    };
    let mut context = ns.context(&ctx, start, settings);
    let (result, decode) = match decoded {
        Ok(text) => (
            edit_pieces(
                text,
                batch.offset as usize,
                &batch.pieces,
                settings,
                opts,
                &mut context,
                true,
            ),
            None,
        ),
        Err(d) => (Pieces::default(), Some(d)),
    };
    let late = context.late;
    Done {
        batch,
        result,
        decode,
        ctx,
        late,
    }
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

/// Cuts `input` into documents, edits them (on every core when there is more than one
/// batch) and hands them to `sink` in order. On the first problem, settles it as reading the
/// whole stream would report it (see [`settle()`]).
pub(crate) fn edit_stream<R: Read + Send>(
    input: R,
    settings: &Settings,
    opts: EditOptions<'_>,
    ns: Namespaces<'_>,
    sink: &mut dyn Sink,
) -> Result<(), Stop> {
    edit_reader(Reader::new(input), settings, opts, ns, false, sink)
}

/// [`edit_stream`] with a reader of chosen sizes. `in_memory`: the input is a text already
/// (`run::edit_text_with`), so it is not checked for NUL bytes or a UTF-16/32 start.
pub(crate) fn edit_reader<R: Read + Send>(
    mut reader: Reader<R>,
    settings: &Settings,
    opts: EditOptions<'_>,
    ns: Namespaces<'_>,
    in_memory: bool,
    sink: &mut dyn Sink,
) -> Result<(), Stop> {
    let contexts = Contexts::new(ns);
    // Under `Namespaces::From`: what the batches taken said.
    let mut seen = late::Seen::default();
    let Some(first) = reader.next_batch() else {
        return Ok(());
    };
    let mut failing: Option<Done> = None;
    let mut stop: Option<Stop> = None;
    let mut too_big = false;
    // The stream's first edit, where it is shown (offset, line, column).
    let mut first_edit: Option<(u64, usize, usize)> = None;
    let mut take = |r: Result<Done, ReadError>| -> bool {
        let done = match r {
            Ok(d) => d,
            Err(e) => {
                too_big = matches!(e, ReadError::TooBig { .. });
                stop = Some(read_stop(e));
                return false;
            }
        };
        let mut done = contexts.check(done, |batch, ctx| {
            work_on(batch, ctx, settings, opts, ns, in_memory)
        });
        seen.versions(&mut done);
        if first_edit.is_none() {
            let b = &done.batch;
            first_edit = done.result.first_edit.map(|e| {
                let (line, col) = line_col(b.line, &b.bytes, e - b.offset as usize);
                (e as u64, line, col)
            });
        }
        if done.decode.is_some() || done.result.fatal.is_some() {
            failing = Some(done);
            return false;
        }
        if let Some(f) = seen.namespaces(&done) {
            stop = Some(Stop::Failed(Box::new(f)));
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
            if !take(work(contexts.tag(b), settings, opts, ns, in_memory)) {
                break;
            }
        }
    } else {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let source = std::iter::once(first)
            .chain(&mut reader)
            .map(|b| contexts.tag(b));
        let (_, left) = ordered(
            threads,
            AHEAD_PER_THREAD * threads + 2,
            source,
            |b| work(b, settings, opts, ns, in_memory),
            &mut take,
        );
        after = left;
    }
    if let Some(s) = stop {
        if too_big && sink.gives_back() {
            // The document too big to edit, and the rest, go back as they are (`fix -`).
            reader.drain(|b| sink.rest(b));
        }
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
    let ctx = done.ctx.clone();
    // A window's own context documents count as they did for its batches.
    let reference = |t: &str, start: Start| {
        let all = 0..t.len();
        let mut context = ns.context(&ctx, start, settings);
        let at = start.offset as usize;
        let whole = std::slice::from_ref(&all);
        let p = edit_pieces(t, at, whole, settings, opts, &mut context, false);
        (p.fatal.map(|(_, f)| f), p.first_edit)
    };
    let mut f = settle(
        done.batch,
        cause,
        after,
        &mut reader,
        |b| sink.rest(b),
        &reference,
        in_memory,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_pass_on_every_core_reads_what_one_reads_in_order() {
        // Every input of testdata, Namespaces, versions and injected proxies among them,
        // one after the other and repeated, in batches small enough for many threads: what
        // the first pass reads is what reading each piece in order reads, in that order.
        fn walk(dir: &std::path::Path, out: &mut Vec<String>) {
            let Ok(rd) = std::fs::read_dir(dir) else {
                return;
            };
            let mut paths: Vec<_> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
            paths.sort();
            for p in paths {
                if p.is_dir() {
                    walk(&p, out);
                } else if p.extension().is_some_and(|e| e == "yaml") {
                    out.extend(std::fs::read_to_string(&p).ok());
                }
            }
        }
        let mut parts = Vec::new();
        walk(std::path::Path::new("testdata"), &mut parts);
        assert!(parts.len() > 100, "testdata is there");
        let mut text = String::new();
        for round in 0..3 {
            for p in parts.iter().skip(round) {
                text.push_str(p);
                if !text.ends_with('\n') {
                    text.push('\n');
                }
                text.push_str("---\n");
            }
        }
        let whole = crate::yaml::split::pieces(&text);
        let want = format!("{:?}", RunContext::of_stream(&text, &whole, None));
        assert!(
            want.contains("Namespace") && want.contains("Kubelet"),
            "{want}"
        );
        for batch in [1 << 10, 64 << 10] {
            let reader = Reader::with_sizes(text.as_bytes(), batch, usize::MAX);
            assert_eq!(format!("{:?}", first_pass(reader, None)), want, "{batch}");
        }
    }

    #[test]
    fn spells_context_across_reads() {
        /// Gives its bytes `n` at a time.
        struct Trickle<'a>(&'a [u8], usize);
        impl Read for Trickle<'_> {
            fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
                let n = self.1.min(buf.len()).min(self.0.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        let text = b"a: 1\nkind: Namespace\n";
        for n in 1..text.len() {
            assert!(spells_context(Trickle(text, n)), "{n}");
            assert!(!spells_context(Trickle(&text[..18], n)), "{n}");
        }
        assert!(!spells_context(&b""[..]));
    }
}
