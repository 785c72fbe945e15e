//! Inputs: files, directories (walked for `*.yaml` / `*.yml`) and stdin.

use std::collections::HashSet;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The largest input meshjob edits. Real manifests, Helm renders included, are far smaller;
/// the cap keeps time and memory bounded whatever is piped in. Peak memory is linear, about
/// 50 bytes per input byte when every document is edited, so well under 4 GiB at the cap;
/// `scripts/big-inputs.sh` measures it.
pub const MAX_INPUT_BYTES: u64 = 32 << 20;

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
///
/// Each directory and file is visited once, known by its device and inode: symlinks that
/// loop (`ln -s . again`) are not followed round, and a file reached twice (named twice, or
/// through a link) is listed under the first path that reached it, so it is never edited or
/// reported twice.
pub fn expand(args: &[String]) -> (Vec<Origin>, Vec<(String, String)>) {
    let mut out = Vec::new();
    let mut errors = Vec::new();
    let mut seen = Seen::default();
    for a in args {
        if a == "-" {
            out.push(Origin::Stdin);
            continue;
        }
        let p = Path::new(a);
        match std::fs::metadata(p) {
            Ok(m) if !seen.first_visit(&m) => {}
            Ok(m) if m.is_dir() => walk(p, &mut seen, &mut out, &mut errors),
            Ok(_) => out.push(Origin::File(p.to_path_buf())),
            Err(e) => errors.push((a.clone(), cannot_read(&e))),
        }
    }
    (out, errors)
}

/// The directories and files a walk has reached, by (device, inode).
#[derive(Default)]
struct Seen(HashSet<(u64, u64)>);

impl Seen {
    /// Records `m`; `false` when it was reached before.
    fn first_visit(&mut self, m: &std::fs::Metadata) -> bool {
        self.0.insert((m.dev(), m.ino()))
    }
}

fn is_yaml(p: &Path) -> bool {
    matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml"))
}

fn walk(dir: &Path, seen: &mut Seen, out: &mut Vec<Origin>, errors: &mut Vec<(String, String)>) {
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
        // Symlinks are followed (to the file or directory they name), once per target.
        match std::fs::metadata(&p) {
            Ok(m) if m.is_dir() && seen.first_visit(&m) => walk(&p, seen, out, errors),
            Ok(m) if m.is_file() && is_yaml(&p) && seen.first_visit(&m) => {
                out.push(Origin::File(p))
            }
            _ => {}
        }
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
fn cannot_read(e: &std::io::Error) -> String {
    let hint = match e.kind() {
        std::io::ErrorKind::NotFound => "; check the path",
        std::io::ErrorKind::PermissionDenied => "; check the file's permissions",
        _ => "",
    };
    format!("cannot read: {e}{hint}")
}

/// Why bytes are not a text meshjob can edit, with the byte offset of the problem.
pub fn decode(bytes: &[u8]) -> Result<&str, (usize, String)> {
    if let Some(wide) = wide_encoding(bytes) {
        return Err((
            0,
            format!(
                "looks like {wide}, not UTF-8; YAML manifests must be UTF-8: convert it (for \
                 example `iconv -f {} -t UTF-8 FILE > FILE.utf8`, then replace FILE with it)",
                wide.iconv_name()
            ),
        ));
    }
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

/// A UTF-16 or UTF-32 encoding that a text was found in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wide {
    /// 2 or 4.
    pub unit: usize,
    pub big_endian: bool,
    /// It starts with a byte order mark.
    pub bom: bool,
}

impl Wide {
    /// The encoding's name for `iconv -f`. With a byte order mark the name without an
    /// endianness lets iconv read the mark and drop it; without one the endianness is named.
    pub fn iconv_name(self) -> String {
        let base = format!("UTF-{}", self.unit * 8);
        match (self.bom, self.big_endian) {
            (true, _) => base,
            (false, true) => format!("{base}BE"),
            (false, false) => format!("{base}LE"),
        }
    }
}

impl std::fmt::Display for Wide {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let order = if self.big_endian { "BE" } else { "LE" };
        let why = if self.bom {
            "it starts with a byte order mark"
        } else {
            "judging by its zero bytes"
        };
        write!(f, "UTF-{}{order} text ({why})", self.unit * 8)
    }
}

/// Whether `bytes` look like UTF-16 or UTF-32 text: a byte order mark, or else the pattern of
/// zero bytes that ASCII characters make in those encodings. YAML 1.2 (5.2, "Character
/// Encodings") detects the encoding from the first character alone, which it requires to be
/// ASCII; here the first four characters (or as many as there are) must fit the pattern, so
/// a binary file that merely starts with one zero byte is still called binary.
pub fn wide_encoding(bytes: &[u8]) -> Option<Wide> {
    let wide = |unit, big_endian, bom| {
        Some(Wide {
            unit,
            big_endian,
            bom,
        })
    };
    match bytes {
        [0, 0, 0xFE, 0xFF, ..] => return wide(4, true, true),
        [0xFF, 0xFE, 0, 0, ..] => return wide(4, false, true),
        [0xFE, 0xFF, ..] => return wide(2, true, true),
        [0xFF, 0xFE, ..] => return wide(2, false, true),
        _ => {}
    }
    // One ASCII character per unit: its byte last (big-endian) or first, zeros elsewhere.
    let ascii_units = |unit: usize, big_endian: bool| {
        let units: Vec<&[u8]> = bytes.chunks_exact(unit).take(4).collect();
        !units.is_empty()
            && units.iter().all(|u| {
                let (ch, zeros) = if big_endian {
                    (u[unit - 1], &u[..unit - 1])
                } else {
                    (u[0], &u[1..])
                };
                (1..0x80).contains(&ch) && zeros.iter().all(|&b| b == 0)
            })
    };
    [(4, true), (4, false), (2, true), (2, false)]
        .into_iter()
        .find(|&(unit, be)| ascii_units(unit, be))
        .and_then(|(unit, be)| wide(unit, be, false))
}

/// 1-based line and column of a byte offset in bytes that may not be valid UTF-8.
pub fn line_col_bytes(bytes: &[u8], offset: usize) -> (usize, usize) {
    let upto = String::from_utf8_lossy(&bytes[..offset.min(bytes.len())]);
    crate::yaml::text::line_col(&upto, upto.len())
}
