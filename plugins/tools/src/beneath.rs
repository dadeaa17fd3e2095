//! Opening paths beneath the confinement roots in one step.
//!
//! The gate checks a file tool's path before the tool runs; if a directory
//! on the way is swapped for a symlink after that check, a plain `open`
//! would follow it outside. So when the call carries `roots` (confinement
//! on), the tools find the root the path lies under, open that root, and
//! resolve the rest with `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`:
//! the kernel refuses any step (`..`, an absolute or escaping symlink,
//! `/proc/*/fd` links) that would leave the root, at the moment of use.
//! Writes then create the temporary file and rename it with `*at` calls on
//! the directory opened that way, never by path again.

use std::ffi::{CString, OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use uji_sdk::ToolCall;

/// `openat2` may fail with EAGAIN when a rename raced the lookup.
const RETRIES: usize = 8;

/// Where a file tool may open paths.
pub struct Beneath {
    /// Canonical roots; `None` when confinement is off.
    roots: Option<Vec<PathBuf>>,
}

impl Beneath {
    pub fn of(call: &ToolCall) -> Beneath {
        Beneath {
            roots: call
                .roots
                .as_ref()
                .map(|roots| roots.iter().map(PathBuf::from).collect()),
        }
    }

    #[cfg(test)]
    pub fn unconfined() -> Beneath {
        Beneath { roots: None }
    }

    #[cfg(test)]
    pub fn confined(roots: &[&Path]) -> Beneath {
        Beneath {
            roots: Some(roots.iter().map(|r| r.to_path_buf()).collect()),
        }
    }

    /// The root `path` lies under (opened), the path relative to it, and
    /// the `RESOLVE_*` flags for the rest.
    fn split(&self, path: &Path) -> io::Result<(OwnedFd, PathBuf, u64)> {
        let canon = canonical_lenient(path);
        let (root, rel, resolve) = match &self.roots {
            None => (PathBuf::from("/"), canon.clone(), 0),
            Some(roots) => {
                let (root, rel) = roots
                    .iter()
                    .find_map(|r| Some((r.clone(), canon.strip_prefix(r).ok()?.to_path_buf())))
                    .ok_or_else(|| {
                        io::Error::new(
                            io::ErrorKind::PermissionDenied,
                            "outside the allowed directories",
                        )
                    })?;
                (
                    root,
                    rel,
                    libc::RESOLVE_BENEATH | libc::RESOLVE_NO_MAGICLINKS,
                )
            }
        };
        let dir = open_root(&root)?;
        Ok((dir, rel, resolve))
    }

    /// Opens `path` for reading. Non-blocking, so a FIFO does not hang the
    /// open; callers check the type with `File::metadata`.
    pub fn open_read(&self, path: &Path) -> io::Result<File> {
        let (root, rel, resolve) = self.split(path)?;
        let fd = openat2(
            root.as_raw_fd(),
            &rel,
            libc::O_RDONLY | libc::O_NONBLOCK,
            resolve,
        )?;
        Ok(File::from(fd))
    }

    /// Opens the directory that holds `path` (creating it and its parents
    /// when `create`) and returns it with `path`'s file name.
    pub fn parent(&self, path: &Path, create: bool) -> io::Result<(OwnedFd, OsString)> {
        let (root, rel, resolve) = self.split(path)?;
        let (Some(dir), Some(name)) = (rel.parent(), rel.file_name()) else {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "is a directory, not a file",
            ));
        };
        let flags = libc::O_RDONLY | libc::O_DIRECTORY;
        match openat2(root.as_raw_fd(), dir, flags, resolve) {
            Err(e) if create && e.kind() == io::ErrorKind::NotFound => {}
            other => return other.map(|fd| (fd, name.to_os_string())),
        }
        // One component at a time, each beneath the one before.
        let mut cur = openat2(root.as_raw_fd(), Path::new(""), flags, resolve)?;
        for part in dir.iter() {
            let c = cstring(Path::new(part))?;
            // SAFETY: a valid directory fd and a NUL-terminated name.
            let rc = unsafe { libc::mkdirat(cur.as_raw_fd(), c.as_ptr(), 0o777) };
            if rc != 0 {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::AlreadyExists {
                    return Err(e);
                }
            }
            cur = openat2(cur.as_raw_fd(), Path::new(part), flags, resolve)?;
        }
        Ok((cur, name.to_os_string()))
    }
}

