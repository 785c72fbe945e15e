//! Finds what to change: the pod templates of Jobs and CronJobs.
//!
//! A target is the pod template of a `batch/*` Job or CronJob, at the top level of a
//! document or among the `items` of a `kind: List` (or a KRM `ResourceList`). Look-alikes
//! (other API groups, CRDs, Jobs embedded in strings or nested in other kinds) are never
//! targets. Whether and how each pod is fixed is decided later (`decide`).

use crate::finding::{Finding, ObjectRef, Rule};
use crate::yaml::path::{Path, Seg, key};
use crate::yaml::tree::{Kind, Node};
use std::fmt;

/// A pod template to rewrite.
#[derive(Debug)]
pub struct PodTarget<'d> {
    pub object: ObjectRef,
    /// The object's mapping node (for findings).
    pub object_node: &'d Node,
    /// The pod template mapping (`metadata` + `spec`).
    pub template: &'d Node,
    /// Path from the document root to the template.
    pub path: Path,
}

/// What locating found in one document.
#[derive(Debug, Default)]
pub struct Found<'d> {
    pub pods: Vec<PodTarget<'d>>,
    pub findings: Vec<Finding>,
}

/// The string value of `key` in a mapping (plain or quoted scalars only).
pub fn str_of<'n>(map: &'n Node, k: &str) -> Option<&'n str> {
    match &map.get(k)?.kind {
        Kind::Scalar { value, .. } => Some(value),
        _ => None,
    }
}

/// Identity of a Kubernetes object mapping.
pub fn object_ref(obj: &Node) -> ObjectRef {
    let meta = obj.get("metadata");
    ObjectRef {
        api_version: str_of(obj, "apiVersion").unwrap_or_default().to_string(),
        kind: str_of(obj, "kind").unwrap_or_default().to_string(),
        name: meta
            .and_then(|m| str_of(m, "name").or_else(|| str_of(m, "generateName")))
            .unwrap_or_default()
            .to_string(),
        namespace: meta
            .and_then(|m| str_of(m, "namespace"))
            .unwrap_or_default()
            .to_string(),
    }
}

/// Human name of an object: `Job/pi`.
pub fn describe(o: &ObjectRef) -> String {
    if o.name.is_empty() {
        o.kind.clone()
    } else {
        format!("{}/{}", o.kind, o.name)
    }
}

/// What meshjob does with a kind of object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A `batch` workload whose pod template (at these keys) is fixed.
    Pods(&'static [&'static str]),
    /// A list whose `items` are objects in their own right (`List` in `v1`, `ResourceList`
    /// in `config.kubernetes.io/*`).
    List,
    /// Holds a mesh's mesh-wide configuration (see `mesh::Mesh::config_kinds`).
    MeshConfig,
}

/// The one table of the kinds meshjob reads, besides each mesh's config kinds: the quick
/// path passes every other kind through unparsed.
pub const KINDS: &[(&str, Role)] = &[
    ("Job", Role::Pods(&["spec", "template"])),
    (
        "CronJob",
        Role::Pods(&["spec", "jobTemplate", "spec", "template"]),
    ),
    ("List", Role::List),
    ("ResourceList", Role::List),
];

/// The role of `kind`, from [`KINDS`] and then every mesh's config kinds.
pub fn role(kind: &str) -> Option<Role> {
    KINDS
        .iter()
        .find(|(k, _)| *k == kind)
        .map(|(_, r)| *r)
        .or_else(|| {
            crate::mesh::ALL
                .iter()
                .any(|m| m.config_kinds.iter().any(|c| c.kind == kind))
                .then_some(Role::MeshConfig)
        })
}

/// Whether a document of this kind (and, for a ConfigMap, name) may be one meshjob edits or
/// reports on: what the quick path must not skip. Groups are not checked here.
pub fn may_matter(kind: &str, name: Option<&str>) -> bool {
    match role(kind) {
        Some(Role::MeshConfig) if kind == "ConfigMap" => {
            name.is_none_or(|n| crate::mesh::ALL.iter().any(|m| (m.is_config_map_name)(n)))
        }
        Some(_) => true,
        None => false,
    }
}

/// Whether `apiVersion` is in the `batch` group (batch/v1, batch/v1beta1, batch/v2alpha1).
fn is_batch(api_version: &str) -> bool {
    api_version
        .strip_prefix("batch/")
        .is_some_and(|v| !v.is_empty() && !v.contains('/'))
}

/// Whether an object is a list whose `items` are objects in their own right.
pub fn is_list(obj: &Node) -> bool {
    let api = str_of(obj, "apiVersion").unwrap_or_default();
    match str_of(obj, "kind") {
        Some("List") => api == "v1",
        Some("ResourceList") => api.starts_with("config.kubernetes.io/"),
        _ => false,
    }
}

