//! How uji's memory is given back to the system (glibc's allocator; on
//! other platforms nothing here does anything).
//!
//! Each model request builds the whole conversation a few times over (the
//! wire messages, the request body, the bytes sent), on the threads of
//! core's runtime and of the wire plugin's, while the screen allocates on
//! threads of its own. By default glibc gives every thread an arena of its
//! own, keeps what is freed in them resident, and gives back by itself only
//! the top of the main heap: over a day's session the freed space of earlier
//! requests adds up (docs/benchmarks.md, "a day's session"). So uji fixes
//! the allocator's settings at start ([`tune_allocator`]) and, when a turn
//! ends, returns every whole free page ([`release_free_pages`]).

/// At start, before any other thread exists:
///
/// - Buffers from 256 KiB up (a tool's megabytes of arguments or output)
///   are mmapped and unmapped when freed. Without a fixed threshold glibc
///   raises it after the first large free, and later large buffers stay
///   resident for the rest of the session.
/// - At most two arenas: uji's threads allocate little at once, and each
///   arena more keeps its own freed space resident.
pub fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes the allocator's tuning; it is called
    // before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 256 * 1024);
        libc::mallopt(libc::M_ARENA_MAX, 2);
    }
}

/// Returns the heap's whole free pages to the system (glibc's
/// `malloc_trim`): called when a turn ends, when nothing is being built.
pub fn release_free_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks and trims the allocator's own free
    // lists, under the allocator's locks; it touches no memory in use.
    unsafe {
        libc::malloc_trim(0);
    }
}
