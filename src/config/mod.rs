//! Configuration: `.meshjob.yaml`, the KRM functionConfig and the effective settings.
//!
//! The settings of a run are layered: [`Settings::default`], then
//! the config document ([`MeshJobConfig::apply_to`]), then command-line flags, and made in
//! one place, the [`Resolver`]. The document
//! types are the one source of the JSON Schema ([`schema_json`]).

mod document;
mod duration;
mod flags;
mod kinds;
mod parse;
pub(crate) mod quit_url;
mod resolve;
mod select;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::version::{Given, VersionOrigin};
pub use crate::version::{Release, Version};
pub use document::MeshId;
pub use document::StrategyChoice;
pub(crate) use document::{ConfigSpec, FailOn, Located, MeshJobConfig, Metadata, VersionText};
pub(crate) use duration::{GoDuration, parse_go_duration};
pub(crate) use flags::{Flags, Overrides};
pub(crate) use parse::ConfigError;
pub(crate) use parse::closest;
pub use parse::parse;
pub(crate) use quit_url::QuitUrl;
pub(crate) use resolve::Resolver;
pub(crate) use select::RuleSet;

/// The config file looked up from each input's directory upward.
pub(crate) const CONFIG_FILE_NAME: &str = ".meshjob.yaml";
/// The only `apiVersion` of a config document.
pub(crate) const API_VERSION: &str = "meshjob.dev/v1alpha1";
/// The only `kind` of a config document.
pub(crate) const KIND: &str = "MeshJobConfig";

/// The effective settings of one run: defaults, then the config file, then flags.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// URL the wrapper POSTs when the task ends; `None`: the pod's mesh's own endpoint.
    pub quit_url: Option<QuitUrl>,
    /// The mesh of pods that no marker places in one.
    pub mesh: MeshId,
    /// `terminationDrainDuration` to set.
    pub drain_duration: GoDuration,
    /// Set `proxyMetadata.EXIT_ON_ZERO_ACTIVE_CONNECTIONS: "true"`.
    pub exit_on_zero_active_connections: bool,
    /// Set `holdApplicationUntilProxyStarts: true`.
    pub hold_application_until_proxy_starts: bool,
    /// Image reference or prefix -> the image's entrypoint argv, for containers without
    /// `command`. The longest matching prefix wins.
    pub entrypoints: BTreeMap<String, Vec<String>>,
    /// Seconds the wrapper waits for the proxy to be ready before starting the task; `None`
    /// (the default) does not wait.
    pub wait_for_proxy_seconds: Option<u32>,
    /// Overwrite user values that contradict the tool's instead of warning.
    pub force: bool,
    /// Exclude patterns of the config file, relative to its directory (`diff`, `check`
    /// and `fix` only).
    pub exclude: Vec<String>,
    /// The lowest severity that fails a run.
    pub fail_on: FailOn,
    /// The rules whose findings are reported (`select`, `ignore`).
    pub rules: RuleSet,
    /// The Istio that injects the pods, when known.
    pub istio_version: Option<Version>,
    /// The oldest kubelet of the cluster, when known.
    pub kubernetes_version: Option<Version>,
    /// The Linkerd that injects the pods, when known: a stable `2.X` or an edge release.
    pub linkerd_version: Option<Release>,
    /// The versions of the other holders' injectors (`mesh::holder`), by their config key
    /// (`daprVersion`), when given.
    pub holder_versions: BTreeMap<&'static str, crate::version::Semver>,
    /// Vault Agent pods get `agent-pre-populate-only` instead of the quit endpoint.
    pub vault_pre_populate_only: bool,
    /// Where each of the versions above came from, when given.
    pub given: Given,
    /// `versionsFrom` of the config file: more paths read for versions only, relative to the
    /// config file's directory (`diff`, `check`, `fix` and `versions` only).
    pub versions_from: Vec<String>,
    /// Read the context of the whole project when only some of its files are named
    /// (`diff`, `check`, `fix` only).
    pub project_context: bool,
    /// How pods are fixed.
    pub strategy: StrategyChoice,
    /// Image references or prefixes, and container names, of long-running sidecars.
    pub sidecars: Vec<String>,
    /// The kinds whose pods are fixed.
    pub kinds: crate::kinds::Kinds,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            quit_url: None,
            mesh: MeshId::default(),
            drain_duration: GoDuration::default_drain(),
            exit_on_zero_active_connections: true,
            hold_application_until_proxy_starts: true,
            entrypoints: BTreeMap::new(),
            wait_for_proxy_seconds: None,
            force: false,
            exclude: Vec::new(),
            fail_on: FailOn::Error,
            rules: RuleSet::default(),
            istio_version: None,
            linkerd_version: None,
            kubernetes_version: None,
            holder_versions: BTreeMap::new(),
            vault_pre_populate_only: false,
            given: Given::default(),
            versions_from: Vec::new(),
            project_context: true,
            strategy: StrategyChoice::Auto,
            sidecars: Vec::new(),
            kinds: crate::kinds::Kinds::default(),
        }
    }
}

