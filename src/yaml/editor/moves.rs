//! Moving an item of one block sequence into another, its text kept as written: only its
//! indentation changes where the target list is indented differently, and one entry of its
//! mapping may be added or taken out on the way. The blank and comment lines on one side of
//! the item travel with it ([`Gap`]), so that moving it back where it came from, with the
//! same side, gives back the original bytes.

use super::Editor;
use crate::yaml::path::Seg;
use crate::yaml::text::{dash_before, line_start};
use crate::yaml::tree::{Entry, Kind, Node};
use crate::yaml::value::Value;

/// Which lines between items travel with a moved item: those before it (from the end of
/// the item or key line before it) or those after it (to the next item's dash).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gap {
    Before,
    After,
}

/// Where an item is taken from.
pub enum Source<'n> {
    /// Item `index` of the block sequence that is the value of `entry`, at `path`, with the
    /// lines on the `gap` side. At least one other item must stay.
    Item {
        entry: &'n Entry,
        path: &'n [Seg],
        index: usize,
        gap: Gap,
    },
    /// The only item of entry `key` of mapping `map` (at `path`): the entry goes whole, with
    /// every line up to the entry `next` that directly follows it; the lines around the item
    /// move with it, and `gap` says on which side of it they were.
    Only {
        map: &'n Node,
        path: &'n [Seg],
        key: &'n str,
        next: &'n Entry,
        gap: Gap,
    },
}

/// Where an item goes.
pub enum Target<'n> {
    /// A new entry `key` of block mapping `map` (at `path`), on the lines just before the
    /// entry `before`; its list is indented as the item was.
    NewKey {
        map: &'n Node,
        path: &'n [Seg],
        key: &'n str,
        before: &'n Entry,
    },
    /// Item `index` of the block sequence that is the value of `entry` (at `path`).
    Item {
        entry: &'n Entry,
        path: &'n [Seg],
        index: usize,
    },
}

/// What changes in the item's own mapping on the way.
pub enum Change<'s> {
    /// A new last entry, written as `line` (`key: value`, with a comment if wanted), whose
    /// key and value are `key` and `value`.
    Add {
        line: &'s str,
        key: &'s str,
        value: Value,
    },
    /// Entry `key` goes, with its line; it must be on lines of its own.
    Remove { key: &'s str },
}

/// What [`Editor::move_item`] takes: the item, the text that goes, the part of it that
/// moves, and which side's lines move with it.
type Taken<'n> = (
    &'n Node,
    std::ops::Range<usize>,
    std::ops::Range<usize>,
    Gap,
);

