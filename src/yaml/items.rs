//! Cuts inside a list document: each item of its top-level `items` becomes a piece of its
//! own, so that a dump of a whole cluster (one `List` of every pod) is read item by item, in
//! bounded memory, instead of as one document past the size cap.
//!
//! Two layouts are cut, those `kubectl get -o yaml|json` writes (kubernetes/kubernetes@
//! 873c3ca26a00 `staging/src/k8s.io/kubectl/pkg/cmd/get/get.go` `printGeneric`: several
//! objects are printed as one `v1` `List` with them as `items`):
//! - YAML (`staging/src/k8s.io/cli-runtime/pkg/printers/yaml.go`, `sigs.k8s.io/yaml`, which
//!   emits with go-yaml v2): a block mapping at column 0 whose `items:` key stands alone on its
//!   line, followed by a block sequence whose entries start with `- ` at one indentation (go-yaml
//!   v2 `emitterc.go` `yaml_emitter_emit_block_sequence_item` writes a sequence in a mapping
//!   without indenting it: column 0). A line at that indentation or less that is no entry ends
//!   the sequence. YAML 1.2 wants every continuation line of a scalar inside an entry indented
//!   past the entry's `-` (`s-flow-line-prefix`, block scalars' indentation), so an entry
//!   start cannot be inside a scalar.
//! - JSON (`staging/src/k8s.io/cli-runtime/pkg/printers/json.go`, kubernetes/kubernetes@
//!   008b3652959c: `json.MarshalIndent(obj, "", "    ")`): a document whose first line is `{`,
//!   the key `"items": [` at the indentation of the top-level keys, each item opening with a
//!   `{` line at one deeper indentation. JSON strings hold no raw line break, so every line
//!   of it is structure.
//!
//! Every piece an item starts is an [`Tag::Item`]: the YAML text of a block sequence of
//! one entry, or (JSON) the text of an object followed by `,` or not, which reads as a flow
//! sequence with `[` put in place of its first indentation space and `]` after it
//! ([`item_text`]). The piece before the first item ([`Tag::Head`]) and the one after the
//! last ([`Tag::Tail`]) hold the list's other keys and, in JSON, its brackets; they are not
//! read. A document of any other shape is not cut.

use super::bytes::spaces;
use std::collections::VecDeque;

/// What a piece that [`Items`] cut holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tag {
    /// The list's keys before its items (and, in JSON, the `[` that opens them).
    Head,
    /// One item (JSON: with the `,` after it).
    Item { json: bool },
    /// The rest of the list after its items.
    Tail,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum State {
    /// At the start of a document: no content line yet.
    #[default]
    Start,
    /// A YAML block mapping at column 0, before its `items:` key.
    Yaml,
    /// A JSON document, before its `"items": [`; `keys`: the indentation of its top-level
    /// keys, once seen.
    Json { keys: Option<usize> },
    /// Right after the `items` key, whose indentation is `key`.
    Opened { json: bool, key: usize },
    /// Among the items, which start at `indent`.
    In { json: bool, indent: usize },
    /// Past the items, or a document not cut.
    Done,
}

/// The line-by-line state of the cuts, and the tags of the pieces cut so far.
#[derive(Clone, Debug, Default)]
pub(crate) struct Items {
    /// Stream offset of the next line.
    at: u64,
    /// Stream offset of the piece the next line belongs to.
    piece: u64,
    state: State,
    /// The tagged pieces, by their start offsets in the stream, not yet taken.
    tags: VecDeque<(u64, Tag)>,
}

/// Leading spaces of `line` and the rest, without its line break.
fn split_indent(line: &[u8]) -> (usize, &[u8]) {
    let mut end = line.len();
    while end > 0 && matches!(line[end - 1], b'\n' | b'\r') {
        end -= 1;
    }
    let line = &line[..end];
    let indent = spaces(line);
    (indent, &line[indent..])
}

