//! In-place writes that never leave a partial file.
//!
//! The new text goes to a temporary file in the same directory (created with `O_EXCL` under a
//! unique name), is synced, gets the old file's owner (where allowed) and its whole mode,
//! setuid and setgid bits included, and is renamed over the target. Symlinks are followed to
//! their target, which is what gets replaced; the link stays a link. On Windows there are no
//! mode bits or owners to copy: a file with the read-only attribute is refused, and a file
//! that another program holds open without sharing its deletion cannot be replaced, which is
//! reported as an error for that file (the `windows` module below). Special files and
//! read-only files or directories are refused. A file that changed on disk since it was read
//! is not overwritten: its length and a hash of its bytes, taken as it was read ([`Seen`]),
//! must match the file just before the rename. The text may come in pieces
//! ([`Replacement`]), so a stream is never held whole. On any failure the temporary file is
//! removed and the target is untouched.

use std::fs;
use std::hash::{DefaultHasher, Hasher};
use std::io::{Read, Write};
#[cfg(unix)]
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// What a file held when it was read: its length and a hash of its bytes, taken as they are
/// read, so that a stream need not be kept to check that the file did not change meanwhile.
#[derive(Clone, Debug, Default)]
pub(crate) struct Seen {
    len: u64,
    hash: DefaultHasher,
}

impl PartialEq for Seen {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.hash.finish() == other.hash.finish()
    }
}

impl Seen {
    /// The record of `bytes`.
    pub(crate) fn of(bytes: &[u8]) -> Self {
        let mut s = Seen::default();
        s.update(bytes);
        s
    }

    /// Takes in the next bytes read.
    pub(crate) fn update(&mut self, bytes: &[u8]) {
        self.len += bytes.len() as u64;
        // `Hasher::write` hashes a byte stream: chunk boundaries do not matter.
        self.hash.write(bytes);
    }

