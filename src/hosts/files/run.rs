//! The state of one run: the inputs in order, what they gave, and the report.

use super::configs::{Configs, Layer};
use super::input::{FileResult, SMALL_FILE_BYTES, first_pass, process_file};
use super::sink::said_per_change;
use super::{Mode, Request};
use crate::config::{FailOn, Settings};
use crate::decide::RunContext;
use crate::exit;
use crate::finding::{Finding, Rule, Severity};
use crate::output::console;
use crate::output::escape;
use crate::output::report::{Format, Located};
use crate::output::statistics;
use crate::output::summary::{self, Counts};
use crate::source::{self, Expansion, Input, Origin};
use crate::stream::{self, stdin::Stdin};
use crate::verdict::Verdict;
use crate::versions::Versions;
use std::io::{IsTerminal, Write};

/// The state of one run: what it printed, what it found, and what it will report.
pub(super) struct Run<'r> {
    req: &'r Request,
    color_out: bool,
    color_err: bool,
    counts: Counts,
    trouble: bool,
    /// What the findings said: said once, failing the run, left after `fix`.
    verdict: Verdict,
    /// Run-level notes, then per-file findings, in order.
    reports: Vec<Located>,
    /// Problems that stopped an input, shown last.
    problems: Vec<Located>,
    /// Files that would change (`fix`: were written), with their diffs.
    changed: Vec<(String, String)>,
    /// The only input is stdin.
    pub(super) stdin_only: bool,
    /// Stdout did not take the output (why): the run stops, and fails.
    stdout_failed: Option<String>,
}

impl<'r> Run<'r> {
    pub(super) fn new(req: &'r Request) -> Self {
        Run {
            req,
            color_out: req.color.enabled(std::io::stdout().is_terminal()),
            color_err: req.color.enabled(std::io::stderr().is_terminal()),
            counts: Counts::default(),
            trouble: false,
            verdict: Verdict::default(),
            reports: Vec::new(),
            problems: Vec::new(),
            changed: Vec::new(),
            stdin_only: false,
            stdout_failed: None,
        }
    }

    /// The notes about the expansion itself: skipped chart templates, excluded names,
    /// empty directories, unreadable paths.
    pub(super) fn notes(&mut self, e: &Expansion) {
        if !e.chart_templates.is_empty() {
            let n = e.chart_templates.len();
            let mut dirs = e
                .chart_templates
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>();
            if n > 3 {
                dirs.push(format!("and {} more", n - 3));
            }
            let what = if n == 1 { "directory" } else { "directories" };
            let message = format!(
                "skipped {n} Helm chart templates/ {what} ({}): templates are not YAML until \
                 rendered; check the rendered chart with `helm template RELEASE CHART | \
                 meshjob check -`",
                dirs.join(", ")
            );
            self.note(Located::run(Finding::info(
                Rule::ChartTemplates,
                0,
                message,
            )));
        }
        for (name, pattern) in &e.excluded {
            let message = format!("excluded by `{pattern}`; not checked");
            self.note(Located::at_path(
                name,
                Finding::info(Rule::Excluded, 0, message),
            ));
        }
        for (name, left_out) in &e.empty {
            let message = if left_out.is_empty() {
                format!("no YAML files (*.yaml, *.yml) found under `{name}`")
            } else {
                let by: Vec<String> = left_out.iter().map(excluded_by).collect();
                format!(
                    "every YAML file under `{name}` is excluded ({}); nothing under it was \
                     checked",
                    by.join(", ")
                )
            };
            if self.run_rules().shows(Rule::NoYamlFiles) {
                self.reports.push(Located::run(Finding::warning(
                    Rule::NoYamlFiles,
                    0,
                    message,
                )));
            }
        }
        for (name, message) in &e.errors {
            self.stop(Located::at_start(
                name,
                Finding::error(Rule::Unreadable, 0, message.clone()),
            ));
        }
    }

    fn note(&mut self, l: Located) {
        if !self.req.quiet && self.run_rules().shows(l.finding.rule) {
            self.reports.push(l);
        }
    }

    /// The rules reported about the run's paths, before any file's config is read: those
    /// of the flags (`--select`, `--ignore`).
    fn run_rules(&self) -> crate::config::RuleSet {
        let mut s = Settings::default();
        // The flags were checked before the run.
        let _ = self.req.flags.apply(&mut s);
        s.rules
    }

    /// An input that could not be processed (or a path that could not be read).
    pub(super) fn stop(&mut self, l: Located) {
        self.trouble = true;
        self.counts.errors += 1;
        self.problems.push(l);
    }

