//! Format-preserving YAML: spans, node tree, values, paths, layout and emitting.

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
