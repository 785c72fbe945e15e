//! Runs one command-line case of `testdata/cli/` (its layout is in testdata/README.md): lays
//! out the `[before]` tree in a fresh directory, runs each `[[step]]` there and compares its
//! exit status, stdout and stderr byte for byte, then compares the whole tree with `[before]`
//! overlaid by `[after]`. When updating, it writes what it saw back into the case file
//! instead, keeping the file's comments and layout.
//!
//! Three things are written as placeholders, in the outputs and in `[after]`: the sandbox's
//! path `[ROOT]`, the binary's path `[BIN]`, and the body of a wrapper script (the lines after
//! its `# meshjob-wrapper v…` marker, to the end of the block) `[WRAPPER BODY]`. The golden
//! cases pin the script byte for byte; here it would bury what each case is about.

use crate::common::{self, golden, hosts};
use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::{Component, Path};
use std::process::Command;
use std::time::Duration;
use toml_edit::{DocumentMut, InlineTable, Item, Table, Value};

/// A step that runs longer has hung; the longest takes well under a second.
const LIMIT: Duration = Duration::from_secs(60);

const CASE_KEYS: &[&str] = &["before", "step", "after"];
const STEP_KEYS: &[&str] = &[
    "args", "cwd", "argv0", "stdin", "status", "stdout", "stderr", "write", "remove",
];

/// A file of the tree: its bytes, or the target of a symbolic link.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Entry {
    File(Vec<u8>),
    Link(String),
}

/// Relative path (with `/`) to entry.
type Tree = BTreeMap<String, Entry>;

/// The sandbox's path and the binary's, written `[ROOT]` and `[BIN]` in a case so that the
/// case reads the same wherever it runs.
struct Places {
    root: String,
    bin: String,
}

impl Places {
    fn redact(&self, bytes: &[u8]) -> Vec<u8> {
        let text = replace(bytes, self.bin.as_bytes(), b"[BIN]");
        let text = replace(&text, self.root.as_bytes(), b"[ROOT]");
        match String::from_utf8(text) {
            Ok(text) => wrapper_bodies(&text).into_bytes(),
            Err(e) => e.into_bytes(),
        }
    }

    fn expand(&self, text: &str) -> String {
        text.replace("[ROOT]", &self.root)
            .replace("[BIN]", &self.bin)
    }
}

const MARKER: &str = "# meshjob-wrapper v";
const BODY: &str = "[WRAPPER BODY]";

/// `text` with the lines after each wrapper marker line that start as the marker line does
/// (the same diff sign and indentation, or deeper) replaced by one placeholder line.
fn wrapper_bodies(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut lines = text.split_inclusive('\n').peekable();
    while let Some(line) = lines.next() {
        out.push_str(line);
        let Some(at) = line.find(MARKER) else {
            continue;
        };
        let lead = &line[..at];
        if !lead
            .trim_start_matches(['+', '-'])
            .chars()
            .all(|c| c == ' ')
        {
            continue;
        }
        let mut last = None;
        while let Some(l) =
            lines.next_if(|l| l.starts_with(lead) && l.trim_end().len() > lead.len())
        {
            last = Some(l);
        }
        if let Some(last) = last {
            out.push_str(lead);
            out.push_str(BODY);
            if last.ends_with('\n') {
                out.push('\n');
            }
        }
    }
    out
}

fn replace(haystack: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(haystack.len());
    let mut i = 0;
    while i < haystack.len() {
        if haystack[i..].starts_with(from) {
            out.extend_from_slice(to);
            i += from.len();
        } else {
            out.push(haystack[i]);
            i += 1;
        }
    }
    out
}

/// Runs the case at `path`; returns what failed, one message each.
pub fn run(path: &Path) -> Vec<String> {
    let name = path
        .strip_prefix(common::root())
        .unwrap_or(path)
        .display()
        .to_string();
    match run_case(path) {
        Ok(failures) => failures
            .into_iter()
            .map(|f| format!("{name}: {f}"))
            .collect(),
        Err(e) => vec![format!("{name}: {e}")],
    }
}

