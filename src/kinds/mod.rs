//! The kinds of objects whose pods meshjob fixes, as data: one row per kind, naming its API
//! group and versions, the paths of its pod templates, where it keeps `restartPolicy`, and
//! which fixes its pods may get. Every kind goes through the same pod view (`Pod`, a layer up),
//! as kube-linter sends every kind through one `extract.PodTemplateSpec`.
//!
//! The built-in rows are in [`builtin`], each with the sources of its facts; [`Kinds`] is
//! the table a run uses: the rows of the config's `kinds` key in front of the built-in ones.
//! What a kind needs beyond "a pod template at this path" is data on its row or pattern
//! ([`Shape`], [`When`], [`Layers`], [`Fallback`], [`Wrapper`]), read by
//! `locate` and `decide`, never a branch on a kind's name.

mod builtin;

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
    /// Pod metadata itself (`annotations`, `labels` as keys of the node): the controller
    /// writes the containers (a SparkApplication's `spec.driver`).
    Metadata,
    /// A mapping that holds the pod metadata under `key`, which meshjob creates (before the
    /// entry `before`, or at the end) when it is missing; the controller writes the
    /// containers (an Argo Workflow's `spec`, with `podMetadata`).
    MetadataIn {
        key: &'static str,
        before: &'static str,
    },
    /// An object of any kind of the table, embedded whole (a Katib Experiment's
    /// `trialSpec`): its own row says where its pods are.
    Object,
}

/// A condition on the object for a pattern to hold pods: the string at `path` (from the
/// object's root), or `default` when it is not written, is one of `values`. A RayJob has a
/// submitter pod only in `K8sJobMode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct When {
    pub path: &'static [&'static str],
    pub default: &'static str,
    pub values: &'static [&'static str],
}

/// Metadata laid over the pod metadata, key by key, for some of the pods made from it: an
/// Argo Workflow's `spec.podMetadata` is overridden by `templateDefaults.metadata`, then by
/// each template's own `metadata`. Each item of the list `each.list` is one such kind of
/// pod (a variant), when it has one of the keys `each.runs_pod`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layers {
    /// Paths, from the pattern's node, of metadata laid over the pod metadata for every
    /// variant, in order.
    pub common: &'static [&'static [&'static str]],
    /// The list of variants, from the pattern's node.
    pub each: Each,
}

/// The variants of a [`Layers`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Each {
    /// The key of the list whose items are the variants.
    pub list: &'static str,
    /// The key of an item's name, for messages.
    pub name: &'static str,
    /// The key of an item's own metadata, laid over the rest.
    pub metadata: &'static str,
    /// An item makes pods when it has one of these keys.
    pub runs_pod: &'static [&'static str],
}

/// What a pod gets where native sidecars cannot be had and the wrapper is not allowed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fallback {
    /// Argo Workflows' kill-command annotation: `<prefix><proxy container>` holds the
    /// command (the mesh's `argo_kill`) that the workflow controller runs in the proxy
    /// container once the main containers end.
    KillCommand { prefix: &'static str },
}

/// A path from an object to its pod templates, such as
/// `spec.replicatedJobs[*].template.spec.template` or `spec.tfReplicaSpecs.*.template`,
/// with what is found there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    text: String,
    steps: Vec<Step>,
    /// What the path leads to.
    pub shape: Shape,
    /// Having nothing at the path is normal (no "no pod template" finding).
    pub optional: bool,
    /// The path holds pods only when this holds.
    pub when: Option<When>,
    /// Metadata laid over the pod's, per variant.
    pub layers: Option<Layers>,
    /// What the pods get where native sidecars are impossible and the wrapper not allowed.
    pub fallback: Option<Fallback>,
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
        Ok(Pattern::new(text, steps, shape))
    }

    /// The pattern that is the object itself (a bare Pod is its own pod template).
    pub fn root(shape: Shape) -> Pattern {
        Pattern::new("", Vec::new(), shape)
    }

    fn new(text: &str, steps: Vec<Step>, shape: Shape) -> Pattern {
        Pattern {
            text: text.to_string(),
            steps,
            shape,
            optional: false,
            when: None,
            layers: None,
            fallback: None,
        }
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
        match self.text.as_str() {
            "" => f.write_str("pod spec"),
            t => f.write_str(t),
        }
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
    /// controller writes over the template's own (a Kubeflow replica spec), where
    /// `ExitCode` means `Never`.
    pub beside_template: bool,
    /// The policy when none is written.
    pub default: RestartPolicy,
}