impl Settings {
    /// The version of the mesh that injects the pods, when given by a flag or the config.
    pub fn mesh_version(&self, mesh: MeshId) -> Option<Release> {
        match mesh {
            MeshId::Istio => self.istio_version.map(Release::Stable),
            MeshId::Linkerd => self.linkerd_version,
        }
    }

    /// Where the version of `mesh` came from, when given.
    pub(crate) fn mesh_version_origin(&self, mesh: MeshId) -> Option<&VersionOrigin> {
        match mesh {
            MeshId::Istio => self.given.istio.as_ref(),
            MeshId::Linkerd => self.given.linkerd.as_ref(),
        }
    }

    /// The entrypoint argv configured for `image`: the longest entry that names the image or
    /// a prefix of it (an exact match is the longest), both normalised as Docker does
    /// (`image::matches`).
    pub fn entrypoint_for(&self, image: &str) -> Option<&[String]> {
        self.entrypoints
            .iter()
            .filter_map(|(entry, argv)| crate::image::matches(image, entry).map(|n| (n, argv)))
            .max_by_key(|(n, _)| *n)
            .map(|(_, argv)| argv.as_slice())
    }
}

/// The nearest [`CONFIG_FILE_NAME`] in `start_dir` or one of its ancestors. A relative
/// `start_dir` is taken from the current directory; the result is then absolute.
pub(crate) fn discover(start_dir: &Path) -> Option<PathBuf> {
    let start = std::path::absolute(start_dir).ok()?;
    start
        .ancestors()
        .map(|dir| dir.join(CONFIG_FILE_NAME))
        .find(|candidate| candidate.is_file())
}

/// Reads, parses and validates the config file at `path`.
pub fn load(path: &Path) -> Result<MeshJobConfig, ConfigError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path)
        .map_err(|e| ConfigError::new(&name, 0, 0, format!("cannot read the config file: {e}")))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let bad = e.utf8_error().valid_up_to();
        let text = String::from_utf8_lossy(e.as_bytes());
        let (line, column) = crate::yaml::text::line_col(&text, bad);
        ConfigError::new(&name, line, column, "the config file is not valid UTF-8")
    })?;
    parse(&text, &name)
}

