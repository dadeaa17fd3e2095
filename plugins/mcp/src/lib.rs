//! uji's MCP client: each configured Model Context Protocol server's tools
//! become uji tools named `server__tool`, registered through the same Host
//! interface as every other plugin's, so the gate applies unchanged.
//!
//! Configuration arrives through the host services the plugin serves
//! (`uji_protocol::mcp`: `mcp.add`, `mcp.remove`, `mcp.list`,
//! `mcp.trust_project`, `mcp.start`, `mcp.trust`), called by the Lua
//! prelude's `uji.mcp.*` (init.lua runs after every native plugin's
//! `init`), by other plugins (the ACP frontend's editor servers) and by the
//! CLI. Servers start with the first session (`session_created`), never for
//! commands that run none.

mod config;
mod connect;
mod convert;
mod manager;
mod project;
mod runtime;
mod server;
mod tool;
mod trust;

use uji_sdk::{Host, Plugin};

struct McpPlugin;

impl Plugin for McpPlugin {
    const NAME: &'static str = "mcp";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const DESCRIPTION: &'static str = "MCP client: tools of Model Context Protocol servers";

    fn init(host: &Host) -> Result<(), String> {
        connect::kill_servers_at_exit();
        let manager = manager::Manager::new(host.clone());
        manager.install(host)?;
        let listing = manager.clone();
        host.register_command("mcp", "MCP servers: state, tools, last error", move |_| {
            Ok(listing.describe())
        })?;
        manager.trust_from_env();
        // Opened while a session runs (uji opens this plugin when something
        // first asks for MCP): that session's start was before our hooks.
        // Servers run from now on (the one being added starts at once);
        // the project's .mcp.json is read on a thread, not inside the call
        // that opened the plugin.
        if host.session_info().is_ok() {
            manager.mark_started();
            let starting = manager.clone();
            std::thread::Builder::new()
                .name("uji-mcp-late-start".to_string())
                .spawn(move || starting.on_session())
                .map_err(|e| format!("cannot start the MCP servers' thread: {e}"))?;
        }
        Ok(())
    }
}

uji_sdk::export_plugin!(McpPlugin);
