//! The editor: the operations that plan edits to a document.
//!
//! Every operation does two things: it records a text edit that matches the surrounding
//! style, and it applies the same change to the intended value of the document. The apply
//! stage later checks that the edited text parses to exactly that intended value.

#[cfg(test)]
use crate::yaml::apply::Intended;
use crate::yaml::edit::Edit;
use crate::yaml::emit::{self, Out, Style};
use crate::yaml::path::Seg;
use crate::yaml::style::detect_style;
use crate::yaml::text::{colon_after, colon_at_next_token, dash_before, entry_start, line_start};
use crate::yaml::tree::{Kind, Node};
use crate::yaml::value::Value;
use granit_parser::ScalarStyle;

mod moves;
mod remove;

pub(crate) use moves::{Change, Gap, Source, Target};

/// The order of new lines added at the end of a text that has no final line break: after
/// every edit that extends the last line itself (those have order 0).
const AFTER_LAST_LINE: i64 = 1 << 32;

/// Builds the edits of one document and its intended value.
pub struct Editor<'a> {
    pub src: &'a str,
    /// The document's root, which the intended value starts from.
    root: &'a Node,
    /// The document's style, detected at the first edit (`None` until then) unless given.
    style: std::cell::Cell<Option<Style>>,
    /// The edits recorded so far, in the order they were made.
    edits: Vec<Edit>,
    /// The intended value, built from `root` at the first change to it: most documents
    /// planned are left as they are (a run over fixed manifests changes none), and building
    /// the value is most of what planning them would cost. `None`: the value of `root`.
    intended: Option<Value>,
    /// The edit that keeps the value of a block scalar ending the text without a final line
    /// break (`|` becomes `|-`) once lines are added after it; see [`eof_block_fix`]. Not
    /// among `edits`: whether the edits need it is read from them when they are taken
    /// ([`Editor::take_edits`]), so that a dropped group takes back its need of it with its
    /// edits.
    eof_block: Option<Edit>,
    /// How many edits came before the group begun last ([`Editor::begin`]): removals merge
    /// only with edits of their own group, which is kept or dropped whole.
    group_start: usize,
}

/// Where a group of edits began ([`Editor::begin`]): how many edits came before it, and
/// the intended value at the path the group changes. A pod's fix is planned as one group,
/// then kept as it is or dropped whole ([`Editor::drop_group`]): its edits and its change to
/// the intended value together, so that a refused pod leaves the others intact.
pub struct Group {
    edits: usize,
    before: Snapshot,
}

/// The intended value at a group's path when the group began.
enum Snapshot {
    /// Nothing had changed the intended value yet.
    Unchanged,
    /// The value at the path (`None`: there was none).
    At(Option<Value>),
}

impl<'a> Editor<'a> {
    pub fn new(src: &'a str, root: &'a Node, style: Style) -> Self {
        Editor {
            style: std::cell::Cell::new(Some(style)),
            ..Editor::detecting(src, root)
        }
    }

    /// An editor that detects the document's style ([`detect_style`]) when it first needs
    /// it: most documents planned are left as they are.
    pub fn detecting(src: &'a str, root: &'a Node) -> Self {
        Editor {
            src,
            root,
            style: std::cell::Cell::new(None),
            edits: Vec::new(),
            intended: None,
            eof_block: eof_block_fix(src, root),
            group_start: 0,
        }
    }

    /// The document's style.
    pub fn style(&self) -> Style {
        if let Some(style) = self.style.get() {
            return style;
        }
        let style = detect_style(self.src, self.root);
        self.style.set(Some(style));
        style
    }

    /// The intended value of the document.
    pub fn intended(&mut self) -> &Value {
        self.intended
            .get_or_insert_with(|| Value::from_node(self.root))
    }

    /// Takes the intended value of the document out of the editor.
    pub fn take_intended(&mut self) -> Value {
        self.intended
            .take()
            .unwrap_or_else(|| Value::from_node(self.root))
    }

    /// A copy of the intended value of the document.
    #[cfg(test)]
    pub fn intended_copy(&self) -> Value {
        (self.intended.clone()).unwrap_or_else(|| Value::from_node(self.root))
    }

    /// The edits recorded so far, in the order they were made.
    pub fn edits(&self) -> &[Edit] {
        &self.edits
    }

    /// Takes the edits recorded so far out of the editor, with the fix of a block scalar
    /// that ends the text when they need it ([`Editor::eof_fix`]).
    pub fn take_edits(&mut self) -> Vec<Edit> {
        let fix = self.eof_fix().cloned();
        let mut edits = std::mem::take(&mut self.edits);
        edits.extend(fix);
        edits
    }

