//! Loading the user's configuration and the modules uji ships.

use std::path::{Path, PathBuf};

use mlua::prelude::LuaChunkMode as ChunkMode;
use mlua::prelude::{LuaGcIncParams as GcIncParams, LuaGcMode as GcMode};
use mlua::{Function, Lua, Table, Value};
use serde_json::Value as Json;
use uji_sdk::LogLevel;
use uji_sdk::services::ConfigSet;

use crate::errors::describe;
use crate::limits;
use crate::runtime::State;

pub(crate) mod shipped_modules {
    include!(concat!(env!("OUT_DIR"), "/modules.rs"));
}

/// A chunk uji ships: compiled at build time (build.rs), with its source
/// for the rare LuaJIT that refuses the bytecode.
#[derive(Clone, Copy)]
pub struct Compiled {
    /// `@[uji lua]/uji/defaults.lua`: what errors and tracebacks name.
    pub chunk_name: &'static str,
    pub source: &'static str,
    pub bytecode: &'static [u8],
}

impl Compiled {
    /// The chunk as a function: its bytecode, or its source when this
    /// LuaJIT refuses the bytecode (which would be a build fault; the
    /// source gives the same function, only slower to load).
    pub fn function(&self, lua: &Lua) -> mlua::Result<Function> {
        lua.load(self.bytecode)
            .set_name(self.chunk_name)
            .set_mode(ChunkMode::Binary)
            .into_function()
            .or_else(|_| {
                lua.load(self.source)
                    .set_name(self.chunk_name)
                    .set_mode(ChunkMode::Text)
                    .into_function()
            })
    }
}

/// The shipped module `name`.
pub fn shipped(name: &str) -> Option<Compiled> {
    shipped_modules::MODULES
        .iter()
        .find(|(module, _)| *module == name)
        .map(|(_, compiled)| *compiled)
}

/// Names of every shipped module.
pub fn shipped_names() -> Vec<&'static str> {
    shipped_modules::MODULES.iter().map(|(m, _)| *m).collect()
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
    let result = limits::while_loading(state, || {
        state
            .lua
            .load(source)
            .set_name(format!("@{}", path.display()))
            .exec()
    });
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
    let result = limits::while_loading(state, || {
        state
            .lua
            .globals()
            .get::<Function>("require")
            .and_then(|require| require.call::<()>(name))
    });
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

/// How init.lua failed.
enum InitFailure {
    /// It did not compile (or could not be read): none of it ran.
    NotRun(String),
    /// It stopped at an error: the part before it ran.
    Stopped(String),
}

/// Runs init.lua, telling a file that never ran from one that stopped.
fn run_init(state: &State, path: &Path) -> Result<(), InitFailure> {
    let source = std::fs::read(path)
        .map_err(|e| InitFailure::NotRun(format!("cannot read {}: {e}", path.display())))?;
    let chunk = state
        .lua
        .load(source)
        .set_name(format!("@{}", path.display()))
        .into_function()
        .map_err(|e| InitFailure::NotRun(describe(&e).full()))?;
    limits::while_loading(state, || chunk.call::<()>(())).map_err(|e| {
        state.host.log(LogLevel::Debug, &format!("init.lua: {e}"));
        InitFailure::Stopped(describe(&e).full())
    })
}

/// Whether `require("uji.defaults")` has run.
fn defaults_loaded(state: &State) -> bool {
    let loaded = state
        .lua
        .globals()
        .get::<Table>("package")
        .and_then(|package| package.get::<Table>("loaded"))
        .and_then(|loaded| loaded.get::<Value>("uji.defaults"));
    matches!(loaded, Ok(value) if value.as_boolean() != Some(false) && !value.is_nil())
}

