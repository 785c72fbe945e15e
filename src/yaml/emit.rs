//! Text for new nodes, written to match its surroundings.
//!
//! Only inserted or replaced nodes are emitted; everything else is copied from the source.
//! Strings are written plain only when no YAML 1.1 or 1.2 reader could take them for
//! anything but that string; otherwise they are double-quoted.

use super::value::{ScalarType, Value, plain_type};

/// A value to write, with what it means (for verification).
#[derive(Clone, Debug)]
pub enum Out {
    /// A string, plain when safe, else double-quoted.
    Str(String),
    /// A multi-line string, as a literal block scalar (`|`) where block style is allowed.
    /// Shared: the wrapper script goes into every wrapped container, and into the intended
    /// value beside it.
    Literal(std::sync::Arc<str>),
    Bool(bool),
    /// Text copied from the source, with its meaning. `flow_safe` says whether the text may
    /// also stand inside a flow collection.
    Raw {
        text: String,
        value: Value,
        flow_safe: bool,
    },
    Seq(Vec<Out>),
    Map(Vec<(String, Out)>),
    /// A string holding YAML text (an annotation value) that must parse to `value`.
    YamlText {
        text: String,
        value: std::sync::Arc<Value>,
    },
}

impl Out {
    /// What this output means once parsed.
    pub fn value(&self) -> Value {
        match self {
            Out::Str(s) => Value::str(s.as_str()),
            Out::Literal(s) => Value::str(s.clone()),
            Out::Bool(b) => Value::bool(*b),
            Out::Raw { value, .. } => value.clone(),
            Out::Seq(items) => Value::Seq(items.iter().map(Out::value).collect()),
            Out::Map(entries) => Value::Map(
                entries
                    .iter()
                    .map(|(k, v)| (Value::str(k.clone()), v.value()))
                    .collect(),
            ),
            Out::YamlText { value, .. } => Value::YamlText(value.clone()),
        }
    }
}

/// How to lay out new text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Style {
    /// Line break of the document: `"\n"` or `"\r\n"`.
    pub nl: &'static str,
    /// Indentation step of nested mappings.
    pub step: usize,
    /// Columns between a key and the `-` of a block sequence under it (0 = flush).
    pub seq_offset: usize,
    /// Inside a JSON-looking text: quote every key and string.
    pub json: bool,
    /// The surrounding flow document double-quotes its string values: do the same.
    pub quote: bool,
}

impl Default for Style {
    fn default() -> Self {
        Style {
            nl: "\n",
            step: 2,
            seq_offset: 0,
            json: false,
            quote: false,
        }
    }
}

/// Appends `n` spaces.
pub(crate) fn push_spaces(s: &mut String, mut n: usize) {
    const SPACES: &str = "                                ";
    while n > 0 {
        let k = n.min(SPACES.len());
        s.push_str(&SPACES[..k]);
        n -= k;
    }
}

/// Text after `key:` for a value in block context, where the key is at column `key_col`.
pub(crate) fn after_key(out: &Out, key_col: usize, st: &Style) -> String {
    let mut s = String::new();
    push_after_key(&mut s, out, key_col, st);
    s
}

/// Text after the `-` of a block sequence item at column `dash_col`.
pub(crate) fn after_dash(out: &Out, dash_col: usize, st: &Style) -> String {
    let mut s = String::new();
    push_after_dash(&mut s, out, dash_col, st);
    s
}

/// [`after_key`], appended to `s`: the text of a nested value is written where it goes,
/// never built apart and copied.
pub(crate) fn push_after_key(s: &mut String, out: &Out, key_col: usize, st: &Style) {
    match out {
        Out::Seq(items) if !items.is_empty() => {
            let dash = key_col + st.seq_offset;
            for item in items {
                s.push_str(st.nl);
                push_spaces(s, dash);
                s.push('-');
                push_after_dash(s, item, dash, st);
            }
        }
        Out::Map(entries) if !entries.is_empty() => {
            let col = key_col + st.step;
            for (k, v) in entries {
                s.push_str(st.nl);
                push_spaces(s, col);
                push_key_text(s, k, st);
                s.push(':');
                push_after_key(s, v, col, st);
            }
        }
        _ => push_scalar_after_indicator(s, out, key_col + st.step, st),
    }
}