fn run_case(path: &Path) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let mut doc: DocumentMut = text.parse().map_err(|e| format!("not TOML: {e}"))?;
    known_keys(doc.as_table(), CASE_KEYS, "the case")?;
    let sandbox = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = std::fs::canonicalize(sandbox.path()).map_err(|e| e.to_string())?;
    let bin = std::fs::canonicalize(common::bin()).map_err(|e| e.to_string())?;
    let places = Places {
        root: root.display().to_string(),
        bin: bin.display().to_string(),
    };
    let mut expected = tree_of(doc.get("before"), "before")?;
    for (rel, entry) in &expected {
        put(&root, rel, entry)?;
    }
    let mut failures = run_steps(&mut doc, &root, &places, &mut expected)?;

    // Files that `[after]` does not list must be left as they were, byte for byte; those
    // it lists are compared with their placeholders in.
    let actual = read_tree(&root)?;
    let shown = |entry: &Entry| match entry {
        Entry::File(bytes) => Entry::File(places.redact(bytes)),
        Entry::Link(target) => {
            Entry::Link(String::from_utf8_lossy(&places.redact(target.as_bytes())).into_owned())
        }
    };
    if let Some(gone) = expected.keys().find(|k| !actual.contains_key(*k)) {
        failures.push(format!("{gone} was removed, which [after] cannot say"));
    }
    if golden::updating() {
        let after: Tree = (actual.iter())
            .filter(|(rel, entry)| expected.get(*rel) != Some(entry))
            .map(|(rel, entry)| (rel.clone(), shown(entry)))
            .collect();
        set_after(&mut doc, &after)?;
        let new = doc.to_string();
        if new != text {
            std::fs::write(path, new).map_err(|e| e.to_string())?;
        }
        return Ok(failures);
    }
    let after = tree_of(doc.get("after"), "after")?;
    for (rel, have) in &actual {
        let failure = match (after.get(rel), expected.get(rel)) {
            (Some(want), _) => differs(rel, want, &shown(have)),
            (None, Some(want)) => differs(rel, want, have),
            (None, None) => Some(format!(
                "{rel} appeared, and [after] does not list it (set {}=1 to record it)",
                golden::UPDATE_ENV
            )),
        };
        failures.extend(failure);
    }
    for rel in after.keys().filter(|k| !actual.contains_key(*k)) {
        failures.push(format!("{rel} is in [after] but not on disk"));
    }
    Ok(failures)
}

/// Runs the steps in order, keeping `expected` in step with the edits; compares each
/// command's status and streams, or records them when updating.
fn run_steps(
    doc: &mut DocumentMut,
    root: &Path,
    places: &Places,
    expected: &mut Tree,
) -> Result<Vec<String>, String> {
    let steps = doc
        .get_mut("step")
        .and_then(Item::as_array_of_tables_mut)
        .ok_or("no [[step]]")?;
    let mut failures = Vec::new();
    let mut commands = 0;
    for (i, step) in steps.iter_mut().enumerate() {
        let at = format!("step {}", i + 1);
        known_keys(step, STEP_KEYS, &at)?;
        if step.contains_key("write") || step.contains_key("remove") {
            edit(step, root, expected).map_err(|e| format!("{at}: {e}"))?;
            continue;
        }
        commands += 1;
        let (shown, run) = command(step, root, places).map_err(|e| format!("{at}: {e}"))?;
        let at = format!("{at} ({shown})");
        let stdout = places.redact(&run.stdout);
        let stderr = places.redact(&run.stderr);
        if golden::updating() {
            record(step, run.code, &stdout, &stderr).map_err(|e| format!("{at}: {e}"))?;
            continue;
        }
        let want = match step.get("status") {
            None => 0,
            Some(item) => item
                .as_integer()
                .ok_or_else(|| format!("{at}: `status` is not a number"))?,
        };
        if want != i64::from(run.code) {
            failures.push(format!(
                "{at}: exit status {} instead of {want}\n{}",
                run.code,
                run.show()
            ));
        }
        for (key, actual) in [("stdout", &stdout), ("stderr", &stderr)] {
            let want = text_of(step, key, &at)?;
            if want.as_bytes() != actual.as_slice() {
                let what = format!("{at}: {key}");
                failures.push(golden::mismatch(&what, want.as_bytes(), actual));
            }
        }
    }
    if commands == 0 {
        return Err("no step runs meshjob".into());
    }
    Ok(failures)
}