/// The objects of a document: the items of a list, or the document itself, each with its
/// path from the root and whether it is a list item. Nothing for a document that is not a
/// mapping.
pub fn objects(root: &Node) -> Vec<(&Node, Path, bool)> {
    if root.entries().is_none() {
        return Vec::new();
    }
    if !is_list(root) {
        return vec![(root, Vec::new(), false)];
    }
    let items = root.get("items").and_then(Node::items).unwrap_or(&[]);
    items
        .iter()
        .enumerate()
        .map(|(i, item)| (item, vec![key("items"), Seg::Index(i)], true))
        .collect()
}

/// Finds the pod templates in one document.
pub fn locate(root: &Node) -> Found<'_> {
    let mut out = Found::default();
    for (obj, path, _) in objects(root) {
        object(obj, path, &mut out);
    }
    out
}

/// Every string value of `key` in mapping `map`: more than one when the key is written
/// twice.
fn all_str_of<'n>(map: &'n Node, k: &'n str) -> impl Iterator<Item = &'n str> {
    map.entries()
        .unwrap_or(&[])
        .iter()
        .filter(move |e| e.key.as_str() == Some(k))
        .filter_map(|e| e.value.as_str())
}

fn object<'d>(obj: &'d Node, path: Path, out: &mut Found<'d>) {
    if obj.entries().is_none() {
        return;
    }
    let pod_kind = |kind: &str| matches!(role(kind), Some(Role::Pods(_)));
    if obj.duplicate_key().is_some()
        && all_str_of(obj, "apiVersion").any(is_batch)
        && all_str_of(obj, "kind").any(pod_kind)
    {
        // `kind` or `apiVersion` twice may make it a Job for one reader and not another.
        if let Some(f) = duplicate_key_finding(obj, &object_ref(obj), "the object") {
            out.findings.push(f);
        }
        return;
    }
    if !str_of(obj, "apiVersion").is_some_and(is_batch) {
        return;
    }
    let Some(Role::Pods(template_keys)) = str_of(obj, "kind").and_then(role) else {
        return;
    };
    let oref = object_ref(obj);
    let note = |sev: fn(Rule, usize, String) -> Finding, rule: Rule, at: usize, msg: String| {
        sev(rule, at, msg).with_object(Some(oref.clone()))
    };
    // Walk to the template, refusing to go through aliases, anchors or merge keys: an edit
    // there would change other nodes too, or not take effect.
    let mut node = obj;
    let mut tpath = path;
    for k in template_keys {
        if let Some(f) = shared_node_finding(node, &oref) {
            out.findings.push(f);
            return;
        }
        // The path is named only for a finding (this runs for every pod).
        if node.duplicate_key().is_some()
            && let Some(f) = duplicate_key_finding(node, &oref, &describe_path(&tpath))
        {
            out.findings.push(f);
            return;
        }
        match node.get(k) {
            Some(n) => {
                node = n;
                tpath.push(key(k));
            }
            None => {
                out.findings.push(note(
                    Finding::warning,
                    Rule::NoPodTemplate,
                    obj.start,
                    format!(
                        "{} has no {}; nothing to do",
                        describe(&oref),
                        template_keys.join(".")
                    ),
                ));
                return;
            }
        }
    }
    if let Some(f) = shared_node_finding(node, &oref) {
        out.findings.push(f);
        return;
    }
    // The pod template and the mappings its edits go through or decisions read: a key
    // written twice there is refused for the whole pod.
    for sub in [
        &[][..],
        &["spec"],
        &["metadata"],
        &["metadata", "annotations"],
        &["metadata", "labels"],
    ] {
        let Some(n) = node.path(sub) else { continue };
        if n.duplicate_key().is_none() {
            continue;
        }
        let mut p = tpath.clone();
        p.extend(sub.iter().map(|k| key(k)));
        if let Some(f) = duplicate_key_finding(n, &oref, &describe_path(&p)) {
            out.findings.push(f);
            return;
        }
    }
    if node.entries().is_none() {
        out.findings.push(note(
            Finding::warning,
            Rule::TemplateNotMapping,
            node.start,
            format!(
                "{}: the pod template is not a mapping; skipped",
                describe(&oref)
            ),
        ));
        return;
    }
    out.pods.push(PodTarget {
        object: oref,
        object_node: obj,
        template: node,
        path: tpath,
    });
}

/// Why editing through `node` is refused, when it is an alias, has an anchor, or uses a
/// merge key (`<<`): an edit there would change other nodes too, or not take effect.
pub fn shared_node(node: &Node) -> Option<&'static str> {
    if matches!(node.kind, Kind::Alias(_)) {
        Some("is an alias (*name) of a node used elsewhere")
    } else if node.anchor.is_some() {
        Some("has an anchor (&name), so other nodes may share it")
    } else if node.entry("<<").is_some() {
        Some("uses a merge key (<<), so its effective value is not what is written")
    } else {
        None
    }
}

/// Names the mapping at `path` in a finding: `the object` at the root.
fn describe_path(path: &Path) -> String {
    match crate::yaml::path::path_string(path) {
        p if p.is_empty() => "the object".to_string(),
        p => format!("`{p}`"),
    }
}