    /// The edit that keeps the value of the block scalar ending the text, when the edits
    /// need it: a line was added after the end of a text without a final line break, and
    /// no edit rewrites the scalar (whose new text has a header of its own, written for its
    /// value).
    fn eof_fix(&self) -> Option<&Edit> {
        let fix = self.eof_block.as_ref()?;
        let end = self.src.len();
        let added = (self.edits.iter())
            .any(|e| e.start == end && e.end == end && e.order > AFTER_LAST_LINE / 2);
        let rewritten = (self.edits.iter())
            .any(|e| e.end > e.start && e.start <= fix.start && fix.start <= e.end);
        (added && !rewritten).then_some(fix)
    }

    /// Begins a group of edits that change the document at `path` (and nothing outside
    /// it): a copy of the intended value there is kept, to put back if the group is
    /// dropped.
    pub fn begin(&mut self, path: &[Seg]) -> Group {
        let before = match &self.intended {
            None => Snapshot::Unchanged,
            Some(_) => Snapshot::At(self.intended_at(path).map(|v| v.clone())),
        };
        self.group_start = self.edits.len();
        Group {
            edits: self.edits.len(),
            before,
        }
    }

    /// The edits recorded since `group` began.
    pub fn edits_since(&self, group: &Group) -> &[Edit] {
        self.edits.get(group.edits..).unwrap_or_default()
    }

    /// Drops the group begun at `path`: its edits, and its changes to the intended value.
    pub fn drop_group(&mut self, group: Group, path: &[Seg]) {
        self.edits.truncate(group.edits);
        match group.before {
            Snapshot::Unchanged => self.intended = None,
            Snapshot::At(Some(value)) => {
                if let Some(v) = self.intended_at(path) {
                    *v = value;
                }
            }
            Snapshot::At(None) => {}
        }
    }

    fn intended_at(&mut self, path: &[Seg]) -> Option<&mut Value> {
        let root = self.root;
        let mut v = self.intended.get_or_insert_with(|| Value::from_node(root));
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
        let start = memchr::memrchr(b'\n', &self.src.as_bytes()[..at]).map_or(0, |i| i + 1);
        // A byte order mark is not indentation: the parser steps over one at the start of
        // a document's first line (of the stream, or after a comment or a `...` line).
        let bom = if self.src[start..].starts_with('\u{feff}') {
            '\u{feff}'.len_utf8()
        } else {
            0
        };
        at - start - bom.min(at)
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
        let st = self.style();
        let entries = map.entries().unwrap_or(&[]);
        if map.flow {
            let pair = format!("{}: {}", emit::key_text(key, &st), emit::flow(out, &st));
            match (before, entries.first(), entries.last()) {
                (Some(b), _, _) => {
                    let at = self.entry_start(map, b);
                    let text = if self.on_own_line(at) {
                        format!("{pair},{}{}", st.nl, " ".repeat(self.col(at)))
                    } else {
                        format!("{pair}, ")
                    };
                    self.push(at, at, text);
                }
                (None, Some(first), Some(last)) => {
                    let text = if self.on_own_line(first.key.props_start) {
                        let col = self.col(first.key.props_start);
                        format!(",{}{}{pair}", st.nl, " ".repeat(col))
                    } else {
                        format!(", {pair}")
                    };
                    // After a value given to a last key written without one (`{k}`,
                    // `{k: }`), whose empty value sits at the key or at the `:`.
                    let at = match flow_colon_after(self.src, last.key.end) {
                        Some(c) if last.value.empty => c + 1,
                        _ => last.value.end.max(last.key.end),
                    };
                    // An empty explicit key (`{? }`) sits right after its `?`, which needs a
                    // space after it to stay an indicator.
                    let first_here = !self.edits.iter().any(|e| e.start == at && e.end == at);
                    let text = if first_here && last.key.empty && self.src[..at].ends_with('?') {
                        format!(" {text}")
                    } else {
                        text
                    };
                    self.edits.push(Edit::insert(at, text).ordered(1));
                }
                _ => {
                    // `{}`: just inside the brace, after the entries already added there.
                    let at = map.start + 1;
                    let added = self.edits.iter().any(|e| e.start == at && e.end == at);
                    let text = if added { format!(", {pair}") } else { pair };
                    self.push(at, at, text);
                }
            }
        } else {
            let key_col = entries
                .first()
                .map_or(0, |e| self.col(self.entry_start(map, &e.key)));
            let entry = |s: &mut String| {
                emit::push_key_text(s, key, &st);
                s.push(':');
                emit::push_after_key(s, out, key_col, &st);
            };
            match before {
                Some(b) => {
                    let at = self.entry_start(map, b);
                    let mut text = String::with_capacity(256);
                    entry(&mut text);
                    text.push_str(st.nl);
                    emit::push_spaces(&mut text, key_col);
                    self.push(at, at, text);
                }
                None => self.insert_line_after(map.end, key_col, entry),
            }
        }
        if let Some(v) = self.intended_at(path) {
            v.set(key, out.value());
        }
    }

