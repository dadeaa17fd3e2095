//! `uji.pack`'s natives: cloning packs with the `git` program into the
//! data directory, pinning them in `uji-lock.json` beside init.lua, and
//! updating them. surface.lua decides what a spec means and puts each
//! pack's `lua/` on the module path and runs its `plugin/*.lua`.
//!
//! git runs with uji's key-free environment (no provider key reaches it)
//! and without asking for credentials on the terminal the screen owns.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use mlua::{Lua, MultiValue, Table, Value};
use serde::{Deserialize, Serialize};

use crate::api::{lerr, raw};
use crate::runtime::State;

/// The lock file's name, in the config directory.
pub const LOCK_FILE: &str = "uji-lock.json";

/// One pinned pack.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Pinned {
    url: String,
    rev: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reference: Option<String>,
}

type Lock = BTreeMap<String, Pinned>;

fn lock_path(state: &State) -> Option<PathBuf> {
    state.config_dir.as_ref().map(|c| c.join(LOCK_FILE))
}

fn read_lock(state: &State) -> Result<Lock, String> {
    let Some(path) = lock_path(state) else {
        return Ok(Lock::new());
    };
    match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| {
            format!(
                "{} is not a lock file uji can read ({e}); fix it or delete it and run /sync",
                path.display()
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Lock::new()),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// Written whole through a rename: pretty, two spaces, names sorted.
fn write_lock(state: &State, lock: &Lock) -> Result<(), String> {
    let Some(path) = lock_path(state) else {
        return Err("there is no config directory to keep uji-lock.json in".to_string());
    };
    let text = serde_json::to_string_pretty(lock).map_err(|e| e.to_string())?;
    let temporary = path.with_extension("json.tmp");
    std::fs::write(&temporary, text)
        .and_then(|()| std::fs::rename(&temporary, &path))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn site_dir(state: &State) -> Option<PathBuf> {
    state
        .host
        .config("data_dir")
        .and_then(|v| v.as_str().map(PathBuf::from))
        .map(|d| d.join("site"))
}

/// Runs git; its stdout on success, its stderr (or why it did not run) on
/// failure.
fn git(args: &[&str], dir: Option<&Path>) -> Result<String, String> {
    let mut cmd = uji_sdk::child::command("git");
    cmd.args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = dir {
        cmd.current_dir(dir);
    }
    let output = cmd
        .output()
        .map_err(|e| format!("cannot run git ({e}); install git to use packs from repositories"))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).trim().to_string())
    } else {
        let said = String::from_utf8_lossy(&output.stderr).trim().to_string();
        Err(format!("git {} failed: {said}", args.join(" ")))
    }
}

fn head_of(dir: &Path) -> Result<String, String> {
    git(&["rev-parse", "HEAD"], Some(dir))
}

/// Clones pack `name` from `url` unless it is there; pins it. Its root.
fn install(
    state: &State,
    name: &str,
    url: &str,
    reference: Option<&str>,
) -> Result<PathBuf, String> {
    let site = site_dir(state).ok_or("there is no data directory to keep packs in")?;
    let root = site.join(name);
    if root.is_dir() {
        return Ok(root);
    }
    std::fs::create_dir_all(&site).map_err(|e| format!("cannot create {}: {e}", site.display()))?;
    let mut lock = read_lock(state)?;
    let target = root.to_string_lossy().into_owned();
    let pinned_rev = lock
        .get(name)
        .filter(|p| p.url == url)
        .map(|p| p.rev.clone());
    let checkout = reference.map(str::to_string).or(pinned_rev);
    let cloned = match &checkout {
        Some(rev) => git(&["clone", "--quiet", url, &target], None)
            .and_then(|_| git(&["checkout", "--quiet", "--detach", rev], Some(&root))),
        None => git(&["clone", "--quiet", "--depth", "1", url, &target], None),
    };
    if let Err(e) = cloned {
        let _ = std::fs::remove_dir_all(&root);
        return Err(e);
    }
    let rev = head_of(&root)?;
    lock.insert(
        name.to_string(),
        Pinned {
            url: url.to_string(),
            rev,
            reference: reference.map(str::to_string),
        },
    );
    write_lock(state, &lock)?;
    state.notify(&format!("pack: installed {name}"));
    Ok(root)
}

