//! Parsing a stream into the node tree ([`parse_stream`]), every node with its byte span.
//! The tree's types are defined in `yaml::node` and re-exported here, beside the parse that
//! makes them, as most readers need both.
//!
//! The tree is built from granit-parser's events. Spans are normalised so that every node
//! covers exactly its own text:
//! - `start` is where the node's content begins (the quote of a quoted scalar, the `|` of a
//!   block scalar, the `-` of a block sequence, the first key of a block mapping);
//! - `props_start` is where its anchor or tag begins, if it has any (else `start`);
//! - `end` is just past its last content byte (block scalars exclude trailing line breaks).

use super::node::Text;
pub use super::node::{Doc, Node};
pub(crate) use super::node::{Entry, Kind};
use super::text::dash_before;
use granit_parser::{Event, Parser, ScalarStyle, Span, StructureStyle};

/// A parse failure at a byte offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub offset: usize,
    pub message: String,
}

/// Parser options used everywhere, so that the first parse and the verifying re-parse agree.
fn options() -> granit_parser::Options {
    granit_parser::options! {
        emit_anchor_events: true,
        // Kubernetes reads YAML with a libyaml-derived parser: a block scalar on the last line
        // of a file without a line break gets no line feed.
        block_scalar_eof_without_line_feed: true,
    }
}

/// Parses a whole stream into documents. Empty streams give no documents.
///
/// A text in the common subset of YAML that manifests are made of is read by
/// `subset::parse`, without the full parser; debug builds check that its tree is the full
/// parser's.
#[inline(never)] // a stage of its own in profiles (bench/callgrind.sh)
pub fn parse_stream(src: &str) -> Result<Vec<Doc>, ParseError> {
    if let Some(docs) = super::subset::parse(src) {
        #[cfg(debug_assertions)]
        same_as_full(src, &docs);
        return Ok(docs);
    }
    parse_full(src)
}

/// Panics unless the full parser reads `src` as `docs`: every test run holds the subset
/// parser to it.
#[cfg(debug_assertions)]
fn same_as_full(src: &str, docs: &[Doc]) {
    match parse_full(src) {
        Err(e) => {
            panic!("the subset parser accepted a text the full parser refuses ({e:?}): {src:?}")
        }
        Ok(full) => {
            if let Some(d) = super::subset::difference(docs, &full) {
                panic!("the subset parser differs from the full parser ({d}) on {src:?}");
            }
        }
    }
}

/// [`parse_stream`] by granit-parser alone, for every text.
pub fn parse_full(src: &str) -> Result<Vec<Doc>, ParseError> {
    let mut b = Builder {
        src,
        stack: Vec::new(),
        docs: Vec::new(),
        prev_end: 0,
        doc_start: 0,
        last_opened: false,
    };
    for item in Parser::new_from_str_with_options(src, options()) {
        let (event, span) = item.map_err(|e| ParseError {
            offset: e.marker().byte_offset().unwrap_or(src.len()).min(src.len()),
            message: describe(&e.info()),
        })?;
        b.event(event, span)?;
    }
    // Each document runs to the start of the next; the last one to the end of the stream.
    let n = b.docs.len();
    for i in 0..n {
        let end = if i + 1 < n {
            b.docs[i + 1].range.start
        } else {
            src.len()
        };
        b.docs[i].range.end = end;
    }
    Ok(b.docs)
}

/// The parser's message, reworded where it is obscure.
fn describe(info: &str) -> String {
    if info.contains("recursion limit") {
        // granit-parser stops at 255 levels, so the tree's recursive walks stay shallow.
        "collections nested more than 255 levels deep (recursion limit exceeded)".to_string()
    } else {
        // One finding is one line: the parser may add "\nwhile parsing ..." context.
        info.replace('\n', "; ")
    }
}

enum Frame {
    Seq(Node),
    Map(Node, Option<Node>),
}

struct Builder<'a> {
    src: &'a str,
    stack: Vec<Frame>,
    docs: Vec<Doc>,
    /// End of the previous event's span: a block scalar's `|` lies between it and the content.
    prev_end: usize,
    doc_start: usize,
    /// The previous node event opened a collection.
    last_opened: bool,
}

fn range(span: &Span, src: &str) -> (usize, usize) {
    match span.byte_range() {
        Some(r) => (r.start.min(src.len()), r.end.min(src.len())),
        None => (src.len(), src.len()),
    }
}

