//! The node tree over the original text: what a document holds, every node with its byte
//! span. `yaml::tree` builds it (from granit-parser's events, or by `yaml::subset` for the
//! common subset) and says how spans are normalised.

use granit_parser::ScalarStyle;

mod text;
pub use text::Text;

/// The kind of a node, with its children.
#[derive(Clone, Debug)]
pub enum Kind {
    /// The scalar's text (short ones inline: nearly every key and value of a manifest).
    Scalar {
        value: Text,
        style: ScalarStyle,
    },
    Seq(Vec<Node>),
    Map(Vec<Entry>),
    Alias(String),
}

/// One `key: value` pair of a mapping.
#[derive(Clone, Debug)]
pub struct Entry {
    pub key: Node,
    pub value: Node,
}

/// A node and where it is in the text.
#[derive(Clone, Debug)]
pub struct Node {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
    pub props_start: usize,
    /// Anchor name defined on this node (`&name`).
    pub anchor: Option<String>,
    /// The tag as written (`!!str`, `!custom`).
    pub tag: Option<String>,
    /// Flow (`[..]`, `{..}`) rather than block collection.
    pub flow: bool,
    /// An empty plain scalar: `key:` with nothing after it.
    pub empty: bool,
}

/// One document of a stream.
#[derive(Clone, Debug)]
pub struct Doc {
    pub root: Node,
    /// Byte range of the document in the stream, from its first byte (markers and leading
    /// comments included) to the start of the next document.
    pub range: std::ops::Range<usize>,
}

impl Node {
    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            Kind::Scalar { value, .. } => Some(value),
            _ => None,
        }
    }

    pub fn entries(&self) -> Option<&[Entry]> {
        match &self.kind {
            Kind::Map(e) => Some(e),
            _ => None,
        }
    }

    pub fn items(&self) -> Option<&[Node]> {
        match &self.kind {
            Kind::Seq(i) => Some(i),
            _ => None,
        }
    }

    /// The entry whose key is the string `key` (a key with a tag other than `!!str` is
    /// not a string).
    pub fn entry(&self, key: &str) -> Option<&Entry> {
        self.entries()?
            .iter()
            .find(|e| e.key.key_str() == Some(key))
    }

    fn untagged_or_str(&self) -> bool {
        self.tag
            .as_deref()
            .is_none_or(|t| matches!(t, "!!str" | "tag:yaml.org,2002:str" | "!"))
    }

    /// The value under `key`, for a mapping.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|e| &e.value)
    }

    /// The string value under `key`, for a mapping (a scalar's text, whatever its type).
    pub fn str(&self, key: &str) -> Option<&str> {
        self.get(key)?.as_str()
    }

    /// Follows a path of mapping keys.
    pub fn path(&self, keys: &[&str]) -> Option<&Node> {
        keys.iter().try_fold(self, |n, k| n.get(k))
    }

    pub fn is_null(&self) -> bool {
        // A tag decides: `!!str` with nothing after it is an empty string, not null.
        let tag_ok = self
            .tag
            .as_deref()
            .is_none_or(|t| matches!(t, "!!null" | "tag:yaml.org,2002:null"));
        tag_ok
            && matches!(&self.kind, Kind::Scalar { value, style: ScalarStyle::Plain }
            if self.empty || matches!(value.as_str(), "~" | "null" | "Null" | "NULL"))
    }

    pub fn is_block_scalar(&self) -> bool {
        matches!(
            &self.kind,
            Kind::Scalar {
                style: ScalarStyle::Literal | ScalarStyle::Folded,
                ..
            }
        )
    }

    pub fn is_collection(&self) -> bool {
        matches!(self.kind, Kind::Seq(_) | Kind::Map(_))
    }

    /// Whether this node or any node below it has an anchor or is an alias.
    pub fn has_anchor_or_alias(&self) -> bool {
        if self.anchor.is_some() {
            return true;
        }
        match &self.kind {
            Kind::Alias(_) => true,
            Kind::Scalar { .. } => false,
            Kind::Seq(items) => items.iter().any(Node::has_anchor_or_alias),
            Kind::Map(entries) => entries
                .iter()
                .any(|e| e.key.has_anchor_or_alias() || e.value.has_anchor_or_alias()),
        }
    }

    /// The first key that appears twice in this mapping, if any.
    pub fn duplicate_key(&self) -> Option<&Node> {
        let entries = self.entries()?;
        entries.iter().enumerate().find_map(|(i, e)| {
            let k = e.key.key_str()?;
            entries[..i]
                .iter()
                .any(|p| p.key.key_str() == Some(k))
                .then_some(&e.key)
        })
    }

    /// This node's text as a string key: `None` for collections and for scalars with a tag
    /// other than `!!str`.
    pub fn key_str(&self) -> Option<&str> {
        self.as_str().filter(|_| self.untagged_or_str())
    }

    /// Whether this node spans more than one line.
    pub fn is_multiline(&self, src: &str) -> bool {
        src[self.props_start..self.end].contains('\n')
    }
}