/// [`after_dash`], appended to `s`.
pub(crate) fn push_after_dash(s: &mut String, out: &Out, dash_col: usize, st: &Style) {
    match out {
        Out::Map(entries) if !entries.is_empty() => {
            let col = dash_col + 2;
            for (i, (k, v)) in entries.iter().enumerate() {
                if i == 0 {
                    s.push(' ');
                } else {
                    s.push_str(st.nl);
                    push_spaces(s, col);
                }
                push_key_text(s, k, st);
                s.push(':');
                push_after_key(s, v, col, st);
            }
        }
        Out::Seq(items) if !items.is_empty() => {
            let col = dash_col + 2;
            for (i, item) in items.iter().enumerate() {
                if i == 0 {
                    s.push(' ');
                } else {
                    s.push_str(st.nl);
                    push_spaces(s, col);
                }
                s.push('-');
                push_after_dash(s, item, col, st);
            }
        }
        _ => push_scalar_after_indicator(s, out, dash_col + st.step.max(2), st),
    }
}

/// A scalar (or empty collection) after `key:` or `-`: a space and the value, or a literal
/// block whose lines are indented at `content_col`; appended to `s`.
fn push_scalar_after_indicator(s: &mut String, out: &Out, content_col: usize, st: &Style) {
    let literal = match out {
        Out::Literal(text) => Some(&**text),
        Out::YamlText { text, .. } => Some(text.as_str()),
        _ => None,
    };
    s.push(' ');
    if literal.is_some_and(|text| push_literal(s, text, content_col, st)) {
        return;
    }
    match out {
        // Copied from block or flow context: valid in block context either way.
        Out::Raw { text, .. } => s.push_str(text),
        Out::Str(text) => push_scalar_text(s, text, st),
        Out::Literal(text) => push_scalar_text(s, text, st),
        Out::YamlText { text, .. } => push_scalar_text(s, text, st),
        _ => s.push_str(&flow(out, st)),
    }
}

/// The length from which a literal block's text is kept per thread: the wrapper script
/// (several KB) and the annotation meshjob adds (about 100 bytes), the same in every pod of
/// a run, are checked and laid out once per column, while shorter texts cost less to write
/// again than to look up.
const KEEP_BLOCKS_FROM: usize = 64;

