//! The editor: the operations that plan edits to a document.
//!
//! Every operation does two things: it records a text edit that matches the surrounding
//! style, and it applies the same change to the intended value of the document. The apply
//! stage later checks that the edited text parses to exactly that intended value.

use crate::apply::Edit;
#[cfg(test)]
use crate::apply::Intended;
use crate::yaml::emit::{self, Out, Style};
use crate::yaml::path::Seg;
use crate::yaml::text::{colon_after, dash_before, line_start};
use crate::yaml::tree::{Kind, Node};
use crate::yaml::value::Value;
use granit_parser::ScalarStyle;

mod remove;

/// The order of new lines added at the end of a text that has no final line break: after
/// every edit that extends the last line itself (those have order 0).
const AFTER_LAST_LINE: i64 = 1 << 32;

/// Builds the edits of one document and its intended value.
pub struct Editor<'a> {
    pub src: &'a str,
    pub style: Style,
    pub edits: Vec<Edit>,
    pub intended: Value,
}

impl<'a> Editor<'a> {
    pub fn new(src: &'a str, root: &Node, style: Style) -> Self {
        Editor {
            src,
            style,
            edits: Vec::new(),
            intended: Value::from_node(root),
        }
    }

    /// A copy of the intended value at `path`, to restore if planning there is abandoned.
    pub fn snapshot(&mut self, path: &[Seg]) -> Option<Value> {
        self.intended_at(path).map(|v| v.clone())
    }

    /// Puts back a value taken with [`Editor::snapshot`].
    pub fn restore(&mut self, path: &[Seg], value: Value) {
        if let Some(v) = self.intended_at(path) {
            *v = value;
        }
    }

    fn intended_at(&mut self, path: &[Seg]) -> Option<&mut Value> {
        let mut v = &mut self.intended;
        for seg in path {
            v = match (seg, v) {
                (Seg::Key(k), v @ Value::Map(_)) => v.get_mut(k)?,
                (Seg::Index(i), Value::Seq(items)) => items.get_mut(*i)?,
                _ => return None,
            };
        }
        Some(v)
    }

    fn push(&mut self, start: usize, end: usize, text: String) {
        self.edits.push(Edit::replace(start..end, text));
    }

    /// A new line at column `col`: new lines at one point go deepest first, so that an
    /// entry added to a nested mapping stays inside it.
    fn push_line(&mut self, at: usize, col: usize, text: String) {
        self.edits
            .push(Edit::insert(at, text).ordered(-(col as i64)));
    }

    /// Column of byte offset `at` (indentation is ASCII, so bytes are columns).
    pub fn col(&self, at: usize) -> usize {
        at - line_start(self.src, at)
    }

    /// Sets `key` to `out` in mapping `map` (at `path`): replaces the value if the key exists,
    /// else adds an entry at the end.
    pub fn set(&mut self, map: &Node, path: &[Seg], key: &str, out: &Out) {
        match map.entry(key) {
            Some(e) => self.replace_value(map, &e.key, &e.value, path, key, out),
            None => self.insert_entry(map, path, None, key, out),
        }
    }

    /// Adds `key: out` to mapping `map` (at `path`), before the entry whose key is `before`
    /// or at the end.
    pub fn insert_entry(
        &mut self,
        map: &Node,
        path: &[Seg],
        before: Option<&Node>,
        key: &str,
        out: &Out,
    ) {
        let st = self.style;
        let entries = map.entries().unwrap_or(&[]);
        if map.flow {
            let pair = format!("{}: {}", emit::key_text(key, &st), emit::flow(out, &st));
            match (before, entries.first(), entries.last()) {
                (Some(b), _, _) => {
                    let text = if self.on_own_line(b.props_start) {
                        format!("{pair},{}{}", st.nl, " ".repeat(self.col(b.props_start)))
                    } else {
                        format!("{pair}, ")
                    };
                    self.push(b.props_start, b.props_start, text);
                }
                (None, Some(first), Some(last)) => {
                    let text = if self.on_own_line(first.key.props_start) {
                        let col = self.col(first.key.props_start);
                        format!(",{}{}{pair}", st.nl, " ".repeat(col))
                    } else {
                        format!(", {pair}")
                    };
                    let at = last.value.end.max(last.key.end);
                    self.push(at, at, text);
                }
                _ => {
                    // `{}`: just inside the brace.
                    self.push(map.start + 1, map.start + 1, pair);
                }
            }
        } else {
            let key_col = entries.first().map_or(0, |e| self.col(e.key.props_start));
            let entry = format!(
                "{}:{}",
                emit::key_text(key, &st),
                emit::after_key(out, key_col, &st)
            );
            match before {
                Some(b) => {
                    let text = format!("{entry}{}{}", st.nl, " ".repeat(key_col));
                    self.push(b.props_start, b.props_start, text);
                }
                None => self.insert_line_after(map.end, key_col, &entry),
            }
        }
        if let Some(v) = self.intended_at(path) {
            v.set(key, out.value());
        }
    }

