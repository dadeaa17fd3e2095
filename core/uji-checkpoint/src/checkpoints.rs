//! A session's checkpoints of its workspace: taking them, the change sets
//! each turn (and each restore) made, and planning and applying restores.
//! One owner: the session's agent holds the `Checkpoints` and calls it
//! from one task at a time.

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::log::{self, CheckpointRecord, Record};
use crate::object::{ObjectStore, address_of};
use crate::restore::{self, Applied, FileAction, Plan, RestoreError};
use crate::scan::{Found, ScanError, Skipped, scan};
use crate::stat_cache::StatCache;
use crate::tree::{self, Change, FileState, Tree};

/// What checkpoints keep at most.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// A larger file is skipped (present, content not kept).
    pub max_file: u64,
    /// Once a session stored this many bytes, new content is skipped.
    pub max_session: u64,
    /// A workspace with more files is not checkpointed at all.
    pub max_files: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_file: 10 * 1024 * 1024,
            max_session: 500 * 1024 * 1024,
            max_files: 100_000,
        }
    }
}

/// What a change set undid or did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ChangeSetKind {
    /// The files a turn changed (by any tool, commands included).
    Turn { turn: u64 },
    /// The files a command the user ran (`!cmd`) changed.
    Shell { command: String },
    /// A restore that reverted change set `of` (`/undo`, `uji undo`).
    Undo { of: u64 },
    /// A restore that reverted the undo `of` (`/redo`).
    Redo { of: u64 },
    /// A restore of the code to before turn `to_turn` (`/rewind`): the
    /// change sets it reverted (that turn's, later turns', `!cmd`s').
    Rewind {
        to_turn: u64,
        #[serde(default)]
        reverted: Vec<u64>,
    },
}

/// Files that changed between two checkpoints, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChangeSet {
    pub id: u64,
    #[serde(flatten)]
    pub kind: ChangeSetKind,
    /// The checkpoint before and the one after.
    pub from: u64,
    pub to: u64,
    pub at_ms: u64,
    pub paths: Vec<String>,
}

/// One checkpoint, as `uji checkpoints` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckpointInfo {
    pub id: u64,
    pub turn: u64,
    pub at_ms: u64,
    pub reason: String,
    /// Files that changed since the checkpoint before.
    pub changed: usize,
    /// Bytes of new objects stored.
    pub stored: u64,
    pub skipped: usize,
}

/// What taking a checkpoint did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Created {
    pub id: u64,
    pub turn: u64,
    /// Why it was taken: the call about to run, `turn end`, `before undo
    /// of turn 2`, `!rm notes.md`.
    pub reason: String,
    pub changed: usize,
    pub stored: u64,
    /// Files not kept that were not reported before in this session.
    pub newly_skipped: Vec<Skipped>,
}

