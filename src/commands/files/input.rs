//! One input through the pipeline: opened, streamed into a [`FileSink`], and what became
//! of it.

use super::emit::Reporter;
use super::sink::FileSink;
use super::{Mode, Request};
use crate::config::Settings;
use crate::decide::RunContext;
use crate::finding::{Finding, Rule};
use crate::output::hold::HoldBack;
use crate::output::hunks::Hunks;
use crate::output::report::Located;
use crate::output::write::Seen;
use crate::run;
use crate::source::{self, Input, Origin};
use crate::stream::stdin::Stdin;
use crate::stream::{self, Namespaces, Stop};
use std::io::{Read, Write};

/// The finding that stops an input, and what became of it (`left`: "; file left
/// untouched", or what `fix -` wrote). A file that does not parse and holds `{{` (`braces`) is a
/// template: the advice is to render it, not to fix its syntax.
fn fatal_finding(f: Finding, braces: bool, left: &str) -> Finding {
    if f.rule == Rule::InvalidYaml && braces {
        return Finding::error(
            Rule::Template,
            f.offset,
            format!(
                "not YAML: this file holds `{{{{` and looks like a template (Helm, Go or Jinja), \
             which is YAML only once rendered; check the rendered output instead (`helm \
             template RELEASE CHART | meshjob check -`), or leave the file out with \
             --exclude{left}"
            ),
        );
    }
    Finding {
        message: format!("{}{left}", f.message),
        ..f
    }
}

/// Files up to this size are processed whole by one thread, next to other such files.
pub(super) const SMALL_FILE_BYTES: u64 = stream::BATCH_BYTES as u64;

/// What one input gave.
#[derive(Default)]
pub(super) struct FileResult {
    /// Its findings, in text order (those not given to the reporter as they came).
    pub(super) findings: Vec<Located>,
    /// What stopped it (it then counts as not processed), or the write that failed.
    pub(super) problem: Option<Located>,
    pub(super) changed: bool,
    /// It holds something meshjob handles (a pod of the kinds table, mesh-wide values).
    pub(super) handled: bool,
    /// Its diff, for the JSON report (empty otherwise).
    pub(super) diff: String,
    /// Stdout did not take its output (why).
    pub(super) stdout_failed: Option<String>,
    /// Its documents not counted by the reporter as they came.
    pub(super) documents: u64,
}

/// The first pass over a file (`stream::first_pass`): what its `Namespace` documents and the
/// documents that say something about versions say. Stdin (its first pass is
/// `stream::stdin`'s), and a file that cannot be opened (the second pass reports it), give
/// `None`.
pub(super) fn first_pass(input: &Input) -> Option<RunContext> {
    match &input.origin {
        Origin::File(_) => {
            if !stream::spells_context(source::open(&input.origin).ok()?) {
                return Some(RunContext::default());
            }
            source::open(&input.origin).ok().map(|i| {
                stream::first_pass(stream::Reader::new(i), Some(input.name.as_str().into()))
            })
        }
        Origin::Stdin => None,
    }
}

