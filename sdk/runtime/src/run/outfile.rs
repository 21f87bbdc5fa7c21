//! The output file: checked before anything runs (a missing or read-only folder is refused
//! first, with nothing run), written only once the run succeeded. A regular file (or a new
//! one) is written whole as a temporary file beside it, [`tmp_name`], then renamed into
//! place, so a run that fails leaves the place as it was; a link is followed to the file it
//! names. A character device or a FIFO (`/dev/null`, `/dev/stdout`, a pipe) is opened and
//! written, never replaced; anything else (a folder, a socket, a block device) is refused.

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

/// How the output reaches its place.
#[derive(Debug)]
enum Way {
    /// A temporary file beside it, renamed into place.
    Rename,
    /// Opened and written (a character device or a FIFO).
    Write,
}

/// The checked place of an output file.
#[derive(Debug)]
pub struct Reserved {
    path: PathBuf,
    way: Way,
}

use crate::base::limits::tmp_name;
use crate::run::error::{OutFile, RunError};

impl Reserved {
    /// Checks that `path` can be written: the reason it cannot, if it cannot.
    pub fn new(path: &Path) -> Result<Reserved, RunError> {
        let path_buf = || path.to_path_buf();
        let refuse = RunError::OutFile;
        let target = match std::fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(path).map_err(|e| {
                refuse(OutFile::Dangling {
                    path: path_buf(),
                    why: e.to_string(),
                })
            })?,
            _ => path.to_path_buf(),
        };
        if let Ok(m) = std::fs::metadata(&target) {
            let t = m.file_type();
            if t.is_char_device() || t.is_fifo() {
                return Ok(Reserved {
                    path: target,
                    way: Way::Write,
                });
            }
            if t.is_dir() {
                return Err(refuse(OutFile::Folder { path: path_buf() }));
            }
            if !t.is_file() {
                return Err(refuse(OutFile::NotAFile { path: path_buf() }));
            }
        }
        crate::base::limits::try_write_beside(&target)
            .ok_or_else(|| refuse(OutFile::NoName { path: path_buf() }))?
            .map_err(|e| {
                refuse(OutFile::Unwritable {
                    path: path_buf(),
                    why: e.to_string(),
                })
            })?;
        Ok(Reserved {
            path: target,
            way: Way::Rename,
        })
    }

    /// Writes `bytes` into place.
    pub fn commit(self, bytes: &[u8]) -> Result<(), RunError> {
        let fail = |e: std::io::Error| {
            RunError::OutFile(OutFile::Write {
                path: self.path.clone(),
                why: e.to_string(),
            })
        };
        match self.way {
            Way::Write => {
                use std::io::Write;
                let mut f = std::fs::OpenOptions::new()
                    .write(true)
                    .open(&self.path)
                    .map_err(fail)?;
                f.write_all(bytes).map_err(fail)
            }
            Way::Rename => {
                let tmp = tmp_name(&self.path, std::process::id()).expect("checked");
                let written =
                    std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, &self.path));
                if written.is_err() {
                    let _ = std::fs::remove_file(&tmp);
                }
                written.map_err(fail)
            }
        }
    }
}
