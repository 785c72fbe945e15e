//! Unified-diff hunks built as the text goes by, so that a diff of a stream needs neither
//! text whole.
//!
//! The caller feeds, in order, spans of lines that are the same on both sides and the line
//! diffs of the pieces that changed ([`Hunks::equal`], [`Hunks::change`]). Hunks get three lines of
//! context and merge when at most six equal lines part them, as `similar`'s `grouped_ops(3)`
//! does for a whole text; a hunk is held until it closes, since its header needs its length.

use similar::{ChangeTag, TextDiff};
use std::collections::VecDeque;
use std::fmt::Write;

/// Lines of context around a change.
const CONTEXT: usize = 3;

/// One line of a hunk in the making.
struct Open {
    /// 0-based first line of the hunk on each side.
    old_start: usize,
    new_start: usize,
    old_len: usize,
    new_len: usize,
    body: String,
    /// Equal lines since the last change, not yet in `body`.
    tail: VecDeque<String>,
}

/// Hunks of one file, written into a `String` as they close.
pub struct Hunks {
    header: String,
    header_written: bool,
    /// 0-based number of the next line on each side.
    old_line: usize,
    new_line: usize,
    /// The last equal lines before the next change, when no hunk is open.
    before: VecDeque<String>,
    open: Option<Open>,
}

fn push_line(body: &mut String, sign: char, line: &str) {
    body.push(sign);
    body.push_str(line);
    if !line.ends_with('\n') {
        body.push_str("\n\\ No newline at end of file\n");
    }
}

/// `similar`'s range format: `start,len`, `start` alone for one line, the line before for none.
fn range(start: usize, len: usize) -> String {
    match len {
        1 => format!("{}", start + 1),
        0 => format!("{start},0"),
        _ => format!("{},{len}", start + 1),
    }
}

impl Hunks {
    /// Hunks for `path`, shown as `a/PATH` and `b/PATH` as `diff::unified` shows it (no
    /// leading `./` or `/`; control characters quoted as git quotes them).
    pub fn new(path: &str) -> Self {
        // An absolute name loses its leading `/` behind `a/` (see `crate::paths`); a name
        // with control characters is quoted as git quotes it. A name that is not UTF-8
        // (spelled quoted, see `crate::paths::raw`) is written as git writes it: quoted, its
        // bytes that are not ASCII in octal, which `git apply` reads back.
        let raw = crate::paths::raw(path);
        let (a, b) = match std::str::from_utf8(&raw) {
            Ok(path) => {
                let name = crate::paths::diff_name(path.trim_start_matches("./"));
                let (a, b) = (format!("a/{name}"), format!("b/{name}"));
                let (a, b) = (super::escape::diff_path(&a), super::escape::diff_path(&b));
                (a.into_owned(), b.into_owned())
            }
            Err(_) => {
                let mut name: &[u8] = &raw;
                while let Some(rest) = name.strip_prefix(b"./") {
                    name = rest;
                }
                while let Some(rest) = name.strip_prefix(b"/") {
                    name = rest;
                }
                let side = |s: &[u8]| crate::paths::quoted(&[s, name].concat());
                (side(b"a/"), side(b"b/"))
            }
        };
        Hunks {
            header: format!("--- {a}\n+++ {b}\n"),
            header_written: false,
            old_line: 0,
            new_line: 0,
            before: VecDeque::with_capacity(CONTEXT + 1),
            open: None,
        }
    }

    /// Lines that are the same on both sides (whole lines, as split at `\n`).
    pub fn equal(&mut self, mut text: &str, out: &mut String) {
        while self.open.is_some() && !text.is_empty() {
            let end = memchr::memchr(b'\n', text.as_bytes()).map_or(text.len(), |i| i + 1);
            self.equal_line(&text[..end], out);
            text = &text[end..];
        }
        if text.is_empty() {
            return;
        }
        // No hunk open: only the count and the last lines matter.
        let count = memchr::memchr_iter(b'\n', text.as_bytes()).count()
            + usize::from(!text.ends_with('\n'));
        self.old_line += count;
        self.new_line += count;
        let mut last: Vec<&str> = text.split_inclusive('\n').rev().take(CONTEXT).collect();
        last.reverse();
        for l in last {
            self.remember(l);
        }
    }

    fn remember(&mut self, line: &str) {
        if self.before.len() == CONTEXT {
            self.before.pop_front();
        }
        self.before.push_back(line.to_string());
    }

    fn equal_line(&mut self, line: &str, out: &mut String) {
        self.old_line += 1;
        self.new_line += 1;
        let Some(open) = &mut self.open else {
            self.remember(line);
            return;
        };
        open.tail.push_back(line.to_string());
        if open.tail.len() > 2 * CONTEXT {
            // Too far from the next change: close with three lines of context, and keep the
            // last three for the next hunk.
            let mut tail = std::mem::take(&mut open.tail);
            self.close_with(&mut tail, out);
            self.before = tail.split_off(tail.len() - CONTEXT);
        }
    }

    /// Closes the open hunk, with up to three lines of `tail` as its last context.
    fn close_with(&mut self, tail: &mut VecDeque<String>, out: &mut String) {
        let Some(mut open) = self.open.take() else {
            return;
        };
        for line in tail.drain(..tail.len().min(CONTEXT)) {
            push_line(&mut open.body, ' ', &line);
            open.old_len += 1;
            open.new_len += 1;
        }
        if !self.header_written {
            out.push_str(&self.header);
            self.header_written = true;
        }
        let _ = writeln!(
            out,
            "@@ -{} +{} @@",
            range(open.old_start, open.old_len),
            range(open.new_start, open.new_len)
        );
        out.push_str(&open.body);
    }

