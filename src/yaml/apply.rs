//! The apply stage: planned edits become text.
//!
//! An [`Edit`] replaces a byte range of the source with new text. [`apply`] orders the
//! edits, refuses overlapping or out-of-range ones with a typed [`ApplyError`], splices them
//! in, and then verifies the whole stream: the result must parse, hold as many documents as
//! the source, read back as each document's intended value, and keep every document that no
//! edit touched byte for byte. Nothing that fails here is ever written.

use super::edit::Edit;
use super::tree::{Doc, parse_stream};
use super::value::Value;
use std::fmt;

/// Why planned edits did not become text. Every case is a bug in planning or editing, never
/// a problem with the input: it is reported as an internal error and nothing is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApplyError {
    /// Two edits cover the same bytes (or one replaces bytes another inserts into).
    Overlap { at: usize, previous_end: usize },
    /// An edit ends before it starts, past the end of the source, or inside a character.
    OutOfRange {
        start: usize,
        end: usize,
        len: usize,
    },
    /// The edited text does not parse. `offset` is in the edited text.
    Unparsable { offset: usize, message: String },
    /// The edited text has another number of documents.
    DocumentCount { found: usize, expected: usize },
    /// A document does not read back as its intended value. `offset` is in the edited text.
    NotAsIntended { offset: usize },
    /// A document no edit touched came out different. `offset` is in the source.
    UntouchedChanged { offset: usize },
}

impl ApplyError {
    /// Where to show the error in the source: the failing edit's start; for failures found
    /// in the edited text, the first edit.
    pub fn source_offset(&self, edits: &[Edit]) -> usize {
        match self {
            ApplyError::Overlap { at, .. } => *at,
            ApplyError::OutOfRange { start, len, .. } => (*start).min(*len),
            ApplyError::UntouchedChanged { offset } => *offset,
            _ => edits.iter().map(|e| e.start).min().unwrap_or(0),
        }
    }
}

impl fmt::Display for ApplyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApplyError::Overlap { at, previous_end } => write!(
                f,
                "internal error: a planned edit at byte {at} overlaps the one before it (which \
                 ends at byte {previous_end})"
            ),
            ApplyError::OutOfRange { start, end, len } => write!(
                f,
                "internal error: a planned edit covers bytes {start}..{end}, outside the \
                 {len}-byte text or inside a character"
            ),
            ApplyError::Unparsable { message, .. } => {
                write!(
                    f,
                    "internal error: the edited text does not parse ({message})"
                )
            }
            ApplyError::DocumentCount { found, expected } => write!(
                f,
                "internal error: the edited text has {found} documents instead of {expected}"
            ),
            ApplyError::NotAsIntended { .. } => write!(
                f,
                "internal error: an edited document does not read back as intended"
            ),
            ApplyError::UntouchedChanged { .. } => write!(
                f,
                "internal error: a document no edit touched came out different"
            ),
        }
    }
}

impl std::error::Error for ApplyError {}

/// The order edits are spliced in: by position, insertions at one point by `order`.
fn sorted(edits: &[Edit]) -> Vec<&Edit> {
    let mut order: Vec<&Edit> = edits.iter().collect();
    order.sort_by_key(|e| (e.start, e.end, e.order));
    order
}

/// Splices `edits` into `src`, refusing overlaps and ranges outside the text.
pub(crate) fn splice(src: &str, edits: &[Edit]) -> Result<String, ApplyError> {
    let mut out =
        String::with_capacity(src.len() + edits.iter().map(|e| e.text.len()).sum::<usize>());
    let mut at = 0;
    for e in sorted(edits) {
        let in_range = e.start <= e.end
            && e.end <= src.len()
            && src.is_char_boundary(e.start)
            && src.is_char_boundary(e.end);
        if !in_range {
            return Err(ApplyError::OutOfRange {
                start: e.start,
                end: e.end,
                len: src.len(),
            });
        }
        if e.start < at {
            return Err(ApplyError::Overlap {
                at: e.start,
                previous_end: at,
            });
        }
        out.push_str(&src[at..e.start]);
        out.push_str(&e.text);
        at = e.end;
    }
    out.push_str(&src[at..]);
    Ok(out)
}

/// What one document of the source should become.
#[derive(Clone, Debug)]
pub struct Intended {
    /// The value the edited document must read back as.
    pub value: Value,
    /// Whether any edit was planned for it. One without must keep its bytes.
    pub edited: bool,
}

impl Intended {
    /// A document with edits planned, to read back as `value`.
    pub fn edited(value: Value) -> Self {
        Intended {
            value,
            edited: true,
        }
    }
}

/// Re-parses `out` and checks that it holds one document per intended value, each reading
/// back as that value. Returns the documents.
pub fn verify(out: &str, intended: &[Intended]) -> Result<Vec<Doc>, ApplyError> {
    let docs = parse_stream(out).map_err(|e| ApplyError::Unparsable {
        offset: e.offset,
        message: e.message,
    })?;
    if docs.len() != intended.len() {
        return Err(ApplyError::DocumentCount {
            found: docs.len(),
            expected: intended.len(),
        });
    }
    for (doc, want) in docs.iter().zip(intended) {
        if !want.value.matches_node(&doc.root) {
            return Err(ApplyError::NotAsIntended {
                offset: doc.root.start,
            });
        }
    }
    Ok(docs)
}

/// Splices `edits` into `src` (parsed as `docs`, one [`Intended`] each) and verifies the
/// whole stream: see the module documentation.
pub fn apply(
    src: &str,
    docs: &[Doc],
    edits: &[Edit],
    intended: &[Intended],
) -> Result<String, ApplyError> {
    let out = splice(src, edits)?;
    let after = verify(&out, intended)?;
    untouched_unchanged(src, docs, &out, &after, intended)?;
    Ok(out)
}

