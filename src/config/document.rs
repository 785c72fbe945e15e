//! The config document's types. Their doc comments become the JSON Schema's descriptions.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Deref;

use schemars::JsonSchema;
use serde::de::{self, IntoDeserializer};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A meshjob configuration document: `.meshjob.yaml`, or the functionConfig of the KRM
/// function and kustomize plugin.
///
/// ```yaml
/// apiVersion: meshjob.dev/v1alpha1
/// kind: MeshJobConfig
/// metadata:
///   name: meshjob
/// spec:
///   drainDuration: 10s
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MeshJobConfig {
    /// The schema version of this document. Always `meshjob.dev/v1alpha1`.
    ///
    /// ```yaml
    /// apiVersion: meshjob.dev/v1alpha1
    /// ```
    pub api_version: ApiVersion,
    /// The document type. Always `MeshJobConfig`.
    ///
    /// ```yaml
    /// kind: MeshJobConfig
    /// ```
    pub kind: Kind,
    /// Optional object metadata. meshjob ignores it; kustomize and KRM tools read it.
    ///
    /// ```yaml
    /// metadata:
    ///   name: meshjob
    /// ```
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Metadata>,
    /// The settings. Every key is optional; a missing key keeps the built-in default.
    /// `spec` itself may be missing, empty (`spec: {}`) or null (`spec:`).
    ///
    /// ```yaml
    /// spec:
    ///   quitUrl: http://localhost:15020/quitquitquit
    ///   drainDuration: 5s
    /// ```
    #[serde(default, deserialize_with = "null_as_default")]
    #[schemars(with = "Option<ConfigSpec>")]
    pub spec: ConfigSpec,
    /// Where the document came from (a file path, or `functionConfig`); used in the errors
    /// of [`MeshJobConfig::apply_to`]. Not part of the document.
    #[serde(skip)]
    #[schemars(skip)]
    pub origin: String,
}

/// The only accepted `apiVersion`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum ApiVersion {
    #[default]
    #[serde(rename = "meshjob.dev/v1alpha1")]
    V1alpha1,
}

/// The only accepted `kind`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum Kind {
    #[default]
    MeshJobConfig,
}

/// Kubernetes-style object metadata; only the fields KRM tools use are accepted.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Metadata {
    /// A name for this configuration.
    ///
    /// ```yaml
    /// name: meshjob
    /// ```
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A namespace, for tools that expect one.
    ///
    /// ```yaml
    /// namespace: batch
    /// ```
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Labels, for tools that select function configs by label.
    ///
    /// ```yaml
    /// labels:
    ///   app.kubernetes.io/name: meshjob
    /// ```
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    /// Annotations, such as kustomize's `config.kubernetes.io/function`.
    ///
    /// ```yaml
    /// annotations:
    ///   config.kubernetes.io/function: |
    ///     exec:
    ///       path: meshjob
    /// ```
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
}

