//! `--repo PATH...`: the documents of the repository that a held pod's top owner comes from.
//!
//! The paths are walked as `meshjob check` walks them (YAML files, the same excludes of the
//! command line's walk); each object (a document, or an item of a `v1` `List`) is indexed by
//! kind and name, with its namespace. A document without a namespace takes the `namespace`
//! of a `kustomization.yaml` beside it or one that lists its file in `resources` (kustomize
//! sets it on every resource it builds); without either, it matches an owner of any
//! namespace. Both matches say so, since a repository may build the same file into several
//! namespaces.

use crate::locate;
use crate::paths::Spelling;
use crate::source::{self, Origin};
use crate::yaml::text::line_col;
use crate::yaml::tree::{Node, parse_stream};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The names kustomize reads a directory's kustomization from
/// (sigs.k8s.io/kustomize api/konfig/general.go, `RecognizedKustomizationFileNames`).
const KUSTOMIZATION_FILES: [&str; 3] = ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// Where an owner was found in the repository.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Source {
    /// The file, as the walk names it.
    pub path: String,
    /// The object's first line.
    pub line: usize,
    /// How the namespace matched, when the document does not say it itself.
    pub note: Option<String>,
}

/// One object of the repository.
#[derive(Debug)]
struct Object {
    path: String,
    line: usize,
    /// Its own `metadata.namespace`.
    namespace: Option<String>,
    /// The namespace a kustomization gives it, and that kustomization's file.
    kustomized: Option<(String, String)>,
}

/// The repository's objects by kind and name, and what could not be read.
#[derive(Debug, Default)]
pub(crate) struct Repo {
    objects: HashMap<(String, String), Vec<Object>>,
    /// Files that could not be read or parsed, with why: reported, never fatal (the audit's
    /// subject is the dump).
    pub skipped: Vec<(String, String)>,
    /// Files of the repository's fixes to show, in the walk's order.
    pub files: Vec<String>,
}

impl Repo {
    /// Walks `paths`; an error only for a path that does not exist.
    pub(crate) fn read(paths: &[String], spelling: &Spelling) -> Result<Repo, String> {
        let mut none = |_: &Path, _: bool| None;
        let expansion = source::expand(paths, spelling, None, &mut none);
        if let Some((name, message)) = expansion.errors.first() {
            return Err(format!("--repo {name}: {message}"));
        }
        let mut repo = Repo::default();
        let mut texts = Vec::new();
        for input in &expansion.inputs {
            let Origin::File(p) = &input.origin else {
                continue;
            };
            match source::load(&input.origin) {
                Ok(text) => texts.push((input.name.clone(), p.clone(), text)),
                Err(source::LoadError::Read(m) | source::LoadError::Decode { message: m }) => {
                    repo.skipped.push((input.name.clone(), m));
                }
            }
        }
        // The kustomizations first: a resource may come before the file that lists it.
        let mut kustomized: HashMap<PathBuf, (String, String)> = HashMap::new();
        for (name, path, text) in &texts {
            let base = path.file_name().and_then(|f| f.to_str()).unwrap_or("");
            if !KUSTOMIZATION_FILES.contains(&base) {
                continue;
            }
            let Ok(docs) = parse_stream(text) else {
                continue;
            };
            let Some(root) = docs.first().map(|d| &d.root) else {
                continue;
            };
            let Some(ns) = root.str("namespace").filter(|n| !n.is_empty()) else {
                continue;
            };
            let dir = path.parent().unwrap_or(Path::new(""));
            let mut listed: Vec<PathBuf> = (root.get("resources").and_then(Node::items))
                .unwrap_or(&[])
                .iter()
                .filter_map(Node::as_str)
                .map(|r| dir.join(r))
                .collect();
            listed.push(dir.to_path_buf());
            for p in listed {
                kustomized.insert(normal(&p), (ns.to_string(), name.clone()));
            }
        }
        for (name, path, text) in &texts {
            let docs = match parse_stream(text) {
                Ok(d) => d,
                Err(e) => {
                    let (line, col) = line_col(text, e.offset);
                    repo.skipped
                        .push((format!("{name}:{line}:{col}"), e.message.clone()));
                    continue;
                }
            };
            let own = normal(path);
            let dir = normal(path.parent().unwrap_or(Path::new("")));
            let k = kustomized.get(&own).or_else(|| kustomized.get(&dir));
            for doc in &docs {
                for (obj, _, _) in locate::objects(&doc.root) {
                    let (Some(kind), Some(meta)) = (obj.str("kind"), obj.get("metadata")) else {
                        continue;
                    };
                    let Some(n) = meta.str("name") else { continue };
                    let namespace = meta.str("namespace").map(str::to_string);
                    let line = line_col(text, obj.start).0;
                    (repo.objects.entry((kind.to_string(), n.to_string())))
                        .or_default()
                        .push(Object {
                            path: name.clone(),
                            line,
                            namespace,
                            kustomized: k.cloned(),
                        });
                }
            }
        }
        Ok(repo)
    }

