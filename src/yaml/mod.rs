//! Format-preserving YAML: readers, node tree, values, edits, layout and emitting.
//!
//! Each module, its one job, and what it imports of `yaml` (none imports the rest of the
//! crate, but `emit` its small per-thread cache, `memo`):
//! - `bytes`: the byte layer under meshjob's own readers (limits, word-at-a-time searches,
//!   the document marker test, the lone CR). Nothing.
//! - `quick`: the quick scanner, a document's `apiVersion`, `kind` and `metadata.name`
//!   without a tree, or `None`. `bytes`.
//! - `split` (and `items`): where a stream can be cut into pieces that parse alone (and a
//!   list dump into its items). `bytes`.
//! - `node`: the node tree's types, every node with its span, and `Text`. Nothing.
//! - `subset`: the tree of a text in the common subset of YAML, without the full parser, or
//!   `None`. `bytes`, `node`, `text`.
//! - `tree`: `parse_stream`, the tree of any text (by `subset`, else granit-parser), and
//!   the node types re-exported. `node`, `subset`, `text`.
//! - `value`: what a document means, and whether a tree reads back as it. `node`, `tree`.
//! - `text`: positions in a text (lines, columns, the punctuation around a node). Nothing.
//! - `path`: the path of a node from its document's root. Nothing.
//! - `emit`: values written as YAML text in a given layout. `value`.
//! - `style`: the layout of a document, detected. `emit`, `text`, `tree`, `value`.
//! - `edit`: one planned change to a text, a byte range and its replacement. Nothing.
//! - `editor`: a document's edits and its intended value, recorded together; a pod's fix
//!   is a group of them, kept or dropped whole. `edit`, `emit`, `path`, `style`, `text`,
//!   `tree`, `value`.
//! - `apply`: edits spliced into a text, and the result verified by a new parse. `edit`,
//!   `tree`, `value`.
//! - `embedded`: edits to YAML held in a string scalar (a mesh config), verified alone.
//!   `apply`, `edit`, `editor`, `emit`, `path`, `style`, `text`, `tree`, `value`.

pub(crate) mod apply;
pub(crate) mod bytes;
pub(crate) mod edit;
pub(crate) mod editor;
pub(crate) mod embedded;
pub(crate) mod emit;
pub(crate) mod items;
pub(crate) mod node;
pub(crate) mod path;
pub(crate) mod quick;
pub(crate) mod split;
pub(crate) mod style;
pub(crate) mod subset;
pub(crate) mod text;
pub(crate) mod tree;
pub(crate) mod value;
