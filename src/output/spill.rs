//! The arrays of a JSON or SARIF report, written entry by entry as the run finds them into a
//! temporary file (memory when no temporary file can be made), and copied into the report at
//! the end: the report is one document on stdout, printed as `serde_json::to_string_pretty`
//! prints it, and memory does not grow with the input.
//!
//! The report is made with a [`marker`] in place of each spilled array, printed, and each
//! marker replaced by its array ([`write_with`]).

use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};

/// Where a spill's bytes are kept.
enum Store {
    File(BufWriter<File>),
    Memory(Vec<u8>),
}

/// One array of a report, its entries written as they come, pretty-printed at `indent`
/// spaces (the indentation of the array's entries in the report).
pub(crate) struct Spill {
    store: Store,
    indent: usize,
    /// Entries written.
    entries: usize,
    /// Bytes written.
    len: u64,
    /// Where the open entry begins, and the entry count before it ([`Spill::abandon`]).
    open: Option<(u64, usize)>,
    /// The first write that failed: the report cannot be made.
    error: Option<std::io::Error>,
}

impl Spill {
    /// An empty array whose entries are indented by `indent` spaces.
    pub(crate) fn new(indent: usize) -> Self {
        let store = match temp_file() {
            Ok(f) => Store::File(BufWriter::with_capacity(64 << 10, f)),
            Err(_) => Store::Memory(Vec::new()),
        };
        Spill {
            store,
            indent,
            entries: 0,
            len: 0,
            open: None,
            error: None,
        }
    }

    /// An empty array kept in memory (for tests).
    #[cfg(test)]
    pub(crate) fn in_memory(indent: usize) -> Self {
        Spill {
            store: Store::Memory(Vec::new()),
            ..Spill::new(indent)
        }
    }

    fn put(&mut self, bytes: &[u8]) {
        if self.error.is_some() {
            return;
        }
        let written = match &mut self.store {
            Store::File(f) => f.write_all(bytes),
            Store::Memory(v) => {
                v.extend_from_slice(bytes);
                Ok(())
            }
        };
        match written {
            Ok(()) => self.len += bytes.len() as u64,
            Err(e) => self.error = Some(e),
        }
    }

    /// One whole entry: `value`, pretty-printed at the array's indentation.
    pub(crate) fn push(&mut self, value: &serde_json::Value) {
        let text = serde_json::to_string_pretty(value).unwrap_or_default();
        self.begin();
        let pad = " ".repeat(self.indent);
        for (i, line) in text.lines().enumerate() {
            if i > 0 {
                self.put(b"\n");
            }
            self.put(pad.as_bytes());
            self.put(line.as_bytes());
        }
        self.open = None;
    }

    /// Begins an entry (written by the caller with [`Spill::raw`]); the separator from the
    /// entry before goes first.
    pub(crate) fn begin(&mut self) {
        self.open = Some((self.len, self.entries));
        if self.entries > 0 {
            self.put(b",\n");
        }
        self.entries += 1;
    }

    /// Text of the open entry, as it is.
    pub(crate) fn raw(&mut self, text: &str) {
        self.put(text.as_bytes());
    }

    /// Ends the open entry.
    pub(crate) fn end(&mut self) {
        self.open = None;
    }

    /// Whether an entry is open.
    pub(crate) fn is_open(&self) -> bool {
        self.open.is_some()
    }

    /// Takes back the open entry, as if it had not begun.
    pub(crate) fn abandon(&mut self) {
        let Some((at, entries)) = self.open.take() else {
            return;
        };
        self.entries = entries;
        self.len = at;
        let cut = match &mut self.store {
            Store::Memory(v) => {
                v.truncate(at as usize);
                Ok(())
            }
            Store::File(f) => f.flush().and_then(|()| {
                let file = f.get_mut();
                file.set_len(at)?;
                file.seek(SeekFrom::Start(at)).map(|_| ())
            }),
        };
        if let Err(e) = cut {
            self.error.get_or_insert(e);
        }
    }

    /// The first write into the spill that failed: the report cannot be made.
    pub(crate) fn error(&self) -> Option<&std::io::Error> {
        self.error.as_ref()
    }

