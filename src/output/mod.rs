//! Output: the unified diff, finding reports and in-place writes. Only this stage prints.

pub mod console;
pub mod diff;
pub mod escape;
pub mod hold;
pub mod hunks;
pub mod report;
pub mod summary;
pub mod write;
