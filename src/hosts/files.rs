//! The command line's host: files, directories and stdin in; a diff, rewritten files or
//! the rewritten stream out; findings and a summary line on stderr, or one JSON report on
//! stdout.

use crate::config::{self, FailOn, Flags, Settings};
use crate::decide::RunContext;
use crate::exclude::Pattern;
use crate::exit;
use crate::finding::{Finding, Rule, Severity};
use crate::output::console::{self, ColorChoice};
use crate::output::diff;
use crate::output::escape;
use crate::output::hold::HoldBack;
use crate::output::hunks::Hunks;
use crate::output::report::{Format, Located};
use crate::output::statistics;
use crate::output::summary::{self, Counts};
use crate::output::write::{Replacement, Seen};
use crate::paths::Spelling;
use crate::run;
use crate::source::{self, Expansion, Input, Origin};
use crate::stream::stdin::Stdin;
use crate::stream::{self, Done, Namespaces, Sink, Stop};
use crate::versions::Versions;
use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What the run does with each input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Print the diff; exit 0.
    Diff,
    /// Print the diff; exit 1 when anything would change or an error is found.
    Check,
    /// Rewrite files in place (stdin to stdout); exit 1 when errors are left.
    Fix,
}

/// One run of `diff`, `check` or `fix`.
#[derive(Clone, Debug)]
pub(crate) struct Request {
    pub mode: Mode,
    /// Files or directories; `-` is stdin. Empty: the working directory (stdin with
    /// `stdin_filename`).
    pub paths: Vec<String>,
    /// Settings flags, the top layer over each file's config.
    pub flags: Flags,
    /// `--exclude` patterns, relative to the working directory.
    pub exclude: Vec<String>,
    /// The name of stdin (`--stdin-filename`).
    pub stdin_filename: Option<String>,
    /// Treat documents without apiVersion/kind as a bare MeshConfig (`--mesh-config`).
    pub force_mesh: bool,
    pub color: ColorChoice,
    pub format: Format,
    /// Show only warnings and errors: no info notes, no summary.
    pub quiet: bool,
    /// What `check` leaves out.
    pub less: Less,
}

/// What `check` can leave out of its report.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Less {
    /// No diff (`--no-diff`); the JSON report's `changed` entries lose their `diff`.
    pub no_diff: bool,
    /// A count per rule instead of each finding (`--statistics`).
    pub statistics: bool,
}

/// Runs `req`; the exit status.
pub(crate) fn run(req: &Request) -> u8 {
    let spelling = Spelling::current();
    let Some(cwd) = spelling.cwd().map(Path::to_path_buf) else {
        return console::trouble("cannot find the working directory");
    };
    let paths = match paths_of(req) {
        Ok(p) => p,
        Err(m) => return console::trouble(&m),
    };
    let flag_patterns = match (req.exclude.iter())
        .map(|p| Pattern::new(p, &cwd))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(p) => p,
        Err(m) => return console::trouble(&format!("--exclude: {m}")),
    };
    let flag_versions = match super::versions_from::read(
        &req.flags.versions_from,
        None,
        &spelling,
        "--versions-from",
    ) {
        Ok(v) => v,
        Err(m) => return console::trouble(&m),
    };
    let mut configs = Configs::new(&req.flags, &spelling);
    let expansion = source::expand(
        &paths,
        &spelling,
        req.stdin_filename.as_deref(),
        &mut |path, is_dir| {
            if let Some(p) = flag_patterns.iter().find(|p| p.matches(path, is_dir)) {
                return Some(p.text.clone());
            }
            let layer = configs.layer(path.parent()?).ok()?;
            let p = layer.excludes.iter().find(|p| p.matches(path, is_dir))?;
            Some(p.text.clone())
        },
    );
    let mut r = Run::new(req);
    r.stdin_only =
        expansion.inputs.iter().all(|i| i.origin == Origin::Stdin) && !expansion.inputs.is_empty();
    r.notes(&expansion);
    r.inputs(&expansion.inputs, &mut configs, &flag_versions);
    for e in configs.errors {
        r.stop(e);
    }
    r.finish()
}

