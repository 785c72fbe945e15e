//! Exclude patterns (`--exclude GLOB`, config `exclude`): which files and directories a run
//! leaves out.
//!
//! The rules follow `.gitignore` and ruff, in a small subset:
//! - a pattern without `/` matches a file or directory *name* at any depth (`legacy`,
//!   `*.generated.yaml`);
//! - a pattern with `/` is matched against the path relative to its base directory (the
//!   working directory for a flag, the config file's directory for the config), from the
//!   start (`k8s/skip-*.yaml`, `vendor/**`); a leading `/` is allowed and changes nothing;
//! - a trailing `/` matches directories only;
//! - `*` matches any run of characters within a name, `?` one character, `[abc]`, `[a-z]`
//!   and `[!a]` one character of a set, and a whole-name `**` any number of names;
//! - a pattern that matches a directory excludes everything below it.

use std::path::{Component, Path, PathBuf};

/// One pattern, with the directory it is relative to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Pattern {
    /// The text as written, for messages.
    pub text: String,
    base: PathBuf,
    /// Names to match; one name for an unanchored pattern.
    parts: Vec<String>,
    anchored: bool,
    dir_only: bool,
}

impl Pattern {
    /// Parses `text` relative to `base` (an absolute directory).
    pub(crate) fn new(text: &str, base: &Path) -> Result<Pattern, String> {
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err("an exclude pattern may not be empty".into());
        }
        let dir_only = trimmed.ends_with('/');
        let body = trimmed.trim_end_matches('/');
        let anchored = body.contains('/');
        let body = body.trim_start_matches('/');
        let parts: Vec<String> = body
            .split('/')
            .filter(|p| !p.is_empty() && *p != ".")
            .map(String::from)
            .collect();
        if parts.is_empty() {
            return Err(format!("exclude pattern `{text}` matches nothing"));
        }
        if parts.iter().any(|p| p == "..") {
            return Err(format!(
                "exclude pattern `{text}`: `..` is not allowed; patterns are relative to {}",
                base.display()
            ));
        }
        for p in &parts {
            check_classes(p).map_err(|m| format!("exclude pattern `{text}`: {m}"))?;
        }
        Ok(Pattern {
            text: text.to_string(),
            base: base.to_path_buf(),
            parts,
            anchored,
            dir_only,
        })
    }

    /// Whether the pattern excludes `path` (absolute, normalized), a directory when `is_dir`.
    pub(crate) fn matches(&self, path: &Path, is_dir: bool) -> bool {
        let Ok(rel) = path.strip_prefix(&self.base) else {
            return false;
        };
        let names: Vec<&str> = rel
            .components()
            .filter_map(|c| match c {
                Component::Normal(n) => n.to_str(),
                _ => None,
            })
            .collect();
        // The k-th name stands for a directory unless it is the last one of a file.
        let dir_at = |k: usize| k + 1 < names.len() || is_dir;
        if !self.anchored {
            return names
                .iter()
                .enumerate()
                .any(|(k, n)| name_matches(&self.parts[0], n) && (!self.dir_only || dir_at(k)));
        }
        (1..=names.len())
            .any(|k| parts_match(&self.parts, &names[..k]) && (!self.dir_only || dir_at(k - 1)))
    }
}

/// Whether the pattern names `parts` match the path names `names` exactly.
fn parts_match(parts: &[String], names: &[&str]) -> bool {
    match parts.split_first() {
        None => names.is_empty(),
        Some((p, rest)) if p == "**" => {
            (0..=names.len()).any(|skip| parts_match(rest, &names[skip..]))
        }
        Some((p, rest)) => match names.split_first() {
            Some((n, more)) => name_matches(p, n) && parts_match(rest, more),
            None => false,
        },
    }
}

