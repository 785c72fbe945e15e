//! Inputs: files, directories (walked for `*.yaml` / `*.yml`) and stdin.

use crate::paths::Spelling;
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The largest input read whole: a KRM ResourceList, which is one document by nature. Streams
/// (files, stdin) are not read whole and have no cap; their documents have the same one
/// ([`MAX_DOCUMENT_BYTES`]).
pub(crate) const MAX_INPUT_BYTES: u64 = MAX_DOCUMENT_BYTES as u64;
/// The largest document meshjob edits: the guard against an unbounded piece.
pub const MAX_DOCUMENT_BYTES: usize = 32 << 20;

/// Where a text comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    Stdin,
    File(PathBuf),
}

/// One input of a run, with the one spelling of its name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Input {
    /// Where to read it: stdin, or a file by its absolute path.
    pub origin: Origin,
    /// The name in findings and diff headers ([`Spelling`]).
    pub name: String,
    /// The absolute directory its config file is looked up from.
    pub dir: PathBuf,
}

/// What the PATH arguments of a run stand for.
#[derive(Debug, Default)]
pub struct Expansion {
    /// Every input once, in argument order, directories walked in name order.
    pub inputs: Vec<Input>,
    /// Paths that cannot be read: (name, message).
    pub errors: Vec<(String, String)>,
    /// Helm chart `templates/` directories left out of a walk.
    pub chart_templates: Vec<String>,
    /// Files and directories given by name that an exclude pattern leaves out:
    /// (name, pattern).
    pub excluded: Vec<(String, String)>,
    /// Directories given by name with no YAML file to check in them.
    pub empty: Vec<Empty>,
}

/// A directory given by name with no YAML file to check in it, and why.
#[derive(Debug, Default)]
pub struct Empty {
    pub name: String,
    /// What the exclude patterns left out of it.
    pub left_out: Vec<LeftOut>,
    /// Its YAML files that are inputs already under another name (a symlink to a file
    /// walked before): (the name here, the input's name).
    pub already: Vec<(String, String)>,
}

/// What one exclude pattern left out of a directory walk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeftOut {
    pub pattern: String,
    /// YAML files it excluded.
    pub files: usize,
    /// Directories it excluded (their files were not looked at).
    pub dirs: usize,
}

/// Whether an absolute path (a directory when the flag says so) is excluded: the pattern
/// that excludes it.
pub(crate) type ExcludeCheck<'a> = dyn FnMut(&Path, bool) -> Option<String> + 'a;

/// Expands PATH arguments: `-` is stdin (named `stdin_name`, else `-`), directories are
/// walked (sorted; hidden entries, excluded ones and Helm chart templates skipped), files are
/// taken as they are unless excluded. Errors name the path.
///
/// Each directory and file is visited once, known by its device and inode: symlinks that
/// loop (`ln -s . again`) are not followed round, and a file reached twice (`dir` and
/// `dir/x.yaml`, `./x` and `x`, a symlink and its target) is an input once, under the first
/// path that reached it, so it is never edited or reported twice.
pub fn expand<A: AsRef<std::ffi::OsStr>>(
    args: &[A],
    spelling: &Spelling,
    stdin_name: Option<&str>,
    excluded: &mut ExcludeCheck<'_>,
) -> Expansion {
    let mut w = Walk {
        spelling,
        excluded,
        out: Expansion::default(),
        seen: Visited::default(),
        stdin: false,
        left_out: Vec::new(),
        already: Vec::new(),
    };
    for a in args {
        let a = a.as_ref();
        if a == "-" {
            if !std::mem::replace(&mut w.stdin, true) {
                let (name, dir) = match stdin_name {
                    Some(n) => {
                        let abs = spelling.absolute(Path::new(n));
                        let dir = abs.parent().map_or_else(|| abs.clone(), Path::to_path_buf);
                        (spelling.display(&abs), dir)
                    }
                    None => (
                        "-".to_string(),
                        spelling.cwd().map(Path::to_path_buf).unwrap_or_default(),
                    ),
                };
                w.out.inputs.push(Input {
                    origin: Origin::Stdin,
                    name,
                    dir,
                });
            }
            continue;
        }
        let abs = spelling.absolute(Path::new(a));
        let name = spelling.display(&abs);
        match std::fs::metadata(&abs) {
            Ok(m) if m.is_dir() => {
                if let Some(pattern) = (w.excluded)(&abs, true) {
                    w.out.excluded.push((name, pattern));
                    continue;
                }
                let before = w.out.inputs.len();
                w.left_out.clear();
                w.already.clear();
                if w.seen.first_visit(&abs, &m) {
                    w.dir(&abs);
                }
                if w.out.inputs.len() == before && !w.covered(&abs) {
                    w.out.empty.push(Empty {
                        name,
                        left_out: std::mem::take(&mut w.left_out),
                        already: std::mem::take(&mut w.already),
                    });
                }
            }
            Ok(m) => match (w.excluded)(&abs, false) {
                Some(pattern) => w.out.excluded.push((name, pattern)),
                None => w.file(abs, &m),
            },
            Err(e) => w.out.errors.push((name, cannot_read(&e))),
        }
    }
    w.out
}

