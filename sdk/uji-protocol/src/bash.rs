//! The shell every command runs in: bash, the language the policy parses
//! (tree-sitter-bash), so what uji decides about a line is what runs.
//! `run_command`, background jobs and the screen's `!cmd` all start their
//! command through [`command`].
//!
//! bash is found once per process at an absolute path: `$UJI_BASH` when
//! set, else `/bin/bash`, `/usr/bin/bash`, else the first absolute entry of
//! uji's own `PATH` holding one (never a relative entry, and never a `PATH`
//! a command sets). It runs non-interactive with no profile and no rc file,
//! and without the variables that would make it read a file or parse
//! differently ([`UNSET`], and every exported function `BASH_FUNC_*`).

use std::ffi::OsStr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Names a bash to use instead of looking for one (an absolute path).
pub const BASH_VAR: &str = "UJI_BASH";

/// Where bash is looked for before `PATH`.
pub const CANDIDATES: [&str; 2] = ["/bin/bash", "/usr/bin/bash"];

/// Variables a command's bash starts without: `BASH_ENV` and `ENV` name a
/// file bash would read first; `POSIXLY_CORRECT`, `SHELLOPTS` and
/// `BASHOPTS` switch on options that change how a line is parsed or run.
pub const UNSET: [&str; 5] = [
    "BASH_ENV",
    "ENV",
    "POSIXLY_CORRECT",
    "SHELLOPTS",
    "BASHOPTS",
];

/// The prefix of an exported function's variable: bash would define it,
/// and a function named like a program runs instead of the program.
const FUNCTION_PREFIX: &str = "BASH_FUNC_";

/// The shell used when there is no bash; the gate then asks about every
/// command (see [`path`]).
pub const FALLBACK_SHELL: &str = "/bin/sh";

/// The bash this process runs commands with, or `None` when there is none
/// (then every command is unresolved: the gate asks a person, and denies
/// it where nobody can answer).
pub fn path() -> Option<&'static Path> {
    static FOUND: OnceLock<Option<PathBuf>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            find(
                std::env::var_os(BASH_VAR),
                &CANDIDATES,
                std::env::var_os("PATH"),
            )
        })
        .as_deref()
}

/// What [`path`] says when it finds nothing, for notices and messages.
pub fn missing_text() -> String {
    format!(
        "no bash was found ({}, {} and the absolute directories of PATH were searched; \
         {BASH_VAR} names another): uji runs commands with bash, so without it every \
         command needs a person's approval and runs with {FALLBACK_SHELL}. Install bash \
         to run commands as the policy reads them",
        CANDIDATES[0], CANDIDATES[1]
    )
}

fn find(
    named: Option<std::ffi::OsString>,
    candidates: &[&str],
    search: Option<std::ffi::OsString>,
) -> Option<PathBuf> {
    if let Some(named) = named.filter(|n| !n.is_empty()) {
        // A bash the user named and that is not there is missing, not
        // replaced by another one.
        let named = PathBuf::from(named);
        return (named.is_absolute() && is_executable(&named)).then_some(named);
    }
    let listed = candidates.iter().map(PathBuf::from);
    let on_path = search
        .iter()
        .flat_map(std::env::split_paths)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join("bash"))
        .collect::<Vec<_>>();
    listed.chain(on_path).find(|p| is_executable(p))
}

fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `bash --noprofile --norc -c LINE` (or `/bin/sh -c LINE` without bash),
/// with the variables that would change bash's reading removed. The caller
/// adds the working directory, the streams and its own environment.
pub fn command(line: &str) -> Command {
    let mut cmd = match path() {
        Some(bash) => {
            let mut cmd = Command::new(bash);
            cmd.args(["--noprofile", "--norc"]);
            cmd
        }
        None => Command::new(FALLBACK_SHELL),
    };
    cmd.arg("-c").arg(line);
    for name in UNSET {
        cmd.env_remove(name);
    }
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with(FUNCTION_PREFIX) {
            cmd.env_remove(&name);
        }
    }
    cmd
}

/// The program name [`command`] starts, for error messages.
pub fn shell_name() -> &'static OsStr {
    match path() {
        Some(_) => OsStr::new("bash"),
        None => OsStr::new("sh"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory with an executable `bash` in it.
    fn with_bash(name: &str) -> (PathBuf, PathBuf) {
        let dir = std::env::temp_dir().join(format!("uji-bash-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bash = dir.join("bash");
        std::fs::write(&bash, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&bash, std::fs::Permissions::from_mode(0o755)).unwrap();
        (dir, bash)
    }

    #[test]
    fn a_named_bash_is_used_or_missing_never_replaced() {
        let (_dir, bash) = with_bash("named");
        let found = find(Some(bash.clone().into()), &CANDIDATES, None);
        assert_eq!(found, Some(bash));
        let missing = find(Some("/nonexistent/bash".into()), &CANDIDATES, None);
        assert_eq!(missing, None);
        assert_eq!(find(Some("bash".into()), &CANDIDATES, None), None);
    }

    #[test]
    fn the_listed_places_come_first_and_relative_path_entries_never_count() {
        let (dir, bash) = with_bash("path");
        let listed = bash.to_string_lossy().into_owned();
        let found = find(None, &[listed.as_str()], Some("/nonexistent".into()));
        assert_eq!(found, Some(bash.clone()));
        let search = std::env::join_paths([PathBuf::from("."), dir.clone()]).unwrap();
        assert_eq!(find(None, &[], Some(search)), Some(bash));
        let relative = std::env::join_paths([PathBuf::from("rel")]).unwrap();
        assert_eq!(find(None, &[], Some(relative)), None);
        assert_eq!(find(None, &["/nonexistent/bash"], None), None);
    }
}