/// meshjob's settings. Every key is optional: a missing or null key keeps the default, and a
/// command-line flag overrides the key.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ConfigSpec {
    /// The URL the wrapper POSTs when the task ends, so that the sidecar exits, for pods of
    /// every mesh. It must be `http://HOST[:PORT]/PATH`; the path may use letters, digits
    /// and `-._~/%:@+,;=`. Without it each pod gets its mesh's endpoint, on the port its
    /// annotation moves it to: `http://localhost:15020/quitquitquit` for Istio
    /// (`status.sidecar.istio.io/port`), `http://localhost:4191/shutdown` for Linkerd
    /// (`config.linkerd.io/admin-port`). Flag: `--quit-url`. Default: the mesh's endpoint.
    ///
    /// ```yaml
    /// quitUrl: http://localhost:15020/quitquitquit
    /// ```
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = QUIT_URL_PATTERN))]
    pub quit_url: Option<Located<String>>,

    /// The mesh of pods that carry no mesh marker: `istio` or `linkerd`. A pod's own markers
    /// (`sidecar.istio.io/inject`, `istio.io/rev`, `linkerd.io/inject`, an injected proxy
    /// container) or those of a Namespace document in the same run come first.
    /// Flag: `--mesh`. Default: `istio`.
    ///
    /// ```yaml
    /// mesh: linkerd
    /// ```
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mesh: Option<MeshId>,

    /// The proxy's `terminationDrainDuration`: a Go duration that is not negative, such as
    /// `5s`, `500ms` or `1m30s`. Flag: `--drain-duration`. Default: `5s`.
    ///
    /// ```yaml
    /// drainDuration: 5s
    /// ```
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = DRAIN_DURATION_PATTERN))]
    pub drain_duration: Option<Located<String>>,

    /// Set `proxyMetadata.EXIT_ON_ZERO_ACTIVE_CONNECTIONS: "true"`, so that the proxy exits
    /// once its last connection closes. Write `true` or `false`, unquoted.
    /// Flag: `--exit-on-zero-active-connections`. Default: `true`.
    ///
    /// ```yaml
    /// exitOnZeroActiveConnections: true
    /// ```
    #[serde(
        default,
        deserialize_with = "plain_scalar",
        skip_serializing_if = "Option::is_none"
    )]
    pub exit_on_zero_active_connections: Option<bool>,

    /// Set `holdApplicationUntilProxyStarts: true`, so that the task starts only once the
    /// proxy is ready. Write `true` or `false`, unquoted.
    /// Flag: `--hold-application-until-proxy-starts`. Default: `true`.
    ///
    /// ```yaml
    /// holdApplicationUntilProxyStarts: true
    /// ```
    #[serde(
        default,
        deserialize_with = "plain_scalar",
        skip_serializing_if = "Option::is_none"
    )]
    pub hold_application_until_proxy_starts: Option<bool>,

    /// The entrypoint (ENTRYPOINT plus CMD) of images whose containers set `args` but no
    /// `command`, so that they can be wrapped without pulling the image. A key is a full
    /// image reference or a prefix of one that ends at a `/`, `:` or `@`; the longest
    /// matching key wins. Keys and images are compared as Docker normalises them
    /// (`python:3.12` is `docker.io/library/python:3.12`). Each value is the argv, a
    /// non-empty list of strings (quote numbers: `"10"`); the wrapper puts it in front of
    /// `args` with each `$` doubled, since Kubernetes expands `$(VAR)` and `$$` in `args`
    /// but never in an image's ENTRYPOINT.
    /// Entries are added to, and replace, entries with the same key. Default: none.
    ///
    /// ```yaml
    /// entrypoints:
    ///   ghcr.io/acme/migrate:1.4.2: [/usr/local/bin/migrate]
    ///   docker.io/library/python: [python3]
    /// ```
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend(
        "propertyNames" = { "pattern": "^\\S+$" },
        "additionalProperties" = {
            "type": "array",
            "items": { "type": "string" },
            "prefixItems": [{ "type": "string", "minLength": 1 }],
            "minItems": 1
        }
    ))]
    pub entrypoints: Option<BTreeMap<String, Located<Vec<String>>>>,

    /// Whole seconds the wrapper waits for the proxy to become ready before it starts the
    /// task; `0` does not wait. Useful where `holdApplicationUntilProxyStarts` is off.
    /// Default: no wait.
    ///
    /// ```yaml
    /// waitForProxy: 30
    /// ```
    #[serde(
        default,
        deserialize_with = "plain_scalar",
        skip_serializing_if = "Option::is_none"
    )]
    pub wait_for_proxy: Option<u32>,

    /// Overwrite values the user set that contradict meshjob's (for example
    /// `holdApplicationUntilProxyStarts: false` in `proxy.istio.io/config`) instead of
    /// reporting them as warnings. Write `true` or `false`, unquoted. Default: `false`.
    ///
    /// ```yaml
    /// force: false
    /// ```
    #[serde(
        default,
        deserialize_with = "plain_scalar",
        skip_serializing_if = "Option::is_none"
    )]
    pub force: Option<bool>,

    /// Files and directories that `diff`, `check` and `fix` leave out. A pattern without `/`
    /// matches a file or directory name at any depth; a pattern with `/` matches the path
    /// relative to the directory of this config file. `*` matches within a name, `?` one
    /// character, `[a-z]` one of a set, and `**` any number of names; a trailing `/`
    /// matches directories only. A matching directory excludes everything below it.
    /// Flag: `--exclude` (relative to the working directory; adds to these). Default: none.
    ///
    /// ```yaml
    /// exclude: [legacy, "generated/*.yaml"]
    /// ```
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclude: Option<Located<Vec<String>>>,

    /// The lowest severity that fails a run: `error` (the default) or `warning`. With
    /// `warning`, `check`, `fix`, the KRM function and the kustomize plugin exit 1 when a
    /// warning is left. kubectl shows a plugin's messages only when it fails, so this is the
    /// way to see warnings under `kubectl kustomize`. Flag: `--fail-on`. Default: `error`.
    ///
    /// ```yaml
    /// failOn: warning
    /// ```
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fail_on: Option<FailOn>,

    /// The rules whose findings are reported, by code or prefix (`MJ701`, `MJ7`, `MJ`, or
    /// `ALL`), as ruff selects rules: given, only these are reported. Findings of the other
    /// rules are not shown, counted, or failed on; what is written does not change (a pod an
    /// ignored rule refuses is still left as it is), and errors that stop a file (invalid
    /// YAML, an unreadable file, a broken config) are always reported. Flag: `--select`
    /// (replaces this and `ignore`). Default: `[ALL]`.
    ///
    /// ```yaml
    /// select: [MJ1, MJ2, MJ7]
    /// ```
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("items" = { "type": "string", "pattern": "^(ALL|MJ[0-9]{0,3})$" }))]
    pub select: Option<Located<Vec<String>>>,

    /// Rules whose findings are not reported, by code or prefix, taken out of `select`; a
    /// more specific code or prefix in `select` wins (`select: [MJ701]` with `ignore: [MJ7]`
    /// still reports MJ701). Flag: `--ignore` (adds to these). Default: none.
    ///
    /// ```yaml
    /// ignore: [MJ120, MJ121]
    /// ```
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("items" = { "type": "string", "pattern": "^(ALL|MJ[0-9]{0,3})$" }))]
    pub ignore: Option<Located<Vec<String>>>,

    /// The Istio that will inject the pods (istiod, or `istioctl kube-inject`), as
    /// `MAJOR.MINOR`; with several revisions, the oldest. A string: quote it, since an
    /// unquoted `1.30` is the number 1.3 in YAML. Flag: `--istio-version`. Default: unknown.
    ///
    /// ```yaml
    /// istioVersion: "1.24"
    /// ```
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>", regex(pattern = VERSION_PATTERN))]
    pub istio_version: Option<Located<VersionText>>,

    /// The oldest kubelet in the cluster, as `MAJOR.MINOR` (Istio's native-sidecar `auto`
    /// mode looks at every node). A string, quoted like `istioVersion`.
    /// Flag: `--kubernetes-version`. Default: unknown.
    ///
    /// ```yaml
    /// kubernetesVersion: "1.29"
    /// ```
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>", regex(pattern = VERSION_PATTERN))]
    pub kubernetes_version: Option<Located<VersionText>>,

    /// The Linkerd that will inject the pods, as `MAJOR.MINOR` (`2.18`) or an edge release
    /// (`edge-25.10.2`); it picks the native-sidecar annotation for Linkerd pods (alpha
    /// 2.15-2.18, beta 2.19 and `edge-25.10.2` on, GA 2.20 and `edge-26.5.2` on). A string,
    /// quoted like `istioVersion`. Flag: `--linkerd-version`. Default: unknown.
    ///
    /// ```yaml
    /// linkerdVersion: "2.18"
    /// ```
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>", regex(pattern = LINKERD_VERSION_PATTERN))]
    pub linkerd_version: Option<Located<VersionText>>,

    /// The Vault Agent Injector (vault-k8s, not Vault itself) that injects the pods, as
    /// `MAJOR.MINOR` or `MAJOR.MINOR.PATCH`; its quit endpoint needs 0.16.0 or later (and a
    /// Vault agent 1.10 or later). Flag: `--vault-k8s-version`. Default: unknown.
    ///
    /// ```yaml
    /// vaultK8sVersion: "1.7.6"
    /// ```
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>", regex(pattern = VERSION_PATTERN))]
    pub vault_k8s_version: Option<Located<VersionText>>,

    /// The Dapr that injects the pods, as `MAJOR.MINOR` or `MAJOR.MINOR.PATCH`: 1.18.0 or
    /// later reads `dapr.io/enable-native-sidecar`, which `auto` then writes where every
    /// kubelet is 1.29 or newer. Flag: `--dapr-version`. Default: unknown.
    ///
    /// ```yaml
    /// daprVersion: "1.18.3"
    /// ```
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>", regex(pattern = VERSION_PATTERN))]
    pub dapr_version: Option<Located<VersionText>>,

    /// The consul-k8s that injects the pods, as `MAJOR.MINOR.PATCH`: 1.7.5, 1.8.2 and 1.9.0 or
    /// later read `consul.hashicorp.com/enable-consul-dataplane-as-sidecar`, which `auto`
    /// then writes where every kubelet is 1.29 or newer. Flag: `--consul-k8s-version`.
    /// Default: unknown.
    ///
    /// ```yaml
    /// consulK8sVersion: "1.9.11"
    /// ```
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>", regex(pattern = VERSION_PATTERN))]
    pub consul_k8s_version: Option<Located<VersionText>>,

    /// Vault Agent pods get `vault.hashicorp.com/agent-pre-populate-only: "true"` instead of
    /// `vault.hashicorp.com/agent-enable-quit: "true"` and the wrapper's call: the injector
    /// then adds only its init container, which fetches the secrets once, so nothing is left
    /// running; but the secrets are neither renewed nor rendered again during the task (fit
    /// for Jobs shorter than their secrets' lease). Default: false (renewal kept).
    ///
    /// ```yaml
    /// vaultPrePopulateOnly: true
    /// ```
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vault_pre_populate_only: Option<bool>,

    /// More files and directories (walked for `*.yaml` and `*.yml`) that are read for the
    /// versions they hold only: never edited, never reported on. For example a checkout of
    /// the platform repository that installs the mesh, or a saved `kubectl get nodes -o
    /// yaml`. A relative path is taken from the directory of this config file. What is read
    /// comes after `istioVersion`, `kubernetesVersion` and `linkerdVersion` and their flags.
    /// `diff`, `check`, `fix` and `versions` only: the KRM function and the kustomize plugin
    /// see only their own stream, and refuse this key. Flag: `--versions-from` (relative to
    /// the working directory; adds to these). Default: none.
    ///
    /// ```yaml
    /// versionsFrom: [../platform/istio, ../platform/nodes.yaml]
    /// ```
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub versions_from: Option<Located<Vec<String>>>,

    /// Whether a run that names some files of a project reads the context of the whole
    /// project (the `Namespace` documents, the mesh's install manifests and values, node
    /// lists), so that a file gets the fix `meshjob check` of the project's top directory
    /// gives it, however it is named (a pre-commit hook names only the staged files). The
    /// project's top directory is, in a git work tree, the outermost directory of it that
    /// holds a `.meshjob.yaml`, else the work tree's top; outside one, the nearest directory
    /// upward with a `.meshjob.yaml`. Read from the config file of that directory. `diff`,
    /// `check` and `fix` only. Flag: `--project-context`. Default: `true`.
    ///
    /// ```yaml
    /// projectContext: true
    /// ```
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project_context: Option<bool>,

    /// How pods are fixed: `auto` picks per pod from the two versions (native sidecars on
    /// Istio 1.24+ with Kubernetes 1.29+, else the wrapper); `wrapper` and `native` force
    /// one; `none` removes what meshjob added. Flag: `--strategy`. Default: `auto`.
    ///
    /// ```yaml
    /// strategy: auto
    /// ```
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub strategy: Option<StrategyChoice>,

    /// Containers that are long-running sidecars and must never be wrapped, besides the
    /// known ones (Cloud SQL Auth Proxy, linkerd-proxy, istio-proxy): an image reference or
    /// prefix (matched as `entrypoints` keys are), or a container name. Entries are added to
    /// the list. Default: none.
    ///
    /// ```yaml
    /// sidecars:
    ///   - registry.example/metrics-agent
    ///   - vault-agent
    /// ```
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("items" = { "type": "string", "pattern": "^\\S+$" }))]
    pub sidecars: Option<Vec<Located<String>>>,

    /// More kinds whose pods meshjob fixes, besides the built-in ones (Job, CronJob, batch
    /// Pods, Kubeflow, Trainer runtimes, JobSet, KEDA ScaledJob, Volcano, RayJob, Spark,
    /// Argo Workflows, Katib): a team's own batch CRD, or a k6 `TestRun`. Each entry names the kind by
    /// `apiVersion` (that version only) or `group` (every version), gives the paths of its
    /// pod templates (`podTemplates`: keys separated by `.`, `[*]` after a key for every
    /// item of its list, `*` for every value of a mapping; each leads to a pod template with
    /// `metadata` and `spec`, whose `restartPolicy` is read as a Job's), and the fixes its
    /// pods may get (`fixes`: `native`, `wrapper`; none leaves the kind alone). A built-in
    /// kind may be given again, without `podTemplates`, to narrow its fixes. The entries
    /// replace those of an earlier config. Default: none.
    ///
    /// ```yaml
    /// kinds:
    ///   - apiVersion: k6.io/v1alpha1
    ///     kind: TestRun
    ///     podTemplates: [spec.runner, spec.starter]
    ///     fixes: [native, wrapper]
    ///   - group: batch
    ///     kind: Job
    ///     fixes: [native]
    /// ```
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kinds: Option<Vec<Located<super::kinds::KindEntry>>>,
}