    /// Inserts a new line at column `col` after the line where `end` falls, its text
    /// written by `text` (in place: the wrapper's entry is several KB).
    fn insert_line_after(&mut self, end: usize, col: usize, text: impl FnOnce(&mut String)) {
        let nl = self.style().nl;
        // Room for most entries, without growing a few bytes at a time.
        let mut line = String::with_capacity(256);
        match memchr::memchr(b'\n', &self.src.as_bytes()[end..]) {
            Some(i) => {
                let at = end + i + 1;
                emit::push_spaces(&mut line, col);
                text(&mut line);
                line.push_str(nl);
                self.push_line(at, col, line);
            }
            None => {
                // No line break at the end of the text: the new line starts with one, and
                // goes after whatever else is appended to the last line (a value given to an
                // empty `key:` there), still deepest first among new lines.
                let at = self.src.len();
                line.push_str(nl);
                emit::push_spaces(&mut line, col);
                text(&mut line);
                let text = line;
                // Its block scalar's fix, if the text ends in one, comes with the edits
                // taken (`eof_fix`).
                self.edits
                    .push(Edit::insert(at, text).ordered(AFTER_LAST_LINE - col as i64));
            }
        }
    }

    /// Where the entry of `map` whose key is `key` begins: the `?` of an explicit key, else
    /// the key (see [`entry_start`]; the entry before it bounds where a `?` may be).
    pub(super) fn entry_start(&self, map: &Node, key: &Node) -> usize {
        let entries = map.entries().unwrap_or(&[]);
        let before = entries.partition_point(|e| e.key.props_start < key.props_start);
        let floor = before
            .checked_sub(1)
            .map_or(0, |i| entries[i].value.end.max(entries[i].key.end));
        entry_start(self.src, floor, key.props_start)
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
        let st = self.style();
        if map.flow {
            let text = emit::flow(out, &st);
            match flow_colon_after(self.src, key_node.end) {
                // `{k: }`: the empty value sits at the `:`.
                Some(c) if value.empty => self.push(c + 1, c + 1, format!(" {text}")),
                // `{k}` or `{? k}`: a key without `:` and value. A key on several lines
                // may be followed by `:` only when it is explicit.
                None if value.empty => {
                    let at = key_node.props_start;
                    if key_node.is_multiline(self.src) && self.entry_start(map, key_node) == at {
                        self.push(at, at, "? ".to_string());
                    }
                    self.push(key_node.end, key_node.end, format!(": {text}"));
                }
                _ => self.push(value.props_start, value.end, text),
            }
        } else {
            let entry = self.entry_start(map, key_node);
            match colon_after(self.src, key_node.end) {
                Some(c) => {
                    // A block sequence in place of a block sequence puts its `-` where the
                    // old one had it (`command:` with its items indented, or not): replacing
                    // it again gives that layout back.
                    let key_col = self.col(key_node.props_start);
                    let old_dash = (value.items().and_then(<[Node]>::first))
                        .filter(|_| !value.flow)
                        .and_then(|first| dash_before(self.src, first.props_start))
                        .map(|d| self.col(d));
                    let st = match (out, old_dash) {
                        (Out::Seq(items), Some(dash)) if !items.is_empty() && dash >= key_col => {
                            Style {
                                seq_offset: dash - key_col,
                                ..st
                            }
                        }
                        _ => st,
                    };
                    let mut text = emit::after_key(out, key_col, &st);
                    let to = if value.empty && value.props_start == value.start {
                        c + 1
                    } else {
                        value.end
                    };
                    // The spaces after the `:` stay as they are written (`command:   [a]`,
                    // or `command: ` before a block value): a value written on the key's
                    // line takes their place of its own single space, one on the next lines
                    // leaves them where they are (but for the usual single space before a
                    // value that was on the key's line). Replacing the value again gives
                    // them back.
                    // Only what lies between the `:` and the value counts: a flow value
                    // over several lines has line breaks of its own.
                    let gap_end = if to == c + 1 {
                        c + 1
                    } else {
                        value.props_start.clamp(c + 1, to)
                    };
                    let between = &self.src[c + 1..gap_end];
                    let spaces = between.bytes().take_while(|b| *b == b' ').count();
                    // One space before a value on the key's line is what is written anyway.
                    let inline = !between.contains('\n');
                    // Before a value on the next lines, the rest of the key's line (spaces, a
                    // comment) stays when the new value goes on the next lines too.
                    let key_line = between
                        .find('\n')
                        .map_or(0, |i| between[..i].trim_end_matches('\r').len());
                    let kept = match text.strip_prefix(' ') {
                        Some(rest) if spaces > 0 => {
                            text = rest.to_string();
                            spaces
                        }
                        _ if text.starts_with(st.nl) && !inline => key_line,
                        _ if text.starts_with(st.nl) && spaces != 1 => spaces,
                        _ => 0,
                    };
                    self.push(c + 1 + kept, to, text);
                }
                None if entry != key_node.props_start => {
                    // An explicit key (`? k`): its `:` starts a later line, at the column of
                    // the `?`, or is not written at all when the value is empty.
                    let col = self.col(entry);
                    let text = emit::after_key(out, col, &st);
                    match colon_at_next_token(self.src, key_node.end) {
                        Some(c) => {
                            let to = if value.empty && value.props_start == value.start {
                                c + 1
                            } else {
                                value.end
                            };
                            self.push(c + 1, to, text);
                        }
                        None => {
                            let text = format!("{}{}:{text}", st.nl, " ".repeat(col));
                            self.push(key_node.end, key_node.end, text);
                        }
                    }
                }
                None => {
                    let text = emit::after_key(out, self.col(key_node.props_start), &st);
                    let to = if value.empty {
                        value.props_start
                    } else {
                        value.end
                    };
                    self.push(value.props_start, to, text);
                }
            }
        }
        if let Some(v) = self.intended_at(path) {
            v.set(key, out.value());
        }
    }

