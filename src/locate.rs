//! Finds what to change: the pods of the kinds in the kinds table (`crate::kinds`).
//!
//! A target is a batch pod template (or pod metadata) at one of a kind's paths, in an object
//! at the top level of a document, among the `items` of a `kind: List` (or a KRM
//! `ResourceList`), or where a kind embeds a whole object ([`Shape::Object`], Katib's
//! `trialSpec`). Look-alikes (other API groups, kinds nested elsewhere in other kinds,
//! objects embedded in strings) are never targets, nor are pods that run until stopped
//! (`restartPolicy: Always`). Whether and how each pod is fixed is decided later
//! (`decide`).

use crate::finding::{Finding, ObjectRef, Rule, describe, object_ref};
use crate::kinds::{Fixes, KindRow, Kinds, Layers, Lookup, Pattern, RestartPolicy, Shape, Step};
use crate::pod::{Pod, Variant};
use crate::yaml::path::{Path, Seg, key};
use crate::yaml::tree::{Kind, Node};
use crate::yaml::value::string_key;
use std::fmt;

/// What locating found in one document.
#[derive(Debug, Default)]
pub struct Found<'d> {
    pub pods: Vec<Pod<'d>>,
    pub findings: Vec<Finding>,
}

/// Whether an object is a list whose `items` are objects in their own right.
pub(crate) fn is_list(obj: &Node) -> bool {
    let api = obj.str("apiVersion").unwrap_or_default();
    match obj.str("kind") {
        Some("List") => api == "v1",
        Some("ResourceList") => api.starts_with("config.kubernetes.io/"),
        _ => false,
    }
}

/// The objects of a document: the items of a list, or the document itself, each with its
/// path from the root and whether it is a list item. Nothing for a document that is not a
/// mapping.
pub(crate) fn objects(root: &Node) -> Vec<(&Node, Path, bool)> {
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

/// Finds the pods in one document.
pub fn locate<'d>(root: &'d Node, kinds: &Kinds) -> Found<'d> {
    let mut out = Found::default();
    for (obj, path, _) in objects(root) {
        object(obj, path, kinds, &mut out, None);
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

/// What an embedded object's pods inherit from the object that holds it (a Katib
/// Experiment's `trialSpec`): its name for findings, and the fixes it allows.
struct Within<'a> {
    oref: &'a ObjectRef,
    fixes: Fixes,
}

fn object<'d>(
    obj: &'d Node,
    path: Path,
    kinds: &Kinds,
    out: &mut Found<'d>,
    within: Option<&Within<'_>>,
) {
    if obj.entries().is_none() {
        return;
    }
    let own_ref;
    let oref = match within {
        Some(w) => w.oref,
        None => {
            own_ref = object_ref(obj);
            &own_ref
        }
    };
    if obj.duplicate_key().is_some() {
        // `kind` or `apiVersion` twice may make it a target for one reader and not another.
        let target = all_str_of(obj, "apiVersion").any(|api| {
            all_str_of(obj, "kind").any(|k| !matches!(kinds.lookup(api, k), Lookup::None))
        });
        if target {
            if let Some(f) = duplicate_key_finding(obj, oref, "the object") {
                out.findings.push(f);
            }
            return;
        }
    }
    let (Some(api), Some(kind)) = (obj.str("apiVersion"), obj.str("kind")) else {
        return;
    };
    let row = match kinds.lookup(api, kind) {
        Lookup::Row(row) => row,
        Lookup::UnknownVersion(row) => {
            out.findings.push(unknown_version(obj, oref, api, row));
            return;
        }
        Lookup::None => return,
    };
    let fixes = within.map_or(row.fixes, |w| w.fixes.narrow(row.fixes));
    if fixes.is_none() {
        return;
    }
    let mut walk = Walk {
        oref,
        obj,
        row,
        fixes,
        kinds,
        reached: 0,
        out,
    };
    for pattern in &row.templates {
        if let Some(w) = &pattern.when {
            let v = obj.path(w.path).and_then(Node::as_str).unwrap_or(w.default);
            if !w.values.contains(&v) {
                continue;
            }
        }
        let before = walk.reached;
        let refused = walk.out.findings.len();
        walk.follow(pattern, pattern.steps(), obj, None, path.clone());
        if walk.reached == before && walk.out.findings.len() == refused && !pattern.optional {
            walk.out.findings.push(
                Finding::warning(
                    Rule::NoPodTemplate,
                    obj.start,
                    format!("{} has no {pattern}; nothing to do", describe(oref)),
                )
                .with_object(Some(oref.clone())),
            );
        }
    }
}