    /// Inserts a new line holding `text` at column `col` after the line where `end` falls.
    fn insert_line_after(&mut self, end: usize, col: usize, text: &str) {
        let nl = self.style.nl;
        match self.src[end..].find('\n') {
            Some(i) => {
                let at = end + i + 1;
                self.push_line(at, col, format!("{}{text}{nl}", " ".repeat(col)));
            }
            None => {
                // No line break at the end of the text: the new line starts with one, and
                // goes after whatever else is appended to the last line (a value given to an
                // empty `key:` there), still deepest first among new lines.
                let at = self.src.len();
                let text = format!("{nl}{}{text}", " ".repeat(col));
                self.edits
                    .push(Edit::insert(at, text).ordered(AFTER_LAST_LINE - col as i64));
            }
        }
    }

    /// Whether only indentation precedes `at` on its line.
    fn on_own_line(&self, at: usize) -> bool {
        self.src[line_start(self.src, at)..at]
            .chars()
            .all(|c| c == ' ' || c == '\t')
    }

    /// Replaces the value of entry `key_node: value` in `map` with `out`.
    pub fn replace_value(
        &mut self,
        map: &Node,
        key_node: &Node,
        value: &Node,
        path: &[Seg],
        key: &str,
        out: &Out,
    ) {
        let st = self.style;
        if map.flow {
            self.push(value.props_start, value.end, emit::flow(out, &st));
        } else {
            let key_col = self.col(key_node.props_start);
            let text = emit::after_key(out, key_col, &st);
            let from = colon_after(self.src, key_node.end).map_or(value.props_start, |c| c + 1);
            let to = if value.empty { from } else { value.end };
            self.push(from, to, text);
        }
        if let Some(v) = self.intended_at(path) {
            v.set(key, out.value());
        }
    }

    /// Replaces item `index` of sequence `seq` (at `path`) with `out`.
    pub fn replace_item(&mut self, seq: &Node, path: &[Seg], index: usize, out: &Out) {
        let st = self.style;
        let Some(item) = seq.items().and_then(|i| i.get(index)) else {
            return;
        };
        if seq.flow {
            self.push(item.props_start, item.end, emit::flow(out, &st));
        } else {
            let dash = dash_before(self.src, item.props_start).unwrap_or(item.props_start);
            let dash_col = self.col(dash);
            let text = emit::after_dash(out, dash_col, &st);
            let to = if item.empty { dash + 1 } else { item.end };
            self.push(dash + 1, to, text);
        }
        if let Some(Value::Seq(items)) = self.intended_at(path)
            && let Some(slot) = items.get_mut(index)
        {
            *slot = out.value();
        }
    }

    /// Renames the key of an entry, keeping its value text as it is.
    pub fn rename_key(&mut self, path: &[Seg], key_node: &Node, from: &str, to: &str) {
        let text = match &key_node.kind {
            Kind::Scalar {
                style: ScalarStyle::DoubleQuoted,
                ..
            } => emit::double_quoted(to),
            Kind::Scalar {
                style: ScalarStyle::SingleQuoted,
                ..
            } => format!("'{to}'"),
            _ => to.to_string(),
        };
        self.push(key_node.props_start, key_node.end, text);
        if let Some(v) = self.intended_at(path)
            && let Some(val) = v.remove(from)
        {
            v.set(to, val);
        }
    }

    /// Puts `items` before the first item of sequence `seq` (at `path`).
    pub fn prepend_items(&mut self, seq: &Node, path: &[Seg], items: &[Out]) {
        let st = self.style;
        let Some(first) = seq.items().and_then(<[Node]>::first) else {
            return self.append_items(seq, path, items);
        };
        if seq.flow {
            let own_line = self.on_own_line(first.props_start);
            let sep = if own_line {
                format!(",{}{}", st.nl, " ".repeat(self.col(first.props_start)))
            } else {
                ", ".to_string()
            };
            let mut text = String::new();
            for item in items {
                text.push_str(&emit::flow(item, &st));
                text.push_str(&sep);
            }
            self.push(first.props_start, first.props_start, text);
        } else {
            let dash = seq.start;
            let dash_col = self.col(dash);
            let mut text = String::new();
            for item in items {
                text.push('-');
                text.push_str(&emit::after_dash(item, dash_col, &st));
                text.push_str(st.nl);
                text.push_str(&" ".repeat(dash_col));
            }
            self.push(dash, dash, text);
        }
        if let Some(Value::Seq(vals)) = self.intended_at(path) {
            let new: Vec<Value> = items.iter().map(Out::value).collect();
            vals.splice(0..0, new);
        }
    }