    /// The object of `kind` and `name` for `namespace`: one that names the namespace, else one
    /// a kustomization puts there, else one with no namespace at all (each with a note).
    pub(crate) fn find(&mut self, kind: &str, name: &str, namespace: &str) -> Option<Source> {
        let found = self.objects.get(&(kind.to_string(), name.to_string()))?;
        let own = found
            .iter()
            .find(|o| o.namespace.as_deref() == Some(namespace));
        let source = if let Some(o) = own {
            source(o, None)
        } else if let Some(o) = found.iter().find(|o| {
            o.namespace.is_none() && o.kustomized.as_ref().is_some_and(|(n, _)| n == namespace)
        }) {
            let file = o.kustomized.as_ref().map_or("", |(_, f)| f.as_str());
            source(
                o,
                Some(format!(
                    "no namespace of its own; {file} sets `namespace: {namespace}`"
                )),
            )
        } else {
            let o = found
                .iter()
                .find(|o| o.namespace.is_none() && o.kustomized.is_none())?;
            source(
                o,
                Some(format!(
                    "no namespace of its own: it goes wherever it is applied, so it matches \
                     {namespace} by kind and name only"
                )),
            )
        };
        if !self.files.contains(&source.path) {
            self.files.push(source.path.clone());
        }
        Some(source)
    }
}

fn source(o: &Object, note: Option<String>) -> Source {
    Source {
        path: o.path.clone(),
        line: o.line,
        note,
    }
}

/// `a/./b/../c` as `a/c`, so that a kustomization's `resources` entry and the walk's path
/// name the same file.
fn normal(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo(files: &[(&str, &str)]) -> (tempfile::TempDir, Repo) {
        let dir = tempfile::tempdir().expect("temp dir");
        for (name, text) in files {
            let p = dir.path().join(name);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(p, text).expect("write");
        }
        let spelling = Spelling::current();
        let root = dir.path().to_string_lossy().to_string();
        let r = Repo::read(&[root], &spelling).expect("read");
        (dir, r)
    }

    const CRON: &str = "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: report\n";

    #[test]
    fn a_namespace_of_its_own_wins_and_others_match_with_a_note() {
        let own = format!("{CRON}  namespace: jobs\n");
        let (_d, mut r) = repo(&[("a/cron.yaml", &own), ("b/cron.yaml", CRON)]);
        let s = r.find("CronJob", "report", "jobs").expect("found");
        // By components: Windows spells the path with `\`.
        let ends = |p: &str, end: &str| Path::new(p).ends_with(end);
        assert!(ends(&s.path, "a/cron.yaml") && s.note.is_none(), "{s:?}");
        let s = r.find("CronJob", "report", "other").expect("found");
        assert!(ends(&s.path, "b/cron.yaml"), "{s:?}");
        assert!(s.note.expect("note").contains("kind and name only"));
        assert!(r.find("CronJob", "missing", "jobs").is_none());
        assert!(r.find("Job", "report", "jobs").is_none());
    }

    #[test]
    fn a_kustomization_gives_its_namespace_to_the_files_it_lists() {
        let k = "namespace: batch\nresources:\n- ../base/cron.yaml\n";
        let (_d, mut r) = repo(&[("base/cron.yaml", CRON), ("overlay/kustomization.yaml", k)]);
        let s = r.find("CronJob", "report", "batch").expect("found");
        let note = s.note.expect("note");
        assert!(
            note.contains("kustomization.yaml") && note.contains("batch"),
            "{note}"
        );
        // Another namespace still matches the file, as one without a namespace.
        let s = r.find("CronJob", "report", "elsewhere");
        assert!(
            s.is_none(),
            "a kustomized file is placed by its kustomization: {s:?}"
        );
    }

    #[test]
    fn list_items_are_objects_and_bad_files_are_skipped() {
        let list = "apiVersion: v1\nkind: List\nitems:\n- apiVersion: batch/v1\n  kind: Job\n  \
                    metadata:\n    name: one\n    namespace: x\n";
        let (_d, mut r) = repo(&[("list.yaml", list), ("bad.yaml", "a: [\n")]);
        let s = r.find("Job", "one", "x").expect("found");
        assert_eq!(s.line, 4);
        assert_eq!(r.skipped.len(), 1, "{:?}", r.skipped);
        assert!(r.skipped[0].0.contains("bad.yaml"));
    }
}
