//! Command-line parsing and dispatch: clap -> run -> exit code.

use crate::config::Settings;
use crate::finding::{Finding, Rule, Severity};
use crate::mesh::istio;
use crate::output::report::{self, Format, Located};
use crate::output::{diff, write};
use crate::run;
use crate::source::{self, Origin};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

/// Exit statuses (DESIGN.md, "Command line").
pub const EXIT_OK: u8 = 0;
pub const EXIT_FINDINGS: u8 = 1;
pub const EXIT_TROUBLE: u8 = 2;

#[derive(Parser, Debug)]
#[command(
    name = "meshjob",
    version,
    about = "Make Kubernetes Jobs and CronJobs finish when Istio injects a sidecar",
    long_about = "Rewrites Job and CronJob manifests offline so that the injected istio-proxy \
                  stops when the task ends: wraps each container's entrypoint, sets the \
                  proxy.istio.io/config annotation, and edits Istio mesh config. Every other \
                  byte is kept; changes are shown as a unified diff."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Print a unified diff of what `fix` would change; exit 0 (2 on trouble).
    Diff(RunArgs),
    /// Print the diff and findings; exit 1 if anything would change or an error is found.
    Check(RunArgs),
    /// Rewrite files in place (stdin to stdout); exit 1 if error findings remain.
    Fix(RunArgs),
    /// Print the effective configuration (defaults, then the config file, then flags).
    Config(RunArgs),
    /// Print the JSON Schema of the configuration file and KRM functionConfig.
    Schema,
    /// KRM function: read a ResourceList on stdin, write it back with its items rewritten
    /// and the findings in `results`; exit 1 on an error result.
    Krm,
    /// kustomize legacy exec plugin.
    #[command(subcommand)]
    Kustomize(KustomizeCommand),
}

#[derive(Subcommand, Debug)]
pub enum KustomizeCommand {
    /// Link this binary in as the MeshJobConfig transformer plugin
    /// (<DIR>/meshjob.dev/v1alpha1/meshjobconfig/MeshJobConfig).
    Install {
        /// Plugin home [default: $KUSTOMIZE_PLUGIN_HOME, else $XDG_CONFIG_HOME/kustomize/plugin,
        /// else ~/.config/kustomize/plugin].
        #[arg(long, value_name = "DIR")]
        dir: Option<std::path::PathBuf>,
    },
}

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// Files or directories (walked for *.yaml and *.yml); `-` reads stdin.
    pub paths: Vec<String>,

    /// URL the wrapper POSTs when the task ends.
    #[arg(long, value_name = "URL")]
    pub quit_url: Option<String>,

    /// terminationDrainDuration to set, as a Go duration (5s, 500ms, 1m30s).
    #[arg(long, value_name = "DUR")]
    pub drain_duration: Option<String>,

    /// Set proxyMetadata.EXIT_ON_ZERO_ACTIVE_CONNECTIONS: "true".
    #[arg(long, value_name = "BOOL", action = clap::ArgAction::Set)]
    pub exit_on_zero_active_connections: Option<bool>,

    /// Set holdApplicationUntilProxyStarts: true.
    #[arg(long, value_name = "BOOL", action = clap::ArgAction::Set)]
    pub hold_application_until_proxy_starts: Option<bool>,

    /// Seconds the wrapper waits for the proxy to be ready before it starts the task.
    #[arg(long, value_name = "SECONDS")]
    pub wait_for_proxy: Option<u32>,

    /// Overwrite user values that contradict meshjob's, instead of warning.
    #[arg(long)]
    pub force: bool,

    /// Configuration file (default: .meshjob.yaml, looked up from the current directory).
    #[arg(long, value_name = "FILE")]
    pub config: Option<String>,

    /// When to colour the diff and findings.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,

    /// How to write findings on stderr.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,

    /// Treat documents without apiVersion/kind as a bare MeshConfig (the file
    /// `istioctl kube-inject --meshConfigFile` reads), even when detection would not.
    #[arg(long)]
    pub mesh_config: bool,

    /// Show only warnings and errors.
    #[arg(short, long)]
    pub quiet: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Diff,
    Check,
    Fix,
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    if let Some(code) = host_dispatch() {
        return ExitCode::from(code);
    }
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() {
                EXIT_TROUBLE
            } else {
                EXIT_OK
            };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let (mode, args) = match cli.command {
        Command::Diff(a) => (Mode::Diff, a),
        Command::Check(a) => (Mode::Check, a),
        Command::Fix(a) => (Mode::Fix, a),
        Command::Config(a) => {
            return ExitCode::from(match settings_from(&a) {
                Ok(s) => {
                    print!("{}", crate::config::render_effective(&s));
                    EXIT_OK
                }
                Err(e) => settings_error(&e),
            });
        }
        Command::Krm => return ExitCode::from(run_krm()),
        Command::Kustomize(KustomizeCommand::Install { dir }) => {
            return ExitCode::from(match crate::kustomize::install(dir.as_deref()) {
                Ok(p) => {
                    println!("installed the kustomize plugin at {}", p.display());
                    EXIT_OK
                }
                Err(m) => usage_error(&m),
            });
        }
        Command::Schema => {
            print!("{}", crate::config::schema_json());
            return ExitCode::from(EXIT_OK);
        }
    };
    ExitCode::from(run_files(mode, &args))
}

