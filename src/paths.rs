//! How a file's path is spelled in findings and diff headers: one spelling for one file,
//! whichever argument led to it (`.`, `./k8s`, `k8s/`, an absolute path).
//!
//! Under the working directory a path is written relative to it (`k8s/job.yaml`); elsewhere
//! it is absolute. A diff header puts the name behind `a/` and `b/`; an absolute name loses
//! its leading `/` there (`a/srv/repo/job.yaml`, not `a//srv/...`, which `git apply` rejects),
//! so the diff applies with `patch -p1` run from `/`.
//!
//! On Windows a name is spelled as a Windows user types it, with `\` (`k8s\job.yaml`), and
//! an absolute one without the `\\?\` prefix of a verbatim path (`C:\srv\job.yaml`, which is
//! what `fs::canonicalize` returns there). Diff headers and SARIF locations write it as git
//! does, with `/` ([`slashed`]). A `\\?\` path given as an argument is read as given; std
//! itself turns a long path into a verbatim one when it opens it (its `maybe_verbatim`), so
//! paths over `MAX_PATH` need nothing more here.

use std::borrow::Cow;
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
        let abs = &*plain(abs);
        let rel = self
            .cwd
            .as_deref()
            .and_then(|cwd| abs.strip_prefix(cwd).ok())
            .filter(|r| !r.as_os_str().is_empty());
        match rel {
            Some(r) => spelled(r.as_os_str()),
            None if self.cwd.as_deref() == Some(abs) => ".".into(),
            None => spelled(abs.as_os_str()),
        }
    }

    /// The spelling of a path given by the user, such as `--stdin-filename`.
    pub fn spell(&self, p: &Path) -> String {
        self.display(&self.absolute(p))
    }
}

/// The text of a name. A name that is not UTF-8 (a Unix file name is any bytes) is quoted as
/// git quotes it (`quote_c_style` with `core.quotePath` on: in `"`, C escapes, and every
/// byte that is a control or not ASCII in octal: `"caf\351.yaml"`), so that no byte is
/// lost; so is a name that starts with `"`, so that a name that starts with `"` is always
/// such a quoted one ([`raw`] gives the bytes back). Windows names are UTF-16, shown as
/// Rust reads them.
fn spelled(name: &std::ffi::OsStr) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let bytes = name.as_bytes();
        match std::str::from_utf8(bytes) {
            Ok(s) if !s.starts_with('"') => s.to_string(),
            _ => quoted(bytes),
        }
    }
    #[cfg(not(unix))]
    {
        name.to_string_lossy().into_owned()
    }
}

/// `bytes` quoted as git's `quote_c_style` quotes a path with `core.quotePath` on.
pub(crate) fn quoted(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 8);
    out.push('"');
    for &b in bytes {
        match b {
            0x07 => out.push_str("\\a"),
            0x08 => out.push_str("\\b"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            0x0b => out.push_str("\\v"),
            0x0c => out.push_str("\\f"),
            b'\r' => out.push_str("\\r"),
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out.push('"');
    out
}

/// The bytes of a name that [`Spelling::display`] spelled: those of a quoted one (it starts
/// with `"`) unquoted, else those of the text.
pub(crate) fn raw(display: &str) -> Cow<'_, [u8]> {
    let Some(inner) = (display.len() >= 2)
        .then(|| display.strip_prefix('"')?.strip_suffix('"'))
        .flatten()
    else {
        return Cow::Borrowed(display.as_bytes());
    };
    let mut out = Vec::with_capacity(inner.len());
    let mut bytes = inner.bytes();
    while let Some(b) = bytes.next() {
        if b != b'\\' {
            out.push(b);
            continue;
        }
        let Some(e) = bytes.next() else {
            return Cow::Borrowed(display.as_bytes());
        };
        out.push(match e {
            b'a' => 0x07,
            b'b' => 0x08,
            b't' => b'\t',
            b'n' => b'\n',
            b'v' => 0x0b,
            b'f' => 0x0c,
            b'r' => b'\r',
            b'0'..=b'3' => {
                let (Some(d2), Some(d3)) = (bytes.next(), bytes.next()) else {
                    return Cow::Borrowed(display.as_bytes());
                };
                if !(b'0'..=b'7').contains(&d2) || !(b'0'..=b'7').contains(&d3) {
                    return Cow::Borrowed(display.as_bytes());
                }
                (e - b'0') * 64 + (d2 - b'0') * 8 + (d3 - b'0')
            }
            other => other,
        });
    }
    Cow::Owned(out)
}

/// The name in a diff header after `a/` or `b/`.
pub(crate) fn diff_name(display: &str) -> Cow<'_, str> {
    match slashed(display) {
        Cow::Borrowed(s) => Cow::Borrowed(s.trim_start_matches('/')),
        Cow::Owned(s) => Cow::Owned(s.trim_start_matches('/').to_string()),
    }
}

