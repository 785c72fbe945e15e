//! The rules table: every finding's code, severity, title and effect, written once.
//! `docs/rules.md` has one section per code whose heading is the code and title, and an
//! index generated from this table (a test checks both).
//!
//! Codes are grouped by hundreds, with room in each group and for groups to come:
//! `MJ0xx` the run itself (input, output, internal errors); `MJ1xx` finding targets and
//! deciding what to do with them; `MJ2xx` the entrypoint wrapper strategy; `MJ3xx` native
//! sidecars and `MJ4xx` taking a fix out (none, native, ambient); `MJ5xx` the per-pod
//! proxy configuration; `MJ6xx` mesh-wide configuration; `MJ7xx` "would change" reports,
//! what the pod already does (hand-written fixes) and long-running sidecars; `MJ8xx` the
//! holders other than the mesh proxy (Vault Agent, Dapr, Consul). A code never changes
//! meaning.

use std::fmt;

/// How serious a finding is. `Error` makes `check` and `fix` exit 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a rule acts besides its finding.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Effect {
    /// An error of this rule drops every edit planned for its pod, so that a pod is never
    /// left half-edited.
    pub refuses_pod: bool,
    /// A note said once per run rather than once per place.
    pub once_per_run: bool,
}

/// One row of the table.
#[derive(Clone, Copy, Debug)]
pub struct RuleInfo {
    pub rule: Rule,
    pub code: &'static str,
    /// The severities its findings take; the first is the most serious.
    pub severities: &'static [Severity],
    /// The heading of its section in `docs/rules.md`, after the code.
    pub title: &'static str,
    /// What it is about, in one sentence.
    pub summary: &'static str,
    pub effect: Effect,
}