impl MeshJobConfig {
    /// Checks the values that the types alone do not: the quit URL, the drain duration and
    /// the entrypoints.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.checked().map(drop)
    }

    /// The values that are parsed beyond their types, parsed once; errors name the key and
    /// its position.
    fn checked(&self) -> Result<Checked, ConfigError> {
        let spec = &self.spec;
        let mut checked = Checked::default();
        let error = |at: (usize, usize), message: String| {
            let origin = match self.origin.as_str() {
                "" => "functionConfig",
                origin => origin,
            };
            ConfigError::new(origin, at.0, at.1, message)
        };
        if let Some(url) = &spec.quit_url {
            checked.quit_url = Some(
                quit_url::parse(url)
                    .map_err(|why| error(position(url), format!("invalid `quitUrl`: {why}")))?,
            );
        }
        if let Some(duration) = &spec.drain_duration {
            checked.drain = Some(GoDuration::parse_drain(duration).map_err(|why| {
                error(
                    position(duration),
                    format!("invalid `drainDuration`: {why}"),
                )
            })?);
        }
        for (key, v, slot) in [
            ("istioVersion", &spec.istio_version, &mut checked.istio),
            (
                "kubernetesVersion",
                &spec.kubernetes_version,
                &mut checked.kubernetes,
            ),
        ] {
            if let Some(v) = v {
                *slot = Some(
                    Version::parse(&v.0)
                        .map_err(|why| error(position(v), format!("invalid `{key}`: {why}")))?,
                );
            }
        }
        if let Some(v) = &spec.linkerd_version {
            checked.linkerd =
                Some(Release::parse(&v.0, true).map_err(|why| {
                    error(position(v), format!("invalid `linkerdVersion`: {why}"))
                })?);
        }
        for (key, v) in [
            ("vaultK8sVersion", &spec.vault_k8s_version),
            ("daprVersion", &spec.dapr_version),
            ("consulK8sVersion", &spec.consul_k8s_version),
        ] {
            if let Some(v) = v {
                let parsed = crate::version::Semver::parse(&v.0)
                    .map_err(|why| error(position(v), format!("invalid `{key}`: {why}")))?;
                checked.holders.push((key, parsed, v.line));
            }
        }
        if let Some(paths) = &spec.versions_from
            && paths.iter().any(|p| p.trim().is_empty())
        {
            return Err(error(
                position(paths),
                "invalid `versionsFrom`: a path must not be empty".to_string(),
            ));
        }
        for s in spec.sidecars.iter().flatten() {
            if s.trim().is_empty() || s.chars().any(char::is_whitespace) {
                return Err(error(
                    position(s),
                    format!(
                        "invalid `sidecars`: {:?} must be an image reference or prefix, or a \
                         container name, without whitespace",
                        s.value
                    ),
                ));
            }
        }
        for (image, argv) in spec.entrypoints.iter().flatten() {
            let why = if image.trim().is_empty() {
                Some("an image reference or prefix must not be empty".to_string())
            } else if image.chars().any(char::is_whitespace) {
                Some(format!(
                    "image reference {image:?} must not contain whitespace"
                ))
            } else if argv.first().is_none_or(String::is_empty) {
                Some(format!(
                    "the entrypoint of {image:?} must be a non-empty list whose first item \
                     is the program, such as [/usr/local/bin/migrate]"
                ))
            } else {
                None
            };
            if let Some(why) = why {
                return Err(error(
                    position(argv),
                    format!("invalid `entrypoints`: {why}"),
                ));
            }
        }
        for (key, list, slot) in [
            ("select", &spec.select, &mut checked.select),
            ("ignore", &spec.ignore, &mut checked.ignore),
        ] {
            if let Some(list) = list {
                let parsed = select::parse_all(list)
                    .map_err(|why| error(position(list), format!("invalid `{key}`: {why}")))?;
                *slot = Some(parsed);
            }
        }
        if let Some(patterns) = &spec.exclude {
            for p in patterns.iter() {
                crate::exclude::Pattern::new(p, Path::new("/")).map_err(|why| {
                    error(position(patterns), format!("invalid `exclude`: {why}"))
                })?;
            }
        }
        if let Some(entries) = &spec.kinds {
            let rows = entries.iter().map(|e| {
                kinds::row(e).map_err(|why| error(position(e), format!("invalid `kinds`: {why}")))
            });
            checked.kinds = Some(rows.collect::<Result<_, _>>()?);
        }
        Ok(checked)
    }

    /// Validates, then overrides `settings` with every key the document sets. `entrypoints`
    /// entries are added to (and replace same-key entries of) the existing map. Nothing is
    /// changed when validation fails.
    pub fn apply_to(&self, settings: &mut Settings) -> Result<(), ConfigError> {
        let checked = self.checked()?;
        let spec = &self.spec;
        if checked.quit_url.is_some() {
            settings.quit_url = checked.quit_url;
        }
        if let Some(mesh) = spec.mesh {
            settings.mesh = mesh;
        }
        if let Some(duration) = checked.drain {
            settings.drain_duration = duration;
        }
        if let Some(on) = spec.exit_on_zero_active_connections {
            settings.exit_on_zero_active_connections = on;
        }
        if let Some(on) = spec.hold_application_until_proxy_starts {
            settings.hold_application_until_proxy_starts = on;
        }
        for (image, argv) in spec.entrypoints.iter().flatten() {
            settings
                .entrypoints
                .insert(image.clone(), argv.value.clone());
        }
        if let Some(seconds) = spec.wait_for_proxy {
            settings.wait_for_proxy_seconds = (seconds > 0).then_some(seconds);
        }
        if let Some(on) = spec.force {
            settings.force = on;
        }
        if let Some(patterns) = &spec.exclude {
            settings.exclude.clone_from(&patterns.value);
        }
        if let Some(level) = spec.fail_on {
            settings.fail_on = level;
        }
        if spec.select.is_some() || spec.ignore.is_some() {
            let ignore = checked.ignore.unwrap_or_default();
            settings.rules.apply(checked.select.as_deref(), &ignore);
        }
        let origin = |key: &'static str, line: usize| VersionOrigin::Config {
            file: self.origin.as_str().into(),
            line,
            key,
        };
        if let (Some(v), Some(text)) = (checked.istio, &spec.istio_version) {
            settings.istio_version = Some(v);
            settings.given.istio = Some(origin("istioVersion", text.line));
        }
        if let (Some(v), Some(text)) = (checked.kubernetes, &spec.kubernetes_version) {
            settings.kubernetes_version = Some(v);
            settings.given.kubernetes = Some(origin("kubernetesVersion", text.line));
        }
        if let (Some(v), Some(text)) = (checked.linkerd, &spec.linkerd_version) {
            settings.linkerd_version = Some(v);
            settings.given.linkerd = Some(origin("linkerdVersion", text.line));
        }
        for (key, v, line) in checked.holders {
            settings.holder_versions.insert(key, v);
            settings.given.holders.insert(key, origin(key, line));
        }
        if let Some(on) = spec.vault_pre_populate_only {
            settings.vault_pre_populate_only = on;
        }
        if let Some(paths) = &spec.versions_from {
            settings.versions_from.clone_from(&paths.value);
        }
        if let Some(b) = spec.project_context {
            settings.project_context = b;
        }
        if let Some(s) = spec.strategy {
            settings.strategy = s;
        }
        for s in spec.sidecars.iter().flatten() {
            if !settings.sidecars.contains(&s.value) {
                settings.sidecars.push(s.value.clone());
            }
        }
        if let Some(rows) = checked.kinds {
            settings.kinds.set_config_rows(rows);
        }
        Ok(())
    }

    /// The document that sets every one of `settings` explicitly.
    pub fn from_settings(settings: &Settings) -> Self {
        MeshJobConfig {
            metadata: Some(Metadata {
                name: Some("meshjob".to_string()),
                ..Metadata::default()
            }),
            spec: ConfigSpec {
                quit_url: settings.quit_url.as_ref().map(|u| u.to_string().into()),
                mesh: Some(settings.mesh),
                drain_duration: Some(settings.drain_duration.to_string().into()),
                exit_on_zero_active_connections: Some(settings.exit_on_zero_active_connections),
                hold_application_until_proxy_starts: Some(
                    settings.hold_application_until_proxy_starts,
                ),
                entrypoints: Some(
                    (settings.entrypoints.iter())
                        .map(|(image, argv)| (image.clone(), argv.clone().into()))
                        .collect(),
                ),
                wait_for_proxy: Some(settings.wait_for_proxy_seconds.unwrap_or(0)),
                force: Some(settings.force),
                exclude: Some(settings.exclude.clone().into()),
                fail_on: Some(settings.fail_on),
                select: Some(vec!["ALL".to_string()].into()),
                ignore: Some(settings.rules.ignored_codes().into()),
                istio_version: (settings.istio_version)
                    .map(|v| Located::new(VersionText(v.to_string()))),
                kubernetes_version: (settings.kubernetes_version)
                    .map(|v| Located::new(VersionText(v.to_string()))),
                linkerd_version: (settings.linkerd_version)
                    .map(|v| Located::new(VersionText(v.to_string()))),
                vault_k8s_version: holder_version(settings, "vaultK8sVersion"),
                dapr_version: holder_version(settings, "daprVersion"),
                consul_k8s_version: holder_version(settings, "consulK8sVersion"),
                vault_pre_populate_only: Some(settings.vault_pre_populate_only),
                versions_from: Some(settings.versions_from.clone().into()),
                project_context: Some(settings.project_context),
                strategy: Some(settings.strategy),
                sidecars: Some(
                    settings
                        .sidecars
                        .iter()
                        .cloned()
                        .map(Located::new)
                        .collect(),
                ),
                kinds: Some(
                    (settings.kinds.config_rows())
                        .map(|r| Located::new(kinds::entry(r)))
                        .collect(),
                ),
            },
            ..MeshJobConfig::default()
        }
    }
}

