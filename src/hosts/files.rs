//! The command line's host: files, directories and stdin in; a diff, rewritten files or
//! the rewritten stream out; findings and a summary line on stderr, or one JSON report on
//! stdout.

use crate::config::{self, FailOn, Flags, Settings};
use crate::exclude::Pattern;
use crate::exit;
use crate::finding::{Finding, Rule, Severity};
use crate::output::console::{self, ColorChoice};
use crate::output::report::{Format, Located};
use crate::output::summary::{self, Counts};
use crate::output::{diff, escape, write};
use crate::paths::Spelling;
use crate::run;
use crate::source::{self, Expansion, Input, LoadError, Origin};
use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::rc::Rc;

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
}

/// Runs `req`; the exit status.
pub fn run(req: &Request) -> u8 {
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
    for input in &expansion.inputs {
        r.input(input, &mut configs);
    }
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
    if stdin && req.mode == Mode::Fix && req.format == Format::Json {
        return Err(
            "`fix -` writes the fixed stream to stdout, which --format json needs for \
                    its report; use `check --format json -` for the report"
                .into(),
        );
    }
    Ok(paths)
}

/// The settings and excludes that govern the files of one directory tree: defaults, then
/// a config file, then flags.
struct Layer {
    settings: Settings,
    excludes: Vec<Pattern>,
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
    by_file: HashMap<Option<PathBuf>, Option<Rc<Layer>>>,
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
    fn layer(&mut self, dir: &Path) -> Result<Rc<Layer>, ()> {
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
            Ok(l) => Some(Rc::new(l)),
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
        }
        // The flags were checked before the run; this cannot fail.
        if let Err(m) = self.flags.apply(&mut settings) {
            return Err(Box::new(Located::run(Finding::error(
                Rule::ConfigInvalid,
                0,
                m,
            ))));
        }
        Ok(Layer { settings, excludes })
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
        for name in &e.empty {
            let message = format!("no YAML files (*.yaml, *.yml) found under `{name}`");
            self.reports.push(Located::run(Finding::warning(
                Rule::NoYamlFiles,
                0,
                message,
            )));
        }
        for (name, message) in &e.errors {
            self.stop(Located::at_start(
                name,
                Finding::error(Rule::Unreadable, 0, message.clone()),
            ));
        }
    }

    fn note(&mut self, l: Located) {
        if !self.req.quiet {
            self.reports.push(l);
        }
    }

    /// An input that could not be processed (or a path that could not be read).
    fn stop(&mut self, l: Located) {
        self.trouble = true;
        self.counts.errors += 1;
        self.problems.push(l);
    }

    fn input(&mut self, input: &Input, configs: &mut Configs<'_>) {
        let (mode, name) = (self.req.mode, input.name.as_str());
        let stdin_fix = input.origin == Origin::Stdin && mode == Mode::Fix;
        self.counts.files += 1;
        let text = match source::load(&input.origin) {
            Ok(t) => t,
            Err(LoadError::Read(m)) => {
                self.counts.unprocessed += 1;
                return self.stop(Located::at_start(
                    name,
                    Finding::error(Rule::Unreadable, 0, m),
                ));
            }
            Err(LoadError::Decode {
                bytes,
                offset,
                message,
            }) => {
                let (line, col) = source::line_col_bytes(&bytes, offset);
                let f = Finding::error(
                    Rule::NotText,
                    offset,
                    format!("{message}; file left untouched"),
                );
                self.counts.unprocessed += 1;
                self.stop(Located {
                    path: name.to_string(),
                    line,
                    col,
                    finding: f,
                });
                if stdin_fix {
                    console::stdout(&bytes);
                }
                return;
            }
        };
        let Ok(layer) = configs.layer(&input.dir) else {
            // Its config file's error is reported once, with the others.
            self.counts.unprocessed += 1;
            self.trouble = true;
            if stdin_fix {
                console::stdout(text.as_bytes());
            }
            return;
        };
        let opts = run::ProcessOptions {
            force_mesh: self.req.force_mesh,
        };
        let outcome = run::process_with(&text, &layer.settings, opts);
        if let Some(f) = outcome.fatal {
            self.counts.unprocessed += 1;
            self.stop(Located::new(name, &text, fatal_finding(f, &text)));
            if stdin_fix {
                console::stdout(text.as_bytes());
            }
            return;
        }
        let mut findings = outcome.findings;
        findings.sort_by_key(|f| f.offset);
        for f in findings {
            self.finding(f, name, &text, layer.settings.fail_on);
        }
        let changed = outcome.text != text;
        let d = if changed && (mode != Mode::Fix || self.req.format == Format::Json) {
            diff::unified(name, &text, &outcome.text)
        } else {
            String::new()
        };
        match (mode, &input.origin) {
            (Mode::Diff | Mode::Check, _) => {
                if self.req.format != Format::Json {
                    let shown = if self.color_out {
                        diff::colorize(&d)
                    } else {
                        d.clone()
                    };
                    console::stdout(shown.as_bytes());
                }
            }
            (Mode::Fix, Origin::Stdin) => {
                console::stdout(outcome.text.as_bytes());
            }
            (Mode::Fix, Origin::File(p)) if changed => {
                if let Err(m) = write::write_atomic(p, text.as_bytes(), &outcome.text) {
                    self.counts.unprocessed += 1;
                    let f = Finding::error(Rule::Unwritable, 0, format!("cannot write: {m}"));
                    return self.stop(Located::at_start(name, f));
                }
            }
            (Mode::Fix, Origin::File(_)) => {}
        }
        if changed {
            self.counts.changed += 1;
            self.changed.push((name.to_string(), d));
        }
    }

    /// Counts one finding and keeps it for the report.
    fn finding(&mut self, f: Finding, name: &str, text: &str, fail_on: FailOn) {
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
        // `fix` names the files it wrote instead of each pod it changed (and the strategy
        // that changed it: `check` and `diff` explain that).
        let per_change = matches!(
            f.rule,
            Rule::WouldChange | Rule::StrategyChosen | Rule::VersionsUnknown
        );
        if fix && per_change && self.req.format != Format::Json {
            return;
        }
        self.reports.push(Located::new(name, text, f));
    }

    /// Reports everything and returns the exit status.
    fn finish(mut self) -> u8 {
        let (req, fix) = (self.req, self.req.mode == Mode::Fix);
        self.reports.append(&mut self.problems);
        if req.format == Format::Json {
            let changed: Vec<serde_json::Value> = (self.changed.iter())
                .map(|(path, diff)| serde_json::json!({"path": path, "diff": diff}))
                .collect();
            let doc = serde_json::json!({
                "findings": self.reports.iter().map(crate::output::report::json).collect::<Vec<_>>(),
                "changed": changed,
                "summary": self.counts,
            });
            let mut text = serde_json::to_string_pretty(&doc).unwrap_or_default();
            text.push('\n');
            if !console::stdout(text.as_bytes()) {
                return exit::TROUBLE;
            }
        } else {
            console::findings(&self.reports, req.format, self.color_err, fix);
            // `fix -` is a filter (a Helm post-renderer, an Argo CD plugin): it says only
            // what is wrong, as `sed` would.
            let filter = fix && self.stdin_only;
            if !req.quiet && !filter {
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

/// The finding that stops a file. A file that does not parse and holds `{{` is a
/// template: the advice is to render it, not to fix its syntax.
fn fatal_finding(f: Finding, text: &str) -> Finding {
    if f.rule == Rule::InvalidYaml && text.contains("{{") {
        return Finding::error(
            Rule::Template,
            f.offset,
            "not YAML: this file holds `{{` and looks like a template (Helm, Go or Jinja), \
             which is YAML only once rendered; check the rendered output instead (`helm \
             template RELEASE CHART | meshjob check -`), or leave the file out with \
             --exclude; file left untouched",
        );
    }
    Finding {
        message: format!("{}; file left untouched", f.message),
        ..f
    }
}
