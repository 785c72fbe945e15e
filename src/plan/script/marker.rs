//! The marker line: which wrapper version wrote a script, and how the container's argv was
//! split between `command` and `args` before it was wrapped, so that the wrapper can be taken
//! off again exactly.
//!
//! Version 1: `# meshjob-wrapper v1: <text>`; the whole argv counts as `command`.
//! Version 2: `# meshjob-wrapper v2: command=N` (the first N `args` were `command`) or
//! `# meshjob-wrapper v2: entrypoint=N` (there was no `command`; meshjob put the image's
//! entrypoint, N words from the config, in front of `args`). `command=all` says what a
//! version 1 marker says. Version 3 writes the same words as version 2.

use super::{ARG0, MARKER_PREFIX, SHELL};

/// Where the words of a wrapped container's `args` came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgvOrigin {
    /// A version 1 wrapper: all of `args` is taken as the original `command`.
    WholeArgv,
    /// The first N words were the original `command`, the rest its `args`.
    Command(usize),
    /// There was no `command`: the first N words are the image entrypoint meshjob added
    /// from the config, the rest the original `args`.
    Entrypoint(usize),
}

/// What a marker line says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marker {
    pub version: u32,
    pub origin: ArgvOrigin,
}

/// The original `command` and `args` of a wrapped container; None where the key was absent
/// (or, for `args`, empty).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Original {
    pub command: Option<Vec<String>>,
    pub args: Option<Vec<String>>,
}

/// The wrapper version of a script meshjob wrote, or None if `script` does not start with a
/// marker line. Any version is read, also one newer than this meshjob.
pub fn marker_version(script: &str) -> Option<u32> {
    let first = script.lines().next()?;
    let rest = first.strip_prefix(MARKER_PREFIX)?;
    let digits_end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let (digits, after) = rest.split_at(digits_end);
    if digits.is_empty() || !(after.is_empty() || after.starts_with(':')) {
        return None;
    }
    digits.parse().ok()
}

/// The marker of a script whose format this meshjob knows (versions 1 to 3), else None.
pub fn marker(script: &str) -> Option<Marker> {
    let version = marker_version(script)?;
    let origin = match version {
        1 => ArgvOrigin::WholeArgv,
        2 | 3 => {
            let first = script.lines().next()?;
            let (_, rest) = first.split_once(": ")?;
            let word = rest.split(' ').next()?;
            let count = |v: &str| -> Option<usize> {
                let ok = !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit());
                ok.then(|| v.parse().ok()).flatten()
            };
            if word == "command=all" {
                ArgvOrigin::WholeArgv
            } else if let Some(n) = word.strip_prefix("command=") {
                ArgvOrigin::Command(count(n)?)
            } else {
                ArgvOrigin::Entrypoint(count(word.strip_prefix("entrypoint=")?)?)
            }
        }
        _ => return None,
    };
    Some(Marker { version, origin })
}

/// The marker line of a version 2 or 3 script (without its newline).
pub(super) fn marker_line(version: u32, origin: ArgvOrigin) -> String {
    match origin {
        ArgvOrigin::WholeArgv => format!("{MARKER_PREFIX}{version}: command=all"),
        ArgvOrigin::Command(n) => format!("{MARKER_PREFIX}{version}: command={n}"),
        ArgvOrigin::Entrypoint(n) => format!("{MARKER_PREFIX}{version}: entrypoint={n}"),
    }
}

/// The original `command` and `args` of a container that meshjob wrapped, given its current
/// `command` and `args`; None when `command` is not a wrapper whose marker this meshjob
/// reads, or when `args` is shorter than the marker says (edited by hand since).
pub fn original_argv(command: &[String], args: &[String]) -> Option<Original> {
    let [sh, c, script, zero] = command else {
        return None;
    };
    if sh != SHELL || c != "-c" || zero != ARG0 {
        return None;
    }
    let non_empty = |v: &[String]| (!v.is_empty()).then(|| v.to_vec());
    Some(match marker(script)?.origin {
        ArgvOrigin::WholeArgv => Original {
            command: Some(args.to_vec()),
            args: None,
        },
        ArgvOrigin::Command(n) => Original {
            command: Some(args.get(..n)?.to_vec()),
            args: non_empty(&args[n..]),
        },
        ArgvOrigin::Entrypoint(n) => Original {
            command: None,
            args: non_empty(args.get(n..)?),
        },
    })
}
