//! The shell blocks of README.md, docs/quickstart.md and docs/customop-python.md, run as a
//! newcomer runs them: each page's blocks in order in one bash (`set -euo pipefail`), from
//! a fresh temporary folder that holds the checkout's top-level entries (so the pages'
//! relative paths work and what the blocks write lands there), with an environment of PATH
//! and HOME alone, and only the prefix substituted (`PREFIX=/usr/local` becomes a scratch
//! folder). A block that cannot
//! run here says so in the page, with the reason, in a `<!-- docs-run: skip, ... -->` line
//! right above it.

use std::path::Path;
use std::process::Command;

use nt_support::qemu::root;
use nt_support::tools::scratch;

const SKIP: &str = "<!-- docs-run: skip, ";

/// The `sh` blocks of `page`: (the block, whether it runs).
fn blocks(page: &str) -> Vec<(String, bool)> {
    let text = std::fs::read_to_string(root().join(page)).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut found = Vec::new();
    let mut k = 0;
    while k < lines.len() {
        if lines[k].trim() != "```sh" {
            k += 1;
            continue;
        }
        let above = lines[..k].iter().rev().find(|l| !l.trim().is_empty());
        let skip = above.and_then(|l| l.trim().strip_prefix(SKIP));
        if let Some(reason) = skip {
            let reason = reason.trim_end_matches("-->").trim();
            assert!(
                !reason.is_empty(),
                "{page}: a skipped block gives no reason"
            );
        }
        let end = k
            + 1
            + lines[k + 1..]
                .iter()
                .position(|l| l.trim() == "```")
                .unwrap();
        found.push((lines[k + 1..end].join("\n"), skip.is_none()));
        k = end + 1;
    }
    found
}

/// Links `from`'s entries into `to`, but for `.git`, and but for `sdk/python`, which is
/// copied: `pip install ./sdk/python` builds inside the folder it installs.
fn link_entries(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let n = e.file_name();
        let path = e.path();
        if n == ".git" {
            continue;
        } else if path == root().join("sdk") {
            std::fs::create_dir_all(to.join(&n)).unwrap();
            link_entries(&path, &to.join(&n));
        } else if path == root().join("sdk/python") {
            copy_tree(&path, &to.join(&n));
        } else {
            std::os::unix::fs::symlink(&path, to.join(&n)).unwrap();
        }
    }
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let (path, n) = (e.path(), e.file_name());
        if path.is_dir() {
            copy_tree(&path, &to.join(&n));
        } else {
            std::fs::copy(&path, to.join(&n)).unwrap();
        }
    }
}

/// One page at a time: each runs `make install`, over the same products.
static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs `page`'s blocks in a fresh folder: what they printed.
fn run_page(page: &str, name: &str) -> String {
    let _one = ONE.lock().unwrap_or_else(|e| e.into_inner());
    let dir = scratch(name);
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    link_entries(&root(), &work);
    let prefix = dir.join("prefix");
    let mut script = String::from("set -euo pipefail\n");
    let mut substituted = 0;
    for (k, (block, runs)) in blocks(page).into_iter().enumerate() {
        if !runs {
            continue;
        }
        substituted += block.matches("PREFIX=/usr/local").count();
        let block = block.replace("PREFIX=/usr/local", &format!("PREFIX={}", prefix.display()));
        script += &format!("echo '== {page} block {k}' >&2\n{block}\n");
    }
    assert_eq!(substituted, 1, "{page}: one block sets the prefix");
    let out = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(&work)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap())
        .env(
            "HOME",
            std::env::var("HOME").unwrap_or_else(|_| "/root".into()),
        )
        .env("LANG", "C.UTF-8")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{page}'s blocks failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(Path::new(&prefix.join("bin/ntx")).exists());
    stdout
}

/// The `text` block after `marker` in `page`.
fn text_block(page: &str, marker: &str) -> String {
    let text = std::fs::read_to_string(root().join(page)).unwrap();
    let after = &text[text.find(marker).unwrap()..];
    let start = after.find("```text\n").unwrap() + 8;
    let end = start + after[start..].find("```").unwrap();
    after[start..end].to_string()
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn the_readmes_shell_blocks_run_as_written() {
    let out = run_page("README.md", "docs_run_readme");
    for want in [
        text_block("README.md", "<!-- tensor_kernel output -->"),
        text_block("README.md", "<!-- customop stats -->"),
        "[[0. 2. 0.]\n [4. 0. 6.]]\n".to_string(),
        "COMPATIBLE: 0 break(s)".to_string(),
    ] {
        assert!(
            out.contains(&want),
            "README.md's run lacks {want:?}:\n{out}"
        );
    }
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn the_quickstarts_shell_blocks_run_as_written() {
    let out = run_page("docs/quickstart.md", "docs_run_quickstart");
    assert!(
        out.contains("0x0000004001000042: no window holds it; a refill takes slot 0"),
        "{out}"
    );
}

#[test]
#[ignore = "needs the tools and products the Makefile names: run `make test`"]
fn the_python_pages_shell_blocks_run_as_written() {
    let out = run_page("docs/customop-python.md", "docs_run_python");
    assert!(out.contains("1 passed"), "{out}");
}

/// The pages have blocks to run, and a block without a reason to skip runs.
#[test]
fn every_shell_block_runs_or_says_why_not() {
    for page in ["README.md", "docs/quickstart.md", "docs/customop-python.md"] {
        let b = blocks(page);
        assert!(b.iter().any(|(_, runs)| *runs), "{page}: {b:?}");
    }
}
