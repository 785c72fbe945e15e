//! One planned change to a text: a byte range and what replaces it. The editor
//! (`yaml::editor`) records them, `yaml::apply` splices them in and verifies the result.

use std::ops::Range;

/// Replace `start..end` of the source with `text`. An insertion has `start == end`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    pub start: usize,
    pub end: usize,
    pub text: String,
    /// Among insertions at one point, lower goes first.
    pub order: i64,
}

impl Edit {
    /// Inserts `text` at byte `at`.
    pub fn insert(at: usize, text: impl Into<String>) -> Self {
        Self::replace(at..at, text)
    }

    /// Replaces `range` with `text`.
    pub fn replace(range: Range<usize>, text: impl Into<String>) -> Self {
        Edit {
            start: range.start,
            end: range.end,
            text: text.into(),
            order: 0,
        }
    }

    /// Deletes `range`.
    pub fn delete(range: Range<usize>) -> Self {
        Self::replace(range, String::new())
    }

    /// The same edit, placed by `order` among insertions at its point.
    pub fn ordered(mut self, order: i64) -> Self {
        self.order = order;
        self
    }

    /// The same edit moved by `by` bytes (negative: towards the start), or `None` when it
    /// would start before byte 0.
    pub fn shifted(&self, by: isize) -> Option<Self> {
        Some(Edit {
            start: self.start.checked_add_signed(by)?,
            end: self.end.checked_add_signed(by)?,
            ..self.clone()
        })
    }
}
