//! Format-preserving YAML: spans, node tree, values and edits.

pub mod tree;
pub mod emit;
pub mod value;
pub mod edit;
