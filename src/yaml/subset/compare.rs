//! Two parses of one text, compared field by field: how the subset parser is held to the
//! full parser (in debug builds, the tests and the fuzzer).

use crate::yaml::node::{Doc, Kind, Node};

/// The first difference between two parses of one text, described; `None` when they are
/// equal in every field.
pub fn difference(a: &[Doc], b: &[Doc]) -> Option<String> {
    if a.len() != b.len() {
        return Some(format!("{} documents against {}", a.len(), b.len()));
    }
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        if x.range != y.range {
            return Some(format!(
                "document {i}: range {:?} against {:?}",
                x.range, y.range
            ));
        }
        let mut path = format!("document {i}: root");
        if let Some(d) = node_difference(&x.root, &y.root, &mut path) {
            return Some(d);
        }
    }
    None
}

fn node_difference(a: &Node, b: &Node, path: &mut String) -> Option<String> {
    let fields = |n: &Node| (n.start, n.end, n.props_start, n.empty, n.flow);
    if fields(a) != fields(b) || a.anchor != b.anchor || a.tag != b.tag {
        return Some(format!(
            "{path}: (start, end, props_start, empty, flow) {:?} anchor {:?} tag {:?} against \
             {:?} anchor {:?} tag {:?}",
            fields(a),
            a.anchor,
            a.tag,
            fields(b),
            b.anchor,
            b.tag
        ));
    }
    match (&a.kind, &b.kind) {
        (Kind::Scalar { value: v, style: s }, Kind::Scalar { value: w, style: t }) => {
            (v != w || s != t).then(|| format!("{path}: {s:?} {v:?} against {t:?} {w:?}"))
        }
        (Kind::Alias(x), Kind::Alias(y)) => {
            (x != y).then(|| format!("{path}: alias {x:?} against {y:?}"))
        }
        (Kind::Seq(x), Kind::Seq(y)) => {
            if x.len() != y.len() {
                return Some(format!("{path}: {} items against {}", x.len(), y.len()));
            }
            let len = path.len();
            for (i, (m, n)) in x.iter().zip(y).enumerate() {
                path.push_str(&format!("[{i}]"));
                if let Some(d) = node_difference(m, n, path) {
                    return Some(d);
                }
                path.truncate(len);
            }
            None
        }
        (Kind::Map(x), Kind::Map(y)) => {
            if x.len() != y.len() {
                return Some(format!("{path}: {} entries against {}", x.len(), y.len()));
            }
            let len = path.len();
            for (i, (m, n)) in x.iter().zip(y).enumerate() {
                path.push_str(&format!(".key{i}"));
                if let Some(d) = node_difference(&m.key, &n.key, path) {
                    return Some(d);
                }
                path.truncate(len);
                path.push_str(&format!(".{:?}", m.key.as_str().unwrap_or("?")));
                if let Some(d) = node_difference(&m.value, &n.value, path) {
                    return Some(d);
                }
                path.truncate(len);
            }
            None
        }
        _ => Some(format!("{path}: {:?} against {:?}", a.kind, b.kind)),
    }
}
