//! Format-preserving YAML: spans, node tree, values and edits.

pub mod edit;
pub mod embedded;
pub mod emit;
pub mod simple;
pub mod split;
pub mod tree;
pub mod value;
