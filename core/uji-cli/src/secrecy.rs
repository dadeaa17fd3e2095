//! Keys out of reach of the processes uji starts, beyond their own
//! environment (which `uji_core::gate::child_env` decides): a command could read
//! uji's `/proc/<pid>/environ`, which shows the environment uji was started
//! with whatever uji removes later, or its memory through `/proc/<pid>/mem`.
//!
//! - The strings of the initial environment are copied to the heap and the
//!   originals, the bytes `/proc/<pid>/environ` shows, are zeroed: that
//!   file then holds only NUL bytes, for every reader, root included.
//! - `PR_SET_DUMPABLE` 0: other processes of the same user can no longer
//!   open uji's `/proc/<pid>/mem`, `environ` and the like or ptrace it (a
//!   process with `CAP_SYS_PTRACE`, such as root, still can, unless
//!   Landlock's sandbox denies it; see docs/configuration.md), and uji
//!   leaves no core dump with keys in it.

use std::ffi::{CStr, CString};

unsafe extern "C" {
    static mut environ: *mut *mut libc::c_char;
}

/// Runs first in `main`, before any other thread exists (and so before
/// logging): what could not be done is returned, to be logged.
pub fn hide_environment() -> Result<(), std::io::Error> {
    // SAFETY: only this thread exists, so nothing reads `environ` while its
    // entries are swapped; each new entry is a leaked, NUL-terminated copy
    // that lives as long as the process. The zeroed bytes are the original
    // strings the kernel placed on the stack, which nothing points to once
    // swapped.
    unsafe {
        let table = environ;
        if !table.is_null() {
            let mut index = 0;
            loop {
                let entry = *table.add(index);
                if entry.is_null() {
                    break;
                }
                let copy = CString::from(CStr::from_ptr(entry));
                let length = copy.as_bytes().len();
                *table.add(index) = copy.into_raw();
                std::ptr::write_bytes(entry, 0, length);
                index += 1;
            }
        }
        if libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}
