//! uji's MCP client: each configured Model Context Protocol server's tools
//! become uji tools named `server__tool`, registered through the same Host
//! interface as every other plugin's, so the gate applies unchanged.
//!
//! Configuration arrives as events the Lua prelude's `uji.mcp.*` emit
//! (`mcp.add`, `mcp.remove`, `mcp.list`, `mcp.trust_project`), since init.lua
//! runs after every native plugin's `init`; core's `mcp.add` host service
//! (other plugins) and the CLI (`mcp.start`, `mcp.trust`) send the same
//! events. Servers start with the first session (`session_created`), never
//! for commands that run none.

mod config;
mod connect;
mod convert;
mod manager;
mod project;
mod runtime;
mod server;
mod tool;
mod trust;

use uji_sdk::protocol::HookOptions;
use uji_sdk::{Host, Plugin};

struct McpPlugin;

impl Plugin for McpPlugin {
    const NAME: &'static str = "mcp";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const DESCRIPTION: &'static str = "MCP client: tools of Model Context Protocol servers";

    fn init(host: &Host) -> Result<(), String> {
        connect::kill_servers_at_exit();
        let manager = manager::Manager::new(host.clone());
        for event in manager::EVENTS {
            let manager = manager.clone();
            let options = HookOptions {
                name: Some(format!("mcp:{event}")),
                ..HookOptions::default()
            };
            host.on(event, options, move |payload| {
                Ok(manager.handle(event, &payload))
            })?;
        }
        let listing = manager.clone();
        host.register_command("mcp", "MCP servers: state, tools, last error", move |_| {
            Ok(listing.describe())
        })?;
        manager.trust_from_env();
        Ok(())
    }
}

uji_sdk::export_plugin!(McpPlugin);