    /// Replaces item `index` of sequence `seq` (at `path`) with `out`.
    pub fn replace_item(&mut self, seq: &Node, path: &[Seg], index: usize, out: &Out) {
        let st = self.style();
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
        let st = self.style();
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
        let st = self.style();
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
                self.insert_line_after(seq.end, dash_col, |s| {
                    s.push('-');
                    emit::push_after_dash(s, item, dash_col, &st);
                });
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
        // The new text has a header of its own, written for its value: a block scalar
        // ending the text needs no other fix to its header (`eof_fix`).
        self.push(node.props_start, node.end, text);
        if let Some(v) = self.intended_at(path) {
            *v = value;
        }
    }
}

/// A block scalar that ends a text without a final line break reads without a line feed
/// (as Kubernetes reads it). Lines added after it give it one, so its header must strip it:
/// the edit that makes `|` or `|+` into `|-` (likewise for `>`), if the text ends so.
fn eof_block_fix(src: &str, root: &Node) -> Option<Edit> {
    if src.ends_with(['\n', '\r']) {
        return None;
    }
    let mut n = root;
    loop {
        n = match &n.kind {
            // The last text of an entry is its key when it has no value (`? |`).
            Kind::Map(entries) => {
                let e = entries.last()?;
                if e.value.end > e.key.end {
                    &e.value
                } else {
                    &e.key
                }
            }
            Kind::Seq(items) => items.last()?,
            _ => break,
        };
    }
    if !n.is_block_scalar() || !src[n.end..].trim_matches([' ', '\t']).is_empty() {
        return None;
    }
    // A value that has its final line feed (its last lines are blank) keeps it anyway.
    if n.as_str().is_some_and(|v| v.ends_with('\n')) {
        return None;
    }
    let header_len = src[n.start..].find(['\n', '\r'])?;
    let header = &src[n.start..n.start + header_len];
    let header = header.split(" #").next().unwrap_or(header).trim_end();
    match header.find('+') {
        Some(p) => Some(Edit::replace(n.start + p..n.start + p + 1, "-")),
        None if header.contains('-') => None,
        None => Some(Edit::insert(n.start + 1, "-")),
    }
}

