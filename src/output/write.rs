//! In-place writes that never leave a partial file.
//!
//! The new text goes to a temporary file in the same directory, is synced, gets the old
//! file's permissions, and is renamed over the target. Symlinks are followed to their target,
//! which is what gets replaced; special files are refused. A file that changed on disk since
//! it was read is not overwritten.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `text` to `path` atomically, provided the file still holds `expected`.
pub fn write_atomic(path: &Path, expected: &[u8], text: &str) -> Result<(), String> {
    let target: PathBuf = fs::canonicalize(path).map_err(|e| format!("cannot resolve: {e}"))?;
    let meta = fs::metadata(&target).map_err(|e| format!("cannot stat: {e}"))?;
    if !meta.is_file() {
        return Err("not a regular file; refusing to write".into());
    }
    let dir = target
        .parent()
        .ok_or_else(|| "has no parent directory".to_string())?;
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.meshjob-{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| format!("cannot create a temporary file in {}: {e}", dir.display()))?;
        f.write_all(text.as_bytes())
            .and_then(|()| f.sync_all())
            .map_err(|e| format!("cannot write the temporary file: {e}"))?;
        fs::set_permissions(&tmp, meta.permissions())
            .map_err(|e| format!("cannot copy permissions: {e}"))?;
        // Last check before replacing: the file must still be what we read.
        let now = fs::read(&target).map_err(|e| format!("cannot re-read: {e}"))?;
        if now != expected {
            return Err("changed on disk while meshjob was working; not overwritten".into());
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
