//! Editor operations that take text out: an entry of a mapping, items of a sequence. They
//! undo what the inserting operations add, line for line, so that taking a fix out again
//! gives back the original bytes.

use super::Editor;
use crate::yaml::path::Seg;
use crate::yaml::text::{dash_before, line_start};
use crate::yaml::tree::Node;
use crate::yaml::value::Value;

impl Editor<'_> {
    /// Whether only spaces precede `at` on its line.
    pub(super) fn alone_on_line(&self, at: usize) -> bool {
        self.src[line_start(self.src, at)..at]
            .bytes()
            .all(|b| b == b' ')
    }

    /// Just past the line break that ends the line holding `at` (or the end of the text).
    pub(super) fn after_line(&self, at: usize) -> usize {
        self.src[at..]
            .find('\n')
            .map_or(self.src.len(), |i| at + i + 1)
    }

    /// Removes the entry `key` of mapping `map` (at `path`). A block entry goes with its
    /// lines. Returns false, changing nothing, when the entry is absent or is the only entry
    /// of a block mapping (the caller removes the mapping's own entry instead), or when its
    /// layout is not one meshjob can take out cleanly.
    pub fn remove_entry(&mut self, map: &Node, path: &[Seg], key: &str) -> bool {
        let Some(entries) = map.entries() else {
            return false;
        };
        let Some(i) = entries.iter().position(|e| e.key.as_str() == Some(key)) else {
            return false;
        };
        let e = &entries[i];
        let end_of = |e: &crate::yaml::tree::Entry| e.value.end.max(e.key.end);
        let range = if map.flow {
            match (i.checked_sub(1), entries.get(i + 1)) {
                (_, Some(next)) => e.key.props_start..next.key.props_start,
                (Some(prev), None) => end_of(&entries[prev])..end_of(e),
                (None, None) => e.key.props_start..end_of(e),
            }
        } else {
            if entries.len() == 1 {
                return false;
            }
            if self.alone_on_line(e.key.props_start) {
                line_start(self.src, e.key.props_start)..self.after_line(end_of(e))
            } else if let Some(next) = entries.get(i + 1) {
                // The first entry of a sequence item (`- key: v`): the next key moves up.
                e.key.props_start..next.key.props_start
            } else {
                return false;
            }
        };
        self.push(range.start, range.end, String::new());
        if let Some(v) = self.intended_at(path) {
            v.remove(key);
        }
        true
    }

    /// Removes the entries `keys` of mapping `map` (at `path`): in a flow mapping, each run of
    /// neighbouring entries goes as one piece of text, so that the edits do not overlap.
    /// Absent keys are skipped. False when some entry could not be removed (see
    /// [`Editor::remove_entry`]).
    pub fn remove_entries(&mut self, map: &Node, path: &[Seg], keys: &[&str]) -> bool {
        let Some(entries) = map.entries() else {
            return false;
        };
        let gone = |e: &crate::yaml::tree::Entry| e.key.as_str().is_some_and(|k| keys.contains(&k));
        if !map.flow {
            let mut ok = true;
            for e in entries.iter().filter(|e| gone(e)) {
                if let Some(k) = e.key.as_str() {
                    ok &= self.remove_entry(map, path, k);
                }
            }
            return ok;
        }
        let end_of = |e: &crate::yaml::tree::Entry| e.value.end.max(e.key.end);
        let mut i = 0;
        while i < entries.len() {
            if !gone(&entries[i]) {
                i += 1;
                continue;
            }
            let a = i;
            while i < entries.len() && gone(&entries[i]) {
                i += 1;
            }
            let range = match (a.checked_sub(1), entries.get(i)) {
                (_, Some(next)) => entries[a].key.props_start..next.key.props_start,
                (Some(prev), None) => end_of(&entries[prev])..end_of(&entries[i - 1]),
                (None, None) => entries[a].key.props_start..end_of(&entries[i - 1]),
            };
            self.push(range.start, range.end, String::new());
        }
        if let Some(v) = self.intended_at(path) {
            for k in keys {
                v.remove(k);
            }
        }
        true
    }

    /// Removes items `range` of sequence `seq` (at `path`); at least one item must stay.
    /// Returns false, changing nothing, when that is not possible cleanly.
    pub fn remove_items(
        &mut self,
        seq: &Node,
        path: &[Seg],
        range: std::ops::Range<usize>,
    ) -> bool {
        let Some(items) = seq.items() else {
            return false;
        };
        if range.is_empty() || range.end > items.len() || range.len() == items.len() {
            return false;
        }
        let text = if seq.flow {
            match items.get(range.end) {
                Some(next) => items[range.start].props_start..next.props_start,
                None => items[range.start - 1].end..items[range.end - 1].end,
            }
        } else {
            let Some(first) = dash_before(self.src, items[range.start].props_start) else {
                return false;
            };
            if !self.alone_on_line(first) {
                return false;
            }
            let end = match items.get(range.end) {
                Some(next) => match dash_before(self.src, next.props_start) {
                    Some(d) if self.alone_on_line(d) => line_start(self.src, d),
                    _ => return false,
                },
                None => self.after_line(items[range.end - 1].end),
            };
            line_start(self.src, first)..end
        };
        self.push(text.start, text.end, String::new());
        if let Some(Value::Seq(vals)) = self.intended_at(path) {
            vals.drain(range);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::Editor;
    use crate::yaml::apply::{Intended, apply};
    use crate::yaml::path::Seg;
    use crate::yaml::style::detect_style;
    use crate::yaml::tree::{Node, parse_stream};

    fn edit(src: &str, f: impl FnOnce(&mut Editor<'_>, &Node) -> bool) -> String {
        let docs = parse_stream(src).unwrap();
        let root = &docs[0].root;
        let mut ed = Editor::new(src, root, detect_style(src, root));
        assert!(f(&mut ed, root));
        apply(
            src,
            &docs,
            &ed.take_edits(),
            &[Intended::edited(ed.intended_copy())],
        )
        .unwrap_or_else(|e| panic!("{e}"))
    }

    fn key(k: &str) -> Vec<Seg> {
        vec![Seg::Key(k.into())]
    }

    #[test]
    fn block_entries() {
        let src = "a:\n  b: 1 # c\n  k:\n  - x\n  - |\n    y\n  z: 2\n";
        let out = edit(src, |ed, root| {
            ed.remove_entry(root.get("a").unwrap(), &key("a"), "k")
        });
        assert_eq!(out, "a:\n  b: 1 # c\n  z: 2\n");
        let out = edit(src, |ed, root| {
            ed.remove_entry(root.get("a").unwrap(), &key("a"), "z")
        });
        assert_eq!(out, "a:\n  b: 1 # c\n  k:\n  - x\n  - |\n    y\n");
        let src = "s:\n- name: a\n  x: 1\n";
        let out = edit(src, |ed, root| {
            let item = &root.get("s").unwrap().items().unwrap()[0];
            ed.remove_entry(item, &[Seg::Key("s".into()), Seg::Index(0)], "name")
        });
        assert_eq!(out, "s:\n- x: 1\n");
        let out = edit("a: 1\r\nb: 2\r\nc: 3", |ed, root| {
            ed.remove_entry(root, &[], "b") && ed.remove_entry(root, &[], "c")
        });
        assert_eq!(out, "a: 1\r\n");
    }

    #[test]
    fn flow_entries() {
        for (k, want) in [
            ("a", "m: {b: 2, c: 3}\n"),
            ("b", "m: {a: 1, c: 3}\n"),
            ("c", "m: {a: 1, b: 2}\n"),
        ] {
            let out = edit("m: {a: 1, b: 2, c: 3}\n", |ed, root| {
                ed.remove_entry(root.get("m").unwrap(), &key("m"), k)
            });
            assert_eq!(out, want);
        }
        let out = edit("m: {a: 1}\n", |ed, root| {
            ed.remove_entry(root.get("m").unwrap(), &key("m"), "a")
        });
        assert_eq!(out, "m: {}\n");
    }

    #[test]
    fn flow_runs() {
        let out = edit("m: {a: 1, b: 2, c: 3, d: 4}\n", |ed, root| {
            ed.remove_entries(root.get("m").unwrap(), &key("m"), &["b", "c", "d"])
        });
        assert_eq!(out, "m: {a: 1}\n");
        let out = edit("m: {a: 1, b: 2, c: 3, d: 4}\n", |ed, root| {
            ed.remove_entries(root.get("m").unwrap(), &key("m"), &["a", "c", "d"])
        });
        assert_eq!(out, "m: {b: 2}\n");
    }

    #[test]
    fn refusals() {
        let src = "a:\n  b: 1\n";
        let docs = parse_stream(src).unwrap();
        let root = &docs[0].root;
        let mut ed = Editor::new(src, root, detect_style(src, root));
        assert!(!ed.remove_entry(root.get("a").unwrap(), &key("a"), "b"));
        assert!(!ed.remove_entry(root.get("a").unwrap(), &key("a"), "nope"));
        let s = parse_stream("s: [a]\n").unwrap();
        assert!(!ed.remove_items(s[0].root.get("s").unwrap(), &key("s"), 0..1));
        assert!(ed.edits.is_empty());
    }

    #[test]
    fn items() {
        let out = edit("s:\n- a\n- b\n- c\n", |ed, root| {
            ed.remove_items(root.get("s").unwrap(), &key("s"), 0..2)
        });
        assert_eq!(out, "s:\n- c\n");
        let out = edit("s:\n  - a\n  - b # x\nt: 1\n", |ed, root| {
            ed.remove_items(root.get("s").unwrap(), &key("s"), 1..2)
        });
        assert_eq!(out, "s:\n  - a\nt: 1\n");
        let out = edit("s: [a, \"b\", c]\n", |ed, root| {
            ed.remove_items(root.get("s").unwrap(), &key("s"), 0..1)
        });
        assert_eq!(out, "s: [\"b\", c]\n");
        let out = edit("s: [a, b, c]\n", |ed, root| {
            ed.remove_items(root.get("s").unwrap(), &key("s"), 1..3)
        });
        assert_eq!(out, "s: [a]\n");
    }
}
