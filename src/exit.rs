//! Exit statuses, the same for every host (docs/cli.md).

/// Nothing to report, or a diff that is only shown.
pub(crate) const OK: u8 = 0;
/// `check` found something to change or an error; `fix` or a host left an error behind.
pub(crate) const FINDINGS: u8 = 1;
/// The tool could not do its job: bad input, bad configuration, an unwritable file.
pub(crate) const TROUBLE: u8 = 2;
