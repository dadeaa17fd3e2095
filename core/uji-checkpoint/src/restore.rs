//! Putting files back: what a restore will do (a [`Plan`] a person can be
//! shown first) and doing it, confined to the workspace.
//!
//! Every path is relative and plain (no `..`, no root); each folder on the
//! way to it must be a real folder inside the root (a link on the way is
//! refused, so nothing is written through one), and a file is written to
//! a temporary name in its folder and renamed into place, which replaces a
//! link there instead of following it.

use std::fs;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use crate::object::{ObjectStore, StoreError, address_of};
use crate::tree::FileState;

/// What a restore does to one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FileAction {
    /// Write the kept content (and mode) over the file.
    Restore,
    /// The file is gone: write it again.
    Recreate,
    /// The file did not exist then: remove it.
    Remove,
    /// Its content was not kept (over a limit) or cannot be put back.
    Cannot { why: String },
}

/// A file that is no longer what the change left: someone (an editor, a
/// person) changed it since.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Conflict {
    pub why: String,
}

/// One file of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlannedFile {
    pub path: String,
    pub action: FileAction,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub conflict: Option<Conflict>,
    /// The state to put back (`None`: the file should not exist).
    #[serde(skip)]
    pub(crate) want: Option<FileState>,
    /// The state on disk when the plan was made, so two plans differ when
    /// the file changed in between (a person deciding, an editor saving).
    #[serde(skip)]
    pub(crate) now: Option<FileState>,
}

/// What a restore will do, file by file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Plan {
    /// What is restored, in words ("undo of turn 3").
    pub title: String,
    pub files: Vec<PlannedFile>,
    #[serde(skip)]
    pub(crate) kind: crate::checkpoints::ChangeSetKind,
}

impl Plan {
    /// What the restore records itself as (an undo, a redo, a rewind).
    pub fn kind(&self) -> &crate::checkpoints::ChangeSetKind {
        &self.kind
    }

    pub fn conflicts(&self) -> impl Iterator<Item = &PlannedFile> {
        self.files.iter().filter(|f| f.conflict.is_some())
    }
}

/// What a restore did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Applied {
    /// Files written back or recreated.
    pub restored: Vec<String>,
    pub removed: Vec<String>,
    /// Left as they were: a conflict not overwritten, or content not kept.
    pub left: Vec<(String, String)>,
    /// Files that could not be changed, and why.
    pub failed: Vec<(String, String)>,
    /// The change set the restore recorded (to undo it).
    pub change_set: Option<u64>,
}

/// Why a restore could not start.
#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    #[error(
        "these checkpoints belong to the workspace {expected}, not {found}; run uji in {expected} to restore them"
    )]
    OtherWorkspace { expected: String, found: String },
    #[error("nothing to undo: no turn of this session changed files (or every change was undone)")]
    NothingToUndo,
    #[error("nothing to redo: no undo to take back since the last change")]
    NothingToRedo,
    #[error(
        "turn {0} changed no files in this session; `uji checkpoints` lists the turns that did"
    )]
    NoSuchTurn(u64),
    #[error(transparent)]
    Scan(#[from] crate::scan::ScanError),
}

/// The state of `path` under `root` now (content address read for files).
pub(crate) fn current_state(root: &Path, path: &str) -> Option<FileState> {
    let full = root.join(path);
    let meta = fs::symlink_metadata(&full).ok()?;
    if meta.file_type().is_symlink() {
        let target = fs::read_link(&full).ok()?;
        return Some(FileState::Link {
            target: target.to_string_lossy().into_owned(),
        });
    }
    if !meta.is_file() {
        return None;
    }
    let bytes = fs::read(&full).ok()?;
    Some(FileState::File {
        hash: address_of(&bytes),
        mode: meta.mode() & 0o7777,
        size: meta.len(),
    })
}

/// Whether two states hold the same thing (a skipped file matches a file
/// of its size: its content is unknown).
pub(crate) fn same(a: Option<&FileState>, b: Option<&FileState>) -> bool {
    match (a, b) {
        (Some(FileState::Skipped { size, .. }), Some(FileState::File { size: s, .. }))
        | (Some(FileState::File { size: s, .. }), Some(FileState::Skipped { size, .. })) => {
            size == s
        }
        _ => a == b,
    }
}