/// The schema's pattern for `istioVersion` and `kubernetesVersion`.
const VERSION_PATTERN: &str = crate::version::PATTERN;
/// The schema's pattern for `linkerdVersion`: a version, or an edge release.
const LINKERD_VERSION_PATTERN: &str = crate::version::LINKERD_PATTERN;

/// The `strategy` setting.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum StrategyChoice {
    /// Per pod, from the target versions.
    #[default]
    Auto,
    /// The entrypoint wrapper and the proxy.istio.io/config annotation.
    Wrapper,
    /// The native-sidecar annotation.
    Native,
    /// Remove what meshjob added.
    None,
}

impl StrategyChoice {
    pub fn as_str(self) -> &'static str {
        match self {
            StrategyChoice::Auto => "auto",
            StrategyChoice::Wrapper => "wrapper",
            StrategyChoice::Native => "native",
            StrategyChoice::None => "none",
        }
    }
}

/// A version as written in the config: a string. A YAML number is refused with a hint,
/// because `1.30` unquoted reads as 1.3.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct VersionText(pub String);

impl<'de> Deserialize<'de> for VersionText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = VersionText;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a quoted version such as \"1.29\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<VersionText, E> {
                Ok(VersionText(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<VersionText, E> {
                Err(E::custom(format!(
                    "a version must be a quoted string such as \"1.30\": unquoted, YAML reads \
                     it as the number {v}, which drops trailing zeros (1.30 becomes 1.3)"
                )))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<VersionText, E> {
                Err(E::custom(format!(
                    "a version must be a quoted MAJOR.MINOR string such as \"1.29\", not the \
                     number {v}"
                )))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<VersionText, E> {
                self.visit_u64(v.unsigned_abs())
            }
        }
        deserializer.deserialize_any(V)
    }
}

/// The lowest severity that fails a run.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema, clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum FailOn {
    /// Errors fail the run; warnings are only reported.
    #[default]
    Error,
    /// Warnings fail the run too.
    Warning,
}