fn cstring(path: &Path) -> io::Result<CString> {
    let bytes = path.as_os_str().as_bytes();
    let bytes = if bytes.is_empty() { b"." } else { bytes };
    CString::new(bytes).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in path"))
}

fn open_root(root: &Path) -> io::Result<OwnedFd> {
    let c = cstring(root)?;
    // SAFETY: a NUL-terminated path; the fd returned is owned below.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh descriptor nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `openat2(dir, rel)` with `resolve`; an empty `rel` opens `dir` itself.
fn openat2(dir: RawFd, rel: &Path, flags: i32, resolve: u64) -> io::Result<OwnedFd> {
    let c = cstring(rel)?;
    // SAFETY: open_how is plain data; all-zero is its documented default.
    let mut how: libc::open_how = unsafe { std::mem::zeroed() };
    how.flags = (flags | libc::O_CLOEXEC) as u64;
    how.resolve = resolve;
    let mut last = io::Error::from_raw_os_error(libc::EAGAIN);
    for _ in 0..RETRIES {
        // SAFETY: a valid dir fd, a NUL-terminated path and an open_how of
        // the size passed; the fd returned is owned below.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_openat2,
                dir,
                c.as_ptr(),
                &how as *const libc::open_how,
                std::mem::size_of::<libc::open_how>(),
            )
        };
        if fd >= 0 {
            // SAFETY: fd is a fresh descriptor nothing else owns.
            return Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) });
        }
        last = io::Error::last_os_error();
        if !matches!(last.raw_os_error(), Some(libc::EAGAIN | libc::EINTR)) {
            break;
        }
    }
    Err(last)
}

/// `path` with its longest existing prefix canonicalised; what does not
/// exist yet is appended as given (openat2 still judges it).
fn canonical_lenient(path: &Path) -> PathBuf {
    let mut missing: Vec<&OsStr> = Vec::new();
    let mut cur = path;
    loop {
        if let Ok(mut canon) = std::fs::canonicalize(cur) {
            canon.extend(missing.iter().rev());
            return canon;
        }
        match (cur.parent(), cur.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name);
                cur = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_symlink_out_of_the_root_is_refused_at_open() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        let root_path = std::fs::canonicalize(root.path()).unwrap();
        let beneath = Beneath::confined(&[&root_path]);
        std::fs::create_dir(root_path.join("d")).unwrap();
        std::fs::write(root_path.join("d/secret"), "inside").unwrap();
        let mut file = beneath.open_read(&root_path.join("d/secret")).unwrap();
        let mut text = String::new();
        io::Read::read_to_string(&mut file, &mut text).unwrap();
        assert_eq!(text, "inside");
        // An open root fd with a relative path containing a symlink that
        // leaves it: what a swap after canonicalisation looks like.
        std::fs::remove_dir_all(root_path.join("d")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root_path.join("d")).unwrap();
        let fd = open_root(&root_path).unwrap();
        let flags = libc::RESOLVE_BENEATH | libc::RESOLVE_NO_MAGICLINKS;
        let err = openat2(fd.as_raw_fd(), Path::new("d/secret"), libc::O_RDONLY, flags);
        assert_eq!(err.unwrap_err().raw_os_error(), Some(libc::EXDEV));
        let err = openat2(fd.as_raw_fd(), Path::new("../x"), libc::O_RDONLY, flags);
        assert_eq!(err.unwrap_err().raw_os_error(), Some(libc::EXDEV));
    }

    #[test]
    fn parent_creates_missing_directories_beneath_the_root() {
        let root = tempfile::tempdir().unwrap();
        let root_path = std::fs::canonicalize(root.path()).unwrap();
        let beneath = Beneath::confined(&[&root_path]);
        let (_, name) = beneath.parent(&root_path.join("a/b/c.txt"), true).unwrap();
        assert_eq!(name, "c.txt");
        assert!(root_path.join("a/b").is_dir());
        let outside = beneath.parent(Path::new("/etc/passwd"), false);
        assert_eq!(outside.unwrap_err().kind(), io::ErrorKind::PermissionDenied);
    }
}