/// The plan for one path: from `want` (then), `left` (what the change
/// left) and `now` (on disk).
pub(crate) fn plan_file(
    path: &str,
    want: Option<&FileState>,
    left: Option<&FileState>,
    now: Option<&FileState>,
) -> Option<PlannedFile> {
    if same(want, now) {
        return None;
    }
    let action = match (want, left, now) {
        (Some(FileState::Skipped { why, .. }), _, _) => FileAction::Cannot {
            why: format!("its content was not kept ({why})"),
        },
        // Replacing or removing content no checkpoint kept would lose it
        // for good: a redo could not bring it back.
        (_, Some(FileState::Skipped { why, .. }), Some(_)) if same(left, now) => {
            FileAction::Cannot {
                why: format!(
                    "what it holds now was not kept ({why}), so putting it back would lose that for good; change it yourself"
                ),
            }
        }
        (None, _, _) => FileAction::Remove,
        (Some(_), _, None) => FileAction::Recreate,
        (Some(_), _, Some(_)) => FileAction::Restore,
    };
    let conflict = (!same(left, now)).then(|| Conflict {
        why: match now {
            None => "it was removed since".to_string(),
            Some(_) => "it was changed since".to_string(),
        },
    });
    Some(PlannedFile {
        path: path.to_string(),
        action,
        conflict,
        want: want.cloned(),
        now: now.cloned(),
    })
}

/// Puts `file` back under `root`.
pub(crate) fn apply_file(
    root: &Path,
    store: &ObjectStore,
    file: &PlannedFile,
) -> Result<(), String> {
    let folder = confined_folder(root, &file.path)?;
    let name = Path::new(&file.path)
        .file_name()
        .ok_or_else(|| format!("{} names no file", file.path))?;
    let target = folder.join(name);
    match &file.want {
        None => remove(&target),
        Some(FileState::File { hash, mode, .. }) => {
            let bytes = store.get(hash).map_err(|e: StoreError| e.to_string())?;
            write_file(&folder, &target, &bytes, *mode)
        }
        Some(FileState::Link { target: to }) => write_link(&folder, &target, to),
        Some(FileState::Skipped { why, .. }) => Err(format!("its content was not kept ({why})")),
    }
}

/// The folder `path` goes in, made where missing: every step a real
/// folder inside `root` (a link or a file on the way is refused).
fn confined_folder(root: &Path, path: &str) -> Result<PathBuf, String> {
    let relative = Path::new(path);
    let plain = relative
        .components()
        .all(|c| matches!(c, Component::Normal(_)));
    if !plain || path.is_empty() {
        return Err(format!(
            "{path} is not a plain path inside the workspace; it was not restored"
        ));
    }
    let mut folder = root.to_path_buf();
    let steps: Vec<_> = relative.components().collect();
    for step in &steps[..steps.len() - 1] {
        folder.push(step);
        match fs::symlink_metadata(&folder) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                return Err(format!(
                    "{} is a link or a file, not a folder, so {path} was not restored through it",
                    folder.display()
                ));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                fs::create_dir(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
            }
            Err(e) => return Err(format!("{}: {e}", folder.display())),
        }
    }
    Ok(folder)
}