impl Editor<'_> {
    /// Moves an item as `from`, `to` and `change` say. On a layout that cannot be moved
    /// exactly, says why and changes nothing.
    pub fn move_item(
        &mut self,
        from: &Source<'_>,
        to: &Target<'_>,
        change: &Change<'_>,
    ) -> Result<(), &'static str> {
        let (item, taken, text, gap) = self.taken(from)?;
        if has_anchor_or_alias(item) {
            return Err("it holds an anchor or alias, which moving could separate");
        }
        let from_col = self.col(dash_of(self.src, item)?);
        let item_end = self.after_line(item.end);
        if !self.src[..item_end].ends_with('\n') {
            return Err("it ends the text without a line break");
        }
        // The item's text, with the change made (in the source's columns).
        let at = item_end - text.start;
        let mut body = self.src[text.clone()].to_string();
        let mut value = Value::from_node(item);
        match change {
            Change::Add {
                line,
                key,
                value: v,
            } => {
                let first = item
                    .entries()
                    .and_then(<[Entry]>::first)
                    .ok_or("it is not a mapping")?;
                let col = self.col(self.entry_start(item, &first.key));
                let nl = self.style().nl;
                body.insert_str(at, &format!("{}{line}{nl}", " ".repeat(col)));
                value.set(key, v.clone());
            }
            Change::Remove { key } => {
                let e = item.entry(key).ok_or("the entry to take out is missing")?;
                let start = self.entry_start(item, &e.key);
                if !self.alone_on_line(start) {
                    return Err("the entry to take out shares its line");
                }
                let end = self.after_line(e.value.end.max(e.key.end));
                let (a, b) = (line_start(self.src, start), end);
                if a < text.start || b > text.end {
                    return Err("the entry to take out is outside the item");
                }
                body.replace_range(a - text.start..b - text.start, "");
                value.remove(key);
            }
        }
        let (point, prefix, to_col) = self.landing(to, gap, from_col, item_end == text.end)?;
        let body = reindent(&body, to_col as isize - from_col as isize)
            .ok_or("a line of it is indented less than the target list needs")?;
        if point > taken.start && point < taken.end {
            return Err("it would land inside its own text");
        }
        self.push(taken.start, taken.end, String::new());
        self.push(point, point, format!("{prefix}{body}"));
        self.take_value(from);
        self.put_value(to, value);
        Ok(())
    }

    /// The item, the text that goes (`taken`), the part of it that moves (`text`), and
    /// which side's lines move with it.
    fn taken<'n>(&self, from: &Source<'n>) -> Result<Taken<'n>, &'static str> {
        match from {
            Source::Item {
                entry, index, gap, ..
            } => {
                let items = block_items(&entry.value)?;
                let item = items.get(*index).ok_or("no such item")?;
                if items.len() < 2 {
                    return Err("it is the only item");
                }
                let dash = dash_of(self.src, item)?;
                let range = match gap {
                    Gap::After => {
                        let end = match items.get(index + 1) {
                            Some(next) => line_start(self.src, dash_of(self.src, next)?),
                            None => self.after_line(item.end),
                        };
                        line_start(self.src, dash)..end
                    }
                    Gap::Before => {
                        let start = match index.checked_sub(1) {
                            Some(p) => self.after_line(items[p].end),
                            None => self.after_line(entry.key.end),
                        };
                        start..self.after_line(item.end)
                    }
                };
                Ok((item, range.clone(), range, *gap))
            }
            Source::Only {
                map,
                key,
                next,
                gap,
                ..
            } => {
                let e = map.entry(key).ok_or("the list is missing")?;
                let items = block_items(&e.value)?;
                let [item] = items else {
                    return Err("the list holds more than this item");
                };
                let key_at = self.entry_start(map, &e.key);
                let next_at = self.entry_start(map, &next.key);
                if !self.alone_on_line(key_at) || !self.alone_on_line(next_at) {
                    return Err("its list's key shares a line");
                }
                let (start, end) = (line_start(self.src, key_at), line_start(self.src, next_at));
                let text = self.after_line(e.key.end)..end;
                if text.start > line_start(self.src, dash_of(self.src, item)?) || end < start {
                    return Err("its list does not start on the line after its key");
                }
                Ok((item, start..end, text, *gap))
            }
        }
    }

    /// Where the moved text goes, what goes before it there, and the column of its dash.
    /// `bare`: no lines follow the item in the moved text.
    fn landing(
        &self,
        to: &Target<'_>,
        gap: Gap,
        from_col: usize,
        bare: bool,
    ) -> Result<(usize, String, usize), &'static str> {
        match to {
            Target::NewKey {
                map, key, before, ..
            } => {
                let at = self.entry_start(map, &before.key);
                if !self.alone_on_line(at) {
                    return Err("the entry it goes before shares its line");
                }
                let col = self.col(at);
                let prefix = format!("{}{key}:{}", " ".repeat(col), self.style().nl);
                Ok((line_start(self.src, at), prefix, from_col))
            }
            Target::Item { entry, index, .. } => {
                let items = block_items(&entry.value)?;
                let first = items.first().ok_or("the target list is empty")?;
                let col = self.col(dash_of(self.src, first)?);
                let point = match (gap, index.checked_sub(1), items.get(*index)) {
                    (Gap::Before, Some(p), _) => {
                        self.after_line(items.get(p).ok_or("no such item")?.end)
                    }
                    (Gap::Before, None, _) => self.after_line(entry.key.end),
                    (Gap::After, _, Some(next)) => line_start(self.src, dash_of(self.src, next)?),
                    (Gap::After, Some(p), None) if bare => {
                        self.after_line(items.get(p).ok_or("no such item")?.end)
                    }
                    (Gap::After, _, None) => {
                        return Err(
                            "lines after it cannot follow the last item of the target list",
                        );
                    }
                };
                if !self.src[..point].ends_with('\n') {
                    return Err("the target list ends the text without a line break");
                }
                if point > line_start(self.src, dash_of(self.src, first)?)
                    && *index == 0
                    && gap == Gap::Before
                {
                    return Err("the target list does not start on the line after its key");
                }
                Ok((point, String::new(), col))
            }
        }
    }

    fn take_value(&mut self, from: &Source<'_>) {
        match from {
            Source::Item { path, index, .. } => {
                if let Some(Value::Seq(items)) = self.intended_at(path)
                    && *index < items.len()
                {
                    items.remove(*index);
                }
            }
            Source::Only { path, key, .. } => {
                if let Some(v) = self.intended_at(path) {
                    v.remove(key);
                }
            }
        }
    }

    fn put_value(&mut self, to: &Target<'_>, value: Value) {
        match to {
            Target::NewKey { path, key, .. } => {
                if let Some(v) = self.intended_at(path) {
                    v.set(key, Value::Seq(vec![value]));
                }
            }
            Target::Item { path, index, .. } => {
                if let Some(Value::Seq(items)) = self.intended_at(path) {
                    items.insert((*index).min(items.len()), value);
                }
            }
        }
    }
}