/// Appends `text` as a literal block at `col` when it can be one ([`literal_ok`]); returns
/// whether it did.
fn push_literal(s: &mut String, text: &str, col: usize, st: &Style) -> bool {
    if text.len() < KEEP_BLOCKS_FROM {
        let ok = literal_ok(text);
        if ok {
            push_literal_block(s, text, col, st);
        }
        return ok;
    }
    type Blocks = crate::memo::Recent<(usize, &'static str, String), Option<String>, 4>;
    thread_local! {
        static BLOCKS: std::cell::RefCell<Blocks> =
            const { std::cell::RefCell::new(crate::memo::Recent::new()) };
    }
    BLOCKS.with_borrow_mut(|blocks| {
        // The block depends on the text, the column and the line break alone.
        let block = blocks.find_or(
            |(c, nl, t)| *c == col && *nl == st.nl && t == text,
            || {
                let block = literal_ok(text).then(|| literal_block(text, col, st));
                ((col, st.nl, text.to_string()), block)
            },
        );
        block.as_ref().is_some_and(|b| {
            // Room for what follows the block too (`- meshjob`), so that it is not copied
            // again when the entry grows.
            s.reserve(b.len() + 64);
            s.push_str(b);
            true
        })
    })
}

/// A literal block scalar: header, then each line at `col`. No line break after the last
/// line: the caller decides what follows.
pub(crate) fn literal_block(text: &str, col: usize, st: &Style) -> String {
    let mut s = String::new();
    push_literal_block(&mut s, text, col, st);
    s
}

/// [`literal_block`], appended to `s`.
fn push_literal_block(s: &mut String, text: &str, col: usize, st: &Style) {
    let body = text.strip_suffix('\n').unwrap_or(text);
    let chomp = if !text.ends_with('\n') {
        "-"
    } else if body.ends_with('\n') || body.is_empty() {
        "+"
    } else {
        ""
    };
    let lines = memchr::memchr_iter(b'\n', body.as_bytes()).count() + 1;
    s.reserve(2 + body.len() + lines * (col + st.nl.len()));
    s.push('|');
    s.push_str(chomp);
    for line in lines_of(body) {
        s.push_str(st.nl);
        if !line.is_empty() {
            push_spaces(s, col);
            s.push_str(line);
        }
    }
}

/// `text.split('\n')`, by `memchr`: the wrapper script is several KB of long lines.
fn lines_of(text: &str) -> impl Iterator<Item = &str> {
    let mut start = 0;
    memchr::memchr_iter(b'\n', text.as_bytes())
        .chain(std::iter::once(text.len()))
        .map(move |end| {
            let line = &text[start..end];
            start = end + 1;
            line
        })
}

/// Whether a string can be written as a readable literal block and read back unchanged.
pub(crate) fn literal_ok(text: &str) -> bool {
    let body = text.strip_suffix('\n').unwrap_or(text);
    !body.is_empty()
        && !body.ends_with('\n')
        && text.contains('\n')
        && !text.starts_with([' ', '\t', '\n'])
        && if text.is_ascii() {
            ascii_lines_ok(body)
        } else {
            lines_ok(text, body)
        }
}

/// `lines_ok` for ASCII text, in one pass over the bytes (the wrapper script is several KB
/// and checked for every container): no control characters but tab and line feed, and no
/// line of only spaces and tabs.
fn ascii_lines_ok(body: &str) -> bool {
    let b = body.as_bytes();
    // Control characters, in a loop without early exit that the compiler vectorises.
    let control = b.iter().fold(false, |acc, &c| {
        acc | ((c < 0x20 && c != b'\t' && c != b'\n') | (c == 0x7f))
    });
    // A line of only spaces and tabs: each line is looked at up to its first other byte.
    !control && lines_of(body).all(|l| l.is_empty() || l.bytes().any(|c| c != b' ' && c != b'\t'))
}

/// Whether every character can stand in a literal block as written, and no line is only
/// whitespace (a literal block cannot keep one).
fn lines_ok(text: &str, body: &str) -> bool {
    text.chars()
        .all(|c| c == '\n' || c == '\t' || !c.is_control())
        && !text.contains(['\u{feff}', '\u{85}', '\u{2028}', '\u{2029}'])
        && body
            .split('\n')
            .all(|l| !l.chars().all(char::is_whitespace) || l.is_empty())
}

/// A value in flow style (also used for scalars in block context).
pub(crate) fn flow(out: &Out, st: &Style) -> String {
    match out {
        Out::Str(s) | Out::YamlText { text: s, .. } => scalar_text(s, st),
        Out::Literal(s) => scalar_text(s, st),
        Out::Bool(b) => if *b { "true" } else { "false" }.to_string(),
        Out::Raw { text, value, .. } => match out {
            Out::Raw {
                flow_safe: true, ..
            } => text.clone(),
            _ => match value {
                Value::Scalar(ScalarType::Str, s) => double_quoted(s),
                _ => text.clone(),
            },
        },
        Out::Seq(items) => {
            let inner: Vec<String> = items.iter().map(|i| flow(i, st)).collect();
            format!("[{}]", inner.join(", "))
        }
        Out::Map(entries) => {
            let inner: Vec<String> = entries
                .iter()
                .map(|(k, v)| format!("{}: {}", key_text(k, st), flow(v, st)))
                .collect();
            format!("{{{}}}", inner.join(", "))
        }
    }
}

/// A mapping key.
pub(crate) fn key_text(k: &str, st: &Style) -> String {
    let mut s = String::new();
    push_key_text(&mut s, k, st);
    s
}

/// [`key_text`], appended to `s`.
pub(crate) fn push_key_text(s: &mut String, k: &str, st: &Style) {
    if st.json {
        s.push_str(&serde_json::to_string(k).unwrap_or_else(|_| double_quoted(k)));
    } else if plain_safe(k) {
        s.push_str(k);
    } else {
        s.push_str(&double_quoted(k));
    }
}

/// A string scalar: plain when safe, else double-quoted (always quoted in JSON).
pub(crate) fn scalar_text(s: &str, st: &Style) -> String {
    let mut out = String::new();
    push_scalar_text(&mut out, s, st);
    out
}

/// [`scalar_text`], appended to `out`.
fn push_scalar_text(out: &mut String, s: &str, st: &Style) {
    if st.json {
        out.push_str(&serde_json::to_string(s).unwrap_or_else(|_| double_quoted(s)));
    } else if plain_safe(s) && !st.quote {
        out.push_str(s);
    } else {
        out.push_str(&double_quoted(s));
    }
}

/// Whether `s` can be written as a plain scalar, in block or flow context, and read back as
/// the same string by any YAML 1.1 or 1.2 reader.
pub(crate) fn plain_safe(s: &str) -> bool {
    if s.is_ascii() {
        ascii_plain_safe(s)
    } else {
        chars_plain_safe(s)
    }
}

/// [`plain_safe`], character by character.
fn chars_plain_safe(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    let ok_char = |c: char| c.is_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | '=' | '+');
    (first.is_alphanumeric() || matches!(first, '/' | '.' | '_' | '-'))
        && s.chars().all(|c| ok_char(c) || c == ' ')
        && !s.ends_with(' ')
        && !s.starts_with("- ")
        && !s.contains("  ")
        && plain_type(s) == ScalarType::Str
        && !(matches!(first, '-' | '+' | '.') && s.chars().any(|c| c.is_ascii_digit()))
        && !matches!(s, "-" | "." | "=" | "<<")
}