/// The note on an object of a known kind and group at a version meshjob does not know.
fn unknown_version(obj: &Node, oref: &ObjectRef, api: &str, row: &KindRow) -> Finding {
    Finding::info(
        Rule::UnknownVersion,
        obj.start,
        format!(
            "{}: {api} is not a version of {} that meshjob knows ({}); left alone",
            describe(oref),
            row.kind,
            row.api_versions()
        ),
    )
    .with_object(Some(oref.clone()))
}

/// Follows the patterns of one object's kind to its pods.
struct Walk<'a, 'd> {
    oref: &'a ObjectRef,
    obj: &'d Node,
    row: &'a KindRow,
    /// The fixes the pods may get.
    fixes: Fixes,
    kinds: &'a Kinds,
    /// How many nodes at the end of a pattern were reached.
    reached: usize,
    out: &'a mut Found<'d>,
}

impl<'d> Walk<'_, 'd> {
    /// Follows `steps` down from `node` (at `path`); `parent` is the mapping that holds
    /// `node`, where a kind may keep `restartPolicy` beside the template. An edit through an
    /// alias, an anchor or a merge key would change other nodes too, or not take effect, and
    /// a key written twice takes effect for one reader and not another: such a pod is
    /// refused.
    fn follow(
        &mut self,
        pattern: &Pattern,
        steps: &[Step],
        node: &'d Node,
        parent: Option<&'d Node>,
        path: Path,
    ) {
        if let Some(f) = shared_node_finding(node, self.oref) {
            self.out.findings.push(f);
            return;
        }
        let Some((step, rest)) = steps.split_first() else {
            self.reached += 1;
            self.template(pattern, node, parent, path);
            return;
        };
        // The path is named only for a finding (this runs for every pod).
        if node.duplicate_key().is_some()
            && let Some(f) = duplicate_key_finding(node, self.oref, &describe_path(&path))
        {
            self.out.findings.push(f);
            return;
        }
        match step {
            Step::Key(k) => {
                if let Some(n) = node.get(k) {
                    let mut p = path;
                    p.push(key(k));
                    self.follow(pattern, rest, n, Some(node), p);
                }
            }
            Step::EveryItem => {
                for (i, item) in node.items().unwrap_or(&[]).iter().enumerate() {
                    let mut p = path.clone();
                    p.push(Seg::Index(i));
                    self.follow(pattern, rest, item, Some(node), p);
                }
            }
            Step::EveryValue => {
                for e in node.entries().unwrap_or(&[]) {
                    // Under a key that is no string (`null:`, `7:`, an empty key) an edit's
                    // path would not lead back to it: left alone, and said.
                    let Some(k) = string_key(&e.key) else {
                        let msg = format!(
                            "{}: the key `{}` under {} is not a string, so meshjob does not \
                             edit the pod template under it; quote the key",
                            describe(self.oref),
                            match e.key.empty {
                                true => "",
                                false => e.key.as_str().unwrap_or_default(),
                            },
                            describe_path(&path)
                        );
                        self.out.findings.push(
                            Finding::warning(Rule::NoPodTemplate, e.key.start, msg)
                                .with_object(Some(self.oref.clone())),
                        );
                        continue;
                    };
                    let mut p = path.clone();
                    p.push(key(k));
                    self.follow(pattern, rest, &e.value, Some(node), p);
                }
            }
        }
    }

    /// A node at the end of a pattern: a pod, an embedded object, or a finding.
    fn template(
        &mut self,
        pattern: &Pattern,
        node: &'d Node,
        parent: Option<&'d Node>,
        path: Path,
    ) {
        let oref = self.oref;
        if pattern.shape == Shape::Object {
            let within = Within {
                oref,
                fixes: self.fixes,
            };
            object(node, path, self.kinds, self.out, Some(&within));
            return;
        }
        // The pod template and the mappings its edits go through or decisions read: a key
        // written twice there is refused for the whole pod.
        let subs: &[&[&str]] = match pattern.shape {
            Shape::Template | Shape::Object => &[
                &[],
                &["spec"],
                &["metadata"],
                &["metadata", "annotations"],
                &["metadata", "labels"],
            ],
            Shape::Metadata => &[&[], &["annotations"], &["labels"]],
            Shape::MetadataIn { key, .. } => {
                &[&[], &[key], &[key, "annotations"], &[key, "labels"]]
            }
        };
        for sub in subs {
            let Some(n) = node.path(sub) else { continue };
            if n.duplicate_key().is_none() {
                continue;
            }
            let mut p = path.clone();
            p.extend(sub.iter().map(|k| key(k)));
            if let Some(f) = duplicate_key_finding(n, oref, &describe_path(&p)) {
                self.out.findings.push(f);
                return;
            }
        }
        if node.entries().is_none() {
            self.out.findings.push(
                Finding::warning(
                    Rule::TemplateNotMapping,
                    node.start,
                    format!(
                        "{}: the pod template is not a mapping; skipped",
                        describe(oref)
                    ),
                )
                .with_object(Some(oref.clone())),
            );
            return;
        }
        let restart = self.restart_policy(pattern.shape, node, parent);
        // A pod that runs until it is stopped (a bare Pod's default) is not a batch pod.
        if !restart.is_batch() {
            return;
        }
        self.out.pods.push(Pod {
            object: oref.clone(),
            object_node: self.obj,
            template: node,
            path,
            shape: pattern.shape,
            restart,
            fixes: self.fixes,
            fallback: pattern.fallback,
            variants: pattern
                .layers
                .map(|l| variants(node, &l))
                .unwrap_or_default(),
            inherited: Vec::new(),
            keep_wrappers: false,
        });
    }

    /// The pod's `restartPolicy`: beside the template where the kind keeps it there, else
    /// the template's own, else the kind's default.
    fn restart_policy(&self, shape: Shape, node: &Node, parent: Option<&Node>) -> RestartPolicy {
        let at = self.row.restart;
        let beside = parent
            .filter(|_| at.beside_template)
            .and_then(|p| p.str("restartPolicy"))
            // A Kubeflow replica's `ExitCode` makes the pod `Never` (see `kinds::builtin`).
            .map(|v| if v == "ExitCode" { "Never" } else { v });
        let own = match shape {
            Shape::Template => node.path(&["spec", "restartPolicy"]).and_then(Node::as_str),
            Shape::Metadata | Shape::MetadataIn { .. } | Shape::Object => None,
        };
        beside
            .or(own)
            .and_then(RestartPolicy::parse)
            .unwrap_or(at.default)
    }
}

