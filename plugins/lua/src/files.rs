//! `uji.fs.*`, `uji.data.*` and `uji.config.files`: files for plugins.
//!
//! init.lua is the user's own code, so `uji.fs` is not confined to the
//! workspace; it is bounded (what it reads at once, what a glob walks) and
//! it never writes into uji's data directory, which holds sessions and keys
//! and belongs to uji: a plugin keeps its files there only through
//! `uji.data`, under a folder of its own whose names cannot escape.
//!
//! Each native returns `true, value`, `true, nil, message` for a problem
//! with the file (the public uji's `nil, err`), or `false, message` for a
//! wrong argument, which the prelude raises at the caller's line.

use std::io::{BufRead, BufReader, Read};
use std::path::{Component, Path, PathBuf};

use mlua::{Lua, MultiValue, Table, Value};

use crate::api::{a_type, check_fields, lerr, string_arg};
use crate::convert;
use crate::runtime::State;

/// The most `uji.fs.read` and `uji.data.read` return at once.
pub const MAX_READ: u64 = 16 * 1024 * 1024;
/// The most lines `uji.fs.lines` returns without a `limit`.
const DEFAULT_LINES: usize = 2000;
/// A glob gives at most this many paths.
const GLOB_FOUND: usize = 10_000;
/// `uji.config.files` skips (with a notice) files larger than this.
const MAX_CONFIG_FILE: u64 = 1024 * 1024;
/// Where `uji.data` keeps plugins' files, under the data directory.
const DATA_FOLDER: &str = "lua-data";

/// What a native gives back.
type Answer = Result<MultiValue, String>;

fn found(lua: &Lua, value: impl mlua::IntoLua) -> Answer {
    let value = value.into_lua(lua).map_err(lerr)?;
    Ok(MultiValue::from_vec(vec![value]))
}

