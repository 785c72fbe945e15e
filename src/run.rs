//! One file's trip through the pipeline: parse, locate, plan, apply, verify.

use crate::config::Settings;
use crate::finding::Finding;

/// The result of processing one text.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The rewritten text (equal to the input when nothing changes or on a fatal error).
    pub text: String,
    /// Findings of every severity.
    pub findings: Vec<Finding>,
    /// Set when the tool could not do its job on this text (invalid YAML, verification
    /// failure): exit 2, and the text must not be written.
    pub fatal: Option<Finding>,
}

impl Outcome {
    pub fn changed(&self, input: &str) -> bool {
        self.fatal.is_none() && self.text != input
    }
}

/// Processes one YAML stream.
pub fn process(text: &str, settings: &Settings) -> Outcome {
    let _ = settings;
    Outcome {
        text: text.to_string(),
        ..Outcome::default()
    }
}
