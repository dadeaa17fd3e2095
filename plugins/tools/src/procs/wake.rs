//! Wakes a process's thread from its `poll`: an eventfd it polls with the
//! pipes.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

pub struct Wake(OwnedFd);

impl Wake {
    pub fn new() -> io::Result<Wake> {
        // SAFETY: eventfd only creates a descriptor; it is owned at once.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a new descriptor nothing else owns.
        Ok(Wake(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// Makes the next (or current) poll return.
    pub fn wake(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64 to an eventfd this owns; a
        // full counter (EAGAIN) is still a wake.
        unsafe {
            libc::write(self.0.as_raw_fd(), (&one as *const u64).cast(), 8);
        }
    }

    /// Clears the wakes so far.
    pub fn clear(&self) {
        let mut count: u64 = 0;
        // SAFETY: reads 8 bytes into a live u64; non-blocking.
        unsafe {
            libc::read(self.0.as_raw_fd(), (&mut count as *mut u64).cast(), 8);
        }
    }

    pub fn fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }
}
