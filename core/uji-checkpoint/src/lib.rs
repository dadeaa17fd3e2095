//! Checkpoints of a workspace's files, and putting them back.
//!
//! The contract (docs/checkpoints.md):
//!
//! - **What is covered**: every regular file and symbolic link under the
//!   workspace root that ripgrep would walk with hidden files included:
//!   `.gitignore`, `.ignore` and `.git/info/exclude` leave files out
//!   (whether or not the root is a git repository), the project's `.git`
//!   is never read or written. Ignored directories are not entered.
//! - **Incremental**: a file whose size, mode, modification and status
//!   change times and inode are those of the last checkpoint is not read
//!   again (a `chmod` alone is a change); its content address
//!   comes from a stat cache shared by the workspace's sessions. A file
//!   modified within [`RACY_MS`] of the cache being written is read again,
//!   since its time alone cannot tell a later change apart.
//! - **Where**: under `<data>/checkpoints/<workspace key>/`, never in the
//!   workspace: `objects/` (content-addressed by BLAKE3, LZ4-compressed,
//!   each written to a temporary name and renamed, so a crash never leaves
//!   a torn object under a real address), `index.json` (the stat cache)
//!   and `sessions/<id>.jsonl` (each session's log of checkpoints and
//!   change sets, appended one line at a time).
//! - **Limits**: a file over [`Limits::max_file`] and every new file once
//!   the session stored [`Limits::max_session`] are *skipped*: recorded as
//!   present but not kept, reported in the checkpoint's `skipped`, never
//!   silently. Restoring such a file is refused for that file.
//! - **Restoring** never writes outside the root (each path is relative,
//!   without `..`, and its parent, resolved, must lie inside the root),
//!   writes through a temporary file renamed into place (never through a
//!   link), keeps modes, recreates deleted files and removes created ones,
//!   and reports a conflict, without touching the file, where the file is
//!   no longer what the change left (someone edited it since) unless told
//!   to overwrite. A restore is itself checkpointed and recorded as a
//!   change set, so it can be reverted (undo of an undo is redo).

mod checkpoints;
mod log;
mod object;
mod prune;
mod restore;
mod scan;
mod stat_cache;
mod tree;

pub use checkpoints::{
    ChangeSet, ChangeSetKind, CheckpointInfo, Checkpoints, Created, Limits, OpenError,
};
pub use object::{ObjectStore, StoreError};
pub use prune::{KEEP, PruneReport, prune, prune_if_due, remove_session};
pub use restore::{Applied, Conflict, FileAction, Plan, PlannedFile, RestoreError};
pub use scan::{ScanError, Skipped};
pub use tree::{FileState, Tree};

/// A file modified this close to the stat cache's writing is read again at
/// the next checkpoint (git's "racy" files): a change in the same clock
/// tick would keep its time.
pub const RACY_MS: u64 = 2_000;

/// The folder under the data directory that holds every workspace's
/// checkpoints.
pub const FOLDER: &str = "checkpoints";
