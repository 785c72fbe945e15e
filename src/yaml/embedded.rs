//! Editing YAML that lives inside a string: the `proxy.istio.io/config` annotation and the
//! `mesh` key of Istio's ConfigMap.
//!
//! The string's text is parsed and edited with the same engine as a file, so its comments
//! and layout survive; then it is written back in the string's own style (a literal block
//! keeps its indentation, a quoted string its quotes).

use crate::yaml::apply;
use crate::yaml::edit::Edit;
use crate::yaml::editor::Editor;
use crate::yaml::emit;
use crate::yaml::path::Seg;
use crate::yaml::style::detect_style;
use crate::yaml::text::{line_and_byte_col, line_col};
use crate::yaml::tree::{Kind, Node, parse_stream};
use crate::yaml::value::Value;
use granit_parser::ScalarStyle;

/// Why embedded text could not be edited.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum EmbeddedError {
    /// The text is not valid YAML (or JSON); the message says where.
    Invalid(String),
    /// The text holds more than one document.
    MultiDoc,
    /// The string carries a tag (`!t`) other than `!!str`: what it means is up to whoever
    /// reads it, so meshjob does not edit inside it. Holds the tag as written.
    Tagged(String),
    /// The edited text did not read back as intended (a bug; nothing is written).
    Verify,
}

impl EmbeddedError {
    /// Why the text was left alone, for a finding (not for `Verify`, an internal error).
    pub(crate) fn reason(&self) -> String {
        match self {
            EmbeddedError::Invalid(why) => format!("is not valid YAML or JSON ({why})"),
            EmbeddedError::MultiDoc => "holds several YAML documents".into(),
            EmbeddedError::Tagged(tag) => format!(
                "carries the tag `{tag}`, which meshjob does not edit inside (remove the tag to let it)"
            ),
            EmbeddedError::Verify => "did not read back as intended".into(),
        }
    }
}

/// Whether embedded text is JSON, so that additions are written as JSON. A YAML flow
/// mapping (`{a: b}`) also starts with a brace, but its additions follow its own style.
pub(crate) fn looks_json(text: &str) -> bool {
    text.trim_start().starts_with('{') && serde_json::from_str::<serde_json::Value>(text).is_ok()
}

/// Where the string sits: the column of its key and whether block style is allowed there
/// (it is not inside a flow collection).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Place {
    pub key_col: usize,
    pub block_allowed: bool,
}

