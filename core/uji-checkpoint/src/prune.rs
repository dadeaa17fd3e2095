//! Retention: a session's checkpoints are kept for a while after their
//! last use, then its log goes, and with it every object no remaining log
//! refers to.

use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use serde::Serialize;

use crate::log::{self, Record};
use crate::object::ObjectStore;
use crate::stat_cache::StatCache;

/// How long a session's checkpoints are kept after their last change.
pub const KEEP: Duration = Duration::from_secs(7 * 24 * 60 * 60);
/// An object younger than this is never removed: a session may have
/// written it and not logged it yet.
const YOUNG: Duration = Duration::from_secs(60 * 60);

/// What a prune removed.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize)]
pub struct PruneReport {
    pub sessions: usize,
    pub objects: usize,
    pub bytes: u64,
}

/// Removes the logs of sessions untouched for `keep`, in every workspace
/// under `data_dir`, then the objects no remaining log refers to.
pub fn prune(data_dir: &Path, keep: Duration) -> PruneReport {
    let mut report = PruneReport::default();
    let Ok(workspaces) = std::fs::read_dir(data_dir.join(crate::FOLDER)) else {
        return report;
    };
    for workspace in workspaces.flatten() {
        let base = workspace.path();
        if !base.is_dir() {
            continue;
        }
        report.sessions += remove_old_logs(&base, keep);
        let kept = addresses_in_logs(&base);
        let (objects, bytes) = ObjectStore::new(base.join("objects")).remove_all_but(&kept, YOUNG);
        report.objects += objects;
        report.bytes += bytes;
        if objects > 0 {
            let mut cache = StatCache::load(base.join("index.json"));
            cache.forget_missing(|address| kept.contains(address));
            cache.save();
        }
    }
    report
}

fn remove_old_logs(base: &Path, keep: Duration) -> usize {
    let Ok(logs) = std::fs::read_dir(base.join("sessions")) else {
        return 0;
    };
    let mut removed = 0;
    for entry in logs.flatten() {
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|at| at.elapsed().ok())
            .is_some_and(|age| age >= keep);
        if old && std::fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

fn addresses_in_logs(base: &Path) -> HashSet<String> {
    let mut kept = HashSet::new();
    let Ok(logs) = std::fs::read_dir(base.join("sessions")) else {
        return kept;
    };
    for entry in logs.flatten() {
        let Ok(records) = log::read(&entry.path()) else {
            continue;
        };
        for record in records {
            if let Record::Checkpoint(checkpoint) = record {
                kept.extend(
                    checkpoint
                        .changes
                        .iter()
                        .filter_map(|c| c.state.as_ref()?.hash().map(str::to_string)),
                );
            }
        }
    }
    kept
}

/// How often [`prune_if_due`] prunes.
const EVERY: Duration = Duration::from_secs(24 * 60 * 60);

/// [`prune`] with [`KEEP`], when the last one was a day ago or more (a
/// marker file's time says when): what uji runs as it starts.
pub fn prune_if_due(data_dir: &Path) -> Option<PruneReport> {
    let folder = data_dir.join(crate::FOLDER);
    let marker = folder.join("pruned");
    let due = std::fs::metadata(&marker)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|at| at.elapsed().ok())
        .is_none_or(|age| age >= EVERY);
    if !due || !folder.is_dir() {
        return None;
    }
    // Marked first: a second uji starting meanwhile does not prune too.
    std::fs::write(&marker, b"").ok()?;
    Some(prune(data_dir, KEEP))
}

/// Removes session `session`'s checkpoint log, in whichever workspace it
/// is (`uji delete`); its objects go at the next prune. Whether there was
/// one.
pub fn remove_session(data_dir: &Path, session: &str) -> bool {
    if !crate::checkpoints::plain_session_id(session) {
        return false;
    }
    let Ok(workspaces) = std::fs::read_dir(data_dir.join(crate::FOLDER)) else {
        return false;
    };
    let mut removed = false;
    for workspace in workspaces.flatten() {
        let log = workspace
            .path()
            .join("sessions")
            .join(format!("{session}.jsonl"));
        removed |= std::fs::remove_file(log).is_ok();
    }
    removed
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use std::time::SystemTime;

    use super::*;
    use crate::{Checkpoints, Limits};

    fn age(path: &Path, by: Duration) {
        let file = std::fs::File::options().write(true).open(path).unwrap();
        file.set_modified(SystemTime::now() - by).unwrap();
    }

    fn age_all(dir: &Path, by: Duration) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            if entry.path().is_dir() {
                age_all(&entry.path(), by);
            } else {
                age(&entry.path(), by);
            }
        }
    }

    #[test]
    fn an_old_sessions_log_and_the_objects_only_it_used_go_and_the_rest_stay() {
        let dir = tempfile::tempdir().unwrap();
        let (data, root) = (dir.path().join("data"), dir.path().join("w"));
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("shared.txt"), "both").unwrap();
        std::fs::write(root.join("old.txt"), "old only").unwrap();
        let mut old = Checkpoints::open(&data, "old", &root, Limits::default()).unwrap();
        old.checkpoint(1, "x").unwrap();
        std::fs::remove_file(root.join("old.txt")).unwrap();
        let mut new = Checkpoints::open(&data, "new", &root, Limits::default()).unwrap();
        new.checkpoint(1, "x").unwrap();
        let base = crate::checkpoints::workspace_dir(&data, &root.canonicalize().unwrap());
        age(
            &base.join("sessions/old.jsonl"),
            KEEP + Duration::from_secs(60),
        );
        age_all(&base.join("objects"), YOUNG + Duration::from_secs(60));
        let report = prune(&data, KEEP);
        assert_eq!((report.sessions, report.objects), (1, 1));
        let store = ObjectStore::new(base.join("objects"));
        assert!(store.has(&crate::object::address_of(b"both")));
        assert!(!store.has(&crate::object::address_of(b"old only")));
        assert!(remove_session(&data, "new"));
        assert!(!base.join("sessions/new.jsonl").exists());
    }
}
