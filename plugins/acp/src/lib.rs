//! `uji acp`: uji as an Agent Client Protocol agent, for editors (Zed,
//! Neovim's CodeCompanion) that spawn it and speak JSON-RPC on its stdin
//! and stdout. A frontend plugin like the TUI: it only sends operations and
//! reads events of the frontend protocol (docs/frontends.md, docs/editors.md).
//!
//! The protocol is the `agent-client-protocol` crate's: its schema types and
//! its connection (JSON-RPC framing, request routing, errors for malformed
//! input). The connection is runtime-agnostic futures; it runs on a
//! current-thread tokio runtime this plugin owns (a cdylib cannot share uji's
//! runtime: it has its own copy of tokio's statics). uji's events, read from
//! the frontend session on a thread of their own, come into that runtime
//! through a channel (`connection::Input`).

mod agent;
mod connection;
mod editor_fs;
mod editor_write;
mod mcp;
mod plan;
mod prompt;
mod sessions;
mod updates;

use std::sync::{Arc, OnceLock};

use serde_json::Value;
use uji_protocol::{HookOptions, LogLevel};
use uji_sdk::{Frontend, FrontendSession, Host, Plugin};

static HOST: OnceLock<Host> = OnceLock::new();

/// Diagnostics go to uji's log file: stdout belongs to the editor.
pub(crate) fn log_warn(message: &str) {
    if let Some(host) = HOST.get() {
        host.log(LogLevel::Warn, &format!("acp: {message}"));
    }
}

pub(crate) fn log_info(message: &str) {
    if let Some(host) = HOST.get() {
        host.log(LogLevel::Info, &format!("acp: {message}"));
    }
}

/// What `uji.config.set("acp", { … })` switches on.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Settings {
    /// Read files through the editor (`fs/read_text_file`), so open buffers
    /// are read with their unsaved changes, when the editor offers it.
    pub editor_fs: bool,
}

impl Settings {
    fn from_config(host: Option<&Host>) -> Settings {
        let config = host.and_then(|h| h.config("acp")).unwrap_or(Value::Null);
        Settings {
            editor_fs: config["editor_fs"] == true,
        }
    }
}

struct Session(Arc<FrontendSession>);

impl agent::Ops for Session {
    fn submit(&self, op: &Value) -> Result<(), String> {
        self.0.submit_json(op).map_err(|e| e.to_string())
    }

    /// The MCP plugin, when loaded, offers the host service `mcp.add`;
    /// without it the editor's server is logged and left out.
    fn add_mcp_server(&self, server: &Value) {
        let Some(host) = HOST.get() else { return };
        if let Err(e) = host.call("mcp.add", server) {
            log_warn(&format!(
                "the editor's MCP server {} is not used ({e}); load the MCP plugin to use it",
                server["name"]
            ));
        }
    }
}

struct Acp;

impl Frontend for Acp {
    fn run(&self, session: FrontendSession) -> Result<(), String> {
        let settings = Settings::from_config(HOST.get());
        if settings.editor_fs
            && let Some(host) = HOST.get()
        {
            add_editor_hooks(host)?;
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .thread_name("uji-acp")
            .build()
            .map_err(|e| format!("could not start the ACP plugin's runtime: {e}"))?;
        let session = Arc::new(session);
        let ops = Session(Arc::clone(&session));
        let served = runtime.block_on(connection::serve(session, &ops, settings));
        editor_fs::stop();
        served
    }
}

/// The handlers behind editor_fs, added only when `uji acp` runs with it
/// on: every hook is handed the whole call (a 10 MB write_file's text
/// included), so other commands and editor_fs off pay nothing for them.
fn add_editor_hooks(host: &Host) -> Result<(), String> {
    // First of the after_tool handlers, so the user's see the editor's text.
    let options = HookOptions {
        priority: 0,
        name: Some("acp-editor-fs".into()),
    };
    host.on("after_tool", options, editor_fs::after_tool)?;
    // Keeps a file's text before an edit, for the write back to the
    // editor; it never decides a call.
    let options = HookOptions {
        priority: 0,
        name: Some("acp-editor-write".into()),
    };
    host.on("before_tool", options, editor_write::before_tool)
}

struct AcpPlugin;

impl Plugin for AcpPlugin {
    const NAME: &'static str = "acp";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    fn init(host: &Host) -> Result<(), String> {
        let _ = HOST.set(host.clone());
        host.register_frontend("acp", Acp)
    }
}

uji_sdk::export_plugin!(AcpPlugin);
