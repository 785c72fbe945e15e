//! Inputs: files, directories (walked for `*.yaml` / `*.yml`) and stdin.

use std::io::Read;
use std::path::{Path, PathBuf};

/// The largest input read whole: a KRM ResourceList, which is one document by nature. Streams
/// (files, stdin) are not read whole and have no cap; their documents have the same one
/// (`stream::MAX_DOCUMENT_BYTES`).
pub const MAX_INPUT_BYTES: u64 = crate::stream::MAX_DOCUMENT_BYTES as u64;

/// Where a text comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    Stdin,
    File(PathBuf),
}

impl Origin {
    /// The name shown in findings and diff headers.
    pub fn display(&self) -> String {
        match self {
            Origin::Stdin => "-".to_string(),
            Origin::File(p) => p.to_string_lossy().into_owned(),
        }
    }
}

/// Expands PATH arguments: `-` is stdin, directories are walked (sorted, hidden entries
/// skipped), files are taken as they are. Errors name the path.
pub fn expand(args: &[String]) -> (Vec<Origin>, Vec<(String, String)>) {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for a in args {
        if a == "-" {
            out.push(Origin::Stdin);
            continue;
        }
        let p = Path::new(a);
        match std::fs::metadata(p) {
            Ok(m) if m.is_dir() => walk(p, &mut out, &mut errors),
            Ok(_) => out.push(Origin::File(p.to_path_buf())),
            Err(e) => errors.push((a.clone(), cannot_read(&e))),
        }
    }
    (out, errors)
}

fn is_yaml(p: &Path) -> bool {
    matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml"))
}

fn walk(dir: &Path, out: &mut Vec<Origin>, errors: &mut Vec<(String, String)>) {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            errors.push((
                dir.display().to_string(),
                format!("cannot read directory: {e}"),
            ));
            return;
        }
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        let hidden = p
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with('.'));
        if hidden {
            continue;
        }
        match std::fs::metadata(&p) {
            Ok(m) if m.is_dir() => walk(&p, out, errors),
            Ok(m) if m.is_file() && is_yaml(&p) => out.push(Origin::File(p)),
            _ => {}
        }
    }
}

/// Opens one input to be read as a stream, refusing special files (FIFOs, devices); stdin
/// may be anything.
pub fn open(origin: &Origin) -> Result<Box<dyn Read + Send>, String> {
    match origin {
        Origin::Stdin => Ok(Box::new(std::io::stdin())),
        Origin::File(p) => {
            let meta = std::fs::metadata(p).map_err(|e| cannot_read(&e))?;
            if !meta.is_file() {
                return Err("not a regular file (a FIFO, device or socket); skipped".into());
            }
            let f = std::fs::File::open(p).map_err(|e| cannot_read(&e))?;
            Ok(Box::new(f))
        }
    }
}

/// The size of a regular file, when `origin` is one.
pub fn file_len(origin: &Origin) -> Option<u64> {
    match origin {
        Origin::File(p) => std::fs::metadata(p)
            .ok()
            .filter(|m| m.is_file())
            .map(|m| m.len()),
        Origin::Stdin => None,
    }
}

/// Reads one input whole, refusing special files (FIFOs, devices) and inputs over
/// [`MAX_INPUT_BYTES`] before reading them.
pub fn read(origin: &Origin) -> Result<Vec<u8>, String> {
    let too_big = || {
        format!(
            "larger than {} MiB; meshjob does not edit inputs this big (split the stream into \
             several files)",
            MAX_INPUT_BYTES >> 20
        )
    };
    let mut bytes = Vec::new();
    match origin {
        Origin::Stdin => {
            std::io::stdin()
                .lock()
                .take(MAX_INPUT_BYTES + 1)
                .read_to_end(&mut bytes)
                .map_err(|e| format!("cannot read stdin: {e}"))?;
        }
        Origin::File(p) => {
            let meta = std::fs::metadata(p).map_err(|e| cannot_read(&e))?;
            if !meta.is_file() {
                return Err("not a regular file (a FIFO, device or socket); skipped".into());
            }
            if meta.len() > MAX_INPUT_BYTES {
                return Err(too_big());
            }
            std::fs::File::open(p)
                .and_then(|f| f.take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes))
                .map_err(|e| cannot_read(&e))?;
        }
    }
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(too_big());
    }
    Ok(bytes)
}

/// Why an input could not be loaded as text.
#[derive(Debug)]
pub enum LoadError {
    /// It could not be read (missing, special file, too big, I/O error).
    Read(String),
    /// It was read but is not text meshjob edits; `offset` is where in `bytes` that shows.
    Decode {
        bytes: Vec<u8>,
        offset: usize,
        message: String,
    },
}

/// Reads one input whole ([`read`]) and checks that it is text ([`decode`]).
pub fn load(origin: &Origin) -> Result<String, LoadError> {
    let bytes = read(origin).map_err(LoadError::Read)?;
    if let Err((offset, message)) = decode(&bytes) {
        return Err(LoadError::Decode {
            bytes,
            offset,
            message,
        });
    }
    // `decode` has checked the bytes, so this cannot fail; it keeps them without a copy.
    String::from_utf8(bytes).map_err(|e| LoadError::Decode {
        offset: e.utf8_error().valid_up_to(),
        bytes: e.into_bytes(),
        message: "not UTF-8 text".into(),
    })
}

/// "cannot read: ..." with a hint for the usual causes.
pub fn cannot_read(e: &std::io::Error) -> String {
    let hint = match e.kind() {
        std::io::ErrorKind::NotFound => "; check the path",
        std::io::ErrorKind::PermissionDenied => "; check the file's permissions",
        _ => "",
    };
    format!("cannot read: {e}{hint}")
}

/// Why bytes are not a text meshjob can edit, with the byte offset of the problem.
pub fn decode(bytes: &[u8]) -> Result<&str, (usize, String)> {
    if let Some(i) = bytes.iter().position(|&b| b == 0) {
        return Err((i, "binary file (contains a NUL byte); not YAML".into()));
    }
    std::str::from_utf8(bytes).map_err(|e| {
        (
            e.valid_up_to(),
            "not UTF-8 text; YAML manifests must be UTF-8: re-encode the file (for example \
             `iconv -f LATIN1 -t UTF-8`)"
                .to_string(),
        )
    })
}

/// 1-based line and column of a byte offset in bytes that may not be valid UTF-8.
pub fn line_col_bytes(bytes: &[u8], offset: usize) -> (usize, usize) {
    let upto = String::from_utf8_lossy(&bytes[..offset.min(bytes.len())]);
    crate::yaml::text::line_col(&upto, upto.len())
}