/// What a finding about a key written twice says; `what` names the mapping. Which of
/// the two counts depends on the reader (Kubernetes and Istio take the last, meshjob's
/// lookups the first), so it is refused rather than guessed.
pub fn duplicate_key_message(what: &str, k: &str) -> String {
    format!(
        "{what} has the key `{k}` twice; only one of them takes effect, so meshjob will not \
         guess which. Remove the duplicate"
    )
}

/// The refusal (rule [`Rule::DuplicateKey`]) when mapping `node` of object `oref` has a key
/// written twice; `what` names the mapping.
pub fn duplicate_key_finding(node: &Node, oref: &ObjectRef, what: &str) -> Option<Finding> {
    let k = node.duplicate_key()?;
    Some(object_error(
        Rule::DuplicateKey,
        oref,
        k.start,
        duplicate_key_message(what, k.as_str().unwrap_or_default()),
    ))
}

/// The first node at or below `node` that [`shared_node`] refuses, with the reason.
pub fn first_shared(node: &Node) -> Option<(&Node, &'static str)> {
    if let Some(why) = shared_node(node) {
        return Some((node, why));
    }
    match &node.kind {
        Kind::Seq(items) => items.iter().find_map(first_shared),
        Kind::Map(entries) => entries
            .iter()
            .find_map(|e| first_shared(&e.key).or_else(|| first_shared(&e.value))),
        _ => None,
    }
}

/// What a refusal to edit through a shared node says, given [`shared_node`]'s reason.
pub fn refusal(why: &str) -> String {
    format!("refusing to edit a node that {why}; expand it by hand, then run again")
}

/// An error about object `oref`, its message starting with the object's name.
pub fn object_error(rule: Rule, oref: &ObjectRef, at: usize, msg: impl fmt::Display) -> Finding {
    Finding::error(rule, at, format!("{}: {msg}", describe(oref))).with_object(Some(oref.clone()))
}

/// The refusal (rule [`Rule::SharedNode`]) when `node` of object `oref` is shared.
pub fn shared_node_finding(node: &Node, oref: &ObjectRef) -> Option<Finding> {
    let why = shared_node(node)?;
    Some(object_error(
        Rule::SharedNode,
        oref,
        node.props_start,
        refusal(why),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::tree::parse_stream;

    fn count(src: &str) -> (usize, Vec<String>) {
        let docs = parse_stream(src).unwrap();
        let l = locate(&docs[0].root);
        (
            l.pods.len(),
            l.findings.iter().map(|f| f.message.clone()).collect(),
        )
    }

    #[test]
    fn jobs_cronjobs_and_lists() {
        let job = "apiVersion: batch/v1\nkind: Job\nspec:\n  template:\n    spec:\n      containers: []\n";
        assert_eq!(count(job).0, 1);
        let cj = "apiVersion: batch/v1beta1\nkind: CronJob\nspec:\n  jobTemplate:\n    spec:\n      template:\n        spec: {}\n";
        assert_eq!(count(cj).0, 1);
        let list = format!(
            "apiVersion: v1\nkind: List\nitems:\n- {}",
            "{apiVersion: batch/v1, kind: Job, spec: {template: {spec: {}}}}"
        );
        assert_eq!(count(&list).0, 1);
        assert_eq!(
            count("apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nspec: {template: {}}\n").0,
            0
        );
        assert_eq!(count("apiVersion: batch/v1\nkind: JobSet\n").0, 0);
    }

    #[test]
    fn anchored_template_is_refused() {
        let (n, msgs) =
            count("apiVersion: batch/v1\nkind: Job\nspec:\n  template: &a {spec: {}}\n");
        assert_eq!(n, 0);
        assert!(msgs[0].contains("anchor"), "{msgs:?}");
    }

    #[test]
    fn one_table_of_kinds() {
        for kind in [
            "Job",
            "CronJob",
            "List",
            "ResourceList",
            "IstioOperator",
            "Istio",
        ] {
            assert!(may_matter(kind, Some("x")), "{kind}");
        }
        assert!(may_matter("IstioRevision", None));
        assert!(may_matter("ConfigMap", Some("istio-1-22")));
        assert!(may_matter("ConfigMap", None));
        assert!(!may_matter("ConfigMap", Some("app")));
        assert!(!may_matter("Deployment", None));
        // Every pod kind is found by `locate` under its template keys.
        for (kind, role) in KINDS {
            if let Role::Pods(keys) = role {
                let mut doc = format!("apiVersion: batch/v1\nkind: {kind}\n");
                for (depth, k) in keys.iter().enumerate() {
                    doc.push_str(&format!("{}{k}:\n", "  ".repeat(depth)));
                }
                doc.push_str(&format!("{}spec: {{}}\n", "  ".repeat(keys.len())));
                assert_eq!(count(&doc).0, 1, "{doc}");
            }
        }
    }
}
