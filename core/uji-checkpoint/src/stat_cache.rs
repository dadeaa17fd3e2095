//! What each file's stats last meant: a file whose size, mode,
//! modification and status change times and inode are unchanged keeps its
//! content address without being read. Shared by a workspace's sessions in `index.json`, written at the
//! end of a turn (a stale or lost cache only costs reading files again:
//! every entry is checked against the file's stats before it is trusted).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::RACY_MS;
use crate::scan::Found;
use crate::tree::FileState;

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Entry {
    size: u64,
    /// Absent in caches written before it: such an entry matches no file,
    /// and the file is read again.
    #[serde(default)]
    mode: u32,
    mtime_s: i64,
    mtime_ns: u32,
    #[serde(default)]
    ctime_s: i64,
    #[serde(default)]
    ctime_ns: u32,
    ino: u64,
    /// When the file was read (ms since the epoch).
    seen_ms: u64,
    state: FileState,
}

/// The cache of one workspace.
#[derive(Debug)]
pub struct StatCache {
    path: PathBuf,
    entries: HashMap<String, Entry>,
    changed: bool,
}

impl StatCache {
    /// The cache in `path`; empty when there is none or it cannot be read.
    pub fn load(path: PathBuf) -> StatCache {
        let entries = match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|e| {
                tracing::warn!(path = %path.display(), "checkpoint stat cache unreadable, starting over: {e}");
                HashMap::new()
            }),
            Err(_) => HashMap::new(),
        };
        StatCache {
            path,
            entries,
            changed: false,
        }
    }

    /// The state `found` had when last read, when its stats still say so
    /// and it was not modified close to that reading. The mode and the
    /// status change time count too: `chmod +x` changes neither size nor
    /// modification time, and a program can set the modification time
    /// back (`touch -d`, `cp -p`) but not the status change time.
    pub fn trusted(&self, found: &Found) -> Option<&FileState> {
        let entry = self.entries.get(&found.path)?;
        let same = entry.size == found.size
            && entry.mode == found.mode
            && entry.mtime_s == found.mtime_s
            && entry.mtime_ns == found.mtime_ns
            && entry.ctime_s == found.ctime_s
            && entry.ctime_ns == found.ctime_ns
            && entry.ino == found.ino;
        // The later of the two times: a file rewritten with its old
        // modification time put back has a new status change time.
        let modified_ms = u64::try_from(found.mtime_s.max(found.ctime_s))
            .unwrap_or(0)
            .saturating_mul(1000);
        let settled = modified_ms.saturating_add(RACY_MS) < entry.seen_ms;
        (same && settled).then_some(&entry.state)
    }

    /// Remembers what `found` holds, read at `seen_ms`.
    pub fn remember(&mut self, found: &Found, state: FileState, seen_ms: u64) {
        self.entries.insert(
            found.path.clone(),
            Entry {
                size: found.size,
                mode: found.mode,
                mtime_s: found.mtime_s,
                mtime_ns: found.mtime_ns,
                ctime_s: found.ctime_s,
                ctime_ns: found.ctime_ns,
                ino: found.ino,
                seen_ms,
                state,
            },
        );
        self.changed = true;
    }

    /// Forgets a path that is gone.
    pub fn forget(&mut self, path: &str) {
        self.changed |= self.entries.remove(path).is_some();
    }

    /// Forgets every entry whose content address is not `kept` (the
    /// objects were pruned).
    pub fn forget_missing(&mut self, kept: impl Fn(&str) -> bool) {
        let before = self.entries.len();
        self.entries
            .retain(|_, entry| entry.state.hash().is_none_or(&kept));
        self.changed |= self.entries.len() != before;
    }

    /// Writes the cache if it changed (to a temporary file renamed over
    /// it); a failure is logged, not fatal: the cache is only a shortcut.
    pub fn save(&mut self) {
        if !self.changed {
            return;
        }
        let folder = self.path.parent().unwrap_or(Path::new("."));
        let written = serde_json::to_vec(&self.entries)
            .map_err(std::io::Error::other)
            .and_then(|bytes| {
                let (temporary, mut file) =
                    crate::object::tempfile_in(folder).map_err(std::io::Error::other)?;
                std::io::Write::write_all(&mut file, &bytes)?;
                std::fs::rename(temporary, &self.path)
            });
        match written {
            Ok(()) => self.changed = false,
            Err(e) => {
                tracing::warn!(path = %self.path.display(), "checkpoint stat cache not saved: {e}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn found(size: u64, mtime_s: i64) -> Found {
        Found {
            path: "a.rs".into(),
            link: false,
            size,
            mode: 0o644,
            mtime_s,
            mtime_ns: 0,
            ctime_s: mtime_s,
            ctime_ns: 0,
            ino: 7,
        }
    }

    fn state() -> FileState {
        FileState::File {
            hash: "h".into(),
            mode: 0o644,
            size: 3,
        }
    }

    #[test]
    fn unchanged_stats_long_before_the_reading_are_trusted_and_others_not() {
        let dir = tempfile::tempdir().unwrap();
        let mut cache = StatCache::load(dir.path().join("index.json"));
        cache.remember(&found(3, 100), state(), 100_000 + RACY_MS + 1);
        assert_eq!(cache.trusted(&found(3, 100)), Some(&state()));
        assert_eq!(cache.trusted(&found(4, 100)), None, "size changed");
        assert_eq!(cache.trusted(&found(3, 101)), None, "time changed");
        cache.remember(&found(3, 200), state(), 200_500);
        assert_eq!(
            cache.trusted(&found(3, 200)),
            None,
            "modified just before it was read: read again"
        );
    }

    #[test]
    fn a_mode_or_status_change_alone_is_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let mut cache = StatCache::load(dir.path().join("index.json"));
        cache.remember(&found(3, 100), state(), 100_000 + RACY_MS + 1);
        let chmodded = Found {
            mode: 0o755,
            ..found(3, 100)
        };
        assert_eq!(cache.trusted(&chmodded), None, "chmod +x: read again");
        let time_set_back = Found {
            ctime_s: 150,
            ..found(3, 100)
        };
        assert_eq!(
            cache.trusted(&time_set_back),
            None,
            "rewritten with its old modification time put back: read again"
        );
    }

    #[test]
    fn a_file_whose_status_changed_close_to_its_reading_is_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let mut cache = StatCache::load(dir.path().join("index.json"));
        // Read at 200 s; its modification time says 100 s (set back), its
        // status change time 200 s: it may still have been changing then.
        let rewritten = Found {
            ctime_s: 200,
            ..found(3, 100)
        };
        cache.remember(&rewritten, state(), 200_000);
        assert_eq!(cache.trusted(&rewritten), None);
        cache.remember(&rewritten, state(), 200_000 + RACY_MS + 1_000);
        assert!(cache.trusted(&rewritten).is_some(), "settled later");
    }

    #[test]
    fn an_entry_from_a_cache_without_modes_is_read_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.json");
        let old = r#"{"a.rs":{"size":3,"mtime_s":100,"mtime_ns":0,"ino":7,"seen_ms":1000000,
            "state":{"kind":"file","hash":"h","mode":420,"size":3}}}"#;
        std::fs::write(&path, old).unwrap();
        let cache = StatCache::load(path);
        assert_eq!(cache.trusted(&found(3, 100)), None);
    }

    #[test]
    fn a_saved_cache_loads_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.json");
        let mut cache = StatCache::load(path.clone());
        cache.remember(&found(3, 100), state(), 1_000_000);
        cache.save();
        let again = StatCache::load(path);
        assert_eq!(again.trusted(&found(3, 100)), Some(&state()));
    }
}
