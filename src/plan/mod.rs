//! Plans the edits for each target.

pub mod script;

