//! The command line's host: files, directories and stdin in; a diff, rewritten files or
//! the rewritten stream out; findings on stderr.

use crate::config::Settings;
use crate::exit;
use crate::finding::{Finding, Rule, Severity};
use crate::output::console::{self, ColorChoice};
use crate::output::report::{Format, Located};
use crate::output::{diff, write};
use crate::run;
use crate::source::{self, LoadError, Origin};
use std::io::IsTerminal;

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
    /// The rules whose once-per-run note has been shown.
    noted: Vec<crate::finding::Rule>,
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
    for origin in origins {
        let name = origin.display();
        let text = match source::load(&origin) {
            Ok(t) => t,
            Err(LoadError::Read(m)) => {
                tally.trouble = true;
                problems.push(stopped(Rule::Unreadable, &name, m));
                continue;
            }
            Err(LoadError::Decode {
                bytes,
                offset,
                message,
            }) => {
                tally.trouble = true;
                let (line, col) = source::line_col_bytes(&bytes, offset);
                problems.push(Located {
                    path: name,
                    line,
                    col,
                    finding: Finding::error(
                        Rule::NotText,
                        offset,
                        format!("{message}; file left untouched"),
                    ),
                });
                if origin == Origin::Stdin && mode == Mode::Fix {
                    console::stdout(&bytes);
                }
                continue;
            }
        };
        let text = text.as_str();
        let opts = run::ProcessOptions {
            force_mesh: req.force_mesh,
        };
        let outcome = run::process_with(text, settings, opts);
        if let Some(mut f) = outcome.fatal {
            tally.trouble = true;
            f.message = format!("{}; file left untouched", f.message);
            problems.push(Located::new(&name, text, f));
            if origin == Origin::Stdin && mode == Mode::Fix {
                console::stdout(text.as_bytes());
            }
            continue;
        }
        let mut findings = outcome.findings;
        findings.sort_by_key(|f| f.offset);
        for f in findings {
            if f.rule.once_per_run() {
                if tally.noted.contains(&f.rule) {
                    continue;
                }
                tally.noted.push(f.rule);
            }
            if f.severity == Severity::Error {
                tally.errors_any = true;
                if !f.fixed {
                    tally.errors_left = true;
                }
            }
            if req.quiet && f.severity == Severity::Info {
                continue;
            }
            reports.push(Located::new(&name, text, f));
        }
        let changed = outcome.text != text;
        if changed {
            tally.changed.push(name.clone());
        }
        match mode {
            Mode::Diff | Mode::Check => {
                let d = diff::unified(&name, text, &outcome.text);
                let d = if color_out { diff::colorize(&d) } else { d };
                console::stdout(d.as_bytes());
            }
            Mode::Fix => match &origin {
                Origin::Stdin => {
                    console::stdout(outcome.text.as_bytes());
                }
                Origin::File(p) if changed => {
                    if let Err(m) = write::write_atomic(p, text.as_bytes(), &outcome.text) {
                        tally.trouble = true;
                        problems.push(stopped(
                            Rule::Unwritable,
                            &name,
                            format!("cannot write: {m}"),
                        ));
                    }
                }
                Origin::File(_) => {}
            },
        }
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
