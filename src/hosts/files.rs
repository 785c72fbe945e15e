//! The command line's host: files, directories and stdin in; a diff, rewritten files or
//! the rewritten stream out; findings on stderr.

use crate::config::Settings;
use crate::exit;
use crate::finding::{Finding, Rule, Severity};
use crate::output::console::{self, ColorChoice};
use crate::output::diff;
use crate::output::hold::HoldBack;
use crate::output::hunks::Hunks;
use crate::output::report::{Format, Located};
use crate::output::write::{Replacement, Seen};
use crate::run;
use crate::source::{self, Origin};
use crate::stream::{self, Done, Sink, Stop};
use std::io::{IsTerminal, Write};

/// What the run does with each input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Print the diff; exit 0.
    Diff,
    /// Print the diff; exit 1 when anything would change or an error is found.
    Check,
    /// Rewrite files in place (stdin to stdout); exit 1 when errors are left.
    Fix,
}

/// One run of `diff`, `check` or `fix`.
#[derive(Clone, Debug)]
pub struct Request {
    pub mode: Mode,
    /// Files or directories; `-` is stdin. Empty: stdin, unless it is a terminal.
    pub paths: Vec<String>,
    /// Treat documents without apiVersion/kind as a bare MeshConfig (`--mesh-config`).
    pub force_mesh: bool,
    pub color: ColorChoice,
    pub format: Format,
    /// Show only warnings and errors.
    pub quiet: bool,
}

/// What one run saw, for the exit code and the JSON report.
#[derive(Default)]
struct Tally {
    trouble: bool,
    changed: Vec<String>,
    errors_left: bool,
    errors_any: bool,
    /// The once-per-run note has been shown.
    noted: bool,
}

/// A problem that stopped an input, shown at its start.
fn stopped(rule: Rule, path: &str, msg: impl Into<String>) -> Located {
    Located {
        path: path.to_string(),
        line: 1,
        col: 1,
        finding: Finding::error(rule, 0, msg),
    }
}