fn problem(lua: &Lua, message: String) -> Answer {
    let message = Value::String(lua.create_string(&message).map_err(lerr)?);
    Ok(MultiValue::from_vec(vec![Value::Nil, message]))
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// `path` with `~` expanded, made absolute against the working directory
/// (the session's), `.` and `..` folded.
pub fn resolve(path: &str) -> PathBuf {
    let expanded = match path.strip_prefix('~') {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => match home() {
            Some(home) => home.join(rest.trim_start_matches('/')),
            None => PathBuf::from(path),
        },
        _ => PathBuf::from(path),
    };
    let absolute = if expanded.is_absolute() {
        expanded
    } else {
        std::env::current_dir()
            .unwrap_or_else(|_| PathBuf::from("/"))
            .join(expanded)
    };
    normalize(&absolute)
}

fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The nearest existing ancestor of `path`, canonical, with the rest
/// joined on: where a write would really land, through symbolic links.
fn landing(path: &Path) -> PathBuf {
    let mut missing = Vec::new();
    let mut cursor = path.to_path_buf();
    loop {
        if let Ok(real) = cursor.canonicalize() {
            let mut out = real;
            for part in missing.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (cursor.file_name(), cursor.parent()) {
            (Some(name), Some(parent)) => {
                missing.push(name.to_os_string());
                cursor = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

fn data_dir(state: &State) -> Option<PathBuf> {
    state
        .host
        .config("data_dir")
        .and_then(|v| v.as_str().map(PathBuf::from))
}

fn path_arg(value: &Value, api: &str) -> Result<String, String> {
    let path = string_arg(value, api, "the path")?;
    if path.is_empty() {
        return Err(format!("{api}: the path must not be empty"));
    }
    Ok(path)
}

pub fn read_bounded(path: &Path, shown: &str) -> Result<Vec<u8>, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("read {shown}: {e}"))?;
    if meta.is_dir() {
        return Err(format!("{shown} is a directory, not a file"));
    }
    if meta.len() > MAX_READ {
        return Err(format!(
            "read {shown}: the file is {} bytes, more than the {} MiB uji.fs.read returns at once; read it in parts with uji.fs.lines(path, {{ offset = ..., limit = ... }})",
            meta.len(),
            MAX_READ / (1024 * 1024)
        ));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_READ).read_to_end(&mut bytes))
        .map_err(|e| format!("read {shown}: {e}"))?;
    Ok(bytes)
}

fn fs_read(lua: &Lua, path: Value) -> Answer {
    let shown = path_arg(&path, "uji.fs.read")?;
    match read_bounded(&resolve(&shown), &shown) {
        Ok(bytes) => found(lua, lua.create_string(&bytes).map_err(lerr)?),
        Err(message) => problem(lua, message),
    }
}

/// `uji.fs.lines(path, {offset, limit, max_line})` → `{lines, cut, total}`.
fn fs_lines(lua: &Lua, (path, options): (Value, Value)) -> Answer {
    const API: &str = "uji.fs.lines";
    let shown = path_arg(&path, API)?;
    let (mut offset, mut limit, mut max_line) = (1usize, DEFAULT_LINES, 64 * 1024usize);
    match &options {
        Value::Nil => {}
        Value::Table(t) => {
            check_fields(t, &["offset", "limit", "max_line"], API)?;
            let number = |key: &str| -> Result<Option<usize>, String> {
                match t.get::<Value>(key).map_err(lerr)? {
                    Value::Nil => Ok(None),
                    Value::Integer(i) => Ok(Some(i.max(0) as usize)),
                    Value::Number(n) if n.is_finite() => Ok(Some(n.max(0.0) as usize)),
                    other => Err(format!(
                        "{API}: {key} must be a number, got {}",
                        a_type(&other)
                    )),
                }
            };
            offset = number("offset")?.unwrap_or(1).max(1);
            limit = number("limit")?.unwrap_or(DEFAULT_LINES);
            max_line = number("max_line")?.unwrap_or(max_line).max(1);
        }
        other => {
            return Err(format!(
                "{API}: options must be a table {{ offset, limit, max_line }}, got {}",
                a_type(other)
            ));
        }
    }
    let full = resolve(&shown);
    if full.is_dir() {
        return problem(lua, format!("{shown} is a directory, not a file"));
    }
    let file = match std::fs::File::open(&full) {
        Ok(file) => file,
        Err(e) => return problem(lua, format!("read {shown}: {e}")),
    };
    let mut reader = BufReader::new(file);
    if reader
        .fill_buf()
        .is_ok_and(|head| head.iter().take(8192).any(|b| *b == 0))
    {
        return problem(lua, format!("{shown} looks like a binary file"));
    }
    let lines = lua.create_table().map_err(lerr)?;
    let cut = lua.create_table().map_err(lerr)?;
    let (mut total, mut kept) = (0usize, 0usize);
    let mut buffer = Vec::new();
    loop {
        buffer.clear();
        match reader.read_until(b'\n', &mut buffer) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => return problem(lua, format!("read {shown}: {e}")),
        }
        total += 1;
        if total < offset || kept >= limit {
            continue;
        }
        if buffer.last() == Some(&b'\n') {
            buffer.pop();
            if buffer.last() == Some(&b'\r') {
                buffer.pop();
            }
        }
        kept += 1;
        if buffer.len() > max_line {
            buffer.truncate(max_line);
            cut.raw_set(kept, true).map_err(lerr)?;
        }
        lines
            .raw_set(kept, lua.create_string(&buffer).map_err(lerr)?)
            .map_err(lerr)?;
    }
    convert::mark_array(lua, &lines).map_err(lerr)?;
    let result = lua.create_table().map_err(lerr)?;
    result.set("lines", lines).map_err(lerr)?;
    result.set("cut", cut).map_err(lerr)?;
    result.set("total", total).map_err(lerr)?;
    found(lua, result)
}

/// Refuses a write that would land in uji's data directory.
fn check_not_data(state: &State, full: &Path, shown: &str, api: &str) -> Result<(), String> {
    let Some(data) = data_dir(state) else {
        return Ok(());
    };
    let data = landing(&data);
    if landing(full).starts_with(&data) {
        return Err(format!(
            "{api}: {shown} is inside uji's data directory ({}), which holds uji's sessions and keys; keep a plugin's files there with uji.data.write(name, text)",
            data.display()
        ));
    }
    Ok(())
}

fn fs_write(lua: &Lua, state: &State, (path, content): (Value, Value)) -> Answer {
    const API: &str = "uji.fs.write";
    let shown = path_arg(&path, API)?;
    let Value::String(content) = content else {
        return Err(format!(
            "{API}: the content must be a string, got {}",
            a_type(&content)
        ));
    };
    let full = resolve(&shown);
    check_not_data(state, &full, &shown, API)?;
    if let Some(parent) = full.parent()
        && let Err(e) = std::fs::create_dir_all(parent)
    {
        return problem(lua, format!("mkdir {}: {e}", parent.display()));
    }
    let created = !full.exists();
    if let Err(e) = std::fs::write(&full, content.as_bytes()) {
        return problem(lua, format!("write {shown}: {e}"));
    }
    let result = lua.create_table().map_err(lerr)?;
    result.set("created", created).map_err(lerr)?;
    found(lua, result)
}

fn kind_of(file_type: std::fs::FileType) -> &'static str {
    if file_type.is_symlink() {
        "link"
    } else if file_type.is_dir() {
        "dir"
    } else if file_type.is_file() {
        "file"
    } else {
        "other"
    }
}

fn fs_list(lua: &Lua, path: Value) -> Answer {
    let shown = path_arg(&path, "uji.fs.list")?;
    let entries = match std::fs::read_dir(resolve(&shown)) {
        Ok(entries) => entries,
        Err(e) => return problem(lua, format!("list {shown}: {e}")),
    };
    let mut rows: Vec<(String, &'static str)> = entries
        .filter_map(Result::ok)
        .map(|e| {
            let kind = e.file_type().map(kind_of).unwrap_or("other");
            (e.file_name().to_string_lossy().into_owned(), kind)
        })
        .collect();
    rows.sort();
    let list = lua.create_table().map_err(lerr)?;
    for (name, kind) in rows {
        let row = lua.create_table().map_err(lerr)?;
        row.set("name", name).map_err(lerr)?;
        row.set("type", kind).map_err(lerr)?;
        list.raw_push(row).map_err(lerr)?;
    }
    convert::mark_array(lua, &list).map_err(lerr)?;
    found(lua, list)
}

fn fs_stat(lua: &Lua, path: Value) -> Answer {
    let shown = path_arg(&path, "uji.fs.stat")?;
    let meta = match std::fs::symlink_metadata(resolve(&shown)) {
        Ok(meta) => meta,
        Err(e) => return problem(lua, format!("stat {shown}: {e}")),
    };
    let stat = lua.create_table().map_err(lerr)?;
    stat.set("type", kind_of(meta.file_type())).map_err(lerr)?;
    stat.set("size", meta.len()).map_err(lerr)?;
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as u64);
    stat.set("modified", modified).map_err(lerr)?;
    found(lua, stat)
}

/// `uji.fs.glob(pattern)`: `*`, `?`, `[...]` within a name, `**` across
/// folders (the `glob` crate, as the public uji). Relative patterns give
/// paths relative to the working directory; absolute and `~/` ones
/// absolute paths. Sorted; at most [`GLOB_FOUND`] paths.
fn fs_glob(lua: &Lua, pattern: Value) -> Answer {
    const API: &str = "uji.fs.glob";
    let shown = string_arg(&pattern, API, "the pattern")?;
    let paths = match glob_paths(API, &shown)? {
        Ok(paths) => paths,
        Err(message) => return problem(lua, message),
    };
    let list = lua.create_table().map_err(lerr)?;
    for path in paths {
        list.raw_push(path).map_err(lerr)?;
    }
    convert::mark_array(lua, &list).map_err(lerr)?;
    found(lua, list)
}

/// The paths matching the glob `shown` as `uji.fs.glob` gives them; the
/// outer error is a wrong argument, the inner a pattern that cannot be
/// read.
pub fn glob_paths(api: &str, shown: &str) -> Result<Result<Vec<String>, String>, String> {
    if shown.is_empty() {
        return Err(format!("{api}: the pattern must not be empty"));
    }
    let relative = !(shown.starts_with('/') || shown.starts_with('~'));
    let full = resolve(shown).to_string_lossy().into_owned();
    let options = glob::MatchOptions {
        case_sensitive: true,
        require_literal_separator: true,
        require_literal_leading_dot: false,
    };
    let matches = match glob::glob_with(&full, options) {
        Ok(found) => found,
        Err(e) => return Ok(Err(format!("{api}: bad pattern {shown:?}: {e}"))),
    };
    let mut paths: Vec<PathBuf> = matches.filter_map(Result::ok).take(GLOB_FOUND).collect();
    paths.sort();
    let cwd = std::env::current_dir().unwrap_or_default();
    Ok(Ok(paths
        .into_iter()
        .map(|path| {
            let shown = match (relative, path.strip_prefix(&cwd)) {
                (true, Ok(rest)) => rest.to_path_buf(),
                _ => path,
            };
            shown.to_string_lossy().into_owned()
        })
        .collect()))
}

/// A plugin's data file name: one plain name, nothing that escapes.
fn data_name(value: &Value, api: &str) -> Result<String, String> {
    let name = string_arg(value, api, "the file name")?;
    let plain =
        !name.is_empty() && name != "." && name != ".." && !name.contains(['/', '\\', '\0']);
    if !plain {
        return Err(format!(
            "{api} needs a file name (no folders, no ..), e.g. \"my-plugin.json\"; got {name:?}"
        ));
    }
    Ok(name)
}

fn data_read(lua: &Lua, state: &State, name: Value) -> Answer {
    const API: &str = "uji.data.read";
    let name = data_name(&name, API)?;
    let Some(dir) = data_dir(state) else {
        return problem(lua, "there is no data directory".to_string());
    };
    let path = dir.join(DATA_FOLDER).join(&name);
    match read_bounded(&path, &name) {
        Ok(bytes) => found(lua, lua.create_string(&bytes).map_err(lerr)?),
        Err(message) => problem(lua, message),
    }
}

fn data_write(lua: &Lua, state: &State, (name, text): (Value, Value)) -> Answer {
    const API: &str = "uji.data.write";
    let name = data_name(&name, API)?;
    let Value::String(text) = text else {
        return Err(format!(
            "{API}: the text must be a string, got {}",
            a_type(&text)
        ));
    };
    let Some(dir) = data_dir(state) else {
        return problem(lua, "there is no data directory".to_string());
    };
    let dir = dir.join(DATA_FOLDER);
    if let Err(e) = create_private_dir(&dir) {
        return problem(lua, format!("mkdir {}: {e}", dir.display()));
    }
    let path = dir.join(&name);
    if let Err(e) = write_private(&path, text.as_bytes().as_ref()) {
        return problem(lua, format!("write {name}: {e}"));
    }
    found(lua, true)
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// Writes through a temporary file and a rename, mode 0600: a crash never
/// leaves half a file, and no other user reads a plugin's tokens.
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let temporary = path.with_extension(format!("tmp-{}", std::process::id()));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&temporary)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(&temporary, path)
}

