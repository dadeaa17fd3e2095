//! Plugin files whose abi_stable layout check passed, remembered across
//! processes.
//!
//! abi_stable compares the whole type layout of a plugin's root module with
//! the one this executable expects each time a library is opened: about a
//! tenth of a `uji run`'s start, repeated by every process (a subagent is
//! one). The verdict depends only on the two files, so it is kept in
//! `<data>/cache/checked-plugins.json` keyed by their identity: device,
//! inode, size, modification and change times (the change time cannot be
//! set back from user space, so a rewritten file never matches an old
//! entry). A plugin is opened unchecked only when both it and this
//! executable are the very files that passed before; anything else is
//! checked, and a pass recorded. abi_stable documents this use of its
//! unchecked loading ("a cache of which dynamic libraries have been checked
//! for layout compatibility").
//!
//! What the cache cannot do: it never lets a plugin in that would fail,
//! since the entry is written only after the check passed for that exact
//! file. Whoever can replace the cache file can also replace the plugins
//! (both are the user's own files, and plugin directories others can write
//! are refused by [`crate::checks`]).

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

/// What identifies one version of a file on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileIdentity {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl FileIdentity {
    /// The identity of the file `path` names now (following links).
    pub fn of(path: &Path) -> Option<FileIdentity> {
        let meta = std::fs::metadata(path).ok()?;
        Some(FileIdentity {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        })
    }
}

/// The cache file's contents: the executable the checks were made for and
/// each plugin file that passed.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Verdicts {
    host: Option<FileIdentity>,
    abi: String,
    passed: HashMap<PathBuf, FileIdentity>,
}

/// The remembered verdicts of one process.
#[derive(Debug)]
pub(crate) struct CheckedLayouts {
    file: PathBuf,
    verdicts: Verdicts,
    changed: bool,
}

impl CheckedLayouts {
    /// Reads `file` for the executable `host`. A missing, unreadable or
    /// damaged file, or one written for another executable or ABI, holds
    /// no verdicts (it is rewritten after the next check).
    fn open(file: PathBuf, host: Option<FileIdentity>) -> CheckedLayouts {
        let read: Option<Verdicts> = std::fs::read(&file)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok());
        let verdicts = match read {
            Some(v) if host.is_some() && v.host == host && v.abi == uji_abi::ABI_VERSION => v,
            _ => Verdicts {
                host,
                abi: uji_abi::ABI_VERSION.to_string(),
                passed: HashMap::new(),
            },
        };
        CheckedLayouts {
            file,
            verdicts,
            changed: false,
        }
    }

    /// Whether `plugin`, as it is now (`identity`), passed the check
    /// against this executable before.
    fn passed_before(&self, plugin: &Path, identity: Option<FileIdentity>) -> bool {
        self.verdicts.host.is_some()
            && identity.is_some()
            && self.verdicts.passed.get(plugin).copied() == identity
    }

    fn record_pass(&mut self, plugin: &Path, identity: FileIdentity) {
        if self.verdicts.host.is_none() {
            return;
        }
        if self.verdicts.passed.insert(plugin.to_path_buf(), identity) != Some(identity) {
            self.changed = true;
        }
    }

    /// Writes the verdicts when they changed (a temporary file renamed over
    /// the old one, so a reader never sees half a file). Failing to write
    /// only means the next process checks again.
    fn save(&mut self) {
        if !self.changed {
            return;
        }
        self.changed = false;
        let Some(dir) = self.file.parent() else {
            return;
        };
        let temporary = self
            .file
            .with_extension(format!("json.{}.tmp", std::process::id()));
        let written = std::fs::create_dir_all(dir)
            .and_then(|()| {
                let bytes = serde_json::to_vec(&self.verdicts).map_err(std::io::Error::other)?;
                std::fs::write(&temporary, bytes)
            })
            .and_then(|()| std::fs::rename(&temporary, &self.file));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&temporary);
            tracing::debug!("cannot save {}: {e}", self.file.display());
        }
    }
}

static REMEMBERED: OnceLock<Mutex<CheckedLayouts>> = OnceLock::new();