/// What [`MeshJobConfig::checked`] parsed.
#[derive(Default)]
struct Checked {
    /// The holders' versions: config key, version, line.
    holders: Vec<(&'static str, crate::version::Semver, usize)>,
    quit_url: Option<QuitUrl>,
    drain: Option<GoDuration>,
    istio: Option<Version>,
    kubernetes: Option<Version>,
    linkerd: Option<Release>,
    kinds: Option<Vec<crate::kinds::KindRow>>,
    select: Option<Vec<select::Selector>>,
    ignore: Option<Vec<select::Selector>>,
}

fn position<T>(value: &Located<T>) -> (usize, usize) {
    (value.line, value.column)
}

/// The JSON Schema of the config document: pretty JSON with a final newline.
pub fn schema_json() -> String {
    let schema = schemars::schema_for!(MeshJobConfig);
    let mut json = serde_json::to_string_pretty(&schema).unwrap_or_default();
    json.push('\n');
    json
}

/// The keys of `spec`, as the schema lists them.
pub(crate) fn spec_keys() -> Vec<String> {
    let schema = schemars::schema_for!(ConfigSpec);
    (schema.get("properties").and_then(|p| p.as_object()))
        .map(|props| props.keys().cloned().collect())
        .unwrap_or_default()
}

/// A config document of the effective `settings`, for `meshjob config`. It parses back to
/// the same settings.
pub fn render_effective(settings: &Settings) -> String {
    let config = MeshJobConfig::from_settings(settings);
    serde_saphyr::to_string(&config)
        .unwrap_or_else(|e| format!("# internal error: cannot render the settings: {e}\n"))
}

#[cfg(test)]
mod tests;

/// A holder's version as the config writes it, when set.
fn holder_version(settings: &Settings, key: &str) -> Option<Located<VersionText>> {
    (settings.holder_versions.get(key)).map(|v| Located::new(VersionText(v.to_string())))
}