/// The PATH arguments a run stands for, or why they make no sense.
fn paths_of(req: &Request) -> Result<Vec<String>, String> {
    let mut paths = req.paths.clone();
    if paths.is_empty() {
        // ruff's convention: no PATH is the working directory. Stdin is read only when
        // asked for, never because it is not a terminal (in CI it never is).
        paths.push(
            if req.stdin_filename.is_some() {
                "-"
            } else {
                "."
            }
            .into(),
        );
    }
    let stdin = paths.iter().any(|p| p == "-");
    if req.stdin_filename.is_some() && !stdin {
        return Err("--stdin-filename names stdin, but `-` is not among the PATHs".into());
    }
    let each = match req.format {
        Format::Github => Some("github"),
        Format::Sarif => Some("sarif"),
        Format::Human | Format::Json => None,
    };
    if let (true, Some(format)) = (req.less.statistics, each) {
        return Err(format!(
            "--statistics counts findings per rule; --format {format} reports each finding, \
             so the two do not go together"
        ));
    }
    if stdin && req.mode == Mode::Fix && on_stdout(req.format) {
        let name = if req.format == Format::Sarif {
            "sarif"
        } else {
            "json"
        };
        return Err(format!(
            "`fix -` writes the fixed stream to stdout, which --format {name} needs for its \
             report; use `check --format {name} -` for the report"
        ));
    }
    Ok(paths)
}

/// The settings and excludes that govern the files of one directory tree: defaults, then
/// a config file, then flags.
struct Layer {
    settings: Settings,
    excludes: Vec<Pattern>,
    /// What the config's `versionsFrom` paths say.
    versions: crate::versions::Versions,
}

/// Config files, looked up from each file's directory upward (the nearest wins), or the
/// one `--config` file for every input. Each is read once; an error in one is reported
/// once and stops only the files it governs.
struct Configs<'a> {
    flags: &'a Flags,
    spelling: &'a Spelling,
    /// Directory -> the config file that governs it.
    by_dir: HashMap<PathBuf, Option<PathBuf>>,
    /// Config file -> its layer, or `None` when it is broken.
    by_file: HashMap<Option<PathBuf>, Option<Arc<Layer>>>,
    /// The errors of broken config files, once each.
    errors: Vec<Located>,
}

impl<'a> Configs<'a> {
    fn new(flags: &'a Flags, spelling: &'a Spelling) -> Self {
        Configs {
            flags,
            spelling,
            by_dir: HashMap::new(),
            by_file: HashMap::new(),
            errors: Vec::new(),
        }
    }

    /// The layer for files in `dir` (absolute); `Err` when its config file is broken.
    fn layer(&mut self, dir: &Path) -> Result<Arc<Layer>, ()> {
        let file = match &self.flags.config {
            Some(explicit) => Some(self.spelling.absolute(Path::new(explicit))),
            None => match self.by_dir.get(dir) {
                Some(found) => found.clone(),
                None => {
                    let found = config::discover(dir);
                    self.by_dir.insert(dir.to_path_buf(), found.clone());
                    found
                }
            },
        };
        if let Some(layer) = self.by_file.get(&file) {
            return layer.clone().ok_or(());
        }
        let layer = match self.build(file.as_deref()) {
            Ok(l) => Some(Arc::new(l)),
            Err(e) => {
                self.errors.push(*e);
                None
            }
        };
        self.by_file.insert(file, layer.clone());
        layer.ok_or(())
    }