/// Why checkpoints could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("the workspace {} cannot be checkpointed: {error}", root.display())]
    Root {
        root: PathBuf,
        #[source]
        error: std::io::Error,
    },
    #[error("{0:?} is not a session id")]
    BadSession(String),
    #[error("the checkpoint log {} cannot be read: {error}", path.display())]
    Log {
        path: PathBuf,
        #[source]
        error: std::io::Error,
    },
    #[error(transparent)]
    Restore(#[from] RestoreError),
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Whether `id` is a session id that names one file and nothing else.
pub(crate) fn plain_session_id(id: &str) -> bool {
    !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// Where a workspace's checkpoints live under `data_dir`.
pub fn workspace_dir(data_dir: &Path, root: &Path) -> PathBuf {
    let key = address_of(root.as_os_str().as_encoded_bytes());
    data_dir.join(crate::FOLDER).join(&key[..16])
}

/// A session's checkpoints.
pub struct Checkpoints {
    root: PathBuf,
    store: ObjectStore,
    cache: StatCache,
    log_path: PathBuf,
    limits: Limits,
    records: Vec<CheckpointRecord>,
    change_sets: Vec<ChangeSet>,
    current: Tree,
    stored: u64,
    /// The turn whose changes are being gathered, and its first checkpoint.
    open_turn: Option<(u64, u64)>,
    undoable: Vec<u64>,
    redoable: Vec<u64>,
    noticed: HashSet<String>,
    /// Every checkpoint taken since [`Checkpoints::take_created`] was
    /// last called, to be told to the user and to plugins.
    created: Vec<Created>,
}

impl Checkpoints {
    /// The checkpoints of session `session` in the workspace `root`, from
    /// its log when there is one.
    pub fn open(
        data_dir: &Path,
        session: &str,
        root: &Path,
        limits: Limits,
    ) -> Result<Checkpoints, OpenError> {
        if !plain_session_id(session) {
            return Err(OpenError::BadSession(session.to_string()));
        }
        let root = root.canonicalize().map_err(|error| OpenError::Root {
            root: root.to_path_buf(),
            error,
        })?;
        let base = workspace_dir(data_dir, &root);
        let log_path = base.join("sessions").join(format!("{session}.jsonl"));
        let mut checkpoints = Checkpoints {
            store: ObjectStore::new(base.join("objects")),
            cache: StatCache::load(base.join("index.json")),
            root,
            log_path,
            limits,
            records: Vec::new(),
            change_sets: Vec::new(),
            current: Tree::new(),
            stored: 0,
            open_turn: None,
            undoable: Vec::new(),
            redoable: Vec::new(),
            noticed: HashSet::new(),
            created: Vec::new(),
        };
        checkpoints.replay()?;
        // Humans (and `uji checkpoints`) can tell which folder this is.
        let _ = std::fs::create_dir_all(&base);
        let _ = std::fs::write(
            base.join("workspace"),
            checkpoints.root.as_os_str().as_encoded_bytes(),
        );
        Ok(checkpoints)
    }

    fn replay(&mut self) -> Result<(), OpenError> {
        let log_error = |error| OpenError::Log {
            path: self.log_path.clone(),
            error,
        };
        log::heal(&self.log_path).map_err(log_error)?;
        let records = log::read(&self.log_path).map_err(|error| OpenError::Log {
            path: self.log_path.clone(),
            error,
        })?;
        for record in records {
            match record {
                Record::Header { root, .. } => {
                    if Path::new(&root) != self.root {
                        return Err(RestoreError::OtherWorkspace {
                            expected: root,
                            found: self.root.display().to_string(),
                        }
                        .into());
                    }
                }
                Record::Checkpoint(record) => {
                    tree::apply(&mut self.current, &record.changes);
                    self.stored += record.stored;
                    self.records.push(record);
                }
                Record::ChangeSet(set) => self.remember(set),
            }
        }
        Ok(())
    }

    /// Every checkpoint, oldest first.
    pub fn list(&self) -> Vec<CheckpointInfo> {
        self.records
            .iter()
            .map(|r| CheckpointInfo {
                id: r.id,
                turn: r.turn,
                at_ms: r.at_ms,
                reason: r.reason.clone(),
                changed: r.changes.len(),
                stored: r.stored,
                skipped: r.skipped.len(),
            })
            .collect()
    }

    /// The checkpoints taken since the last call, oldest first: every one
    /// (before a call, at a turn's end, around a restore or a `!cmd`),
    /// each with the files it could not keep that no checkpoint of the
    /// session reported before, so none is skipped silently.
    pub fn take_created(&mut self) -> Vec<Created> {
        std::mem::take(&mut self.created)
    }

    /// Every change set, oldest first.
    pub fn change_sets(&self) -> &[ChangeSet] {
        &self.change_sets
    }

    /// Bytes this session's checkpoints stored.
    pub fn stored(&self) -> u64 {
        self.stored
    }

    fn append(&self, record: &Record) -> Result<(), ScanError> {
        if !self.log_path.exists() {
            let header = Record::Header {
                version: log::VERSION,
                root: self.root.display().to_string(),
            };
            log::append(&self.log_path, &header).map_err(|error| ScanError::Log {
                path: self.log_path.clone(),
                error,
            })?;
        }
        log::append(&self.log_path, record).map_err(|error| ScanError::Log {
            path: self.log_path.clone(),
            error,
        })
    }

    /// Records the workspace as it is now, before something in turn `turn`
    /// may change it (`reason` says what). The first checkpoint of a turn
    /// starts gathering that turn's changes.
    pub fn checkpoint(&mut self, turn: u64, reason: &str) -> Result<Created, ScanError> {
        let created = self.take(turn, reason)?;
        if self.open_turn.is_none_or(|(open, _)| open != turn) {
            self.open_turn = Some((turn, created.id));
        }
        Ok(created)
    }

    /// A checkpoint that belongs to no turn's changes (a restore's, a
    /// shell command's).
    fn take(&mut self, turn: u64, reason: &str) -> Result<Created, ScanError> {
        let (found, mut skipped) = scan(&self.root, self.limits.max_files)?;
        let (mut changes, more_skipped, stored) = self.changed_since(&found)?;
        skipped.extend(more_skipped);
        let removed = removed_paths(&self.current, &found);
        for path in &removed {
            self.cache.forget(path);
        }
        changes.extend(removed.into_iter().map(|path| Change { path, state: None }));
        let id = self.records.last().map_or(1, |r| r.id + 1);
        let newly_skipped: Vec<Skipped> = skipped
            .iter()
            .filter(|s| self.noticed.insert(s.path.clone()))
            .cloned()
            .collect();
        let record = CheckpointRecord {
            id,
            turn,
            at_ms: now_ms(),
            reason: reason.to_string(),
            changes,
            skipped,
            stored,
        };
        self.append(&Record::Checkpoint(record.clone()))?;
        let created = Created {
            id,
            turn,
            reason: record.reason.clone(),
            changed: record.changes.len(),
            stored,
            newly_skipped,
        };
        tree::apply(&mut self.current, &record.changes);
        self.stored += stored;
        self.records.push(record);
        self.created.push(created.clone());
        Ok(created)
    }

    /// Before a command the user runs (`!cmd`): a checkpoint; pass its id
    /// to [`Checkpoints::after_shell`].
    pub fn before_shell(&mut self, turn: u64, command: &str) -> Result<u64, ScanError> {
        Ok(self.take(turn, &format!("!{command}"))?.id)
    }

    /// After that command: a checkpoint, and the change set of what it
    /// changed (undoable like a turn's).
    pub fn after_shell(
        &mut self,
        turn: u64,
        command: &str,
        before: u64,
    ) -> Result<Option<ChangeSet>, ScanError> {
        let after = self.take(turn, &format!("after !{command}"))?.id;
        let kind = ChangeSetKind::Shell {
            command: command.to_string(),
        };
        self.close_set(kind, before, after)
    }

    /// The found paths whose state differs from the last checkpoint's: the
    /// state from the stat cache when its stats say the file is unchanged
    /// (compared in place: most files are, and nothing is copied for
    /// them), else read (on every core), kept and remembered.
    fn changed_since(
        &mut self,
        found: &[Found],
    ) -> Result<(Vec<Change>, Vec<Skipped>, u64), ScanError> {
        let mut changes = Vec::new();
        let mut to_read = Vec::new();
        for one in found {
            match self.cache.trusted(one) {
                Some(state) if self.current.get(&one.path) == Some(state) => {}
                Some(state) => changes.push(Change {
                    path: one.path.clone(),
                    state: Some(state.clone()),
                }),
                None => to_read.push(one),
            }
        }
        let stored = AtomicU64::new(0);
        let read = read_in_parallel(
            &self.root,
            &to_read,
            &self.store,
            self.limits,
            self.stored,
            &stored,
        );
        let seen = now_ms();
        let mut skipped = Vec::new();
        for (one, state) in to_read.iter().zip(read) {
            let state = state?;
            if let FileState::Skipped { why, .. } = &state {
                skipped.push(Skipped {
                    path: one.path.clone(),
                    why: why.clone(),
                });
            } else {
                self.cache.remember(one, state.clone(), seen);
            }
            if self.current.get(&one.path) != Some(&state) {
                changes.push(Change {
                    path: one.path.clone(),
                    state: Some(state),
                });
            }
        }
        Ok((changes, skipped, stored.into_inner()))
    }

    /// Ends turn `turn`: a last checkpoint, and the turn's change set when
    /// it changed files. Saves the stat cache.
    pub fn end_turn(&mut self, turn: u64) -> Result<Option<ChangeSet>, ScanError> {
        let Some((open, start)) = self.open_turn else {
            return Ok(None);
        };
        if open != turn {
            self.open_turn = None;
            return Ok(None);
        }
        let end = self.checkpoint(turn, "turn end")?.id;
        self.open_turn = None;
        self.close_set(ChangeSetKind::Turn { turn }, start, end)
    }

    /// Ends something checkpointed at `from` and `to` (a turn, a `!cmd`, a
    /// restore): saves the stat cache and records the change set of what
    /// changed between them, when anything did.
    fn close_set(
        &mut self,
        kind: ChangeSetKind,
        from: u64,
        to: u64,
    ) -> Result<Option<ChangeSet>, ScanError> {
        self.cache.save();
        let paths = self.paths_between(from, to);
        if paths.is_empty() {
            return Ok(None);
        }
        self.record_set(kind, from, to, paths).map(Some)
    }

    fn record_set(
        &mut self,
        kind: ChangeSetKind,
        from: u64,
        to: u64,
        paths: Vec<String>,
    ) -> Result<ChangeSet, ScanError> {
        let set = ChangeSet {
            id: self.change_sets.last().map_or(1, |s| s.id + 1),
            kind,
            from,
            to,
            at_ms: now_ms(),
            paths,
        };
        self.append(&Record::ChangeSet(set.clone()))?;
        self.remember(set.clone());
        Ok(set)
    }

    /// Keeps `set` and moves the undo and redo stacks as it says.
    fn remember(&mut self, set: ChangeSet) {
        match &set.kind {
            ChangeSetKind::Turn { .. } | ChangeSetKind::Shell { .. } => {
                self.undoable.push(set.id);
                self.redoable.clear();
            }
            ChangeSetKind::Undo { of } => {
                self.undoable.retain(|id| id != of);
                self.redoable.push(set.id);
            }
            ChangeSetKind::Redo { of } => {
                self.redoable.retain(|id| id != of);
                self.undoable.push(set.id);
            }
            ChangeSetKind::Rewind { reverted, .. } => {
                self.undoable.retain(|id| !reverted.contains(id));
                self.redoable.push(set.id);
            }
        }
        self.change_sets.push(set);
    }

    /// The tree at checkpoint `id`.
    fn tree_at(&self, id: u64) -> Tree {
        let mut tree = Tree::new();
        for record in self.records.iter().take_while(|r| r.id <= id) {
            tree::apply(&mut tree, &record.changes);
        }
        tree
    }

    /// Paths whose state differs between checkpoints `from` and `to`.
    fn paths_between(&self, from: u64, to: u64) -> Vec<String> {
        let touched: BTreeSet<&str> = self
            .records
            .iter()
            .filter(|r| r.id > from && r.id <= to)
            .flat_map(|r| r.changes.iter().map(|c| c.path.as_str()))
            .collect();
        let (before, after) = (self.tree_at(from), self.tree_at(to));
        touched
            .into_iter()
            .filter(|p| before.get(*p) != after.get(*p))
            .map(str::to_string)
            .collect()
    }

    fn set(&self, id: u64) -> Option<&ChangeSet> {
        self.change_sets.iter().find(|s| s.id == id)
    }

    /// The plan that reverts change set `set`: its paths back to how they
    /// were at its start.
    fn plan_revert(&self, set: &ChangeSet, kind: ChangeSetKind, title: String) -> Plan {
        let (want, left) = (self.tree_at(set.from), self.tree_at(set.to));
        self.plan_paths(&set.paths, &want, &left, kind, title)
    }

    fn plan_paths(
        &self,
        paths: &[String],
        want: &Tree,
        left: &Tree,
        kind: ChangeSetKind,
        title: String,
    ) -> Plan {
        let files = paths
            .iter()
            .filter_map(|path| {
                let now = restore::current_state(&self.root, path);
                restore::plan_file(path, want.get(path), left.get(path), now.as_ref())
            })
            .collect();
        Plan { title, files, kind }
    }

    /// `/undo`: the last turn (or redo) not undone, reverted.
    pub fn plan_undo(&self) -> Result<Plan, RestoreError> {
        let set = self
            .undoable
            .last()
            .and_then(|id| self.set(*id))
            .ok_or(RestoreError::NothingToUndo)?;
        let title = format!("undo of {}", self.describe(set));
        Ok(self.plan_revert(set, ChangeSetKind::Undo { of: set.id }, title))
    }

    /// `/redo`: the last undo (or rewind) taken back.
    pub fn plan_redo(&self) -> Result<Plan, RestoreError> {
        let set = self
            .redoable
            .last()
            .and_then(|id| self.set(*id))
            .ok_or(RestoreError::NothingToRedo)?;
        let title = format!("redo: taking back the {}", self.describe(set));
        Ok(self.plan_revert(set, ChangeSetKind::Redo { of: set.id }, title))
    }

    /// `uji undo --turn N`: turn `turn`'s changes reverted.
    pub fn plan_turn(&self, turn: u64) -> Result<Plan, RestoreError> {
        let set = self
            .change_sets
            .iter()
            .rev()
            .find(|s| s.kind == ChangeSetKind::Turn { turn })
            .ok_or(RestoreError::NoSuchTurn(turn))?;
        let title = format!("undo of turn {turn}");
        Ok(self.plan_revert(set, ChangeSetKind::Undo { of: set.id }, title))
    }

    /// `/rewind`: every file the turns from `turn` on changed (and did not
    /// undo) back to how it was before turn `turn`.
    pub fn plan_rewind(&self, turn: u64) -> Result<Plan, RestoreError> {
        let undoable: Vec<&ChangeSet> = self
            .undoable
            .iter()
            .filter_map(|id| self.set(*id))
            .collect();
        // Where that turn's changes (or the first later turn's) began;
        // every change not undone since then goes back, `!cmd`s' too.
        let start = undoable
            .iter()
            .filter(|s| matches!(s.kind, ChangeSetKind::Turn { turn: t } if t >= turn))
            .map(|s| s.from)
            .min();
        let sets: Vec<&ChangeSet> = undoable
            .into_iter()
            .filter(|s| start.is_some_and(|start| s.from >= start))
            .collect();
        let kind = ChangeSetKind::Rewind {
            to_turn: turn,
            reverted: sets.iter().map(|s| s.id).collect(),
        };
        let title = format!("code back to before turn {turn}");
        let (Some(from), Some(to)) = (start, self.records.last().map(|r| r.id)) else {
            return Ok(Plan {
                title,
                files: Vec::new(),
                kind,
            });
        };
        let paths: BTreeSet<String> = sets.iter().flat_map(|s| s.paths.clone()).collect();
        let paths: Vec<String> = paths.into_iter().collect();
        let (want, left) = (self.tree_at(from), self.tree_at(to));
        Ok(self.plan_paths(&paths, &want, &left, kind, title))
    }

    fn describe(&self, set: &ChangeSet) -> String {
        match &set.kind {
            ChangeSetKind::Turn { turn } => format!("turn {turn}"),
            ChangeSetKind::Shell { command } => format!("!{command}"),
            ChangeSetKind::Undo { of } => match self.set(*of) {
                Some(inner) => format!("undo of {}", self.describe(inner)),
                None => "an undo".to_string(),
            },
            ChangeSetKind::Redo { of } => match self.set(*of) {
                Some(inner) => format!("redo of the {}", self.describe(inner)),
                None => "a redo".to_string(),
            },
            ChangeSetKind::Rewind { to_turn, .. } => format!("rewind to before turn {to_turn}"),
        }
    }

    /// Does `plan`: a checkpoint before (so the restore can be reverted),
    /// each file put back (a conflict only when `overwrite`), a checkpoint
    /// after, and the change set that records it.
    pub fn apply(&mut self, plan: &Plan, turn: u64, overwrite: bool) -> Result<Applied, ScanError> {
        let before = self.take(turn, &format!("before {}", plan.title))?.id;
        let mut applied = Applied::default();
        for file in &plan.files {
            if let FileAction::Cannot { why } = &file.action {
                applied.left.push((file.path.clone(), why.clone()));
                continue;
            }
            if let (Some(conflict), false) = (&file.conflict, overwrite) {
                applied.left.push((file.path.clone(), conflict.why.clone()));
                continue;
            }
            match restore::apply_file(&self.root, &self.store, file) {
                Ok(()) if file.action == FileAction::Remove => {
                    applied.removed.push(file.path.clone())
                }
                Ok(()) => applied.restored.push(file.path.clone()),
                Err(why) => applied.failed.push((file.path.clone(), why)),
            }
        }
        let after = self.take(turn, &format!("after {}", plan.title))?.id;
        applied.change_set = self
            .close_set(plan.kind.clone(), before, after)?
            .map(|set| set.id);
        Ok(applied)
    }
}

/// The paths of `current` that `found` (sorted by path) no longer has:
/// one walk over both, in order.
fn removed_paths(current: &Tree, found: &[Found]) -> Vec<String> {
    let mut removed = Vec::new();
    let mut found = found.iter().map(|f| f.path.as_str()).peekable();
    for path in current.keys() {
        while found.next_if(|f| *f < path.as_str()).is_some() {}
        if found.peek() != Some(&path.as_str()) {
            removed.push(path.clone());
        }
    }
    removed
}

/// Reads, addresses and keeps each of `found` on every core; a result per
/// file, in order.
fn read_in_parallel(
    root: &Path,
    found: &[&Found],
    store: &ObjectStore,
    limits: Limits,
    stored_before: u64,
    stored: &AtomicU64,
) -> Vec<Result<FileState, ScanError>> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8)
        .min(found.len().div_ceil(64).max(1));
    let read_one = |one: &Found| {
        read_one(
            &root.join(&one.path),
            one,
            store,
            limits,
            stored_before,
            stored,
        )
    };
    if threads <= 1 {
        return found.iter().map(|one| read_one(one)).collect();
    }
    let part = found.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let handles: Vec<_> = found
            .chunks(part)
            .map(|chunk| {
                let read_one = &read_one;
                (
                    chunk,
                    scope.spawn(move || chunk.iter().map(|one| read_one(one)).collect::<Vec<_>>()),
                )
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|(chunk, handle)| {
                // Reading has nothing that panics on a file's content; if
                // a thread did, its share is read here rather than lost.
                handle
                    .join()
                    .unwrap_or_else(|_| chunk.iter().map(|one| read_one(one)).collect())
            })
            .collect()
    })
}

