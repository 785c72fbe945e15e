//! Unified diffs with `a/PATH` and `b/PATH` headers, as `patch -p1` and `git apply` take.

use super::hunks::Hunks;

/// The unified diff from `old` to `new` for `path` (empty when they are equal).
pub fn unified(path: &str, old: &str, new: &str) -> String {
    let mut out = String::new();
    if old == new {
        return out;
    }
    let mut h = Hunks::new(path);
    h.change(old, new, &mut out);
    h.finish(&mut out);
    out
}

/// ANSI colours for a terminal: headers bold, removals red, additions green, hunks cyan.
pub(crate) fn colorize(diff: &str) -> String {
    let mut out = String::with_capacity(diff.len() + diff.len() / 4);
    for line in diff.split_inclusive('\n') {
        let (body, nl) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        let code = if body.starts_with("+++") || body.starts_with("---") {
            "1"
        } else if body.starts_with('+') {
            "32"
        } else if body.starts_with('-') {
            "31"
        } else if body.starts_with("@@") {
            "36"
        } else {
            ""
        };
        if code.is_empty() {
            out.push_str(line);
        } else {
            out.push_str(&format!("\x1b[{code}m{body}\x1b[0m{nl}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_and_missing_newline() {
        let d = unified("x.yaml", "a\nb", "a\nc");
        assert!(
            d.starts_with("--- a/x.yaml\n+++ b/x.yaml\n@@ -1,2 +1,2 @@\n"),
            "{d}"
        );
        assert!(d.contains("\\ No newline at end of file"), "{d}");
        assert_eq!(unified("x", "same", "same"), "");
    }

    #[test]
    fn a_lone_carriage_return_is_not_a_line_break() {
        // Found by fuzzing: the hunk must start at line 2 as patch counts lines.
        let d = unified("x", "a\rb\nc\nd\n", "a\rb\nc\nD\n");
        assert!(d.contains("@@ -1,3 +1,3 @@\n a\rb\n c\n-d\n+D\n"), "{d:?}");
    }
}
