//! Where the batches of one input go: the diff, stdout, or the file's replacement.

use super::Mode;
use super::emit::{Reporter, said_per_change};
use super::input::FileResult;
use crate::config::FailOn;
use crate::output::console;
use crate::output::diff;
use crate::output::hold::{HOLD_BYTES, HoldBack};
use crate::output::hunks::Hunks;
use crate::output::report::Located;
use crate::output::write::{Replacement, Seen};
use crate::source::Origin;
use crate::stream::{self, Done, Sink};

/// Where the batches of one input go: the diff, stdout, or the file's replacement.
///
/// With the run's reporter (`live`), findings go to it as each batch is settled once
/// [`HOLD_BYTES`] of input are past (within them, an input that fails shows none, as its
/// diff held back shows nothing), and the JSON report's diff as it is made.
pub(super) struct FileSink<'a, 'o, 'r> {
    pub(super) mode: Mode,
    pub(super) origin: &'a Origin,
    pub(super) name: &'a str,
    pub(super) out: HoldBack<'o>,
    /// The diff (`diff`, `check`, and `fix` for the JSON report).
    pub(super) hunks: Option<Hunks>,
    /// `--format json`: the diff is for the report, not printed; kept in the result
    /// ([`FileResult::diff`]), unless `live` takes it.
    pub(super) json: bool,
    /// The run's reporter, taking findings and the JSON report's diff as they come.
    pub(super) live: Option<&'r mut Reporter>,
    /// `failOn` of the input's settings, for the findings given to `live`.
    pub(super) fail_on: FailOn,
    /// The findings went to `live` (past [`HOLD_BYTES`] of input): the next go too.
    pub(super) released: bool,
    pub(super) color: bool,
    /// `fix FILE`: the replacement, begun at the first change (or why it could not be).
    pub(super) replacement: Option<Result<Replacement, String>>,
    /// `fix FILE`: what the file held, to check before replacing it.
    pub(super) seen: Seen,
    /// The input read so far holds `{{` (a template, when it does not parse).
    pub(super) braces: bool,
    /// What the input gave so far: the findings held (not given to `live`), whether it
    /// changed and holds something meshjob handles, its documents not yet counted by
    /// `live`, the diff kept, whether stdout failed.
    pub(super) result: FileResult,
}

impl FileSink<'_, '_, '_> {
    fn diff(&mut self, s: String) -> std::io::Result<()> {
        if s.is_empty() {
            return Ok(());
        }
        if self.json {
            match &mut self.live {
                Some(live) => live.diff(&s),
                None => self.result.diff.push_str(&s),
            }
            return Ok(());
        }
        let s = if self.color { diff::colorize(&s) } else { s };
        self.out.write(s.as_bytes())
    }

    /// The end of the input: the diff's last lines, and what is held, go out.
    pub(super) fn finish(&mut self) -> std::io::Result<()> {
        if let Some(h) = self.hunks.take() {
            let mut s = String::new();
            h.finish(&mut s);
            self.diff(s)?;
        }
        self.out.finish()
    }

    /// Keeps the first reason stdout failed.
    pub(super) fn stdout_failed(&mut self, e: &std::io::Error) {
        (self.result.stdout_failed).get_or_insert_with(|| console::cannot_write_stdout(e));
    }

    /// A batch is settled, its input ending at `end`: past [`HOLD_BYTES`] of input, the
    /// findings go to the reporter and the output (the diff) goes out.
    fn settled(&mut self, end: u64) -> std::io::Result<()> {
        let Some(live) = &mut self.live else {
            return Ok(());
        };
        self.released |= end > HOLD_BYTES as u64;
        live.done(std::mem::take(&mut self.result.documents), 0);
        if !self.released {
            return Ok(());
        }
        for l in self.result.findings.drain(..) {
            live.finding(l, self.fail_on);
        }
        live.flush();
        self.out.release()
    }

    /// `fix FILE`: the batch into the replacement, begun at the first change.
    fn replace(&mut self, path: &std::path::Path, done: &Done) {
        if self.replacement.is_none() && done.changed() {
            self.replacement = Some(Replacement::begin(path).and_then(|mut r| {
                r.copy_prefix(done.batch.offset)?;
                Ok(r)
            }));
        }
        let Some(Ok(r)) = &mut self.replacement else {
            return;
        };
        if let Err(m) = done.write_into(r) {
            self.replacement = Some(Err(m));
        }
    }
}

impl Sink for FileSink<'_, '_, '_> {
    fn batch(&mut self, done: &Done) -> std::io::Result<()> {
        let b = &done.batch;
        let mut found = done.result.findings.clone();
        if self.mode == Mode::Fix && !self.json {
            // Not kept to the end of a long stream only to be left out of the report.
            found.retain(|f| !said_per_change(f.rule));
        }
        found.sort_by_key(|f| f.offset);
        // Where each is in the batch, for its line and column.
        let offsets: Vec<usize> = (found.iter())
            .map(|f| f.offset.saturating_sub(b.offset as usize))
            .collect();
        let places = stream::line_cols(b.line, &b.bytes, &offsets);
        for (f, (line, col)) in found.into_iter().zip(places) {
            self.result.findings.push(Located {
                path: self.name.to_string(),
                line,
                col,
                finding: f,
            });
        }
        self.result.documents += b.pieces.len() as u64;
        self.result.changed |= done.changed();
        self.result.handled |= done.result.handled;
        self.braces |= memchr::memmem::find(&b.bytes, b"{{").is_some();
        if let Some(h) = &mut self.hunks {
            let mut s = String::new();
            if done.changed() {
                for (old, new) in done.pieces() {
                    match new {
                        Some(new) => h.change(old, new, &mut s),
                        None => h.equal(old, &mut s),
                    }
                }
            } else {
                h.equal(done.text(), &mut s);
            }
            self.diff(s).inspect_err(|e| self.stdout_failed(e))?;
        }
        match self.mode {
            Mode::Diff | Mode::Check => {}
            Mode::Fix => match self.origin {
                Origin::Stdin => {
                    let out = &mut self.out;
                    let written = out.input(b.bytes.len()).and_then(|()| done.write_into(out));
                    written.inspect_err(|e| self.stdout_failed(e))?;
                }
                Origin::File(p) => {
                    self.seen.update(&b.bytes);
                    self.replace(p, done);
                }
            },
        }
        self.settled(b.offset + b.bytes.len() as u64)
            .inspect_err(|e| self.stdout_failed(e))
    }

    fn gives_back(&self) -> bool {
        self.out.gives_back()
    }

    fn rest(&mut self, bytes: &[u8]) -> bool {
        self.braces |= memchr::memmem::find(bytes, b"{{").is_some();
        match self.out.echo(bytes) {
            Ok(()) => true,
            Err(e) => {
                self.stdout_failed(&e);
                false
            }
        }
    }
}