/// The schema's pattern for `quitUrl`: the set [`super::quit_url::parse`] accepts.
const QUIT_URL_PATTERN: &str = super::quit_url::PATTERN;

/// The schema's pattern for `drainDuration`: a non-negative Go duration.
const DRAIN_DURATION_PATTERN: &str =
    r"^(\+?|-)0$|^\+?(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$";

/// A value with the line and column (1-based, in characters) where the YAML gave it, so
/// that a value error found after parsing still points at the text. Line and column are 0
/// when the value was not read from YAML. Equality ignores the position.
#[derive(Clone, Debug, Default)]
pub struct Located<T> {
    pub value: T,
    pub line: usize,
    pub column: usize,
}

impl<T> Located<T> {
    /// A value that was not read from a file.
    pub fn new(value: T) -> Self {
        Located {
            value,
            line: 0,
            column: 0,
        }
    }
}

impl<T> From<T> for Located<T> {
    fn from(value: T) -> Self {
        Located::new(value)
    }
}

impl<T> Deref for Located<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T: PartialEq> PartialEq for Located<T> {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

impl<T: Eq> Eq for Located<T> {}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Located<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let spanned = serde_saphyr::Spanned::<T>::deserialize(deserializer)?;
        let at = spanned.referenced;
        Ok(Located {
            value: spanned.value,
            line: usize::try_from(at.line()).unwrap_or(0),
            column: usize::try_from(at.column()).unwrap_or(0),
        })
    }
}

