//! Findings: what the tool noticed, with where it noticed it.
//!
//! A finding carries a byte offset into its source text; line and column are computed only
//! when it is shown (see `output::report`).

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

/// The Kubernetes object a finding is about, for KRM `resourceRef` and readable messages.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObjectRef {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub namespace: String,
}

/// What a finding is about: a stable code (`MJ110`) that users can grep, suppress and link
/// to, and the kind that code decides on (a refused pod, a note said once per run).
///
/// Codes are grouped by hundreds, with room in each group and for groups to come:
/// `MJ0xx` the run itself (input, output, internal errors); `MJ1xx` finding targets and
/// deciding what to do with them; `MJ2xx` the entrypoint wrapper strategy; `MJ3xx` native
/// sidecars and `MJ4xx` taking a fix out (none, native, ambient); `MJ5xx` the per-pod
/// proxy configuration; `MJ6xx` mesh-wide configuration; `MJ7xx` "would change" reports,
/// what the pod already does (hand-written fixes) and long-running sidecars. A code never
/// changes meaning; `docs/rules.md` has one
/// section per code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Rule {
    /// The input is not YAML meshjob can read.
    InvalidYaml,
    /// A file or directory cannot be read.
    Unreadable,
    /// A file is not UTF-8 text.
    NotText,
    /// An output file cannot be written.
    Unwritable,
    /// A file that does not parse and holds `{{`: a template, not YAML.
    Template,
    /// A file or directory given by name that an exclude pattern leaves out.
    Excluded,
    /// Helm chart `templates/` directories left out of a walk; said once per run.
    ChartTemplates,
    /// A directory given by name with no YAML file in it.
    NoYamlFiles,
    /// A config file that cannot be used; the files it governs are not processed.
    ConfigInvalid,
    /// An object was rewritten (KRM results).
    Rewritten,
    /// A document to edit has line breaks meshjob cannot edit around (a lone CR).
    LoneCarriageReturn,
    /// On stdin past its read-ahead, a `Namespace` document after a pod it would place.
    LateNamespace,
    /// meshjob's own output failed its checks; nothing was written.
    Internal,
    /// A Job or CronJob without a pod template.
    NoPodTemplate,
    /// A pod template that is not a mapping.
    TemplateNotMapping,
    /// A pod opted out of injection.
    OptedOut,
    /// A hostNetwork pod, which is never injected.
    HostNetwork,
    /// A pod whose proxy is (or will be) a native sidecar.
    NativeSidecar,
    /// An ambient pod: no sidecar.
    Ambient,
    /// A pod that two meshes would inject; left alone.
    MeshConflict,
    /// An anchor, alias or merge key on the way to an edit: the pod's edits are dropped.
    SharedNode,
    /// A container with a key written twice.
    DuplicateKey,
    /// Which strategy fixes a pod, and why.
    StrategyChosen,
    /// The target versions are not known; said once per run.
    VersionsUnknown,
    /// A pod spec without containers to wrap.
    NoContainers,
    /// A `command` that cannot be wrapped.
    CommandNotList,
    /// An `args` that cannot be moved.
    ArgsNotList,
    /// A container whose entrypoint is not written down.
    UnknownEntrypoint,
    /// A wrapper newer than this meshjob.
    NewerWrapper,
    /// A wrapper whose body meshjob did not write (edited by hand); left alone.
    EditedWrapper,
    /// The name or path of the wrappers' shared volume is taken by something else.
    PeersVolumeTaken,
    /// A pod that already has the proxy container.
    ProxyInjected,
    /// The injected proxy's `PROXY_CONFIG` env value cannot be edited; left alone.
    ProxyConfigEnvLeftAlone,
    /// The quit URL cannot be used for a pod.
    QuitUrl,
    /// `--strategy native` on a target known to be too old.
    NativeTooOld,
    /// `--strategy native` on a pod whose proxy is already injected.
    NativeInjected,
    /// The pod turns native sidecars off; kept.
    NativeTurnedOff,
    /// A wrapper meshjob wrote, taken out.
    WrapperRemoved,
    /// A setting meshjob writes, kept because it no longer holds meshjob's value.
    AddedValueKept,
    /// A setting meshjob wrote, taken out.
    SettingRemoved,
    /// Pod template metadata or annotations that are not a mapping.
    MetadataNotMapping,
    /// A proxy config annotation that does not hold a YAML or JSON mapping.
    AnnotationNotConfig,
    /// A ProxyConfig that is not a mapping.
    ProxyConfigNotMapping,
    /// A key that is not a ProxyConfig field.
    UnknownField,
    /// `holdApplicationUntilProxyReceivesConfig`, which Istio does not have.
    MisspelledHold,
    /// A ProxyConfig boolean that is not a boolean.
    NotBoolean,
    /// A ProxyConfig duration that is not a valid Go duration.
    InvalidDuration,
    /// A `proxyMetadata` that is not a mapping of strings.
    MetadataNotStrings,
    /// A user value that contradicts meshjob's, kept.
    KeptUserValue,
    /// A Linkerd `config.linkerd.io/proxy-admin-shutdown` value Linkerd does not read.
    ShutdownAnnotationValue,
    /// Another mesh's per-pod annotation on a pod.
    ForeignAnnotation,
    /// Something that looks like mesh configuration, left alone.
    MeshConfigLeftAlone,
    /// Mesh configuration that cannot be edited as written.
    MeshConfigNotMapping,
    /// Mesh configuration text that is not valid YAML.
    MeshConfigInvalid,
    /// How the mesh-wide drain settings interact; said once per run.
    DrainInteraction,
    /// A pod template that `fix` would change.
    WouldChange,
    /// A container whose own command already stops the proxy.
    AlreadyStops,
    /// A call to the quit endpoint that is not a POST.
    QuitNotPost,
    /// A kill of the proxy from a container that cannot see its processes.
    KillNeedsSharedPid,
    /// scuttle without the setting that makes it stop the proxy.
    ScuttleWithoutEnv,
    /// A long-running sidecar among the containers.
    LongRunningSidecar,
    /// A Linkerd Helm value that must be a boolean and is not.
    ValuesNotBoolean,
    /// A misspelled key of the Linkerd Helm values.
    ValuesMisspelled,
}