fn read_one(
    full: &Path,
    one: &Found,
    store: &ObjectStore,
    limits: Limits,
    stored_before: u64,
    stored: &AtomicU64,
) -> Result<FileState, ScanError> {
    if one.link {
        return Ok(match std::fs::read_link(full) {
            Ok(target) => FileState::Link {
                target: target.to_string_lossy().into_owned(),
            },
            Err(e) => skipped(one, format!("cannot be read: {e}")),
        });
    }
    if one.size > limits.max_file {
        return Ok(skipped(
            one,
            format!(
                "{}, over the {} a checkpoint keeps of one file",
                mib(one.size),
                mib(limits.max_file)
            ),
        ));
    }
    let bytes = match std::fs::read(full) {
        Ok(bytes) => bytes,
        Err(e) => return Ok(skipped(one, format!("cannot be read: {e}"))),
    };
    let hash = address_of(&bytes);
    if !store.has(&hash) {
        let so_far = stored_before + stored.load(Ordering::Relaxed);
        if so_far + bytes.len() as u64 > limits.max_session {
            return Ok(skipped(
                one,
                format!(
                    "this session's checkpoints reached their {}",
                    mib(limits.max_session)
                ),
            ));
        }
        stored.fetch_add(store.put(&hash, &bytes)?, Ordering::Relaxed);
    }
    Ok(FileState::File {
        hash,
        mode: one.mode,
        size: bytes.len() as u64,
    })
}