/// Edits the YAML text held by string scalar `node` (at `path` in `outer`'s document) with
/// `f`, which receives an editor over the inner text and the inner root.
pub(crate) fn edit_in_string<R>(
    outer: &mut Editor<'_>,
    node: &Node,
    place: Place,
    path: &[Seg],
    f: impl FnOnce(&mut Editor<'_>, &Node) -> R,
) -> Result<R, EmbeddedError> {
    let Kind::Scalar {
        value: inner,
        style,
    } = &node.kind
    else {
        return Err(EmbeddedError::Invalid("not a string".into()));
    };
    if let Some(tag) = node.tag.as_deref().filter(|_| node.key_str().is_none()) {
        return Err(EmbeddedError::Tagged(tag.to_string()));
    }
    let docs = parse_stream(inner).map_err(|e| {
        let (line, col) = line_col(inner, e.offset);
        EmbeddedError::Invalid(format!(
            "line {line}, column {col} of the text: {}",
            e.message
        ))
    })?;
    if docs.len() > 1 {
        return Err(EmbeddedError::MultiDoc);
    }
    let empty_root;
    let root = match docs.first() {
        Some(d) => &d.root,
        None => {
            empty_root = parse_stream("{}").map_err(|_| EmbeddedError::Verify)?;
            &empty_root[0].root
        }
    };
    let mut style_in = detect_style(inner, root);
    style_in.json = looks_json(inner);
    // An empty text is replaced whole; edit a stand-in `{}` and use its result.
    let (text_in, stand_in) = if docs.is_empty() {
        ("{}", true)
    } else {
        (inner.as_str(), false)
    };
    let mut ed = Editor::new(text_in, root, style_in);
    let r = f(&mut ed, root);
    if ed.edits().is_empty() {
        return Ok(r);
    }
    let stand_in_text = stand_in.then(|| reflow_stand_in(ed.intended()));
    let inner_edits = ed.take_edits();
    let intended = [apply::Intended::edited(ed.take_intended())];
    let new_inner = match stand_in_text {
        Some(text) => apply::verify(&text, &intended).map(|_| text),
        None => apply::apply(text_in, &docs, &inner_edits, &intended),
    }
    .map_err(|_| EmbeddedError::Verify)?;
    let [intended] = intended;
    let value = Value::YamlText(std::sync::Arc::new(intended.value));
    if *style == ScalarStyle::Literal
        && place.block_allowed
        && !stand_in
        && let Some(edits) = edits_in_block(outer, node, place, inner, &new_inner, &inner_edits)
    {
        // Only the edited lines change: whitespace-only lines, trailing spaces and the
        // header of the block stay as they are.
        outer.splice_into_scalar(edits, value, path);
        return Ok(r);
    }
    let text = encode(&new_inner, *style, node, place, outer);
    outer.replace_scalar_text(node, text, value, path);
    Ok(r)
}

/// The edits of the text held by literal block scalar `node`, moved onto the file: each
/// inner offset maps to its line of the block, and inserted lines get the block's
/// indentation and line break. `None` when the mapping is not exact (an indentation
/// indicator, odd indentation), or when the result does not read back as `new_inner`; the
/// caller then rewrites the whole scalar.
fn edits_in_block(
    outer: &Editor<'_>,
    node: &Node,
    place: Place,
    inner: &str,
    new_inner: &str,
    inner_edits: &[Edit],
) -> Option<Vec<Edit>> {
    let src = outer.src;
    let body = &src[node.start..node.end];
    let header_len = body.find('\n')?;
    if body[..header_len].contains(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let indent = content_indent(src, node)?;
    // Start of each line of the block in the file (possibly past the block's end, where
    // an insertion after the last line lands).
    let mut line_starts = vec![node.start + header_len + 1];
    for _ in 0..inner.matches('\n').count() {
        let last = *line_starts.last()?;
        line_starts.push(last + src.get(last..)?.find('\n')? + 1);
    }
    let map = |p: usize| -> Option<(usize, bool)> {
        let (line, col) = line_and_byte_col(inner, p);
        let start = *line_starts.get(line)?;
        if col == 0 {
            return Some((start.min(src.len()), true));
        }
        let at = start + indent + col;
        let spaces = src.get(start..start + indent)?;
        (spaces.bytes().all(|b| b == b' ') && at <= src.len()).then_some((at, false))
    };
    let nl = outer.style().nl;
    let pad = " ".repeat(indent);
    let mut edits = Vec::with_capacity(inner_edits.len());
    for e in inner_edits {
        let (start, at_line_start) = map(e.start)?;
        let (end, _) = map(e.end)?;
        let mut text = String::new();
        for (i, seg) in e.text.split('\n').enumerate() {
            if i > 0 {
                text.push_str(nl);
            }
            if !seg.is_empty() && (i > 0 || at_line_start) {
                text.push_str(&pad);
            }
            text.push_str(seg);
        }
        // A new line of the block sits `indent` columns deeper in the file than in the text:
        // among new lines at one point (the line after the block, where one appended to an
        // enclosing list lands too), deeper ones go first.
        let order = match at_line_start {
            true => e.order - i64::try_from(indent).ok()?,
            false => e.order,
        };
        edits.push(Edit::replace(start..end, text).ordered(order));
    }
    // Read the new block back on its own, under a key at the original column.
    let shift = node.start;
    let local: Vec<Edit> = edits
        .iter()
        .map(|e| e.shifted(-isize::try_from(shift).ok()?))
        .collect::<Option<_>>()?;
    let tail_end = edits.iter().map(|e| e.end).max()?.max(node.end);
    let block = apply::splice(src.get(shift..tail_end)?, &local).ok()?;
    let probe = format!("{}x: {block}{nl}", " ".repeat(place.key_col));
    let docs = parse_stream(&probe).ok()?;
    let read = docs.first()?.root.get("x")?.as_str()?.to_string();
    (read == new_inner).then_some(edits)
}

/// Block YAML text for a value built from nothing (the string was empty).
fn reflow_stand_in(v: &Value) -> String {
    let out = value_to_out(v);
    let st = emit::Style::default();
    match &out {
        emit::Out::Map(entries) => {
            let mut s = String::new();
            for (k, val) in entries {
                s.push_str(&emit::key_text(k, &st));
                s.push(':');
                s.push_str(&emit::after_key(val, 0, &st));
                s.push('\n');
            }
            s
        }
        other => emit::flow(other, &st),
    }
}

fn value_to_out(v: &Value) -> emit::Out {
    use crate::yaml::value::ScalarType;
    match v {
        Value::Map(entries) => emit::Out::Map(
            entries
                .iter()
                .map(|(k, v)| (k.as_str().unwrap_or_default().to_string(), value_to_out(v)))
                .collect(),
        ),
        Value::Seq(items) => emit::Out::Seq(items.iter().map(value_to_out).collect()),
        Value::Scalar(ScalarType::Str, s) => emit::Out::Str(s.to_string()),
        Value::Scalar(_, s) => emit::Out::Raw {
            text: s.to_string(),
            value: v.clone(),
            flow_safe: true,
        },
        _ => emit::Out::Str(String::new()),
    }
}

/// Writes `text` back as the scalar it came from, keeping that scalar's style where it can.
fn encode(text: &str, style: ScalarStyle, node: &Node, place: Place, outer: &Editor<'_>) -> String {
    let st = &outer.style();
    let Place {
        key_col,
        block_allowed,
    } = place;
    let multiline = text.contains('\n');
    match style {
        // A block stays a block, even for one line without a line break (`|-`).
        ScalarStyle::Literal | ScalarStyle::Folded
            if block_allowed
                && (emit::literal_ok(text)
                    || !multiline && emit::literal_ok(&format!("{text}\n"))) =>
        {
            let col = content_indent(outer.src, node).unwrap_or(key_col + st.step);
            emit::literal_block(text, col, st)
        }
        ScalarStyle::SingleQuoted if !multiline => format!("'{}'", text.replace('\'', "''")),
        ScalarStyle::Plain if !multiline && emit::plain_safe(text) => text.to_string(),
        _ if multiline && block_allowed && emit::literal_ok(text) => {
            emit::literal_block(text, key_col + st.step, st)
        }
        _ => emit::double_quoted(text),
    }
}

/// Maps a byte offset in the text held by string scalar `node` back onto the file, so that
/// findings inside an annotation point at their own line. Exact for block scalars and for
/// one-line strings without escapes; otherwise the start of the string.
pub(crate) fn outer_offset(src: &str, node: &Node, inner_offset: usize) -> usize {
    let Kind::Scalar {
        value: inner,
        style,
    } = &node.kind
    else {
        return node.start;
    };
    let mut inner_offset = inner_offset.min(inner.len());
    while !inner.is_char_boundary(inner_offset) {
        inner_offset -= 1;
    }
    let (line, col) = line_and_byte_col(inner, inner_offset);
    match style {
        ScalarStyle::Literal => {
            let Some(indent) = content_indent(src, node) else {
                return node.start;
            };
            let body = &src[node.start..node.end];
            let Some(header_end) = body.find('\n') else {
                return node.start;
            };
            let mut at = node.start + header_end + 1;
            for _ in 0..line {
                match src[at..node.end].find('\n') {
                    Some(i) => at += i + 1,
                    None => return node.start,
                }
            }
            (at + indent + col).min(src.len())
        }
        ScalarStyle::Plain if line == 0 => node.start + col,
        ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted
            if line == 0 && src[node.start..node.end].len() == inner.len() + 2 =>
        {
            node.start + 1 + col
        }
        _ => node.start,
    }
}

/// Indentation of the first content line of a block scalar.
fn content_indent(src: &str, node: &Node) -> Option<usize> {
    let body = &src[node.start..node.end];
    let after_header = body.find('\n')? + 1;
    body[after_header..]
        .split('\n')
        .find(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start_matches(' ').len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::yaml::emit::Out;

    fn run(src: &str) -> String {
        let docs = parse_stream(src).unwrap();
        let root = &docs[0].root;
        let mut ed = Editor::new(src, root, detect_style(src, root));
        let e = root.entry("a").unwrap();
        let col = ed.col(e.key.props_start);
        let place = Place {
            key_col: col,
            block_allowed: true,
        };
        edit_in_string(
            &mut ed,
            &e.value,
            place,
            &[Seg::Key("a".into())],
            |inner, r| {
                inner.insert_entry(r, &[], None, "added", &Out::Bool(true));
            },
        )
        .unwrap();
        apply::apply(
            src,
            &docs,
            ed.edits(),
            &[apply::Intended::edited(ed.intended_copy())],
        )
        .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn literal_keeps_comments_and_indent() {
        assert_eq!(
            run("a: |\n    # keep\n    k: v\nb: 1\n"),
            "a: |\n    # keep\n    k: v\n    added: true\nb: 1\n"
        );
    }

    #[test]
    fn literal_edits_only_touch_their_lines() {
        // Whitespace-only lines and trailing spaces are kept; only the new line is added.
        assert_eq!(
            run("a: |-\n    k: v \n      \n    m: n\nb: 1\n"),
            "a: |-\n    k: v \n      \n    m: n\n    added: true\nb: 1\n"
        );
        assert_eq!(
            run("a: |\r\n  k: v\r\n\r\nb: 1\r\n"),
            "a: |\r\n  k: v\r\n  added: true\r\n\r\nb: 1\r\n"
        );
    }

    #[test]
    fn json_stays_json() {
        assert_eq!(
            run("a: '{\"k\": \"v\"}'\n"),
            "a: '{\"k\": \"v\", \"added\": true}'\n"
        );
    }

    #[test]
    fn yaml_flow_stays_yaml_flow() {
        assert_eq!(run("a: '{k: v}'\n"), "a: '{k: v, added: true}'\n");
    }

    #[test]
    fn one_line_yaml_becomes_a_block() {
        assert_eq!(run("a: \"k: v\"\n"), "a: |-\n  k: v\n  added: true\n");
        assert_eq!(run("a: \"\"\n"), "a: |\n  added: true\n");
    }
}
