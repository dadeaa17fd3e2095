//! Path canonicalisation, `~/` expansion and the confinement error.
//!
//! Canonicalisation is done in user space (a `realpath(3)` that tolerates
//! missing components) rather than with [`std::fs::canonicalize`], because the
//! file tools must judge paths that do not exist yet: a new file, or a dangling
//! symlink whose target is about to be created. Both must be located where the
//! write would really land, or confinement could be bypassed by writing
//! through a link.

use std::ffi::OsString;
use std::fmt;
use std::path::{Component, Path, PathBuf};

/// How many symlinks one resolution may follow before it is called a loop.
/// Matches Linux's `MAXSYMLINKS`.
pub const MAX_SYMLINK_HOPS: usize = 40;

/// Why a path was refused (or could not be resolved).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfineError {
    /// The canonical path lies outside the working directory and every root.
    Outside {
        /// The path as the tool was given it.
        path: String,
        /// The directories the file tools may reach (working directory first).
        allowed: Vec<PathBuf>,
    },
    /// More than [`MAX_SYMLINK_HOPS`] symlinks were followed.
    Loop {
        /// The path as the tool was given it.
        path: String,
    },
    /// The path could not be made absolute (the process has no usable
    /// current directory).
    Io {
        /// The path as given.
        path: String,
        /// The operating system's explanation.
        message: String,
    },
}

impl ConfineError {
    /// The path as it was given to the check.
    pub fn path(&self) -> &str {
        match self {
            ConfineError::Outside { path, .. }
            | ConfineError::Loop { path }
            | ConfineError::Io { path, .. } => path,
        }
    }

    fn with_path(self, given: &str) -> Self {
        match self {
            ConfineError::Outside { allowed, .. } => ConfineError::Outside {
                path: given.to_string(),
                allowed,
            },
            ConfineError::Loop { .. } => ConfineError::Loop {
                path: given.to_string(),
            },
            ConfineError::Io { message, .. } => ConfineError::Io {
                path: given.to_string(),
                message,
            },
        }
    }
}

impl fmt::Display for ConfineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfineError::Outside { path, allowed } => {
                write!(f, "{path} is outside the allowed directories (")?;
                for (i, dir) in allowed.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{}", dir.display())?;
                }
                f.write_str("); file tools can only reach files under them")
            }
            ConfineError::Loop { path } => {
                write!(f, "{path}: too many levels of symbolic links")
            }
            ConfineError::Io { path, message } => write!(f, "{path}: {message}"),
        }
    }
}

impl std::error::Error for ConfineError {}

/// The user's home directory from `$HOME`, if set and non-empty.
pub fn home_dir() -> Option<PathBuf> {
    match std::env::var_os("HOME") {
        Some(h) if !h.is_empty() => Some(PathBuf::from(h)),
        _ => None,
    }
}

/// Expand a leading `~` or `~/` against `home`. Anything else (including
/// `~user/…`, which would need a password-database lookup) is returned as
/// given, as is everything when `home` is `None`.
pub fn expand_tilde(path: &str, home: Option<&Path>) -> PathBuf {
    match home {
        Some(home) if path == "~" => home.to_path_buf(),
        Some(home) => match path.strip_prefix("~/") {
            Some(rest) => home.join(rest.trim_start_matches('/')),
            None => PathBuf::from(path),
        },
        None => PathBuf::from(path),
    }
}

/// [`expand_tilde`] with the home directory taken from `$HOME`.
pub fn expand_home(path: &str) -> PathBuf {
    if path == "~" || path.starts_with("~/") {
        expand_tilde(path, home_dir().as_deref())
    } else {
        PathBuf::from(path)
    }
}

/// One step still to be resolved.
enum Seg {
    Parent,
    Name(OsString),
}

