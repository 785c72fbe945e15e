//! The command-line flags that override settings: the top layer over the defaults and the
//! config file. One struct for `diff`, `check`, `fix` and `config`, so that each flag has
//! one meaning wherever it is accepted.

use super::select::Selector;
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

    /// The Vault Agent Injector (vault-k8s) that injects the pods, as X.Y.Z (1.7.6).
    #[arg(long, value_name = "X.Y.Z")]
    pub vault_k8s_version: Option<String>,

    /// The Dapr that injects the pods, as X.Y.Z (1.18.3).
    #[arg(long, value_name = "X.Y.Z")]
    pub dapr_version: Option<String>,

    /// The consul-k8s that injects the pods, as X.Y.Z (1.9.11).
    #[arg(long, value_name = "X.Y.Z")]
    pub consul_k8s_version: Option<String>,

    /// Vault Agent pods get agent-pre-populate-only: "true" (secrets fetched once, not
    /// renewed) instead of agent-enable-quit and the wrapper's call.
    #[arg(long, value_name = "BOOL", action = clap::ArgAction::Set)]
    pub vault_pre_populate_only: Option<bool>,

    /// Read PATH (a file or a directory) for versions only, never edited or reported on
    /// (repeatable; adds to the config's `versionsFrom`).
    #[arg(long, value_name = "PATH")]
    pub versions_from: Vec<String>,

    /// Read the context (Namespaces, versions) of the whole project of each named file, not
    /// only of the files named [default: true].
    #[arg(long, value_name = "BOOL", action = clap::ArgAction::Set)]
    pub project_context: Option<bool>,

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
    /// Checks every flag's value, once: the flags as overrides that apply without failing.
    /// An error names the flag.
    pub fn check(&self) -> Result<Overrides, String> {
        let quit_url = (self.quit_url.as_deref())
            .map(|u| super::quit_url::parse(u).map_err(|m| format!("--quit-url: {m}")))
            .transpose()?;
        let drain = (self.drain_duration.as_deref())
            .map(|d| {
                super::GoDuration::parse_drain(d).map_err(|m| format!("--drain-duration: {m}"))
            })
            .transpose()?;
        let version = |flag: &'static str, given: &Option<String>| {
            (given.as_deref())
                .map(|v| super::Version::parse(v).map_err(|m| format!("{flag}: {m}")))
                .transpose()
        };
        let istio = version("--istio-version", &self.istio_version)?;
        let kubernetes = version("--kubernetes-version", &self.kubernetes_version)?;
        let linkerd = (self.linkerd_version.as_deref())
            .map(|v| super::Release::parse(v, true).map_err(|m| format!("--linkerd-version: {m}")))
            .transpose()?;
        let mut holders = Vec::new();
        for (flag, key, given) in [
            (
                "--vault-k8s-version",
                "vaultK8sVersion",
                &self.vault_k8s_version,
            ),
            ("--dapr-version", "daprVersion", &self.dapr_version),
            (
                "--consul-k8s-version",
                "consulK8sVersion",
                &self.consul_k8s_version,
            ),
        ] {
            if let Some(v) = given {
                let v = crate::version::Semver::parse(v).map_err(|m| format!("{flag}: {m}"))?;
                holders.push((flag, key, v));
            }
        }
        if let Some(p) = self.versions_from.iter().find(|p| p.is_empty()) {
            return Err(format!("--versions-from: {p:?} is not a path"));
        }
        let rules = if self.select.is_some() || !self.ignore.is_empty() {
            let select = (self.select.as_deref())
                .map(super::select::parse_all)
                .transpose()
                .map_err(|m| format!("--select: {m}"))?;
            let ignore =
                super::select::parse_all(&self.ignore).map_err(|m| format!("--ignore: {m}"))?;
            Some((select, ignore))
        } else {
            None
        };
        Ok(Overrides {
            quit_url,
            mesh: self.mesh,
            drain,
            exit_on_zero_active_connections: self.exit_on_zero_active_connections,
            hold_application_until_proxy_starts: self.hold_application_until_proxy_starts,
            // 0 means no wait, as in the config file.
            wait_for_proxy: self.wait_for_proxy.map(|w| (w > 0).then_some(w)),
            force: self.force,
            fail_on: self.fail_on,
            istio,
            kubernetes,
            linkerd,
            holders,
            vault_pre_populate_only: self.vault_pre_populate_only,
            rules,
            strategy: self.strategy,
            config: self.config.clone(),
            versions_from: self.versions_from.clone(),
            project_context: self.project_context,
        })
    }
}

