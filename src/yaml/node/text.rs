//! A scalar's text in a [`Value`](crate::yaml::value::Value), kept inline when it is short. Nearly every
//! key and value of a manifest is, and the intended value of every edited document holds a
//! copy of each of its scalars: a copy is then a few words moved, not an allocation.

use std::sync::Arc;

/// The longest text kept inline: with its length, it takes the room of a `String`.
const INLINE: usize = 22;

/// A scalar's text.
#[derive(Clone)]
pub struct Text(Repr);

#[derive(Clone)]
enum Repr {
    /// The first `.0` bytes of `.1`, a whole `str`'s bytes.
    Inline(u8, [u8; INLINE]),
    Heap(Box<str>),
    /// A long text that other values share (the wrapper script, in every wrapped container).
    Shared(Arc<str>),
}

impl Text {
    pub fn new(s: &str) -> Text {
        match u8::try_from(s.len()) {
            Ok(len) if s.len() <= INLINE => {
                let mut bytes = [0; INLINE];
                bytes[..s.len()].copy_from_slice(s.as_bytes());
                Text(Repr::Inline(len, bytes))
            }
            _ => Text(Repr::Heap(s.into())),
        }
    }

    pub fn as_bytes(&self) -> &[u8] {
        match &self.0 {
            Repr::Inline(len, bytes) => bytes.get(..usize::from(*len)).unwrap_or_default(),
            Repr::Heap(s) => s.as_bytes(),
            Repr::Shared(s) => s.as_bytes(),
        }
    }

    #[allow(unsafe_code)]
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Inline(len, bytes) => {
                let bytes = &bytes[..usize::from(*len)];
                debug_assert!(std::str::from_utf8(bytes).is_ok());
                // SAFETY: an inline text is made only by `Text::new`, from the bytes of a
                // whole `str`, and never changed after (the representation is private):
                // they are valid UTF-8. Checking again on every read cost an eighth of the
                // instructions of a run that edits CronJobs (each key compared, each value
                // resolved reads its text).
                unsafe { std::str::from_utf8_unchecked(bytes) }
            }
            Repr::Heap(s) => s,
            Repr::Shared(s) => s,
        }
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Text {
        Text::new(s)
    }
}

impl From<String> for Text {
    /// A long text keeps its allocation.
    fn from(s: String) -> Text {
        if s.len() <= INLINE {
            Text::new(&s)
        } else {
            Text(Repr::Heap(s.into_boxed_str()))
        }
    }
}

impl From<std::borrow::Cow<'_, str>> for Text {
    /// A long owned text keeps its allocation.
    fn from(s: std::borrow::Cow<'_, str>) -> Text {
        match s {
            std::borrow::Cow::Borrowed(s) => Text::new(s),
            std::borrow::Cow::Owned(s) => Text::from(s),
        }
    }
}

impl From<Arc<str>> for Text {
    /// Shared, not copied.
    fn from(s: Arc<str>) -> Text {
        Text(Repr::Shared(s))
    }
}

impl std::ops::Deref for Text {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Text) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for Text {}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<String> for Text {
    fn eq(&self, other: &String) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_str().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_and_long_texts_read_back() {
        let long = "x".repeat(INLINE + 1);
        for s in [
            "",
            "a",
            "imagePullPolicy",
            "ünïcödé",
            &"y".repeat(INLINE),
            &long,
        ] {
            let t = Text::new(s);
            assert_eq!(t.as_str(), s);
            assert_eq!(Text::from(s.to_string()).as_str(), s);
            assert_eq!(Text::from(Arc::<str>::from(s)).as_str(), s);
            let owned = s.to_string();
            assert!(t == s && t == *s && t == owned && t == t.clone());
            assert_eq!(format!("{t:?}"), format!("{s:?}"));
        }
        assert!(Text::new("a") != Text::new("b") && Text::new("a") != *"ab");
        assert_eq!(size_of::<Text>(), size_of::<String>());
    }
}
