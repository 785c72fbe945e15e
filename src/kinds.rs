//! The kinds of objects whose pods meshjob fixes, as data: one row per kind, naming its API
//! group, the paths of its pod templates, where it keeps `restartPolicy`, and which fixes
//! its pods may get. Every kind goes through the same pod view (`crate::pod`), as
//! kube-linter sends every kind through one `extract.PodTemplateSpec`.
//!
//! The built-in rows are [`BUILTIN`]; [`Kinds`] is the table a run uses (the built-in rows,
//! and later the rows the config adds in front of them).

use std::fmt;

/// One step of a pod-template path pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// A mapping key.
    Key(String),
    /// `[*]`: every item of a list.
    EveryItem,
    /// `*`: every value of a mapping.
    EveryValue,
}

/// What the node at the end of a pattern holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// A pod template: `metadata` and `spec` (a `PodTemplateSpec`).
    Template,
    /// Pod metadata only (`annotations`, `labels`): the controller writes the containers.
    Metadata,
}

/// A path from an object to its pod templates, such as
/// `spec.replicatedJobs[*].template.spec.template` or `spec.tfReplicaSpecs.*.template`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    text: String,
    steps: Vec<Step>,
    /// What the path leads to.
    pub shape: Shape,
}

impl Pattern {
    /// Parses a pattern: keys separated by `.`, a key followed by `[*]` for every item of the
    /// list it holds, and `*` alone for every value of a mapping.
    pub fn parse(text: &str, shape: Shape) -> Result<Pattern, String> {
        let bad = |why: &str| {
            Err(format!(
                "invalid pod template path {text:?}: {why}; write keys separated by `.`, such \
                 as spec.template, with `[*]` after a key for every item of its list and `*` \
                 for every value of a mapping"
            ))
        };
        if text.is_empty() {
            return bad("it is empty");
        }
        let mut steps = Vec::new();
        for part in text.split('.') {
            let (name, every_item) = match part.strip_suffix("[*]") {
                Some(name) => (name, true),
                None => (part, false),
            };
            if name == "*" {
                if every_item {
                    return bad("`*[*]` is not a key");
                }
                steps.push(Step::EveryValue);
                continue;
            }
            if name.is_empty() {
                return bad("a key is empty");
            }
            if name.contains(['[', ']', '*']) {
                return bad(&format!("{name:?} is not a key"));
            }
            steps.push(Step::Key(name.to_string()));
            if every_item {
                steps.push(Step::EveryItem);
            }
        }
        Ok(Pattern {
            text: text.to_string(),
            steps,
            shape,
        })
    }

    pub fn steps(&self) -> &[Step] {
        &self.steps
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

/// A pod's `restartPolicy`, as Kubernetes reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RestartPolicy {
    Always,
    OnFailure,
    Never,
}

impl RestartPolicy {
    /// The policy a value names; `None` for a value Kubernetes refuses.
    pub fn parse(s: &str) -> Option<RestartPolicy> {
        match s {
            "Always" => Some(RestartPolicy::Always),
            "OnFailure" => Some(RestartPolicy::OnFailure),
            "Never" => Some(RestartPolicy::Never),
            _ => None,
        }
    }

    /// Whether a pod with this policy ends (a batch pod).
    pub fn is_batch(self) -> bool {
        self != RestartPolicy::Always
    }
}

/// Where a kind keeps its pods' `restartPolicy`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RestartAt {
    /// A `restartPolicy` key in the mapping that holds the template, beside it, which the
    /// controller writes over the template's own (a Kubeflow replica spec).
    pub beside_template: bool,
    /// The policy when none is written.
    pub default: RestartPolicy,
}

/// The fixes a kind's pods may get.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fixes {
    /// The entrypoint wrapper: the controller runs the containers' `command` as written.
    pub wrapper: bool,
    /// The mesh's native-sidecar annotation on the pod.
    pub native: bool,
}

impl Fixes {
    pub const ALL: Fixes = Fixes {
        wrapper: true,
        native: true,
    };
}

/// One kind: its group and versions, name, pod template paths, where `restartPolicy` is
/// read, and which fixes its pods may get.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KindRow {
    /// API group: `batch`, or `""` for the core group (`apiVersion: v1`).
    pub group: String,
    /// The versions of the group this row is for; empty: every version.
    pub versions: Vec<String>,
    pub kind: String,
    /// Where the pods are, from the object's root.
    pub templates: Vec<Pattern>,
    pub restart: RestartAt,
    pub fixes: Fixes,
}

/// A built-in row, written as constants.
struct Builtin {
    group: &'static str,
    versions: &'static [&'static str],
    kind: &'static str,
    templates: &'static [(&'static str, Shape)],
    restart: RestartAt,
    fixes: Fixes,
}

/// A Job's pods: the Job API takes only `Never` and `OnFailure`, and meshjob reads an unset
/// policy as `Never` (the pod is replaced, so the proxy must stop on failure too).
const JOB_RESTART: RestartAt = RestartAt {
    beside_template: false,
    default: RestartPolicy::Never,
};