/// Streams one input through the pipeline; its diff or fixed text goes to `out` (a fixed
/// file goes back to the file; the JSON report keeps the diff instead). With the run's
/// reporter (`live`), its findings and its diff for the JSON report go there as they come
/// (see [`FileSink`]); else they are kept in the result.
///
/// A file is read twice: a first pass over every input of the run collects what their
/// `Namespace` documents say ([`first_pass`]), then the file is processed with `ctx`. Stdin
/// (`stdin`, its first pass done) is read ahead, and past its read-ahead a `Namespace`
/// document applies to the documents after it, added to `ctx` (`stream::stdin`).
#[allow(clippy::too_many_arguments)]
pub(super) fn stream_input(
    input: &Input,
    req: &Request,
    settings: &Settings,
    ctx: &RunContext,
    stdin: Option<Result<Stdin, String>>,
    color: bool,
    live: Option<&mut Reporter>,
    out: &mut dyn Write,
) -> FileResult {
    let (origin, name) = (&input.origin, input.name.as_str());
    let fix_stdin = req.mode == Mode::Fix && *origin == Origin::Stdin;
    let opened = match origin {
        Origin::File(_) => source::open(origin).map(|i| (i, Namespaces::Whole(ctx), None)),
        Origin::Stdin => match stdin {
            Some(Ok(s)) => {
                let head = fix_stdin.then(|| s.head());
                let ns = s.namespaces(ctx);
                Ok((Box::new(s.reader()) as Box<dyn Read + Send>, ns, head))
            }
            Some(Err(m)) => Err(m),
            None => Err("cannot read stdin: it is given twice".into()),
        },
    };
    let (stream_in, ns, head) = match opened {
        Ok(o) => o,
        Err(m) => {
            return FileResult {
                problem: Some(stopped(Rule::Unreadable, name, m)),
                ..FileResult::default()
            };
        }
    };
    // The report on stdout keeps the diff (JSON) or leaves it out (SARIF).
    let json = super::on_stdout(req.format);
    let mut sink = FileSink {
        mode: req.mode,
        origin,
        name,
        out: match head {
            Some(head) => HoldBack::giving_back(out, head),
            None => HoldBack::new(out),
        },
        hunks: ((req.mode != Mode::Fix || json) && !req.less.no_diff).then(|| Hunks::new(name)),
        json,
        live,
        fail_on: settings.fail_on,
        released: false,
        color,
        replacement: None,
        seen: Seen::default(),
        braces: false,
        result: FileResult::default(),
    };
    // The context is in `ns`: the engine does not read `opts.namespaces`.
    let opts = run::EditOptions {
        force_mesh: req.force_mesh,
        namespaces: None,
    };
    let stop = match stream::edit_stream(stream_in, settings, opts, ns, &mut sink) {
        Ok(()) => {
            if let Err(e) = sink.finish() {
                sink.stdout_failed(&e);
            }
            let written = match sink.replacement.take() {
                Some(Ok(r)) => r.commit(&sink.seen),
                Some(Err(m)) => Err(m),
                None => Ok(()),
            };
            if let Err(m) = written {
                sink.result.problem = Some(stopped(
                    Rule::Unwritable,
                    name,
                    format!("cannot write: {m}"),
                ));
            }
            None
        }
        Err(s) => {
            if let Err(e) = sink.out.fail() {
                sink.stdout_failed(&e);
            }
            Some(s)
        }
    };
    // What became of the input that failed.
    let left = match origin {
        Origin::File(_) => "; file left untouched",
        Origin::Stdin if !fix_stdin => "",
        Origin::Stdin if sink.out.gave_back() => "; stdin written back unchanged",
        Origin::Stdin => "; the output stops before it",
    };
    match stop {
        None => {}
        Some(Stop::Failed(f)) => {
            let f = *f;
            let braces = sink.braces
                || (f.finding.rule == Rule::InvalidYaml
                    && matches!(origin, Origin::File(_))
                    && holds_braces(origin));
            sink.result.problem = Some(Located {
                path: name.to_string(),
                line: f.line,
                col: f.col,
                finding: fatal_finding(f.finding, braces, left),
            });
        }
        Some(Stop::Read(e)) => {
            let m = match origin {
                Origin::Stdin => format!("cannot read stdin: {e}"),
                Origin::File(_) => source::cannot_read(&e),
            };
            sink.result.problem = Some(stopped(Rule::Unreadable, name, m));
        }
        // The sink refuses a batch only when stdout fails: said once for the run.
        Some(Stop::Sink(_)) => {}
    }
    sink.result
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

/// Whether a file holds `{{` (read again in blocks: it did not parse, so this is rare).
fn holds_braces(origin: &Origin) -> bool {
    let Ok(mut f) = source::open(origin) else {
        return false;
    };
    let mut buf = vec![0u8; 64 << 10];
    let mut last = 0u8;
    loop {
        let n = match f.read(&mut buf) {
            Ok(0) | Err(_) => return false,
            Ok(n) => n,
        };
        if (last == b'{' && buf[0] == b'{') || memchr::memmem::find(&buf[..n], b"{{").is_some() {
            return true;
        }
        last = buf[n - 1];
    }
}