    /// The array's spaces of indentation.
    pub(crate) fn indent(&self) -> usize {
        self.indent
    }

    /// Writes the array (`[` ... `]`, or `[]` when empty) to `out`; the closing bracket is
    /// indented by `close` spaces.
    fn copy_to(&mut self, out: &mut dyn Write, close: usize) -> std::io::Result<()> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if self.entries == 0 {
            return out.write_all(b"[]");
        }
        out.write_all(b"[\n")?;
        match &mut self.store {
            Store::Memory(v) => out.write_all(v)?,
            Store::File(f) => {
                f.flush()?;
                let file = f.get_mut();
                file.seek(SeekFrom::Start(0))?;
                std::io::copy(&mut file.take(self.len), out)?;
            }
        }
        write!(out, "\n{}]", " ".repeat(close))
    }
}

/// A file for the spill in the temporary directory, removed at once: it lives as long as it
/// is open.
fn temp_file() -> std::io::Result<File> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir();
    let mut tries = 0;
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!(".meshjob-report-{}-{n}.tmp", std::process::id()));
        match File::options()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(f) => {
                let _ = std::fs::remove_file(&path);
                return Ok(f);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && tries < 100 => tries += 1,
            Err(e) => return Err(e),
        }
    }
}

/// The JSON string that stands for spilled array `i` in a report before it is written.
pub(crate) fn marker(i: usize) -> serde_json::Value {
    serde_json::Value::String(format!("\u{1}meshjob-spill-{i}\u{1}"))
}

/// Writes `report` pretty-printed, each [`marker`] `i` in it replaced by `spills[i]`,
/// followed by a line break.
pub(crate) fn write_with(
    report: &serde_json::Value,
    spills: &mut [&mut Spill],
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(report).unwrap_or_default();
    let mut rest = text.as_str();
    loop {
        let next = (0..spills.len())
            .filter_map(|i| {
                let m = serde_json::to_string(&marker(i)).unwrap_or_default();
                rest.find(&m).map(|at| (at, i, m.len()))
            })
            .min();
        let Some((at, i, len)) = next else {
            break;
        };
        out.write_all(&rest.as_bytes()[..at])?;
        let close = spills[i].indent().saturating_sub(2);
        spills[i].copy_to(out, close)?;
        rest = &rest[at + len..];
    }
    out.write_all(rest.as_bytes())?;
    out.write_all(b"\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn both(indent: usize) -> [Spill; 2] {
        [Spill::new(indent), Spill::in_memory(indent)]
    }

    #[test]
    fn a_spilled_report_is_printed_as_serde_prints_it() {
        let entries = [json!({"a": 1, "b": {"c": [1, 2]}}), json!({"d": "x\ny\"z"})];
        let whole = json!({"changed": [], "findings": entries, "summary": {"n": 2}});
        let expected = serde_json::to_string_pretty(&whole).expect("json") + "\n";
        for (mut changed, mut findings) in both(4).into_iter().zip(both(4)) {
            for e in &entries {
                findings.push(e);
            }
            let report = json!({"changed": marker(0), "findings": marker(1), "summary": {"n": 2}});
            let mut out = Vec::new();
            write_with(&report, &mut [&mut changed, &mut findings], &mut out).expect("written");
            assert_eq!(String::from_utf8(out).expect("utf-8"), expected);
        }
    }

    #[test]
    fn an_entry_written_in_parts_or_taken_back() {
        for mut s in both(8) {
            s.push(&json!({"k": 1}));
            s.begin();
            s.raw("        {\"half\": ");
            assert!(s.is_open());
            s.abandon();
            assert!(!s.is_open());
            s.begin();
            s.raw("        2");
            s.end();
            let deep = json!({"runs": [{"results": marker(0)}]});
            let mut out = Vec::new();
            write_with(&deep, &mut [&mut s], &mut out).expect("written");
            let whole = json!({"runs": [{"results": [{"k": 1}, 2]}]});
            let expected = serde_json::to_string_pretty(&whole).expect("json") + "\n";
            assert_eq!(String::from_utf8(out).expect("utf-8"), expected);
        }
    }
}
