//! In-place writes that never leave a partial file.
//!
//! The new text goes to a temporary file in the same directory (created with `O_EXCL` under a
//! unique name), is synced, gets the old file's owner (where allowed) and its whole mode,
//! setuid and setgid bits included, and is renamed over the target. Symlinks are followed to their target, which is what gets
//! replaced; the link stays a link. Special files and read-only files or directories are
//! refused. A file that changed on disk since it was read is not overwritten. On any failure
//! the temporary file is removed and the target is untouched.

use std::fs;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// Writes `text` to `path` atomically, provided the file still holds `expected`.
pub fn write_atomic(path: &Path, expected: &[u8], text: &str) -> Result<(), String> {
    let target: PathBuf = fs::canonicalize(path).map_err(|e| format!("cannot resolve: {e}"))?;
    let meta = fs::metadata(&target).map_err(|e| format!("cannot stat: {e}"))?;
    if !meta.is_file() {
        return Err("not a regular file; refusing to write".into());
    }
    // Mode bits are honoured even for root, who could write anyway: a read-only manifest
    // is a choice someone made.
    if meta.permissions().mode() & 0o222 == 0 {
        return Err(format!(
            "the file is read-only (mode {:o}); not written. Make it writable (chmod u+w) to \
             let fix change it, or use `meshjob diff`",
            meta.permissions().mode() & 0o7777
        ));
    }
    let dir = target
        .parent()
        .ok_or_else(|| "has no parent directory".to_string())?;
    let dir_meta = fs::metadata(dir).map_err(|e| format!("cannot stat the directory: {e}"))?;
    if dir_meta.permissions().mode() & 0o222 == 0 {
        return Err(format!(
            "its directory {} is read-only; a safe in-place write needs a temporary file \
             beside the file. Make the directory writable, or use `meshjob diff`",
            dir.display()
        ));
    }
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (tmp, mut f) = create_temp(dir, &name)?;
    let result = (|| {
        debug_hook("temp-created", &tmp, text);
        f.write_all(text.as_bytes())
            .and_then(|()| f.sync_all())
            .map_err(|e| format!("cannot write the temporary file: {e}"))?;
        keep_owner_and_mode(&tmp, &meta)?;
        debug_hook("before-check", &tmp, text);
        // Last check before replacing: the file must still be what we read.
        let now = fs::read(&target).map_err(|e| format!("cannot re-read: {e}"))?;
        if now != expected {
            return Err(
                "changed on disk while meshjob was working; not overwritten. Run fix again".into(),
            );
        }
        fs::rename(&tmp, &target).map_err(|e| format!("cannot replace the file: {e}"))?;
        if let Ok(d) = fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Gives the temporary file the target's owner (where allowed) and its whole mode, the
/// setuid, setgid and sticky bits included, or refuses.
///
/// The owner goes first: changing it clears the setuid and setgid bits (chown(2)). When the
/// owner cannot be kept (not root, someone else's file) the file becomes ours, as with any
/// editor that saves by rename; a setuid or setgid file is then refused, since the rewrite
/// would either drop the bit or make the program run as us. Any bit the kernel declines to
/// set is caught by reading the mode back.
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
        match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)
        {
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

/// Test hook, debug builds only: `MESHJOB_TEST_WRITE_HOOK=<stage>:<action>` where stage is
/// `temp-created` or `before-check`, and action is `pause-<ms>` (time for a test to kill the
/// process or change the file), `partial-pause-<ms>` (first write half of the text to the
/// temporary file, then pause) or `abort` (die on the spot, like a crash). Release builds
/// compile it away.
#[cfg(debug_assertions)]
fn debug_hook(stage: &str, tmp: &Path, text: &str) {
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
        let half = &text.as_bytes()[..text.len() / 2];
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

#[cfg(not(debug_assertions))]
fn debug_hook(_stage: &str, _tmp: &Path, _text: &str) {}
