//! Escaping of text taken from the input before it is printed.
//!
//! Object names, image references, keys and file names come from files that anyone can
//! write. Printed raw, a newline in a Job's name starts a new line that a CI runner reads as
//! a workflow command (`::error file=...::`), and an ESC byte drives the terminal. So every
//! line meshjob prints is escaped here, once, in the output stage.

use std::borrow::Cow;

/// Whether `c` must not reach a terminal or a log raw: C0 and C1 control characters, DEL,
/// and the Unicode bidirectional controls that reorder how a line reads ("Trojan Source").
fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
        )
}

/// `s` with every unsafe character written as an escape: `\n`, `\r`, `\t`, else `\u{..}`
/// (as Rust's `escape_debug` writes it). Borrowed when there is nothing to escape.
pub(crate) fn controls(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_unsafe) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_unsafe(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A diff header name (`a/PATH`) quoted as git quotes it (`quote_c_style`: C escapes, other
/// bytes in octal) when it holds a character that [`controls`] escapes, `"` or `\`, so that the header stays on one line and `git apply` and
/// `patch` read the name back. Other names are returned as they are.
pub(crate) fn diff_path(name: &str) -> Cow<'_, str> {
    if !name.chars().any(|c| is_unsafe(c) || c == '"' || c == '\\') {
        return Cow::Borrowed(name);
    }
    let mut out = String::with_capacity(name.len() + 8);
    out.push('"');
    for c in name.chars() {
        match c {
            '\u{07}' => out.push_str("\\a"),
            '\u{08}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{0b}' => out.push_str("\\v"),
            '\u{0c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if is_unsafe(c) => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("\\{b:03o}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_escaped_and_the_rest_kept() {
        assert!(matches!(controls("plain név"), Cow::Borrowed(_)));
        assert_eq!(
            controls("x\n::error file=evil::\x1b[31m\t\u{202e}\u{85}ü"),
            "x\\n::error file=evil::\\u{1b}[31m\\t\\u{202e}\\u{85}ü"
        );
    }

    #[test]
    fn diff_paths_are_quoted_as_git_quotes_them() {
        assert_eq!(diff_path("a/k8s/job.yaml"), "a/k8s/job.yaml");
        assert_eq!(diff_path("a/my job.yaml"), "a/my job.yaml");
        assert_eq!(
            diff_path("a/evil\n::x\x1b[0m.yaml"),
            "\"a/evil\\n::x\\033[0m.yaml\""
        );
        assert_eq!(diff_path("a/q\"b\\ö"), "\"a/q\\\"b\\\\ö\"");
        assert_eq!(diff_path("a/\u{85}"), "\"a/\\302\\205\"");
    }
}
