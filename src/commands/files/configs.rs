//! The settings and excludes of each directory: config files looked up once each.

use crate::config::{self, Resolver, Settings};
use crate::exclude::Pattern;
use crate::finding::{Finding, Rule};
use crate::output::report::Located;
use crate::paths::Spelling;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The settings and excludes that govern the files of one directory tree: defaults, then
/// a config file, then flags.
pub(super) struct Layer {
    pub(super) settings: Settings,
    pub(super) excludes: Vec<Pattern>,
    /// What the config's `versionsFrom` paths say.
    pub(super) versions: crate::manifest_versions::Versions,
}

/// Config files, looked up from each file's directory upward (the nearest wins), or the
/// one `--config` file for every input. Each is read once; an error in one is reported
/// once and stops only the files it governs.
pub(super) struct Configs<'a> {
    resolver: &'a Resolver,
    spelling: &'a Spelling,
    /// Directory -> the config file that governs it.
    by_dir: HashMap<PathBuf, Option<PathBuf>>,
    /// Config file -> its layer, or `None` when it is broken.
    by_file: HashMap<Option<PathBuf>, Option<Arc<Layer>>>,
    /// The errors of broken config files, once each.
    pub(super) errors: Vec<Located>,
}

impl<'a> Configs<'a> {
    pub(super) fn new(resolver: &'a Resolver, spelling: &'a Spelling) -> Self {
        Configs {
            resolver,
            spelling,
            by_dir: HashMap::new(),
            by_file: HashMap::new(),
            errors: Vec::new(),
        }
    }

    /// The layer for files in `dir` (absolute); `Err` when its config file is broken.
    pub(super) fn layer(&mut self, dir: &Path) -> Result<Arc<Layer>, ()> {
        let file = match self.by_dir.get(dir) {
            Some(found) => found.clone(),
            None => {
                let found = self.resolver.config_file(Some(dir), self.spelling);
                self.by_dir.insert(dir.to_path_buf(), found.clone());
                found
            }
        };
        if let Some(layer) = self.by_file.get(&file) {
            return layer.clone().ok_or(());
        }
        let layer = match self.build(file.as_deref()) {
            Ok(l) => Some(Arc::new(l)),
            Err(e) => {
                self.errors.push(*e);
                None
            }
        };
        self.by_file.insert(file, layer.clone());
        layer.ok_or(())
    }

    fn build(&self, file: Option<&Path>) -> Result<Layer, Box<Located>> {
        let Some(abs) = file else {
            return Ok(Layer {
                settings: self.resolver.without_config(),
                excludes: Vec::new(),
                versions: crate::manifest_versions::Versions::default(),
            });
        };
        let name = self.spelling.display(abs);
        // An error without a place (an unreadable file) is shown at the file's start.
        let shown = |e: config::ConfigError| {
            Box::new(Located {
                path: name.clone(),
                line: e.line.max(1),
                col: e.column.max(1),
                finding: Finding::error(Rule::ConfigInvalid, 0, e.message),
            })
        };
        // Loaded by its spelling, so that its errors name it as the findings do.
        let cfg = config::load(Path::new(&name)).map_err(shown)?;
        let settings = self.resolver.settings(Some(&cfg)).map_err(shown)?;
        let base = abs.parent().unwrap_or(abs);
        let mut excludes = Vec::new();
        for p in &settings.exclude {
            let pattern = Pattern::new(p, base).map_err(|m| {
                Box::new(Located::at_start(
                    &name,
                    Finding::error(Rule::ConfigInvalid, 0, m),
                ))
            })?;
            excludes.push(pattern);
        }
        let mut versions = crate::manifest_versions::Versions::default();
        if !settings.versions_from.is_empty() {
            versions = crate::commands::versions_from::read(
                &settings.versions_from,
                Some(base),
                self.spelling,
                "versionsFrom",
            )
            .map_err(|m| {
                Box::new(Located::at_start(
                    &name,
                    Finding::error(Rule::ConfigInvalid, 0, m),
                ))
            })?;
        }
        Ok(Layer {
            settings,
            excludes,
            versions,
        })
    }
}
