//! Running sessions' "allow for this session" rules, mirrored to
//! `<data>/live/<session id>.json` while the session runs, so `uji policy
//! check` in another terminal shows them. A file whose process is gone is
//! ignored (and removed).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::gate::SessionRule;
use crate::session::service::Sessions;

#[derive(Serialize, Deserialize)]
struct LiveFile {
    pid: u32,
    cwd: String,
    rules: Vec<SessionRule>,
}

fn live_dir(data: &Path) -> PathBuf {
    data.join("live")
}

/// Keeps the file of the running session in step with its rules.
pub(crate) fn mirror_session_rules(sessions: &Sessions) {
    let dir = live_dir(sessions.data_dir());
    let cwd = sessions.cwd().to_string_lossy().into_owned();
    sessions
        .gate
        .session_rules()
        .set_observer(Some(std::sync::Arc::new(
            move |session: &str, rules: &[SessionRule]| {
                // Named by the running session. (Subagents' own answers
                // are kept in their gates, not here.)
                if session.is_empty() || rules.is_empty() {
                    return;
                }
                let file = LiveFile {
                    pid: std::process::id(),
                    cwd: cwd.clone(),
                    rules: rules.to_vec(),
                };
                let _ = write_private(&dir, &format!("{session}.json"), &file);
            },
        )));
}

fn write_private(dir: &Path, name: &str, file: &LiveFile) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let json = serde_json::to_vec(file).map_err(std::io::Error::other)?;
    // Written whole to a temporary name, then renamed: a reader never sees
    // half a file.
    let tmp = dir.join(format!(".{name}.{}", std::process::id()));
    {
        use std::io::Write;
        let mut out = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)?;
        out.write_all(&json)?;
    }
    std::fs::rename(&tmp, dir.join(name))
}

/// Forgets the file of a session that ended.
pub(crate) fn remove(sessions: &Sessions, session: &str) {
    let path = live_dir(sessions.data_dir()).join(format!("{session}.json"));
    let _ = std::fs::remove_file(path);
}

fn alive(pid: u32) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

/// The session rules of every session running in `cwd`.
pub fn running_rules(data: &Path, cwd: &Path) -> Vec<SessionRule> {
    let Ok(entries) = std::fs::read_dir(live_dir(data)) else {
        return Vec::new();
    };
    let cwd = cwd.to_string_lossy();
    let mut rules = Vec::new();
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let Some(file) = std::fs::read(&path)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<LiveFile>(&bytes).ok())
        else {
            continue;
        };
        if !alive(file.pid) {
            let _ = std::fs::remove_file(&path);
            continue;
        }
        if file.cwd == cwd {
            rules.extend(file.rules);
        }
    }
    rules
}
