//! A session's checkpoint log: `sessions/<id>.jsonl`, one record per line,
//! each appended with one write. The first checkpoint lists every file;
//! each later one only what changed since the one before. A line that
//! cannot be read (a torn last line after a crash) is skipped with a
//! warning in the log file; the records before it still count.

use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::scan::Skipped;
use crate::tree::Change;

/// The log's format.
pub const VERSION: u32 = 1;

/// One line of the log.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Record {
    /// The first line: which workspace the log belongs to.
    Header {
        version: u32,
        root: String,
    },
    Checkpoint(CheckpointRecord),
    ChangeSet(crate::checkpoints::ChangeSet),
}

/// A checkpoint: what changed since the one before.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CheckpointRecord {
    pub id: u64,
    pub turn: u64,
    pub at_ms: u64,
    /// Why it was taken: the call about to run, `turn end`, `before undo`.
    pub reason: String,
    pub changes: Vec<Change>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<Skipped>,
    /// Bytes of new objects it stored.
    #[serde(default)]
    pub stored: u64,
}

/// Reads every record of `path`; no file is no records.
pub fn read(path: &Path) -> std::io::Result<Vec<Record>> {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut records = Vec::new();
    for (number, line) in BufReader::new(file).lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str(&line) {
            Ok(record) => records.push(record),
            Err(e) => tracing::warn!(
                path = %path.display(),
                line = number + 1,
                "checkpoint log line skipped: {e}"
            ),
        }
    }
    Ok(records)
}

/// Appends `record` as one line (one write, so a crash tears at most this
/// line).
pub fn append(path: &PathBuf, record: &Record) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(record).map_err(std::io::Error::other)?;
    line.push(b'\n');
    if let Some(folder) = path.parent() {
        std::fs::create_dir_all(folder)?;
    }
    let mut file = OpenOptions::new().create(true).append(true).open(path)?;
    file.write_all(&line)
}

/// Ends a torn last line (a crash in the middle of an append) with a line
/// break, so the next record starts a line of its own; the torn line
/// stays, skipped when read.
pub fn heal(path: &Path) -> std::io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = match OpenOptions::new().read(true).append(true).open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    if file.metadata()?.len() == 0 {
        return Ok(());
    }
    file.seek(SeekFrom::End(-1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    if last[0] != b'\n' {
        file.write_all(b"\n")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn a_torn_last_line_is_skipped_and_the_next_record_starts_its_own_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let header = Record::Header {
            version: VERSION,
            root: "/w".into(),
        };
        append(&path, &header).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"type\":\"check")
            .unwrap();
        heal(&path).unwrap();
        append(&path, &header).unwrap();
        assert_eq!(read(&path).unwrap().len(), 2);
    }
}
