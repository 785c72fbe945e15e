//! The state of one run: the inputs in order, what they gave, and the report.

use super::configs::{Configs, Layer};
use super::emit::Reporter;
use super::input::{FileResult, SMALL_FILE_BYTES, first_pass, stream_input};
use super::{Mode, Request};
use crate::decide::RunContext;
use crate::exit;
use crate::finding::{Finding, Rule};
use crate::manifest_versions::Versions;
use crate::output::console;
use crate::output::escape;
use crate::output::report::Located;
use crate::output::summary;
use crate::source::{self, Expansion, Input, Origin};
use crate::stream::{self, stdin::Stdin};
use std::io::{IsTerminal, Write};

/// The state of one run: what it printed, what it found, and what it will report.
pub(super) struct Run<'r> {
    req: &'r Request,
    color_out: bool,
    trouble: bool,
    /// Run-level notes, then per-file findings, reported as they come; the counts.
    rep: Reporter,
    /// Problems that stopped an input, shown last.
    problems: Vec<Located>,
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
            trouble: false,
            rep: Reporter::new(req, req.color.enabled(std::io::stderr().is_terminal())),
            problems: Vec::new(),
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
                let l = Located::run(Finding::warning(Rule::NoYamlFiles, 0, message));
                self.rep.show(&l);
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
            self.rep.show(&l);
        }
    }

    /// The rules reported about the run's paths, before any file's config is read: those
    /// of the flags (`--select`, `--ignore`).
    fn run_rules(&self) -> crate::config::RuleSet {
        self.req.settings.without_config().rules
    }

    /// An input that could not be processed (or a path that could not be read).
    pub(super) fn stop(&mut self, l: Located) {
        self.trouble = true;
        self.rep.counts.errors += 1;
        self.problems.push(l);
    }

    /// Processes the inputs in order. Each is streamed (`stream::edit_stream`): its documents
    /// are cut, edited on every core and written in order as they come, so memory
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
                self.rep.flush();
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
                            let (live, color) = (None, color);
                            stream_input(input, req, &l.settings, &ctx, None, color, live, &mut out)
                        });
                        (input, layer, r, out)
                    },
                    |(input, layer, r, out)| {
                        if let Err(e) = console::stdout(&out) {
                            self.stdout_failed = Some(console::cannot_write_stdout(&e));
                            return false;
                        }
                        self.rep.done(0, 1);
                        self.take(input, layer.as_deref(), r, None);
                        true
                    },
                );
                i += small;
                continue;
            }
            let input = &inputs[i];
            // The progress line counts the files begun.
            self.rep.done(0, 1);
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
                    let live = Some(&mut self.rep);
                    let r = stream_input(input, req, &l.settings, &ctx, own, color, live, &mut out);
                    (Some(r), None)
                }
                None => (None, own),
            };
            self.take(input, layer.as_deref(), r, own);
            i += 1;
        }
    }

    /// Reports the conflicts between versions read, each once in the run.
    fn conflicts(&mut self, conflicts: Vec<crate::manifest_versions::Conflict>) {
        for c in conflicts {
            self.rep.conflict(c.finding(0));
        }
    }

    /// Counts and reports what one input gave; `None` when its config file is broken (that
    /// error is reported once, with the others). `stdin`: stdin, read ahead and not
    /// processed (for `fix -` to write back).
    fn take(
        &mut self,
        input: &Input,
        layer: Option<&Layer>,
        r: Option<FileResult>,
        stdin: Option<Result<Stdin, String>>,
    ) {
        self.rep.counts.files += 1;
        self.rep.done(r.as_ref().map_or(0, |r| r.documents), 0);
        let (Some(layer), Some(r)) = (layer, r) else {
            self.rep.counts.unprocessed += 1;
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
        let fail_on = layer.settings.fail_on;
        if let Some(p) = r.problem {
            // A failed write comes after the findings; anything else stopped the input.
            let written = p.finding.rule == Rule::Unwritable;
            if written {
                for l in r.findings {
                    self.rep.finding(l, fail_on);
                }
            }
            self.rep.unchanged();
            self.rep.counts.unprocessed += 1;
            return self.stop(p);
        }
        for l in r.findings {
            self.rep.finding(l, fail_on);
        }
        self.rep.counts.no_workload += usize::from(!r.handled && !r.changed);
        if r.changed {
            self.rep.changed(&input.name, &r.diff);
        } else {
            self.rep.unchanged();
        }
    }

    /// Reports everything left and returns the exit status.
    pub(super) fn finish(mut self) -> u8 {
        let (req, fix) = (self.req, self.req.mode == Mode::Fix);
        for p in std::mem::take(&mut self.problems) {
            self.rep.show(&p);
        }
        // With stdout gone, the report on it is not written.
        let reported = match (&self.stdout_failed, super::on_stdout(req.format)) {
            (Some(_), true) => Ok(()),
            _ => self.rep.finish(),
        };
        if let Some(m) = &self.stdout_failed {
            return console::trouble(m);
        }
        if let Err(m) = reported {
            return console::trouble(&m);
        }
        // `fix -` is a filter (a Helm post-renderer, an Argo CD plugin): it says only what
        // is wrong, as `sed` would. The report on stdout has the summary in it.
        let filter = fix && self.stdin_only;
        if !super::on_stdout(req.format) && !req.quiet && !filter {
            let mut tail = String::new();
            for name in &self.rep.fixed {
                tail.push_str(&format!("fixed {}\n", escape::controls(name)));
            }
            if let Some(line) = summary::line(&self.rep.counts, fix, self.stdin_only) {
                tail.push_str(&line);
                tail.push('\n');
            }
            console::stderr(&tail);
        }
        if self.trouble {
            return exit::TROUBLE;
        }
        let fails = match req.mode {
            Mode::Diff => false,
            Mode::Check => self.rep.counts.changed > 0 || self.rep.verdict.fails_any,
            Mode::Fix => self.rep.verdict.fails_left,
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