/// Whether a kind's pods may get the entrypoint wrapper.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wrapper {
    /// The controller runs the containers' `command` as written.
    Allowed,
    /// Never; why, for findings ("Argo's `wait` container uploads ...").
    Never(&'static str),
    /// Only when the pod's first container writes its `command` (the controller writes it
    /// otherwise); why, for findings.
    WhenFirstCommand(&'static str),
}

/// The fixes a kind's pods may get.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fixes {
    pub wrapper: Wrapper,
    /// The mesh's native-sidecar annotation on the pod.
    pub native: bool,
}

impl Fixes {
    pub const ALL: Fixes = Fixes {
        wrapper: Wrapper::Allowed,
        native: true,
    };

    /// Native sidecars only; `why` the wrapper cannot be used.
    pub const fn native_only(why: &'static str) -> Fixes {
        Fixes {
            wrapper: Wrapper::Never(why),
            native: true,
        }
    }

    /// What both allow: an embedded object's kind within the kind that holds it, a
    /// built-in kind narrowed by the config.
    pub fn narrow(self, other: Fixes) -> Fixes {
        use Wrapper::{Allowed, Never, WhenFirstCommand};
        let wrapper = match (self.wrapper, other.wrapper) {
            (Never(w), _) | (_, Never(w)) => Never(w),
            (WhenFirstCommand(w), _) | (_, WhenFirstCommand(w)) => WhenFirstCommand(w),
            (Allowed, Allowed) => Allowed,
        };
        Fixes {
            wrapper,
            native: self.native && other.native,
        }
    }

    /// Whether no fix is allowed at all.
    pub fn is_none(self) -> bool {
        !self.native && matches!(self.wrapper, Wrapper::Never(_))
    }
}

/// Where a row comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowOrigin {
    Builtin,
    /// The config's `kinds` key, for a kind meshjob does not know.
    Config,
    /// The config's `kinds` key, narrowing the fixes of a built-in kind.
    ConfigNarrowing,
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
    pub origin: RowOrigin,
}

impl KindRow {
    /// A row for a kind the config adds: pod templates, with `restartPolicy` read as for a
    /// Job.
    pub fn from_config(
        group: &str,
        versions: Vec<String>,
        kind: &str,
        templates: Vec<Pattern>,
        fixes: Fixes,
    ) -> KindRow {
        KindRow {
            group: group.to_string(),
            versions,
            kind: kind.to_string(),
            templates,
            restart: builtin::JOB_RESTART,
            fixes,
            origin: RowOrigin::Config,
        }
    }

    /// `argoproj.io/v1alpha1`, or `argoproj.io/*` for every version.
    pub fn api_versions(&self) -> String {
        let api = |v: &str| match self.group.as_str() {
            "" => v.to_string(),
            g => format!("{g}/{v}"),
        };
        match self.versions.as_slice() {
            [] => api("*"),
            vs => vs.iter().map(|v| api(v)).collect::<Vec<_>>().join(", "),
        }
    }
}

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
    /// The kinds' names, without repeats: what the quick path looks up for every document,
    /// before it knows the group.
    names: Vec<Box<str>>,
    /// Bit [`slot`] of each name set: a kind whose bit is clear is none of them, which is
    /// the answer for most documents of a chart, found without comparing names.
    filter: [u64; 4],
}

/// A name's bit in [`Kinds::filter`], from its first byte and its length.
fn slot(kind: &str) -> usize {
    let first = kind.bytes().next().map_or(0, usize::from);
    (first * 31 + kind.len()) % 256
}

impl Default for Kinds {
    fn default() -> Self {
        Kinds::builtin().clone()
    }
}

