//! Stdin, read ahead, so that its `Namespace` documents, and the documents that say which
//! versions run, decide its pods as a file's do.
//!
//! A `Namespace` document places the pods of its namespace in a mesh or in ambient mode,
//! and a document that says which versions run (`crate::manifest_versions`) decides the fix of every
//! pod, wherever they stand in the stream. A file is read twice for that (a first pass reads
//! only those documents, see [`super::first_pass`]). Stdin can be read once only, and the
//! streams a plugin is given do not put Namespaces first: kustomize hands a legacy exec
//! plugin its resources in the order of `resources:` and the Helm post-renderer gets the
//! templates in file-name order (see `docs/strategies.md`, "Namespaces on stdin", for the
//! sources). So:
//!
//! - the first [`HOLD_BYTES`] of stdin are read before any of it is processed, and read in a
//!   first pass; a stream that ends within them (any rendered chart or kustomization of
//!   ordinary size) is decided exactly as a file is;
//! - stdin that is a regular file (`meshjob fix - < all.yaml`) is read to its end in a first
//!   pass, then set back to where it was: decided as a file, whatever its size;
//! - past the read-ahead on a pipe, a `Namespace` document applies to the documents after it,
//!   and one that comes after a pod it would place stops the run
//!   ([`crate::finding::Rule::LateNamespace`]): never a pod decided without its Namespace. A
//!   document that says which versions run applies to the documents after it, and one that
//!   comes after pods is a warning ([`crate::finding::Rule::VersionsReadLate`]).
//!
//! The read-ahead is also what `fix -` gives back unchanged on a failure
//! (`output::hold`): memory holds it once.

use super::{Namespaces, Reader};
use crate::decide::RunContext;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::sync::Arc;

/// Output held back before any is written (`output::hold`), and as much of stdin read ahead
/// before any of it is processed: `fix -` keeps that much input to give back, counted apart
/// from the output. The findings of the first `HOLD_BYTES` of an input are held as well
/// (`commands::files`), so that an input that fails within them shows only its error.
pub const HOLD_BYTES: usize = 8 << 20;

/// Stdin, its start read ahead, and what its context documents say.
pub(crate) struct Stdin {
    file: File,
    head: Arc<Vec<u8>>,
    /// Stdin ended within the read-ahead.
    complete: bool,
    /// The error that stopped the read-ahead, for the reader to give after the head.
    error: Option<std::io::Error>,
    ctx: RunContext,
    /// Where the first pass stopped, when it did not read all of stdin (a pipe longer than
    /// the read-ahead): the start of the first document it did not read whole.
    from: Option<u64>,
}

impl Stdin {
    /// Reads the start of stdin ahead, and its context documents in a first pass.
    pub(crate) fn open() -> std::io::Result<Stdin> {
        #[cfg(unix)]
        let file = {
            use std::os::fd::AsFd;
            File::from(std::io::stdin().as_fd().try_clone_to_owned()?)
        };
        #[cfg(windows)]
        let file = {
            use std::os::windows::io::AsHandle;
            File::from(std::io::stdin().as_handle().try_clone_to_owned()?)
        };
        Ok(Stdin::of(file, HOLD_BYTES))
    }

    /// [`Stdin::open`] on any file, with a read-ahead of `hold` bytes.
    pub(crate) fn of(file: File, hold: usize) -> Stdin {
        // Where a regular file is, to read it whole in the first pass and come back.
        let start = file
            .metadata()
            .ok()
            .filter(std::fs::Metadata::is_file)
            .and_then(|_| (&file).stream_position().ok());
        let mut head = Vec::new();
        let read = (&file).take(hold as u64).read_to_end(&mut head);
        let complete = matches!(read, Ok(n) if n < hold);
        let error = read.err();
        // Only a piece that spells `Namespace`, or a word of the documents that say
        // something about versions, can add to the context: the read-ahead need not be cut
        // into documents when it spells none.
        let spelled = crate::manifest_versions::may_hold_anywhere(&head);
        let (ctx, from) = if complete || error.is_some() {
            let ctx = match spelled {
                true => super::first_pass(Reader::new(&head[..]), None),
                false => RunContext::default(),
            };
            (ctx, None)
        } else if let Some(ctx) =
            start.and_then(|s| whole_file(&file, s, head.len() as u64, spelled))
        {
            (ctx, None)
        } else if spelled {
            let (ctx, from) = read_ahead(&head);
            (ctx, Some(from))
        } else {
            // Nothing read ahead says anything: the rest may say it from the start.
            (RunContext::default(), Some(0))
        };
        Stdin {
            file,
            head: Arc::new(head),
            complete,
            error,
            ctx,
            from,
        }
    }

    /// What stdin's context documents say (those of the first pass).
    pub(crate) fn context(&self) -> &RunContext {
        &self.ctx
    }

    /// How stdin's documents are decided, with `ctx` (its own context, with the run's).
    pub(crate) fn namespaces<'a>(&self, ctx: &'a RunContext) -> Namespaces<'a> {
        match self.from {
            None => Namespaces::Whole(ctx),
            Some(from) => Namespaces::From { ctx, from },
        }
    }

    /// The read-ahead, shared (what `fix -` gives back on a failure).
    pub(crate) fn head(&self) -> Arc<Vec<u8>> {
        Arc::clone(&self.head)
    }

    /// All of stdin, from its start: the read-ahead, then the rest.
    pub(crate) fn reader(self) -> StdinReader {
        StdinReader {
            head: Some(self.head),
            pos: 0,
            error: self.error,
            rest: (!self.complete).then_some(self.file),
        }
    }
}

