//! Semantic values: what a document means, independent of how it is written.
//!
//! The apply stage compares the re-parsed output with the intended result in these terms,
//! so a formatting slip that changes meaning is caught before anything is written.

pub use super::node::Text;
use super::node::{Kind, Node};
use granit_parser::ScalarStyle;

/// The resolved type of a scalar (YAML 1.2 core schema, plus the YAML 1.1 booleans that
/// Kubernetes' parser still accepts, so that `yes` never passes for a string).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarType {
    Null,
    Bool,
    Int,
    Float,
    Str,
    /// A custom tag: compared as its text.
    Tagged,
}

/// A semantic value.
#[derive(Clone, Debug)]
pub enum Value {
    Scalar(ScalarType, Text),
    Seq(Vec<Value>),
    /// Entries in source order; compared regardless of order.
    Map(Vec<(Value, Value)>),
    Alias(String),
    /// Expected only: a string whose text parses (as YAML, JSON included) to this value.
    /// Shared: a run writes the same annotation value into pod after pod.
    YamlText(std::sync::Arc<Value>),
}

impl Value {
    pub fn str(s: impl Into<Text>) -> Value {
        Value::Scalar(ScalarType::Str, s.into())
    }

    pub fn bool(b: bool) -> Value {
        Value::Scalar(ScalarType::Bool, if b { "true" } else { "false" }.into())
    }

    /// Whether this is the string `key` (a mapping key looked for).
    fn is_str(&self, key: &str) -> bool {
        matches!(self, Value::Scalar(ScalarType::Str, s) if s == key)
    }

    pub fn from_node(node: &Node) -> Value {
        match &node.kind {
            Kind::Scalar { value, style } => {
                let ty = resolve(value, *style, node.tag.as_deref(), node.empty);
                let text = match ty {
                    ScalarType::Bool => Text::from(value.to_ascii_lowercase()),
                    ScalarType::Null => Text::new(""),
                    _ => value.clone(),
                };
                Value::Scalar(ty, text)
            }
            Kind::Seq(items) => Value::Seq(items.iter().map(Value::from_node).collect()),
            Kind::Map(entries) => Value::Map(
                entries
                    .iter()
                    .map(|e| (Value::from_node(&e.key), Value::from_node(&e.value)))
                    .collect(),
            ),
            Kind::Alias(name) => Value::Alias(name.clone()),
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Scalar(ScalarType::Str, s) => Some(s),
            _ => None,
        }
    }

