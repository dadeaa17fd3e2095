//! Temporary files of writes that never finished.
//!
//! [`crate::atomic`] names its temporary files `.NAME.uji-PID-N.tmp` next to
//! the file it replaces. Most writes never give them a name until just
//! before the rename, but where the filesystem has no nameless files (or a
//! uji is killed in that instant) one can be left behind. When the tools
//! plugin starts, it looks through the working directory (at most
//! [`MAX_ENTRIES`] entries, `.git` skipped, symlinks not followed) and
//! removes such files that are regular files of this user whose writer is
//! gone: no process PID, or one that is not uji.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// How many directory entries one start looks at.
pub const MAX_ENTRIES: usize = 50_000;

/// The writer's pid in a temporary file's name, when it is one.
fn writer_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (_, tail) = rest.rsplit_once(".uji-")?;
    let (pid, n) = tail.split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(pid) && digits(n))
        .then(|| pid.parse().ok())
        .flatten()
}

/// The program name of `pid`, when it runs.
fn program(pid: u32) -> Option<String> {
    fs::read_to_string(format!("/proc/{pid}/comm"))
        .ok()
        .map(|s| s.trim_end().to_string())
}

/// Whether the uji that wrote with `pid` may still be writing.
fn writer_alive(pid: u32, own: &Option<String>) -> bool {
    match program(pid) {
        Some(name) => own.as_ref().is_none_or(|own| *own == name),
        None => Path::new(&format!("/proc/{pid}")).exists(),
    }
}

/// Removes the temporary files of finished-badly writes under `root`;
/// returns how many.
pub fn remove_under(root: &Path) -> usize {
    let own = program(std::process::id());
    // SAFETY: geteuid cannot fail.
    let uid = unsafe { libc::geteuid() };
    let mut removed = 0;
    let mut seen = 0;
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                return removed;
            }
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if kind.is_dir() {
                if name != ".git" {
                    dirs.push(entry.path());
                }
                continue;
            }
            let Some(pid) = writer_pid(&name) else {
                continue;
            };
            let ours = kind.is_file() && entry.metadata().is_ok_and(|m| m.uid() == uid);
            if ours && !writer_alive(pid, &own) && fs::remove_file(entry.path()).is_ok() {
                removed += 1;
            }
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_uji_temporary_names_are_recognised() {
        assert_eq!(writer_pid(".notes.txt.uji-123-4.tmp"), Some(123));
        assert_eq!(writer_pid(".a.uji-b.uji-7-0.tmp"), Some(7));
        for name in [
            "notes.txt.uji-123-4.tmp",
            ".notes.txt.uji-123-4.txt",
            ".notes.uji-x-4.tmp",
            ".notes.uji-12-.tmp",
            ".notes.tmp",
        ] {
            assert_eq!(writer_pid(name), None, "{name}");
        }
    }

    #[test]
    fn leftovers_of_a_gone_writer_are_removed_and_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let sub = dir.path().join("src/deep");
        fs::create_dir_all(&sub).unwrap();
        // 4194304 is past the largest pid Linux hands out; this process is
        // alive (and is what is running now, whatever its name).
        let gone = sub.join(".main.rs.uji-4194304-0.tmp");
        let alive = dir
            .path()
            .join(format!(".x.uji-{}-0.tmp", std::process::id()));
        let other = dir.path().join(".x.someone-1-0.tmp");
        for f in [&gone, &alive, &other] {
            fs::write(f, "partial").unwrap();
        }
        assert_eq!(remove_under(dir.path()), 1);
        assert!(!gone.exists());
        assert!(alive.exists() && other.exists());
    }
}
