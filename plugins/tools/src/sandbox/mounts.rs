//! What Landlock cannot say: a path read-only beneath a writable directory
//! (its rights are inherited down the tree, so write access to the
//! workspace covers `.git/hooks`), and a directory nobody may read. The
//! command's process enters a user and mount namespace of its own before
//! exec, as bubblewrap does, and there:
//!
//! - binds each read-only path onto itself and makes that mount read-only
//!   (`mount_setattr`, so the flags the kernel locks are kept);
//! - mounts an empty read-only tmpfs over each hidden directory;
//! - binds every directory from a writable root down to a protected path
//!   onto itself first ("pins"): a mount point cannot be renamed or
//!   removed, so `mv .git .git2` or moving the workspace away cannot swap
//!   in a new `.git/config` for the next command outside the sandbox.
//!
//! Landlock, enforced right after, forbids any further mount or unmount,
//! so the command cannot undo them. Without Landlock none of this is done
//! (nothing would hold it). Everything is prepared before the fork; the
//! child only makes async-signal-safe system calls.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use uji_sdk::{CallSandbox, SandboxMode};

/// `struct mount_attr` of `mount_setattr(2)`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

const MOUNT_ATTR_RDONLY: u64 = 0x0000_0001;
const AT_RECURSIVE: libc::c_uint = 0x8000;

/// The namespace a command enters, ready for the child.
#[derive(Debug)]
pub struct Mounts {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    pins: Vec<CString>,
    read_only: Vec<CString>,
    hidden: Vec<CString>,
}

impl Mounts {
    /// The mounts `spec` needs, or `None` when it protects nothing here.
    /// Read-only paths outside every writable directory are left to
    /// Landlock, which already refuses writes there.
    pub fn plan(spec: &CallSandbox) -> Option<Mounts> {
        let writable: Vec<PathBuf> = match spec.mode {
            SandboxMode::WorkspaceWrite => spec.writable.iter().map(PathBuf::from).collect(),
            SandboxMode::ReadOnly | SandboxMode::Off => Vec::new(),
        };
        let beneath_writable = |p: &Path| writable.iter().any(|w| p.starts_with(w) && p != w);
        let exists = |p: &PathBuf| std::fs::symlink_metadata(p).is_ok();
        let read_only: Vec<PathBuf> = spec
            .read_only
            .iter()
            .map(PathBuf::from)
            .filter(|p| beneath_writable(p) && exists(p))
            .collect();
        let hidden: Vec<PathBuf> = spec
            .hidden
            .iter()
            .map(PathBuf::from)
            .filter(|p| p.is_dir())
            .collect();
        if read_only.is_empty() && hidden.is_empty() {
            return None;
        }
        let pins = pins(&writable, read_only.iter().chain(&hidden));
        // SAFETY: getuid and getgid cannot fail.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        Some(Mounts {
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
            pins: c_paths(&pins),
            read_only: c_paths(&read_only),
            hidden: c_paths(&hidden),
        })
    }

    /// Enters the namespace and makes the mounts. Runs between fork and
    /// exec: only async-signal-safe system calls on prepared data.
    pub fn enter(&self) -> io::Result<()> {
        enter_namespace(&self.uid_map, &self.gid_map)?;
        for pin in &self.pins {
            bind(pin)?;
        }
        for path in &self.read_only {
            if bind(path)? {
                read_only(path)?;
            }
        }
        for dir in &self.hidden {
            hide(dir)?;
        }
        Ok(())
    }
}

/// Every directory from a writable root (included) down to a protected
/// path (excluded), outermost first.
fn pins<'a>(writable: &[PathBuf], protected: impl Iterator<Item = &'a PathBuf>) -> Vec<PathBuf> {
    let mut pins: Vec<PathBuf> = Vec::new();
    for path in protected {
        for root in writable
            .iter()
            .filter(|w| path.starts_with(w) && path != *w)
        {
            let mut dir = path.parent();
            while let Some(d) = dir.filter(|d| d.starts_with(root)) {
                pins.push(d.to_path_buf());
                dir = d.parent();
            }
        }
    }
    pins.sort_by_key(|p| (p.components().count(), p.clone()));
    pins.dedup();
    pins
}

