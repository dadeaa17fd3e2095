//! Hard links: one file, several names. A path rule matches names, so a
//! deny rule on `secret.txt` would not see `link.txt`, a hard link to it
//! (no symlink to resolve, no canonical form to compare). For a subject
//! that is a regular file with more than one link, while the tool has deny
//! rules: an exact-path deny rule naming the same file (same device and
//! inode) denies it; a glob or regex deny rule could match a name uji
//! cannot list, so the call is unresolved (it asks; `--yes` and headless
//! deny it).

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::rules::ToolRules;

/// What the links of a subject file decide.
pub(crate) enum Linked<'p> {
    /// Deny rule `idx` of set `set` names the same file as `name`.
    Denied {
        set: &'p str,
        rules: &'p ToolRules,
        idx: usize,
        name: String,
    },
    /// The file has `links` names and a pattern deny rule might match one.
    Unresolved { links: u64 },
}

/// Looks at the file at `path` (canonical) against the deny rules of
/// `entries`; exact rules are relative to `cwd`.
pub(crate) fn check<'p>(
    path: &Path,
    cwd: &Path,
    entries: &[(&'p str, &'p ToolRules)],
) -> Option<Linked<'p>> {
    if !entries.iter().any(|(_, t)| t.has_deny_rules()) {
        return None;
    }
    let meta = fs::metadata(path).ok()?;
    if !meta.is_file() || meta.nlink() < 2 {
        return None;
    }
    let same = |name: &str| {
        fs::metadata(cwd.join(name)).is_ok_and(|m| m.dev() == meta.dev() && m.ino() == meta.ino())
    };
    for &(set, rules) in entries {
        for (name, idx) in rules.exact_path_denies() {
            if same(name) {
                return Some(Linked::Denied {
                    set,
                    rules,
                    idx,
                    name: name.to_string(),
                });
            }
        }
    }
    entries
        .iter()
        .any(|(_, t)| t.has_pattern_deny_rules())
        .then_some(Linked::Unresolved {
            links: meta.nlink(),
        })
}
