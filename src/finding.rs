//! Findings: what the tool noticed, with where it noticed it.
//!
//! A finding carries a byte offset into its source text; line and column are computed only
//! when it is shown (see `output::report`).

/// The Kubernetes object a finding is about, for KRM `resourceRef` and readable messages.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ObjectRef {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub namespace: String,
}

/// Identity of a Kubernetes object mapping.
pub(crate) fn object_ref(obj: &crate::yaml::tree::Node) -> ObjectRef {
    let meta = obj.get("metadata");
    ObjectRef {
        api_version: obj.str("apiVersion").unwrap_or_default().to_string(),
        kind: obj.str("kind").unwrap_or_default().to_string(),
        name: meta
            .and_then(|m| m.str("name").or_else(|| m.str("generateName")))
            .unwrap_or_default()
            .to_string(),
        namespace: meta
            .and_then(|m| m.str("namespace"))
            .unwrap_or_default()
            .to_string(),
    }
}

/// Human name of an object: `Job/pi`.
pub(crate) fn describe(o: &ObjectRef) -> String {
    let mut s = String::with_capacity(o.kind.len() + o.name.len() + 1);
    write_describe(&mut s, o);
    s
}

/// [`describe`], appended to `s`.
pub(crate) fn write_describe(s: &mut String, o: &ObjectRef) {
    s.push_str(&o.kind);
    if !o.name.is_empty() {
        s.push('/');
        s.push_str(&o.name);
    }
}

pub use crate::rules::{Rule, Severity};

/// A version that decided a finding, and where it came from (the JSON report's
/// `versions`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct VersionUsed {
    /// `Istio`, `Linkerd`, `Kubernetes`, `native sidecars`.
    pub of: &'static str,
    /// `1.29`, `edge-25.10.2`, `1.29+` (a lower bound), `on`.
    pub version: String,
    pub origin: crate::version::VersionOrigin,
}

impl VersionUsed {
    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "of": self.of,
            "version": self.version,
            "source": self.origin.json(),
        })
    }
}

/// One finding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub severity: Severity,
    /// What it is about; see [`Rule`].
    pub rule: Rule,
    /// Byte offset into the input's text where the problem starts.
    pub offset: usize,
    /// How many bytes from `offset` the problem spans (0: a point). A length rather than an
    /// end, so that moving a finding (into the input's offsets, out of an embedded text)
    /// moves its span whole; see [`Finding::span`].
    pub len: usize,
    pub message: String,
    /// The object it concerns, when there is one.
    pub object: Option<ObjectRef>,
    /// The edits of this run repair it: `fix` leaves it behind, `check` still reports it.
    pub fixed: bool,
    /// The versions that decided it, with their sources (a strategy note).
    pub(crate) versions: Vec<VersionUsed>,
}

impl Finding {
    pub fn new(severity: Severity, rule: Rule, offset: usize, message: impl Into<String>) -> Self {
        debug_assert!(
            rule.allows(severity),
            "{rule} is not a {severity} in the rules table"
        );
        Finding {
            severity,
            rule,
            offset,
            len: 0,
            message: message.into(),
            object: None,
            fixed: false,
            versions: Vec::new(),
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

    /// The bytes of the input the finding is about: `offset` to its end.
    pub fn span(&self) -> std::ops::Range<usize> {
        self.offset..self.offset + self.len
    }

    /// The finding about the bytes `span` (of the same text as its offset).
    pub fn with_span(mut self, span: std::ops::Range<usize>) -> Self {
        self.offset = span.start;
        self.len = span.end.saturating_sub(span.start);
        self
    }

    /// The finding with its offsets counted from `by` bytes earlier: from the start of the
    /// input rather than of the piece of it where it was found.
    #[must_use]
    pub fn shifted(mut self, by: usize) -> Self {
        self.offset += by;
        self
    }

    pub fn with_object(mut self, object: Option<ObjectRef>) -> Self {
        self.object = object;
        self
    }

    pub fn fixed(mut self) -> Self {
        self.fixed = true;
        self
    }

    pub(crate) fn with_versions(mut self, versions: Vec<VersionUsed>) -> Self {
        self.versions = versions;
        self
    }
}