impl Rule {
    /// Every rule, in code order.
    pub const ALL: [Rule; 63] = [
        Rule::InvalidYaml,
        Rule::Unreadable,
        Rule::NotText,
        Rule::Unwritable,
        Rule::Template,
        Rule::Excluded,
        Rule::ChartTemplates,
        Rule::NoYamlFiles,
        Rule::ConfigInvalid,
        Rule::Rewritten,
        Rule::LoneCarriageReturn,
        Rule::LateNamespace,
        Rule::Internal,
        Rule::NoPodTemplate,
        Rule::TemplateNotMapping,
        Rule::OptedOut,
        Rule::HostNetwork,
        Rule::NativeSidecar,
        Rule::Ambient,
        Rule::SharedNode,
        Rule::DuplicateKey,
        Rule::StrategyChosen,
        Rule::VersionsUnknown,
        Rule::MeshConflict,
        Rule::NoContainers,
        Rule::CommandNotList,
        Rule::ArgsNotList,
        Rule::UnknownEntrypoint,
        Rule::NewerWrapper,
        Rule::ProxyInjected,
        Rule::QuitUrl,
        Rule::EditedWrapper,
        Rule::PeersVolumeTaken,
        Rule::ProxyConfigEnvLeftAlone,
        Rule::NativeTooOld,
        Rule::NativeInjected,
        Rule::NativeTurnedOff,
        Rule::WrapperRemoved,
        Rule::AddedValueKept,
        Rule::SettingRemoved,
        Rule::MetadataNotMapping,
        Rule::AnnotationNotConfig,
        Rule::ProxyConfigNotMapping,
        Rule::UnknownField,
        Rule::MisspelledHold,
        Rule::NotBoolean,
        Rule::InvalidDuration,
        Rule::MetadataNotStrings,
        Rule::KeptUserValue,
        Rule::ShutdownAnnotationValue,
        Rule::ForeignAnnotation,
        Rule::MeshConfigLeftAlone,
        Rule::MeshConfigNotMapping,
        Rule::MeshConfigInvalid,
        Rule::DrainInteraction,
        Rule::ValuesNotBoolean,
        Rule::ValuesMisspelled,
        Rule::WouldChange,
        Rule::AlreadyStops,
        Rule::QuitNotPost,
        Rule::KillNeedsSharedPid,
        Rule::ScuttleWithoutEnv,
        Rule::LongRunningSidecar,
    ];

