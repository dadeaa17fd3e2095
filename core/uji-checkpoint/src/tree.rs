//! What a workspace held at a checkpoint: each path (relative to the root,
//! `/`-separated) with its state. A path not in the tree did not exist.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One path's state at a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum FileState {
    /// A regular file: its content address, permission bits and size.
    File { hash: String, mode: u32, size: u64 },
    /// A symbolic link and where it points (as written, not followed).
    Link { target: String },
    /// Present, but its content was not kept: over a limit (`why`).
    Skipped { size: u64, why: String },
}

impl FileState {
    /// The content address the state needs kept, if any.
    pub fn hash(&self) -> Option<&str> {
        match self {
            FileState::File { hash, .. } => Some(hash),
            _ => None,
        }
    }
}

/// Every path's state.
pub type Tree = BTreeMap<String, FileState>;

/// One path's change at a checkpoint: its new state, or `None` when it
/// was removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<FileState>,
}

/// `tree` with `changes` applied.
pub fn apply(tree: &mut Tree, changes: &[Change]) {
    for change in changes {
        match &change.state {
            Some(state) => {
                tree.insert(change.path.clone(), state.clone());
            }
            None => {
                tree.remove(&change.path);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(hash: &str) -> FileState {
        FileState::File {
            hash: hash.into(),
            mode: 0o644,
            size: 1,
        }
    }

    #[test]
    fn changes_set_and_remove_paths() {
        let mut tree: Tree = [("a".into(), file("1")), ("b".into(), file("2"))].into();
        let changes = [
            Change {
                path: "b".into(),
                state: None,
            },
            Change {
                path: "c".into(),
                state: Some(file("3")),
            },
        ];
        apply(&mut tree, &changes);
        let expected: Tree = [("a".into(), file("1")), ("c".into(), file("3"))].into();
        assert_eq!(tree, expected);
    }
}