    /// Processes the inputs in order. Each is streamed (`stream::process`): its documents
    /// are cut, processed on every core and written in order as they come, so memory
    /// follows the largest document, not the input. Runs of small files are shared between
    /// threads, one file each, and reported in the order of the arguments and the walk.
    ///
    /// A first pass over every file comes before any is processed (see [`first_pass`]): a
    /// Namespace document in one file places the pods of another in a mesh. The namespaces
    /// a file puts in ambient mode count for that file only.
    pub(super) fn inputs(
        &mut self,
        inputs: &[Input],
        configs: &mut Configs<'_>,
        flag_versions: &Versions,
    ) {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let (req, color) = (self.req, self.color_out);
        // Stdin's first pass reads it ahead (`stream::stdin`); what it read is kept for the
        // second.
        let mut stdin: Option<Result<Stdin, String>> = None;
        let mut firsts: Vec<Option<RunContext>> = (inputs.iter())
            .map(|i| match &i.origin {
                Origin::File(_) => first_pass(i),
                Origin::Stdin => {
                    let s = stdin.get_or_insert_with(|| {
                        Stdin::open().map_err(|e| format!("cannot read stdin: {e}"))
                    });
                    s.as_ref().ok().map(|s| s.context().clone())
                }
            })
            .collect();
        let mut run_namespaces = crate::decide::Namespaces::default();
        let mut run_versions = flag_versions.clone();
        for f in firsts.iter().flatten() {
            run_namespaces.extend(f.namespaces.clone());
            run_versions.extend(f.versions.clone());
        }
        // What each input is decided with: its own ambient namespaces (stdin: those of its
        // first pass, see `stream::stdin`), with the mesh markers and the versions of the
        // whole run, and what the `versionsFrom` of the input's config says.
        let mut context = |i: usize, layer: Option<&Layer>| {
            let mut versions = run_versions.clone();
            let mut conflicts = Vec::new();
            if let Some(l) = layer {
                versions.extend(l.versions.clone());
                conflicts = versions.conflicts(&l.settings);
            }
            let ctx = RunContext {
                ambient_namespaces: firsts[i]
                    .take()
                    .map(|f| f.ambient_namespaces)
                    .unwrap_or_default(),
                namespaces: run_namespaces.clone(),
                versions,
            };
            (ctx, conflicts)
        };
        let mut i = 0;
        while i < inputs.len() && self.stdout_failed.is_none() {
            let small = inputs[i..]
                .iter()
                .take_while(|o| source::file_len(&o.origin).is_some_and(|n| n <= SMALL_FILE_BYTES))
                .count();
            if small > 1 && threads > 1 {
                let run = &inputs[i..i + small];
                let layers: Vec<_> = run.iter().map(|o| configs.layer(&o.dir).ok()).collect();
                let mut contexts = Vec::new();
                for (k, l) in (i..i + small).zip(&layers) {
                    let (ctx, conflicts) = context(k, l.as_deref());
                    self.conflicts(conflicts);
                    contexts.push(ctx);
                }
                let _ = stream::ordered(
                    threads,
                    4 * threads,
                    run.iter().zip(layers).zip(contexts),
                    |((input, layer), ctx)| {
                        let mut out = Vec::new();
                        let r = (layer.as_ref()).map(|l| {
                            process_file(input, req, &l.settings, &ctx, None, color, &mut out)
                        });
                        (input, layer, r, out)
                    },
                    |(input, layer, r, out)| {
                        if let Err(e) = console::stdout(&out) {
                            self.stdout_failed = Some(console::cannot_write_stdout(&e));
                            return false;
                        }
                        self.take(input, layer.as_deref(), r, None);
                        true
                    },
                );
                i += small;
                continue;
            }
            let input = &inputs[i];
            let layer = configs.layer(&input.dir).ok();
            let (ctx, conflicts) = context(i, layer.as_deref());
            self.conflicts(conflicts);
            let own = match input.origin {
                Origin::Stdin => stdin.take(),
                Origin::File(_) => None,
            };
            let (r, own) = match &layer {
                Some(l) => {
                    let mut out = console::stdout_writer();
                    let r = process_file(input, req, &l.settings, &ctx, own, color, &mut out);
                    (Some(r), None)
                }
                None => (None, own),
            };
            self.take(input, layer.as_deref(), r, own);
            i += 1;
        }
    }

    /// Reports the conflicts between versions read, each once in the run.
    fn conflicts(&mut self, conflicts: Vec<crate::versions::Conflict>) {
        for c in conflicts {
            let f = c.finding(0);
            if self.reports.iter().any(|r| r.finding.message == f.message) {
                continue;
            }
            self.finding(Located::run(f), FailOn::Error);
        }
    }

    /// Counts and keeps what one input gave; `None` when its config file is broken (that
    /// error is reported once, with the others). `stdin`: stdin, read ahead and not
    /// processed (for `fix -` to write back).
    fn take(
        &mut self,
        input: &Input,
        layer: Option<&Layer>,
        r: Option<FileResult>,
        stdin: Option<Result<Stdin, String>>,
    ) {
        self.counts.files += 1;
        let (Some(layer), Some(r)) = (layer, r) else {
            self.counts.unprocessed += 1;
            self.trouble = true;
            if let (Some(Ok(stdin)), Mode::Fix) = (stdin, self.req.mode) {
                // `fix -` writes its input back unchanged when it cannot process it.
                let mut out = console::stdout_writer();
                if let Err(e) =
                    std::io::copy(&mut stdin.reader(), &mut out).and_then(|_| out.flush())
                {
                    self.stdout_failed = Some(console::cannot_write_stdout(&e));
                }
            }
            return;
        };
        if let Some(m) = &r.stdout_failed {
            self.stdout_failed = Some(m.clone());
        }
        if let Some(p) = r.problem {
            // A failed write comes after the findings; anything else stopped the input.
            let written = p.finding.rule == Rule::Unwritable;
            if written {
                for l in r.findings {
                    self.finding(l, layer.settings.fail_on);
                }
            }
            self.counts.unprocessed += 1;
            return self.stop(p);
        }
        for l in r.findings {
            self.finding(l, layer.settings.fail_on);
        }
        self.counts.no_workload += usize::from(!r.handled && !r.changed);
        if r.changed {
            self.counts.changed += 1;
            self.changed.push((input.name.clone(), r.diff));
        }
    }