/// [`plain_safe`] for ASCII text, in one pass over its bytes: every key and word meshjob
/// writes is checked.
fn ascii_plain_safe(s: &str) -> bool {
    let b = s.as_bytes();
    let Some(&first) = b.first() else {
        return false;
    };
    let ok_byte = |c: u8| c.is_ascii_alphanumeric() || b"-_./=+ ".contains(&c);
    let (mut digit, mut prev_space) = (false, false);
    for &c in b {
        if !ok_byte(c) || (c == b' ' && prev_space) {
            return false;
        }
        digit |= c.is_ascii_digit();
        prev_space = c == b' ';
    }
    let starts_well = first.is_ascii_alphanumeric() || b"/._-".contains(&first);
    // A sign or a dot before a digit may read as a number.
    let number_like = b"-+.".contains(&first) && digit;
    // A trailing space, a leading `- ` or a lone indicator reads as something else.
    let ambiguous = prev_space || b.starts_with(b"- ") || matches!(b, b"-" | b"." | b"=" | b"<<");
    starts_well && !number_like && !ambiguous && plain_type(s) == ScalarType::Str
}

/// A double-quoted scalar with YAML escapes.
pub(crate) fn double_quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\0' => out.push_str("\\0"),
            '\u{85}' => out.push_str("\\N"),
            '\u{a0}' => out.push_str("\\_"),
            '\u{2028}' => out.push_str("\\L"),
            '\u{2029}' => out.push_str("\\P"),
            '\u{feff}' => out.push_str("\\ufeff"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_only_when_unambiguous() {
        for s in [
            "/bin/sh",
            "-c",
            "meshjob",
            "perl",
            "-Mbignum=bpi",
            "5s",
            "a b",
        ] {
            assert!(plain_safe(s), "{s}");
        }
        for s in [
            "",
            "true",
            "yes",
            "on",
            "5",
            "1.5",
            "-1",
            "null",
            "~",
            "a: b",
            "a #b",
            "[x]",
            "x,y",
            " x",
            "x ",
            "*x",
            "&x",
            "!x",
            "%x",
            "@x",
            "`x",
            "'x",
            "\"x",
            "-",
            "- x",
            "a\nb",
            "1e3",
            ".5",
            "0x1f",
            "=",
            "{x}",
            "print bpi(2000)",
            "$(VAR)",
        ] {
            assert!(!plain_safe(s), "{s:?} must be quoted");
        }
        // The byte loop for ASCII agrees with the general check.
        let pieces = [
            "a", "Z", "9", "-", "_", ".", "/", "=", "+", " ", ":", "#", "<", "~", "1e",
        ];
        let mut texts = vec![String::new()];
        for _ in 0..3 {
            let longer: Vec<String> = (texts.iter())
                .flat_map(|t| pieces.iter().map(move |p| format!("{t}{p}")))
                .collect();
            texts.extend(longer);
        }
        texts.extend(["null", "true", "<<", "- x", "-.5", "+1", "0x1f", "a  b"].map(String::from));
        for t in &texts {
            assert_eq!(ascii_plain_safe(t), chars_plain_safe(t), "{t:?}");
        }
    }

    #[test]
    fn block_layout() {
        let st = Style::default();
        let out = Out::Seq(vec![
            Out::Str("/bin/sh".into()),
            Out::Literal("echo hi\nexit 0\n".into()),
        ]);
        assert_eq!(
            after_key(&out, 4, &st),
            "\n    - /bin/sh\n    - |\n      echo hi\n      exit 0"
        );
        let map = Out::Map(vec![
            ("name".into(), Out::Str("x".into())),
            ("emptyDir".into(), Out::Map(vec![])),
        ]);
        assert_eq!(after_dash(&map, 2, &st), " name: x\n    emptyDir: {}");
        let st4 = Style {
            step: 4,
            seq_offset: 4,
            ..st
        };
        assert_eq!(
            after_key(&Out::Seq(vec![map]), 0, &st4),
            "\n    - name: x\n      emptyDir: {}"
        );
    }

    #[test]
    fn literal_chomping() {
        let st = Style::default();
        assert_eq!(literal_block("a\nb\n", 2, &st), "|\n  a\n  b");
        assert_eq!(literal_block("a\nb", 2, &st), "|-\n  a\n  b");
        assert_eq!(literal_block("a\n\nb\n", 2, &st), "|\n  a\n\n  b");
        assert!(!literal_ok(" lead\n"));
        // The byte loop for ASCII agrees with the general check.
        for body in [
            "a\nb", "a\n \nb", "a\n\nb", "a\n\tb", "a\rb", "a\n  ", "a\nb ", "a\n\x7f", "a\n\x0b",
            "x\n\t\ny", "a b\n c", " ", "\t\n",
        ] {
            assert_eq!(ascii_lines_ok(body), lines_ok(body, body), "{body:?}");
        }
        assert!(!literal_ok("x\n\n"));
    }
}