    fn build(&self, file: Option<&Path>) -> Result<Layer, Box<Located>> {
        let mut settings = Settings::default();
        let mut excludes = Vec::new();
        let mut versions = crate::versions::Versions::default();
        if let Some(abs) = file {
            let name = self.spelling.display(abs);
            // An error without a place (an unreadable file) is shown at the file's start.
            let shown = |e: config::ConfigError| {
                Box::new(Located {
                    path: name.clone(),
                    line: e.line.max(1),
                    col: e.column.max(1),
                    finding: Finding::error(Rule::ConfigInvalid, 0, e.message),
                })
            };
            // Loaded by its spelling, so that its errors name it as the findings do.
            let cfg = config::load(Path::new(&name)).map_err(shown)?;
            cfg.apply_to(&mut settings).map_err(shown)?;
            let base = abs.parent().unwrap_or(abs);
            for p in &settings.exclude {
                let pattern = Pattern::new(p, base).map_err(|m| {
                    Box::new(Located::at_start(
                        &name,
                        Finding::error(Rule::ConfigInvalid, 0, m),
                    ))
                })?;
                excludes.push(pattern);
            }
            if !settings.versions_from.is_empty() {
                versions = super::versions_from::read(
                    &settings.versions_from,
                    Some(base),
                    self.spelling,
                    "versionsFrom",
                )
                .map_err(|m| {
                    Box::new(Located::at_start(
                        &name,
                        Finding::error(Rule::ConfigInvalid, 0, m),
                    ))
                })?;
            }
        }
        // The flags were checked before the run; this cannot fail.
        if let Err(m) = self.flags.apply(&mut settings) {
            return Err(Box::new(Located::run(Finding::error(
                Rule::ConfigInvalid,
                0,
                m,
            ))));
        }
        Ok(Layer {
            settings,
            excludes,
            versions,
        })
    }
}

/// The state of one run: what it printed, what it found, and what it will report.
struct Run<'r> {
    req: &'r Request,
    color_out: bool,
    color_err: bool,
    counts: Counts,
    trouble: bool,
    /// Something fails the run (`check`: any error, or warning under `failOn: warning`).
    fails_any: bool,
    /// Something that fails the run is left after `fix`.
    fails_left: bool,
    /// The rules whose once-per-run note has been shown.
    noted: Vec<Rule>,
    /// Run-level notes, then per-file findings, in order.
    reports: Vec<Located>,
    /// Problems that stopped an input, shown last.
    problems: Vec<Located>,
    /// Files that would change (`fix`: were written), with their diffs.
    changed: Vec<(String, String)>,
    /// The only input is stdin.
    stdin_only: bool,
    /// Stdout did not take the output (why): the run stops, and fails.
    stdout_failed: Option<String>,
}

impl<'r> Run<'r> {
    fn new(req: &'r Request) -> Self {
        Run {
            req,
            color_out: req.color.enabled(std::io::stdout().is_terminal()),
            color_err: req.color.enabled(std::io::stderr().is_terminal()),
            counts: Counts::default(),
            trouble: false,
            fails_any: false,
            fails_left: false,
            noted: Vec::new(),
            reports: Vec::new(),
            problems: Vec::new(),
            changed: Vec::new(),
            stdin_only: false,
            stdout_failed: None,
        }
    }