    /// Counts one finding and keeps it for the report.
    fn finding(&mut self, l: Located, fail_on: FailOn) {
        let f = &l.finding;
        if !self.verdict.take(f, fail_on) {
            return;
        }
        let fix = self.req.mode == Mode::Fix;
        let counted = !(fix && f.fixed);
        match f.severity {
            Severity::Error if counted => {
                self.counts.errors += 1;
                self.counts.fixable += usize::from(f.fixed && !fix);
            }
            Severity::Warning if counted => self.counts.warnings += 1,
            _ => {}
        }
        if self.req.quiet && f.severity == Severity::Info {
            return;
        }
        if fix && said_per_change(f.rule) && !super::on_stdout(self.req.format) {
            return;
        }
        self.reports.push(l);
    }

    /// Reports everything and returns the exit status.
    pub(super) fn finish(mut self) -> u8 {
        let (req, fix) = (self.req, self.req.mode == Mode::Fix);
        self.reports.append(&mut self.problems);
        if req.format == Format::Sarif {
            let mut text =
                serde_json::to_string_pretty(&crate::output::sarif::log(&self.reports, fix))
                    .unwrap_or_default();
            text.push('\n');
            if let Some(m) = &self.stdout_failed {
                return console::trouble(m);
            }
            if let Err(e) = console::stdout(text.as_bytes()) {
                return console::trouble(&console::cannot_write_stdout(&e));
            }
        } else if req.format == Format::Json {
            let changed: Vec<serde_json::Value> = (self.changed.iter())
                .map(|(path, diff)| match req.less.no_diff {
                    true => serde_json::json!({"path": path}),
                    false => serde_json::json!({"path": path, "diff": diff}),
                })
                .collect();
            let (key, findings) = match req.less.statistics {
                true => ("statistics", statistics::json(&self.reports)),
                false => (
                    "findings",
                    self.reports
                        .iter()
                        .map(crate::output::report::json)
                        .collect(),
                ),
            };
            let doc = serde_json::json!({
                key: findings,
                "changed": changed,
                "summary": self.counts,
            });
            let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
            text.push('\n');
            if let Some(m) = &self.stdout_failed {
                return console::trouble(m);
            }
            if let Err(e) = console::stdout(text.as_bytes()) {
                return console::trouble(&console::cannot_write_stdout(&e));
            }
        } else {
            if req.less.statistics {
                console::stderr(&statistics::text(&self.reports));
            } else {
                console::findings(&self.reports, req.format, self.color_err, fix);
            }
            // `fix -` is a filter (a Helm post-renderer, an Argo CD plugin): it says only
            // what is wrong, as `sed` would.
            let filter = fix && self.stdin_only;
            // With stdout gone, the run did not finish: no summary of it.
            if !req.quiet && !filter && self.stdout_failed.is_none() {
                let mut tail = String::new();
                if fix {
                    for (name, _) in self.changed.iter().filter(|(n, _)| n != "-") {
                        tail.push_str(&format!("fixed {}\n", escape::controls(name)));
                    }
                }
                if let Some(line) = summary::line(&self.counts, fix, self.stdin_only) {
                    tail.push_str(&line);
                    tail.push('\n');
                }
                console::stderr(&tail);
            }
        }
        if let Some(m) = &self.stdout_failed {
            return console::trouble(m);
        }
        if self.trouble {
            return exit::TROUBLE;
        }
        let fails = match req.mode {
            Mode::Diff => false,
            Mode::Check => self.counts.changed > 0 || self.verdict.fails_any,
            Mode::Fix => self.verdict.fails_left,
        };
        if fails { exit::FINDINGS } else { exit::OK }
    }
}

/// `3 files by `*.yaml``, `1 directory by `gen/`` (both, joined with "and").
fn excluded_by(l: &source::LeftOut) -> String {
    let count = |n: usize, one: &str, many: &str| match n {
        0 => None,
        1 => Some(format!("1 {one}")),
        n => Some(format!("{n} {many}")),
    };
    let what: Vec<String> = [
        count(l.files, "file", "files"),
        count(l.dirs, "directory", "directories"),
    ]
    .into_iter()
    .flatten()
    .collect();
    format!("{} by `{}`", what.join(" and "), l.pattern)
}