/// The `:` after a flow mapping key ending at `key_end`, possibly on a later line.
fn flow_colon_after(src: &str, key_end: usize) -> Option<usize> {
    let rest = &src[key_end..];
    let skip = rest.len() - rest.trim_start_matches([' ', '\t', '\r', '\n']).len();
    rest[skip..].starts_with(':').then_some(key_end + skip)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::style::detect_style;
    use crate::yaml::tree::parse_stream;

    fn edit(src: &str, f: impl FnOnce(&mut Editor<'_>, &Node)) -> String {
        let docs = parse_stream(src).unwrap();
        let root = &docs[0].root;
        let mut ed = Editor::new(src, root, detect_style(src, root));
        f(&mut ed, root);
        crate::yaml::apply::apply(
            src,
            &docs,
            &ed.take_edits(),
            &[Intended::edited(ed.intended_copy())],
        )
        .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn a_dropped_group_takes_back_its_edits_and_its_value() {
        let src = "a:\n  b: 1\nc:\n  d: 2\n";
        let docs = parse_stream(src).unwrap();
        let root = &docs[0].root;
        let mut ed = Editor::new(src, root, detect_style(src, root));
        let (a, c) = (root.get("a").unwrap(), root.get("c").unwrap());
        let (pa, pc) = ([Seg::Key("a".into())], [Seg::Key("c".into())]);
        let kept = ed.begin(&pa);
        ed.set(a, &pa, "b", &Out::Str("x".into()));
        assert_eq!(ed.edits_since(&kept).len(), 1);
        let dropped = ed.begin(&pc);
        assert!(ed.edits_since(&dropped).is_empty());
        ed.set(c, &pc, "e", &Out::Str("y".into()));
        assert_eq!(ed.edits_since(&dropped).len(), 1);
        ed.drop_group(dropped, &pc);
        assert_eq!(ed.edits().len(), 1);
        let out = crate::yaml::apply::apply(
            src,
            &docs,
            ed.edits(),
            &[Intended::edited(ed.intended_copy())],
        );
        assert_eq!(out.unwrap(), "a:\n  b: x\nc:\n  d: 2\n");
    }

    /// Two groups over a text that ends in a block scalar without a final line break: one
    /// adds a line after it (which needs its header's fix, `|` to `|-`), one rewrites the
    /// scalar whole (whose new header needs none) and is dropped, in either order. The kept
    /// group's text stays whole: the fix goes with the lines added, whichever group rewrote
    /// the scalar and was dropped.
    #[test]
    fn a_dropped_rewrite_of_a_last_block_scalar_keeps_the_other_groups_fix() {
        let src = "a:\n  b: |\n    x";
        let docs = parse_stream(src).unwrap();
        let root = &docs[0].root;
        let a = root.get("a").unwrap();
        let b = a.get("b").unwrap();
        let (pa, pb) = (
            [Seg::Key("a".into())],
            [Seg::Key("a".into()), Seg::Key("b".into())],
        );
        let out = |ed: &mut Editor<'_>| {
            let edits = ed.take_edits();
            let intended = [Intended::edited(ed.take_intended())];
            crate::yaml::apply::apply(src, &docs, &edits, &intended)
        };
        let want = "a:\n  b: |-\n    x\n  k: v";
        // The line first, then the rewrite, dropped.
        let mut ed = Editor::new(src, root, detect_style(src, root));
        let kept = ed.begin(&pa);
        ed.set(a, &pa, "k", &Out::Str("v".into()));
        assert!(!ed.edits_since(&kept).is_empty());
        let dropped = ed.begin(&pb);
        ed.replace_scalar_text(b, "\"y\"".into(), Value::str("y"), &pb);
        ed.drop_group(dropped, &pb);
        assert_eq!(out(&mut ed).as_deref(), Ok(want));
        // The rewrite first, dropped, then the line.
        let mut ed = Editor::new(src, root, detect_style(src, root));
        let dropped = ed.begin(&pb);
        ed.replace_scalar_text(b, "\"y\"".into(), Value::str("y"), &pb);
        ed.drop_group(dropped, &pb);
        ed.set(a, &pa, "k", &Out::Str("v".into()));
        assert_eq!(out(&mut ed).as_deref(), Ok(want));
        // Both kept: the rewrite's header stands, and no fix is written over it.
        let mut ed = Editor::new(src, root, detect_style(src, root));
        ed.set(a, &pa, "k", &Out::Str("v".into()));
        ed.replace_scalar_text(b, "\"y\"".into(), Value::str("y"), &pb);
        assert_eq!(out(&mut ed).as_deref(), Ok("a:\n  b: \"y\"\n  k: v"));
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