/// Keep layout verdicts in `file` for the rest of this process (the core's
/// boot calls it with `<data>/cache/checked-plugins.json`). Without it,
/// every plugin is checked.
pub fn remember_checked_layouts(file: PathBuf) {
    let host = std::env::current_exe()
        .ok()
        .and_then(|exe| FileIdentity::of(&exe));
    let _ = REMEMBERED.set(Mutex::new(CheckedLayouts::open(file, host)));
}

/// Whether `plugin` (its identity taken now, before it is opened) may be
/// opened without the layout check; the identity to record once it passes.
pub(crate) fn verdict_for(plugin: &Path) -> (bool, Option<FileIdentity>) {
    let Some(remembered) = REMEMBERED.get() else {
        return (false, None);
    };
    let identity = FileIdentity::of(plugin);
    (remembered.lock().passed_before(plugin, identity), identity)
}

/// Records that `plugin`, as `identity`, passed the layout check (kept
/// for [`save_passes`]).
pub(crate) fn record_pass(plugin: &Path, identity: Option<FileIdentity>) {
    if let (Some(remembered), Some(identity)) = (REMEMBERED.get(), identity) {
        remembered.lock().record_pass(plugin, identity);
    }
}

/// Writes the passes recorded since the last save, once per batch of
/// plugins opened rather than once per plugin.
pub(crate) fn save_passes() {
    if let Some(remembered) = REMEMBERED.get() {
        remembered.lock().save();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity_of(path: &Path) -> FileIdentity {
        FileIdentity::of(path).expect("identity")
    }

    /// A plugin file, an executable and where the verdicts go.
    struct Files {
        _dir: tempfile::TempDir,
        plugin: PathBuf,
        host: PathBuf,
        cache: PathBuf,
    }

    impl Files {
        fn new() -> Files {
            let dir = tempfile::tempdir().expect("tempdir");
            let files = Files {
                plugin: dir.path().join("libp.so"),
                host: dir.path().join("uji"),
                cache: dir.path().join("cache").join("checked.json"),
                _dir: dir,
            };
            std::fs::write(&files.plugin, b"one").expect("write");
            std::fs::write(&files.host, b"exe").expect("write");
            files
        }

        fn open(&self) -> CheckedLayouts {
            CheckedLayouts::open(self.cache.clone(), Some(identity_of(&self.host)))
        }

        fn passed_before(&self) -> bool {
            self.open()
                .passed_before(&self.plugin, Some(identity_of(&self.plugin)))
        }

        fn record_pass(&self) {
            let mut verdicts = self.open();
            verdicts.record_pass(&self.plugin, identity_of(&self.plugin));
            verdicts.save();
        }
    }

    #[test]
    fn a_pass_is_remembered_for_the_same_file_and_executable() {
        let files = Files::new();
        assert!(!files.passed_before());
        files.record_pass();
        assert!(files.passed_before());
    }

    #[test]
    fn a_rewritten_plugin_or_another_executable_is_checked_again() {
        let files = Files::new();
        files.record_pass();
        // Same size, rewritten in place: the change time moves on.
        std::thread::sleep(std::time::Duration::from_millis(10));
        std::fs::write(&files.plugin, b"two").expect("write");
        assert!(!files.passed_before());

        files.record_pass();
        std::fs::write(&files.host, b"another exe").expect("write");
        assert!(files.open().verdicts.passed.is_empty());
    }

    #[test]
    fn a_damaged_cache_file_holds_no_verdicts() {
        let files = Files::new();
        files.record_pass();
        std::fs::write(&files.cache, b"{\"host\": [1, 2").expect("write");
        assert!(!files.passed_before());
    }

    #[test]
    fn without_a_known_executable_nothing_is_trusted() {
        let files = Files::new();
        let mut opened = CheckedLayouts::open(files.cache.clone(), None);
        opened.record_pass(&files.plugin, identity_of(&files.plugin));
        assert!(!opened.passed_before(&files.plugin, Some(identity_of(&files.plugin))));
    }
}