/// A spelling with `/` between names, as git writes paths. On Unix that is the spelling
/// itself (a `\` there is part of a name); on Windows each `\` becomes `/`.
pub(crate) fn slashed(display: &str) -> Cow<'_, str> {
    if cfg!(windows) && display.contains('\\') {
        return Cow::Owned(display.replace('\\', "/"));
    }
    Cow::Borrowed(display)
}

/// `p` without the `\\?\` prefix of a Windows verbatim path: `\\?\C:\x` is `C:\x`, and
/// `\\?\UNC\server\share\x` is `\\server\share\x`. Other paths, and every path on Unix, are
/// returned as they are.
fn plain(p: &Path) -> Cow<'_, Path> {
    #[cfg(windows)]
    {
        use std::path::Prefix;
        let mut parts = p.components();
        if let Some(Component::Prefix(prefix)) = parts.next() {
            let head = match prefix.kind() {
                Prefix::VerbatimDisk(d) => format!("{}:", char::from(d)),
                Prefix::VerbatimUNC(server, share) => format!(
                    r"\\{}\{}",
                    server.to_string_lossy(),
                    share.to_string_lossy()
                ),
                _ => return Cow::Borrowed(p),
            };
            let mut out = PathBuf::from(head);
            // The root pushed after a prefix with no root makes `C:\`, not `\`.
            out.extend(parts);
            return Cow::Owned(out);
        }
    }
    Cow::Borrowed(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
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
        // A backslash is part of a name on Unix (a separator on Windows).
        assert_eq!(diff_name("k8s\\a/job.yaml"), "k8s\\a/job.yaml");
    }

    #[cfg(unix)]
    #[test]
    fn a_name_that_is_not_utf8_is_spelled_quoted_and_read_back() {
        use std::os::unix::ffi::OsStrExt;
        let s = Spelling::at(Path::new("/repo"));
        let latin1 = std::ffi::OsStr::from_bytes(b"/repo/k8s/caf\xe9 \"x\"\\\n.yaml");
        let shown = s.display(Path::new(latin1));
        assert_eq!(shown, r#""k8s/caf\351 \"x\"\\\n.yaml""#);
        assert_eq!(&*raw(&shown), b"k8s/caf\xe9 \"x\"\\\n.yaml");
        // A UTF-8 name that starts with `"` is quoted too, so that a quoted spelling is
        // never a name as it is; other UTF-8 names are kept, `\` and `"` inside too.
        let quote = s.display(Path::new("/repo/\"q\".yaml"));
        assert_eq!(quote, r#""\"q\".yaml""#);
        assert_eq!(&*raw(&quote), b"\"q\".yaml");
        assert_eq!(s.display(Path::new("/repo/é \"q\".yaml")), "é \"q\".yaml");
        assert_eq!(&*raw("é \"q\".yaml"), "é \"q\".yaml".as_bytes());
        // Every byte survives the round trip.
        let all: Vec<u8> = (1..=255).collect();
        assert_eq!(&*raw(&quoted(&all)), &all[..]);
    }

    #[cfg(windows)]
    #[test]
    fn windows_spellings() {
        let s = Spelling::at(Path::new(r"C:\repo"));
        assert_eq!(s.spell(Path::new(r"k8s\job.yaml")), r"k8s\job.yaml");
        assert_eq!(s.spell(Path::new("k8s/job.yaml")), r"k8s\job.yaml");
        assert_eq!(
            s.display(Path::new(r"\\?\C:\repo\k8s\job.yaml")),
            r"k8s\job.yaml"
        );
        assert_eq!(
            s.display(Path::new(r"\\?\D:\srv\job.yaml")),
            r"D:\srv\job.yaml"
        );
        assert_eq!(
            s.display(Path::new(r"\\?\UNC\host\share\job.yaml")),
            r"\\host\share\job.yaml"
        );
        assert_eq!(diff_name(r"k8s\job.yaml"), "k8s/job.yaml");
        assert_eq!(diff_name(r"D:\srv\job.yaml"), "D:/srv/job.yaml");
    }
}