/// The nearest `.uji/<folder>` from the working directory up to the
/// repository root (the nearest directory holding `.git`); outside a
/// repository, in the working directory alone (docs/context.md: a home
/// directory's folders are not a project's).
fn project_folder(folder: &str) -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok()?;
    let root = cwd
        .ancestors()
        .find(|dir| dir.join(".git").exists())
        .unwrap_or(&cwd);
    cwd.ancestors()
        .take_while(|dir| dir.starts_with(root))
        .map(|dir| dir.join(".uji").join(folder))
        .find(|candidate| candidate.is_dir())
}

/// `uji.config.files(folder, {project = true})` → `{name, path, text,
/// project}` for each file directly in `<config>/<folder>`, then (asked
/// for) in the nearest `.uji/<folder>`, each folder in name order.
fn config_files(lua: &Lua, state: &State, (folder, options): (Value, Value)) -> Answer {
    const API: &str = "uji.config.files";
    let folder = string_arg(&folder, API, "the folder")?;
    let inside = !folder.is_empty()
        && Path::new(&folder)
            .components()
            .all(|c| matches!(c, Component::Normal(_)));
    if !inside {
        return Err(format!(
            "{API} needs a folder name inside the config directory, e.g. \"agents\"; got {folder:?}"
        ));
    }
    let project = match &options {
        Value::Nil => false,
        Value::Table(t) => {
            check_fields(t, &["project"], API)?;
            t.get::<Option<bool>>("project")
                .map_err(lerr)?
                .unwrap_or(false)
        }
        other => {
            return Err(format!(
                "{API}: options must be a table {{ project = true }}, got {}",
                a_type(other)
            ));
        }
    };
    let mut folders = Vec::new();
    if let Some(config) = &state.config_dir {
        folders.push((config.join(&folder), false));
    }
    if project && let Some(dir) = project_folder(&folder) {
        folders.push((dir, true));
    }
    let list = lua.create_table().map_err(lerr)?;
    for (dir, is_project) in folders {
        for file in files_in(state, &dir) {
            let row = lua.create_table().map_err(lerr)?;
            row.set("name", file.0).map_err(lerr)?;
            row.set("path", file.1.to_string_lossy().into_owned())
                .map_err(lerr)?;
            row.set("text", lua.create_string(&file.2).map_err(lerr)?)
                .map_err(lerr)?;
            row.set("project", is_project).map_err(lerr)?;
            list.raw_push(row).map_err(lerr)?;
        }
    }
    convert::mark_array(lua, &list).map_err(lerr)?;
    found(lua, list)
}

