//! Keys saved by `uji login`: one JSON object `{provider: key}` in
//! `<data>/auth.json`, readable and writable by the owner only (0600).
//!
//! An environment variable always wins over a saved key, so scripts and CI
//! keep working as before. A key is never printed or logged from here: the
//! errors name the file, never its contents.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The file name under the data directory.
pub const FILE: &str = "auth.json";

#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("cannot read {path}: {source} (fix or delete the file, then run `uji login` again)")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{path} is not a JSON object of provider ids to keys ({source}); delete it and run `uji login` again"
    )]
    Parse {
        path: PathBuf,
        source: serde_json::Error,
    },
    #[error("cannot save keys to {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The saved keys of one data directory.
#[derive(Debug, Clone)]
pub struct KeyStore {
    path: PathBuf,
}

impl KeyStore {
    pub fn new(data_dir: &Path) -> KeyStore {
        KeyStore {
            path: data_dir.join(FILE),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every saved key by provider id; none when nothing was saved.
    pub fn load(&self) -> Result<BTreeMap<String, String>, KeyError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
            Err(source) => {
                return Err(KeyError::Read {
                    path: self.path.clone(),
                    source,
                });
            }
        };
        serde_json::from_str(&text).map_err(|source| KeyError::Parse {
            path: self.path.clone(),
            source,
        })
    }

    /// Saves `key` for `provider`, replacing an earlier one.
    pub fn save(&self, provider: &str, key: &str) -> Result<(), KeyError> {
        let mut keys = self.load()?;
        keys.insert(provider.to_string(), key.to_string());
        self.write(&keys)
    }

    /// Forgets the key of `provider`; whether there was one.
    pub fn remove(&self, provider: &str) -> Result<bool, KeyError> {
        let mut keys = self.load()?;
        let had = keys.remove(provider).is_some();
        if had {
            self.write(&keys)?;
        }
        Ok(had)
    }

    /// Writes a temporary file created 0600 (so the key is never readable
    /// by others, not even for a moment) and renames it over the old one.
    fn write(&self, keys: &BTreeMap<String, String>) -> Result<(), KeyError> {
        let error = |source| KeyError::Write {
            path: self.path.clone(),
            source,
        };
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(error)?;
        }
        let tmp = self.path.with_extension("json.tmp");
        let text =
            serde_json::to_string_pretty(keys).map_err(|e| error(std::io::Error::other(e)))?;
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(error)?;
        // A file left by an older write may have other bits: set them again.
        file.set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(error)?;
        file.write_all(text.as_bytes()).map_err(error)?;
        file.sync_all().map_err(error)?;
        std::fs::rename(&tmp, &self.path).map_err(error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saved_keys_are_owner_only_and_can_be_removed() {
        let dir = tempfile::tempdir().unwrap();
        let store = KeyStore::new(&dir.path().join("data"));
        assert!(store.load().unwrap().is_empty());
        store.save("groq", "gsk-1").unwrap();
        store.save("openai", "sk-2").unwrap();
        let mode = std::fs::metadata(store.path())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(store.load().unwrap()["groq"], "gsk-1");
        assert!(store.remove("groq").unwrap());
        assert!(!store.remove("groq").unwrap());
        assert_eq!(store.load().unwrap().len(), 1);
    }

    #[test]
    fn a_damaged_file_says_what_to_do_without_its_contents() {
        let dir = tempfile::tempdir().unwrap();
        let store = KeyStore::new(dir.path());
        std::fs::write(store.path(), "sk-secret-not-json").unwrap();
        let err = store.load().unwrap_err().to_string();
        assert!(
            err.contains("uji login") && !err.contains("sk-secret"),
            "{err}"
        );
    }
}
