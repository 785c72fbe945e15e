//! Output written as a stream is processed, held back at first: an input that fails before
//! [`HOLD_BYTES`] of output leaves nothing half-written (`fix -` then writes the input back
//! unchanged, as it always did); past that, the output goes out as it is made, and a failure
//! stops it there, with exit status 2, which the consumer must treat as failure.
//!
//! A write that fails (a full disk, an I/O error, a reader that closed the pipe) is an
//! error of its own: nothing more is written, and the caller stops the run.

use std::io::Write;
use std::sync::Arc;

pub use crate::stream::stdin::HOLD_BYTES;

/// Output that is held until it passes [`HOLD_BYTES`], then written as it comes.
pub(crate) struct HoldBack<'a> {
    out: &'a mut dyn Write,
    held: Vec<u8>,
    /// `fix -`: the start of the input, read ahead, to write back on a failure while
    /// nothing is written; `taken` bytes of it are taken so far.
    head: Option<Arc<Vec<u8>>>,
    taken: usize,
    flushed: bool,
    /// After a failure: the input was written back, and the rest of it goes out as it is.
    echoing: bool,
    /// A write failed: nothing more is written.
    broken: Option<std::io::ErrorKind>,
}

impl<'a> HoldBack<'a> {
    /// Output to `out`.
    pub(crate) fn new(out: &'a mut dyn Write) -> Self {
        HoldBack {
            out,
            held: Vec::new(),
            head: None,
            taken: 0,
            flushed: false,
            echoing: false,
            broken: None,
        }
    }

    /// Output to `out` that gives the input back on a failure (`fix -`), while the input
    /// taken is within `head`, the start of the input read ahead.
    pub(crate) fn giving_back(out: &'a mut dyn Write, head: Arc<Vec<u8>>) -> Self {
        HoldBack {
            head: Some(head),
            ..HoldBack::new(out)
        }
    }

    /// Writes to `out`, unless an earlier write failed; the first failure is kept.
    fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        if let Some(kind) = self.broken {
            return Err(kind.into());
        }
        self.out.write_all(bytes).inspect_err(|e| {
            self.broken = Some(e.kind());
        })
    }

    /// Output.
    pub(crate) fn write(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        if self.flushed {
            return self.put(bytes);
        }
        self.held.extend_from_slice(bytes);
        if self.held.len() > HOLD_BYTES {
            self.flush_held()?;
        }
        Ok(())
    }

    /// Writes what is held, and everything after it as it comes: the input can no longer be
    /// given back.
    fn flush_held(&mut self) -> std::io::Result<()> {
        self.head = None;
        self.flushed = true;
        let held = std::mem::take(&mut self.held);
        self.put(&held)
    }

    /// The next `n` bytes of input were taken (for `fix -`, which gives them back on a
    /// failure while they are within the input read ahead).
    pub(crate) fn input(&mut self, n: usize) -> std::io::Result<()> {
        self.taken += n;
        if self.head.as_ref().is_some_and(|h| self.taken > h.len()) && !self.flushed {
            return self.flush_held();
        }
        Ok(())
    }

    /// The input is past what is held at its start: what is held goes out, and from now on
    /// the output goes out as each batch is settled (flushed here, not when a block is full).
    pub(crate) fn release(&mut self) -> std::io::Result<()> {
        if !self.flushed {
            self.flush_held()?;
        }
        self.flush()
    }

    /// The input failed: drop what is held; `fix -` writes the input back unchanged while it
    /// still can (nothing written yet), the rest following through [`HoldBack::echo`].
    pub(crate) fn fail(&mut self) -> std::io::Result<()> {
        self.held = Vec::new();
        if let Some(head) = self.head.take() {
            let taken = head.get(..self.taken).unwrap_or(&head[..]);
            self.echoing = true;
            self.put(taken)?;
        }
        self.flush()
    }

    /// Whether the input is being written back (after [`HoldBack::fail`]).
    pub(crate) fn gave_back(&self) -> bool {
        self.echoing
    }

    /// Whether a failure now would write the input back (or it is being written back).
    pub(crate) fn gives_back(&self) -> bool {
        self.head.is_some() || self.echoing
    }

    /// After a failure, the rest of the input, as it is read.
    pub(crate) fn echo(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.fail()?;
        if self.echoing {
            self.put(bytes)?;
        }
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if let Some(kind) = self.broken {
            return Err(kind.into());
        }
        self.out.flush().inspect_err(|e| {
            self.broken = Some(e.kind());
        })
    }

    /// The end of the output: what is held goes out.
    pub(crate) fn finish(&mut self) -> std::io::Result<()> {
        if !self.flushed {
            self.flush_held()?;
        }
        self.flush()
    }
}

impl crate::stream::Output for HoldBack<'_> {
    type Error = std::io::Error;
    fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.write(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A writer that takes `room` bytes, then fails as a full disk does.
    struct Full {
        got: Vec<u8>,
        room: usize,
    }

    impl Write for Full {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let n = buf.len().min(self.room - self.got.len());
            if n == 0 {
                return Err(std::io::Error::from_raw_os_error(28));
            }
            self.got.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    #[cfg_attr(not(unix), ignore = "raw OS error 28 is ENOSPC on Unix only")]
    fn a_failed_write_is_an_error_and_nothing_more_is_written() {
        let mut w = Full {
            got: Vec::new(),
            room: 3,
        };
        let mut h = HoldBack::new(&mut w);
        h.write(b"hello").expect("held");
        let e = h.finish().expect_err("3 bytes fit");
        assert_eq!(
            e.raw_os_error(),
            Some(28),
            "the error itself, for the message"
        );
        let again = h.echo(b"more").expect_err("broken");
        assert_eq!(again.kind(), std::io::ErrorKind::StorageFull);
        drop(h);
        assert_eq!(w.got, b"hel");
    }

    #[test]
    fn the_input_is_given_back_within_the_hold_whatever_the_output_size() {
        let head = Arc::new(vec![b'i'; HOLD_BYTES]);
        let mut out = Vec::new();
        let mut h = HoldBack::giving_back(&mut out, head);
        // As much output as input, each just under the hold: nothing goes out.
        h.input(HOLD_BYTES - 1).expect("input");
        h.write(&vec![b'o'; HOLD_BYTES - 1]).expect("output");
        h.fail().expect("given back");
        assert!(h.gave_back());
        h.echo(b"rest").expect("echoed");
        drop(h);
        assert_eq!(out.len(), HOLD_BYTES - 1 + 4);
        assert!(out.iter().take(HOLD_BYTES - 1).all(|&b| b == b'i'));
    }

    #[test]
    fn past_the_input_read_ahead_the_output_goes_out() {
        let head = Arc::new(vec![b'i'; 4]);
        let mut out = Vec::new();
        let mut h = HoldBack::giving_back(&mut out, head);
        h.write(b"ab").expect("held");
        h.input(5).expect("past the head");
        h.write(b"cd").expect("written");
        h.fail().expect("nothing to give back");
        assert!(!h.gave_back());
        drop(h);
        assert_eq!(out, b"abcd");
    }
}