    /// A changed line: opens a hunk, or takes the equal lines since the last change into it.
    fn changed_line(&mut self, sign: char, line: &str) {
        let open = self.open.get_or_insert_with(|| {
            let before = std::mem::take(&mut self.before);
            let mut open = Open {
                old_start: self.old_line - before.len(),
                new_start: self.new_line - before.len(),
                old_len: 0,
                new_len: 0,
                body: String::new(),
                tail: before,
            };
            open.tail.reserve(2 * CONTEXT + 1);
            open
        });
        for l in open.tail.drain(..) {
            push_line(&mut open.body, ' ', &l);
            open.old_len += 1;
            open.new_len += 1;
        }
        push_line(&mut open.body, sign, line);
        if sign == '-' {
            open.old_len += 1;
            self.old_line += 1;
        } else {
            open.new_len += 1;
            self.new_line += 1;
        }
    }

    /// A piece that changed from `old` to `new`: its line diff (Myers, lines ending at `\n`
    /// only, as `patch` and `git apply` count them: a lone `\r` is not a line break).
    pub fn change(&mut self, old: &str, new: &str, out: &mut String) {
        let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
        let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
        let diff = TextDiff::configure()
            .algorithm(similar::Algorithm::Myers)
            .diff_slices(&old_lines, &new_lines);
        for op in diff.ops() {
            for change in diff.iter_changes(op) {
                let line: &str = change.value();
                match change.tag() {
                    ChangeTag::Equal => self.equal_line(line, out),
                    ChangeTag::Delete => self.changed_line('-', line),
                    ChangeTag::Insert => self.changed_line('+', line),
                }
            }
        }
    }

    /// Closes the last hunk. The output is empty when nothing changed.
    pub fn finish(mut self, out: &mut String) {
        if let Some(open) = &mut self.open {
            let mut tail = std::mem::take(&mut open.tail);
            self.close_with(&mut tail, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(old: &str, new: &str) -> String {
        let mut out = String::new();
        let mut h = Hunks::new("x");
        h.change(old, new, &mut out);
        h.finish(&mut out);
        out
    }

    /// `similar`'s own grouping (`grouped_ops(3)`) over a whole text, rendered the same way.
    fn oracle(old: &str, new: &str) -> String {
        let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
        let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
        let diff = TextDiff::configure()
            .algorithm(similar::Algorithm::Myers)
            .diff_slices(&old_lines, &new_lines);
        let mut out = String::new();
        for (i, ops) in diff.grouped_ops(CONTEXT).iter().enumerate() {
            if i == 0 {
                out.push_str("--- a/x\n+++ b/x\n");
            }
            let _ = writeln!(out, "{}", similar::udiff::UnifiedHunkHeader::new(ops));
            for op in ops {
                for change in diff.iter_changes(op) {
                    let sign = match change.tag() {
                        ChangeTag::Equal => ' ',
                        ChangeTag::Delete => '-',
                        ChangeTag::Insert => '+',
                    };
                    push_line(&mut out, sign, change.value());
                }
            }
        }
        out
    }

    #[test]
    fn hunks_equal_similars_grouping() {
        let base: Vec<String> = (1..=40).map(|i| format!("line {i}\n")).collect();
        let mut cases = Vec::new();
        // Changes at every distance from each other and from both ends.
        for a in 0..12 {
            for gap in 0..9 {
                let mut new = base.clone();
                new[a] = "changed a\n".into();
                let b = (a + gap + 1).min(39);
                new[b] = "changed b\n".into();
                new.insert(b + 1, "inserted\n".into());
                cases.push((base.concat(), new.concat()));
            }
        }
        let mut tail = base.clone();
        tail.pop();
        cases.push((base.concat(), tail.concat()));
        cases.push((base.concat(), format!("{}no newline", base.concat())));
        cases.push((String::new(), base.concat()));
        for (old, new) in cases {
            assert_eq!(whole(&old, &new), oracle(&old, &new), "{new}");
        }
    }

    #[test]
    fn context_and_merging() {
        let old: String = (1..=20).map(|i| format!("{i}\n")).collect();
        // Changes 7 lines apart make two hunks; 6 apart, one.
        let two = old
            .replace("3\n", "three\n")
            .replace("\n11\n", "\neleven\n");
        let d = whole(&old, &two);
        assert_eq!(d.matches("@@ ").count(), 2, "{d}");
        assert!(
            d.starts_with("--- a/x\n+++ b/x\n@@ -1,6 +1,6 @@\n 1\n 2\n-3\n+three\n"),
            "{d}"
        );
        let one = old.replace("3\n", "three\n").replace("\n10\n", "\nten\n");
        assert_eq!(whole(&old, &one).matches("@@ ").count(), 1);
        assert_eq!(whole(&old, &old), "");
    }

    #[test]
    fn equal_spans_between_pieces() {
        // The same change fed as equal span + changed piece + equal span.
        let (a, b, c) = ("1\n2\n3\n4\n", "x\ny\n", "5\n6\n7\n8\n");
        let mut out = String::new();
        let mut h = Hunks::new("x");
        h.equal(a, &mut out);
        h.change(b, "x\nY\n", &mut out);
        h.equal(c, &mut out);
        h.finish(&mut out);
        let all = whole(&format!("{a}{b}{c}"), &format!("{a}x\nY\n{c}"));
        assert_eq!(out, all);
        assert!(
            out.contains("@@ -3,7 +3,7 @@\n 3\n 4\n x\n-y\n+Y\n 5\n 6\n 7\n"),
            "{out}"
        );
    }

    #[test]
    fn empty_ranges_and_missing_newline() {
        assert!(whole("", "a\n").contains("@@ -0,0 +1 @@\n+a\n"));
        let d = whole("a\nb", "a\nc");
        assert!(d.contains("@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"), "{d}");
    }
}
