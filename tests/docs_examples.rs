//! The examples in the docs are real output. Every fenced ```diff block in README.md and
//! docs/*.md must be preceded by a marker naming its input and any extra flags:
//!
//! ```text
//! <!-- example: testdata/docs/job.yaml [FLAG...] -->
//! ```
//!
//! and is compared with `meshjob diff --color never FILE [FLAG...]`, run in the input's
//! directory. A block is either the whole diff (it starts with `--- a/`) or an excerpt of
//! it (consecutive lines of the real diff). A line that is only `...` after its diff sign
//! stands for one or more lines left out.
//!
//! The commands of the README's "Try it" block are also the ones `.ci/run` runs, so the
//! front page's promise is what CI checks.

mod common;

use common::root;
use std::path::{Path, PathBuf};

const MARKER: &str = "<!-- example: ";

fn doc_files() -> Vec<PathBuf> {
    let mut v = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    v.extend(docs);
    v
}

/// One diff block: where it is, its marker's words, and its lines.
struct Example {
    place: String,
    marker: Option<Vec<String>>,
    lines: Vec<String>,
}

fn examples(path: &Path) -> Vec<Example> {
    let text = std::fs::read_to_string(path).expect("read doc");
    let name = path
        .strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string();
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i] != "```diff" {
            i += 1;
            continue;
        }
        let marker = lines[..i]
            .iter()
            .rev()
            .find(|l| !l.trim().is_empty())
            .and_then(|l| l.strip_prefix(MARKER))
            .and_then(|l| l.strip_suffix(" -->"))
            .map(|m| m.split_whitespace().map(String::from).collect());
        let start = i + 1;
        let mut end = start;
        while end < lines.len() && lines[end] != "```" {
            end += 1;
        }
        out.push(Example {
            place: format!("{name}:{}", i + 1),
            marker,
            lines: lines[start..end].iter().map(|l| l.to_string()).collect(),
        });
        i = end + 1;
    }
    out
}

fn is_elision(line: &str) -> bool {
    line.len() > 1 && line[1..].trim() == "..."
}

/// Whether `want` (with elisions) matches consecutive lines of `got`, from its first line
/// when `anchored`.
fn matches(want: &[String], got: &[&str], anchored: bool) -> bool {
    let Some((first, rest)) = want.split_first() else {
        return true;
    };
    if is_elision(first) {
        // One or more lines left out: the rest matches from some later line on.
        return (1..=got.len()).any(|k| matches(rest, &got[k..], true));
    }
    let starts: Vec<usize> = if anchored {
        vec![0]
    } else {
        (0..got.len()).collect()
    };
    starts
        .into_iter()
        .any(|s| got.get(s).is_some_and(|g| g == first) && matches(rest, &got[s + 1..], true))
}

fn check(example: &Example) -> Result<(), String> {
    let Some(words) = &example.marker else {
        return Err(format!(
            "{}: a diff block without a `{MARKER}FILE [FLAG...] -->` line before it; every \
             example must be checked against real output",
            example.place
        ));
    };
    let Some((file, flags)) = words.split_first() else {
        return Err(format!("{}: the marker names no input file", example.place));
    };
    let input = root().join(file);
    let dir = input
        .parent()
        .filter(|_| input.is_file())
        .ok_or_else(|| format!("{}: the input {file} does not exist", example.place))?;
    let base = input.file_name().unwrap_or_default();
    let out = common::meshjob()
        .current_dir(dir)
        .args(["diff", "--color", "never"])
        .arg(base)
        .args(flags)
        .output()
        .map_err(|e| format!("cannot run meshjob: {e}"))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let got: Vec<&str> = stdout.lines().collect();
    let anchored = example
        .lines
        .first()
        .is_some_and(|l| l.starts_with("--- a/"));
    if out.status.code() == Some(0) && matches(&example.lines, &got, anchored) {
        Ok(())
    } else {
        Err(format!(
            "{}: the example is not what `meshjob diff {}` prints (exit {:?}).\n--- in the doc\n{}\n--- real output\n{stdout}{}",
            example.place,
            words.join(" "),
            out.status.code(),
            example.lines.join("\n"),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

#[test]
fn every_diff_example_is_real_output() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for path in doc_files() {
        for example in examples(&path) {
            match check(&example) {
                Ok(()) => checked += 1,
                Err(e) => failures.push(e),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(
        checked >= 5,
        "expected the diff examples of README.md and docs/"
    );
}

#[test]
fn the_matcher_rejects_what_is_not_there() {
    let got = ["--- a/x", "+++ b/x", "@@ -1 +1,3 @@", " a", "+b", "+c"];
    let want = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(matches(&want(&[" a", "+b"]), &got, false));
    assert!(
        !matches(&want(&[" a", "+c"]), &got, false),
        "not consecutive"
    );
    assert!(matches(&want(&["--- a/x", "+...", "+c"]), &got, true));
    assert!(
        !matches(&want(&["+++ b/x", "+c"]), &got, true),
        "anchored at the start"
    );
    assert!(
        !matches(&want(&[" a", "+b", "+c", "+d"]), &got, false),
        "too long"
    );
}

/// The README's "Try it" commands, which `.ci/run` must run too.
#[test]
fn ci_runs_the_readme_commands() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let ci = std::fs::read_to_string(root().join(".ci/run")).expect(".ci/run");
    let block = readme
        .split("## Try it")
        .nth(1)
        .and_then(|s| s.split("```sh\n").nth(1))
        .and_then(|s| s.split("```").next())
        .expect("a ```sh block under ## Try it");
    let commands: Vec<&str> = block
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(commands.len(), 2, "two commands: {commands:?}");
    for c in commands {
        // .ci/run may add flags such as --quiet after `cargo run --locked`.
        let words: Vec<&str> = c.split_whitespace().filter(|w| *w != "--").collect();
        let found = ci.lines().any(|l| {
            let l: Vec<&str> = l.split_whitespace().filter(|w| *w != "--").collect();
            words.iter().all(|w| l.contains(w))
        });
        assert!(found, ".ci/run does not run the README's `{c}`");
    }
}