    /// The record of what `path` holds now.
    fn now(path: &Path) -> std::io::Result<Self> {
        let mut f = fs::File::open(path)?;
        let mut s = Seen::default();
        let mut buf = vec![0; 64 << 10];
        loop {
            match f.read(&mut buf) {
                Ok(0) => return Ok(s),
                Ok(n) => s.update(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// Writes `text` to `path` atomically, provided the file still holds `expected`.
pub fn write_atomic(path: &Path, expected: &[u8], text: &str) -> Result<(), String> {
    let mut r = Replacement::begin(path)?;
    r.write(text.as_bytes())?;
    r.commit(&Seen::of(expected))
}

/// A file's replacement in the making: a temporary file beside it that takes the new text as
/// it comes, and replaces the file only on [`Replacement::commit`]. Dropped uncommitted, it
/// is removed and the file is untouched.
pub(crate) struct Replacement {
    target: PathBuf,
    dir: PathBuf,
    tmp: PathBuf,
    meta: fs::Metadata,
    file: Option<std::io::BufWriter<fs::File>>,
    written: bool,
}

impl Replacement {
    /// Checks that `path` can be replaced safely and creates the temporary file.
    pub(crate) fn begin(path: &Path) -> Result<Self, String> {
        let target: PathBuf = fs::canonicalize(path).map_err(|e| format!("cannot resolve: {e}"))?;
        let meta = fs::metadata(&target).map_err(|e| format!("cannot stat: {e}"))?;
        if !meta.is_file() {
            return Err("not a regular file; refusing to write".into());
        }
        let dir = target
            .parent()
            .ok_or_else(|| "has no parent directory".to_string())?
            .to_path_buf();
        refuse_read_only(&meta, &dir)?;
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let (tmp, f) = create_temp(&dir, &name)?;
        Ok(Replacement {
            target,
            dir,
            tmp,
            meta,
            file: Some(std::io::BufWriter::with_capacity(256 << 10, f)),
            written: false,
        })
    }

    /// Appends the next bytes of the new text.
    pub(crate) fn write(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.first_write(bytes);
        let f = self
            .file
            .as_mut()
            .ok_or_else(|| "the temporary file is closed".to_string())?;
        f.write_all(bytes)
            .map_err(|e| format!("cannot write the temporary file: {e}"))
    }

    /// Appends the first `len` bytes of the file being replaced, as they are now (the
    /// unchanged start of a stream; [`Replacement::commit`] checks that the file did not
    /// change).
    pub(crate) fn copy_prefix(&mut self, len: u64) -> Result<(), String> {
        self.first_write(b"");
        let mut src = fs::File::open(&self.target)
            .map_err(|e| format!("cannot re-read: {e}"))?
            .take(len);
        let f = self
            .file
            .as_mut()
            .ok_or_else(|| "the temporary file is closed".to_string())?;
        let n = std::io::copy(&mut src, f)
            .map_err(|e| format!("cannot write the temporary file: {e}"))?;
        if n != len {
            return Err(
                "changed on disk while meshjob was working; not overwritten. Run fix again".into(),
            );
        }
        Ok(())
    }

    /// The test hook's moment: the temporary file exists, the text is about to go in.
    fn first_write(&mut self, bytes: &[u8]) {
        if !std::mem::replace(&mut self.written, true) {
            debug_hook("temp-created", &self.tmp, bytes);
        }
    }

    /// Replaces the file with the text written, provided it still holds what was `seen`.
    pub(crate) fn commit(mut self, seen: &Seen) -> Result<(), String> {
        let f = self
            .file
            .take()
            .ok_or_else(|| "the temporary file is closed".to_string())?;
        let f = f
            .into_inner()
            .map_err(|e| format!("cannot write the temporary file: {}", e.error()))?;
        f.sync_all()
            .map_err(|e| format!("cannot write the temporary file: {e}"))?;
        drop(f);
        keep_owner_and_mode(&self.tmp, &self.meta)?;
        debug_hook("before-check", &self.tmp, b"");
        // Last check before replacing: the file must still be what we read.
        let now = Seen::now(&self.target).map_err(|e| format!("cannot re-read: {e}"))?;
        if now != *seen {
            return Err(
                "changed on disk while meshjob was working; not overwritten. Run fix again".into(),
            );
        }
        fs::rename(&self.tmp, &self.target).map_err(|e| replace_error(&e))?;
        // Renamed: nothing left to remove.
        self.tmp = PathBuf::new();
        if let Ok(d) = fs::File::open(&self.dir) {
            let _ = d.sync_all();
        }
        Ok(())
    }
}

impl Drop for Replacement {
    fn drop(&mut self) {
        self.file = None;
        if !self.tmp.as_os_str().is_empty() {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

/// Refuses a read-only file, or a file in a read-only directory.
#[cfg(unix)]
fn refuse_read_only(meta: &fs::Metadata, dir: &Path) -> Result<(), String> {
    // Mode bits are honoured even for root, who could write anyway: a read-only manifest
    // is a choice someone made.
    if meta.permissions().mode() & 0o222 == 0 {
        return Err(format!(
            "the file is read-only (mode {:o}); not written. Make it writable (chmod u+w) \
             to let fix change it, or use `meshjob diff`",
            meta.permissions().mode() & 0o7777
        ));
    }
    let dir_meta = fs::metadata(dir).map_err(|e| format!("cannot stat the directory: {e}"))?;
    if dir_meta.permissions().mode() & 0o222 == 0 {
        return Err(format!(
            "its directory {} is read-only; a safe in-place write needs a temporary file \
             beside the file. Make the directory writable, or use `meshjob diff`",
            dir.display()
        ));
    }
    Ok(())
}

/// Gives the temporary file the target's owner (where allowed) and its whole mode, the
/// setuid, setgid and sticky bits included, or refuses.
///
/// The owner goes first: changing it clears the setuid and setgid bits (chown(2)). When the
/// owner cannot be kept (not root, someone else's file) the file becomes ours, as with any
/// editor that saves by rename; a setuid or setgid file is then refused, since the rewrite
/// would either drop the bit or make the program run as us. Any bit the kernel declines to
/// set is caught by reading the mode back.
#[cfg(unix)]
fn keep_owner_and_mode(tmp: &Path, meta: &fs::Metadata) -> Result<(), String> {
    let mode = meta.permissions().mode() & 0o7777;
    let owner_kept = std::os::unix::fs::chown(tmp, Some(meta.uid()), Some(meta.gid())).is_ok();
    if mode & 0o6000 != 0 && !owner_kept {
        return Err(format!(
            "the file is {} (mode {mode:o}) and owned by uid {} gid {}, which meshjob cannot \
             give the rewritten file; not written, so the bit is neither dropped nor moved to \
             another owner. Run fix as the file's owner, or use `meshjob diff`",
            special_bits(mode),
            meta.uid(),
            meta.gid()
        ));
    }
    fs::set_permissions(tmp, fs::Permissions::from_mode(mode))
        .map_err(|e| format!("cannot copy permissions: {e}"))?;
    let got = fs::metadata(tmp)
        .map_err(|e| format!("cannot stat the temporary file: {e}"))?
        .permissions()
        .mode()
        & 0o7777;
    if got != mode {
        return Err(format!(
            "cannot keep the file's mode {mode:o} (the rewritten file would get {got:o}); \
             not written. Run fix as the file's owner, or use `meshjob diff`"
        ));
    }
    Ok(())
}

/// "setuid", "setgid" or "setuid and setgid" for a mode with either bit.
#[cfg(unix)]
fn special_bits(mode: u32) -> &'static str {
    match (mode & 0o4000 != 0, mode & 0o2000 != 0) {
        (true, true) => "setuid and setgid",
        (true, false) => "setuid",
        _ => "setgid",
    }
}

/// A new, hidden temporary file beside the target: `O_EXCL`, so a stale file of the same
/// name (left by a killed run) is never reused or followed.
fn create_temp(dir: &Path, name: &str) -> Result<(PathBuf, fs::File), String> {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let mut last = None;
    for _ in 0..16 {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(
            ".{name}.meshjob-{}-{n}-{nanos:08x}.tmp",
            std::process::id()
        ));
        let mut options = fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        options.mode(0o600);
        match options.open(&tmp) {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => {
                return Err(format!(
                    "cannot create a temporary file in {}: {e}",
                    dir.display()
                ));
            }
        }
    }
    Err(format!(
        "cannot create a temporary file in {}: {}",
        dir.display(),
        last.map_or_else(String::new, |e| e.to_string())
    ))
}

/// Why the rename over the target failed. On Unix a rename does not care who has the file
/// open; on Windows it does (the `windows` module below).
#[cfg(unix)]
fn replace_error(e: &std::io::Error) -> String {
    format!("cannot replace the file: {e}")
}

/// Test hook, debug builds only: `MESHJOB_TEST_WRITE_HOOK=<stage>:<action>` where stage is
/// `temp-created` or `before-check`, and action is `pause-<ms>` (time for a test to kill the
/// process or change the file), `partial-pause-<ms>` (first write half of the text to the
/// temporary file, then pause) or `abort` (die on the spot, like a crash). Release builds
/// compile it away.
#[cfg(debug_assertions)]
fn debug_hook(stage: &str, tmp: &Path, text: &[u8]) {
    let Ok(spec) = std::env::var("MESHJOB_TEST_WRITE_HOOK") else {
        return;
    };
    let Some(action) = spec.strip_prefix(stage).and_then(|r| r.strip_prefix(':')) else {
        return;
    };
    let pause = |ms: &str| {
        let ms = ms.parse().unwrap_or(0);
        std::thread::sleep(std::time::Duration::from_millis(ms));
    };
    if let Some(ms) = action.strip_prefix("partial-pause-") {
        let half = &text[..text.len() / 2];
        if let Ok(mut f) = fs::OpenOptions::new().write(true).open(tmp) {
            let _ = f.write_all(half).and_then(|()| f.sync_all());
        }
        pause(ms);
    } else if let Some(ms) = action.strip_prefix("pause-") {
        pause(ms);
    } else if action == "abort" {
        std::process::abort();
    }
}

#[cfg(windows)]
use windows::{keep_owner_and_mode, refuse_read_only, replace_error};

/// What replacing a file in place means on Windows.
///
/// - There are no mode bits, owners or setuid bits to keep: the rewritten file is a new file
///   that gets the directory's inherited permissions, as with any editor that saves by
///   rename. The read-only attribute is the one permission a file carries
///   (`Permissions::readonly`); a file that has it is refused, so it stays read-only and
///   unchanged. The read-only attribute of a directory does not stop files being created
///   in it (Windows ignores it for directories), so it is not looked at.
/// - `fs::rename` replaces the target with `MoveFileExW(MOVEFILE_REPLACE_EXISTING)` (or
///   `SetFileInformationByHandle(FileRenameInfoEx)`), which needs the target opened for
///   deletion. A program that holds the file open without `FILE_SHARE_DELETE` (an editor
///   that locks what it edits) makes it fail with a sharing violation (os error 32) or
///   access denied (os error 5): the file is reported as not written, with a hint, never
///   skipped silently. A lock that also refuses reading fails earlier, when the file is
///   read.
/// - Line endings are whatever the text has: meshjob writes the bytes it made, and
///   std does no text-mode translation on Windows.
#[cfg(windows)]
mod windows {
    use std::fs;
    use std::path::Path;

    /// Refuses a file with the read-only attribute.
    pub(super) fn refuse_read_only(meta: &fs::Metadata, _dir: &Path) -> Result<(), String> {
        if meta.permissions().readonly() {
            return Err(
                "the file is read-only (its read-only attribute is set); not written. \
                        Clear it (attrib -r, or the file's Properties) to let fix change it, \
                        or use `meshjob diff`"
                    .into(),
            );
        }
        Ok(())
    }

    /// Nothing to copy: see the module's documentation.
    pub(super) fn keep_owner_and_mode(_tmp: &Path, _meta: &fs::Metadata) -> Result<(), String> {
        Ok(())
    }

    /// Why the rename over the target failed, naming the usual cause on Windows.
    pub(super) fn replace_error(e: &std::io::Error) -> String {
        // ERROR_ACCESS_DENIED (5) and ERROR_SHARING_VIOLATION (32): the file is open in
        // another program that does not share its deletion.
        match e.raw_os_error() {
            Some(5 | 32) => format!(
                "cannot replace the file: {e}; not written. Another program may have it open \
                 (an editor, a viewer, a virus scanner): close it and run fix again"
            ),
            _ => format!("cannot replace the file: {e}"),
        }
    }
}

#[cfg(not(debug_assertions))]
fn debug_hook(_stage: &str, _tmp: &Path, _text: &[u8]) {}

impl crate::stream::Output for Replacement {
    type Error = String;
    fn put(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.write(bytes)
    }
}