impl Kinds {
    /// The built-in rows.
    pub fn builtin() -> &'static Kinds {
        static TABLE: std::sync::LazyLock<Kinds> =
            std::sync::LazyLock::new(|| Kinds::of(builtin::rows()));
        &TABLE
    }

    fn of(rows: Vec<KindRow>) -> Kinds {
        let mut names: Vec<Box<str>> = rows.iter().map(|r| r.kind.as_str().into()).collect();
        names.sort_unstable();
        names.dedup();
        let mut filter = [0u64; 4];
        for n in &names {
            let s = slot(n);
            filter[s / 64] |= 1 << (s % 64);
        }
        Kinds {
            rows,
            names,
            filter,
        }
    }

    /// The built-in row of a group and kind, if there is one.
    pub fn builtin_row(group: &str, kind: &str) -> Option<&'static KindRow> {
        (Kinds::builtin().rows.iter()).find(|r| r.group == group && r.kind == kind)
    }

    /// Puts the rows the config gives in front of the others, replacing those an earlier
    /// config gave.
    pub fn set_config_rows(&mut self, rows: Vec<KindRow>) {
        let mut all = rows;
        all.extend(
            self.rows
                .drain(..)
                .filter(|r| r.origin == RowOrigin::Builtin),
        );
        *self = Kinds::of(all);
    }

    #[cfg(test)]
    pub(crate) fn push_for_tests(&mut self, row: KindRow) {
        let mut all = vec![row];
        all.append(&mut self.rows);
        *self = Kinds::of(all);
    }

    pub fn rows(&self) -> &[KindRow] {
        &self.rows
    }

    /// The rows the config gave, in order.
    pub fn config_rows(&self) -> impl Iterator<Item = &KindRow> {
        self.rows.iter().filter(|r| r.origin != RowOrigin::Builtin)
    }

    /// Whether any row is for a kind of this name (what the quick path asks, before it
    /// knows the group).
    pub fn has_kind(&self, kind: &str) -> bool {
        let s = slot(kind);
        if self.filter[s / 64] & (1 << (s % 64)) == 0 {
            return false;
        }
        self.names.iter().any(|n| **n == *kind)
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
        assert_eq!(Pattern::root(Shape::Template).to_string(), "pod spec");
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
            Lookup::Row(r) if r.templates[0].as_str() == "spec.tasks[*].template"
        ));
        assert!(matches!(
            k.lookup("batch.volcano.sh/v1", "Job"),
            Lookup::UnknownVersion(_)
        ));
        assert!(matches!(k.lookup("v1", "Job"), Lookup::None));
        assert!(matches!(k.lookup("v1", "Pod"), Lookup::Row(_)));
        assert!(matches!(k.lookup("batch/", "Job"), Lookup::None));
        assert!(matches!(k.lookup("batch/v1", "JobSet"), Lookup::None));
        assert!(matches!(
            k.lookup("jobset.x-k8s.io/v1alpha2", "JobSet"),
            Lookup::Row(_)
        ));
        assert!(matches!(
            k.lookup("ray.io/v1alpha1", "RayJob"),
            Lookup::Row(_)
        ));
        assert!(matches!(k.lookup("tekton.dev/v1", "Task"), Lookup::None));
        assert_eq!(split_api_version("v1"), ("", "v1"));
        assert_eq!(split_api_version("a.b/v2"), ("a.b", "v2"));
    }

    #[test]
    fn every_kind_passes_the_filter() {
        let k = Kinds::builtin();
        for r in k.rows() {
            assert!(k.has_kind(&r.kind), "{}", r.kind);
        }
        for other in [
            "ConfigMap",
            "Deployment",
            "Service",
            "Secret",
            "Task",
            "",
            "J",
            "Jo",
        ] {
            assert!(!k.has_kind(other), "{other}");
        }
    }

    #[test]
    fn narrowing() {
        let argo = Fixes::native_only("x");
        assert_eq!(Fixes::ALL.narrow(argo), argo);
        let ray = Fixes {
            wrapper: Wrapper::WhenFirstCommand("y"),
            native: true,
        };
        assert_eq!(ray.narrow(Fixes::ALL), ray);
        assert_eq!(ray.narrow(argo), argo);
        let wrapper_only = Fixes {
            wrapper: Wrapper::Allowed,
            native: false,
        };
        assert!(wrapper_only.narrow(argo).is_none());
    }

    #[test]
    fn config_rows_go_in_front() {
        let mut k = Kinds::builtin().clone();
        let row = KindRow::from_config(
            "k6.io",
            vec!["v1alpha1".into()],
            "TestRun",
            vec![Pattern::parse("spec.runner", Shape::Template).unwrap()],
            Fixes::ALL,
        );
        k.set_config_rows(vec![row.clone()]);
        assert!(matches!(k.lookup("k6.io/v1alpha1", "TestRun"), Lookup::Row(r) if *r == row));
        assert!(k.has_kind("TestRun"));
        k.set_config_rows(Vec::new());
        assert_eq!(&k, Kinds::builtin());
        assert_eq!(row.api_versions(), "k6.io/v1alpha1");
    }
}