/// The variants of a pod whose metadata has layers laid over it: each item of the list
/// that runs pods, with the common layers and its own metadata.
fn variants<'d>(node: &'d Node, layers: &Layers) -> Vec<Variant<'d>> {
    let common: Vec<&Node> = (layers.common.iter())
        .filter_map(|p| node.path(p))
        .filter(|m| m.entries().is_some())
        .collect();
    let each = &layers.each;
    let items = node.get(each.list).and_then(Node::items).unwrap_or(&[]);
    items
        .iter()
        .filter(|t| each.runs_pod.iter().any(|k| t.get(k).is_some()))
        .map(|t| {
            let own = t.get(each.metadata).filter(|m| m.entries().is_some());
            Variant {
                name: t.str(each.name).unwrap_or_default(),
                layers: common.iter().copied().chain(own).collect(),
            }
        })
        .collect()
}

/// Why editing through `node` is refused, when it is an alias, has an anchor, or uses a
/// merge key (`<<`): an edit there would change other nodes too, or not take effect.
pub(crate) fn shared_node(node: &Node) -> Option<&'static str> {
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
pub(crate) fn duplicate_key_message(what: &str, k: &str) -> String {
    format!(
        "{what} has the key `{k}` twice; only one of them takes effect, so meshjob will not \
         guess which. Remove the duplicate"
    )
}