/// The flags of a run, each value checked ([`Flags::check`]): the top layer of its settings.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    quit_url: Option<super::QuitUrl>,
    mesh: Option<super::MeshId>,
    drain: Option<super::GoDuration>,
    exit_on_zero_active_connections: Option<bool>,
    hold_application_until_proxy_starts: Option<bool>,
    wait_for_proxy: Option<Option<u32>>,
    force: bool,
    fail_on: Option<FailOn>,
    istio: Option<super::Version>,
    kubernetes: Option<super::Version>,
    linkerd: Option<super::Release>,
    /// The holders' versions: flag, config key, version.
    holders: Vec<(&'static str, &'static str, crate::version::Semver)>,
    vault_pre_populate_only: Option<bool>,
    rules: Option<(Option<Vec<Selector>>, Vec<Selector>)>,
    strategy: Option<super::StrategyChoice>,
    /// `--config`: the config file of every input, instead of the nearest one.
    pub(crate) config: Option<String>,
    /// `--versions-from`: more paths read for versions only.
    pub(crate) versions_from: Vec<String>,
    project_context: Option<bool>,
}

impl Overrides {
    /// Overrides `s` with every flag given.
    pub(crate) fn apply(&self, s: &mut Settings) {
        use crate::version::VersionOrigin as Origin;
        if let Some(u) = &self.quit_url {
            s.quit_url = Some(u.clone());
        }
        if let Some(m) = self.mesh {
            s.mesh = m;
        }
        if let Some(d) = &self.drain {
            s.drain_duration = d.clone();
        }
        if let Some(b) = self.exit_on_zero_active_connections {
            s.exit_on_zero_active_connections = b;
        }
        if let Some(b) = self.hold_application_until_proxy_starts {
            s.hold_application_until_proxy_starts = b;
        }
        if let Some(w) = self.wait_for_proxy {
            s.wait_for_proxy_seconds = w;
        }
        if self.force {
            s.force = true;
        }
        if let Some(b) = self.project_context {
            s.project_context = b;
        }
        if let Some(level) = self.fail_on {
            s.fail_on = level;
        }
        if let Some(v) = self.istio {
            s.istio_version = Some(v);
            s.given.istio = Some(Origin::Flag("--istio-version"));
        }
        if let Some(v) = self.kubernetes {
            s.kubernetes_version = Some(v);
            s.given.kubernetes = Some(Origin::Flag("--kubernetes-version"));
        }
        if let Some(v) = self.linkerd {
            s.linkerd_version = Some(v);
            s.given.linkerd = Some(Origin::Flag("--linkerd-version"));
        }
        for (flag, key, v) in &self.holders {
            s.holder_versions.insert(key, *v);
            s.given.holders.insert(key, Origin::Flag(flag));
        }
        if let Some(on) = self.vault_pre_populate_only {
            s.vault_pre_populate_only = on;
        }
        if let Some((select, ignore)) = &self.rules {
            s.rules.apply(select.as_deref(), ignore);
        }
        if let Some(strategy) = self.strategy {
            s.strategy = strategy;
        }
    }

    /// The oldest kubelet given by `--kubernetes-version`, when given.
    pub(crate) fn kubernetes_version(&self) -> Option<super::Version> {
        self.kubernetes
    }

    /// Sets the oldest kubelet as `--kubernetes-version` would.
    pub(crate) fn set_kubernetes_version(&mut self, v: super::Version) {
        self.kubernetes = Some(v);
    }
}
