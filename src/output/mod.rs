//! Output: the unified diff, finding reports and in-place writes. Only this stage prints.

pub(crate) mod console;
pub(crate) mod diff;
pub(crate) mod escape;
pub(crate) mod hold;
pub(crate) mod hunks;
pub(crate) mod progress;
pub(crate) mod report;
pub(crate) mod sarif;
pub(crate) mod spill;
pub(crate) mod statistics;
pub(crate) mod summary;
pub(crate) mod write;
