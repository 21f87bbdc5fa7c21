//! The output file: reserved before anything runs, as a temporary file beside it (so a
//! missing or read-only folder is refused first, with nothing run), written whole, then
//! renamed into place. A run that fails leaves the place as it was.

use std::path::{Path, PathBuf};

/// The reserved place of an output file.
#[derive(Debug)]
pub struct Reserved {
    path: PathBuf,
    tmp: PathBuf,
    done: bool,
}

impl Reserved {
    /// Reserves `path`: the reason it cannot be written, if it cannot.
    pub fn new(path: &Path) -> Result<Reserved, String> {
        let refuse = |why: String| format!("--out {}: {why}", path.display());
        if path.is_dir() {
            return Err(refuse("is a folder".into()));
        }
        let name = path
            .file_name()
            .ok_or_else(|| refuse("names no file".into()))?;
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let tmp = dir.join(format!(
            ".{}.ntx-{}.tmp",
            name.to_string_lossy(),
            std::process::id()
        ));
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(|e| refuse(format!("cannot write there: {e}")))?;
        Ok(Reserved {
            path: path.to_path_buf(),
            tmp,
            done: false,
        })
    }

    /// Writes `bytes` and moves them into place.
    pub fn commit(mut self, bytes: &[u8]) -> Result<(), String> {
        let fail = |e: std::io::Error| format!("cannot write {}: {e}", self.path.display());
        std::fs::write(&self.tmp, bytes).map_err(fail)?;
        std::fs::rename(&self.tmp, &self.path).map_err(fail)?;
        self.done = true;
        Ok(())
    }
}

impl Drop for Reserved {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}