impl Builder<'_> {
    fn event(&mut self, event: Event<'_>, span: Span) -> Result<(), ParseError> {
        let (s, e) = range(&span, self.src);
        let tag = span
            .tag_span()
            .and_then(|t| t.slice(self.src).map(str::to_string));
        let tag_start = span
            .tag_span()
            .and_then(|t| t.byte_range())
            .map(|r| r.start);
        match event {
            Event::StreamStart | Event::StreamEnd | Event::Comment(..) => {}
            Event::DocumentStart(..) => {
                self.doc_start = self.docs.last().map_or(0, |d| d.range.end);
            }
            Event::DocumentEnd => {
                // `...` belongs to the document it ends.
                if e > s {
                    self.prev_end = e;
                }
                if let Some(d) = self.docs.last_mut() {
                    d.range.end = self.prev_end.max(d.root.end);
                }
            }
            Event::Anchor(_, name) => {
                // Arrives right after the node it belongs to.
                let name = name.into_owned();
                self.set_anchor(name, s, e);
                return Ok(());
            }
            Event::Alias(_) | Event::UnresolvedAlias(_) => {
                let name = self.src[s..e].trim_start_matches('*').to_string();
                let node = Node {
                    kind: Kind::Alias(name),
                    start: s,
                    end: e,
                    props_start: s,
                    anchor: None,
                    tag: None,
                    flow: false,
                    empty: false,
                };
                self.last_opened = false;
                self.push_node(node)?;
            }
            Event::Scalar(value, style, _, _) => {
                let (start, end, empty) = self.scalar_extent(style, s, e, &value);
                let props = tag_start.map_or(start, |t| t.min(start));
                let node = Node {
                    kind: Kind::Scalar {
                        value: Text::from(value),
                        style,
                    },
                    start,
                    end,
                    props_start: props,
                    anchor: None,
                    tag,
                    flow: false,
                    empty,
                };
                self.last_opened = false;
                self.push_node(node)?;
                // An empty scalar has no text: the parser's span for it may lie at a later
                // token, which must not move where the document ends.
                if !empty {
                    self.prev_end = e.max(self.prev_end);
                }
                return Ok(());
            }
            Event::SequenceStart(style, _, _) | Event::MappingStart(style, _, _) => {
                self.last_opened = true;
                let flow = style == StructureStyle::Flow;
                let is_seq = matches!(event, Event::SequenceStart(..));
                let node = Node {
                    kind: if is_seq {
                        Kind::Seq(Vec::new())
                    } else {
                        Kind::Map(Vec::new())
                    },
                    start: s,
                    end: e,
                    props_start: tag_start.map_or(s, |t| t.min(s)),
                    anchor: None,
                    tag,
                    flow,
                    empty: false,
                };
                self.stack.push(if is_seq {
                    Frame::Seq(node)
                } else {
                    Frame::Map(node, None)
                });
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let mut node = match self.stack.pop() {
                    Some(Frame::Seq(n)) => n,
                    Some(Frame::Map(n, _)) => n,
                    None => {
                        return Err(ParseError {
                            offset: s,
                            message: "unbalanced collection end".into(),
                        });
                    }
                };
                self.finish_collection(&mut node, s, e);
                self.last_opened = false;
                self.push_node(node)?;
            }
            _ => {}
        }
        if e > s {
            self.prev_end = e;
        }
        Ok(())
    }

    fn set_anchor(&mut self, name: String, at: usize, anchor_end: usize) {
        // The anchor event follows its node: a collection start leaves the node open on the
        // stack; a scalar or alias was pushed as the latest child, pending key or root.
        let node: Option<&mut Node> = if self.last_opened {
            match self.stack.last_mut() {
                Some(Frame::Seq(n) | Frame::Map(n, _)) => Some(n),
                None => None,
            }
        } else {
            match self.stack.last_mut() {
                Some(Frame::Seq(n)) => match &mut n.kind {
                    Kind::Seq(items) => items.last_mut(),
                    _ => None,
                },
                Some(Frame::Map(_, Some(k))) => Some(k),
                Some(Frame::Map(n, None)) => match &mut n.kind {
                    Kind::Map(entries) => entries.last_mut().map(|e| &mut e.value),
                    _ => None,
                },
                None => self.docs.last_mut().map(|d| &mut d.root),
            }
        };
        let Some(n) = node else {
            return;
        };
        n.anchor = Some(name);
        if n.empty && n.end <= at {
            // An empty node whose anchor is all its text (`k: &a`, or the anchor on the
            // line below its key): pushed as one without text, at its key, before the anchor
            // arrived. The anchor is its text: it starts there (or at a tag before it) and
            // ends after it, so that what goes after its entry goes after the anchor.
            if n.props_start == n.start {
                n.props_start = at;
            }
            n.start = anchor_end;
            n.end = anchor_end;
            self.prev_end = self.prev_end.max(anchor_end);
        } else {
            n.props_start = n.props_start.min(at);
        }
    }

    /// The real extent of a scalar: block scalars start at their indicator and end at their
    /// last content byte.
    fn scalar_extent(
        &self,
        style: ScalarStyle,
        s: usize,
        e: usize,
        value: &str,
    ) -> (usize, usize, bool) {
        let no_content = value.is_empty();
        let src = self.src;
        match style {
            ScalarStyle::Literal | ScalarStyle::Folded => {
                let from = self.prev_end.min(s);
                // The span of an empty block scalar may start at its indicator.
                let indicator = find_block_indicator(&src[from..s])
                    .map(|i| from + i)
                    .or_else(|| matches!(src.as_bytes().get(s), Some(b'|' | b'>')).then_some(s))
                    .unwrap_or(s);
                let header_end = indicator
                    + src[indicator..]
                        .find(['\n', '\r'])
                        .unwrap_or(src.len() - indicator);
                let header_end = header_end_without_comment(src, indicator, header_end);
                // An empty block scalar is its header alone: the parser may place its
                // (empty) content at the next token, on a later line.
                let content_end = if no_content {
                    header_end
                } else if src[indicator..header_end].contains('+') {
                    // Kept trailing line breaks are content: the block ends before the
                    // last of them. (A block of blank lines alone may be placed at the next
                    // token, with an empty span: its lines run up to there all the same.)
                    let all = without_next_indent(src, indicator, e.max(s));
                    let one = all
                        .strip_suffix('\n')
                        .map(|b| b.strip_suffix('\r').unwrap_or(b));
                    indicator + one.unwrap_or(all).len()
                } else if value.trim_end_matches('\n').ends_with([' ', '\t']) {
                    // Its last lines hold spaces beyond the indentation, which are content:
                    // the block ends after them.
                    s + without_next_indent(src, s, e)
                        .trim_end_matches(['\n', '\r'])
                        .len()
                } else {
                    s + src[s..e].trim_end_matches(['\n', '\r', ' ', '\t']).len()
                };
                (indicator, content_end.max(header_end), false)
            }
            ScalarStyle::Plain if s == e => (s, e, true),
            _ => (s, e, false),
        }
    }

    fn finish_collection(&self, node: &mut Node, s: usize, e: usize) {
        if node.flow {
            // A flow collection ends after its bracket; an implicit single-pair mapping
            // inside a flow sequence has no brackets and ends with its value.
            if e > s {
                node.end = e;
            } else {
                node.end = last_child_end(node).unwrap_or(node.start);
                if let Some(first) = first_child_start(node) {
                    node.start = node.start.min(first);
                }
            }
            return;
        }
        // Block collections: from the first child (or the `-` before it) to the last child.
        if let Some(first) = first_child_start(node) {
            node.start = match &node.kind {
                Kind::Seq(_) => dash_before(self.src, first).unwrap_or(first),
                // From the `?` of an explicit first key.
                _ => super::text::explicit_key_before(self.src, first).unwrap_or(first),
            };
            node.props_start = if node.anchor.is_none() && node.tag.is_none() {
                node.start
            } else {
                node.props_start.min(node.start)
            };
        }
        node.end = last_child_end(node).unwrap_or(node.start).max(node.start);
    }

    /// A block mapping entry with an explicit key (`? k`) whose `:` is less indented than
    /// the `?`. YAML puts both at the mapping's indentation, and libyaml (which Kubernetes'
    /// YAML reader derives from) refuses the text; granit-parser accepts it, giving the `:`
    /// to the inner mapping, so no entry could be placed after it. Refused as the syntax
    /// error it is.
    fn misplaced_explicit_value(&self, key: &Node, value: &Node) -> Result<(), ParseError> {
        let Some(colon) = super::text::colon_at_next_token(self.src, key.end) else {
            return Ok(());
        };
        // A `:` on the key's own line is to the right of any `?` before the key (the
        // common case, settled without looking for the `?`).
        // (An empty key may sit at the `:` itself: that one is looked at.)
        if key.end > key.start && !self.src[key.end..colon].contains(['\n', '\r']) {
            return Ok(());
        }
        // A key that is itself a mapping may have been given the `?` as its start (`? :`).
        let own =
            (self.src.as_bytes().get(key.props_start) == Some(&b'?')).then_some(key.props_start);
        let Some(q) = super::text::explicit_key_before(self.src, key.props_start).or(own) else {
            return Ok(());
        };
        if colon > value.props_start.max(value.start) && !value.empty {
            return Ok(());
        }
        let (text, col) = (self.src, super::text::byte_col);
        if col(text, colon) < col(text, q) {
            return Err(ParseError {
                offset: colon,
                message: "the `:` of an explicit key is less indented than its `?`; YAML \
                          needs both at the mapping's indentation"
                    .into(),
            });
        }
        Ok(())
    }

    fn push_node(&mut self, mut node: Node) -> Result<(), ParseError> {
        if let Some(Frame::Map(map, Some(key))) = self.stack.last()
            && !map.flow
        {
            self.misplaced_explicit_value(key, &node)?;
        }
        let (is_key, flow) = match self.stack.last() {
            Some(Frame::Map(map, pending)) => (pending.is_none(), map.flow),
            _ => (false, false),
        };
        if is_key
            && node.empty
            && node.props_start == node.start
            && !super::text::value_indicator(self.src, node.start, flow)
        {
            // An empty explicit key (`?` alone) is placed at the next token, which may be on
            // a later line, past a `---`: it sits just after its `?`.
            if let Some(q) = super::text::explicit_key_before(self.src, node.start) {
                let at = q + 1;
                node.start = at;
                node.end = at;
                node.props_start = at;
            }
        }
        match self.stack.last_mut() {
            Some(Frame::Seq(seq)) => {
                if let Kind::Seq(items) = &mut seq.kind {
                    items.push(node);
                }
            }
            Some(Frame::Map(map, pending)) => match pending.take() {
                None => *pending = Some(node),
                Some(key) => {
                    // An explicit key (`? a`) without `:` has an empty value, which the
                    // parser places at the next token: on a later line, even past a `---`.
                    // It has no text of its own, so it sits at the end of its key, and the
                    // mapping ends there too.
                    let bare = node.empty && node.props_start == node.start;
                    // A `:` that begins a plain scalar (`:a`, the next key) is not it.
                    let at_colon = super::text::value_indicator(self.src, node.start, map.flow);
                    if bare && at_colon {
                        // `k:` with nothing after it: the empty value follows its `:`, so
                        // that the entry (and the document) ends after the `:`.
                        let at = node.start + 1;
                        node.start = at;
                        node.end = at;
                        node.props_start = at;
                    } else if bare && node.start > key.end {
                        node.start = key.end;
                        node.end = key.end;
                        node.props_start = key.end;
                    }
                    if node.empty {
                        self.prev_end = self.prev_end.max(node.end);
                    }
                    if let Kind::Map(entries) = &mut map.kind {
                        entries.push(Entry { key, value: node });
                    }
                }
            },
            None => {
                let start = self.doc_start;
                self.docs.push(Doc {
                    root: node,
                    range: start..self.src.len(),
                });
            }
        }
        Ok(())
    }
}

