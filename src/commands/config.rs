//! The commands that print what meshjob knows, reading no manifest: `config` (the effective
//! settings of the working directory), `completions` and `manpage`.

use super::print;
use crate::cli::Cli;
use crate::config::{Flags, Resolver, Settings};
use crate::output::console;
use clap::CommandFactory;

/// `meshjob config`: the effective settings, as a config document.
pub(crate) fn effective(flags: &Flags) -> u8 {
    // Paths read for versions are not a setting the rendered config could hold (its
    // `versionsFrom` is relative to the config file): refused, not ignored.
    if !flags.versions_from.is_empty() {
        return console::trouble(
            "--versions-from names paths to read, which `meshjob config` does not read; \
             `meshjob versions --versions-from PATH` shows what they say",
        );
    }
    match settings_here(flags) {
        Ok(s) => print(&crate::config::render_effective(&s)),
        Err(e) => console::trouble_shown(&e),
    }
}

/// `meshjob completions SHELL`.
pub(crate) fn completions(shell: clap_complete::Shell) -> u8 {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "meshjob", &mut out);
    print(&String::from_utf8_lossy(&out))
}

/// `meshjob manpage`.
pub(crate) fn manpage() -> u8 {
    let mut out = Vec::new();
    match clap_mangen::Man::new(Cli::command()).render(&mut out) {
        Ok(()) => print(&String::from_utf8_lossy(&out)),
        Err(e) => console::trouble(&format!("cannot render the man page: {e}")),
    }
}

/// Why the settings of a run could not be made.
#[derive(Debug)]
pub enum SettingsError {
    /// The config file: shown as `path:line:col: error: ...`.
    Config(crate::config::ConfigError),
    /// A flag's value.
    Flag(String),
}

impl std::fmt::Display for SettingsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SettingsError::Config(e) => write!(f, "{e}"),
            SettingsError::Flag(m) => write!(f, "meshjob: error: {m}"),
        }
    }
}

/// The effective settings for the working directory: defaults, then `--config` or the
/// nearest config file, then flags.
pub fn settings_here(flags: &Flags) -> Result<Settings, SettingsError> {
    let file = match &flags.config {
        Some(p) => Some(std::path::PathBuf::from(p)),
        None => std::env::current_dir()
            .ok()
            .and_then(|d| crate::config::discover(&d)),
    };
    // The config file's errors come first, then the flags'.
    let config = (file.as_deref())
        .map(crate::config::load)
        .transpose()
        .map_err(SettingsError::Config)?;
    let resolver = Resolver::new(flags).map_err(SettingsError::Flag)?;
    resolver
        .settings(config.as_ref())
        .map_err(SettingsError::Config)
}