    /// The notes about the expansion itself: skipped chart templates, excluded names,
    /// empty directories, unreadable paths.
    fn notes(&mut self, e: &Expansion) {
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
    fn stop(&mut self, l: Located) {
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
    fn inputs(&mut self, inputs: &[Input], configs: &mut Configs<'_>, flag_versions: &Versions) {
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
        if r.changed {
            self.counts.changed += 1;
            self.changed.push((input.name.clone(), r.diff));
        }
    }

    /// Counts one finding and keeps it for the report.
    fn finding(&mut self, l: Located, fail_on: FailOn) {
        let f = &l.finding;
        if f.rule.once_per_run() {
            if self.noted.contains(&f.rule) {
                return;
            }
            self.noted.push(f.rule);
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
        let fails = match f.severity {
            Severity::Error => true,
            Severity::Warning => fail_on == FailOn::Warning,
            Severity::Info => false,
        };
        self.fails_any |= fails;
        self.fails_left |= fails && !f.fixed;
        if self.req.quiet && f.severity == Severity::Info {
            return;
        }
        if fix && said_per_change(f.rule) && !on_stdout(self.req.format) {
            return;
        }
        self.reports.push(l);
    }

    /// Reports everything and returns the exit status.
    fn finish(mut self) -> u8 {
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
                if let Some(line) = summary::line(&self.counts, fix) {
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
            Mode::Check => self.counts.changed > 0 || self.fails_any,
            Mode::Fix => self.fails_left,
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
const SMALL_FILE_BYTES: u64 = stream::BATCH_BYTES as u64;

/// What one input gave.
struct FileResult {
    /// Its findings, in text order.
    findings: Vec<Located>,
    /// What stopped it (it then counts as not processed), or the write that failed.
    problem: Option<Located>,
    changed: bool,
    /// Its diff, for the JSON report (empty otherwise).
    diff: String,
    /// Stdout did not take its output (why).
    stdout_failed: Option<String>,
}

/// The first pass over a file (`stream::first_pass`): what its `Namespace` documents and the
/// documents that say something about versions say. Stdin (its first pass is
/// `stream::stdin`'s), and a file that cannot be opened (the second pass reports it), give
/// `None`.
fn first_pass(input: &Input) -> Option<RunContext> {
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
/// file goes back to the file; the JSON report keeps the diff instead).
///
/// A file is read twice: a first pass over every input of the run collects what their
/// `Namespace` documents say ([`first_pass`]), then the file is processed with `ctx`. Stdin
/// (`stdin`, its first pass done) is read ahead, and past its read-ahead a `Namespace`
/// document applies to the documents after it, added to `ctx` (`stream::stdin`).
fn process_file(
    input: &Input,
    req: &Request,
    settings: &Settings,
    ctx: &RunContext,
    stdin: Option<Result<Stdin, String>>,
    color: bool,
    out: &mut dyn Write,
) -> FileResult {
    let (origin, name) = (&input.origin, input.name.as_str());
    let mut result = FileResult {
        findings: Vec::new(),
        problem: None,
        changed: false,
        diff: String::new(),
        stdout_failed: None,
    };
    let fix_stdin = req.mode == Mode::Fix && *origin == Origin::Stdin;
    let opened = match origin {
        Origin::File(_) => source::open(origin).map(|i| (i, Namespaces::Whole(ctx), None)),
        Origin::Stdin => match stdin {
            Some(Ok(s)) => {
                let head = fix_stdin.then(|| s.head());
                let ns = s.namespaces(ctx);
                Ok((
                    Box::new(s.reader()) as Box<dyn std::io::Read + Send>,
                    ns,
                    head,
                ))
            }
            Some(Err(m)) => Err(m),
            None => Err("cannot read stdin: it is given twice".into()),
        },
    };
    let (stream_in, ns, head) = match opened {
        Ok(o) => o,
        Err(m) => {
            result.problem = Some(stopped(Rule::Unreadable, name, m));
            return result;
        }
    };
    // The report on stdout keeps the diff (JSON) or leaves it out (SARIF).
    let json = on_stdout(req.format);
    let mut sink = FileSink {
        mode: req.mode,
        origin,
        name,
        out: match head {
            Some(head) => HoldBack::giving_back(out, head),
            None => HoldBack::new(out),
        },
        hunks: ((req.mode != Mode::Fix || json) && !req.less.no_diff).then(|| Hunks::new(name)),
        json: json.then(String::new),
        color,
        replacement: None,
        seen: Seen::default(),
        findings: Vec::new(),
        changed: false,
        braces: false,
        stdout_failed: None,
    };
    // The context is in `ns`: the engine does not read `opts.namespaces`.
    let opts = run::ProcessOptions {
        force_mesh: req.force_mesh,
        namespaces: None,
    };
    let stop = match stream::process(stream_in, settings, opts, ns, &mut sink) {
        Ok(()) => {
            if let Err(e) = sink.finish() {
                sink.stdout_failed(&e);
            }
            result.findings = std::mem::take(&mut sink.findings);
            result.changed = sink.changed;
            result.diff = sink.json.take().unwrap_or_default();
            let written = match sink.replacement.take() {
                Some(Ok(r)) => r.commit(&sink.seen),
                Some(Err(m)) => Err(m),
                None => Ok(()),
            };
            if let Err(m) = written {
                result.problem = Some(stopped(
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
            result.problem = Some(Located {
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
            result.problem = Some(stopped(Rule::Unreadable, name, m));
        }
        // The sink refuses a batch only when stdout fails: said once for the run.
        Some(Stop::Sink(_)) => {}
    }
    result.stdout_failed = sink.stdout_failed;
    result
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

/// Where the batches of one input go: the diff, stdout, or the file's replacement.
struct FileSink<'a, 'o> {
    mode: Mode,
    origin: &'a Origin,
    name: &'a str,
    out: HoldBack<'o>,
    /// The diff (`diff`, `check`, and `fix` for the JSON report).
    hunks: Option<Hunks>,
    /// `--format json`: the diff is kept for the report, not printed.
    json: Option<String>,
    color: bool,
    /// `fix FILE`: the replacement, begun at the first change (or why it could not be).
    replacement: Option<Result<Replacement, String>>,
    /// `fix FILE`: what the file held, to check before replacing it.
    seen: Seen,
    findings: Vec<Located>,
    changed: bool,
    /// The input read so far holds `{{` (a template, when it does not parse).
    braces: bool,
    /// Stdout did not take the output (why).
    stdout_failed: Option<String>,
}

impl FileSink<'_, '_> {
    fn diff(&mut self, s: String) -> std::io::Result<()> {
        if s.is_empty() {
            return Ok(());
        }
        if let Some(kept) = &mut self.json {
            kept.push_str(&s);
            return Ok(());
        }
        let s = if self.color { diff::colorize(&s) } else { s };
        self.out.write(s.as_bytes())
    }

    /// The end of the input: the diff's last lines, and what is held, go out.
    fn finish(&mut self) -> std::io::Result<()> {
        if let Some(h) = self.hunks.take() {
            let mut s = String::new();
            h.finish(&mut s);
            self.diff(s)?;
        }
        self.out.finish()
    }

    /// Keeps the first reason stdout failed; the message for the sink's error.
    fn stdout_failed(&mut self, e: &std::io::Error) -> String {
        self.stdout_failed
            .get_or_insert_with(|| console::cannot_write_stdout(e))
            .clone()
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
        if let Err(m) = done.output().try_for_each(|o| r.write(o)) {
            self.replacement = Some(Err(m));
        }
    }
}

/// Whether the report goes to stdout, whole, at the end (so the diff cannot).
fn on_stdout(format: Format) -> bool {
    matches!(format, Format::Json | Format::Sarif)
}

/// Findings `fix` leaves out of its text report: it names the files it wrote instead of each
/// pod it changed (and the strategy that changed it: `check` and `diff` explain that). Each
/// is an info or a fixed error, so in `fix` it counts for nothing either.
fn said_per_change(rule: Rule) -> bool {
    matches!(
        rule,
        Rule::WouldChange | Rule::StrategyChosen | Rule::VersionsUnknown
    )
}

impl Sink for FileSink<'_, '_> {
    fn batch(&mut self, done: &Done) -> Result<(), String> {
        let b = &done.batch;
        let mut found = done.result.findings.clone();
        if self.mode == Mode::Fix && self.json.is_none() {
            // Not kept to the end of a long stream only to be left out of the report.
            found.retain(|f| !said_per_change(f.rule));
        }
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
            self.diff(s).map_err(|e| self.stdout_failed(&e))?;
        }
        match self.mode {
            Mode::Diff | Mode::Check => {}
            Mode::Fix => match self.origin {
                Origin::Stdin => {
                    let out = &mut self.out;
                    let written = out
                        .input(b.bytes.len())
                        .and_then(|()| done.output().try_for_each(|o| out.write(o)));
                    written.map_err(|e| self.stdout_failed(&e))?;
                }
                Origin::File(p) => {
                    self.seen.update(&b.bytes);
                    self.replace(p, done);
                }
            },
        }
        Ok(())
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
