//! Format-preserving YAML: spans, node tree, values and edits.

pub mod edit;
pub mod embedded;
pub mod emit;
pub mod tree;
pub mod value;
