//! The run-wide policy every host applies to the findings it is handed: a note said once
//! per run is shown once ([`Verdict::first`]), and whether a finding fails the run under
//! `failOn` ([`fails`]), before or after `fix` ([`Verdict::take`]).

use crate::config::FailOn;
use crate::finding::{Finding, Rule, Severity};

/// Whether `f` fails a run under `fail_on`: every error, and a warning under
/// `failOn: warning`.
pub(crate) fn fails(f: &Finding, fail_on: FailOn) -> bool {
    match f.severity {
        Severity::Error => true,
        Severity::Warning => fail_on == FailOn::Warning,
        Severity::Info => false,
    }
}

/// What a run's findings said so far.
#[derive(Debug, Default)]
pub(crate) struct Verdict {
    /// The rules whose once-per-run note has been said.
    noted: Vec<Rule>,
    /// Something fails the run (`check`: any error, or a warning under `failOn: warning`).
    pub(crate) fails_any: bool,
    /// Something that fails the run is left after `fix` (it is not fixed).
    pub(crate) fails_left: bool,
}

impl Verdict {
    /// Whether `f` is to be said: false for a once-per-run note already said.
    pub(crate) fn first(&mut self, f: &Finding) -> bool {
        if !f.rule.once_per_run() {
            return true;
        }
        if self.noted.contains(&f.rule) {
            return false;
        }
        self.noted.push(f.rule);
        true
    }

    /// Takes one finding: whether it is to be said ([`Verdict::first`]); when it is, what it
    /// means for the run is counted.
    pub(crate) fn take(&mut self, f: &Finding, fail_on: FailOn) -> bool {
        if !self.first(f) {
            return false;
        }
        let fails = fails(f, fail_on);
        self.fails_any |= fails;
        self.fails_left |= fails && !f.fixed;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn once_per_run_notes_are_said_once_and_fixed_errors_are_not_left() {
        let once = Rule::DrainInteraction;
        assert!(once.once_per_run());
        let mut v = Verdict::default();
        let note = Finding::info(once, 0, "n");
        assert!(v.take(&note, FailOn::Error));
        assert!(!v.take(&note, FailOn::Error));
        let mut fixed = Finding::error(Rule::Internal, 0, "e");
        fixed.fixed = true;
        assert!(v.take(&fixed, FailOn::Error));
        assert!(v.fails_any && !v.fails_left);
        let warning = Finding::warning(Rule::NoYamlFiles, 0, "w");
        assert!(!fails(&warning, FailOn::Error));
        assert!(v.take(&warning, FailOn::Warning));
        assert!(v.fails_left);
    }
}
