//! Loading the user's configuration and the modules uji ships.

use std::path::{Path, PathBuf};

use mlua::Function;

use crate::runtime::State;

mod shipped_modules {
    include!(concat!(env!("OUT_DIR"), "/modules.rs"));
}

/// The shipped module `name`: (file under lua/, source).
pub fn shipped(name: &str) -> Option<(&'static str, &'static str)> {
    shipped_modules::MODULES
        .iter()
        .find(|(module, _, _)| *module == name)
        .map(|(_, file, source)| (*file, *source))
}

/// Names of every shipped module.
pub fn shipped_names() -> Vec<&'static str> {
    shipped_modules::MODULES
        .iter()
        .map(|(m, _, _)| *m)
        .collect()
}

/// Runs one Lua file; an error becomes a notice and loading goes on.
pub fn run_file(state: &State, path: &Path) -> bool {
    let source = match std::fs::read(path) {
        Ok(source) => source,
        Err(e) => {
            state.notify(&format!("cannot read {}: {e}", path.display()));
            return false;
        }
    };
    let result = state
        .lua
        .load(source)
        .set_name(format!("@{}", path.display()))
        .exec();
    match result {
        Ok(()) => true,
        Err(e) => {
            state.report(&format!("loading {}", path.display()), &e);
            false
        }
    }
}

/// Runs `require(name)`; an error becomes a notice.
fn require(state: &State, name: &str) -> bool {
    let result = state
        .lua
        .globals()
        .get::<Function>("require")
        .and_then(|require| require.call::<()>(name));
    match result {
        Ok(()) => true,
        Err(e) => {
            state.report(&format!("require(\"{name}\")"), &e);
            false
        }
    }
}

/// `<config>/plugin/*.lua`, sorted by file name.
fn plugin_files(config: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(config.join("plugin")) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "lua") && p.is_file())
        .collect();
    files.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
    files
}

/// Runs `<config>/init.lua` (or the built-in defaults when there is none),
/// then every `<config>/plugin/*.lua` in name order.
pub fn load_config(state: &State) {
    let config = state.config_dir.clone();
    let init = config.as_ref().map(|c| c.join("init.lua"));
    match init {
        Some(init) if init.is_file() => {
            run_file(state, &init);
        }
        _ => {
            require(state, "uji.defaults");
        }
    }
    if let Some(config) = config {
        for file in plugin_files(&config) {
            run_file(state, &file);
        }
    }
}
