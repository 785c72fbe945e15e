//! Cheap document boundaries: where a stream can be cut into documents that parse alone.
//!
//! A line that starts with `---` followed by a space, a tab, a line break or the end of the
//! text starts a new document (YAML 1.2, `c-directives-end`). Such a line cannot be content of
//! any scalar or collection (`c-forbidden`), so cutting there gives pieces that each parse to
//! exactly the documents the whole stream holds, with the same bytes.
//!
//! Directives (`%YAML`, `%TAG`) and document-end markers (`...`) tie a document to the one
//! before it; when the text has any line starting with `%` or a `...` marker the stream is
//! not cut at all, and the caller parses it whole.

use std::ops::Range;

/// Whether `rest` (a line from its start) begins with the marker `m` (`---` or `...`) that
/// is followed by whitespace, a line break or the end of the text.
fn is_marker(rest: &[u8], m: &[u8; 3]) -> bool {
    rest.starts_with(m) && matches!(rest.get(3), None | Some(b' ' | b'\t' | b'\r' | b'\n'))
}

/// The pieces of `text`, each from the start of a `---` line (or of the text) to the start of
/// the next one. `None` when the text holds directives or `...` markers and must be parsed
/// whole. The pieces cover the text exactly, in order.
pub fn pieces(text: &str) -> Option<Vec<Range<usize>>> {
    let bytes = text.as_bytes();
    let mut starts = vec![0];
    let mut at = 0;
    while at < bytes.len() {
        let rest = &bytes[at..];
        // Directives start with `%` in column 0; a BOM may precede the first one.
        let line = rest.strip_prefix("\u{feff}".as_bytes()).unwrap_or(rest);
        if line.first() == Some(&b'%') || is_marker(line, b"...") {
            return None;
        }
        if at > 0 && is_marker(rest, b"---") {
            starts.push(at);
        }
        at = match memchr_nl(rest) {
            Some(i) => at + i + 1,
            None => bytes.len(),
        };
    }
    let mut out = Vec::with_capacity(starts.len());
    for (i, &s) in starts.iter().enumerate() {
        let e = starts.get(i + 1).copied().unwrap_or(bytes.len());
        out.push(s..e);
    }
    Some(out)
}

fn memchr_nl(b: &[u8]) -> Option<usize> {
    b.iter().position(|&c| c == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(t: &str) -> Option<Vec<&str>> {
        pieces(t).map(|v| v.into_iter().map(|r| &t[r]).collect())
    }

    #[test]
    fn cuts_at_document_starts_only() {
        assert_eq!(
            cut("a: 1\n---\nb: 2\n--- # c\nc: |\n  ---x\n----\n"),
            Some(vec![
                "a: 1\n",
                "---\nb: 2\n",
                "--- # c\nc: |\n  ---x\n----\n"
            ])
        );
        assert_eq!(
            cut("---\r\na: 1\r\n---"),
            Some(vec!["---\r\na: 1\r\n", "---"])
        );
        assert_eq!(cut(""), Some(vec![""]));
        assert_eq!(cut("---\n"), Some(vec!["---\n"]));
    }

    #[test]
    fn directives_and_document_ends_keep_the_stream_whole() {
        assert_eq!(cut("%YAML 1.2\n---\na: 1\n"), None);
        assert_eq!(cut("\u{feff}%YAML 1.2\n---\na: 1\n"), None);
        assert_eq!(cut("a: 1\n...\n---\nb: 2\n"), None);
        assert_eq!(cut("a: 1\n..."), None);
        // Not markers: more text on the line, or not in column 0.
        assert_eq!(
            cut("a: ...\n ---\nb: '%'\n....\n").map(|v| v.len()),
            Some(1)
        );
    }
}
