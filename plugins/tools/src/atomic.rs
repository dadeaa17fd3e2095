//! Atomic file replacement: write a temporary file next to the target, fsync
//! it, give it the original permissions (and owner, when allowed), then
//! rename it over the target, all through one directory fd opened beneath
//! the call's roots. A failure at any step removes the temporary
//! file and leaves the target as it was.
//!
//! The temporary file is made nameless where the filesystem allows
//! (`O_TMPFILE`): the data is written and synced to a file no directory
//! lists, which gets its temporary name only right before the rename, so a
//! uji killed while writing leaves nothing behind. Elsewhere the file is
//! named from the start; a name left by a uji that died is removed at the
//! next start ([`crate::leftovers`]).

use std::ffi::CString;
use std::fs::{self, File, Permissions};
use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::beneath::Beneath;
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
struct TempGuard<'a> {
    dir: &'a OwnedFd,
    name: CString,
    armed: bool,
}

impl Drop for TempGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            // SAFETY: a valid directory fd and a NUL-terminated name.
            unsafe { libc::unlinkat(self.dir.as_raw_fd(), self.name.as_ptr(), 0) };
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

/// Replaces `path` with `data` atomically, beneath the call's roots (see
/// [`Beneath`]); `create_dirs` makes missing parent directories. New files
/// get the default mode (0666 minus the umask); `keep` carries an existing
/// file's mode and owner.
pub fn write(
    beneath: &Beneath,
    path: &Path,
    data: &[u8],
    keep: Option<&Keep>,
    create_dirs: bool,
) -> io::Result<()> {
    let (dir, name) = beneath.parent(path, create_dirs)?;
    // Keep the temporary name well under NAME_MAX.
    let short: String = name.to_string_lossy().chars().take(64).collect();
    let (temp_name, file) = match write_nameless(&dir, &short, data, keep)? {
        Some(named) => named,
        None => write_named(&dir, &short, data, keep)?,
    };
    let mut guard = TempGuard {
        dir: &dir,
        name: temp_name,
        armed: true,
    };
    drop(file);
    let target = CString::new(name.as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in file name"))?;
    // SAFETY: the same valid directory fd on both sides and NUL-terminated
    // single-component names: nothing is resolved but the names themselves.
    let rc = unsafe {
        libc::renameat(
            dir.as_raw_fd(),
            guard.name.as_ptr(),
            dir.as_raw_fd(),
            target.as_ptr(),
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    guard.armed = false;
    // Make the rename itself durable; not every filesystem allows this.
    // SAFETY: fsync on a valid fd.
    let _ = unsafe { libc::fsync(dir.as_raw_fd()) };
    Ok(())
}

/// Writes `data` to a nameless file in `dir` and gives it a temporary
/// name; `None` when the filesystem has no nameless files.
fn write_nameless(
    dir: &OwnedFd,
    short: &str,
    data: &[u8],
    keep: Option<&Keep>,
) -> io::Result<Option<(CString, File)>> {
    // SAFETY: a valid directory fd and a NUL-terminated path; the fd
    // returned is owned below.
    let fd = unsafe {
        libc::openat(
            dir.as_raw_fd(),
            c".".as_ptr(),
            libc::O_TMPFILE | libc::O_WRONLY | libc::O_CLOEXEC,
            0o666 as libc::c_uint,
        )
    };
    if fd < 0 {
        let e = io::Error::last_os_error();
        return match e.raw_os_error() {
            Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL | libc::ENOENT) => Ok(None),
            _ => Err(e),
        };
    }
    // SAFETY: a fresh descriptor nothing else owns.
    let mut file = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    fill(&mut file, data, keep)?;
    let proc_path = CString::new(format!("/proc/self/fd/{}", file.as_raw_fd()))
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in a path"))?;
    for _ in 0..64 {
        let temp = temp_name(short)?;
        // SAFETY: NUL-terminated paths and a valid directory fd. Linking
        // through /proc needs no privilege (AT_EMPTY_PATH would).
        let rc = unsafe {
            libc::linkat(
                libc::AT_FDCWD,
                proc_path.as_ptr(),
                dir.as_raw_fd(),
                temp.as_ptr(),
                libc::AT_SYMLINK_FOLLOW,
            )
        };
        if rc == 0 {
            return Ok(Some((temp, file)));
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::AlreadyExists => continue,
            // No /proc, or links refused here: write it named instead.
            _ => return Ok(None),
        }
    }
    Ok(None)
}

/// Writes `data` to a fresh named temporary file in `dir`.
fn write_named(
    dir: &OwnedFd,
    short: &str,
    data: &[u8],
    keep: Option<&Keep>,
) -> io::Result<(CString, File)> {
    let (temp, mut file) = create_temp(dir, short)?;
    if let Err(e) = fill(&mut file, data, keep) {
        // SAFETY: a valid directory fd and a NUL-terminated name.
        unsafe { libc::unlinkat(dir.as_raw_fd(), temp.as_ptr(), 0) };
        return Err(e);
    }
    Ok((temp, file))
}

/// The content, owner and mode of the new file, synced.
fn fill(file: &mut File, data: &[u8], keep: Option<&Keep>) -> io::Result<()> {
    file.write_all(data)?;
    if let Some(keep) = keep {
        // Changing the owner needs privileges; keeping the group often works.
        let _ = std::os::unix::fs::fchown(&*file, Some(keep.uid), Some(keep.gid));
        file.set_permissions(keep.permissions.clone())?;
    }
    file.sync_all()
}

/// A temporary name for `short`: `.NAME.uji-PID-N.tmp`, what
/// [`crate::leftovers`] looks for.
fn temp_name(short: &str) -> io::Result<CString> {
    let pid = std::process::id();
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    CString::new(format!(".{short}.uji-{pid}-{n}.tmp"))
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in file name"))
}

fn create_temp(dir: &OwnedFd, name: &str) -> io::Result<(CString, File)> {
    let mut last = None;
    for _ in 0..64 {
        let temp = temp_name(name)?;
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
        // SAFETY: a valid directory fd and a NUL-terminated name; the fd
        // returned is owned below.
        let fd = unsafe {
            libc::openat(
                dir.as_raw_fd(),
                temp.as_ptr(),
                flags | libc::O_CLOEXEC,
                0o666 as libc::c_uint,
            )
        };
        if fd >= 0 {
            // SAFETY: a fresh descriptor nothing else owns.
            return Ok((temp, File::from(unsafe { OwnedFd::from_raw_fd(fd) })));
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::AlreadyExists {
            return Err(e);
        }
        last = Some(e);
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
        write(&Beneath::unconfined(), &path, b"new", None, false).unwrap();
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
        assert!(write(&Beneath::unconfined(), &target, b"data", None, false).is_err());
        assert_eq!(names(dir.path()), ["busy"]);
        assert_eq!(names(&target), ["inside"]);
    }
}