/// After a failed init.lua the shipped defaults still apply (the `rm -rf`
/// deny rule above all): instead of a file that never ran, or after the
/// part that ran when it had not loaded them itself. Tells uji what
/// happened; uji shows it as an error wherever it runs.
fn recover_from(state: &State, failure: InitFailure) {
    let (error, what) = match failure {
        InitFailure::NotRun(error) => (error, "none of init.lua ran"),
        InitFailure::Stopped(error) => (error, "init.lua ran up to that error"),
    };
    let defaults = if defaults_loaded(state) {
        "it had already loaded the shipped defaults (uji.defaults)"
    } else {
        require(state, "uji.defaults");
        "the shipped defaults (uji.defaults) apply"
    };
    let text = format!(
        "{error} ({what}; {defaults}). Fix init.lua and start uji again; `uji tool list` shows this error too"
    );
    let said = state.host.service(&ConfigSet {
        key: CONFIG_ERROR_KEY.to_string(),
        value: Json::String(text.clone()),
    });
    if said.is_err() {
        state.notify(&text);
    }
}

/// What uji reads to show a failed init.lua (`uji_core::boot::CONFIG_ERROR_KEY`).
const CONFIG_ERROR_KEY: &str = "config_error";

/// Registry name of surface.lua's function that runs the `plugin/*.lua`
/// of the packs init.lua added, once the config's own have run.
pub const PACKS_AFTER_CONFIG: &str = "uji.pack.after_config";

/// Registry name of surface.lua's function adding the Lua plugin's own
/// commands (`/reload`, `/sync`), before init.lua (which may replace them).
pub const ADD_COMMANDS: &str = "uji.surface.add_commands";

/// Calls surface.lua's function registered as `name`; an error is a notice
/// saying `what` failed.
fn call_surface(state: &State, name: &str, what: &str) {
    let run = state
        .lua
        .named_registry_value::<Function>(name)
        .and_then(|f| f.call::<()>(()));
    if let Err(e) = run {
        state.report(what, &e);
    }
}

/// Runs `<config>/init.lua` (or the built-in defaults when there is none),
/// then every `<config>/plugin/*.lua` in name order, then those of the
/// packs init.lua added (`uji.pack.add`), pack by pack.
pub fn load_config(state: &State) {
    let pause = |pause| {
        state
            .lua
            .gc_set_mode(GcMode::Incremental(GcIncParams::default().pause(pause)))
    };
    pause(LOADING_PAUSE);
    load_config_files(state);
    pause(RUNNING_PAUSE);
}

/// While the config loads, the collector waits for the heap to grow
/// tenfold instead of doubling: loading allocates steadily and frees
/// little (modules, functions and tables that stay), and with the default
/// pause collecting took about 1.2 ms of a 6 ms `uji models` (perf stat,
/// 2026-12-06). The memory limit holds all the same.
const LOADING_PAUSE: i32 = 1000;
/// Lua's own default, once loading is over.
const RUNNING_PAUSE: i32 = 200;

fn load_config_files(state: &State) {
    call_surface(state, ADD_COMMANDS, "adding /reload and /sync");
    let config = state.config_dir.clone();
    let init = config.as_ref().map(|c| c.join("init.lua"));
    match init {
        Some(init) if init.is_file() => {
            if let Err(failure) = run_init(state, &init) {
                recover_from(state, failure);
            }
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
    call_surface(state, PACKS_AFTER_CONFIG, "running the packs' plugin files");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::shipped_modules::{PRELUDE, SURFACE, TASKS};

    #[test]
    fn every_shipped_chunk_loads_from_its_build_time_bytecode() {
        let lua = Lua::new();
        let own = [PRELUDE, TASKS, SURFACE];
        let modules = shipped_modules::MODULES.iter().map(|(_, c)| *c);
        for bytecode in own.into_iter().chain(modules).map(|c| c.bytecode) {
            assert_eq!(bytecode.first(), Some(&0x1b), "a binary chunk");
            lua.load(bytecode)
                .set_mode(ChunkMode::Binary)
                .into_function()
                .expect("this LuaJIT takes the bytecode build.rs made");
        }
    }

    #[test]
    fn compiled_modules_keep_their_chunk_name_and_lines() {
        let lua = Lua::new();
        let compiled = shipped("uji.frontmatter").expect("shipped");
        let function = compiled.function(&lua).expect("loads");
        let info = function.info();
        assert_eq!(
            info.source.as_deref(),
            Some("@[uji lua]/uji/frontmatter.lua")
        );
        assert!(info.line_defined.is_some());
    }
}