    /// The stable code, such as `MJ110`.
    pub fn code(self) -> &'static str {
        match self {
            Rule::InvalidYaml => "MJ001",
            Rule::Unreadable => "MJ002",
            Rule::NotText => "MJ003",
            Rule::Unwritable => "MJ004",
            Rule::Template => "MJ005",
            Rule::Excluded => "MJ006",
            Rule::ChartTemplates => "MJ007",
            Rule::NoYamlFiles => "MJ008",
            Rule::ConfigInvalid => "MJ009",
            Rule::Rewritten => "MJ010",
            Rule::LoneCarriageReturn => "MJ011",
            Rule::LateNamespace => "MJ012",
            Rule::Internal => "MJ090",
            Rule::NoPodTemplate => "MJ101",
            Rule::TemplateNotMapping => "MJ102",
            Rule::OptedOut => "MJ103",
            Rule::HostNetwork => "MJ104",
            Rule::NativeSidecar => "MJ105",
            Rule::Ambient => "MJ106",
            Rule::SharedNode => "MJ110",
            Rule::DuplicateKey => "MJ111",
            Rule::StrategyChosen => "MJ120",
            Rule::VersionsUnknown => "MJ121",
            Rule::MeshConflict => "MJ130",
            Rule::NoContainers => "MJ201",
            Rule::CommandNotList => "MJ202",
            Rule::ArgsNotList => "MJ203",
            Rule::UnknownEntrypoint => "MJ204",
            Rule::NewerWrapper => "MJ205",
            Rule::ProxyInjected => "MJ206",
            Rule::QuitUrl => "MJ207",
            Rule::EditedWrapper => "MJ208",
            Rule::PeersVolumeTaken => "MJ209",
            Rule::ProxyConfigEnvLeftAlone => "MJ210",
            Rule::NativeTooOld => "MJ301",
            Rule::NativeInjected => "MJ302",
            Rule::NativeTurnedOff => "MJ303",
            Rule::WrapperRemoved => "MJ401",
            Rule::AddedValueKept => "MJ402",
            Rule::SettingRemoved => "MJ403",
            Rule::MetadataNotMapping => "MJ501",
            Rule::AnnotationNotConfig => "MJ502",
            Rule::ProxyConfigNotMapping => "MJ509",
            Rule::UnknownField => "MJ510",
            Rule::MisspelledHold => "MJ511",
            Rule::NotBoolean => "MJ512",
            Rule::InvalidDuration => "MJ513",
            Rule::MetadataNotStrings => "MJ514",
            Rule::KeptUserValue => "MJ520",
            Rule::ShutdownAnnotationValue => "MJ530",
            Rule::ForeignAnnotation => "MJ531",
            Rule::MeshConfigLeftAlone => "MJ601",
            Rule::MeshConfigNotMapping => "MJ602",
            Rule::MeshConfigInvalid => "MJ603",
            Rule::DrainInteraction => "MJ604",
            Rule::WouldChange => "MJ701",
            Rule::AlreadyStops => "MJ711",
            Rule::QuitNotPost => "MJ712",
            Rule::KillNeedsSharedPid => "MJ713",
            Rule::ScuttleWithoutEnv => "MJ714",
            Rule::LongRunningSidecar => "MJ720",
            Rule::ValuesNotBoolean => "MJ610",
            Rule::ValuesMisspelled => "MJ611",
        }
    }

    /// Whether an error of this rule drops every edit planned for its pod, so that a pod is
    /// never left half-edited.
    pub fn refuses_pod(self) -> bool {
        matches!(
            self,
            Rule::SharedNode | Rule::PeersVolumeTaken | Rule::NativeTooOld | Rule::NativeInjected
        )
    }

    /// Whether the finding is a note said once per run rather than once per place.
    pub fn once_per_run(self) -> bool {
        matches!(self, Rule::DrainInteraction | Rule::VersionsUnknown)
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.code())
    }
}

/// One finding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub severity: Severity,
    /// What it is about; see [`Rule`].
    pub rule: Rule,
    /// Byte offset into the file's text where the problem is.
    pub offset: usize,
    pub message: String,
    /// The object it concerns, when there is one.
    pub object: Option<ObjectRef>,
    /// A field path such as `spec.template.spec.containers[0].command`, when there is one.
    pub field: Option<String>,
    /// The edits of this run repair it: `fix` leaves it behind, `check` still reports it.
    pub fixed: bool,
}

impl Finding {
    pub fn new(severity: Severity, rule: Rule, offset: usize, message: impl Into<String>) -> Self {
        Finding {
            severity,
            rule,
            offset,
            message: message.into(),
            object: None,
            field: None,
            fixed: false,
        }
    }

    pub fn error(rule: Rule, offset: usize, message: impl Into<String>) -> Self {
        Self::new(Severity::Error, rule, offset, message)
    }

    pub fn warning(rule: Rule, offset: usize, message: impl Into<String>) -> Self {
        Self::new(Severity::Warning, rule, offset, message)
    }

    pub fn info(rule: Rule, offset: usize, message: impl Into<String>) -> Self {
        Self::new(Severity::Info, rule, offset, message)
    }

    pub fn with_object(mut self, object: Option<ObjectRef>) -> Self {
        self.object = object;
        self
    }

    pub fn fixed(mut self) -> Self {
        self.fixed = true;
        self
    }

    pub fn with_field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }
}

pub use crate::yaml::text::line_col;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_ordered_and_documented() {
        let docs = include_str!("../docs/rules.md");
        let codes: Vec<&str> = Rule::ALL.iter().map(|r| r.code()).collect();
        assert!(codes.windows(2).all(|w| w[0] < w[1]), "{codes:?}");
        for code in codes {
            assert!(
                docs.contains(&format!("\n## {code} ")),
                "docs/rules.md has no section for {code}"
            );
        }
    }
}