impl<T: Serialize> Serialize for Located<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(serializer)
    }
}

impl<T: JsonSchema> JsonSchema for Located<T> {
    fn inline_schema() -> bool {
        T::inline_schema()
    }
    fn schema_name() -> std::borrow::Cow<'static, str> {
        T::schema_name()
    }
    fn schema_id() -> std::borrow::Cow<'static, str> {
        T::schema_id()
    }
    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        T::json_schema(generator)
    }
}

/// `spec:` with no value means the same as no `spec` at all.
fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// Reads a boolean or an integer only from a plain YAML scalar, the way the schema (and
/// Kubernetes) types it: `"true"`, `yes` and `"30"` are strings, and rejected.
fn plain_scalar<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct PlainScalar<T>(std::marker::PhantomData<T>);

    impl<'de, T: Deserialize<'de>> de::Visitor<'de> for PlainScalar<T> {
        type Value = Option<T>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an unquoted boolean or whole number")
        }
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
            T::deserialize(v.into_deserializer()).map(Some)
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
            T::deserialize(v.into_deserializer()).map(Some)
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
            T::deserialize(v.into_deserializer()).map(Some)
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
            T::deserialize(v.into_deserializer()).map(Some)
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            T::deserialize(de::value::StrDeserializer::<E>::new(v)).map(Some)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Self::Value, D2::Error> {
            d.deserialize_any(self)
        }
        // Containers are handed to `T` so that the error reads like serde's own, for
        // example "invalid type: sequence, expected a boolean".
        fn visit_seq<A: de::SeqAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
            let empty = std::iter::empty::<()>();
            T::deserialize(de::value::SeqDeserializer::<_, A::Error>::new(empty)).map(Some)
        }
        fn visit_map<A: de::MapAccess<'de>>(self, _: A) -> Result<Self::Value, A::Error> {
            let empty = std::iter::empty::<((), ())>();
            T::deserialize(de::value::MapDeserializer::<_, A::Error>::new(empty)).map(Some)
        }
    }

    deserializer.deserialize_any(PlainScalar(std::marker::PhantomData))
}

// The `mesh` key of the config and `--mesh`; each mesh's facts and planner are in
// `crate::mesh` (`MeshId::mesh`).
/// Which mesh.
#[derive(
    Clone,
    Copy,
    Debug,
    Default,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    serde::Deserialize,
    serde::Serialize,
    schemars::JsonSchema,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum MeshId {
    /// Istio (sidecar mode).
    #[default]
    Istio,
    /// Linkerd.
    Linkerd,
}
