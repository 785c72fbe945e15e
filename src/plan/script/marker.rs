//! The marker line: which wrapper version wrote a script, and how the container's argv was
//! split between `command` and `args` before it was wrapped, so that the wrapper can be taken
//! off again exactly.
//!
//! Version 1: `# meshjob-wrapper v1: <text>`; the whole argv counts as `command`.
//! Version 2: `# meshjob-wrapper v2: command=N` (the first N `args` were `command`) or
//! `# meshjob-wrapper v2: entrypoint=N` (there was no `command`; meshjob put the image's
//! entrypoint, N words from the config, in front of `args`). `command=all` says what a
//! version 1 marker says. Versions 3 and 4 write the same words as version 2, and after
//! `command=N`, when that `command` was a flow sequence beside `args`, how it was written:
//! ` flow=[*, *]` (the text before the first item, between two items and after the last
//! one, with `*` for the items; only spaces and commas), or ` flow` when it cannot be said
//! that way (it spans lines); nothing when it was a block sequence. The words moved into
//! `args` keep their own text, so taking the wrapper off gives back that `command` byte for
//! byte.

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

/// How the original `command` was written, when its words were moved in front of `args`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum CommandStyle {
    /// A block sequence (or the words were not moved out of a `command` of their own).
    #[default]
    Block,
    /// A flow sequence: `[`, then `open`, the items joined with `sep`, `close`, then `]`.
    /// None when it does not fit that form (it spans lines): it comes back as `[a, b]`.
    Flow(Option<FlowLayout>),
}

/// The spacing of a one-line flow sequence, without its items: only spaces and commas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowLayout {
    pub open: String,
    /// Between two items; empty for a sequence of one item.
    pub sep: String,
    pub close: String,
}

impl FlowLayout {
    /// The layout of the flow sequence `text` whose items are at `items` (byte ranges in
    /// `text`), when it has the form this type describes.
    pub fn of(text: &str, items: &[std::ops::Range<usize>]) -> Option<FlowLayout> {
        let (first, last) = (items.first()?, items.last()?);
        let inner = text.strip_prefix('[')?.strip_suffix(']')?;
        let open = inner.get(..first.start.checked_sub(1)?)?;
        let close = text.get(last.end..text.len() - 1)?;
        let mut seps = items.windows(2).map(|w| text.get(w[0].end..w[1].start));
        let sep = seps.next().flatten().unwrap_or_default();
        let layout = FlowLayout {
            open: open.to_string(),
            sep: sep.to_string(),
            close: close.to_string(),
        };
        let uniform = seps.all(|s| s == Some(sep));
        (uniform && layout.to_text().is_some()).then_some(layout)
    }

    /// The sequence of `items` (their source text) in this layout.
    pub fn join(&self, items: &[&str]) -> String {
        format!("[{}{}{}]", self.open, items.join(&self.sep), self.close)
    }

    /// The marker's word: `[<open>*<sep>*<close>]` (one `*` when `sep` is empty); None when a
    /// part holds anything but spaces and commas, or is long.
    fn to_text(&self) -> Option<String> {
        let plain = |p: &str| p.len() <= 8 && p.bytes().all(|b| b == b' ' || b == b',');
        let ok = plain(&self.open)
            && plain(&self.close)
            && plain(&self.sep)
            && (self.sep.is_empty() || self.sep.contains(','));
        ok.then(|| match self.sep.as_str() {
            "" => format!("[{}*{}]", self.open, self.close),
            sep => format!("[{}*{sep}*{}]", self.open, self.close),
        })
    }

    fn from_text(text: &str) -> Option<FlowLayout> {
        let inner = text.strip_prefix('[')?.strip_suffix(']')?;
        let (open, rest) = inner.split_once('*')?;
        let (sep, close) = match rest.split_once('*') {
            Some((sep, close)) => (sep, close),
            None => ("", rest),
        };
        let layout = FlowLayout {
            open: open.to_string(),
            sep: sep.to_string(),
            close: close.to_string(),
        };
        (layout.to_text().as_deref() == Some(text)).then_some(layout)
    }
}

/// What a marker line says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    pub version: u32,
    pub origin: ArgvOrigin,
    /// How the `command` was written: None for versions 1 and 2, which did not say.
    pub style: Option<CommandStyle>,
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

/// The marker of a script whose format this meshjob knows (versions 1 to 4), else None.
pub fn marker(script: &str) -> Option<Marker> {
    let version = marker_version(script)?;
    if version == 1 {
        return Some(Marker {
            version,
            origin: ArgvOrigin::WholeArgv,
            style: None,
        });
    }
    if version > 4 {
        return None;
    }
    let first = script.lines().next()?;
    let (_, rest) = first.split_once(": ")?;
    let (word, more) = rest.split_once(' ').unwrap_or((rest, ""));
    let count = |v: &str| -> Option<usize> {
        let ok = !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit());
        ok.then(|| v.parse().ok()).flatten()
    };
    let origin = if word == "command=all" {
        ArgvOrigin::WholeArgv
    } else if let Some(n) = word.strip_prefix("command=") {
        ArgvOrigin::Command(count(n)?)
    } else {
        ArgvOrigin::Entrypoint(count(word.strip_prefix("entrypoint=")?)?)
    };
    // Version 2 wrote nothing after its word (and ignored anything there).
    let style = match (version, more) {
        (2, _) => None,
        (_, "") => Some(CommandStyle::Block),
        (_, "flow") if matches!(origin, ArgvOrigin::Command(_)) => Some(CommandStyle::Flow(None)),
        (_, more) if matches!(origin, ArgvOrigin::Command(_)) => Some(CommandStyle::Flow(Some(
            FlowLayout::from_text(more.strip_prefix("flow=")?)?,
        ))),
        _ => return None,
    };
    Some(Marker {
        version,
        origin,
        style,
    })
}

/// The marker line of a version 2, 3 or 4 script (without its newline). Version 2 never says
/// how `command` was written; versions 3 and 4 do only for `command=N`.
pub(super) fn marker_line(version: u32, origin: ArgvOrigin, style: &CommandStyle) -> String {
    let style = match (version, origin, style) {
        (3.., ArgvOrigin::Command(_), CommandStyle::Flow(None)) => " flow".to_string(),
        (3.., ArgvOrigin::Command(_), CommandStyle::Flow(Some(layout))) => layout
            .to_text()
            .map_or_else(|| " flow".to_string(), |t| format!(" flow={t}")),
        _ => String::new(),
    };
    match origin {
        ArgvOrigin::WholeArgv => format!("{MARKER_PREFIX}{version}: command=all"),
        ArgvOrigin::Command(n) => format!("{MARKER_PREFIX}{version}: command={n}{style}"),
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
