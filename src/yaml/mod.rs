//! Format-preserving YAML: spans, node tree, values, paths, layout and emitting.

pub mod editor;
pub mod embedded;
pub mod emit;
pub mod path;
pub mod simple;
pub mod split;
pub mod style;
pub mod text;
pub mod tree;
pub mod value;
