//! Output: diff, reports and writers.
