//! kustomize legacy exec plugin: the binary, installed as
//! `<plugin home>/meshjob.dev/v1alpha1/meshjobconfig/MeshJobConfig`, transforms the resource
//! stream that kustomize pipes through it.
//!
//! The protocol, as kustomize's `api/internal/plugins/execplugin/execplugin.go` implements
//! it (`invokePlugin`, `getEnv`, `Transform`):
//! - kustomize writes the plugin's config object (our `MeshJobConfig`) to a temp file named
//!   `kust-plugin-config-*` and runs the executable with that path as `argv[1]`; more
//!   arguments follow only when the config has `argsOneLiner` or `argsFromFile`;
//! - the same config is also in `KUSTOMIZE_PLUGIN_CONFIG_STRING`, and the kustomization
//!   directory in `KUSTOMIZE_PLUGIN_CONFIG_ROOT`, which is also the working directory;
//! - for a transformer, stdin is every resource as a `---`-separated YAML stream, each with
//!   a `kustomize.config.k8s.io/id` annotation that kustomize uses to map output resources
//!   back (`utils.UpdateResMapValues`); stdout must be the transformed stream;
//! - stderr is passed through to the user, and a non-zero exit fails the build.
//!
//! The plugin home is `$KUSTOMIZE_PLUGIN_HOME`, else `$XDG_CONFIG_HOME/kustomize/plugin`,
//! else `$HOME/.config/kustomize/plugin` (kustomize's `konfig` package).

use super::{Host, config_settings};
use crate::config::Settings;
use crate::exit;
use crate::finding::Severity;
use crate::output::console::Reply;
use crate::output::report;
use crate::run::Outcome;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The name kustomize runs the plugin by: the config's `kind`.
pub(crate) const PLUGIN_NAME: &str = crate::config::KIND;

/// Where the plugin goes below the plugin home: `<group>/<version>/<lowercase kind>/<kind>`.
#[cfg_attr(windows, allow(dead_code))] // `install` is refused on Windows
pub(crate) fn plugin_rel_path() -> PathBuf {
    Path::new("meshjob.dev")
        .join("v1alpha1")
        .join(PLUGIN_NAME.to_ascii_lowercase())
        .join(PLUGIN_NAME)
}

/// Whether `argv[0]` says the binary runs as the kustomize plugin.
pub(crate) fn invoked_as_plugin(argv0: &std::ffi::OsStr) -> bool {
    Path::new(argv0).file_name() == Some(std::ffi::OsStr::new(PLUGIN_NAME))
}

/// The plugin home kustomize looks in.
#[cfg_attr(windows, allow(dead_code))] // `install` is refused on Windows
pub(crate) fn default_plugin_home() -> Result<PathBuf, String> {
    let set = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(p) = set("KUSTOMIZE_PLUGIN_HOME") {
        return Ok(p);
    }
    let config = match set("XDG_CONFIG_HOME") {
        Some(p) => p,
        None => set("HOME")
            .ok_or("neither XDG_CONFIG_HOME nor HOME is set; pass --dir")?
            .join(".config"),
    };
    Ok(config.join("kustomize").join("plugin"))
}

/// What `install` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(windows, allow(dead_code))] // `install` is refused on Windows
pub(crate) enum Installed {
    /// The plugin is now a link to (or a copy of) this binary.
    New,
    /// It already was a link to this binary; nothing changed.
    Already,
}

/// `meshjob kustomize install`: links this binary into the plugin home (`dir`, or the
/// default). Falls back to a copy where a link cannot be made. A file already there is
/// replaced only with `force`, unless it is a link to this same binary.
#[cfg(unix)]
pub(crate) fn install(dir: Option<&Path>, force: bool) -> Result<(PathBuf, Installed), String> {
    let home = match dir {
        Some(d) => d.to_path_buf(),
        None => default_plugin_home()?,
    };
    let exe = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .map_err(|e| format!("cannot find this executable: {e}"))?;
    let target = home.join(plugin_rel_path());
    if let Ok(meta) = std::fs::symlink_metadata(&target) {
        let ours =
            meta.file_type().is_symlink() && std::fs::canonicalize(&target).is_ok_and(|t| t == exe);
        if ours {
            return Ok((target, Installed::Already));
        }
        if !force {
            return Err(format!(
                "{} already exists and is not a link to this binary; pass --force to replace it",
                target.display()
            ));
        }
    }
    let parent = target.parent().unwrap_or(&home);
    std::fs::create_dir_all(parent)
        .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
    let tmp = parent.join(format!(".{PLUGIN_NAME}.meshjob-{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let made =
        std::os::unix::fs::symlink(&exe, &tmp).or_else(|_| std::fs::copy(&exe, &tmp).map(|_| ()));
    made.and_then(|()| std::fs::rename(&tmp, &target))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            format!("cannot install {}: {e}", target.display())
        })?;
    Ok((target, Installed::New))
}

/// `meshjob kustomize install` on Windows: refused, since kustomize cannot run a legacy exec
/// plugin there. It runs the plugin by the path `<plugin home>/.../MeshJobConfig`, a name
/// without `.exe` that Windows does not start as a program (kubernetes-sigs/kustomize#4213;
/// the fix, #4220, was declined because legacy exec plugins are to be replaced by KRM
/// functions). The KRM exec function does the same work and names its executable itself.
#[cfg(windows)]
pub(crate) fn install(_dir: Option<&Path>, _force: bool) -> Result<(PathBuf, Installed), String> {
    Err(
        "the kustomize legacy exec plugin cannot be installed on Windows: kustomize runs it by \
         a file name without .exe, which Windows does not start \
         (kubernetes-sigs/kustomize#4213). Use meshjob as a KRM exec function instead \
         (docs/integrations.md, \"KRM exec function\")"
            .into(),
    )
}

/// The binary run as the plugin: config file in `argv[1]`, resources on stdin, transformed
/// resources on stdout, findings on stderr. Exit 1 when errors are left, 2 on trouble.
pub(crate) struct Plugin {
    /// `argv[1]`, the plugin config file.
    config: Option<OsString>,
}

impl Plugin {
    /// The plugin as kustomize runs it, from the whole argv.
    pub(crate) fn from_args(args: &[OsString]) -> Self {
        Plugin {
            config: args.get(1).cloned(),
        }
    }
}

impl Host for Plugin {
    type Input = ();

    fn label(&self) -> &'static str {
        "meshjob (kustomize plugin)"
    }

    fn streaming(&self) -> Option<Result<Settings, String>> {
        Some(self.prepare("").map(|(s, ())| s))
    }

    fn prepare(&self, _text: &str) -> Result<(Settings, ()), String> {
        let Some(config_path) = &self.config else {
            return Err(format!(
                "run by kustomize as {PLUGIN_NAME} with the plugin config file as the first \
                 argument; got none"
            ));
        };
        let origin = Path::new(config_path).display().to_string();
        let config = std::fs::read_to_string(config_path)
            .map_err(|e| format!("cannot read the plugin config {origin}: {e}"))?;
        Ok((config_settings(&config, &origin)?, ()))
    }

    fn reply(&self, _text: &str, (): (), outcome: Outcome) -> Result<Reply, String> {
        let mut errors_left = false;
        let mut stderr = String::new();
        for f in &outcome.findings {
            errors_left |= f.severity == Severity::Error && !f.fixed;
            stderr.push_str(&report::plain(f));
            stderr.push('\n');
        }
        Ok(Reply {
            stdout: Some(outcome.text),
            stderr,
            code: if errors_left {
                exit::FINDINGS
            } else {
                exit::OK
            },
        })
    }
}
