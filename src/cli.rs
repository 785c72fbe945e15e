//! The command line's types (clap): what `commands::main` parses.

use crate::config::Flags;
use crate::output::console::ColorChoice;
use crate::output::report::Format;
use clap::{Args, Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "meshjob",
    version,
    about = "Make Kubernetes batch workloads finish when Istio or Linkerd injects a sidecar",
    long_about = "Rewrites the manifests of batch workloads offline (Jobs, CronJobs, bare Pods, \
                  and the batch kinds of Argo Workflows, Kubeflow, JobSet, Ray, Volcano, ...) \
                  so that the injected proxy (istio-proxy, linkerd-proxy) stops when the task \
                  ends: asks for a native sidecar, or wraps each container's entrypoint, and \
                  sets the mesh's pod annotation and mesh-wide config. Every other byte is \
                  kept; changes are shown as a unified diff."
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
    Check(CheckArgs),
    /// Rewrite files in place (stdin to stdout); exit 1 if error findings remain.
    Fix(RunArgs),
    /// Print the effective configuration for the working directory (defaults, then the
    /// nearest config file, then flags).
    Config(ConfigArgs),
    /// Print what the manifests say about the versions a run targets (the injecting mesh,
    /// its proxy, the oldest kubelet, the mesh's global native-sidecar setting), where each
    /// was read, and what `auto` does with them. Nothing is edited.
    Versions(VersionsArgs),
    /// Read saved `kubectl get pods,nodes,jobs,cronjobs -A -o yaml|json` dumps and report
    /// the batch pods a sidecar holds after their tasks ended, what holds each, and the fix
    /// meshjob would give its workload; exit 1 when a pod is held. Never talks to a cluster.
    Audit(AuditArgs),
    /// Print the JSON Schema of the configuration file and KRM functionConfig.
    Schema,
    /// KRM function: read a ResourceList on stdin, write it back with its items rewritten
    /// and the findings in `results`; exit 1 on an error result.
    Krm,
    /// kustomize legacy exec plugin.
    #[command(subcommand)]
    Kustomize(KustomizeCommand),
    /// Print a shell completion script: `meshjob completions bash >
    /// ~/.local/share/bash-completion/completions/meshjob` (zsh: a `_meshjob` file on
    /// `$fpath`; fish: `~/.config/fish/completions/meshjob.fish`).
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), for packagers: `meshjob manpage > meshjob.1`.
    #[command(hide = true)]
    Manpage,
}

#[derive(Subcommand, Debug)]
// `<DIR>` is help text for the terminal, not HTML.
#[allow(rustdoc::invalid_html_tags)]
pub enum KustomizeCommand {
    /// Link this binary in as the MeshJobConfig transformer plugin
    /// (<DIR>/meshjob.dev/v1alpha1/meshjobconfig/MeshJobConfig).
    Install {
        /// Plugin home [default: $KUSTOMIZE_PLUGIN_HOME, else $XDG_CONFIG_HOME/kustomize/plugin,
        /// else ~/.config/kustomize/plugin].
        #[arg(long, value_name = "DIR")]
        dir: Option<std::path::PathBuf>,
        /// Replace a plugin file that is already there.
        #[arg(long)]
        force: bool,
    },
}

#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// Files or directories (walked for *.yaml and *.yml) [default: .]; `-` reads stdin.
    /// Names need not be UTF-8.
    pub paths: Vec<std::ffi::OsString>,

    #[command(flatten)]
    pub settings: Flags,

    /// Leave out files and directories that match GLOB (repeatable). Without `/` it
    /// matches a name at any depth; with `/`, the path from the working directory.
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,

    /// The name of stdin in messages and diff headers, and where its config file is
    /// looked up from. With no PATH, stdin is read.
    #[arg(long, value_name = "PATH")]
    pub stdin_filename: Option<String>,

    /// When to colour the diff and findings.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    pub color: ColorChoice,

    /// How to report: findings on stderr (human, github), or one JSON report or SARIF 2.1.0
    /// log on stdout.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,

    /// Treat documents without apiVersion/kind as a bare MeshConfig (the file
    /// `istioctl kube-inject --meshConfigFile` reads), even when detection would not.
    #[arg(long)]
    pub mesh_config: bool,

    /// Show only warnings and errors: no info notes, no summary.
    #[arg(short, long)]
    pub quiet: bool,
}

/// `check` takes what `diff` and `fix` take, and can say less.
#[derive(Args, Debug, Clone)]
pub struct CheckArgs {
    #[command(flatten)]
    pub run: RunArgs,

    /// Leave the diff out: print only the findings and the summary.
    #[arg(long)]
    pub no_diff: bool,

    /// Print a count per rule code instead of each finding, as ruff does.
    #[arg(long)]
    pub statistics: bool,
}

/// `meshjob versions` reads paths with the settings flags; it edits nothing.
#[derive(Args, Debug, Clone)]
pub struct VersionsArgs {
    /// Files or directories (walked for *.yaml and *.yml) [default: .]; `-` reads stdin.
    pub paths: Vec<String>,

    #[command(flatten)]
    pub settings: Flags,

    /// How to report: text, or one JSON document on stdout.
    #[arg(long, value_enum, default_value_t = VersionsFormat::Text)]
    pub format: VersionsFormat,
}

/// The formats of `meshjob versions`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum VersionsFormat {
    Text,
    Json,
}

/// `meshjob audit` reads dumps with the settings flags.
#[derive(Args, Debug, Clone)]
pub struct AuditArgs {
    /// Dump files (`kubectl get ... -o yaml` or `-o json`); `-` reads stdin [default: -].
    pub dumps: Vec<String>,

    #[command(flatten)]
    pub settings: Flags,

    /// The time held pods are measured against (RFC 3339) [default: the newest time in the
    /// dumps].
    #[arg(long, value_name = "TIME")]
    pub now: Option<String>,

    /// How to report: text, or one JSON document on stdout.
    #[arg(long, value_enum, default_value_t = VersionsFormat::Text)]
    pub format: VersionsFormat,

    /// A file or directory of the repository to find each held pod's workload in (by kind,
    /// name and namespace; repeat for more); the text report then prints the fix of the
    /// matched files as `meshjob diff` would.
    #[arg(long, value_name = "PATH")]
    pub repo: Vec<String>,
}

/// `meshjob config` takes the settings flags only: nothing else changes what it prints.
#[derive(Args, Debug, Clone)]
pub struct ConfigArgs {
    #[command(flatten)]
    pub settings: Flags,
}