/// Whether a YAML line's content (past its indentation) starts a block sequence entry.
fn is_entry(rest: &[u8]) -> bool {
    rest.first() == Some(&b'-') && matches!(rest.get(1), None | Some(b' ' | b'\t'))
}

/// Whether a YAML line's content is the key `items:` with no value on the line.
fn is_items_key(rest: &[u8]) -> bool {
    let Some(after) = rest.strip_prefix(b"items:") else {
        return false;
    };
    let after = after.trim_ascii_start();
    after.is_empty() || after.starts_with(b"#")
}

impl Items {
    /// A document starts at `offset` (a document cut, or the stream's start).
    pub(crate) fn document(&mut self, offset: u64) {
        self.piece = offset;
        self.state = State::Start;
    }

    /// Skips a line that the document rule cut at or within.
    pub(crate) fn skip(&mut self, line: &[u8]) {
        self.at += line.len() as u64;
    }

    /// Stops cutting the current document (a line this reader cannot see through).
    pub(crate) fn give_up(&mut self, line: &[u8]) {
        self.at += line.len() as u64;
        self.state = State::Done;
    }

    /// Stream offset of the next line.
    pub(crate) fn offset(&self) -> u64 {
        self.at
    }

    /// Reads one line of a document (not a document marker); whether a piece starts with it.
    pub(crate) fn line(&mut self, line: &[u8]) -> bool {
        let start = self.at;
        self.at += line.len() as u64;
        let (indent, rest) = split_indent(line);
        if rest.is_empty() || rest.starts_with(b"#") {
            return false;
        }
        let mut state = self.state;
        if state == State::Start {
            state = match rest {
                b"{" if indent == 0 => State::Json { keys: None },
                [b'{' | b'[' | b'-' | b'%' | b'&' | b'!' | b'?', ..] => State::Done,
                _ if indent == 0 => State::Yaml,
                _ => State::Done,
            };
            if let State::Json { .. } = state {
                self.state = state;
                return false;
            }
        }
        let (next, cut) = match state {
            State::Yaml if indent == 0 && is_items_key(rest) => (
                State::Opened {
                    json: false,
                    key: 0,
                },
                None,
            ),
            State::Json { keys: None } => (State::Json { keys: Some(indent) }, None),
            State::Json { keys: Some(k) } if k == indent && rest == b"\"items\": [" => {
                (State::Opened { json: true, key: k }, None)
            }
            State::Opened { json: false, .. } if is_entry(rest) => {
                self.tags.push_back((self.piece, Tag::Head));
                let at = State::In {
                    json: false,
                    indent,
                };
                (at, Some(Tag::Item { json: false }))
            }
            State::Opened { json: true, key } if rest == b"{" && indent > key => {
                self.tags.push_back((self.piece, Tag::Head));
                let at = State::In { json: true, indent };
                (at, Some(Tag::Item { json: true }))
            }
            State::Opened { .. } => (State::Done, None),
            State::In { json, indent: n } => {
                let starts = if json {
                    indent == n && rest == b"{"
                } else {
                    indent == n && is_entry(rest)
                };
                if starts {
                    (state, Some(Tag::Item { json }))
                } else if indent < n || (!json && indent == n) {
                    (State::Done, Some(Tag::Tail))
                } else {
                    (state, None)
                }
            }
            s => (s, None),
        };
        self.state = next;
        let Some(tag) = cut else {
            return false;
        };
        self.piece = start;
        self.tags.push_back((start, tag));
        true
    }

    /// The tag of the piece that starts at `offset` (`None`: a whole document), dropping
    /// the tags of pieces before it.
    pub(crate) fn take(&mut self, offset: u64) -> Option<Tag> {
        while let Some(&(at, tag)) = self.tags.front() {
            if at > offset {
                return None;
            }
            self.tags.pop_front();
            if at == offset {
                return Some(tag);
            }
        }
        None
    }
}