/// Push the components of `p` onto `stack` so that the first component is
/// popped first. Root and prefix components are not pushed; the caller resets
/// the resolved prefix for absolute paths.
fn push_components(stack: &mut Vec<Seg>, p: &Path) {
    let mut segs: Vec<Seg> = Vec::new();
    for c in p.components() {
        match c {
            Component::Normal(n) => segs.push(Seg::Name(n.to_os_string())),
            Component::ParentDir => segs.push(Seg::Parent),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    stack.extend(segs.into_iter().rev());
}

/// The root (and prefix, on platforms that have one) of an absolute path.
fn root_of(p: &Path) -> PathBuf {
    let mut root = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Prefix(_) | Component::RootDir => root.push(c.as_os_str()),
            _ => break,
        }
    }
    if root.as_os_str().is_empty() {
        root.push(std::path::MAIN_SEPARATOR_STR);
    }
    root
}

/// Absolute path with symlinks resolved and `.`/`..` removed, tolerating
/// components that do not exist.
///
/// Existing components are resolved like `realpath(3)`; from the first missing
/// component on the rest is appended lexically (a `..` that climbs back into
/// existing territory resumes resolution). A symlink whose target does not
/// exist is followed through its link text, so a file created through it is
/// located at the target. A relative `path` is taken against the process's
/// current directory.
///
/// # Errors
/// [`ConfineError::Loop`] after [`MAX_SYMLINK_HOPS`] links;
/// [`ConfineError::Io`] if a relative path is given and the current directory
/// is unavailable.
pub fn canonicalize_lenient(path: &Path) -> Result<PathBuf, ConfineError> {
    let shown = || path.display().to_string();
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        let cwd = std::env::current_dir().map_err(|e| ConfineError::Io {
            path: shown(),
            message: format!("cannot resolve a relative path: {e}"),
        })?;
        cwd.join(path)
    };

    let mut resolved = root_of(&absolute);
    let mut stack: Vec<Seg> = Vec::new();
    push_components(&mut stack, &absolute);
    let mut hops = 0usize;
    // Number of trailing components of `resolved` known not to exist; under a
    // missing directory nothing can exist, so no syscall is needed for them.
    let mut missing = 0usize;

    while let Some(seg) = stack.pop() {
        match seg {
            Seg::Parent => {
                resolved.pop();
                missing = missing.saturating_sub(1);
            }
            Seg::Name(name) => {
                let candidate = resolved.join(&name);
                if missing > 0 {
                    resolved = candidate;
                    missing += 1;
                    continue;
                }
                match std::fs::symlink_metadata(&candidate) {
                    Ok(md) if md.file_type().is_symlink() => {
                        hops += 1;
                        if hops > MAX_SYMLINK_HOPS {
                            return Err(ConfineError::Loop { path: shown() });
                        }
                        match std::fs::read_link(&candidate) {
                            Ok(target) => {
                                if target.has_root() {
                                    resolved = root_of(&target);
                                }
                                push_components(&mut stack, &target);
                            }
                            // Unreadable link text: keep the lexical path.
                            Err(_) => {
                                resolved = candidate;
                                missing += 1;
                            }
                        }
                    }
                    Ok(_) => resolved = candidate,
                    Err(_) => {
                        resolved = candidate;
                        missing += 1;
                    }
                }
            }
        }
    }
    Ok(resolved)
}

/// `path` (with `~/` expanded) made absolute against `cwd` and canonicalised.
/// A relative `cwd` is itself taken against the process's directory.
pub(crate) fn resolve_against(path: &str, cwd: &Path) -> Result<PathBuf, ConfineError> {
    let expanded = expand_home(path);
    let joined = if expanded.is_absolute() {
        expanded
    } else {
        cwd.join(expanded)
    };
    canonicalize_lenient(&joined).map_err(|e| e.with_path(path))
}

/// Does the canonical `canon` lie in one of `allowed` (already canonical)?
pub(crate) fn is_within(canon: &Path, allowed: &[PathBuf]) -> bool {
    allowed.iter().any(|dir| canon.starts_with(dir))
}

/// Build the "outside" error for `given`, listing `shown` directories.
pub(crate) fn outside(given: &str, shown: Vec<PathBuf>) -> ConfineError {
    ConfineError::Outside {
        path: given.to_string(),
        allowed: shown,
    }
}
