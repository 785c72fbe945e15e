//! Layout habits of a document (line break, indentation step, sequence offset, quoting),
//! so that new text matches the text around it.

use super::emit::Style;
use super::text::line_start;
use super::tree::{Kind, Node};
use super::value::{ScalarType, plain_type};
use granit_parser::ScalarStyle;

/// Detects the layout habits of a document: line break, indentation step and whether block
/// sequences under a key are flush or indented.
pub(crate) fn detect_style(src: &str, root: &Node) -> Style {
    let from = root.props_start.min(src.len());
    let nl = match src[from..].find('\n').map(|i| i + from) {
        Some(i) if i > 0 && src.as_bytes()[i - 1] == b'\r' => "\r\n",
        _ => "\n",
    };
    let mut steps = Tally::default();
    let mut offsets = Tally::default();
    walk_layout(src, root, &mut steps, &mut offsets);
    // A document written in flow style (JSON-like) keeps its quoting habits.
    let (json, quote) = if root.flow {
        let mut q = QuoteCount::default();
        count_quotes(root, &mut q);
        (q.keys > 0 && q.plain_keys == 0, q.values > q.plain_values)
    } else {
        (false, false)
    };
    Style {
        nl,
        step: steps.most_common().unwrap_or(2).clamp(1, 8),
        seq_offset: offsets.most_common().unwrap_or(0).min(8),
        json,
        quote,
    }
}

/// How often each width was seen: small widths (nearly all) in an array, others in a list.
#[derive(Default)]
struct Tally {
    small: [u32; 16],
    large: Vec<(usize, u32)>,
}

impl Tally {
    fn add(&mut self, x: usize) {
        match self.small.get_mut(x) {
            Some(n) => *n += 1,
            None => match self.large.iter_mut().find(|(y, _)| *y == x) {
                Some((_, n)) => *n += 1,
                None => self.large.push((x, 1)),
            },
        }
    }

    /// The width seen most often, the smallest of those seen equally often.
    fn most_common(&self) -> Option<usize> {
        let small = (self.small.iter().enumerate()).map(|(x, &n)| (x, n));
        let all = small
            .chain(self.large.iter().copied())
            .filter(|&(_, n)| n > 0);
        all.max_by_key(|&(x, n)| (n, std::cmp::Reverse(x)))
            .map(|(x, _)| x)
    }
}

#[derive(Default)]
struct QuoteCount {
    keys: usize,
    plain_keys: usize,
    values: usize,
    plain_values: usize,
}

fn is_dq(n: &Node) -> bool {
    matches!(
        n.kind,
        Kind::Scalar {
            style: ScalarStyle::DoubleQuoted,
            ..
        }
    )
}

fn is_plain_string(n: &Node) -> bool {
    matches!(&n.kind, Kind::Scalar { value, style: ScalarStyle::Plain }
        if plain_type(value) == ScalarType::Str && !n.empty)
}

fn count_quotes(n: &Node, q: &mut QuoteCount) {
    match &n.kind {
        Kind::Map(entries) => {
            for e in entries {
                if is_dq(&e.key) {
                    q.keys += 1;
                } else {
                    q.plain_keys += 1;
                }
                count_quotes(&e.value, q);
            }
        }
        Kind::Seq(items) => items.iter().for_each(|i| count_quotes(i, q)),
        Kind::Scalar { .. } if is_dq(n) => q.values += 1,
        Kind::Scalar { .. } if is_plain_string(n) => q.plain_values += 1,
        _ => {}
    }
}

fn walk_layout(src: &str, node: &Node, steps: &mut Tally, offsets: &mut Tally) {
    match &node.kind {
        Kind::Map(entries) if !node.flow => {
            for e in entries {
                let v = &e.value;
                if !v.flow
                    && v.is_collection()
                    && memchr::memchr(b'\n', &src.as_bytes()[e.key.end..v.start]).is_some()
                {
                    let key_col = e.key.props_start - line_start(src, e.key.props_start);
                    let child_col = v.start - line_start(src, v.start);
                    match &v.kind {
                        Kind::Map(_) if child_col > key_col => steps.add(child_col - key_col),
                        Kind::Seq(_) if child_col >= key_col => offsets.add(child_col - key_col),
                        _ => {}
                    }
                }
                walk_layout(src, v, steps, offsets);
            }
        }
        Kind::Map(entries) => entries
            .iter()
            .for_each(|e| walk_layout(src, &e.value, steps, offsets)),
        Kind::Seq(items) => items
            .iter()
            .for_each(|i| walk_layout(src, i, steps, offsets)),
        _ => {}
    }
}