fn differs(rel: &str, want: &Entry, have: &Entry) -> Option<String> {
    match (want, have) {
        (w, h) if w == h => None,
        (Entry::File(w), Entry::File(h)) => Some(golden::mismatch(&format!("file {rel}"), w, h)),
        (w, h) => Some(format!("{rel} is {h:?}, not {w:?}")),
    }
}

/// Errors on a key the case format does not have, so that a misspelt `stdrr` cannot leave
/// an output unchecked.
fn known_keys(table: &Table, known: &[&str], what: &str) -> Result<(), String> {
    match table.iter().find(|(k, _)| !known.contains(k)) {
        Some((k, _)) => Err(format!(
            "{what} has an unknown key `{k}` (known: {known:?})"
        )),
        None => Ok(()),
    }
}

/// A string value of `step`, where an absent key means the empty string.
fn text_of<'t>(step: &'t Table, key: &str, at: &str) -> Result<&'t str, String> {
    match step.get(key) {
        None => Ok(""),
        Some(item) => item
            .as_str()
            .ok_or_else(|| format!("{at}: `{key}` is not a string")),
    }
}

/// Runs the step's command in the sandbox; returns how to show it and what it gave.
fn command(step: &Table, root: &Path, places: &Places) -> Result<(String, common::Run), String> {
    let args: Vec<String> = match step.get("args") {
        None => Vec::new(),
        Some(item) => item
            .as_array()
            .ok_or("`args` is not an array")?
            .iter()
            .map(|v| v.as_str().map(|s| places.expand(s)))
            .collect::<Option<_>>()
            .ok_or("`args` holds something other than strings")?,
    };
    let cwd = root.join(text_of(step, "cwd", "")?);
    std::fs::create_dir_all(&cwd).map_err(|e| format!("cannot make the cwd: {e}"))?;
    let mut cmd = Command::new(common::bin());
    cmd.current_dir(&cwd)
        .args(&args)
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR_FORCE")
        .env_remove("MESHJOB_TEST_WRITE_HOOK")
        .env_remove("GITHUB_ACTIONS");
    let argv0 = text_of(step, "argv0", "")?;
    if !argv0.is_empty() {
        cmd.arg0(argv0);
    }
    let stdin = text_of(step, "stdin", "")?.as_bytes();
    let run = common::Run::from(hosts::run_bounded(&mut cmd, stdin, LIMIT));
    let program = if argv0.is_empty() { "meshjob" } else { argv0 };
    Ok((format!("{program} {}", args.join(" ")), run))
}

/// Applies a `write`/`remove` step to the sandbox and to the tree the case expects.
fn edit(step: &Table, root: &Path, expected: &mut Tree) -> Result<(), String> {
    if step.contains_key("args") {
        return Err("a step either runs meshjob or edits files, not both".into());
    }
    for (rel, entry) in tree_of(step.get("write"), "write")? {
        put(root, &rel, &entry)?;
        expected.insert(rel, entry);
    }
    for rel in step
        .get("remove")
        .and_then(Item::as_array)
        .into_iter()
        .flatten()
    {
        let rel = rel
            .as_str()
            .ok_or("`remove` holds something other than strings")?;
        std::fs::remove_file(root.join(checked(rel)?))
            .map_err(|e| format!("cannot remove {rel}: {e}"))?;
        expected.remove(rel);
    }
    Ok(())
}

/// A relative path that stays inside the sandbox.
fn checked(rel: &str) -> Result<&Path, String> {
    let p = Path::new(rel);
    if rel.is_empty() || !p.components().all(|c| matches!(c, Component::Normal(_))) {
        return Err(format!("`{rel}` is not a plain relative path"));
    }
    Ok(p)
}

/// The tree a table describes: `"path" = "text"` for a file, `"path" = { link = "target" }`
/// for a symbolic link.
fn tree_of(item: Option<&Item>, what: &str) -> Result<Tree, String> {
    let Some(item) = item else {
        return Ok(Tree::new());
    };
    let table = item
        .as_table_like()
        .ok_or_else(|| format!("[{what}] is not a table"))?;
    let mut tree = Tree::new();
    for (rel, value) in table.iter() {
        checked(rel)?;
        let entry = if let Some(text) = value.as_str() {
            Entry::File(text.as_bytes().to_vec())
        } else if let Some(target) = value
            .as_table_like()
            .filter(|t| t.len() == 1)
            .and_then(|t| t.get("link"))
            .and_then(Item::as_str)
        {
            Entry::Link(target.to_string())
        } else {
            return Err(format!(
                "[{what}] `{rel}` is neither text nor {{ link = \"target\" }}"
            ));
        };
        tree.insert(rel.to_string(), entry);
    }
    Ok(tree)
}