/// The first pass over a regular file given as stdin: from `start` to its end, then back to
/// where the read-ahead (`head` bytes, which `spelled` says whether they spell a word of a
/// context document) left it. `None` when it cannot seek.
fn whole_file(file: &File, start: u64, head: u64, spelled: bool) -> Option<RunContext> {
    let mut f = file;
    // The read-ahead was searched already: only a word that ends past it is new.
    let after = head.saturating_sub(crate::manifest_versions::LONGEST_NEEDLE as u64 - 1);
    let spelled = spelled || {
        f.seek(SeekFrom::Start(start + after)).ok()?;
        super::spells_context(f)
    };
    let ctx = if spelled {
        f.seek(SeekFrom::Start(start)).ok()?;
        super::first_pass(Reader::new(f), None)
    } else {
        RunContext::default()
    };
    f.seek(SeekFrom::Start(start + head)).ok()?;
    Some(ctx)
}

/// The first pass over a read-ahead that is not the whole stream: its documents read whole
/// (all but the last, which may go on past it), and where the last begins.
fn read_ahead(head: &[u8]) -> (RunContext, u64) {
    // Only whole lines: a cut is decided by a line and the lines before it.
    let lines = memchr::memrchr(b'\n', head).map_or(0, |i| i + 1);
    let mut starts = Vec::new();
    for b in Reader::new(&head[..lines]).map_while(Result::ok) {
        starts.extend(b.pieces.iter().map(|r| b.offset + r.start as u64));
    }
    let from = starts.last().copied().unwrap_or(0);
    let whole = usize::try_from(from).unwrap_or(0);
    (super::first_pass(Reader::new(&head[..whole]), None), from)
}

/// Stdin from its start: the read-ahead, then the rest as it is read.
pub(crate) struct StdinReader {
    head: Option<Arc<Vec<u8>>>,
    pos: usize,
    error: Option<std::io::Error>,
    /// `None` when stdin ended within the read-ahead.
    rest: Option<File>,
}

impl Read for StdinReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if let Some(head) = &self.head {
            let left = head.get(self.pos..).unwrap_or_default();
            if !left.is_empty() {
                let n = left.len().min(buf.len());
                buf[..n].copy_from_slice(&left[..n]);
                self.pos += n;
                return Ok(n);
            }
            // Read: its memory goes (unless `fix -` still holds it to give back).
            self.head = None;
        }
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        match &mut self.rest {
            Some(f) => f.read(buf),
            None => Ok(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const NS: &str = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: n\n  labels:\n    istio.io/dataplane-mode: ambient\n";

    fn temp(text: &str) -> File {
        let mut f = tempfile::tempfile().expect("temp file");
        f.write_all(text.as_bytes()).expect("written");
        f.seek(SeekFrom::Start(0)).expect("rewound");
        f
    }

    /// The namespaces the first pass found in ambient mode.
    fn ambient(s: &Stdin) -> Vec<&str> {
        let a = &s.context().ambient_namespaces;
        a.iter().map(|(_, n)| n.as_str()).collect()
    }

    fn all(s: Stdin) -> String {
        let mut out = String::new();
        s.reader().read_to_string(&mut out).expect("read");
        out
    }

    #[test]
    fn a_regular_file_is_read_whole_in_the_first_pass_and_then_from_its_start() {
        let text = format!("{}---\n{NS}", "a: 1\n---\n".repeat(100));
        let s = Stdin::of(temp(&text), 64);
        assert!(!s.complete);
        assert!(s.from.is_none(), "decided as a file");
        assert_eq!(ambient(&s), ["n"]);
        assert_eq!(all(s), text);
    }

    /// The reading end of a pipe as a `File`, as stdin is one.
    fn pipe_file(r: std::io::PipeReader) -> File {
        #[cfg(unix)]
        return File::from(std::os::fd::OwnedFd::from(r));
        #[cfg(windows)]
        return File::from(std::os::windows::io::OwnedHandle::from(r));
    }

    #[test]
    fn a_pipe_past_the_read_ahead_counts_the_documents_read_whole() {
        let text = format!("{NS}---\nb: 2\n---\n{}", "a: 1\n---\n".repeat(100));
        let (r, mut w) = std::io::pipe().expect("pipe");
        let writer = std::thread::spawn({
            let text = text.clone();
            move || w.write_all(text.as_bytes())
        });
        let hold = NS.len() + 8;
        let s = Stdin::of(pipe_file(r), hold);
        assert_eq!(ambient(&s), ["n"]);
        // The read-ahead ends inside `b: 2`'s document: it is the first not read whole.
        assert_eq!(s.from, Some(NS.len() as u64));
        assert_eq!(all(s), text);
        writer.join().expect("joined").expect("written");
        // A Namespace cut by the end of the read-ahead is not read.
        let (r, mut w) = std::io::pipe().expect("pipe");
        let text2 = text.clone();
        let writer = std::thread::spawn(move || w.write_all(text2.as_bytes()));
        let s = Stdin::of(pipe_file(r), NS.len() - 3);
        assert!(ambient(&s).is_empty());
        assert_eq!(s.from, Some(0));
        assert_eq!(all(s), text);
        writer.join().expect("joined").expect("written");
    }

    #[test]
    fn a_stream_that_ends_within_the_read_ahead_is_whole() {
        let (r, mut w) = std::io::pipe().expect("pipe");
        w.write_all(b"a: 1\n---\n").expect("written");
        w.write_all(NS.as_bytes()).expect("written");
        drop(w);
        let s = Stdin::of(pipe_file(r), 1 << 20);
        assert!(s.complete && s.from.is_none());
        assert_eq!(ambient(&s), ["n"]);
    }
}