/// The items of a block sequence.
fn block_items(seq: &Node) -> Result<&[Node], &'static str> {
    if seq.flow {
        return Err("its list is written in flow style ([...])");
    }
    seq.items().ok_or("the list is not a sequence")
}

/// The dash of a block sequence item, alone on its line but for indentation.
fn dash_of(src: &str, item: &Node) -> Result<usize, &'static str> {
    let dash = dash_before(src, item.props_start).ok_or("its item has no dash")?;
    let before = &src[line_start(src, dash)..dash];
    if before.bytes().all(|b| b == b' ') {
        Ok(dash)
    } else {
        Err("its item shares a line with other text")
    }
}

/// Whether `node` or anything in it has an anchor or is an alias.
fn has_anchor_or_alias(node: &Node) -> bool {
    if node.anchor.is_some() || matches!(node.kind, Kind::Alias(_)) {
        return true;
    }
    match &node.kind {
        Kind::Map(entries) => entries
            .iter()
            .any(|e| has_anchor_or_alias(&e.key) || has_anchor_or_alias(&e.value)),
        Kind::Seq(items) => items.iter().any(has_anchor_or_alias),
        _ => false,
    }
}

/// `text` with every line shifted right by `by` columns (left when negative). A line of
/// spaces only keeps what it has beyond the shift, so that blank lines of a block scalar
/// stay blank; `None` when a line with text has fewer spaces than a left shift takes.
fn reindent(text: &str, by: isize) -> Option<String> {
    if by == 0 {
        return Some(text.to_string());
    }
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let content = line.trim_end_matches(['\n', '\r']);
        let spaces = content.len() - content.trim_start_matches(' ').len();
        let blank = spaces == content.len();
        if by > 0 {
            if !content.is_empty() {
                out.push_str(&" ".repeat(by.unsigned_abs()));
            }
            out.push_str(line);
        } else {
            let cut = by.unsigned_abs();
            if spaces < cut && !blank {
                return None;
            }
            out.push_str(&line[cut.min(spaces)..]);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::{Change, Gap, Source, Target, reindent};
    use crate::yaml::apply::{Intended, apply};
    use crate::yaml::editor::Editor;
    use crate::yaml::path::Seg;
    use crate::yaml::style::detect_style;
    use crate::yaml::tree::parse_stream;
    use crate::yaml::value::Value;

    const MISSING: Change<'static> = Change::Remove { key: "unused" };

    fn key(k: &str) -> Vec<Seg> {
        vec![Seg::Key(k.into())]
    }

    fn add() -> Change<'static> {
        Change::Add {
            line: "r: A # moved",
            key: "r",
            value: Value::str("A"),
        }
    }

    /// Moves item `i` of `c` to `s` (at `p`, or a new key) and back, checking both texts.
    fn round_trip(src: &str, i: usize, p: Option<usize>, want: &str) {
        let docs = parse_stream(src).unwrap();
        let root = &docs[0].root;
        let mut ed = Editor::new(src, root, detect_style(src, root));
        let c = root.entry("c").unwrap();
        let gap = if i == 0 { Gap::After } else { Gap::Before };
        let from = Source::Item {
            entry: c,
            path: &key("c"),
            index: i,
            gap,
        };
        let to = match (p, root.entry("s")) {
            (Some(index), Some(entry)) => Target::Item {
                entry,
                path: &key("s"),
                index,
            },
            _ => Target::NewKey {
                map: root,
                path: &[],
                key: "s",
                before: c,
            },
        };
        ed.move_item(&from, &to, &add()).unwrap();
        let out = apply(
            src,
            &docs,
            &ed.take_edits(),
            &[Intended::edited(ed.intended_copy())],
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(out, want);
        // Back again.
        let docs = parse_stream(&out).unwrap();
        let root = &docs[0].root;
        let mut ed = Editor::new(&out, root, detect_style(&out, root));
        let s = root.entry("s").unwrap();
        let c = root.entry("c").unwrap();
        let j = p.unwrap_or(0);
        let only = s.value.items().unwrap().len() == 1;
        let from = if only {
            Source::Only {
                map: root,
                path: &[],
                key: "s",
                next: c,
                gap,
            }
        } else {
            Source::Item {
                entry: s,
                path: &key("s"),
                index: j,
                gap,
            }
        };
        let to = Target::Item {
            entry: c,
            path: &key("c"),
            index: i,
        };
        ed.move_item(&from, &to, &Change::Remove { key: "r" })
            .unwrap();
        let back = apply(
            &out,
            &docs,
            &ed.take_edits(),
            &[Intended::edited(ed.intended_copy())],
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, src);
    }

    #[test]
    fn to_a_new_key_and_back() {
        round_trip(
            "c:\n- n: a\n\n- n: b # x\n  v: |\n    y\n# c\n- n: c\nz: 1\n",
            1,
            None,
            "s:\n\n- n: b # x\n  v: |\n    y\n  r: A # moved\nc:\n- n: a\n# c\n- n: c\nz: 1\n",
        );
        round_trip(
            "c:\n  - n: a\n\n  - n: b\n",
            0,
            None,
            "s:\n  - n: a\n    r: A # moved\n\nc:\n  - n: b\n",
        );
    }

    #[test]
    fn into_a_list_and_back() {
        round_trip(
            "s:\n  - n: i\nc:\n- n: a\n- n: b\n  v: |\n    y\n\n    z\n",
            1,
            Some(0),
            "s:\n  - n: b\n    v: |\n      y\n\n      z\n    r: A # moved\n  - n: i\nc:\n- n: a\n",
        );
        round_trip(
            "s:\n- n: i\n- n: j\nc:\n  - n: a\n  # about b\n  - n: b\n",
            1,
            Some(1),
            "s:\n- n: i\n# about b\n- n: b\n  r: A # moved\n- n: j\nc:\n  - n: a\n",
        );
        round_trip(
            "s:\n- n: i\nc:\n- n: a\n- n: b\n",
            0,
            Some(1),
            "s:\n- n: i\n- n: a\n  r: A # moved\nc:\n- n: b\n",
        );
    }

    #[test]
    fn refusals() {
        let src = "s: [x]\nc:\n- n: a\n- &b {n: b}\n- n: c\n  r: 1\n";
        let docs = parse_stream(src).unwrap();
        let root = &docs[0].root;
        let mut ed = Editor::new(src, root, detect_style(src, root));
        let c = root.entry("c").unwrap();
        let s = root.entry("s").unwrap();
        let from = |index| Source::Item {
            entry: c,
            path: &[],
            index,
            gap: Gap::Before,
        };
        let to = Target::Item {
            entry: s,
            path: &[],
            index: 0,
        };
        assert!(ed.move_item(&from(0), &to, &add()).is_err());
        let new = Target::NewKey {
            map: root,
            path: &[],
            key: "t",
            before: c,
        };
        assert!(ed.move_item(&from(1), &new, &add()).is_err());
        assert!(ed.move_item(&from(2), &new, &MISSING).is_err());
        assert!(ed.edits.is_empty());
        assert_eq!(reindent("  a\n b\n", -2), None);
        assert_eq!(reindent("  a\n\n   \n", -2).unwrap(), "a\n\n \n");
    }
}
