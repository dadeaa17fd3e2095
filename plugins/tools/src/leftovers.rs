//! Temporary files of writes that never finished.
//!
//! [`crate::atomic`] names its temporary files `.NAME.uji-PID-N.tmp` next to
//! the file it replaces. Most writes never give them a name until just
//! before the rename, but where the filesystem has no nameless files (or a
//! uji is killed in that instant) one can be left behind. When the tools
//! plugin starts, it looks through the working directory (at most
//! [`MAX_ENTRIES`] entries, `.git` skipped, symlinks not followed; the
//! first few thousand before the start goes on, the rest on a thread) and
//! removes such files that are regular files of this user whose writer is
//! gone: no process PID, or one that is not uji.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// How many directory entries one start looks at…
pub const MAX_ENTRIES: usize = 50_000;
/// …of which this many before the plugin's start returns (a few ms).
const FIRST_ENTRIES: usize = 5_000;

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

/// A walk through a tree for temporary files of writes whose writer is gone.
pub struct Walk {
    dirs: Vec<PathBuf>,
    seen: usize,
    own: Option<String>,
    uid: u32,
    pub removed: usize,
}

impl Walk {
    pub fn new(root: &Path) -> Walk {
        Walk {
            dirs: vec![root.to_path_buf()],
            seen: 0,
            own: program(std::process::id()),
            // SAFETY: geteuid cannot fail.
            uid: unsafe { libc::geteuid() },
            removed: 0,
        }
    }

    /// Looks at up to `budget` more entries (never more than
    /// [`MAX_ENTRIES`] in all); true when there is more to look at.
    pub fn step(&mut self, budget: usize) -> bool {
        let stop = (self.seen + budget).min(MAX_ENTRIES);
        while let Some(dir) = self.dirs.pop() {
            let Ok(entries) = fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                self.seen += 1;
                self.look_at(&entry);
            }
            if self.seen >= stop {
                return self.seen < MAX_ENTRIES && !self.dirs.is_empty();
            }
        }
        false
    }

    fn look_at(&mut self, entry: &fs::DirEntry) {
        let Ok(kind) = entry.file_type() else {
            return;
        };
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if kind.is_dir() {
            if name != ".git" {
                self.dirs.push(entry.path());
            }
            return;
        }
        let Some(pid) = writer_pid(&name) else {
            return;
        };
        let ours = kind.is_file() && entry.metadata().is_ok_and(|m| m.uid() == self.uid);
        if ours && !writer_alive(pid, &self.own) && fs::remove_file(entry.path()).is_ok() {
            self.removed += 1;
        }
    }
}

/// Removes the temporary files of writes whose writer is gone under
/// `root`: the first [`FIRST_ENTRIES`] entries before returning, the rest
/// on a thread of its own, so a large tree does not slow the start.
pub fn remove_under(root: &Path, done: impl FnOnce(usize) + Send + 'static) {
    let mut walk = Walk::new(root);
    if !walk.step(FIRST_ENTRIES) {
        done(walk.removed);
        return;
    }
    // A thread that cannot start only means the rest waits for a later
    // start.
    let _ = std::thread::Builder::new()
        .name("uji-leftovers".into())
        .spawn(move || {
            while walk.step(FIRST_ENTRIES) {}
            done(walk.removed);
        });
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
        let mut walk = Walk::new(dir.path());
        assert!(!walk.step(FIRST_ENTRIES));
        assert_eq!(walk.removed, 1);
        assert!(!gone.exists());
        assert!(alive.exists() && other.exists());
    }
}
