//! The command-line flags that override settings: the top layer over the defaults and the
//! config file. One struct for `diff`, `check`, `fix` and `config`, so that each flag has
//! one meaning wherever it is accepted.

use super::{FailOn, Settings};
use clap::Args;

/// Flags with a config key of the same meaning (see the configuration docs).
#[derive(Args, Debug, Clone, Default)]
pub struct Flags {
    /// URL the wrapper POSTs when the task ends [default: the pod's mesh's endpoint].
    #[arg(long, value_name = "URL")]
    pub quit_url: Option<String>,

    /// The mesh of pods with no mesh marker of their own or of their Namespace
    /// [default: istio].
    #[arg(long, value_enum, value_name = "MESH")]
    pub mesh: Option<super::MeshId>,

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

    /// The Linkerd that injects the pods, as MAJOR.MINOR (2.18) or an edge release
    /// (edge-25.10.2).
    #[arg(long, value_name = "X.Y")]
    pub linkerd_version: Option<String>,

    /// The oldest kubelet in the cluster, as MAJOR.MINOR (1.29).
    #[arg(long, value_name = "X.Y")]
    pub kubernetes_version: Option<String>,

    /// Read PATH (a file or a directory) for versions only, never edited or reported on
    /// (repeatable; adds to the config's `versionsFrom`).
    #[arg(long, value_name = "PATH")]
    pub versions_from: Vec<String>,

    /// How pods are fixed: per pod from the versions (auto), or one for all; none removes
    /// what meshjob added.
    #[arg(long, value_enum, value_name = "STRATEGY")]
    pub strategy: Option<super::StrategyChoice>,

    /// The lowest severity that fails the run (exit 1).
    #[arg(long, value_enum, value_name = "LEVEL")]
    pub fail_on: Option<FailOn>,

    /// Report only these rules: codes or prefixes (MJ701, MJ7, MJ, ALL), comma-separated;
    /// replaces the config's `select` and `ignore`.
    #[arg(long, value_name = "CODES", value_delimiter = ',')]
    pub select: Option<Vec<String>>,

    /// Do not report these rules: codes or prefixes, comma-separated; adds to the config's.
    #[arg(long, value_name = "CODES", value_delimiter = ',')]
    pub ignore: Vec<String>,

    /// Configuration file for every input (default: the nearest .meshjob.yaml, looked up
    /// from each file's directory upward).
    #[arg(long, value_name = "FILE")]
    pub config: Option<String>,
}

impl Flags {
    /// Overrides `s` with every flag given. Errors name the flag.
    pub fn apply(&self, s: &mut Settings) -> Result<(), String> {
        if let Some(u) = &self.quit_url {
            s.quit_url = Some(super::quit_url::parse(u).map_err(|m| format!("--quit-url: {m}"))?);
        }
        if let Some(m) = self.mesh {
            s.mesh = m;
        }
        if let Some(d) = &self.drain_duration {
            s.drain_duration =
                super::GoDuration::parse_drain(d).map_err(|m| format!("--drain-duration: {m}"))?;
        }
        if let Some(b) = self.exit_on_zero_active_connections {
            s.exit_on_zero_active_connections = b;
        }
        if let Some(b) = self.hold_application_until_proxy_starts {
            s.hold_application_until_proxy_starts = b;
        }
        if let Some(w) = self.wait_for_proxy {
            // 0 means no wait, as in the config file.
            s.wait_for_proxy_seconds = (w > 0).then_some(w);
        }
        if self.force {
            s.force = true;
        }
        if let Some(level) = self.fail_on {
            s.fail_on = level;
        }
        use crate::version::VersionOrigin;
        for (flag, given, slot, origin) in [
            (
                "--istio-version",
                &self.istio_version,
                &mut s.istio_version,
                &mut s.given.istio,
            ),
            (
                "--kubernetes-version",
                &self.kubernetes_version,
                &mut s.kubernetes_version,
                &mut s.given.kubernetes,
            ),
        ] {
            if let Some(v) = given {
                *slot = Some(super::Version::parse(v).map_err(|m| format!("{flag}: {m}"))?);
                *origin = Some(VersionOrigin::Flag(flag));
            }
        }
        if let Some(v) = &self.linkerd_version {
            let flag = "--linkerd-version";
            s.linkerd_version =
                Some(super::Release::parse(v, true).map_err(|m| format!("{flag}: {m}"))?);
            s.given.linkerd = Some(VersionOrigin::Flag(flag));
        }
        if let Some(p) = self.versions_from.iter().find(|p| p.is_empty()) {
            return Err(format!("--versions-from: {p:?} is not a path"));
        }
        if self.select.is_some() || !self.ignore.is_empty() {
            let select = (self.select.as_deref())
                .map(super::select::parse_all)
                .transpose()
                .map_err(|m| format!("--select: {m}"))?;
            let ignore =
                super::select::parse_all(&self.ignore).map_err(|m| format!("--ignore: {m}"))?;
            s.rules.apply(select.as_deref(), &ignore);
        }
        if let Some(strategy) = self.strategy {
            s.strategy = strategy;
        }
        Ok(())
    }
}