/// Whether one name matches one pattern name (`*`, `?`, `[...]`).
fn name_matches(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    // Iterative wildcard matching with one backtrack point for the last `*`.
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < n.len() {
        if i < p.len() && p[i] == '*' {
            star = Some((i, j));
            i += 1;
            continue;
        }
        if i < p.len() {
            let step = match p[i] {
                '?' => Some(1),
                '[' => class_matches(&p[i..], n[j]),
                c => (c == n[j]).then_some(1),
            };
            if let Some(len) = step {
                i += len;
                j += 1;
                continue;
            }
        }
        match star {
            Some((si, sj)) => {
                i = si + 1;
                j = sj + 1;
                star = Some((si, sj + 1));
            }
            None => return false,
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

/// Matches a `[...]` class at the start of `p` against `c`: the pattern length on a match.
fn class_matches(p: &[char], c: char) -> Option<usize> {
    let close = p.iter().skip(2).position(|&x| x == ']')? + 2;
    let body = &p[1..close];
    let (negate, body) = match body.first() {
        Some('!') => (true, &body[1..]),
        _ => (false, body),
    };
    let mut hit = false;
    let mut k = 0;
    while k < body.len() {
        if k + 2 < body.len() && body[k + 1] == '-' {
            hit |= body[k] <= c && c <= body[k + 2];
            k += 3;
        } else {
            hit |= body[k] == c;
            k += 1;
        }
    }
    (hit != negate).then_some(close + 1)
}

fn check_classes(part: &str) -> Result<(), String> {
    let chars: Vec<char> = part.chars().collect();
    let mut k = 0;
    while k < chars.len() {
        if chars[k] == '[' {
            match chars.iter().skip(k + 2).position(|&x| x == ']') {
                Some(off) => k += off + 3,
                None => return Err("`[` without a closing `]`".into()),
            }
        } else {
            k += 1;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pat(t: &str) -> Pattern {
        Pattern::new(t, Path::new("/repo")).expect("pattern")
    }

    fn m(t: &str, path: &str, is_dir: bool) -> bool {
        pat(t).matches(Path::new(path), is_dir)
    }

    #[test]
    fn names_match_at_any_depth() {
        assert!(m("legacy", "/repo/legacy", true));
        assert!(m("legacy", "/repo/a/legacy/x.yaml", false));
        assert!(m("*.gen.yaml", "/repo/a/x.gen.yaml", false));
        assert!(!m("*.gen.yaml", "/repo/a/x.yaml", false));
        assert!(!m("legacy", "/elsewhere/legacy/x.yaml", false));
        assert!(m("legacy/", "/repo/legacy/x.yaml", false));
        assert!(!m("legacy/", "/repo/legacy", false), "a file named legacy");
    }

    #[test]
    fn slashes_anchor_at_the_base() {
        assert!(m("k8s/skip-*.yaml", "/repo/k8s/skip-me.yaml", false));
        assert!(!m("k8s/skip-*.yaml", "/repo/x/k8s/skip-me.yaml", false));
        assert!(m("/k8s", "/repo/k8s/a/b.yaml", false));
        assert!(m("legacy/**", "/repo/legacy/deep/old.yaml", false));
        assert!(!m("legacy/**", "/repo/other/legacy/old.yaml", false));
        assert!(m("**/gen/*.yaml", "/repo/a/b/gen/x.yaml", false));
        assert!(m("**/gen/*.yaml", "/repo/gen/x.yaml", false));
        assert!(m("a/*/c", "/repo/a/b/c/d.yaml", false));
        assert!(!m("a/*/c", "/repo/a/b/x/c", false));
    }

    #[test]
    fn wildcards_and_classes() {
        assert!(name_matches("*", ""));
        assert!(name_matches("a*b*c", "aXXbYbc"));
        assert!(!name_matches("a*b*c", "aXXbYbd"));
        assert!(name_matches("job-?.yaml", "job-1.yaml"));
        assert!(name_matches("job-[0-9].yaml", "job-7.yaml"));
        assert!(!name_matches("job-[!0-9].yaml", "job-7.yaml"));
        assert!(name_matches("job-[!0-9].yaml", "job-x.yaml"));
        assert!(Pattern::new("a[b", Path::new("/")).is_err());
        assert!(Pattern::new("../x", Path::new("/")).is_err());
        assert!(Pattern::new(" ", Path::new("/")).is_err());
    }
}
