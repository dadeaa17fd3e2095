//! Whether the user trusts a project's `.mcp.json`, remembered in
//! `<data>/trust.json` (owner-only). A decision is keyed by the file's
//! canonical path and holds the SHA-256 of its content: a file that changed
//! since is undecided again, so its new servers are asked about.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The file name in the data directory.
pub const FILE: &str = "trust.json";

#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    #[error("{path}: {source}; fix or delete the file (it only holds trust decisions)")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "{path}: not a trust file ({source}); fix or delete it (it only holds trust decisions)"
    )]
    Parse {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("could not save {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// One remembered decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    pub sha256: String,
    pub trusted: bool,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct TrustFile {
    /// By the canonical path of a `.mcp.json`.
    #[serde(default)]
    mcp_json: BTreeMap<String, Decision>,
}

/// What is known of one project file now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Known {
    Trusted,
    Distrusted,
    /// Never decided, or decided for other content.
    Undecided,
}

/// A project's `.mcp.json` as read now.
#[derive(Debug, Clone)]
pub struct ProjectFile {
    /// Canonical path: the key of its decision.
    pub path: PathBuf,
    pub text: String,
    pub sha256: String,
}

impl ProjectFile {
    /// Reads `<dir>/.mcp.json`; None when there is none.
    pub fn read(dir: &Path) -> Result<Option<ProjectFile>, String> {
        let path = dir.join(".mcp.json");
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        let path = path.canonicalize().unwrap_or(path);
        let sha256 = hex(&Sha256::digest(text.as_bytes()));
        Ok(Some(ProjectFile { path, text, sha256 }))
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The decisions of one data directory.
pub struct TrustStore {
    path: PathBuf,
}

impl TrustStore {
    pub fn new(data_dir: &Path) -> TrustStore {
        TrustStore {
            path: data_dir.join(FILE),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn load(&self) -> Result<TrustFile, TrustError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(TrustFile::default()),
            Err(source) => {
                return Err(TrustError::Read {
                    path: self.path.clone(),
                    source,
                });
            }
        };
        serde_json::from_str(&text).map_err(|source| TrustError::Parse {
            path: self.path.clone(),
            source,
        })
    }

    /// What was decided for `file` as it is now.
    pub fn known(&self, file: &ProjectFile) -> Result<Known, TrustError> {
        let decisions = self.load()?;
        Ok(
            match decisions.mcp_json.get(&file.path.display().to_string()) {
                Some(d) if d.sha256 == file.sha256 && d.trusted => Known::Trusted,
                Some(d) if d.sha256 == file.sha256 => Known::Distrusted,
                _ => Known::Undecided,
            },
        )
    }

    /// Remembers a decision for `file`'s current content.
    pub fn decide(&self, file: &ProjectFile, trusted: bool) -> Result<(), TrustError> {
        let mut decisions = self.load()?;
        decisions.mcp_json.insert(
            file.path.display().to_string(),
            Decision {
                sha256: file.sha256.clone(),
                trusted,
            },
        );
        self.write(&decisions)
    }

    /// Forgets the decision for `path` (canonical); true if there was one.
    pub fn forget(&self, path: &Path) -> Result<bool, TrustError> {
        let mut decisions = self.load()?;
        let had = decisions
            .mcp_json
            .remove(&path.display().to_string())
            .is_some();
        if had {
            self.write(&decisions)?;
        }
        Ok(had)
    }

    /// A temporary file (created 0600 by tempfile) renamed over the old one.
    fn write(&self, decisions: &TrustFile) -> Result<(), TrustError> {
        let error = |source| TrustError::Write {
            path: self.path.clone(),
            source,
        };
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(error)?;
        let text =
            serde_json::to_string_pretty(decisions).map_err(|e| error(std::io::Error::other(e)))?;
        let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(error)?;
        tmp.write_all(text.as_bytes()).map_err(error)?;
        tmp.as_file().sync_all().map_err(error)?;
        tmp.persist(&self.path).map_err(|e| error(e.error))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn a_decision_holds_for_the_same_content_only() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("p");
        std::fs::create_dir(&project).unwrap();
        std::fs::write(project.join(".mcp.json"), "{\"mcpServers\": {}}").unwrap();
        let store = TrustStore::new(&dir.path().join("data"));
        let file = ProjectFile::read(&project).unwrap().unwrap();
        assert_eq!(store.known(&file).unwrap(), Known::Undecided);
        store.decide(&file, true).unwrap();
        assert_eq!(store.known(&file).unwrap(), Known::Trusted);
        let mode = std::fs::metadata(store.path())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        std::fs::write(project.join(".mcp.json"), "{\"mcpServers\": {\"x\": {}}}").unwrap();
        let changed = ProjectFile::read(&project).unwrap().unwrap();
        assert_eq!(store.known(&changed).unwrap(), Known::Undecided);
        store.decide(&changed, false).unwrap();
        assert_eq!(store.known(&changed).unwrap(), Known::Distrusted);
        assert!(store.forget(&changed.path).unwrap());
        assert_eq!(store.known(&changed).unwrap(), Known::Undecided);
    }

    #[test]
    fn a_damaged_file_says_how_to_fix_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(FILE), "nope").unwrap();
        let store = TrustStore::new(dir.path());
        let e = store.forget(Path::new("/x")).unwrap_err();
        assert!(e.to_string().contains("fix or delete"), "{e}");
    }
}
