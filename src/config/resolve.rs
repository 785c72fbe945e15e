//! The one way the settings of a run are made: [`Settings::default`], then one
//! `MeshJobConfig` document (the nearest `.meshjob.yaml` or `--config`, the KRM
//! functionConfig, or the kustomize plugin's config file), then the flags, whose values are
//! checked once, when the [`Resolver`] is made ([`Flags::check`]).

use super::{ConfigError, Flags, MeshJobConfig, Overrides, Settings};
use crate::paths::Spelling;
use std::path::{Path, PathBuf};

/// Makes the settings of a run, or of each config file's part of it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Resolver {
    flags: Overrides,
}

impl Resolver {
    /// A resolver with `flags` on top; an error (naming the flag) when a value is invalid,
    /// before any file is read.
    pub(crate) fn new(flags: &Flags) -> Result<Resolver, String> {
        Ok(Resolver {
            flags: flags.check()?,
        })
    }

    /// A resolver without flags: the hosts whose settings are one document (the KRM
    /// function, the kustomize plugin).
    pub(crate) fn without_flags() -> Resolver {
        Resolver::default()
    }

    /// The checked flags.
    pub(crate) fn flags(&self) -> &Overrides {
        &self.flags
    }

    /// The checked flags, to be changed before the run (`audit` gives the fix it prints the
    /// oldest kubelet of its dump).
    pub(crate) fn flags_mut(&mut self) -> &mut Overrides {
        &mut self.flags
    }

    /// The settings under `config` (none: the defaults), then the flags.
    pub(crate) fn settings(&self, config: Option<&MeshJobConfig>) -> Result<Settings, ConfigError> {
        let mut s = Settings::default();
        if let Some(config) = config {
            config.apply_to(&mut s)?;
        }
        self.flags.apply(&mut s);
        Ok(s)
    }

    /// The settings where no config document applies: the defaults, then the flags.
    pub(crate) fn without_config(&self) -> Settings {
        let mut s = Settings::default();
        self.flags.apply(&mut s);
        s
    }

    /// The config file that governs `dir` (absolute; `None`: the current directory):
    /// `--config`, taken from the current directory, else the nearest `.meshjob.yaml` in
    /// `dir` or above it.
    pub(crate) fn config_file(&self, dir: Option<&Path>, spelling: &Spelling) -> Option<PathBuf> {
        match &self.flags.config {
            Some(explicit) => Some(spelling.absolute(Path::new(explicit))),
            None => dir.or(spelling.cwd()).and_then(super::discover),
        }
    }
}