/// Brings every pinned pack to its reference (or its remote's head) and
/// pins the new revision; what happened, one line each.
fn update(state: &State) -> Result<Vec<String>, String> {
    let mut lock = read_lock(state)?;
    if lock.is_empty() {
        return Ok(vec!["pack: nothing installed".to_string()]);
    }
    let site = site_dir(state).ok_or("there is no data directory")?;
    let mut said = Vec::new();
    for (name, pinned) in lock.iter_mut() {
        let root = site.join(name);
        if !root.is_dir() {
            said.push(format!("pack: {name} is not installed"));
            continue;
        }
        let target = match &pinned.reference {
            Some(reference) => {
                let remote = format!("origin/{reference}");
                if git(&["rev-parse", "--verify", "--quiet", &remote], Some(&root)).is_ok() {
                    remote
                } else {
                    reference.clone()
                }
            }
            None => "origin/HEAD".to_string(),
        };
        let result = git(
            &["fetch", "--quiet", "--tags", "--force", "origin"],
            Some(&root),
        )
        .and_then(|_| git(&["reset", "--quiet", "--hard", &target], Some(&root)))
        .and_then(|_| head_of(&root));
        match result {
            Ok(rev) if rev == pinned.rev => said.push(format!("pack: {name} already current")),
            Ok(rev) => {
                pinned.rev = rev;
                said.push(format!("pack: updated {name}"));
            }
            Err(e) => said.push(format!("pack: {name}: {e}")),
        }
    }
    write_lock(state, &lock)?;
    Ok(said)
}

/// Runs git with the loading deadline lifted (a clone takes what the
/// network takes), then gives the rest of the load its whole time again.
fn without_deadline<T>(state: &State, f: impl FnOnce() -> T) -> T {
    let until = state.load_until.take();
    let result = f();
    if until.is_some() {
        state
            .load_until
            .set(Some(std::time::Instant::now() + crate::limits::LOAD_LIMIT));
    }
    result
}

pub fn install_natives(lua: &Lua, t: &Table) -> mlua::Result<()> {
    t.set(
        "pack_clone",
        raw(
            lua,
            |lua, state, (name, url, reference): (String, String, Option<String>)| {
                let result =
                    without_deadline(state, || install(state, &name, &url, reference.as_deref()));
                answer(lua, result.map(|root| root.to_string_lossy().into_owned()))
            },
        )?,
    )?;
    t.set(
        "pack_update",
        raw(lua, |lua, state, ()| {
            let said = without_deadline(state, || update(state))?;
            crate::api::string_list(lua, &said)
        })?,
    )?;
    t.set(
        "run_file",
        raw(lua, |_, state, path: String| {
            Ok(crate::load::run_file(state, Path::new(&path)))
        })?,
    )?;
    Ok(())
}

/// `value` or `nil, message`.
fn answer(lua: &Lua, result: Result<String, String>) -> Result<MultiValue, String> {
    let values = match result {
        Ok(value) => vec![Value::String(lua.create_string(&value).map_err(lerr)?)],
        Err(message) => vec![
            Value::Nil,
            Value::String(lua.create_string(&message).map_err(lerr)?),
        ],
    };
    Ok(MultiValue::from_vec(values))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_lock_file_is_pretty_sorted_and_keeps_the_reference_only_when_there_is_one() {
        let mut lock = Lock::new();
        lock.insert(
            "zeta".into(),
            Pinned {
                url: "u2".into(),
                rev: "r2".into(),
                reference: Some("v1".into()),
            },
        );
        lock.insert(
            "alpha".into(),
            Pinned {
                url: "u1".into(),
                rev: "r1".into(),
                reference: None,
            },
        );
        let text = serde_json::to_string_pretty(&lock).unwrap();
        assert_eq!(
            text,
            "{\n  \"alpha\": {\n    \"url\": \"u1\",\n    \"rev\": \"r1\"\n  },\n  \"zeta\": {\n    \"url\": \"u2\",\n    \"rev\": \"r2\",\n    \"reference\": \"v1\"\n  }\n}"
        );
    }
}