fn c_paths(paths: &[PathBuf]) -> Vec<CString> {
    paths
        .iter()
        .filter_map(|p| CString::new(p.as_os_str().as_bytes()).ok())
        .collect()
}

/// A user namespace mapping only this process's ids, and a mount namespace
/// whose mounts do not propagate back.
fn enter_namespace(uid_map: &[u8], gid_map: &[u8]) -> io::Result<()> {
    // SAFETY: unshare only changes this (single-threaded, forked) process.
    if unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS) } != 0 {
        return Err(io::Error::last_os_error());
    }
    write_proc(c"/proc/self/setgroups", b"deny")?;
    write_proc(c"/proc/self/uid_map", uid_map)?;
    write_proc(c"/proc/self/gid_map", gid_map)?;
    let flags = libc::MS_REC | libc::MS_PRIVATE;
    // SAFETY: valid C strings; changes only this namespace's propagation.
    let rc = unsafe {
        libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            flags,
            std::ptr::null(),
        )
    };
    check(rc)
}

fn write_proc(path: &std::ffi::CStr, bytes: &[u8]) -> io::Result<()> {
    // SAFETY: open, write and close on a valid path and buffer.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let written = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        let error = io::Error::last_os_error();
        libc::close(fd);
        if written != bytes.len() as isize {
            return Err(error);
        }
    }
    Ok(())
}

/// Binds `path` onto itself; false when it is gone (nothing to protect).
fn bind(path: &CString) -> io::Result<bool> {
    // SAFETY: valid C strings; a bind mount in this process's namespace.
    let rc = unsafe {
        libc::mount(
            path.as_ptr(),
            path.as_ptr(),
            std::ptr::null(),
            libc::MS_BIND | libc::MS_REC,
            std::ptr::null(),
        )
    };
    match check(rc) {
        Ok(()) => Ok(true),
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(false),
        Err(e) => Err(e),
    }
}

/// Makes the mount at `path` (and those beneath it) read-only, leaving its
/// other flags as they are.
fn read_only(path: &CString) -> io::Result<()> {
    let attr = MountAttr {
        attr_set: MOUNT_ATTR_RDONLY,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: a valid path and attribute struct of the size passed.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path.as_ptr(),
            AT_RECURSIVE,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    check(rc as libc::c_int)
}

/// An empty read-only tmpfs over `dir`.
fn hide(dir: &CString) -> io::Result<()> {
    let flags = libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    // SAFETY: valid C strings; a new tmpfs in this process's namespace.
    let rc = unsafe {
        libc::mount(
            c"tmpfs".as_ptr(),
            dir.as_ptr(),
            c"tmpfs".as_ptr(),
            flags,
            c"size=4k,mode=0555".as_ptr().cast(),
        )
    };
    match check(rc) {
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => Ok(()),
        other => other,
    }
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Whether this machine lets uji enter a user and mount namespace (user
/// namespaces may be off, limited to zero, or stripped of their rights by a
/// security module). Asked once, in a forked child that only tries.
pub fn available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        // SAFETY: getuid and getgid cannot fail.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        let uid_map = format!("{uid} {uid} 1\n").into_bytes();
        let gid_map = format!("{gid} {gid} 1\n").into_bytes();
        // SAFETY: the child only makes async-signal-safe system calls
        // and leaves with _exit.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let code = i32::from(enter_namespace(&uid_map, &gid_map).is_err());
            // SAFETY: ends the forked child without running any destructor.
            unsafe { libc::_exit(code) };
        }
        if pid < 0 {
            return false;
        }
        let mut status = 0;
        // SAFETY: waits for the child just forked.
        let rc = unsafe { libc::waitpid(pid, &mut status, 0) };
        rc == pid && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pins_run_from_each_writable_root_down_to_the_protected_path() {
        let writable = [PathBuf::from("/w"), PathBuf::from("/tmp")];
        let protected = [
            PathBuf::from("/w/.git/hooks"),
            PathBuf::from("/w/.git/config"),
            PathBuf::from("/home/u/.config/uji"),
        ];
        let pins = pins(&writable, protected.iter());
        assert_eq!(pins, [PathBuf::from("/w"), PathBuf::from("/w/.git")]);
    }
}