/// The built-in kinds. Sources: the Kubernetes API reference for `batch/v1` Job
/// (`spec.template`) and CronJob (`spec.jobTemplate.spec.template`); `batch/v1beta1` and
/// `batch/v2alpha1` CronJobs have the same fields.
const BUILTIN: &[Builtin] = &[
    Builtin {
        group: "batch",
        versions: &[],
        kind: "Job",
        templates: &[("spec.template", Shape::Template)],
        restart: JOB_RESTART,
        fixes: Fixes::ALL,
    },
    Builtin {
        group: "batch",
        versions: &[],
        kind: "CronJob",
        templates: &[("spec.jobTemplate.spec.template", Shape::Template)],
        restart: JOB_RESTART,
        fixes: Fixes::ALL,
    },
];

/// What the table says about an object's `apiVersion` and `kind`.
#[derive(Clone, Copy, Debug)]
pub enum Lookup<'k> {
    /// A kind meshjob fixes.
    Row(&'k KindRow),
    /// A known kind and group, at a version the table does not list.
    UnknownVersion(&'k KindRow),
    /// Not a kind meshjob fixes.
    None,
}

/// The table of kinds a run uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kinds {
    rows: Vec<KindRow>,
}

impl Default for Kinds {
    fn default() -> Self {
        Kinds::builtin().clone()
    }
}

impl Kinds {
    /// The built-in rows.
    pub fn builtin() -> &'static Kinds {
        static TABLE: std::sync::LazyLock<Kinds> = std::sync::LazyLock::new(|| Kinds {
            rows: BUILTIN.iter().map(Builtin::row).collect(),
        });
        &TABLE
    }

    #[cfg(test)]
    pub(crate) fn push_for_tests(&mut self, row: KindRow) {
        self.rows.insert(0, row);
    }

    pub fn rows(&self) -> &[KindRow] {
        &self.rows
    }

    /// Whether any row is for a kind of this name (what the quick path asks, before it
    /// knows the group).
    pub fn has_kind(&self, kind: &str) -> bool {
        self.rows.iter().any(|r| r.kind == kind)
    }

    /// The row for an object's `apiVersion` and `kind`.
    pub fn lookup(&self, api_version: &str, kind: &str) -> Lookup<'_> {
        let (group, version) = split_api_version(api_version);
        if version.is_empty() {
            return Lookup::None;
        }
        let mut known_group = None;
        for row in self
            .rows
            .iter()
            .filter(|r| r.kind == kind && r.group == group)
        {
            if row.versions.is_empty() || row.versions.iter().any(|v| v == version) {
                return Lookup::Row(row);
            }
            known_group.get_or_insert(row);
        }
        known_group.map_or(Lookup::None, Lookup::UnknownVersion)
    }
}

impl Builtin {
    fn row(&self) -> KindRow {
        KindRow {
            group: self.group.to_string(),
            versions: self.versions.iter().map(|v| (*v).to_string()).collect(),
            kind: self.kind.to_string(),
            templates: (self.templates.iter())
                // The built-in patterns are checked by a test.
                .filter_map(|(p, shape)| Pattern::parse(p, *shape).ok())
                .collect(),
            restart: self.restart,
            fixes: self.fixes,
        }
    }
}

/// An `apiVersion`'s group and version: `batch/v1` is (`batch`, `v1`), `v1` is (``, `v1`).
pub(crate) fn split_api_version(api_version: &str) -> (&str, &str) {
    match api_version.rsplit_once('/') {
        Some((group, version)) => (group, version),
        None => ("", api_version),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_patterns_parse() {
        for b in BUILTIN {
            for (p, shape) in b.templates {
                assert!(Pattern::parse(p, *shape).is_ok(), "{p}");
            }
        }
        assert_eq!(Kinds::builtin().rows().len(), BUILTIN.len());
    }

    #[test]
    fn patterns() {
        let p = Pattern::parse("spec.replicatedJobs[*].template.*.x", Shape::Template).unwrap();
        assert_eq!(
            p.steps(),
            [
                Step::Key("spec".into()),
                Step::Key("replicatedJobs".into()),
                Step::EveryItem,
                Step::Key("template".into()),
                Step::EveryValue,
                Step::Key("x".into()),
            ]
        );
        for bad in ["", "a..b", "a.[*]", "a[0]", "*[*]", "a*"] {
            assert!(Pattern::parse(bad, Shape::Template).is_err(), "{bad}");
        }
    }

    #[test]
    fn lookups() {
        let k = Kinds::builtin();
        assert!(matches!(k.lookup("batch/v1", "Job"), Lookup::Row(_)));
        assert!(matches!(
            k.lookup("batch/v1beta1", "CronJob"),
            Lookup::Row(_)
        ));
        assert!(matches!(
            k.lookup("batch.volcano.sh/v1alpha1", "Job"),
            Lookup::None
        ));
        assert!(matches!(k.lookup("v1", "Job"), Lookup::None));
        assert!(matches!(k.lookup("batch/", "Job"), Lookup::None));
        assert!(matches!(k.lookup("batch/v1", "JobSet"), Lookup::None));
        assert_eq!(split_api_version("v1"), ("", "v1"));
        assert_eq!(split_api_version("a.b/v2"), ("a.b", "v2"));
    }
}