/// How a host program runs the binary without a subcommand: kustomize runs the legacy
/// plugin by its kind (argv[0] `MeshJobConfig`, config path in argv[1]); an orchestrator
/// runs a KRM exec function with no arguments and a ResourceList on stdin.
fn host_dispatch() -> Option<u8> {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args
        .first()
        .is_some_and(|a| crate::kustomize::invoked_as_plugin(a))
    {
        return Some(crate::kustomize::exec_plugin(&args));
    }
    if args.len() == 1 && !std::io::stdin().is_terminal() {
        return Some(run_krm());
    }
    None
}

fn run_krm() -> u8 {
    let input = match source::read(&Origin::Stdin) {
        Ok(bytes) => bytes,
        Err(m) => return usage_error(&format!("stdin: {m}")),
    };
    let reply = match source::decode(&input) {
        Ok(text) => crate::krm::run(text),
        Err((_, m)) => return usage_error(&format!("stdin: {m}")),
    };
    eprint!("{}", reply.stderr);
    if let Some(out) = reply.stdout {
        let mut stdout = std::io::stdout().lock();
        if stdout
            .write_all(out.as_bytes())
            .and_then(|()| stdout.flush())
            .is_err()
        {
            return EXIT_TROUBLE;
        }
    }
    reply.code
}

fn usage_error(msg: &str) -> u8 {
    eprintln!("meshjob: error: {msg}");
    EXIT_TROUBLE
}

/// Why the settings of a run could not be made.
#[derive(Debug)]
pub enum SettingsError {
    /// The config file: shown as `path:line:col: error: ...`.
    Config(crate::config::ConfigError),
    /// A flag's value.
    Flag(String),
}

impl std::fmt::Display for SettingsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SettingsError::Config(e) => write!(f, "{e}"),
            SettingsError::Flag(m) => write!(f, "meshjob: error: {m}"),
        }
    }
}

fn settings_error(e: &SettingsError) -> u8 {
    eprintln!("{e}");
    EXIT_TROUBLE
}

/// The effective settings: defaults, then the config file, then flags.
pub fn settings_from(args: &RunArgs) -> Result<Settings, SettingsError> {
    let mut s = Settings::default();
    let file = match &args.config {
        Some(p) => Some(std::path::PathBuf::from(p)),
        None => std::env::current_dir()
            .ok()
            .and_then(|d| crate::config::discover(&d)),
    };
    if let Some(path) = file {
        let cfg = crate::config::load(&path).map_err(SettingsError::Config)?;
        cfg.apply_to(&mut s).map_err(SettingsError::Config)?;
    }
    if let Some(u) = &args.quit_url {
        crate::config::validate_quit_url(u)
            .map_err(|m| SettingsError::Flag(format!("--quit-url: {m}")))?;
        s.quit_url = u.clone();
    }
    if let Some(d) = &args.drain_duration {
        istio::validate_drain_duration(d)
            .map_err(|m| SettingsError::Flag(format!("--drain-duration: {m}")))?;
        s.drain_duration = d.clone();
    }
    if let Some(b) = args.exit_on_zero_active_connections {
        s.exit_on_zero_active_connections = b;
    }
    if let Some(b) = args.hold_application_until_proxy_starts {
        s.hold_application_until_proxy_starts = b;
    }
    if let Some(w) = args.wait_for_proxy {
        // 0 means no wait, as in the config file.
        s.wait_for_proxy_seconds = (w > 0).then_some(w);
    }
    if args.force {
        s.force = true;
    }
    Ok(s)
}

fn color_enabled(choice: ColorChoice, terminal: bool) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) {
                false
            } else if std::env::var_os("CLICOLOR_FORCE").is_some_and(|v| !v.is_empty() && v != "0")
            {
                true
            } else {
                terminal
            }
        }
    }
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