/// The state of one expansion.
struct Walk<'s, 'e, 'a> {
    spelling: &'s Spelling,
    excluded: &'e mut ExcludeCheck<'a>,
    out: Expansion,
    /// Directories and files reached, so that each is an input once.
    seen: Visited,
    stdin: bool,
    /// What the exclude patterns left out of the directory being walked.
    left_out: Vec<LeftOut>,
    /// The files of the directory being walked that were inputs already (see [`Empty`]).
    already: Vec<(String, String)>,
}

impl Walk<'_, '_, '_> {
    /// Whether `p` is excluded; the pattern is counted for the directory being walked.
    fn excluded(&mut self, p: &Path, is_dir: bool) -> bool {
        let Some(pattern) = (self.excluded)(p, is_dir) else {
            return false;
        };
        let i = match self.left_out.iter().position(|l| l.pattern == pattern) {
            Some(i) => i,
            None => {
                self.left_out.push(LeftOut {
                    pattern,
                    files: 0,
                    dirs: 0,
                });
                self.left_out.len() - 1
            }
        };
        let l = &mut self.left_out[i];
        if is_dir {
            l.dirs += 1;
        } else {
            l.files += 1;
        }
        true
    }

    fn file(&mut self, abs: PathBuf, m: &std::fs::Metadata) {
        if let Err(first) = self.seen.visit(&abs, m, Some(self.out.inputs.len())) {
            if let Some(i) = first.and_then(|i| self.out.inputs.get(i)) {
                let here = self.spelling.display(&abs);
                self.already.push((here, i.name.clone()));
            }
            return;
        }
        let dir = abs.parent().map_or_else(|| abs.clone(), Path::to_path_buf);
        self.out.inputs.push(Input {
            name: self.spelling.display(&abs),
            origin: Origin::File(abs),
            dir,
        });
    }

    /// Whether a directory's files are already inputs (it was given twice, or lies inside
    /// a directory already walked): then it is not "empty".
    fn covered(&self, abs: &Path) -> bool {
        self.out.inputs.iter().any(|i| match &i.origin {
            Origin::File(p) => p.starts_with(abs),
            Origin::Stdin => false,
        })
    }

    fn dir(&mut self, dir: &Path) {
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) => {
                self.out.errors.push((
                    self.spelling.display(dir),
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
                Ok(m) if m.is_dir() => {
                    if is_chart_templates(&p) {
                        self.out.chart_templates.push(self.spelling.display(&p));
                    } else if !self.excluded(&p, true)
                        // A directory reached twice (a symlink loop) is walked once.
                        && self.seen.first_visit(&p, &m)
                    {
                        self.dir(&p);
                    }
                }
                Ok(m) if m.is_file() && is_yaml(&p) && !self.excluded(&p, false) => {
                    self.file(p, &m);
                }
                _ => {}
            }
        }
    }
}

/// The YAML files under `root` in the order a walk of `root` as a PATH argument takes them
/// ([`expand`]: sorted, hidden entries, Helm chart templates and excluded paths left out),
/// for reading only: a walk that must be quick over a large tree (a project's other files).
/// A file's type comes from its directory entry, so that only symlinks cost a `stat`; a file
/// reached twice (by a symlink) is listed twice, which a reader for context may ignore.
/// What cannot be read is left out.
pub(crate) fn yaml_files(root: &Path, excluded: &mut ExcludeCheck<'_>) -> Vec<PathBuf> {
    fn dir(d: &Path, excluded: &mut ExcludeCheck<'_>, seen: &mut Visited, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(d) else {
            return;
        };
        let mut entries: Vec<(PathBuf, Option<std::fs::FileType>)> = entries
            .filter_map(|e| e.ok().map(|e| (e.path(), e.file_type().ok())))
            .collect();
        // The order of `Walk::dir`'s sort: the entries share their directory.
        entries.sort_by(|a, b| a.0.file_name().cmp(&b.0.file_name()));
        for (p, t) in entries {
            let hidden = (p.file_name())
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with('.'));
            if hidden {
                continue;
            }
            // A symlink, or an entry whose type the directory does not give: its target's.
            let (is_dir, is_file) = match t {
                Some(t) if t.is_dir() => (true, false),
                Some(t) if t.is_file() => (false, true),
                _ => match std::fs::metadata(&p) {
                    Ok(m) => (m.is_dir(), m.is_file()),
                    Err(_) => continue,
                },
            };
            if is_dir {
                if is_chart_templates(&p) || excluded(&p, true).is_some() {
                    continue;
                }
                if std::fs::metadata(&p).is_ok_and(|m| seen.first_visit(&p, &m)) {
                    dir(&p, excluded, seen, out);
                }
            } else if is_file && is_yaml(&p) && excluded(&p, false).is_none() {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    let mut seen = Visited::default();
    if std::fs::metadata(root).is_ok_and(|m| m.is_dir() && seen.first_visit(root, &m)) {
        dir(root, excluded, &mut seen, &mut out);
    }
    out
}

/// Whether `dir` is the `templates/` directory of a Helm chart: Go templates that are not
/// YAML until `helm template` renders them.
fn is_chart_templates(dir: &Path) -> bool {
    dir.file_name().is_some_and(|n| n == "templates")
        && dir
            .parent()
            .is_some_and(|chart| chart.join("Chart.yaml").is_file())
}

/// The directories and files a walk has reached, by (device, inode) on Unix and by (volume
/// serial number, file index) on Windows.
#[derive(Default)]
struct Visited(HashMap<(u64, u64), Option<usize>>);

impl Visited {
    /// Records `path` (whose metadata is `m`); `false` when it was reached before. A file
    /// whose identity cannot be read is taken as new: reading it then reports what is wrong.
    fn first_visit(&mut self, path: &Path, m: &std::fs::Metadata) -> bool {
        self.visit(path, m, None).is_ok()
    }

    /// [`Visited::first_visit`] for a file that is the input at `input`: when it was reached
    /// before, the input it was then (`None` for a directory).
    fn visit(
        &mut self,
        path: &Path,
        m: &std::fs::Metadata,
        input: Option<usize>,
    ) -> Result<(), Option<usize>> {
        let Some(id) = file_id(path, m) else {
            return Ok(());
        };
        match self.0.entry(id) {
            std::collections::hash_map::Entry::Occupied(e) => Err(*e.get()),
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(input);
                Ok(())
            }
        }
    }
}

