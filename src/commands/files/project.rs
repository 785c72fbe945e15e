//! The context of a named file's whole project: what the project's other files say
//! (`Namespace` documents, the mesh's install manifests and values, node lists), so that a
//! file gets the same fix whether it is named alone (a pre-commit hook names only the staged
//! files) or found by walking its project.
//!
//! A file's project ([`root_of`]) is, in a git work tree, the outermost directory of it that
//! holds a `.meshjob.yaml`, else the work tree's top (the directory holding `.git`: a
//! directory, or a file in a linked worktree or a submodule); outside one, the nearest
//! directory upward that holds a `.meshjob.yaml`. A file in neither has no project: only the
//! named files say anything. The project
//! is walked as a directory argument is (hidden entries, Helm chart `templates/` and
//! excluded paths left out), and each file not named is read by the first pass only: never
//! edited, never reported on. A project that a directory argument already covers is not
//! walked again.
//!
//! Most files say nothing: each is read into one buffer per thread and searched for the
//! words of what the first pass reads (`manifest_versions::batch_may_hold`); only those
//! that spell one are cut into documents.

use super::configs::Configs;
use crate::decide::RunContext;
use crate::paths::Spelling;
use crate::source::{self, Input, Origin};
use crate::stream;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What each file of the walked projects adds, in walk order: a named input (its index among
/// the run's inputs; its own first pass says it) or another file's context.
pub(super) enum Part {
    Named(usize),
    Other(RunContext),
}

/// The project directory of a file in `dir` (absolute). In a git work tree: the outermost
/// directory in it that holds a `.meshjob.yaml` (a config file further in refines the
/// settings of part of the project), else the work tree's top. Outside one: the nearest
/// directory upward that holds a `.meshjob.yaml`. `None` when there is neither.
pub(crate) fn root_of(dir: &Path) -> Option<PathBuf> {
    let (mut nearest, mut outermost) = (None, None);
    for d in dir.ancestors() {
        if d.join(crate::config::CONFIG_FILE_NAME).is_file() {
            nearest = nearest.or_else(|| Some(d.to_path_buf()));
            outermost = Some(d.to_path_buf());
        }
        if std::fs::symlink_metadata(d.join(".git")).is_ok() {
            return Some(outermost.unwrap_or_else(|| d.to_path_buf()));
        }
    }
    nearest
}

/// The parts of the projects of `inputs` (see [`Part`]); `args` are the run's PATH
/// arguments, `excluded` the run's exclude check. A project whose config (or the flag)
/// turns `projectContext` off is not walked.
pub(super) fn parts(
    inputs: &[Input],
    args: &[std::ffi::OsString],
    spelling: &Spelling,
    configs: &mut Configs<'_>,
    excluded: &mut source::ExcludeCheck<'_>,
) -> Vec<Part> {
    // The directories the arguments walk already: their files are inputs.
    let walked: Vec<PathBuf> = (args.iter())
        .filter(|a| *a != "-")
        .map(|a| spelling.absolute(Path::new(a)))
        .filter(|p| p.is_dir())
        .collect();
    let mut roots: Vec<PathBuf> = Vec::new();
    for i in inputs {
        if !matches!(i.origin, Origin::File(_)) {
            continue;
        }
        let Some(root) = root_of(&i.dir) else {
            continue;
        };
        if roots.contains(&root) || walked.iter().any(|w| root.starts_with(w)) {
            continue;
        }
        // A broken config file is reported by the input it governs, if any.
        if configs
            .layer(&root)
            .is_ok_and(|l| l.settings.project_context)
        {
            roots.push(root);
        }
    }
    if roots.is_empty() {
        return Vec::new();
    }
    // By the bytes of the path: hashing them is quicker than hashing its components, and
    // both sides are spelled alike (absolute, from the same directory names).
    let named: std::collections::HashMap<&std::ffi::OsStr, usize> = (inputs.iter().enumerate())
        .filter_map(|(k, i)| match &i.origin {
            Origin::File(p) => Some((p.as_os_str(), k)),
            Origin::Stdin => None,
        })
        .collect();
    let mut out = Vec::new();
    for root in &roots {
        let files = source::yaml_files(root, excluded);
        let others: Vec<&Path> = (files.iter())
            .map(PathBuf::as_path)
            .filter(|p| !named.contains_key(p.as_os_str()))
            .collect();
        let mut read = read_all(&others, spelling).into_iter();
        for p in &files {
            match named.get(p.as_os_str()) {
                Some(&k) => out.push(Part::Named(k)),
                None => {
                    if let Some(Some(ctx)) = read.next() {
                        out.push(Part::Other(ctx));
                    }
                }
            }
        }
    }
    out
}

/// The first pass over each of `files`, on every core: `None` for a file that says nothing
/// (most) or cannot be read (it is not the run's to report).
fn read_all(files: &[&Path], spelling: &Spelling) -> Vec<Option<RunContext>> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(files.len().div_ceil(64).max(1));
    if threads <= 1 {
        let mut buf = Vec::new();
        return (files.iter())
            .map(|p| read_one(p, spelling, &mut buf))
            .collect();
    }
    let chunk = files.len().div_ceil(threads);
    std::thread::scope(|s| {
        let handles: Vec<_> = (files.chunks(chunk))
            .map(|part| {
                s.spawn(move || {
                    let mut buf = Vec::new();
                    (part.iter())
                        .map(|p| read_one(p, spelling, &mut buf))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        (handles.into_iter())
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    })
}

/// Files up to this size are read whole into the thread's buffer.
const WHOLE: u64 = 1 << 20;

/// The first pass over one file, when it spells a word of the context; places name it as
/// the run names its inputs.
fn read_one(path: &Path, spelling: &Spelling, buf: &mut Vec<u8>) -> Option<RunContext> {
    // Opened from the working directory when it is under it: the kernel looks up fewer
    // names (the lookups are the most of what `open` costs here). The run's spelling is
    // that of the process's working directory (`files::run`), which never changes.
    let near = (spelling.cwd())
        .and_then(|cwd| path.strip_prefix(cwd).ok())
        .filter(|r| !r.as_os_str().is_empty())
        .unwrap_or(path);
    let mut f = std::fs::File::open(near).ok()?;
    buf.clear();
    (&mut f).take(WHOLE).read_to_end(buf).ok()?;
    let name = || -> Arc<str> { spelling.display(path).into() };
    if (buf.len() as u64) < WHOLE {
        if !crate::manifest_versions::batch_may_hold(buf) {
            return None;
        }
        return Some(stream::first_pass(
            stream::Reader::new(&buf[..]),
            Some(name()),
        ));
    }
    // A large file: searched as a stream, then read again.
    if !stream::spells_context((&buf[..]).chain(f)) {
        return None;
    }
    let f = source::open(&Origin::File(path.to_path_buf())).ok()?;
    Some(stream::first_pass(stream::Reader::new(f), Some(name())))
}

#[cfg(test)]
mod tests {
    use super::root_of;
    use std::fs;

    #[test]
    fn the_root_is_the_outermost_config_in_a_work_tree_else_its_top() {
        let t = tempfile::tempdir().expect("tempdir");
        let top = t.path().join("repo");
        let deep = top.join("team/jobs/batch");
        fs::create_dir_all(&deep).expect("mkdir");
        // Outside a work tree and without a config: no project.
        assert_eq!(root_of(&deep), None);
        // Outside a work tree: the nearest config.
        fs::write(top.join(".meshjob.yaml"), "").expect("write");
        fs::write(top.join("team/.meshjob.yaml"), "").expect("write");
        assert_eq!(root_of(&deep), Some(top.join("team")));
        // In a work tree (a `.git` file, as a linked worktree has): the outermost config
        // in it.
        fs::write(top.join(".git"), "gitdir: elsewhere\n").expect("write");
        assert_eq!(root_of(&deep), Some(top.clone()));
        // A config above the work tree is not the project's.
        fs::remove_file(top.join(".git")).expect("rm");
        fs::create_dir(top.join("team/.git")).expect("mkdir");
        assert_eq!(root_of(&deep), Some(top.join("team")));
        fs::remove_file(top.join("team/.meshjob.yaml")).expect("rm");
        assert_eq!(root_of(&deep), Some(top.join("team")));
    }
}
