//! uji's Lua plugin: runs the user's `init.lua` and `plugin/*.lua` on
//! LuaJIT and offers them the `uji.*` API (tools, policy, hooks, wires,
//! commands, key bindings, timers, JSON). Everything is registered through
//! the same [`uji_sdk::Host`] native plugins use.
//!
//! Lua runs on a thread of its own ([`runtime`]); uji's calls into Lua are
//! jobs queued to it. See docs/lua.md for the Lua side.

mod api;
mod bytes;
mod convert;
mod dialogs;
mod errors;
mod events;
mod files;
mod frontmatter;
mod http;
mod interrupt;
mod job;
mod limits;
mod load;
mod packs;
mod runtime;
mod served;
mod session;
mod tool;
mod wire;

use std::path::PathBuf;

use uji_sdk::{Host, Plugin};

pub use errors::{LuaFailure, split_location};
pub use load::shipped_names;

/// The plugin uji loads as `lua`.
pub struct LuaPlugin;

impl Plugin for LuaPlugin {
    const NAME: &'static str = "lua";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const DESCRIPTION: &'static str =
        "Lua configuration and scripting: init.lua, plugin/*.lua and the uji.* API";

    fn init(host: &Host) -> Result<(), String> {
        let config_dir = host
            .config("config_dir")
            .and_then(|v| v.as_str().map(PathBuf::from));
        let link = runtime::start(host.clone(), config_dir)?;
        // Wait: the policy the config sets must be in place when boot returns.
        link.call(|state| load::load_config(state))
    }
}

uji_sdk::export_plugin!(LuaPlugin);