    /// The value under a string key of a mapping.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Map(entries) => entries.iter().find(|(k, _)| k.is_str(key)).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        match self {
            Value::Map(entries) => entries
                .iter_mut()
                .find(|(k, _)| k.is_str(key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// Sets `key` in a mapping, replacing an existing entry.
    pub fn set(&mut self, key: &str, value: Value) {
        if let Value::Map(entries) = self {
            match entries.iter_mut().find(|(k, _)| k.is_str(key)) {
                Some(slot) => slot.1 = value,
                None => entries.push((Value::str(key), value)),
            }
        }
    }

    pub fn remove(&mut self, key: &str) -> Option<Value> {
        if let Value::Map(entries) = self {
            let i = entries.iter().position(|(k, _)| k.is_str(key))?;
            return Some(entries.remove(i).1);
        }
        None
    }

    /// Semantic equality: `self` may hold [`Value::YamlText`] expectations.
    pub fn matches(&self, actual: &Value) -> bool {
        match (self, actual) {
            (Value::YamlText(_), Value::Scalar(ScalarType::Str, text)) => self.matches_text(text),
            (Value::Scalar(t1, s1), Value::Scalar(t2, s2)) => t1 == t2 && s1 == s2,
            (Value::Alias(a), Value::Alias(b)) => a == b,
            (Value::Seq(a), Value::Seq(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.matches(y))
            }
            (Value::Map(a), Value::Map(b)) => {
                map_matches(a, b, |k, (k2, _)| k.matches(k2), |v, (_, v2)| v.matches(v2))
            }
            _ => false,
        }
    }

    /// `self.matches(&Value::from_node(node))`, without building the node's value: the
    /// verification of every edited document reads its whole re-parsed tree this way.
    pub fn matches_node(&self, node: &Node) -> bool {
        match (self, &node.kind) {
            (expected @ Value::YamlText(_), Kind::Scalar { value, style }) => {
                resolve(value, *style, node.tag.as_deref(), node.empty) == ScalarType::Str
                    && expected.matches_text(value)
            }
            // Types whose text must be equal: a different text settles it before the type
            // is resolved (most comparisons are of keys, looked for among their siblings).
            (
                Value::Scalar(
                    ScalarType::Str | ScalarType::Int | ScalarType::Float | ScalarType::Tagged,
                    s,
                ),
                Kind::Scalar { value, .. },
            ) if s != value => false,
            (Value::Scalar(t, s), Kind::Scalar { value, style }) => {
                let ty = resolve(value, *style, node.tag.as_deref(), node.empty);
                *t == ty
                    && match ty {
                        ScalarType::Bool => {
                            s.len() == value.len()
                                && (s.as_bytes().iter())
                                    .zip(value.bytes())
                                    .all(|(a, b)| *a == b.to_ascii_lowercase())
                        }
                        ScalarType::Null => s.is_empty(),
                        _ => s == value,
                    }
            }
            (Value::Alias(a), Kind::Alias(b)) => a == b,
            (Value::Seq(a), Kind::Seq(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.matches_node(y))
            }
            (Value::Map(a), Kind::Map(b)) => map_matches(
                a,
                b,
                |k, e| k.matches_node(&e.key),
                |v, e| v.matches_node(&e.value),
            ),
            _ => false,
        }
    }

    /// For [`Value::YamlText`]: whether `text` parses to the expected value.
    fn matches_text(&self, text: &str) -> bool {
        let Value::YamlText(expected) = self else {
            return false;
        };
        READ_BACK.with(|cache| {
            let mut cache = cache.borrow_mut();
            if let Some((_, value)) = cache.iter().find(|(t, _)| t == text) {
                return value.as_ref().is_some_and(|v| expected.matches(v));
            }
            let value = match super::tree::parse_stream(text) {
                Ok(docs) if docs.len() == 1 => Some(Value::from_node(&docs[0].root)),
                Ok(docs) if docs.is_empty() => Some(Value::Scalar(ScalarType::Null, Text::new(""))),
                _ => None,
            };
            let ok = value.as_ref().is_some_and(|v| expected.matches(v));
            if text.len() <= READ_BACK_MAX_TEXT {
                if cache.len() == READ_BACK_ENTRIES {
                    cache.remove(0);
                }
                cache.push((text.to_string(), value));
            }
            ok
        })
    }
}

/// How many YAML texts (annotation values) each thread keeps parsed, and the longest kept.
const READ_BACK_ENTRIES: usize = 4;
const READ_BACK_MAX_TEXT: usize = 4096;

thread_local! {
    /// The YAML texts most recently read back by [`Value::matches_text`], with the value
    /// each parses to (`None`: not one document). A stream's Jobs mostly carry the same
    /// annotation text, and parsing is a pure function of the text, so its parse is kept
    /// rather than repeated for every document.
    static READ_BACK: std::cell::RefCell<Vec<(String, Option<Value>)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Whether the entries `b` of a mapping match the expected entries `a`, by `key` and `value`:
/// order does not matter; a key written twice (real manifests have them) is matched
/// occurrence by occurrence.
fn map_matches<E>(
    a: &[(Value, Value)],
    b: &[E],
    key: impl Fn(&Value, &E) -> bool,
    value: impl Fn(&Value, &E) -> bool,
) -> bool {
    if a.len() != b.len() {
        return false;
    }
    // Mostly the entries come in the same order, each key matching the one across. With
    // scalar keys, matching is then an equivalence (same type, same text), so the pairing by
    // occurrence below pairs every entry with the one across too: the values are compared
    // in place, without looking for each key among all the others.
    if a.iter()
        .zip(b)
        .all(|((k, _), e)| matches!(k, Value::Scalar(..)) && key(k, e))
    {
        return a.iter().zip(b).all(|((_, v), e)| value(v, e));
    }
    by_occurrence(a, b, key, value)
}

/// [`map_matches`] for entries of equal number, each expected key paired with the key that
/// matches it in `b` as often as it came before in `a`.
fn by_occurrence<E>(
    a: &[(Value, Value)],
    b: &[E],
    key: impl Fn(&Value, &E) -> bool,
    value: impl Fn(&Value, &E) -> bool,
) -> bool {
    a.iter().enumerate().all(|(i, (k, v))| {
        let nth = a[..i].iter().filter(|(k0, _)| k.matches(k0)).count();
        b.iter()
            .filter(|e| key(k, e))
            .nth(nth)
            .is_some_and(|e| value(v, e))
    })
}

/// Resolves a scalar's type the way a Kubernetes client would read it.
pub(crate) fn resolve(
    value: &str,
    style: ScalarStyle,
    tag: Option<&str>,
    empty: bool,
) -> ScalarType {
    if let Some(tag) = tag {
        return match tag {
            "!!str" | "tag:yaml.org,2002:str" => ScalarType::Str,
            "!!null" => ScalarType::Null,
            "!!bool" => ScalarType::Bool,
            "!!int" => ScalarType::Int,
            "!!float" => ScalarType::Float,
            "!" => ScalarType::Str,
            _ => ScalarType::Tagged,
        };
    }
    if style != ScalarStyle::Plain {
        return ScalarType::Str;
    }
    if empty {
        return ScalarType::Null;
    }
    plain_type(value)
}

/// The plain scalars that Kubernetes' YAML reader takes for `true`: kubectl, Helm and the
/// API server read manifests with sigs.k8s.io/yaml (`YAMLToJSON`, kubernetes-sigs/yaml@v1.6.0
/// yaml.go), which resolves plain scalars with go-yaml v2's YAML 1.1 table
/// (yaml/go-yaml@v2.4.2 resolve.go, `resolveMapList`), then decodes the JSON into the typed
/// field. A quoted `"true"` is a string, which a boolean field refuses.
const TRUE_WORDS: [&str; 11] = [
    "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON",
];

/// `node`'s text when it is a key that reads as a string: untagged or `!!str`, and plain
/// only when its text is no null, boolean or number (`7:`, `null:` and an empty key are not
/// string keys). An edit that names a path through such a key would not find it again
/// when the result is read back as values.
pub(crate) fn string_key(node: &Node) -> Option<&str> {
    let text = node.key_str()?;
    match &node.kind {
        Kind::Scalar { style, .. }
            if resolve(text, *style, node.tag.as_deref(), node.empty) == ScalarType::Str =>
        {
            Some(text)
        }
        _ => None,
    }
}

/// Whether `node` is a boolean that Kubernetes reads as true (`hostNetwork: True`).
pub(crate) fn is_true(node: &Node) -> bool {
    match &node.kind {
        Kind::Scalar { value, style } => {
            resolve(value, *style, node.tag.as_deref(), node.empty) == ScalarType::Bool
                && TRUE_WORDS.contains(&value.as_str())
        }
        _ => false,
    }
}

/// The type a plain scalar's text resolves to.
pub fn plain_type(v: &str) -> ScalarType {
    // A number begins with a digit, a sign or a dot, and every other name below has at most
    // five characters: a longer text that begins with a letter is a string (most keys and
    // names are).
    if v.len() > 5 && v.as_bytes()[0].is_ascii_alphabetic() {
        return ScalarType::Str;
    }
    match v {
        "" | "~" | "null" | "Null" | "NULL" => return ScalarType::Null,
        "true" | "True" | "TRUE" | "false" | "False" | "FALSE" | "yes" | "Yes" | "YES" | "no"
        | "No" | "NO" | "on" | "On" | "ON" | "off" | "Off" | "OFF" | "y" | "Y" | "n" | "N" => {
            return ScalarType::Bool;
        }
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" | "-.inf" | "-.Inf" | "-.INF"
        | ".nan" | ".NaN" | ".NAN" => return ScalarType::Float,
        _ => {}
    }
    // Numbers hold a digit; most plain scalars (names, images, words) do not.
    if !v.bytes().any(|b| b.is_ascii_digit()) {
        ScalarType::Str
    } else if looks_int(v) {
        ScalarType::Int
    } else if looks_float(v) {
        ScalarType::Float
    } else {
        ScalarType::Str
    }
}

/// `s` without `_` digit separators, copied only when it has some.
fn without_underscores(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains('_') {
        s.chars().filter(|&c| c != '_').collect::<String>().into()
    } else {
        s.into()
    }
}

fn looks_int(v: &str) -> bool {
    let body = v.strip_prefix(['-', '+']).unwrap_or(v);
    let body_nounder = without_underscores(body);
    if body_nounder.is_empty() || !body.starts_with(|c: char| c.is_ascii_digit()) {
        return false;
    }
    if let Some(hex) = body_nounder
        .strip_prefix("0x")
        .or_else(|| body_nounder.strip_prefix("0X"))
    {
        return !hex.is_empty() && hex.chars().all(|c| c.is_ascii_hexdigit());
    }
    if let Some(oct) = body_nounder.strip_prefix("0o") {
        return !oct.is_empty() && oct.chars().all(|c| ('0'..='7').contains(&c));
    }
    if let Some(bin) = body_nounder.strip_prefix("0b") {
        return !bin.is_empty() && bin.chars().all(|c| c == '0' || c == '1');
    }
    body_nounder.chars().all(|c| c.is_ascii_digit())
}

fn looks_float(v: &str) -> bool {
    let body = v.strip_prefix(['-', '+']).unwrap_or(v);
    let body = without_underscores(body);
    if !body.contains(|c: char| c.is_ascii_digit()) {
        return false;
    }
    let (mantissa, exp) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (&body[..], None),
    };
    let mantissa_ok = !mantissa.is_empty()
        && mantissa.chars().filter(|&c| c == '.').count() <= 1
        && mantissa.chars().all(|c| c.is_ascii_digit() || c == '.')
        && mantissa != ".";
    let exp_ok = exp.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        !e.is_empty() && e.chars().all(|c| c.is_ascii_digit())
    });
    mantissa_ok && exp_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn true_as_kubernetes_reads_it() {
        let node = |text: &str| {
            let doc = format!("k: {text}\n");
            let docs = crate::yaml::tree::parse_stream(&doc).expect("parses");
            let root = docs.into_iter().next().expect("a document").root;
            is_true(root.get("k").expect("k"))
        };
        for t in [
            "true", "True", "TRUE", "yes", "Yes", "YES", "y", "Y", "on", "On", "ON",
        ] {
            assert!(node(t), "{t}");
            assert!(node(&format!("!!bool {t}")), "!!bool {t}");
        }
        for f in [
            "false",
            "FALSE",
            "no",
            "off",
            "n",
            "\"true\"",
            "'True'",
            "tRUE",
            "1",
            "",
            "~",
            "!!str true",
            "[true]",
        ] {
            assert!(!node(f), "{f}");
        }
    }

