//! What a run reports, written as it is found: each finding on stderr (the human and GitHub
//! formats) or into the report's arrays kept in temporary files (JSON and SARIF, one document
//! on stdout at the end, see `output::spill`); the counts, the verdict and the progress line.
//! Memory does not grow with the findings: only the set of notes said once per run, the
//! conflicts already reported, and the names of the files `fix` wrote are kept.

use super::{Mode, Request};
use crate::config::FailOn;
use crate::finding::{Finding, Rule, Severity};
use crate::output::console;
use crate::output::progress::Progress;
use crate::output::report::{self, Format, Located};
use crate::output::sarif;
use crate::output::spill::{self, Spill};
use crate::output::statistics::Tally;
use crate::output::summary::Counts;
use crate::verdict::Verdict;
use std::collections::HashSet;
use std::io::Write;

/// Findings on stderr are written in blocks of about this many bytes.
const LINES_BYTES: usize = 64 << 10;

/// Where the findings go.
enum Out {
    /// The human or GitHub format: lines on stderr, as they come.
    Lines(String),
    /// `--format json`: the `changed` entries (with their diffs) and the findings.
    Json { changed: Spill, findings: Spill },
    /// `--format sarif`: the results.
    Sarif(Spill),
}

/// What a run reports, and what it counted.
pub(super) struct Reporter {
    format: Format,
    color: bool,
    fix: bool,
    quiet: bool,
    /// A count per rule instead of each finding (`--statistics`).
    tally: Option<Tally>,
    no_diff: bool,
    out: Out,
    pub(super) counts: Counts,
    /// What the findings said: said once, failing the run, left after `fix`.
    pub(super) verdict: Verdict,
    /// The messages of the version conflicts reported.
    conflicts: HashSet<String>,
    /// `fix`: the files written (not stdin), named at the end.
    pub(super) fixed: Vec<String>,
    progress: Progress,
}

impl Reporter {
    /// The reporter of the run `req`; `color`: colour the findings on stderr.
    pub(super) fn new(req: &Request, color: bool) -> Self {
        let out = match req.format {
            Format::Human | Format::Github => Out::Lines(String::new()),
            Format::Json => Out::Json {
                changed: Spill::new(4),
                findings: Spill::new(4),
            },
            Format::Sarif => Out::Sarif(Spill::new(8)),
        };
        Reporter {
            format: req.format,
            color,
            fix: req.mode == Mode::Fix,
            quiet: req.quiet,
            tally: req.less.statistics.then(Tally::default),
            no_diff: req.less.no_diff,
            out,
            counts: Counts::default(),
            verdict: Verdict::default(),
            conflicts: HashSet::new(),
            fixed: Vec::new(),
            progress: Progress::on_stderr(),
        }
    }

    /// Reports a finding as it is, without counting it.
    pub(super) fn show(&mut self, l: &Located) {
        if let Some(t) = &mut self.tally {
            t.add(&l.finding);
            return;
        }
        match &mut self.out {
            Out::Lines(text) => {
                let line = match self.format {
                    Format::Github => report::github(l),
                    Format::Human | Format::Json | Format::Sarif => {
                        report::human(l, self.color, self.fix)
                    }
                };
                text.push_str(&line);
                text.push('\n');
                if text.len() >= LINES_BYTES {
                    self.flush();
                }
            }
            Out::Json { findings, .. } => findings.push(&report::json(l)),
            Out::Sarif(results) => results.push(&sarif::result(l, self.fix)),
        }
    }

    /// Counts one finding and reports it, unless it is said already (a note said once per
    /// run), an info under `--quiet`, or one that `fix` leaves out of its text report.
    pub(super) fn finding(&mut self, l: Located, fail_on: FailOn) {
        let f = &l.finding;
        if !self.verdict.take(f, fail_on) {
            return;
        }
        let counted = !(self.fix && f.fixed);
        match f.severity {
            Severity::Error if counted => {
                self.counts.errors += 1;
                self.counts.fixable += usize::from(f.fixed && !self.fix);
            }
            Severity::Warning if counted => self.counts.warnings += 1,
            _ => {}
        }
        if self.quiet && f.severity == Severity::Info {
            return;
        }
        if self.fix && said_per_change(f.rule) && !super::on_stdout(self.format) {
            return;
        }
        self.show(&l);
    }

    /// Reports a conflict between versions read, once in the run.
    pub(super) fn conflict(&mut self, f: Finding) {
        if self.conflicts.insert(f.message.clone()) {
            self.finding(Located::run(f), FailOn::Error);
        }
    }

