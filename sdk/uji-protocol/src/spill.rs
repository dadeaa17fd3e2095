//! Where a tool's long output goes, and how much of it the model sees.
//!
//! One set of rules for every tool, whichever plugin provides it: the model
//! sees at most [`MAX_LINES`] lines and [`MAX_BYTES`] bytes (the last ones,
//! with a note saying which), and the whole output goes to a spill file the
//! model may read back with `read_file`. `run_command` applies them while
//! the command runs (it never holds the whole output); the core applies
//! them to every other result ([`bound`]). A spill file holds at most
//! [`MAX_SPILL_BYTES`], then says the output was cut.
//!
//! The host chooses each call's spill file (`ToolCall::spill`, in a
//! directory of the session's); without one, a fresh name in the temporary
//! directory is used.

use std::fs::{DirBuilder, File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

mod capture;

pub use capture::{Capture, Rendered};

/// The model sees at most this many of the last lines…
pub const MAX_LINES: usize = 2000;
/// …and at most this many of the last bytes.
pub const MAX_BYTES: usize = 50 * 1024;
/// A spill file holds at most this much output (a command that prints
/// forever must not fill the disk).
pub const MAX_SPILL_BYTES: u64 = 50 * 1024 * 1024;
/// What a bounded result may add to the lines it shows (the note, an exit
/// code): a result within the limits plus this is left as it is, so the
/// core never cuts again what a tool already cut.
const NOTE_ROOM_BYTES: usize = 4 * 1024;
const NOTE_ROOM_LINES: usize = 8;

/// The spill file number `n` of process `pid`, in `dir`.
pub fn spill_path(dir: &Path, pid: u32, n: usize) -> PathBuf {
    dir.join(format!("uji-output-{pid}-{n}.log"))
}

/// Whether `name` is the name of a spill file (of any process).
pub fn is_spill_name(name: &str) -> bool {
    let Some(rest) = name
        .strip_prefix("uji-output-")
        .and_then(|rest| rest.strip_suffix(".log"))
    else {
        return false;
    };
    let number = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    rest.split_once('-')
        .is_some_and(|(pid, n)| number(pid) && number(n))
}

static TEMP_COUNTER: AtomicUsize = AtomicUsize::new(0);

/// A spill file name of this process in the temporary directory, for a
/// call whose host chose none.
pub fn temp_spill_path() -> PathBuf {
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    spill_path(&std::env::temp_dir(), std::process::id(), n)
}

/// Creates the spill file `path` (never an existing file), and its
/// directory if missing. Output can hold secrets: only the user may read
/// either.
pub fn create_spill_file(path: &Path) -> io::Result<File> {
    if let Some(dir) = path.parent()
        && !dir.as_os_str().is_empty()
    {
        DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    }
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
}

/// Whether `text` is within the limits (with room for a tool's own note).
pub fn fits(text: &str) -> bool {
    text.len() <= MAX_BYTES + NOTE_ROOM_BYTES
        && text.bytes().filter(|&b| b == b'\n').count() < MAX_LINES + NOTE_ROOM_LINES
}

/// `text` bounded like a command's output: `None` when it [`fits`], else
/// its last lines with the note naming the spill file at `spill`, which
/// gets all of it (up to [`MAX_SPILL_BYTES`]).
pub fn bound(text: &str, spill: &Path) -> Option<String> {
    if fits(text) {
        return None;
    }
    let mut capture = Capture::new(Some(spill.to_path_buf()));
    // In slices, so the spill file is written as it goes rather than from
    // one more copy of the whole text.
    for chunk in text.as_bytes().chunks(64 * 1024) {
        capture.push(chunk, &mut |_| {});
    }
    capture.finish(&mut |_| {});
    Some(capture.render().with_note())
}

/// "50.0KB", "10.0MB".
pub fn size(bytes: u64) -> String {
    const MB: f64 = 1024.0 * 1024.0;
    let b = bytes as f64;
    if b >= MB {
        format!("{:.1}MB", b / MB)
    } else {
        format!("{:.1}KB", b / 1024.0)
    }
}

/// The longest prefix of `bytes` of at most `max` bytes that does not end in
/// the middle of a UTF-8 character (when the bytes are UTF-8).
pub fn cut_at_char_boundary(bytes: &[u8], max: usize) -> &[u8] {
    if bytes.len() <= max {
        return bytes;
    }
    let is_continuation = |i: usize| bytes.get(i).is_some_and(|b| b & 0xC0 == 0x80);
    let mut end = max;
    // Step back over at most three continuation bytes to a char start.
    for _ in 0..3 {
        if end > 0 && is_continuation(end) {
            end -= 1;
        } else {
            break;
        }
    }
    if is_continuation(end) {
        // Not UTF-8 anyway: cut where asked.
        end = max;
    }
    bytes.get(..end).unwrap_or(bytes)
}

/// The longest suffix of `bytes` that does not start in the middle of a
/// UTF-8 character.
pub fn skip_partial_char(bytes: &[u8]) -> &[u8] {
    let mut start = 0;
    while start < 3 && bytes.get(start).is_some_and(|b| b & 0xC0 == 0x80) {
        start += 1;
    }
    bytes.get(start..).unwrap_or_default()
}

/// The OS error text without Rust's " (os error N)" suffix.
pub fn os_error(e: &io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(i) if text.ends_with(')') => text[..i].to_string(),
        _ => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_other_files_do_not_match() {
        let path = spill_path(Path::new("/tmp"), 42, 7);
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        assert!(is_spill_name(name));
        for other in [
            "uji-output-42-.log",
            "uji-output-42-7.txt",
            "uji-output-7.log",
            "uji-output-42-7/../x.log",
            "notes.log",
        ] {
            assert!(!is_spill_name(other), "{other}");
        }
    }

    #[test]
    fn text_within_the_limits_is_left_alone() {
        let dir = std::env::temp_dir().join("never-created");
        assert_eq!(bound("short", &dir.join("x.log")), None);
        assert!(!dir.exists());
    }
}