macro_rules! rules {
    ($( $(#[doc = $doc:literal])+ $name:ident = $code:literal, [$($sev:ident)|+]
        $($flag:ident)*, $title:literal; )+) => {
        /// What a finding is about: a stable code (`MJ110`) that users can grep, suppress and
        /// link to. See the module's table.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Rule {
            $( $(#[doc = $doc])+ $name, )+
        }

        /// Every rule, in code order.
        pub const TABLE: &[RuleInfo] = &[
            $( RuleInfo {
                rule: Rule::$name,
                code: $code,
                severities: &[$(Severity::$sev),+],
                title: $title,
                summary: concat!($($doc),+),
                effect: Effect { $($flag: true,)* ..Effect::NONE },
            }, )+
        ];
    };
}

impl Effect {
    const NONE: Effect = Effect {
        refuses_pod: false,
        once_per_run: false,
    };
}

rules! {
    /// The input is not YAML meshjob can read.
    InvalidYaml = "MJ001", [Error], "invalid YAML";
    /// A file or directory cannot be read.
    Unreadable = "MJ002", [Error], "cannot read";
    /// A file is not UTF-8 text.
    NotText = "MJ003", [Error], "not text";
    /// An output file cannot be written.
    Unwritable = "MJ004", [Error], "cannot write";
    /// A file that does not parse and holds `{{`: a template, not YAML.
    Template = "MJ005", [Error], "template, not YAML";
    /// A file or directory given by name that an exclude pattern leaves out.
    Excluded = "MJ006", [Info], "excluded";
    /// Helm chart `templates/` directories left out of a walk; said once per run.
    ChartTemplates = "MJ007", [Info], "chart templates skipped";
    /// A directory given by name with no YAML file in it.
    NoYamlFiles = "MJ008", [Warning], "no YAML files";
    /// A config file that cannot be used; the files it governs are not processed.
    ConfigInvalid = "MJ009", [Error], "config file invalid";
    /// An object was rewritten (KRM results).
    Rewritten = "MJ010", [Info], "rewritten";
    /// A document to edit has line breaks meshjob cannot edit around (a lone CR).
    LoneCarriageReturn = "MJ011", [Error], "lone CR line break";
    /// On stdin past its read-ahead, a `Namespace` document after a pod it would place.
    LateNamespace = "MJ012", [Error], "Namespace after its pods on stdin";
    /// A document to edit has a byte order mark past its start.
    InnerByteOrderMark = "MJ013", [Error], "byte order mark inside a document";
    /// meshjob's own output failed its checks; nothing was written.
    Internal = "MJ090", [Error], "internal error";
    /// An object of a kind meshjob fixes without the pod template its kind has.
    NoPodTemplate = "MJ101", [Warning], "no pod template";
    /// A pod template that is not a mapping.
    TemplateNotMapping = "MJ102", [Warning], "pod template is not a mapping";
    /// A pod opted out of injection.
    OptedOut = "MJ103", [Info], "opted out";
    /// A hostNetwork pod, which is never injected.
    HostNetwork = "MJ104", [Info], "host network";
    /// A pod whose proxy is (or will be) a native sidecar.
    NativeSidecar = "MJ105", [Info], "native sidecar";
    /// An ambient pod: no sidecar.
    Ambient = "MJ106", [Info], "ambient";
    /// A pod left out of meshjob by its `meshjob.dev/ignore` annotation.
    Ignored = "MJ107", [Info], "ignored by annotation";
    /// A mesh injection value that the target release does not read as the pod means it.
    InjectValueNotRead = "MJ108", [Warning], "injection value not read";
    /// A pod in a namespace the mesh's injector never injects.
    NamespaceNeverInjected = "MJ109", [Info], "namespace never injected";
    /// An anchor, alias or merge key on the way to an edit: the pod's edits are dropped.
    SharedNode = "MJ110", [Error] refuses_pod, "shared node refused";
    /// A container with a key written twice.
    DuplicateKey = "MJ111", [Error], "key written twice";
    /// Which strategy fixes a pod, and why.
    StrategyChosen = "MJ120", [Info], "strategy chosen";
    /// The target versions are not known; said once per run.
    VersionsUnknown = "MJ121", [Info] once_per_run, "target versions unknown";
    /// Two manifests disagree on a version; the oldest decides.
    VersionsDisagree = "MJ122", [Warning], "versions disagree";
    /// A mesh's proxy is not the version of its injector.
    ProxyDrift = "MJ123", [Warning], "proxy and injector versions differ";
    /// On stdin, a version read after pods it would have decided.
    VersionsReadLate = "MJ124", [Warning], "version read after its pods";
    /// A pod that two meshes would inject; left alone.
    MeshConflict = "MJ130", [Error], "two meshes";
    /// A fix its kind does not allow, asked with `--strategy`: the pod is left as it is.
    FixNotAllowed = "MJ140", [Error] refuses_pod, "fix not allowed for this kind";
    /// A pod that only native sidecars can fix, with versions not known: nothing written.
    NativeOnlyUnknown = "MJ141", [Warning], "native only, versions unknown";
    /// A pod that only native sidecars can fix, which it cannot have: nothing written.
    NoFixPossible = "MJ142", [Warning], "no fix possible";
    /// Argo's kill-command annotation, written where native sidecars are impossible.
    KillCommand = "MJ143", [Warning], "Argo kill command";
    /// An object of a known kind at an apiVersion meshjob does not know: left alone.
    UnknownVersion = "MJ144", [Info], "unknown version of a known kind";
    /// A `meshjob.dev/strategy` annotation that names no strategy: the pod is left as it is.
    PinInvalid = "MJ145", [Error] refuses_pod, "strategy annotation invalid";
    /// A pod spec without containers to wrap.
    NoContainers = "MJ201", [Error], "no containers";
    /// A `command` that cannot be wrapped.
    CommandNotList = "MJ202", [Error], "command cannot be wrapped";
    /// An `args` that cannot be moved.
    ArgsNotList = "MJ203", [Error], "args cannot be moved";
    /// A container whose entrypoint is not written down.
    UnknownEntrypoint = "MJ204", [Error], "entrypoint unknown";
    /// A wrapper newer than this meshjob.
    NewerWrapper = "MJ205", [Warning], "newer wrapper";
    /// A pod that already has the proxy container.
    ProxyInjected = "MJ206", [Info], "proxy already injected";
    /// The quit URL cannot be used for a pod.
    QuitUrl = "MJ207", [Error], "quit URL unusable";
    /// A wrapper whose body meshjob did not write (edited by hand); left alone.
    EditedWrapper = "MJ208", [Warning], "wrapper edited by hand";
    /// The name or path of the wrappers' shared volume is taken by something else.
    PeersVolumeTaken = "MJ209", [Error] refuses_pod, "shared volume name or path taken";
    /// The injected proxy's `PROXY_CONFIG` env value cannot be edited; left alone.
    ProxyConfigEnvLeftAlone = "MJ210", [Warning], "injected PROXY_CONFIG left alone";
    /// A wrapped container that Kubernetes restarts in place (container restart rules).
    RestartsInPlace = "MJ211", [Warning], "wrapped container restarts in place";
    /// `--strategy native` on a target known to be too old.
    NativeTooOld = "MJ301", [Error] refuses_pod, "native sidecars too old";
    /// `--strategy native` on a pod whose proxy is already injected.
    NativeInjected = "MJ302", [Error] refuses_pod, "native on an injected pod";
    /// The pod turns native sidecars off; kept.
    NativeTurnedOff = "MJ303", [Warning], "native sidecars turned off";
    /// An annotation that looks like the native-sidecar one, which no mesh version reads.
    NativeLookalike = "MJ304", [Warning], "native-sidecar annotation misspelled";
    /// A native-sidecar annotation the target mesh version does not read.
    NativeKeyNotRead = "MJ305", [Warning], "native-sidecar annotation not read by this version";
    /// A Job `podFailurePolicy` exit-code rule without `containerName` that a native
    /// sidecar's exit code matches.
    ExitCodesWithoutContainer = "MJ306", [Warning], "exit-code rule matches the sidecar";
    /// A wrapper meshjob wrote, taken out.
    WrapperRemoved = "MJ401", [Info], "wrapper taken out";
    /// A setting meshjob writes, kept because it no longer holds meshjob's value.
    AddedValueKept = "MJ402", [Info], "value kept";
    /// A setting meshjob wrote, taken out.
    SettingRemoved = "MJ403", [Info], "setting taken out";
    /// Pod template metadata or annotations that are not a mapping.
    MetadataNotMapping = "MJ501", [Error], "metadata is not a mapping";
    /// A proxy config annotation that does not hold a YAML or JSON mapping.
    AnnotationNotConfig = "MJ502", [Error], "proxy config annotation unusable";
    /// A ProxyConfig that is not a mapping.
    ProxyConfigNotMapping = "MJ509", [Error], "ProxyConfig is not a mapping";
    /// A key that is not a ProxyConfig field.
    UnknownField = "MJ510", [Warning], "unknown ProxyConfig field";
    /// `holdApplicationUntilProxyReceivesConfig`, which Istio does not have.
    MisspelledHold = "MJ511", [Warning], "misspelled holdApplicationUntilProxyStarts";
    /// A ProxyConfig boolean that is not a boolean.
    NotBoolean = "MJ512", [Error], "not a boolean";
    /// A ProxyConfig duration that is not a valid Go duration.
    InvalidDuration = "MJ513", [Error], "invalid duration";
    /// A `proxyMetadata` that is not a mapping of strings.
    MetadataNotStrings = "MJ514", [Error], "proxyMetadata is not a mapping of strings";
    /// A user value that contradicts meshjob's, kept.
    KeptUserValue = "MJ520", [Warning], "your value kept";
    /// A Linkerd `config.linkerd.io/proxy-admin-shutdown` value Linkerd does not read.
    ShutdownAnnotationValue = "MJ530", [Error], "Linkerd shutdown annotation value";
    /// Another mesh's per-pod annotation on a pod.
    ForeignAnnotation = "MJ531", [Warning], "another mesh's annotation";
    /// A proxy resource annotation that is not a Kubernetes quantity.
    InvalidProxyResource = "MJ540", [Error], "proxy resource annotation invalid";
    /// Something that looks like mesh configuration, left alone.
    MeshConfigLeftAlone = "MJ601", [Info], "mesh config left alone";
    /// Mesh configuration that cannot be edited as written.
    MeshConfigNotMapping = "MJ602", [Error], "mesh config cannot be edited";
    /// Mesh configuration text that is not valid YAML.
    MeshConfigInvalid = "MJ603", [Error], "mesh config text is invalid";
    /// How the mesh-wide drain settings interact; said once per run.
    DrainInteraction = "MJ604", [Info] once_per_run, "drain settings interact";
    /// An Istio `compatibilityVersion` the target istiod's chart has no profile for.
    CompatibilityVersionUnknown = "MJ605", [Warning], "compatibility version not shipped";
    /// A Linkerd Helm value that must be a boolean and is not.
    ValuesNotBoolean = "MJ610", [Error], "Linkerd value is not a boolean";
    /// A misspelled key of the Linkerd Helm values.
    ValuesMisspelled = "MJ611", [Warning], "misspelled Linkerd value";
    /// A pod template that `fix` would change.
    WouldChange = "MJ701", [Error | Warning], "pod would change";
    /// A container whose own command already stops the proxy.
    AlreadyStops = "MJ711", [Warning | Info], "already stops the proxy";
    /// A call to the quit endpoint that is not a POST.
    QuitNotPost = "MJ712", [Warning], "quit without POST";
    /// A kill of the proxy from a container that cannot see its processes.
    KillNeedsSharedPid = "MJ713", [Warning], "kill needs a shared process namespace";
    /// scuttle without the setting that makes it stop the proxy.
    ScuttleWithoutEnv = "MJ714", [Warning], "scuttle without ENVOY_ADMIN_API";
    /// A long-running sidecar among the containers.
    LongRunningSidecar = "MJ720", [Warning], "long-running sidecar";
    /// A long-running sidecar of the user's moved to `initContainers` as a native sidecar, or
    /// moved back.
    SidecarMoved = "MJ721", [Info], "sidecar moved";
    /// A long-running sidecar that meshjob does not move, because the move could change what
    /// the pod does or its text cannot be moved exactly.
    SidecarNotMoved = "MJ722", [Warning], "sidecar not moved";
    /// An injected agent other than the mesh proxy (Vault Agent, Dapr, Consul) that the
    /// wrapper stops, with the versions its quit endpoint needs.
    HolderFixed = "MJ801", [Info], "holder stopped by the wrapper";
    /// `--strategy native` for a holder that no release runs as a native sidecar (Vault
    /// Agent): it gets the wrapper instead.
    HolderNoNative = "MJ802", [Warning], "holder has no native sidecar";
    /// A holder that the task cannot ask to quit (Dapr with an API token): the wrapper does
    /// not call it.
    HolderBlocked = "MJ803", [Warning], "holder cannot be stopped by the wrapper";
    /// A pod that another mesh injects (Consul connect-inject): the run's mesh gets no fix
    /// there.
    HolderOwnsPod = "MJ804", [Info], "pod of another mesh";
    /// An annotation a holder's fix needs, which the pod sets to another value; kept.
    HolderAnnotationKept = "MJ805", [Warning], "holder annotation kept";
    /// A sidecar injector that meshjob recognises and leaves alone (Kuma, AWS App Mesh, the
    /// OpenTelemetry collector, Azure Workload Identity's proxy, Cloud Storage FUSE), and why.
    HolderRecognised = "MJ806", [Warning | Info], "recognised, left alone";
}

impl Rule {
    /// Its row of the table.
    pub fn info(self) -> &'static RuleInfo {
        // The table is in enum order (a test checks it).
        &TABLE[self as usize]
    }

    /// The stable code, such as `MJ110`.
    pub fn code(self) -> &'static str {
        self.info().code
    }

    /// Whether an error of this rule drops every edit planned for its pod.
    pub fn refuses_pod(self) -> bool {
        self.info().effect.refuses_pod
    }

    /// Whether the finding is a note said once per run rather than once per place.
    pub fn once_per_run(self) -> bool {
        self.info().effect.once_per_run
    }

    /// Whether a finding of this rule may have `severity`.
    pub fn allows(self, severity: Severity) -> bool {
        self.info().severities.contains(&severity)
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// The anchor of a rule's section in `docs/rules.md` (`mj110-shared-node-refused`).
pub(crate) fn anchor(r: &RuleInfo) -> String {
    format!("{}-{}", r.code, r.title)
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            'a'..='z' | '0'..='9' | '-' | '_' => Some(c),
            ' ' => Some('-'),
            _ => None,
        })
        .collect()
}

/// The index of `docs/rules.md`: a table of every rule, generated from [`TABLE`].
pub fn docs_index() -> String {
    let mut s = String::from(
        "| code | title | what it is about | severity | refuses the pod | once per run |\n|---|---|---|---|---|---|\n",
    );
    for r in TABLE {
        let anchor = anchor(r);
        let sev: Vec<&str> = r.severities.iter().map(|s| s.as_str()).collect();
        let yes = |b: bool| if b { "yes" } else { "" };
        s.push_str(&format!(
            "| [{}](#{anchor}) | {} | {} | {} | {} | {} |\n",
            r.code,
            r.title,
            r.summary.trim().replace('|', "\\|"),
            sev.join(", "),
            yes(r.effect.refuses_pod),
            yes(r.effect.once_per_run)
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_in_enum_and_code_order() {
        for (i, r) in TABLE.iter().enumerate() {
            assert_eq!(r.rule as usize, i, "{}", r.code);
        }
        assert!(TABLE.windows(2).all(|w| w[0].code < w[1].code));
    }
}