    #[test]
    fn plain_scalars_resolve_like_kubernetes() {
        assert_eq!(plain_type("true"), ScalarType::Bool);
        assert_eq!(plain_type("yes"), ScalarType::Bool);
        assert_eq!(plain_type("5"), ScalarType::Int);
        assert_eq!(plain_type("0x1F"), ScalarType::Int);
        assert_eq!(plain_type("1.5"), ScalarType::Float);
        assert_eq!(plain_type("1e3"), ScalarType::Float);
        assert_eq!(plain_type(".5"), ScalarType::Float);
        assert_eq!(plain_type("5s"), ScalarType::Str);
        assert_eq!(plain_type("-c"), ScalarType::Str);
        assert_eq!(plain_type("~"), ScalarType::Null);
        assert_eq!(plain_type("1.2.3"), ScalarType::Str);
        // Longer texts that begin with a letter.
        for t in [
            "Yesterday",
            "nullable",
            "truely",
            "offset",
            "e12345",
            "E1e5e7",
            "inf123",
        ] {
            assert_eq!(plain_type(t), ScalarType::Str, "{t}");
        }
    }

    #[test]
    fn maps_compare_regardless_of_order() {
        let a = super::super::tree::parse_stream("a: 1\nb: [x]\n").unwrap();
        let b = super::super::tree::parse_stream("{b: [\"x\"], a: 1}").unwrap();
        let c = super::super::tree::parse_stream("{b: [x], a: \"1\"}").unwrap();
        let va = Value::from_node(&a[0].root);
        assert!(va.matches(&Value::from_node(&b[0].root)));
        assert!(!va.matches(&Value::from_node(&c[0].root)));
        assert!(va.matches_node(&b[0].root));
        assert!(!va.matches_node(&c[0].root));
    }

