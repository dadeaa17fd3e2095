//! Content-addressed objects: `objects/<first two hex>/<the other 62>`,
//! each the LZ4 block of a file's bytes with its length in front.
//!
//! An object is written under a temporary name in its folder and renamed
//! to its address, so an address either holds the whole object or nothing;
//! two writers of one address write the same bytes, and the last rename
//! wins harmlessly.

use std::collections::HashSet;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// Why an object could not be kept or read.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{}: {error}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        error: std::io::Error,
    },
    #[error(
        "checkpoint object {address} is missing from {}; it was pruned or the data directory was cleaned, so this file cannot be restored",
        dir.display()
    )]
    Missing { address: String, dir: PathBuf },
    #[error("checkpoint object {address} is damaged ({why}); this file cannot be restored from it")]
    Damaged { address: String, why: String },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError + '_ {
    move |error| StoreError::Io {
        path: path.to_path_buf(),
        error,
    }
}

/// The content address of `bytes`: BLAKE3, in hex.
pub fn address_of(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// A workspace's objects.
#[derive(Debug, Clone)]
pub struct ObjectStore {
    dir: PathBuf,
}

impl ObjectStore {
    pub fn new(dir: PathBuf) -> ObjectStore {
        ObjectStore { dir }
    }

    fn path_of(&self, address: &str) -> PathBuf {
        let (head, tail) = address.split_at(address.len().min(2));
        self.dir.join(head).join(tail)
    }

    pub fn has(&self, address: &str) -> bool {
        self.path_of(address).is_file()
    }

    /// Keeps `bytes` under `address` (their [`address_of`]) unless it is
    /// there already; the bytes the store now uses on disk for it (0 when
    /// it was there).
    pub fn put(&self, address: &str, bytes: &[u8]) -> Result<u64, StoreError> {
        let path = self.path_of(address);
        if path.is_file() {
            return Ok(0);
        }
        let folder = path.parent().unwrap_or(&self.dir);
        fs::create_dir_all(folder).map_err(io(folder))?;
        let packed = lz4_flex::compress_prepend_size(bytes);
        let mut temporary = tempfile_in(folder)?;
        temporary.1.write_all(&packed).map_err(io(&temporary.0))?;
        drop(temporary.1);
        fs::rename(&temporary.0, &path).map_err(io(&path))?;
        Ok(packed.len() as u64)
    }

    /// The bytes kept under `address`, checked against it.
    pub fn get(&self, address: &str) -> Result<Vec<u8>, StoreError> {
        let path = self.path_of(address);
        let packed = match fs::read(&path) {
            Ok(packed) => packed,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(StoreError::Missing {
                    address: address.to_string(),
                    dir: self.dir.clone(),
                });
            }
            Err(e) => return Err(io(&path)(e)),
        };
        let bytes =
            lz4_flex::decompress_size_prepended(&packed).map_err(|e| StoreError::Damaged {
                address: address.to_string(),
                why: e.to_string(),
            })?;
        if address_of(&bytes) != address {
            return Err(StoreError::Damaged {
                address: address.to_string(),
                why: "its content does not match its address".to_string(),
            });
        }
        Ok(bytes)
    }

    /// Removes every object whose address is not in `keep` and that is
    /// older than `min_age` (a session may have just written one it has
    /// not logged yet); how many were removed and the bytes they took.
    pub fn remove_all_but(
        &self,
        keep: &HashSet<String>,
        min_age: std::time::Duration,
    ) -> (usize, u64) {
        let mut removed = (0, 0);
        let Ok(heads) = fs::read_dir(&self.dir) else {
            return removed;
        };
        for head in heads.flatten() {
            let head_name = head.file_name().to_string_lossy().into_owned();
            let Ok(objects) = fs::read_dir(head.path()) else {
                continue;
            };
            for object in objects.flatten() {
                let name = object.file_name().to_string_lossy().into_owned();
                let address = format!("{head_name}{name}");
                let temporary = name.starts_with(".tmp");
                let Ok(meta) = object.metadata() else {
                    continue;
                };
                let old = meta
                    .modified()
                    .ok()
                    .and_then(|at| at.elapsed().ok())
                    .is_some_and(|age| age >= min_age);
                if old && (temporary || !keep.contains(&address)) {
                    let size = meta.len();
                    if fs::remove_file(object.path()).is_ok() {
                        removed.0 += 1;
                        removed.1 += size;
                    }
                }
            }
            // An emptied folder goes too; a folder still in use stays.
            let _ = fs::remove_dir(head.path());
        }
        removed
    }
}

/// A new file `.tmp<random>` in `folder`, opened for writing.
pub(crate) fn tempfile_in(folder: &Path) -> Result<(PathBuf, fs::File), StoreError> {
    for attempt in 0..16u32 {
        let name = format!(".tmp{:x}{attempt}", unique_suffix());
        let path = folder.join(name);
        match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(file) => return Ok((path, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(io(&path)(e)),
        }
    }
    Err(io(folder)(std::io::Error::other(
        "could not find a free temporary file name",
    )))
}

fn unique_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    nanos ^ (u64::from(std::process::id()) << 32) ^ COUNTER.fetch_add(1, Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn an_object_comes_back_as_it_went_in_and_is_kept_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = ObjectStore::new(dir.path().join("objects"));
        let bytes = b"fn main() {}\n".repeat(100);
        let address = address_of(&bytes);
        assert!(store.put(&address, &bytes).unwrap() > 0);
        assert_eq!(store.put(&address, &bytes).unwrap(), 0, "already there");
        assert_eq!(store.get(&address).unwrap(), bytes);
    }

    #[test]
    fn a_missing_or_damaged_object_is_an_error_that_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let store = ObjectStore::new(dir.path().to_path_buf());
        let address = address_of(b"x");
        assert!(matches!(
            store.get(&address),
            Err(StoreError::Missing { .. })
        ));
        store.put(&address, b"x").unwrap();
        std::fs::write(store.path_of(&address), b"garbage").unwrap();
        assert!(matches!(
            store.get(&address),
            Err(StoreError::Damaged { .. })
        ));
    }

    #[test]
    fn removing_keeps_only_what_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let store = ObjectStore::new(dir.path().to_path_buf());
        let (a, b) = (address_of(b"a"), address_of(b"b"));
        store.put(&a, b"a").unwrap();
        store.put(&b, b"b").unwrap();
        let keep: HashSet<String> = [a.clone()].into();
        assert_eq!(store.remove_all_but(&keep, std::time::Duration::ZERO).0, 1);
        assert!(store.has(&a));
        assert!(!store.has(&b));
    }
}
