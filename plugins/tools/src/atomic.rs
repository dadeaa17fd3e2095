//! Atomic file replacement: write a temporary file next to the target, fsync
//! it, give it the original permissions (and owner, when allowed), then
//! rename it over the target. A failure at any step removes the temporary
//! file and leaves the target as it was.

use std::fs::{self, File, OpenOptions, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

static COUNTER: AtomicUsize = AtomicUsize::new(0);

/// What to keep from the file being replaced.
pub struct Keep {
    pub permissions: Permissions,
    pub uid: u32,
    pub gid: u32,
}

impl Keep {
    pub fn from_metadata(meta: &fs::Metadata) -> Keep {
        Keep {
            permissions: meta.permissions(),
            uid: meta.uid(),
            gid: meta.gid(),
        }
    }
}

/// Removes the temporary file unless the rename happened.
struct TempGuard {
    path: PathBuf,
    armed: bool,
}

impl Drop for TempGuard {
    fn drop(&mut self) {
        if self.armed {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// The file a write to `path` should replace: the target of a symlink (so
/// the link survives), or `path` itself.
pub fn write_target(path: &Path) -> PathBuf {
    match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    }
}

/// Replaces `path` with `data` atomically. New files get the default mode
/// (0666 minus the umask); `keep` carries an existing file's mode and owner.
pub fn write(path: &Path, data: &[u8], keep: Option<&Keep>) -> io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".to_string());
    // Keep the temporary name well under NAME_MAX.
    let short: String = name.chars().take(64).collect();

    let (temp_path, mut file) = create_temp(&dir, &short)?;
    let mut guard = TempGuard {
        path: temp_path,
        armed: true,
    };
    file.write_all(data)?;
    if let Some(keep) = keep {
        // Changing the owner needs privileges; keeping the group often works.
        let _ = std::os::unix::fs::fchown(&file, Some(keep.uid), Some(keep.gid));
        file.set_permissions(keep.permissions.clone())?;
    }
    file.sync_all()?;
    drop(file);
    fs::rename(&guard.path, path)?;
    guard.armed = false;
    // Make the rename itself durable; not every filesystem allows this.
    if let Ok(dir) = File::open(&dir) {
        let _ = dir.sync_all();
    }
    Ok(())
}

fn create_temp(dir: &Path, name: &str) -> io::Result<(PathBuf, File)> {
    let pid = std::process::id();
    let mut last = None;
    for _ in 0..64 {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!(".{name}.uji-{pid}-{n}.tmp"));
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(file) => return Ok((path, file)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("could not create a temporary file")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn replaces_the_file_and_leaves_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        fs::write(&path, "old").unwrap();
        write(&path, b"new", None).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        assert_eq!(names(dir.path()), ["f"]);
    }

    #[test]
    fn a_failed_rename_removes_the_temporary_file() {
        // Works as root too: renaming a file over a non-empty directory fails.
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("busy");
        fs::create_dir(&target).unwrap();
        fs::write(target.join("inside"), "x").unwrap();
        assert!(write(&target, b"data", None).is_err());
        assert_eq!(names(dir.path()), ["busy"]);
        assert_eq!(names(&target), ["inside"]);
    }
}