/// The refusal (rule [`Rule::DuplicateKey`]) when mapping `node` of object `oref` has a key
/// written twice; `what` names the mapping.
pub(crate) fn duplicate_key_finding(node: &Node, oref: &ObjectRef, what: &str) -> Option<Finding> {
    let k = node.duplicate_key()?;
    Some(object_error(
        Rule::DuplicateKey,
        oref,
        k.start,
        duplicate_key_message(what, k.as_str().unwrap_or_default()),
    ))
}

/// The first node at or below `node` that [`shared_node`] refuses, with the reason.
pub(crate) fn first_shared(node: &Node) -> Option<(&Node, &'static str)> {
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
pub(crate) fn refusal(why: &str) -> String {
    format!("refusing to edit a node that {why}; expand it by hand, then run again")
}

/// An error about object `oref`, its message starting with the object's name.
pub(crate) fn object_error(
    rule: Rule,
    oref: &ObjectRef,
    at: usize,
    msg: impl fmt::Display,
) -> Finding {
    Finding::error(rule, at, format!("{}: {msg}", describe(oref))).with_object(Some(oref.clone()))
}

/// The refusal (rule [`Rule::SharedNode`]) when `node` of object `oref` is shared.
pub(crate) fn shared_node_finding(node: &Node, oref: &ObjectRef) -> Option<Finding> {
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
        let l = locate(&docs[0].root, Kinds::builtin());
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
        let (n, msgs) = count("apiVersion: batch/v1\nkind: Job\nspec: {}\n");
        assert_eq!(n, 0);
        assert_eq!(msgs, ["Job has no spec.template; nothing to do"]);
    }

    #[test]
    fn anchored_template_is_refused() {
        let (n, msgs) =
            count("apiVersion: batch/v1\nkind: Job\nspec:\n  template: &a {spec: {}}\n");
        assert_eq!(n, 0);
        assert!(msgs[0].contains("anchor"), "{msgs:?}");
    }

    #[test]
    fn wildcards_and_restart_policy_beside_the_template() {
        let mut kinds = Kinds::builtin().clone();
        kinds.push_for_tests(KindRow {
            group: "example.com".into(),
            versions: vec!["v1".into()],
            kind: "Trainer".into(),
            templates: vec![
                Pattern::parse("spec.roles.*.template", Shape::Template).unwrap(),
                Pattern::parse("spec.jobs[*].meta", Shape::Metadata).unwrap(),
            ],
            restart: crate::kinds::RestartAt {
                beside_template: true,
                default: RestartPolicy::OnFailure,
            },
            fixes: Fixes::ALL,
            origin: crate::kinds::RowOrigin::Config,
        });
        let doc = "apiVersion: example.com/v1\nkind: Trainer\nspec:\n  roles:\n    A: {restartPolicy: Never, template: {spec: {restartPolicy: OnFailure}}}\n    B: {template: {spec: {}}}\n  jobs:\n  - meta: {}\n  - meta: {annotations: {}}\n";
        let docs = parse_stream(doc).unwrap();
        let l = locate(&docs[0].root, &kinds);
        let got: Vec<(String, RestartPolicy)> = l
            .pods
            .iter()
            .map(|p| (crate::yaml::path::path_string(&p.path), p.restart_policy()))
            .collect();
        assert_eq!(
            got,
            [
                ("spec.roles.A.template".to_string(), RestartPolicy::Never),
                (
                    "spec.roles.B.template".to_string(),
                    RestartPolicy::OnFailure
                ),
                ("spec.jobs[0].meta".to_string(), RestartPolicy::OnFailure),
                ("spec.jobs[1].meta".to_string(), RestartPolicy::OnFailure),
            ]
        );
        assert_eq!(
            l.pods[3].annotations_path(),
            l.pods[3]
                .metadata_path()
                .into_iter()
                .chain([key("annotations")])
                .collect::<Vec<_>>()
        );
        assert!(l.findings.is_empty(), "{:?}", l.findings);
        // An unknown version of a known group is not a target.
        let other = doc.replace("example.com/v1", "example.com/v2");
        let docs = parse_stream(&other).unwrap();
        assert!(locate(&docs[0].root, &kinds).pods.is_empty());
    }
}
