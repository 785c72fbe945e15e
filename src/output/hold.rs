//! Output written as a stream is processed, held back at first: an input that fails before
//! [`HOLD_BYTES`] of output leaves nothing half-written (`fix -` then writes the input back
//! unchanged, as it always did); past that, the output goes out as it is made, and a failure
//! stops it there, with exit status 2, which the consumer must treat as failure.

use std::io::Write;

/// Output held back before any is written.
pub const HOLD_BYTES: usize = 8 << 20;

/// Output that is held until it passes [`HOLD_BYTES`], then written as it comes.
pub(crate) struct HoldBack<'a> {
    out: &'a mut dyn Write,
    held: Vec<u8>,
    /// The input so far, for `fix -` to write back on a failure while nothing is written.
    input: Option<Vec<u8>>,
    flushed: bool,
    /// After a failure: the rest of the input goes out as it is.
    echoing: bool,
}

impl<'a> HoldBack<'a> {
    /// Output to `out`; `echo`: keep the input too, to write it back on a failure.
    pub(crate) fn new(out: &'a mut dyn Write, echo: bool) -> Self {
        HoldBack {
            out,
            held: Vec::new(),
            input: echo.then(Vec::new),
            flushed: false,
            echoing: false,
        }
    }

    /// Output. Errors writing stdout are ignored, as for any output meshjob prints: the
    /// reader went away.
    pub(crate) fn write(&mut self, bytes: &[u8]) {
        if self.flushed {
            let _ = self.out.write_all(bytes);
            return;
        }
        self.held.extend_from_slice(bytes);
        let input = self.input.as_ref().map_or(0, Vec::len);
        if self.held.len() + input > HOLD_BYTES {
            let _ = self.out.write_all(&self.held);
            self.held = Vec::new();
            self.input = None;
            self.flushed = true;
        }
    }

    /// Input that was read, kept while nothing is written (for `fix -`).
    pub(crate) fn input(&mut self, bytes: &[u8]) {
        if let Some(i) = &mut self.input {
            i.extend_from_slice(bytes);
        }
    }

    /// The input failed: drop what is held; `fix -` writes the input back unchanged while it
    /// still can (nothing written yet), the rest following through [`HoldBack::echo`].
    pub(crate) fn fail(&mut self) {
        self.held = Vec::new();
        if let Some(i) = self.input.take() {
            let _ = self.out.write_all(&i);
            self.echoing = true;
        }
        let _ = self.out.flush();
    }

    /// After a failure, the rest of the input, as it is read.
    pub(crate) fn echo(&mut self, bytes: &[u8]) {
        self.fail();
        if self.echoing {
            let _ = self.out.write_all(bytes);
        }
    }

    pub(crate) fn finish(&mut self) {
        if !self.flushed {
            let _ = self.out.write_all(&self.held);
            self.held = Vec::new();
        }
        let _ = self.out.flush();
    }
}