    /// `--format json`: the next part of the diff of input `name`, written into its
    /// `changed` entry, begun at the first part.
    pub(super) fn diff(&mut self, s: &str) {
        let Out::Json { changed, .. } = &mut self.out else {
            return;
        };
        if !changed.is_open() {
            changed.begin();
            let pad = " ".repeat(changed.indent());
            changed.raw(&format!("{pad}{{\n{pad}  \"diff\": \""));
        }
        let quoted = serde_json::to_string(s).unwrap_or_default();
        let inner = quoted.strip_prefix('"').and_then(|q| q.strip_suffix('"'));
        changed.raw(inner.unwrap_or_default());
    }

    /// Input `name` changed (`fix`: was written); `diff`: its diff, when it was kept rather
    /// than written as it came ([`Reporter::diff`]).
    pub(super) fn changed(&mut self, name: &str, diff: &str) {
        self.counts.changed += 1;
        if self.fix && name != "-" {
            self.fixed.push(name.to_string());
        }
        let Out::Json { changed, .. } = &mut self.out else {
            return;
        };
        let path = serde_json::to_string(name).unwrap_or_default();
        if changed.is_open() {
            let pad = " ".repeat(changed.indent());
            changed.raw(&format!("\",\n{pad}  \"path\": {path}\n{pad}}}"));
            changed.end();
        } else if self.no_diff {
            changed.push(&serde_json::json!({"path": name}));
        } else {
            changed.push(&serde_json::json!({"path": name, "diff": diff}));
        }
    }

    /// The input did not change, or failed: the diff written of it is taken back.
    pub(super) fn unchanged(&mut self) {
        if let Out::Json { changed, .. } = &mut self.out {
            changed.abandon();
        }
    }

    /// Counts `documents` and `files` done, for the progress line.
    pub(super) fn done(&mut self, documents: u64, files: u64) {
        self.progress.tick(documents, files);
    }

    /// Writes the findings on stderr held for a block.
    pub(super) fn flush(&mut self) {
        if let Out::Lines(text) = &mut self.out
            && !text.is_empty()
        {
            console::stderr(text);
            text.clear();
        }
    }

    /// The end of the run: the findings left go out; the report on stdout (JSON and SARIF)
    /// is written, or the counts per rule on stderr (`--statistics`). An error: why the
    /// report could not be made, or stdout did not take it.
    pub(super) fn finish(&mut self) -> Result<(), String> {
        let kept = match &self.out {
            Out::Lines(_) => None,
            Out::Json { changed, findings } => changed.error().or(findings.error()),
            Out::Sarif(results) => results.error(),
        };
        if let Some(e) = kept {
            return Err(format!("cannot keep the report in a temporary file: {e}"));
        }
        self.write().map_err(|e| console::cannot_write_stdout(&e))
    }

    /// Writes what is left ([`Reporter::finish`]); an error: stdout did not take it.
    fn write(&mut self) -> std::io::Result<()> {
        self.flush();
        crate::output::progress::erase();
        let (tally, counts) = (self.tally.take(), &self.counts);
        let mut out = console::stdout_writer();
        match &mut self.out {
            Out::Lines(_) => {
                if let Some(t) = tally {
                    console::stderr(&t.text());
                }
                return Ok(());
            }
            Out::Json { changed, findings } => {
                let report = match tally {
                    Some(t) => serde_json::json!({
                        "statistics": t.json(),
                        "changed": spill::marker(0),
                        "summary": counts,
                    }),
                    None => serde_json::json!({
                        "findings": spill::marker(1),
                        "changed": spill::marker(0),
                        "summary": counts,
                    }),
                };
                spill::write_with(&report, &mut [changed, findings], &mut out)?;
            }
            Out::Sarif(results) => {
                let report = sarif::log(spill::marker(0));
                spill::write_with(&report, &mut [results], &mut out)?;
            }
        }
        out.flush()
    }
}

/// Findings `fix` leaves out of its text report: it names the files it wrote instead of each
/// pod it changed (and the strategy that changed it: `check` and `diff` explain that). Each
/// is an info or a fixed error, so in `fix` it counts for nothing either.
pub(super) fn said_per_change(rule: Rule) -> bool {
    matches!(
        rule,
        Rule::WouldChange | Rule::StrategyChosen | Rule::VersionsUnknown
    )
}