    #[test]
    fn maps_in_the_same_order_match_as_by_occurrence() {
        // Keys written twice, keys of other types, and the entries in every order.
        let entries = ["a: 1", "b: 2", "a: 3", "1: x", "'1': y", "true: z", "~: n"];
        let texts: Vec<String> = (0..entries.len())
            .flat_map(|i| (0..entries.len()).map(move |j| (i, j)))
            .map(|(i, j)| {
                let mut e = entries.to_vec();
                e.swap(i, j);
                e.rotate_left(i);
                e.join("\n")
            })
            .collect();
        let parse = |t: &str| super::super::tree::parse_stream(t).unwrap().remove(0).root;
        for x in &texts {
            let expected = Value::from_node(&parse(x));
            let Value::Map(want) = &expected else {
                panic!("a map")
            };
            for y in &texts {
                let node = parse(y);
                let got = node.entries().unwrap();
                let reference = by_occurrence(
                    want,
                    got,
                    |k, e| k.matches_node(&e.key),
                    |v, e| v.matches_node(&e.value),
                );
                assert_eq!(expected.matches_node(&node), reference, "{x:?} / {y:?}");
                assert_eq!(
                    expected.matches(&Value::from_node(&node)),
                    reference,
                    "{x:?} / {y:?}"
                );
            }
        }
    }