    /// Adds `items` after the last item of sequence `seq` (at `path`).
    pub fn append_items(&mut self, seq: &Node, path: &[Seg], items: &[Out]) {
        let st = self.style;
        let existing = seq.items().unwrap_or(&[]);
        if seq.flow {
            let texts: Vec<String> = items.iter().map(|i| emit::flow(i, &st)).collect();
            match (existing.first(), existing.last()) {
                (Some(first), Some(last)) => {
                    let sep = if self.on_own_line(first.props_start) {
                        format!(",{}{}", st.nl, " ".repeat(self.col(first.props_start)))
                    } else {
                        ", ".to_string()
                    };
                    let mut text = String::new();
                    for t in texts {
                        text.push_str(&sep);
                        text.push_str(&t);
                    }
                    self.push(last.end, last.end, text);
                }
                _ => self.push(seq.start + 1, seq.start + 1, texts.join(", ")),
            }
        } else if !existing.is_empty() {
            let dash_col = self.col(seq.start);
            for item in items {
                let text = format!("-{}", emit::after_dash(item, dash_col, &st));
                self.insert_line_after(seq.end, dash_col, &text);
            }
        }
        if let Some(Value::Seq(vals)) = self.intended_at(path) {
            vals.extend(items.iter().map(Out::value));
        }
    }

    /// Applies `edits` inside a string scalar (which then means `value`), e.g. lines added
    /// to the YAML held by a block scalar.
    pub fn splice_into_scalar(&mut self, edits: Vec<Edit>, value: Value, path: &[Seg]) {
        self.edits.extend(edits);
        if let Some(v) = self.intended_at(path) {
            *v = value;
        }
    }

    /// Replaces a whole string scalar's text (quotes included), e.g. an annotation.
    pub fn replace_scalar_text(&mut self, node: &Node, text: String, value: Value, path: &[Seg]) {
        self.push(node.props_start, node.end, text);
        if let Some(v) = self.intended_at(path) {
            *v = value;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::style::detect_style;
    use crate::yaml::tree::parse_stream;

    fn edit(src: &str, f: impl FnOnce(&mut Editor, &Node)) -> String {
        let docs = parse_stream(src).unwrap();
        let root = &docs[0].root;
        let mut ed = Editor::new(src, root, detect_style(src, root));
        f(&mut ed, root);
        crate::apply::apply(src, &docs, &ed.edits, &[Intended::edited(ed.intended)])
            .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn insert_into_block_and_flow_maps() {
        let out = edit("a:\n    b: 1 # c\nz: 2", |ed, root| {
            let a = root.get("a").unwrap();
            ed.insert_entry(
                a,
                &[Seg::Key("a".into())],
                None,
                "k2",
                &Out::Str("v".into()),
            );
            ed.insert_entry(root, &[], None, "e", &Out::Bool(true));
        });
        assert_eq!(out, "a:\n    b: 1 # c\n    k2: v\nz: 2\ne: true");
        let out = edit("a: {b: 1}\nc: {}\n", |ed, root| {
            let a = root.get("a").unwrap();
            ed.insert_entry(
                a,
                &[Seg::Key("a".into())],
                None,
                "k2",
                &Out::Str("v".into()),
            );
            let c = root.get("c").unwrap();
            ed.insert_entry(c, &[Seg::Key("c".into())], None, "k", &Out::Str("1".into()));
        });
        assert_eq!(out, "a: {b: 1, k2: v}\nc: {k: \"1\"}\n");
    }

    #[test]
    fn prepend_and_append_items() {
        let out = edit("s:\n- b\nf: [b]\n", |ed, root| {
            let s = root.get("s").unwrap();
            ed.prepend_items(s, &[Seg::Key("s".into())], &[Out::Str("a".into())]);
            ed.append_items(s, &[Seg::Key("s".into())], &[Out::Str("c".into())]);
            let f = root.get("f").unwrap();
            ed.prepend_items(f, &[Seg::Key("f".into())], &[Out::Str("a".into())]);
        });
        assert_eq!(out, "s:\n- a\n- b\n- c\nf: [a, b]\n");
    }

    #[test]
    fn crlf_and_replace() {
        let out = edit("a:\r\n  b: x\r\n", |ed, root| {
            let a = root.get("a").unwrap();
            let e = a.entry("b").unwrap();
            let path = [Seg::Key("a".into())];
            ed.replace_value(
                a,
                &e.key,
                &e.value,
                &path,
                "b",
                &Out::Seq(vec![Out::Str("w".into())]),
            );
        });
        assert_eq!(out, "a:\r\n  b:\r\n  - w\r\n");
    }
}