/// `src[from..to]` without a last line of only spaces and tabs that the next token
/// follows (a block scalar's span may run into the indentation of the next line).
fn without_next_indent(src: &str, from: usize, to: usize) -> &str {
    let text = &src[from..to];
    if to < src.len()
        && let Some(i) = text.rfind(['\n', '\r'])
        && text[i + 1..].bytes().all(|b| b == b' ' || b == b'\t')
    {
        return &text[..=i];
    }
    text
}

fn first_child_start(node: &Node) -> Option<usize> {
    match &node.kind {
        Kind::Seq(items) => items.first().map(|n| n.props_start),
        Kind::Map(entries) => entries.first().map(|e| e.key.props_start),
        _ => None,
    }
}

fn last_child_end(node: &Node) -> Option<usize> {
    match &node.kind {
        Kind::Seq(items) => items.last().map(|n| n.end),
        Kind::Map(entries) => entries.last().map(|e| e.value.end.max(e.key.end)),
        _ => None,
    }
}

/// Offset of the `|` or `>` in the text between the previous token and a block scalar's
/// content, skipping comments.
fn find_block_indicator(between: &str) -> Option<usize> {
    let mut in_comment = false;
    let mut prev_space = true;
    for (i, c) in between.char_indices() {
        match c {
            '\n' | '\r' => in_comment = false,
            _ if in_comment => {}
            '#' if prev_space => in_comment = true,
            '|' | '>' => return Some(i),
            _ => {}
        }
        prev_space = c.is_whitespace();
    }
    None
}