fn put(root: &Path, rel: &str, entry: &Entry) -> Result<(), String> {
    let path = root.join(checked(rel)?);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("cannot make {rel}: {e}"))?;
    }
    let _ = std::fs::remove_file(&path);
    match entry {
        Entry::File(bytes) => std::fs::write(&path, bytes),
        Entry::Link(target) => std::os::unix::fs::symlink(target, &path),
    }
    .map_err(|e| format!("cannot make {rel}: {e}"))
}

/// Every file and link under `root` (directories are not entries), links not followed.
fn read_tree(root: &Path) -> Result<Tree, String> {
    let mut tree = Tree::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).map_err(|e| format!("{}: {e}", dir.display()))? {
            let path = e.map_err(|e| e.to_string())?.path();
            let meta = std::fs::symlink_metadata(&path).map_err(|e| e.to_string())?;
            let rel = path
                .strip_prefix(root)
                .map_err(|e| e.to_string())?
                .to_string_lossy()
                .into_owned();
            if meta.is_dir() {
                stack.push(path);
            } else if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).map_err(|e| e.to_string())?;
                tree.insert(rel, Entry::Link(target.to_string_lossy().into_owned()));
            } else {
                let bytes = std::fs::read(&path).map_err(|e| format!("{rel}: {e}"))?;
                tree.insert(rel, Entry::File(bytes));
            }
        }
    }
    Ok(tree)
}

/// Writes what a step gave into it: `status` always, each stream only when not empty.
fn record(step: &mut Table, code: i32, stdout: &[u8], stderr: &[u8]) -> Result<(), String> {
    step.insert("status", toml_edit::value(i64::from(code)));
    for (key, bytes) in [("stdout", stdout), ("stderr", stderr)] {
        if bytes.is_empty() {
            step.remove(key);
            continue;
        }
        let text =
            std::str::from_utf8(bytes).map_err(|_| format!("{key} is not UTF-8: cannot record"))?;
        step.insert(key, Item::Value(toml_text(text)?));
    }
    Ok(())
}

fn set_after(doc: &mut DocumentMut, after: &Tree) -> Result<(), String> {
    if after.is_empty() {
        doc.remove("after");
        return Ok(());
    }
    let mut table = Table::new();
    for (rel, entry) in after {
        let value = match entry {
            Entry::File(bytes) => {
                toml_text(std::str::from_utf8(bytes).map_err(|_| format!("{rel} is not UTF-8"))?)?
            }
            Entry::Link(target) => {
                let mut t = InlineTable::new();
                t.insert("link", target.as_str().into());
                Value::InlineTable(t)
            }
        };
        table.insert(rel, Item::Value(value));
    }
    doc.insert("after", Item::Table(table));
    Ok(())
}

/// `text` as a TOML string that reads like the text itself: a literal `'''` block where the
/// text allows one, else a `"""` block with escapes, or a one-line string.
fn toml_text(text: &str) -> Result<Value, String> {
    let plain = |c: char| c == '\n' || c == '\t' || !c.is_control();
    let source = if !text.contains('\n') {
        return Ok(text.into());
    } else if !text.contains("'''") && text.chars().all(plain) {
        format!("'''\n{text}'''")
    } else {
        let mut s = String::from("\"\"\"\n");
        for c in text.chars() {
            match c {
                '\\' => s.push_str("\\\\"),
                '"' => s.push_str("\\\""),
                c if plain(c) => s.push(c),
                c => s.push_str(&format!("\\u{:04X}", u32::from(c))),
            }
        }
        s.push_str("\"\"\"");
        s
    };
    let mut value: Value = source
        .parse()
        .map_err(|e| format!("cannot write {text:?} as TOML: {e}"))?;
    value.decor_mut().clear();
    Ok(value)
}
