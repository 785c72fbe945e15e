//! Command-line parsing and dispatch: clap -> host -> exit code.

use crate::config::Settings;
use crate::exit;
use crate::hosts::{self, files, krm, kustomize};
use crate::mesh::istio;
use crate::output::console::{self, ColorChoice};
use crate::output::report::Format;
use clap::{Args, Parser, Subcommand};
use std::process::ExitCode;

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

    /// The Istio that injects the pods, as MAJOR.MINOR (1.24).
    #[arg(long, value_name = "X.Y")]
    pub istio_version: Option<String>,

    /// The oldest kubelet in the cluster, as MAJOR.MINOR (1.29).
    #[arg(long, value_name = "X.Y")]
    pub kubernetes_version: Option<String>,

    /// How pods are fixed: per pod from the versions (auto), or one for all; none removes
    /// what meshjob added.
    #[arg(long, value_enum, value_name = "STRATEGY")]
    pub strategy: Option<crate::config::StrategyChoice>,

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

/// Entry point of the binary.
pub fn main() -> ExitCode {
    if let Some(code) = hosts::dispatch() {
        return ExitCode::from(code);
    }
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() {
                exit::TROUBLE
            } else {
                exit::OK
            };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    let (mode, args) = match cli.command {
        Command::Diff(a) => (files::Mode::Diff, a),
        Command::Check(a) => (files::Mode::Check, a),
        Command::Fix(a) => (files::Mode::Fix, a),
        Command::Config(a) => {
            return ExitCode::from(match settings_from(&a) {
                Ok(s) => print(&crate::config::render_effective(&s)),
                Err(e) => console::trouble_shown(&e),
            });
        }
        Command::Krm => return ExitCode::from(hosts::run(&krm::Function)),
        Command::Kustomize(KustomizeCommand::Install { dir }) => {
            return ExitCode::from(match kustomize::install(dir.as_deref()) {
                Ok(p) => print(&format!(
                    "installed the kustomize plugin at {}\n",
                    p.display()
                )),
                Err(m) => console::trouble(&m),
            });
        }
        Command::Schema => return ExitCode::from(print(&crate::config::schema_json())),
    };
    let settings = match settings_from(&args) {
        Ok(s) => s,
        Err(e) => return ExitCode::from(console::trouble_shown(&e)),
    };
    let req = files::Request {
        mode,
        paths: args.paths,
        force_mesh: args.mesh_config,
        color: args.color,
        format: args.format,
        quiet: args.quiet,
    };
    ExitCode::from(files::run(&req, &settings))
}

/// Prints a command's whole output; its exit status.
fn print(text: &str) -> u8 {
    if console::stdout(text.as_bytes()) {
        exit::OK
    } else {
        exit::TROUBLE
    }
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
    for (flag, given, slot) in [
        ("--istio-version", &args.istio_version, &mut s.istio_version),
        (
            "--kubernetes-version",
            &args.kubernetes_version,
            &mut s.kubernetes_version,
        ),
    ] {
        if let Some(v) = given {
            let v = crate::config::Version::parse(v)
                .map_err(|m| SettingsError::Flag(format!("{flag}: {m}")))?;
            *slot = Some(v);
        }
    }
    if let Some(strategy) = args.strategy {
        s.strategy = strategy;
    }
    Ok(s)
}
