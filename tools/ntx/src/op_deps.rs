//! What a cache of an op's build must watch (`ntx op build --deps`, the Python package's
//! stamp): every file the compiler read, the compiler itself, and every folder it searched
//! for a header, so that a header that changes, appears or newly shadows another rebuilds
//! (docs/customop-python.md, "The build cache").
//!
//! The files come from the compiles' dependency files (`-MD`); a relative path there is
//! the compiler's working folder's, which is ntx's. The folders are the include search
//! list the compiler prints (`-v`, with the build's flags), the folder of every file read
//! (a quoted include searches its includer's folder first), each search folder's
//! immediate subfolders, and, for a header read from one search folder, the same relative
//! folder under every other (where an earlier one would have shadowed it; the nearest that
//! exists when it does not). A folder is watched by its listing.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::op::Build;
use crate::op_error::{FileAction, OpError};

/// The files a make-style dependency file (`-MD`'s) names after its target.
pub fn depfile_paths(text: &str) -> Vec<PathBuf> {
    let joined = text.replace("\\\n", " ");
    let Some((_, deps)) = joined.split_once(": ") else {
        return Vec::new();
    };
    let mut paths = Vec::new();
    let mut current = String::new();
    let mut chars = deps.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek().is_some_and(|n| *n == ' ' || *n == '#') => {
                current.extend(chars.next());
            }
            '$' if chars.peek() == Some(&'$') => {
                current.push('$');
                chars.next();
            }
            c if c.is_whitespace() => {
                if !current.is_empty() {
                    paths.push(PathBuf::from(std::mem::take(&mut current)));
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        paths.push(PathBuf::from(current));
    }
    paths
}

/// The include search list a compiler's `-v` prints (between "search starts here:" and
/// "End of search list."), in order.
pub fn search_list(stderr: &str) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    let mut inside = false;
    for line in stderr.lines() {
        if line.starts_with("#include ") && line.ends_with("search starts here:") {
            inside = true;
        } else if line.starts_with("End of search list.") {
            inside = false;
        } else if inside && line.starts_with(' ') {
            // gcc marks a framework folder so; none on Linux, kept for completeness.
            let dir = line.trim().trim_end_matches(" (framework directory)");
            dirs.push(PathBuf::from(dir));
        }
    }
    dirs
}

fn absolute(p: PathBuf, cwd: &Path) -> PathBuf {
    let p = if p.is_absolute() { p } else { cwd.join(p) };
    std::fs::canonicalize(&p).unwrap_or(p)
}

/// `cxx` resolved on `PATH` to the file it runs (links followed).
fn resolved(cxx: &str) -> Option<PathBuf> {
    let found = if cxx.contains('/') {
        Some(PathBuf::from(cxx))
    } else {
        std::env::split_paths(&std::env::var_os("PATH")?)
            .map(|d| d.join(cxx))
            .find(|p| p.is_file())
    }?;
    std::fs::canonicalize(found).ok()
}

/// The folders the compile of `b` searches for headers, as the compiler prints them.
fn searched(b: &Build, cxx: &str, cflags: &[String], cwd: &Path) -> Result<Vec<PathBuf>, OpError> {
    let mut cmd = Command::new(cxx);
    cmd.env("TMPDIR", &b.dir)
        .arg(format!("-std={}", b.std))
        .args(cflags)
        .args(&b.cflags)
        .args(["-E", "-v", "-x", "c++", "-o", "/dev/null", "/dev/null"]);
    let out = crate::guard::output(&mut cmd).map_err(OpError::start(cxx))?;
    let list = search_list(&String::from_utf8_lossy(&out.stderr));
    if !out.status.success() || list.is_empty() {
        return Err(OpError::NoSearchList {
            compiler: cxx.into(),
        });
    }
    Ok(list.into_iter().map(|d| absolute(d, cwd)).collect())
}

/// The nearest folder at or above `p` that exists, no higher than `top`.
fn nearest_existing(p: &Path, top: &Path) -> PathBuf {
    let mut at = p.to_path_buf();
    while !at.is_dir() && at != top {
        match at.parent() {
            Some(up) if up.starts_with(top) => at = up.to_path_buf(),
            _ => break,
        }
    }
    at
}

/// What the build of `b` depends on: every file it read and the compiler (absolute,
/// sorted), and every folder it searched (sorted), from the dependency files the compiles
/// wrote beside the objects and the compiler's search list.
pub fn dependencies(b: &Build) -> Result<(Vec<PathBuf>, Vec<PathBuf>), OpError> {
    let cwd = std::env::current_dir().map_err(OpError::NoWorkingFolder)?;
    let cxx = crate::op_sdk::host_compiler()?;
    let mut files = BTreeSet::new();
    for k in 0..b.compute.len() + b.shape.len() {
        let d = b.dir.join(format!("{k}.d"));
        let text = std::fs::read_to_string(&d).map_err(OpError::file(FileAction::Read, &d))?;
        files.extend(depfile_paths(&text).into_iter().map(|p| absolute(p, &cwd)));
    }
    files.extend(resolved(&cxx));
    let (cflags, _) = crate::op_sdk::sdk_flags()?;
    let search = searched(b, &cxx, &cflags, &cwd)?;
    // The folders the files were read from, each once.
    let parents: BTreeSet<PathBuf> = files
        .iter()
        .filter_map(|f| f.parent().map(Path::to_path_buf))
        .collect();
    let mut dirs = parents.clone();
    for s in &search {
        dirs.insert(s.clone());
        if let Ok(entries) = std::fs::read_dir(s) {
            dirs.extend(entries.flatten().map(|e| e.path()).filter(|p| p.is_dir()));
        }
        // A header read from under this search folder, looked for first under the others.
        for rel in parents.iter().filter_map(|p| p.strip_prefix(s).ok()) {
            for other in &search {
                dirs.insert(nearest_existing(&other.join(rel), other));
            }
        }
    }
    Ok((files.into_iter().collect(), dirs.into_iter().collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dependency_files_give_every_path() {
        let text = "/t/0.o: /s/relu.cpp /usr/include/a\\ b.h \\\n /i/torch.h\n  /x/$$y.h\n";
        let want = ["/s/relu.cpp", "/usr/include/a b.h", "/i/torch.h", "/x/$y.h"];
        assert_eq!(depfile_paths(text), want.map(PathBuf::from));
        assert!(depfile_paths("no colon here").is_empty());
    }

    #[test]
    fn the_search_list_is_read_from_both_compilers_words() {
        let gcc = "ignoring nonexistent directory \"/x\"\n#include \"...\" search starts here:\n inc\n\
                   #include <...> search starts here:\n /usr/include/c++/12\n /usr/include\nEnd of search list.\n";
        let want = ["inc", "/usr/include/c++/12", "/usr/include"];
        assert_eq!(search_list(gcc), want.map(PathBuf::from));
        assert!(search_list("no list").is_empty());
    }

    #[test]
    fn a_missing_folder_is_watched_at_its_nearest_existing_parent() {
        let top = std::env::temp_dir();
        let absent = top.join("ntx-op-deps-absent").join("sub");
        assert_eq!(nearest_existing(&absent, &top), top);
        assert_eq!(nearest_existing(&top, &top), top);
    }
}
