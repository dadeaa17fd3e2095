//! `/reload`: the screen ends its session and starts uji again on it
//! (`uji resume --id`), so the whole configuration (init.lua, plugins,
//! packs) loads afresh. The conversation is in the session's file, which
//! is written as it goes; the draft is carried over in a private file whose
//! path the new process reads from the environment and removes at once.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;

/// Where the new process finds the draft.
const DRAFT_VAR: &str = "UJI_RELOAD_DRAFT_FILE";

/// Replaces this process with `uji resume --id id`, handing it the draft
/// kept at `draft`; returns why not when it could not.
pub fn restart(id: &str, draft: Option<&PathBuf>) -> String {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return format!("uji's own path is unknown: {e}"),
    };
    let mut cmd = std::process::Command::new(exe);
    cmd.args(["resume", "--id", id]);
    if let Some(path) = draft {
        cmd.env(DRAFT_VAR, path);
    }
    let error = cmd.exec();
    format!("cannot run uji: {error}")
}

/// Keeps the draft for the next process (before the session ends, so a
/// draft that cannot be kept stops the reload instead of being lost).
pub fn keep_draft(draft: &str) -> std::io::Result<PathBuf> {
    let path = std::env::temp_dir().join(format!("uji-reload-draft-{}", std::process::id()));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&path)?;
    file.write_all(draft.as_bytes())?;
    Ok(path)
}

/// The draft a `/reload` carried over, read once (the file is removed).
pub fn carried_draft() -> Option<String> {
    let path = std::env::var_os(DRAFT_VAR)?;
    let path = PathBuf::from(path);
    // Only a file this uji wrote: in the temporary directory, by that name.
    let ours = path.parent() == Some(std::env::temp_dir().as_path())
        && path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("uji-reload-draft-"));
    if !ours {
        return None;
    }
    let draft = std::fs::read_to_string(&path).ok();
    let _ = std::fs::remove_file(&path);
    draft
}