/// Checks that every document without planned edits has the same bytes in `out`: its
/// `---` marker, the comments and directives before its content, its content and, for the
/// last document, what follows to the end of the stream. Only the tail of the line where
/// the document before it ends, and blank lines after that, are left out: an edit of that
/// document may append lines there.
fn untouched_unchanged(
    src: &str,
    before: &[Doc],
    out: &str,
    after: &[Doc],
    intended: &[Intended],
) -> Result<(), ApplyError> {
    fn content<'t>(text: &'t str, d: &Doc) -> Option<&'t str> {
        let r = d.range.start;
        let mut start = if r == 0 || text.get(..r)?.ends_with('\n') {
            r
        } else {
            text.get(r..)?.find('\n').map_or(text.len(), |i| r + i + 1)
        };
        // Blank lines before it may belong to a block scalar that ends the document before
        // it, or not, depending on what that document ends with.
        while let Some(i) = text.get(start..)?.find('\n')
            && text[start..start + i]
                .trim_matches([' ', '\t', '\r'])
                .is_empty()
        {
            start += i + 1;
        }
        text.get(start.min(d.root.props_start)..d.range.end.max(d.root.end))
    }
    for ((old, new), want) in before.iter().zip(after).zip(intended) {
        if !want.edited && content(src, old) != content(out, new) {
            return Err(ApplyError::UntouchedChanged {
                offset: old.root.props_start,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(text: &str, edited: bool) -> Vec<Intended> {
        parse_stream(text)
            .unwrap()
            .iter()
            .map(|d| Intended {
                value: Value::from_node(&d.root),
                edited,
            })
            .collect()
    }

    #[test]
    fn constructors_and_order() {
        let src = "a: 1\nb: 2\n";
        let edits = [
            Edit::insert(5, "y: 0\n").ordered(1),
            Edit::insert(5, "x: 0\n"),
            Edit::replace(3..4, "9"),
            Edit::delete(5..10),
        ];
        assert_eq!(splice(src, &edits).unwrap(), "a: 9\nx: 0\ny: 0\n");
        assert_eq!(Edit::insert(5, "").shifted(-6), None);
    }

    #[test]
    fn typed_errors() {
        let src = "a: 1\n";
        assert_eq!(
            splice(src, &[Edit::replace(0..3, "x"), Edit::replace(2..4, "y")]),
            Err(ApplyError::Overlap {
                at: 2,
                previous_end: 3
            })
        );
        assert_eq!(
            splice(src, &[Edit::replace(3..9, "x")]),
            Err(ApplyError::OutOfRange {
                start: 3,
                end: 9,
                len: 5
            })
        );
        assert!(matches!(
            splice("é", &[Edit::insert(1, "x")]),
            Err(ApplyError::OutOfRange { .. })
        ));
        let docs = parse_stream(src).unwrap();
        let same = values(src, true);
        assert!(matches!(
            apply(src, &docs, &[Edit::replace(0..1, "[")], &same),
            Err(ApplyError::Unparsable { .. })
        ));
        assert_eq!(
            apply(src, &docs, &[Edit::insert(5, "---\nb: 2\n")], &same),
            Err(ApplyError::DocumentCount {
                found: 2,
                expected: 1
            })
        );
        // A line glued to the next document's marker swallows it (`emptyDir: {}---`).
        let two = "a:\n  b: 1\n---\nc: 2\n";
        let docs = parse_stream(two).unwrap();
        let mut want = values(two, false);
        want[0].edited = true;
        assert!(matches!(
            apply(two, &docs, &[Edit::insert(11, "  d: {}")], &want),
            Err(ApplyError::DocumentCount { .. } | ApplyError::Unparsable { .. })
        ));
        // Changing a value without saying so is caught.
        assert_eq!(
            apply(src, &docs, &[Edit::replace(3..4, "5")], &same),
            Err(ApplyError::NotAsIntended { offset: 0 })
        );
        assert_eq!(apply(src, &docs, &[], &same).as_deref(), Ok(src));
    }

    #[test]
    fn untouched_documents_stay_byte_identical() {
        let src = "a: 1\n---\nb:   2 # c\n---\nc: 3\n";
        let docs = parse_stream(src).unwrap();
        let mut want = values(src, false);
        want[0].edited = true;
        // Reformatting the middle document reads back the same, but it had no edits.
        let edits = [Edit::insert(4, " # x"), Edit::replace(11..14, " ")];
        assert_eq!(
            apply(src, &docs, &edits, &want),
            Err(ApplyError::UntouchedChanged { offset: 9 })
        );
        want[1].edited = true;
        assert!(apply(src, &docs, &edits, &want).is_ok());
        // Its marker and leading comment count too; lines appended to the document before
        // it do not.
        let src = "a: 1 # t\n--- # m\n# c\nb: 2\n";
        let docs = parse_stream(src).unwrap();
        let mut want = values(src, false);
        want[0].edited = true;
        let ok = [Edit::insert(9, "x: 0\n")];
        want[0].value = values("a: 1\nx: 0\n", true).remove(0).value;
        assert!(apply(src, &docs, &ok, &want).is_ok());
        let bad = [Edit::insert(9, "x: 0\n"), Edit::replace(14..17, "# n")];
        assert_eq!(
            apply(src, &docs, &bad, &want),
            Err(ApplyError::UntouchedChanged { offset: 21 })
        );
    }
}
