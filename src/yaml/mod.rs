//! Format-preserving YAML: spans, node tree, values and edits.