/// `bytes` in MiB, as the limits are set (`max_file_mb = 10` is 10 MiB):
/// whole when they are, else to a tenth.
fn mib(bytes: u64) -> String {
    const MIB: u64 = 1 << 20;
    if bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else {
        format!("{:.1} MiB", bytes as f64 / MIB as f64)
    }
}

fn skipped(one: &Found, why: String) -> FileState {
    FileState::Skipped {
        size: one.size,
        why,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use std::fs;
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    struct Fixture {
        _dir: tempfile::TempDir,
        data: PathBuf,
        root: PathBuf,
    }

    fn fixture() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let (data, root) = (dir.path().join("data"), dir.path().join("work"));
        fs::create_dir_all(root.join("src")).unwrap();
        fs::write(root.join("src/a.rs"), "fn a() {}\n").unwrap();
        fs::write(root.join("b.txt"), "bee\n").unwrap();
        fs::write(root.join("run.sh"), "#!/bin/sh\n").unwrap();
        fs::set_permissions(root.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
        fs::write(root.join("gone.md"), "to be removed\n").unwrap();
        Fixture {
            _dir: dir,
            data,
            root,
        }
    }

    fn open(f: &Fixture) -> Checkpoints {
        Checkpoints::open(&f.data, "s1", &f.root, Limits::default()).unwrap()
    }

    fn read(f: &Fixture, path: &str) -> Option<String> {
        fs::read_to_string(f.root.join(path)).ok()
    }

    /// A turn that edits one file, writes another, changes a third in
    /// place and removes a fourth, checkpointed before each call.
    fn a_turn(f: &Fixture, checkpoints: &mut Checkpoints, turn: u64) -> ChangeSet {
        checkpoints.checkpoint(turn, "edit_file src/a.rs").unwrap();
        fs::write(f.root.join("src/a.rs"), "fn a() { changed() }\n").unwrap();
        checkpoints.checkpoint(turn, "write_file new.rs").unwrap();
        fs::write(f.root.join("new.rs"), "new\n").unwrap();
        checkpoints
            .checkpoint(turn, "run_command sed -i ...")
            .unwrap();
        fs::write(f.root.join("run.sh"), "#!/bin/sh\necho changed\n").unwrap();
        fs::remove_file(f.root.join("gone.md")).unwrap();
        checkpoints
            .end_turn(turn)
            .unwrap()
            .expect("the turn changed files")
    }

    #[test]
    fn undo_puts_back_every_file_a_turn_changed_with_its_mode_and_redo_brings_the_change_back() {
        let f = fixture();
        let mut checkpoints = open(&f);
        let set = a_turn(&f, &mut checkpoints, 1);
        assert_eq!(set.paths, ["gone.md", "new.rs", "run.sh", "src/a.rs"]);
        let plan = checkpoints.plan_undo().unwrap();
        assert_eq!(plan.files.len(), 4);
        assert_eq!(plan.conflicts().count(), 0);
        let applied = checkpoints.apply(&plan, 1, false).unwrap();
        assert_eq!(applied.removed, ["new.rs"]);
        assert_eq!(read(&f, "src/a.rs").as_deref(), Some("fn a() {}\n"));
        assert_eq!(read(&f, "run.sh").as_deref(), Some("#!/bin/sh\n"));
        let mode = fs::metadata(f.root.join("run.sh"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
        assert_eq!(read(&f, "gone.md").as_deref(), Some("to be removed\n"));
        assert_eq!(read(&f, "new.rs"), None);
        // Redo is the undo of the undo.
        let redo = checkpoints.plan_redo().unwrap();
        checkpoints.apply(&redo, 1, false).unwrap();
        assert_eq!(
            read(&f, "src/a.rs").as_deref(),
            Some("fn a() { changed() }\n")
        );
        assert_eq!(read(&f, "new.rs").as_deref(), Some("new\n"));
        assert_eq!(read(&f, "gone.md"), None);
        // And the redo can be undone again.
        let again = checkpoints.plan_undo().unwrap();
        checkpoints.apply(&again, 1, false).unwrap();
        assert_eq!(read(&f, "src/a.rs").as_deref(), Some("fn a() {}\n"));
    }

    #[test]
    fn a_mode_change_alone_is_recorded_and_undo_puts_the_old_mode_back() {
        let f = fixture();
        // Long settled, so only its stats can tell it changed.
        let script = f.root.join("b.txt");
        let hour_ago = SystemTime::now() - std::time::Duration::from_secs(3600);
        fs::File::options()
            .write(true)
            .open(&script)
            .unwrap()
            .set_modified(hour_ago)
            .unwrap();
        let mut checkpoints = open(&f);
        checkpoints
            .checkpoint(1, "run_command chmod +x b.txt")
            .unwrap();
        fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
        let set = checkpoints.end_turn(1).unwrap().expect("the mode changed");
        assert_eq!(set.paths, ["b.txt"]);
        let plan = checkpoints.plan_undo().unwrap();
        checkpoints.apply(&plan, 1, false).unwrap();
        let mode = fs::metadata(&script).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o644);
        assert_eq!(read(&f, "b.txt").as_deref(), Some("bee\n"));
    }

    #[test]
    fn a_file_changed_since_the_turn_is_a_conflict_left_alone_unless_overwritten() {
        let f = fixture();
        let mut checkpoints = open(&f);
        a_turn(&f, &mut checkpoints, 1);
        fs::write(f.root.join("src/a.rs"), "the user's own edit\n").unwrap();
        let plan = checkpoints.plan_undo().unwrap();
        let conflicts: Vec<&str> = plan.conflicts().map(|c| c.path.as_str()).collect();
        assert_eq!(conflicts, ["src/a.rs"]);
        let applied = checkpoints.apply(&plan, 1, false).unwrap();
        assert_eq!(applied.left.len(), 1);
        assert_eq!(
            read(&f, "src/a.rs").as_deref(),
            Some("the user's own edit\n")
        );
        assert_eq!(
            read(&f, "gone.md").as_deref(),
            Some("to be removed\n"),
            "the others were restored"
        );
    }

    #[test]
    fn the_log_brings_everything_back_after_a_restart() {
        let f = fixture();
        let mut checkpoints = open(&f);
        a_turn(&f, &mut checkpoints, 1);
        drop(checkpoints);
        let reopened = open(&f);
        assert_eq!(reopened.change_sets().len(), 1);
        let plan = reopened.plan_undo().unwrap();
        assert_eq!(plan.files.len(), 4);
        assert_eq!(plan.title, "undo of turn 1");
    }

    #[test]
    fn a_log_of_another_workspace_is_refused() {
        let f = fixture();
        let mut checkpoints = open(&f);
        a_turn(&f, &mut checkpoints, 1);
        let log = checkpoints.log_path.clone();
        let other = f.root.parent().unwrap().join("other");
        fs::create_dir_all(&other).unwrap();
        let moved =
            workspace_dir(&f.data, &other.canonicalize().unwrap()).join("sessions/s1.jsonl");
        fs::create_dir_all(moved.parent().unwrap()).unwrap();
        fs::copy(&log, &moved).unwrap();
        let refused = Checkpoints::open(&f.data, "s1", &other, Limits::default());
        assert!(matches!(
            refused,
            Err(OpenError::Restore(RestoreError::OtherWorkspace { .. }))
        ));
    }

    #[test]
    fn a_file_over_the_limit_is_skipped_once_with_a_notice_and_never_restored_from_nothing() {
        let f = fixture();
        fs::write(f.root.join("big.bin"), vec![7u8; 4096]).unwrap();
        let limits = Limits {
            max_file: 1024,
            ..Limits::default()
        };
        let mut checkpoints = Checkpoints::open(&f.data, "s1", &f.root, limits).unwrap();
        let first = checkpoints.checkpoint(1, "run_command x").unwrap();
        assert_eq!(first.newly_skipped.len(), 1);
        assert_eq!(first.newly_skipped[0].path, "big.bin");
        fs::write(f.root.join("big.bin"), vec![8u8; 4000]).unwrap();
        let second = checkpoints.checkpoint(1, "run_command y").unwrap();
        assert!(second.newly_skipped.is_empty(), "told once");
        checkpoints.end_turn(1).unwrap();
        let plan = checkpoints.plan_undo().unwrap();
        assert!(matches!(plan.files[0].action, FileAction::Cannot { .. }));
        checkpoints.apply(&plan, 1, false).unwrap();
        assert_eq!(fs::read(f.root.join("big.bin")).unwrap(), vec![8u8; 4000]);
    }

    #[test]
    fn sizes_in_notices_are_mib_as_the_limits_are_set() {
        assert_eq!(mib(500 << 20), "500 MiB");
        assert_eq!(mib(50 * (1 << 20) + 4), "50.0 MiB");
        assert_eq!(mib(3 << 19), "1.5 MiB");
    }

    #[test]
    fn past_the_session_limit_new_content_is_skipped_with_a_notice_and_kept_content_stays() {
        let f = fixture();
        let limits = Limits {
            max_session: 1 << 20,
            ..Limits::default()
        };
        let mut checkpoints = Checkpoints::open(&f.data, "s1", &f.root, limits).unwrap();
        checkpoints.checkpoint(1, "run_command make").unwrap();
        fs::write(f.root.join("big.bin"), vec![9u8; 3 << 19]).unwrap();
        fs::write(f.root.join("b.txt"), "changed\n").unwrap();
        checkpoints.end_turn(1).unwrap();
        let created = checkpoints.take_created();
        assert_eq!(created.len(), 2, "the turn's first and last checkpoints");
        assert_eq!(created[1].reason, "turn end");
        let skipped = &created[1].newly_skipped;
        assert_eq!(skipped.len(), 1, "{skipped:?}");
        assert_eq!(skipped[0].path, "big.bin");
        assert_eq!(
            skipped[0].why,
            "this session's checkpoints reached their 1 MiB"
        );
        assert!(checkpoints.take_created().is_empty(), "each is told once");
        // What was kept before the limit still comes back; what was not
        // kept is not thrown away (a redo could not bring it back).
        let plan = checkpoints.plan_undo().unwrap();
        let applied = checkpoints.apply(&plan, 1, false).unwrap();
        assert_eq!(read(&f, "b.txt").as_deref(), Some("bee\n"));
        assert_eq!(applied.left.len(), 1);
        assert_eq!(applied.left[0].0, "big.bin");
        assert_eq!(fs::read(f.root.join("big.bin")).unwrap().len(), 3 << 19);
    }

    #[test]
    fn ignored_files_are_never_read_and_unchanged_files_store_nothing_new() {
        let f = fixture();
        fs::create_dir_all(f.root.join("target")).unwrap();
        fs::write(f.root.join(".gitignore"), "target/\n").unwrap();
        fs::write(f.root.join("target/out"), "built").unwrap();
        let mut checkpoints = open(&f);
        let first = checkpoints.checkpoint(1, "x").unwrap();
        assert!(
            checkpoints
                .current
                .keys()
                .all(|p| !p.starts_with("target/"))
        );
        assert_eq!(first.changed, checkpoints.current.len());
        let again = checkpoints.checkpoint(1, "y").unwrap();
        assert_eq!((again.changed, again.stored), (0, 0));
    }

    #[test]
    fn a_shell_command_between_turns_is_undone_on_its_own() {
        let f = fixture();
        let mut checkpoints = open(&f);
        a_turn(&f, &mut checkpoints, 1);
        let before = checkpoints.before_shell(1, "rm b.txt").unwrap();
        fs::remove_file(f.root.join("b.txt")).unwrap();
        let set = checkpoints
            .after_shell(1, "rm b.txt", before)
            .unwrap()
            .unwrap();
        assert_eq!(set.paths, ["b.txt"]);
        let plan = checkpoints.plan_undo().unwrap();
        assert_eq!(plan.title, "undo of !rm b.txt");
        checkpoints.apply(&plan, 1, false).unwrap();
        assert_eq!(read(&f, "b.txt").as_deref(), Some("bee\n"));
        assert_eq!(
            read(&f, "src/a.rs").as_deref(),
            Some("fn a() { changed() }\n"),
            "the turn before it is untouched"
        );
        assert_eq!(checkpoints.plan_undo().unwrap().title, "undo of turn 1");
    }

    #[test]
    fn rewind_takes_the_code_back_to_before_a_turn_and_keeps_earlier_turns() {
        let f = fixture();
        let mut checkpoints = open(&f);
        for turn in 1..=3 {
            checkpoints.checkpoint(turn, "write_file n.txt").unwrap();
            fs::write(f.root.join("n.txt"), format!("turn {turn}\n")).unwrap();
            checkpoints.end_turn(turn).unwrap();
        }
        // A command the user ran after turn 2 goes back too.
        let before = checkpoints.before_shell(3, "rm b.txt").unwrap();
        fs::remove_file(f.root.join("b.txt")).unwrap();
        checkpoints.after_shell(3, "rm b.txt", before).unwrap();
        let plan = checkpoints.plan_rewind(2).unwrap();
        checkpoints.apply(&plan, 3, false).unwrap();
        assert_eq!(read(&f, "n.txt").as_deref(), Some("turn 1\n"));
        assert_eq!(read(&f, "b.txt").as_deref(), Some("bee\n"));
        let redo = checkpoints.plan_redo().unwrap();
        checkpoints.apply(&redo, 3, false).unwrap();
        assert_eq!(read(&f, "n.txt").as_deref(), Some("turn 3\n"));
        assert_eq!(read(&f, "b.txt"), None);
    }
}
