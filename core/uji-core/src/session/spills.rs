//! Spill files on disk: where a session's go, keys taken out of them, and
//! how they go away.
//!
//! A session's spill files live in `<data>/spill/<session id>/`, private
//! to the user. They are removed with the session (`uji delete`) and, at
//! every start, when older than [`RETENTION`]. The bounds themselves (how
//! much the model sees, the file cap) are `uji_protocol::spill`'s, shared
//! with the tools plugin.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufReader, BufWriter, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use aho_corasick::AhoCorasick;

use crate::turn::agent::REDACTED;

/// How long a spill file is kept after it was last written.
pub const RETENTION: Duration = Duration::from_secs(7 * 24 * 60 * 60);

/// Keys shorter than this are not looked for (as in saved messages).
const MIN_SECRET_LEN: usize = 8;

/// The directory holding every session's spill files.
pub fn root(data_dir: &Path) -> PathBuf {
    data_dir.join("spill")
}

/// The directory of session `id`'s spill files.
pub fn session_dir(data_dir: &Path, id: &str) -> PathBuf {
    root(data_dir).join(id)
}

/// Removes session `id`'s spill files (nothing to do when it has none).
pub fn remove_session(data_dir: &Path, id: &str) -> io::Result<()> {
    match fs::remove_dir_all(session_dir(data_dir, id)) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Removes spill files last written more than `max_age` ago, and session
/// directories left empty. Problems are logged, never fatal: this runs at
/// every start.
pub fn clean_old(data_dir: &Path, max_age: Duration) {
    let Ok(sessions) = fs::read_dir(root(data_dir)) else {
        return;
    };
    let now = SystemTime::now();
    for dir in sessions.filter_map(Result::ok).map(|e| e.path()) {
        let Ok(files) = fs::read_dir(&dir) else {
            continue;
        };
        for file in files.filter_map(Result::ok) {
            let age = file
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|modified| now.duration_since(modified).ok());
            if age.is_some_and(|age| age > max_age)
                && let Err(e) = fs::remove_file(file.path())
            {
                tracing::warn!(path = %file.path().display(), error = %e, "cannot remove an old spill file");
            }
        }
        // Fails while files remain, as it should.
        let _ = fs::remove_dir(&dir);
    }
}

/// Replaces every key in the file at `path` with `<redacted>`, reading it
/// as a stream (it can be tens of megabytes). The file is rewritten only
/// when it holds a key.
pub fn redact_file(path: &Path, secrets: &[String]) -> io::Result<()> {
    let patterns: Vec<&str> = secrets
        .iter()
        .map(String::as_str)
        .filter(|s| s.len() >= MIN_SECRET_LEN)
        .collect();
    if patterns.is_empty() {
        return Ok(());
    }
    let matcher = AhoCorasick::new(&patterns).map_err(io::Error::other)?;
    let reader = BufReader::new(File::open(path)?);
    if matcher.stream_find_iter(reader).next().is_none() {
        return Ok(());
    }
    let temporary = path.with_extension("redacting");
    let result = rewrite(&matcher, path, &temporary, patterns.len());
    if result.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    result
}

fn rewrite(matcher: &AhoCorasick, path: &Path, temporary: &Path, count: usize) -> io::Result<()> {
    let reader = BufReader::new(File::open(path)?);
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(temporary)?;
    let mut writer = BufWriter::new(file);
    let replacements = vec![REDACTED; count];
    matcher.try_stream_replace_all(reader, &mut writer, &replacements)?;
    writer.flush()?;
    fs::rename(temporary, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_replaced_across_read_boundaries() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("uji-output-1-0.log");
        let key = "sk-test-0123456789abcdef";
        // Past the reader's buffer, so some key straddles two reads.
        let mut text = String::new();
        for n in 0..20_000 {
            text.push_str(&format!("line {n} {key}\n"));
        }
        fs::write(&path, &text).unwrap_or_else(|e| panic!("{e}"));
        redact_file(&path, &[key.to_string(), "short".to_string()])
            .unwrap_or_else(|e| panic!("{e}"));
        let after = fs::read_to_string(&path).unwrap_or_default();
        assert!(!after.contains(key));
        assert_eq!(after.matches(REDACTED).count(), 20_000);
        assert!(after.starts_with("line 0 <redacted>\n"));
    }
}
