//! A one-line progress report on stderr for a long run: the documents and files done and the
//! time taken, drawn only when stderr is a terminal (and stdout is not, see [`shown`]), once
//! the run has lasted [`AFTER`], redrawn at most every [`EVERY`], and erased before anything
//! else is written to stderr ([`erase`], called by `console::stderr`) and at the end of the
//! run.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long a run goes before its progress is shown.
pub(crate) const AFTER: Duration = Duration::from_secs(1);

/// The shortest time between two drawings of the line.
pub(crate) const EVERY: Duration = Duration::from_millis(250);

/// Erases the line the cursor is on: back to its start, then clear it.
const ERASE: &str = "\r\x1b[2K";

/// A progress line is on stderr now (drawn and not erased).
static DRAWN: AtomicBool = AtomicBool::new(false);

/// What a run has done so far, and when its line was last drawn.
#[derive(Debug)]
pub(crate) struct Progress {
    /// Stderr is a terminal: the line is drawn at all.
    on: bool,
    start: Instant,
    last: Option<Instant>,
    documents: u64,
    files: u64,
}

impl Progress {
    /// The progress of a run that starts at `start`; drawn only when stderr `is_terminal`.
    pub(crate) fn new(is_terminal: bool, start: Instant) -> Self {
        Progress {
            on: is_terminal,
            start,
            last: None,
            documents: 0,
            files: 0,
        }
    }

    /// The progress of a run that starts now, drawn when [`shown`] says so.
    pub(crate) fn on_stderr() -> Self {
        use std::io::IsTerminal;
        let terminals = (
            std::io::stderr().is_terminal(),
            std::io::stdout().is_terminal(),
        );
        Self::new(shown(terminals.0, terminals.1), Instant::now())
    }

    /// Counts `documents` and `files` more done at `now`; the line to draw when it is due:
    /// never when stderr is not a terminal, not before [`AFTER`], then at most every
    /// [`EVERY`].
    pub(crate) fn add(&mut self, documents: u64, files: u64, now: Instant) -> Option<String> {
        self.documents += documents;
        self.files += files;
        if !self.on {
            return None;
        }
        let elapsed = now.saturating_duration_since(self.start);
        let due = match self.last {
            None => elapsed >= AFTER,
            Some(last) => now.saturating_duration_since(last) >= EVERY,
        };
        if !due {
            return None;
        }
        self.last = Some(now);
        Some(line(self.documents, self.files, elapsed))
    }

    /// Counts what is done now, and draws the line on stderr when it is due.
    pub(crate) fn tick(&mut self, documents: u64, files: u64) {
        if let Some(l) = self.add(documents, files, Instant::now()) {
            draw(&l);
        }
    }
}

/// Whether the progress line is drawn: when stderr is a terminal, and stdout is not (on the
/// same terminal, the line would be drawn over the diff, and the diff shows the progress).
pub(crate) fn shown(stderr_terminal: bool, stdout_terminal: bool) -> bool {
    stderr_terminal && !stdout_terminal
}

/// The progress line: `meshjob: 12,345 documents, 3 files, 4.2 s`.
pub(crate) fn line(documents: u64, files: u64, elapsed: Duration) -> String {
    let plural = |n: u64, one: &str, many: &str| {
        format!("{} {}", thousands(n), if n == 1 { one } else { many })
    };
    format!(
        "meshjob: {}, {}, {:.1} s",
        plural(documents, "document", "documents"),
        plural(files, "file", "files"),
        elapsed.as_secs_f64()
    )
}

/// `1234567` as `1,234,567`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Draws `line` on stderr in place of the one drawn before.
fn draw(line: &str) {
    use std::io::Write;
    let mut err = std::io::stderr().lock();
    let _ = write!(err, "{ERASE}{line}").and_then(|()| err.flush());
    DRAWN.store(true, Ordering::Relaxed);
}

/// Erases the progress line, if one is drawn (before other output on stderr, and at the end
/// of a run).
pub(crate) fn erase() {
    if DRAWN.swap(false, Ordering::Relaxed) {
        use std::io::Write;
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(ERASE.as_bytes()).and_then(|()| err.flush());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_says_documents_files_and_time() {
        let l = line(1_234_567, 1, Duration::from_millis(4_200));
        assert_eq!(l, "meshjob: 1,234,567 documents, 1 file, 4.2 s");
        assert_eq!(
            line(1, 12, Duration::ZERO),
            "meshjob: 1 document, 12 files, 0.0 s"
        );
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
    }

    #[test]
    fn drawn_after_a_second_then_a_few_times_a_second() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let mut p = Progress::new(true, t0);
        assert_eq!(p.add(10, 0, at(100)), None, "too early");
        assert_eq!(p.add(10, 0, at(999)), None, "too early");
        let first = p.add(10, 1, at(1000)).expect("due after a second");
        assert_eq!(first, "meshjob: 30 documents, 1 file, 1.0 s");
        assert_eq!(p.add(1, 0, at(1100)), None, "throttled");
        assert_eq!(p.add(1, 0, at(1249)), None, "throttled");
        let next = p.add(1, 0, at(1300)).expect("due again");
        assert_eq!(next, "meshjob: 33 documents, 1 file, 1.3 s");
    }

    #[test]
    fn drawn_only_on_a_terminal_that_stdout_does_not_share() {
        assert!(shown(true, false));
        assert!(!shown(false, false));
        assert!(!shown(false, true));
        assert!(!shown(true, true));
    }

    #[test]
    fn never_drawn_when_stderr_is_not_a_terminal() {
        let t0 = Instant::now();
        let mut p = Progress::new(false, t0);
        for s in 0..100 {
            assert_eq!(p.add(1, 1, t0 + Duration::from_secs(s)), None);
        }
        assert_eq!((p.documents, p.files), (100, 100), "still counted");
    }
}
