//! Where a version came from: a flag, the config file, or a place in a manifest. Every
//! version that decides something carries one, so that findings and `meshjob versions` can
//! name it.

use std::fmt;
use std::sync::Arc;

/// A place in a manifest where a version was read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestPlace {
    /// The file, as the run names it; `None` for the text being processed itself (stdin, a
    /// ResourceList), where the line alone says where.
    pub file: Option<Arc<str>>,
    /// Byte offset in its text.
    pub offset: usize,
    /// 1-based line and column.
    pub line: usize,
    pub col: usize,
    /// The object it was read from: `Deployment/istiod`, or `Helm values` for a document
    /// without a kind.
    pub object: String,
    /// The field: `spec.tag`, `image of container discovery`.
    pub field: String,
    /// The value as written.
    pub text: String,
}

impl ManifestPlace {
    /// `install.yaml:4246` or `line 4246`.
    pub(crate) fn at(&self) -> String {
        match &self.file {
            Some(f) => format!("{f}:{}", self.line),
            None => format!("line {}", self.line),
        }
    }
}

impl fmt::Display for ManifestPlace {
    /// `install.yaml:4246 (Deployment/istiod image)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({} {})", self.at(), self.object, self.field)
    }
}

/// Where a version came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VersionOrigin {
    /// A command-line flag, such as `--istio-version`.
    Flag(&'static str),
    /// A key of the config file.
    Config {
        file: Arc<str>,
        line: usize,
        key: &'static str,
    },
    /// Read from a manifest.
    Read(Arc<ManifestPlace>),
}

impl VersionOrigin {
    /// The place it was read, for a version read from a manifest.
    pub(crate) fn place(&self) -> Option<&ManifestPlace> {
        match self {
            VersionOrigin::Read(p) => Some(p),
            _ => None,
        }
    }

    /// The JSON object that names it: `{"flag": "--istio-version"}`, `{"config": FILE,
    /// "line": N, "key": K}`, or `{"path": FILE, "line": N, "object": O, "field": F,
    /// "text": T}` (`path` absent for the processed text itself).
    pub(crate) fn json(&self) -> serde_json::Value {
        match self {
            VersionOrigin::Flag(flag) => serde_json::json!({ "flag": flag }),
            VersionOrigin::Config { file, line, key } => {
                serde_json::json!({ "config": &**file, "line": line, "key": key })
            }
            VersionOrigin::Read(p) => serde_json::json!({
                "path": p.file.as_deref(),
                "line": p.line,
                "column": p.col,
                "object": p.object,
                "field": p.field,
                "text": p.text,
            }),
        }
    }
}

impl fmt::Display for VersionOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VersionOrigin::Flag(flag) => f.write_str(flag),
            VersionOrigin::Config { file, line, key } => write!(f, "{key} in {file}:{line}"),
            VersionOrigin::Read(p) => p.fmt(f),
        }
    }
}

/// A value with where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Sourced<T> {
    pub value: T,
    pub origin: VersionOrigin,
}

impl<T> Sourced<T> {
    pub(crate) fn new(value: T, origin: VersionOrigin) -> Self {
        Sourced { value, origin }
    }
}

/// Where the versions of the settings came from (a flag or the config file), when given.
#[derive(Clone, Debug, Default)]
pub struct Given {
    /// The versions of the other holders' injectors, by their config key (`daprVersion`).
    pub holders: std::collections::BTreeMap<&'static str, VersionOrigin>,
    pub istio: Option<VersionOrigin>,
    pub kubernetes: Option<VersionOrigin>,
    pub linkerd: Option<VersionOrigin>,
}

/// Where a setting came from is not part of what it is: settings with the same values are
/// equal wherever they were written (a rendered config gives back the settings it renders).
impl PartialEq for Given {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for Given {}
