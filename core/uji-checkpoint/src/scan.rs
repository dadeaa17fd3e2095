//! Listing what a checkpoint covers: the workspace walked as ripgrep walks
//! it with hidden files included (`.gitignore`, `.ignore`,
//! `.git/info/exclude`, with or without a git repository), never entering
//! an ignored directory or the project's `.git`.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use ignore::{WalkBuilder, WalkState};
use serde::{Deserialize, Serialize};

/// A file or link the walk found, with what tells whether it changed.
#[derive(Debug, Clone)]
pub struct Found {
    /// Relative to the root, `/`-separated.
    pub path: String,
    pub link: bool,
    pub size: u64,
    /// Permission bits (`chmod` changes them without touching the
    /// modification time).
    pub mode: u32,
    pub mtime_s: i64,
    pub mtime_ns: u32,
    /// The status change time: set by every write, `chmod`, rename and
    /// link, and by nothing a program can set back (`touch -d` and
    /// `cp -p` can set the modification time back, not this).
    pub ctime_s: i64,
    pub ctime_ns: u32,
    pub ino: u64,
}

/// A path a checkpoint could not keep, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Skipped {
    pub path: String,
    pub why: String,
}

/// Why the workspace could not be listed at all.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    #[error("the workspace {} cannot be read: {error}", root.display())]
    Root {
        root: PathBuf,
        #[source]
        error: std::io::Error,
    },
    #[error(
        "the workspace {} holds more than {max} files, more than checkpoints cover; start uji in the project's own folder",
        root.display()
    )]
    TooManyFiles { root: PathBuf, max: usize },
    #[error(transparent)]
    Store(#[from] crate::object::StoreError),
    #[error("the checkpoint log {} cannot be written: {error}", path.display())]
    Log {
        path: PathBuf,
        #[source]
        error: std::io::Error,
    },
}

/// The files and links under `root` (sorted by path), and what could not
/// be listed (an unreadable folder: its files are not covered); an error
/// past `max_files` (a home directory is no workspace).
pub fn scan(root: &Path, max_files: usize) -> Result<(Vec<Found>, Vec<Skipped>), ScanError> {
    std::fs::metadata(root).map_err(|error| ScanError::Root {
        root: root.to_path_buf(),
        error,
    })?;
    let found = Mutex::new(Vec::new());
    let skipped = Mutex::new(Vec::new());
    let counted = std::sync::atomic::AtomicUsize::new(0);
    WalkBuilder::new(root)
        .hidden(false)
        .git_global(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|entry| entry.file_name() != ".git")
        .build_parallel()
        .run(|| {
            // Each walking thread gathers its own and hands them over
            // once, when it ends: no lock per file.
            let mut mine = Gathered {
                found: Vec::new(),
                skipped: Vec::new(),
                into: (&found, &skipped),
            };
            let counted = &counted;
            Box::new(move |entry| {
                match entry {
                    Ok(entry) => {
                        if let Some(one) = found_of(root, &entry) {
                            if counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                                >= max_files
                            {
                                return WalkState::Quit;
                            }
                            mine.found.push(one);
                        }
                    }
                    Err(error) => mine.skipped.push(Skipped {
                        path: error_path(root, &error),
                        why: format!("cannot be read: {error}"),
                    }),
                }
                WalkState::Continue
            })
        });
    if counted.into_inner() > max_files {
        return Err(ScanError::TooManyFiles {
            root: root.to_path_buf(),
            max: max_files,
        });
    }
    let mut found = found.into_inner().unwrap_or_else(|p| p.into_inner());
    found.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    let skipped = skipped.into_inner().unwrap_or_else(|p| p.into_inner());
    Ok((found, skipped))
}

/// One walking thread's finds, added to the shared lists when it ends.
struct Gathered<'a> {
    found: Vec<Found>,
    skipped: Vec<Skipped>,
    into: (&'a Mutex<Vec<Found>>, &'a Mutex<Vec<Skipped>>),
}

impl Drop for Gathered<'_> {
    fn drop(&mut self) {
        lock(self.into.0).append(&mut self.found);
        lock(self.into.1).append(&mut self.skipped);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A walker thread that panicked left nothing half-done in a Vec push.
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

fn found_of(root: &Path, entry: &ignore::DirEntry) -> Option<Found> {
    let kind = entry.file_type()?;
    if !(kind.is_file() || kind.is_symlink()) {
        return None;
    }
    let meta = entry.metadata().ok()?;
    let relative = entry.path().strip_prefix(root).ok()?;
    let path = relative.to_str()?.to_string();
    Some(Found {
        path,
        link: kind.is_symlink(),
        size: meta.len(),
        mode: meta.mode() & 0o7777,
        mtime_s: meta.mtime(),
        mtime_ns: u32::try_from(meta.mtime_nsec()).unwrap_or(0),
        ctime_s: meta.ctime(),
        ctime_ns: u32::try_from(meta.ctime_nsec()).unwrap_or(0),
        ino: meta.ino(),
    })
}

fn error_path(root: &Path, error: &ignore::Error) -> String {
    let path = match error {
        ignore::Error::WithPath { path, .. } => Some(path.as_path()),
        ignore::Error::WithDepth { err, .. } => return error_path(root, err),
        _ => None,
    };
    path.and_then(|p| p.strip_prefix(root).ok())
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn ignored_files_and_the_git_folder_are_left_out_hidden_files_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("target/debug")).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join(".gitignore"), "target/\n*.log\n").unwrap();
        std::fs::write(root.join(".git/config"), "").unwrap();
        std::fs::write(root.join(".env"), "A=1").unwrap();
        std::fs::write(root.join("target/debug/big"), "").unwrap();
        std::fs::write(root.join("run.log"), "").unwrap();
        std::fs::write(root.join("src/lib.rs"), "").unwrap();
        std::os::unix::fs::symlink("src/lib.rs", root.join("link")).unwrap();
        let (found, skipped) = scan(root, 100).unwrap();
        assert!(matches!(scan(root, 3), Err(ScanError::TooManyFiles { .. })));
        let paths: Vec<&str> = found.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, [".env", ".gitignore", "link", "src/lib.rs"]);
        assert!(found[2].link);
        assert!(skipped.is_empty());
    }
}