/// What identifies a file on its machine whatever the path to it.
#[cfg(unix)]
fn file_id(_path: &Path, m: &std::fs::Metadata) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    Some((m.dev(), m.ino()))
}

/// What identifies a file on its machine whatever the path to it: the volume's serial number
/// and the file's index on it, from `GetFileInformationByHandle` (the pair that Microsoft's
/// documentation of `BY_HANDLE_FILE_INFORMATION` says identifies a file). std reads them too,
/// but its accessors (`MetadataExt::volume_serial_number`, `file_index`) are unstable
/// (rust-lang/rust#63010), so the handle is opened again through `winapi-util`, which
/// opens directories too (`FILE_FLAG_BACKUP_SEMANTICS`).
#[cfg(windows)]
fn file_id(path: &Path, _m: &std::fs::Metadata) -> Option<(u64, u64)> {
    let handle = winapi_util::Handle::from_path_any(path).ok()?;
    let info = winapi_util::file::information(&handle).ok()?;
    Some((info.volume_serial_number(), info.file_index()))
}

fn is_yaml(p: &Path) -> bool {
    matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml"))
}

/// Opens one input to be read as a stream, refusing special files (FIFOs, devices); stdin
/// may be anything.
pub(crate) fn open(origin: &Origin) -> Result<Box<dyn Read + Send>, String> {
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
pub(crate) fn file_len(origin: &Origin) -> Option<u64> {
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
pub(crate) fn read(origin: &Origin) -> Result<Vec<u8>, String> {
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
pub(crate) enum LoadError {
    /// It could not be read (missing, special file, too big, I/O error).
    Read(String),
    /// It was read but is not text meshjob edits.
    Decode { message: String },
}

/// Reads one input whole ([`read`]) and checks that it is text ([`decode`]).
pub(crate) fn load(origin: &Origin) -> Result<String, LoadError> {
    let bytes = read(origin).map_err(LoadError::Read)?;
    if let Err((_, message)) = decode(&bytes) {
        return Err(LoadError::Decode { message });
    }
    // `decode` has checked the bytes, so this cannot fail; it keeps them without a copy.
    String::from_utf8(bytes).map_err(|_| LoadError::Decode {
        message: "not UTF-8 text".into(),
    })
}

/// "cannot read: ..." with a hint for the usual causes.
pub(crate) fn cannot_read(e: &std::io::Error) -> String {
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
        return Err((0, wide.advice()));
    }
    decode_part(bytes, 1)
}

/// [`decode`] for the part of a stream that starts at byte `offset`: only the start of a
/// stream can say that it is UTF-16 or UTF-32.
pub(crate) fn decode_part(bytes: &[u8], offset: u64) -> Result<&str, (usize, String)> {
    if offset == 0 {
        return decode(bytes);
    }
    if let Some(i) = memchr::memchr(0, bytes) {
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
    /// What is wrong and how to convert the text: the message for a UTF-16 or UTF-32 input,
    /// whatever reads it.
    pub(crate) fn advice(self) -> String {
        format!(
            "looks like {self}, not UTF-8; YAML manifests must be UTF-8: convert it (for \
             example `iconv -f {} -t UTF-8 FILE > FILE.utf8`, then replace FILE with it)",
            self.iconv_name()
        )
    }

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