fn remove(target: &Path) -> Result<(), String> {
    match fs::symlink_metadata(target) {
        Ok(meta) if meta.is_dir() => Err(format!(
            "{} is a folder now; it was left in place",
            target.display()
        )),
        Ok(_) => fs::remove_file(target).map_err(|e| format!("{}: {e}", target.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("{}: {e}", target.display())),
    }
}

fn write_file(folder: &Path, target: &Path, bytes: &[u8], mode: u32) -> Result<(), String> {
    let shown = |e: &dyn std::fmt::Display| format!("{}: {e}", target.display());
    let (temporary, mut file) = crate::object::tempfile_in(folder).map_err(|e| shown(&e))?;
    let written = file
        .write_all(bytes)
        .and_then(|()| file.set_permissions(fs::Permissions::from_mode(mode)))
        .and_then(|()| file.sync_all());
    drop(file);
    if let Err(e) = written.and_then(|()| replace(&temporary, target)) {
        let _ = fs::remove_file(&temporary);
        return Err(shown(&e));
    }
    Ok(())
}

fn write_link(folder: &Path, target: &Path, to: &str) -> Result<(), String> {
    let shown = |e: &dyn std::fmt::Display| format!("{}: {e}", target.display());
    let (temporary, file) = crate::object::tempfile_in(folder).map_err(|e| shown(&e))?;
    drop(file);
    let made = fs::remove_file(&temporary)
        .and_then(|()| std::os::unix::fs::symlink(to, &temporary))
        .and_then(|()| replace(&temporary, target));
    if let Err(e) = made {
        let _ = fs::remove_file(&temporary);
        return Err(shown(&e));
    }
    Ok(())
}

/// Renames `temporary` over `target`; a folder there is not replaced.
fn replace(temporary: &Path, target: &Path) -> std::io::Result<()> {
    if fs::symlink_metadata(target).is_ok_and(|m| m.is_dir()) {
        return Err(std::io::Error::other(
            "a folder is in its place; it was left",
        ));
    }
    fs::rename(temporary, target)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn planned(path: &str, want: Option<FileState>) -> PlannedFile {
        PlannedFile {
            path: path.into(),
            action: FileAction::Restore,
            conflict: None,
            want,
            now: None,
        }
    }

    fn kept(store: &ObjectStore, bytes: &[u8], mode: u32) -> FileState {
        let hash = address_of(bytes);
        store.put(&hash, bytes).unwrap();
        FileState::File {
            hash,
            mode,
            size: bytes.len() as u64,
        }
    }

    #[test]
    fn a_file_comes_back_with_its_bytes_and_mode_and_its_folders() {
        let dir = tempfile::tempdir().unwrap();
        let (root, store) = (dir.path().join("w"), ObjectStore::new(dir.path().join("o")));
        fs::create_dir(&root).unwrap();
        let state = kept(&store, b"#!/bin/sh\necho hi\n", 0o755);
        apply_file(&root, &store, &planned("bin/run.sh", Some(state.clone()))).unwrap();
        assert_eq!(current_state(&root, "bin/run.sh"), Some(state));
        apply_file(&root, &store, &planned("bin/run.sh", None)).unwrap();
        assert!(!root.join("bin/run.sh").exists());
    }

    #[test]
    fn nothing_is_written_outside_the_root_or_through_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let (root, store) = (dir.path().join("w"), ObjectStore::new(dir.path().join("o")));
        let outside = dir.path().join("outside");
        fs::create_dir_all(&root).unwrap();
        fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("escape")).unwrap();
        let state = kept(&store, b"x", 0o644);
        for path in ["../x", "/etc/x", "escape/x", "a/../../x"] {
            let result = apply_file(&root, &store, &planned(path, Some(state.clone())));
            assert!(result.is_err(), "{path} must be refused");
        }
        assert_eq!(fs::read_dir(&outside).unwrap().count(), 0);
        // A link at the file's own place is replaced, not followed.
        std::os::unix::fs::symlink(outside.join("t"), root.join("f")).unwrap();
        apply_file(&root, &store, &planned("f", Some(state.clone()))).unwrap();
        assert!(!outside.join("t").exists());
        assert_eq!(current_state(&root, "f"), Some(state));
    }

    #[test]
    fn a_plan_says_what_it_does_and_where_someone_changed_the_file_since() {
        let a = FileState::File {
            hash: "a".into(),
            mode: 0o644,
            size: 1,
        };
        let b = FileState::File {
            hash: "b".into(),
            mode: 0o644,
            size: 1,
        };
        let c = FileState::File {
            hash: "c".into(),
            mode: 0o644,
            size: 1,
        };
        let plain = plan_file("p", Some(&a), Some(&b), Some(&b)).unwrap();
        assert_eq!((plain.action, plain.conflict), (FileAction::Restore, None));
        let edited = plan_file("p", Some(&a), Some(&b), Some(&c)).unwrap();
        assert!(edited.conflict.is_some());
        assert_eq!(
            plan_file("p", None, Some(&b), Some(&b)).unwrap().action,
            FileAction::Remove
        );
        assert_eq!(
            plan_file("p", Some(&a), None, None).unwrap().action,
            FileAction::Recreate
        );
        assert!(
            plan_file("p", Some(&a), Some(&b), Some(&a)).is_none(),
            "already so"
        );
        let not_kept = FileState::Skipped {
            size: 1,
            why: "over the limit".into(),
        };
        for want in [None, Some(&a)] {
            let planned = plan_file("p", want, Some(&not_kept), Some(&b)).unwrap();
            assert!(
                matches!(&planned.action, FileAction::Cannot { why } if why.contains("not kept")),
                "content no checkpoint kept is never thrown away: {planned:?}"
            );
        }
    }
}