fn run_files(mode: Mode, args: &RunArgs) -> u8 {
    let settings = match settings_from(args) {
        Ok(s) => s,
        Err(e) => return settings_error(&e),
    };
    let mut paths = args.paths.clone();
    if paths.is_empty() {
        if std::io::stdin().is_terminal() {
            return usage_error("no PATH given; pass files or directories, or `-` for stdin");
        }
        paths.push("-".into());
    }
    let stdout_tty = std::io::stdout().is_terminal();
    let stderr_tty = std::io::stderr().is_terminal();
    let color_out = color_enabled(args.color, stdout_tty);
    let color_err = color_enabled(args.color, stderr_tty);
    let (origins, walk_errors) = source::expand(&paths);
    let mut tally = Tally::default();
    let mut stdout = std::io::stdout().lock();
    let mut problems = Vec::new();
    for (p, msg) in walk_errors {
        problems.push(Located {
            path: p,
            line: 1,
            col: 1,
            finding: Finding::error(Rule::Unreadable, 0, msg),
        });
        tally.trouble = true;
    }
    let mut reports: Vec<Located> = Vec::new();
    for origin in origins {
        let name = origin.display();
        let bytes = match source::read(&origin) {
            Ok(b) => b,
            Err(m) => {
                tally.trouble = true;
                problems.push(Located {
                    path: name,
                    line: 1,
                    col: 1,
                    finding: Finding::error(Rule::Unreadable, 0, m),
                });
                continue;
            }
        };
        let text = match source::decode(&bytes) {
            Ok(t) => t,
            Err((off, m)) => {
                tally.trouble = true;
                let (line, col) = source::line_col_bytes(&bytes, off);
                problems.push(Located {
                    path: name,
                    line,
                    col,
                    finding: Finding::error(
                        Rule::NotText,
                        off,
                        format!("{m}; file left untouched"),
                    ),
                });
                if origin == Origin::Stdin && mode == Mode::Fix {
                    let _ = stdout.write_all(&bytes);
                }
                continue;
            }
        };
        let opts = run::ProcessOptions {
            force_mesh: args.mesh_config,
        };
        let outcome = run::process_with(text, &settings, opts);
        if let Some(f) = outcome.fatal {
            tally.trouble = true;
            let mut f = f;
            f.message = format!("{}; file left untouched", f.message);
            problems.push(Located::new(&name, text, f));
            if origin == Origin::Stdin && mode == Mode::Fix {
                let _ = stdout.write_all(text.as_bytes());
            }
            continue;
        }
        let mut findings = outcome.findings;
        findings.sort_by_key(|f| f.offset);
        for f in findings {
            if f.rule.once_per_run() && std::mem::replace(&mut tally.noted, true) {
                continue;
            }
            if f.severity == Severity::Error {
                tally.errors_any = true;
                if !f.fixed {
                    tally.errors_left = true;
                }
            }
            if args.quiet && f.severity == Severity::Info {
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
                let _ = stdout.write_all(d.as_bytes());
            }
            Mode::Fix => match &origin {
                Origin::Stdin => {
                    let _ = stdout.write_all(outcome.text.as_bytes());
                }
                Origin::File(p) if changed => {
                    if let Err(m) = write::write_atomic(p, &bytes, &outcome.text) {
                        tally.trouble = true;
                        problems.push(Located {
                            path: name.clone(),
                            line: 1,
                            col: 1,
                            finding: Finding::error(
                                Rule::Unwritable,
                                0,
                                format!("cannot write: {m}"),
                            ),
                        });
                    }
                }
                Origin::File(_) => {}
            },
        }
    }
    let _ = stdout.flush();
    // Problems that stopped a file come last, after everything that was processed.
    reports.extend(problems);
    emit_findings(&reports, args.format, color_err, mode == Mode::Fix, &tally);
    if tally.trouble {
        EXIT_TROUBLE
    } else {
        match mode {
            Mode::Diff => EXIT_OK,
            Mode::Check if !tally.changed.is_empty() || tally.errors_any => EXIT_FINDINGS,
            Mode::Fix if tally.errors_left => EXIT_FINDINGS,
            _ => EXIT_OK,
        }
    }
}

fn emit_findings(reports: &[Located], format: Format, color: bool, fix_mode: bool, tally: &Tally) {
    let mut err = std::io::stderr().lock();
    match format {
        Format::Human => {
            for l in reports {
                let _ = writeln!(err, "{}", report::human(l, color, fix_mode));
            }
        }
        Format::Github => {
            for l in reports {
                let _ = writeln!(err, "{}", report::github(l));
            }
        }
        Format::Json => {
            let v: Vec<serde_json::Value> = reports.iter().map(report::json).collect();
            let doc = serde_json::json!({
                "findings": v,
                "changed": tally.changed,
            });
            let _ = writeln!(
                err,
                "{}",
                serde_json::to_string_pretty(&doc).unwrap_or_default()
            );
        }
    }
}