/// The end of a block scalar header (`|-`, `>2`) without a trailing comment or spaces.
fn header_end_without_comment(src: &str, indicator: usize, line_end: usize) -> usize {
    let line = &src[indicator..line_end];
    let cut = line
        .char_indices()
        .find(|&(i, c)| c == '#' && i > 0 && line[..i].ends_with([' ', '\t']))
        .map_or(line.len(), |(i, _)| i);
    indicator + line[..cut].trim_end().len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(src: &str) -> Node {
        let mut d = parse_stream(src).expect("parses");
        assert_eq!(d.len(), 1);
        d.remove(0).root
    }

    fn text<'a>(src: &'a str, n: &Node) -> &'a str {
        &src[n.props_start..n.end]
    }

    #[test]
    fn spans_cover_exactly_the_node() {
        let src = "a: 1\nb:\n  - x\n  - y # c\nc: [p, q]\nd: {e: f}\ng: |-\n  lit\n\nh:\n- k: v\n  m: n\n";
        let root = one(src);
        assert_eq!(text(src, root.get("b").unwrap()), "- x\n  - y");
        assert_eq!(text(src, root.get("c").unwrap()), "[p, q]");
        assert_eq!(text(src, root.get("d").unwrap()), "{e: f}");
        assert_eq!(text(src, root.get("g").unwrap()), "|-\n  lit");
        assert_eq!(text(src, root.get("h").unwrap()), "- k: v\n  m: n");
        assert_eq!(root.start, 0);
    }

    #[test]
    fn a_key_that_begins_with_a_colon_is_not_the_value_indicator_of_an_explicit_key() {
        // `:a` is a plain scalar (a key) after `? args`, which has an empty value at its
        // end (fuzz seed 2724862855); less indented, it is a key of the outer mapping, not a
        // misplaced `:` (go.yaml.in/yaml v2.4.4 and v3.0.4 read both so).
        let src = "c:\n  ? args\n  :a:\n";
        let c = one(src);
        let c = c.get("c").unwrap();
        let args = c.get("args").unwrap();
        assert!(args.is_null());
        assert_eq!(args.start, src.find("args").unwrap() + 4);
        assert!(c.get(":a").unwrap().is_null());
        let root = one("c:\n  ? args\n:a: 1\n");
        assert!(root.get(":a").is_some());
    }

    #[test]
    fn anchors_tags_and_empty_values() {
        let src = "a: &x \"q\"\nb: *x\nc: !!str t\nd:\ne: &m\n  k: v\n";
        let root = one(src);
        let a = root.get("a").unwrap();
        assert_eq!(a.anchor.as_deref(), Some("x"));
        assert_eq!(text(src, a), "&x \"q\"");
        assert!(matches!(root.get("b").unwrap().kind, Kind::Alias(_)));
        assert_eq!(text(src, root.get("c").unwrap()), "!!str t");
        assert!(root.get("d").unwrap().is_null());
        let e = root.get("e").unwrap();
        assert_eq!(e.anchor.as_deref(), Some("m"));
        assert!(e.has_anchor_or_alias());
    }

    #[test]
    fn an_empty_node_with_an_anchor_alone_spans_the_anchor() {
        // Its anchor is its only text, on its key's line or below it: the entry and the
        // mapping end after the anchor (fuzz seed 1242518854: an entry appended to the
        // mapping went between the key and its anchor).
        for (src, node) in [
            ("a: 1\nb: &x\n", "&x"),
            ("a: 1\nb:\n  &x\n", "&x"),
            ("a: 1\nb: !t &x\n", "!t &x"),
            ("a: 1\nb: &x !t\n", "&x !t"),
            ("- a\n- &x\n", "&x"),
            ("{a: 1, b: &x}\n", "&x"),
            ("[a, &x]\n", "&x"),
        ] {
            let root = one(src);
            let n = match &root.kind {
                Kind::Map(_) => root.get("b").unwrap(),
                _ => &root.items().unwrap()[1],
            };
            assert!(n.empty, "{src:?}");
            assert_eq!(n.anchor.as_deref(), Some("x"), "{src:?}");
            assert_eq!(text(src, n), node, "{src:?}");
            assert_eq!(
                root.end,
                src.find(node).unwrap() + node.len() + usize::from(root.flow),
                "{src:?}"
            );
        }
    }

    #[test]
    fn documents_and_errors() {
        let docs = parse_stream("---\na: 1\n...\n---\nb: 2\n").unwrap();
        assert_eq!(docs.len(), 2);
        assert!(parse_stream("a: b\n c: d\n").is_err());
        let err = parse_stream("a: [1,\n").unwrap_err();
        assert!(err.offset <= 7);
    }
}
