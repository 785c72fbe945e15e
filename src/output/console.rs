//! The only writer of stdout and stderr. Every host hands its output here.

use crate::exit;
use std::io::Write;

/// When to colour the diff and findings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// Whether to colour a stream that is (or is not) a `terminal`: `auto` follows
    /// `NO_COLOR` and `CLICOLOR_FORCE`, then the terminal.
    pub fn enabled(self, terminal: bool) -> bool {
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) {
                    false
                } else if std::env::var_os("CLICOLOR_FORCE")
                    .is_some_and(|v| !v.is_empty() && v != "0")
                {
                    true
                } else {
                    terminal
                }
            }
        }
    }
}

/// What a host gives back for one run: the text for stdout, messages for a person, and the
/// exit status.
#[derive(Debug)]
pub(crate) struct Reply {
    /// The output; `None` on trouble (nothing fit to return).
    pub stdout: Option<String>,
    /// Messages for a person, each line ending in `\n`.
    pub stderr: String,
    /// One of the [`exit`] statuses.
    pub code: u8,
}

impl Reply {
    /// A run that stopped: nothing on stdout, `<label>: error: <msg>` on stderr, exit 2.
    pub(crate) fn trouble(label: &str, msg: &str) -> Self {
        Reply {
            stdout: None,
            stderr: format!("{label}: error: {msg}\n"),
            code: exit::TROUBLE,
        }
    }
}

/// Writes a reply; its status, or [`exit::TROUBLE`] with `<label>: error: cannot write to
/// stdout: ...` when stdout cannot take the output.
pub(crate) fn reply(label: &str, r: &Reply) -> u8 {
    stderr(&r.stderr);
    match r.stdout.as_deref().map(|out| stdout(out.as_bytes())) {
        Some(Err(e)) => {
            stderr(&format!("{label}: error: {}\n", cannot_write_stdout(&e)));
            exit::TROUBLE
        }
        _ => r.code,
    }
}

/// Writes bytes to stdout and flushes. An error is the run's failure: a full disk, an I/O
/// error, or a reader that closed the pipe (see [`cannot_write_stdout`]).
pub(crate) fn stdout(bytes: &[u8]) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes).and_then(|()| out.flush())
}

/// The message for output that stdout did not take. A failed write is never a success: the
/// output is incomplete (`fix - > out.yaml` on a full disk), or nobody reads it any more (a
/// closed pipe, where the run stops at once instead of reading the rest of its input).
pub(crate) fn cannot_write_stdout(e: &std::io::Error) -> String {
    let why = match e.kind() {
        std::io::ErrorKind::BrokenPipe => "; the reader closed the pipe, so the run stopped",
        _ => "; the output is incomplete: do not use it",
    };
    format!("cannot write to stdout: {e}{why}")
}

/// Stdout, for output written as it is made (a stream's diff or fixed text). Buffered in
/// large blocks: stdout on its own flushes at every line break, a system call per document.
pub(crate) fn stdout_writer() -> std::io::BufWriter<std::io::StdoutLock<'static>> {
    std::io::BufWriter::with_capacity(256 << 10, std::io::stdout().lock())
}

/// Writes text to stderr as it is (the progress line, if drawn, erased first).
pub(crate) fn stderr(text: &str) {
    super::progress::erase();
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// Reports why the run cannot go on (`meshjob: error: <msg>`), and returns
/// [`exit::TROUBLE`].
pub(crate) fn trouble(msg: &str) -> u8 {
    stderr(&format!("meshjob: error: {msg}\n"));
    exit::TROUBLE
}

/// Reports an error that already carries its place and label (such as a config file's
/// `path:line:col: error: ...`) as it is, and returns [`exit::TROUBLE`].
pub(crate) fn trouble_shown(shown: &impl std::fmt::Display) -> u8 {
    stderr(&format!("{shown}\n"));
    exit::TROUBLE
}