/// Regular files directly in `dir`, by name, with their text; folders,
/// links and unreadable files are skipped, files over the bound with a
/// notice.
fn files_in(state: &State, dir: &Path) -> Vec<(String, PathBuf, Vec<u8>)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<_> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for (name, path) in files {
        let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        if size > MAX_CONFIG_FILE {
            state.notify(&format!(
                "uji.config.files: {} is {size} bytes, over the 1 MiB a config file may be; it was left out",
                path.display()
            ));
            continue;
        }
        if let Ok(text) = std::fs::read(&path) {
            out.push((name, path, text));
        }
    }
    out
}

/// Installs the natives on the raw table (the prelude builds `uji.fs`,
/// `uji.data` and `uji.config.files` from them).
pub fn install(lua: &Lua, t: &Table) -> mlua::Result<()> {
    t.set("fs_read", native(lua, |lua, _, a| fs_read(lua, a))?)?;
    t.set("fs_lines", native(lua, |lua, _, a| fs_lines(lua, a))?)?;
    t.set("fs_write", native(lua, fs_write)?)?;
    t.set("fs_list", native(lua, |lua, _, a| fs_list(lua, a))?)?;
    t.set("fs_stat", native(lua, |lua, _, a| fs_stat(lua, a))?)?;
    t.set("fs_glob", native(lua, |lua, _, a| fs_glob(lua, a))?)?;
    t.set("data_read", native(lua, data_read)?)?;
    t.set("data_write", native(lua, data_write)?)?;
    t.set("config_files", native(lua, config_files)?)?;
    Ok(())
}

/// A native: `true, results...` or `false, message` (see the module doc).
fn native<A, F>(lua: &Lua, f: F) -> mlua::Result<mlua::Function>
where
    A: mlua::FromLuaMulti,
    F: Fn(&Lua, &State, A) -> Answer + 'static,
{
    crate::api::raw(lua, move |lua, state, args: A| f(lua, state, args))
}