    #[test]
    fn yaml_texts_read_back_the_same_parsed_or_kept() {
        let parsed = |t: &str| {
            let docs = super::super::tree::parse_stream(t).unwrap();
            Value::YamlText(std::sync::Arc::new(Value::from_node(&docs[0].root)))
        };
        let (one, two) = (parsed("k: 1"), parsed("k: 2"));
        let empty = Value::YamlText(std::sync::Arc::new(Value::Scalar(
            ScalarType::Null,
            Text::new(""),
        )));
        // The second round finds each text kept from the first.
        for _ in 0..2 {
            assert!(one.matches_text("k: 1"));
            assert!(!two.matches_text("k: 1"));
            assert!(two.matches_text("{k: 2}"));
            assert!(!one.matches_text("k: [1"));
            assert!(!one.matches_text("k: 1\n---\nk: 1\n"));
            assert!(empty.matches_text("# nothing\n"));
            assert!(!one.matches_text("# nothing\n"));
        }
    }

    #[test]
    fn matching_a_node_is_matching_its_value() {
        let src = "a: Yes\nb: ~\nc: !!str 1\nd: [x, &n 2, *n]\ne: \"{k: [1, 2]}\"\nf: ''\n\
                   a: TRUE\ng: |\n  h: 1\n";
        let doc = &super::super::tree::parse_stream(src).unwrap()[0].root;
        let variants = [
            src.to_string(),
            src.replace("Yes", "no"),
            src.replace("~", "null"),
            src.replace("~", "''"),
            src.replace("!!str 1", "1"),
            src.replace("*n", "2"),
            src.replace("TRUE", "true"),
            src.replace("[1, 2]", "[1, 3]"),
            src.replace("h: 1", "h: 2"),
        ];
        let mut expected = Value::from_node(doc);
        for text in [&variants[..], &variants[..]].concat() {
            let node = &super::super::tree::parse_stream(&text).unwrap()[0].root;
            assert_eq!(
                expected.matches_node(node),
                expected.matches(&Value::from_node(node)),
                "{text}"
            );
            // Once with the embedded texts as expectations.
            for key in ["e", "g"] {
                if let Some(Value::Scalar(ScalarType::Str, t)) = expected.get(key).cloned() {
                    let inner = super::super::tree::parse_stream(&t).unwrap();
                    expected.set(
                        key,
                        Value::YamlText(std::sync::Arc::new(Value::from_node(&inner[0].root))),
                    );
                }
            }
        }
    }
}