/// Runs `req` with `settings`; the exit status.
///
/// Each input is streamed (`stream::process`): its documents are cut, processed on every
/// core and written in order as they come, so memory follows the largest document, not the
/// input. Runs of small files are shared between threads, one file each, and reported in
/// the order of the arguments and the walk.
pub fn run(req: &Request, settings: &Settings) -> u8 {
    let mode = req.mode;
    let mut paths = req.paths.clone();
    if paths.is_empty() {
        if std::io::stdin().is_terminal() {
            return console::trouble("no PATH given; pass files or directories, or `-` for stdin");
        }
        paths.push("-".into());
    }
    let color_out = req.color.enabled(std::io::stdout().is_terminal());
    let color_err = req.color.enabled(std::io::stderr().is_terminal());
    let (origins, walk_errors) = source::expand(&paths);
    let mut tally = Tally::default();
    let mut problems = Vec::new();
    for (p, msg) in walk_errors {
        problems.push(stopped(Rule::Unreadable, &p, msg));
        tally.trouble = true;
    }
    let mut reports: Vec<Located> = Vec::new();
    let mut take = |r: FileResult, out: &[u8]| {
        console::stdout(out);
        tally.take(r, req.quiet, &mut reports, &mut problems);
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut i = 0;
    while i < origins.len() {
        // A run of small files: one file a job, on every core.
        let small = origins[i..]
            .iter()
            .take_while(|o| source::file_len(o).is_some_and(|n| n <= SMALL_FILE_BYTES))
            .count();
        if small > 1 && threads > 1 {
            let files = &origins[i..i + small];
            let _ = stream::ordered(
                threads,
                4 * threads,
                files.iter(),
                |o| {
                    let mut out = Vec::new();
                    let r = process_file(o, req, settings, color_out, &mut out);
                    (r, out)
                },
                |(r, out)| {
                    take(r, &out);
                    true
                },
            );
            i += small;
            continue;
        }
        let mut out = console::stdout_writer();
        let r = process_file(&origins[i], req, settings, color_out, &mut out);
        drop(out);
        take(r, &[]);
        i += 1;
    }
    // Problems that stopped a file come last, after everything that was processed.
    reports.extend(problems);
    console::findings(
        &reports,
        req.format,
        color_err,
        mode == Mode::Fix,
        &tally.changed,
    );
    if tally.trouble {
        exit::TROUBLE
    } else {
        match mode {
            Mode::Diff => exit::OK,
            Mode::Check if !tally.changed.is_empty() || tally.errors_any => exit::FINDINGS,
            Mode::Fix if tally.errors_left => exit::FINDINGS,
            _ => exit::OK,
        }
    }
}

/// Files up to this size are processed whole by one thread, next to other such files.
const SMALL_FILE_BYTES: u64 = stream::BATCH_BYTES as u64;

/// What one input gave.
struct FileResult {
    name: String,
    /// Its findings, in text order.
    findings: Vec<Located>,
    /// What stopped it (it then counts as not processed), or the write that failed.
    problem: Option<Located>,
    changed: bool,
}

impl Tally {
    /// Counts one input's result and queues its reports.
    fn take(
        &mut self,
        r: FileResult,
        quiet: bool,
        reports: &mut Vec<Located>,
        problems: &mut Vec<Located>,
    ) {
        if let Some(p) = r.problem {
            self.trouble = true;
            let stopped = p.finding.rule != Rule::Unwritable;
            problems.push(p);
            if stopped {
                return;
            }
        }
        for l in r.findings {
            let f = &l.finding;
            if f.rule.once_per_run() && std::mem::replace(&mut self.noted, true) {
                continue;
            }
            if f.severity == Severity::Error {
                self.errors_any = true;
                if !f.fixed {
                    self.errors_left = true;
                }
            }
            if quiet && f.severity == Severity::Info {
                continue;
            }
            reports.push(l);
        }
        if r.changed {
            self.changed.push(r.name);
        }
    }
}

/// Streams one input through the pipeline; its diff or fixed text goes to `out` (a fixed
/// file goes back to the file).
fn process_file(
    origin: &Origin,
    req: &Request,
    settings: &Settings,
    color: bool,
    out: &mut dyn Write,
) -> FileResult {
    let name = origin.display();
    let mut result = FileResult {
        name: name.clone(),
        findings: Vec::new(),
        problem: None,
        changed: false,
    };
    let input = match source::open(origin) {
        Ok(i) => i,
        Err(m) => {
            result.problem = Some(stopped(Rule::Unreadable, &name, m));
            return result;
        }
    };
    let echo = req.mode == Mode::Fix && *origin == Origin::Stdin;
    let mut sink = FileSink {
        mode: req.mode,
        origin,
        name: &name,
        out: HoldBack::new(out, echo),
        hunks: Hunks::new(&name),
        color,
        replacement: None,
        seen: Seen::default(),
        findings: Vec::new(),
        changed: false,
    };
    let opts = run::ProcessOptions {
        force_mesh: req.force_mesh,
    };
    match stream::process(input, settings, opts, &mut sink) {
        Ok(()) => {
            sink.finish();
            result.findings = std::mem::take(&mut sink.findings);
            result.changed = sink.changed;
            let written = match sink.replacement.take() {
                Some(Ok(r)) => r.commit(&sink.seen),
                Some(Err(m)) => Err(m),
                None => Ok(()),
            };
            if let Err(m) = written {
                result.problem = Some(stopped(
                    Rule::Unwritable,
                    &name,
                    format!("cannot write: {m}"),
                ));
            }
        }
        Err(Stop::Failed(f)) => {
            sink.out.fail();
            let f = *f;
            let mut finding = f.finding;
            finding.message = format!("{}; file left untouched", finding.message);
            result.problem = Some(Located {
                path: name,
                line: f.line,
                col: f.col,
                finding,
            });
        }
        Err(Stop::Read(e)) => {
            sink.out.fail();
            let m = match origin {
                Origin::Stdin => format!("cannot read stdin: {e}"),
                Origin::File(_) => source::cannot_read(&e),
            };
            result.problem = Some(stopped(Rule::Unreadable, &name, m));
        }
        Err(Stop::Sink(m)) => {
            sink.out.fail();
            result.problem = Some(stopped(Rule::Unwritable, &name, m));
        }
    }
    result
}

/// Where the batches of one input go: the diff, stdout, or the file's replacement.
struct FileSink<'a, 'o> {
    mode: Mode,
    origin: &'a Origin,
    name: &'a str,
    out: HoldBack<'o>,
    hunks: Hunks,
    color: bool,
    /// `fix FILE`: the replacement, begun at the first change (or why it could not be).
    replacement: Option<Result<Replacement, String>>,
    /// `fix FILE`: what the file held, to check before replacing it.
    seen: Seen,
    findings: Vec<Located>,
    changed: bool,
}

impl FileSink<'_, '_> {
    fn diff(&mut self, s: String) {
        if s.is_empty() {
            return;
        }
        let s = if self.color { diff::colorize(&s) } else { s };
        self.out.write(s.as_bytes());
    }

    fn finish(&mut self) {
        if matches!(self.mode, Mode::Diff | Mode::Check) {
            let mut s = String::new();
            std::mem::replace(&mut self.hunks, Hunks::new(self.name)).finish(&mut s);
            self.diff(s);
        }
        self.out.finish();
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
        let written = if done.changed() {
            done.pieces()
                .try_for_each(|(old, new)| r.write(new.unwrap_or(old).as_bytes()))
        } else {
            r.write(&done.batch.bytes)
        };
        if let Err(m) = written {
            self.replacement = Some(Err(m));
        }
    }
}

impl Sink for FileSink<'_, '_> {
    fn batch(&mut self, done: &Done) -> Result<(), String> {
        let b = &done.batch;
        let mut found = done.result.findings.clone();
        found.sort_by_key(|f| f.offset);
        let offsets: Vec<usize> = found.iter().map(|f| f.offset).collect();
        let places = stream::line_cols(b.line, &b.bytes, &offsets);
        for (mut f, (line, col)) in found.into_iter().zip(places) {
            f.offset += b.offset as usize;
            self.findings.push(Located {
                path: self.name.to_string(),
                line,
                col,
                finding: f,
            });
        }
        self.changed |= done.changed();
        match self.mode {
            Mode::Diff | Mode::Check => {
                let mut s = String::new();
                if done.changed() {
                    for (old, new) in done.pieces() {
                        match new {
                            Some(new) => self.hunks.change(old, new, &mut s),
                            None => self.hunks.equal(old, &mut s),
                        }
                    }
                } else {
                    self.hunks.equal(done.text(), &mut s);
                }
                self.diff(s);
            }
            Mode::Fix => match self.origin {
                Origin::Stdin => {
                    self.out.input(&b.bytes);
                    if done.changed() {
                        for (old, new) in done.pieces() {
                            self.out.write(new.unwrap_or(old).as_bytes());
                        }
                    } else {
                        self.out.write(&b.bytes);
                    }
                }
                Origin::File(p) => {
                    self.seen.update(&b.bytes);
                    self.replace(p, done);
                }
            },
        }
        Ok(())
    }

    fn rest(&mut self, bytes: &[u8]) {
        self.out.echo(bytes);
    }
}
