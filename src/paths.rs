//! How a file's path is spelled in findings and diff headers: one spelling for one file,
//! whichever argument led to it (`.`, `./k8s`, `k8s/`, an absolute path).
//!
//! Under the working directory a path is written relative to it (`k8s/job.yaml`); elsewhere
//! it is absolute. A diff header puts the name behind `a/` and `b/`; an absolute name loses
//! its leading `/` there (`a/srv/repo/job.yaml`, not `a//srv/...`, which `git apply` rejects),
//! so the diff applies with `patch -p1` run from `/`.

use std::path::{Component, Path, PathBuf};

/// Spells paths relative to one working directory.
#[derive(Clone, Debug)]
pub struct Spelling {
    cwd: Option<PathBuf>,
}

impl Spelling {
    /// Relative to the process's working directory.
    pub fn current() -> Self {
        Spelling {
            cwd: std::env::current_dir().ok(),
        }
    }

    /// Relative to `cwd` (absolute).
    pub fn at(cwd: &Path) -> Self {
        Spelling {
            cwd: Some(cwd.to_path_buf()),
        }
    }

    /// The working directory, when it is known.
    pub fn cwd(&self) -> Option<&Path> {
        self.cwd.as_deref()
    }

    /// `p` made absolute, without `.` components, and with `..` resolved. A `..` is resolved
    /// on the file system (it may follow a symlink), lexically only when the path does not
    /// exist.
    pub fn absolute(&self, p: &Path) -> PathBuf {
        let joined = match (&self.cwd, p.is_absolute()) {
            (Some(cwd), false) => cwd.join(p),
            _ => p.to_path_buf(),
        };
        if joined.components().any(|c| c == Component::ParentDir)
            && let Ok(real) = std::fs::canonicalize(&joined)
        {
            return real;
        }
        let mut out = PathBuf::new();
        for c in joined.components() {
            match c {
                Component::CurDir => {}
                Component::ParentDir => {
                    out.pop();
                }
                other => out.push(other),
            }
        }
        out
    }

    /// The one spelling of `abs` (an absolute path from [`Spelling::absolute`]).
    pub fn display(&self, abs: &Path) -> String {
        let rel = self
            .cwd
            .as_deref()
            .and_then(|cwd| abs.strip_prefix(cwd).ok())
            .filter(|r| !r.as_os_str().is_empty());
        match rel {
            Some(r) => r.to_string_lossy().into_owned(),
            None if self.cwd.as_deref() == Some(abs) => ".".into(),
            None => abs.to_string_lossy().into_owned(),
        }
    }

    /// The spelling of a path given by the user, such as `--stdin-filename`.
    pub fn spell(&self, p: &Path) -> String {
        self.display(&self.absolute(p))
    }
}

/// The name in a diff header after `a/` or `b/`.
pub(crate) fn diff_name(display: &str) -> &str {
    display.trim_start_matches('/')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_spelling_under_the_working_directory() {
        let s = Spelling::at(Path::new("/repo"));
        for p in [
            "k8s/job.yaml",
            "./k8s/job.yaml",
            "k8s//job.yaml",
            "/repo/k8s/job.yaml",
        ] {
            assert_eq!(s.spell(Path::new(p)), "k8s/job.yaml", "{p}");
        }
        assert_eq!(
            s.spell(Path::new("/repo/./x/../k8s/job.yaml")),
            "k8s/job.yaml"
        );
        assert_eq!(s.spell(Path::new(".")), ".");
        assert_eq!(s.spell(Path::new("/srv/job.yaml")), "/srv/job.yaml");
        assert_eq!(s.spell(Path::new("../srv/job.yaml")), "/srv/job.yaml");
        assert_eq!(
            s.spell(Path::new("/repository/job.yaml")),
            "/repository/job.yaml"
        );
        assert_eq!(diff_name("/srv/job.yaml"), "srv/job.yaml");
        assert_eq!(diff_name("k8s/job.yaml"), "k8s/job.yaml");
    }
}