/// The text an item piece is parsed as, at the same offsets: a YAML entry as it is; a JSON
/// object as a flow sequence (its first byte, an indentation space, becomes `[`, and `]`
/// follows it, so that the `,` after it is a sequence's trailing comma).
pub(crate) fn item_text(piece: &str, tag: Tag) -> std::borrow::Cow<'_, str> {
    match tag {
        Tag::Item { json: true } if piece.starts_with(' ') => {
            let mut t = String::with_capacity(piece.len() + 1);
            t.push('[');
            t.push_str(&piece[1..]);
            t.push(']');
            std::borrow::Cow::Owned(t)
        }
        _ => std::borrow::Cow::Borrowed(piece),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pieces of `text` with their tags, cutting at the items of lists only.
    fn cut(text: &str) -> Vec<(Option<Tag>, &str)> {
        let mut items = Items::default();
        let mut starts = vec![0usize];
        let mut at = 0;
        while at < text.len() {
            let end = text[at..].find('\n').map_or(text.len(), |i| at + i + 1);
            if items.line(&text.as_bytes()[at..end]) && at > 0 {
                starts.push(at);
            }
            at = end;
        }
        let mut out = Vec::new();
        for (i, &s) in starts.iter().enumerate() {
            let e = starts.get(i + 1).copied().unwrap_or(text.len());
            out.push((items.take(s as u64), &text[s..e]));
        }
        out
    }

    #[test]
    fn yaml_items_at_column_0() {
        let t = "apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Pod\n# c\n- kind: Node\n  x: |\n    - y\nkind: List\nmetadata:\n  resourceVersion: \"\"\n";
        let item = Some(Tag::Item { json: false });
        assert_eq!(
            cut(t),
            vec![
                (Some(Tag::Head), "apiVersion: v1\nitems:\n"),
                (item, "- apiVersion: v1\n  kind: Pod\n# c\n"),
                (item, "- kind: Node\n  x: |\n    - y\n"),
                (
                    Some(Tag::Tail),
                    "kind: List\nmetadata:\n  resourceVersion: \"\"\n"
                ),
            ]
        );
        // Indented entries, and a list that ends the text.
        let t = "items:\n  - a: 1\n  - b: 2\n";
        assert_eq!(cut(t).len(), 3);
        // Not a list at column 0, or an items key with a value: no cut.
        assert_eq!(cut("- items:\n  - a\n").len(), 1);
        assert_eq!(cut("items: []\nkind: List\n").len(), 1);
        assert_eq!(cut("a:\n  items:\n  - x\n  - y\n").len(), 1);
    }

    #[test]
    fn json_items_as_kubectl_indents_them() {
        let t = "{\n    \"apiVersion\": \"v1\",\n    \"items\": [\n        {\n            \"kind\": \"Pod\",\n            \"a\": {\n                \"b\": 1\n            }\n        },\n        {\n            \"kind\": \"Node\"\n        }\n    ],\n    \"kind\": \"List\"\n}\n";
        let got = cut(t);
        let item = Some(Tag::Item { json: true });
        assert_eq!(got.len(), 4, "{got:?}");
        assert_eq!(got[0].0, Some(Tag::Head));
        assert_eq!(got[1].0, item);
        assert!(got[1].1.ends_with("        },\n"));
        assert_eq!(
            got[2],
            (
                item,
                "        {\n            \"kind\": \"Node\"\n        }\n"
            )
        );
        assert_eq!(got[3].0, Some(Tag::Tail));
        assert_eq!(
            item_text(got[2].1, Tag::Item { json: true }).len(),
            got[2].1.len() + 1
        );
        // Compact JSON, or items nested deeper: one piece.
        assert_eq!(cut("{\"items\": [{\"a\": 1}]}\n").len(), 1);
        assert_eq!(cut("{\n  \"a\": {\n    \"items\": [\n      {\n").len(), 1);
    }
}
