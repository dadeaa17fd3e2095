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

use serde::Deserialize;
use uji_protocol::frontend::Op;
use uji_protocol::{HookOptions, LogLevel};
use uji_sdk::{Frontend, FrontendSession, Host, Plugin};

use crate::editor_fs::EditorLink;

/// The host, for the log only: diagnostics come from everywhere (hook
/// handlers, the pure modules' warnings), and a handle passed to each would
/// only ever be used for this. Everything else gets the host it needs from
/// the running frontend ([`Acp`]).
static LOG: OnceLock<Host> = OnceLock::new();

/// Diagnostics go to uji's log file: stdout belongs to the editor.
pub(crate) fn log_warn(message: &str) {
    if let Some(host) = LOG.get() {
        host.log(LogLevel::Warn, &format!("acp: {message}"));
    }
}

pub(crate) fn log_info(message: &str) {
    if let Some(host) = LOG.get() {
        host.log(LogLevel::Info, &format!("acp: {message}"));
    }
}

/// What `uji.config.set("acp", { … })` switches on.
#[derive(Debug, Default, Clone, Copy, Deserialize)]
pub(crate) struct Settings {
    /// Read files through the editor (`fs/read_text_file`), so open buffers
    /// are read with their unsaved changes, when the editor offers it.
    #[serde(default)]
    pub editor_fs: bool,
}

impl Settings {
    /// No config, or one that is not a table of these settings: all off.
    fn from_config(host: &Host) -> Settings {
        host.config("acp")
            .and_then(|config| Settings::deserialize(config).ok())
            .unwrap_or_default()
    }
}

struct Session {
    session: Arc<FrontendSession>,
    host: Host,
}

impl agent::Ops for Session {
    fn submit(&self, id: &str, op: &Op) -> Result<(), String> {
        self.session
            .submit_with_id(id, op)
            .map_err(|e| e.to_string())
    }

    /// The MCP plugin, when loaded, offers the host service `mcp.add`;
    /// without it the editor's server is logged and left out.
    fn add_mcp_server(&self, server: &mcp::Server) {
        if let Err(e) = self.host.call("mcp.add", &server.request) {
            log_warn(&format!(
                "the editor's MCP server {:?} is not used ({e}); load the MCP plugin to use it",
                server.name
            ));
        }
    }
}

struct Acp {
    host: Host,
}

impl Frontend for Acp {
    fn run(&self, session: FrontendSession) -> Result<(), String> {
        let settings = Settings::from_config(&self.host);
        // The editor as the file hooks reach it: empty until the editor
        // says in `initialize` that it reads files, emptied when this run
        // ends (the hooks stay registered, and then do nothing).
        let editor = Arc::new(EditorLink::default());
        if settings.editor_fs {
            add_editor_hooks(&self.host, &editor)?;
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .thread_name("uji-acp")
            .build()
            .map_err(|e| format!("could not start the ACP plugin's runtime: {e}"))?;
        let session = Arc::new(session);
        let ops = Session {
            session: Arc::clone(&session),
            host: self.host.clone(),
        };
        let served = runtime.block_on(connection::serve(
            session,
            &ops,
            settings,
            Arc::clone(&editor),
        ));
        editor.stop();
        served
    }
}

/// The handlers behind editor_fs, added only when `uji acp` runs with it
/// on: every hook is handed the whole call (a 10 MB write_file's text
/// included), so other commands and editor_fs off pay nothing for them.
fn add_editor_hooks(host: &Host, editor: &Arc<EditorLink>) -> Result<(), String> {
    // First of the after_tool handlers, so the user's see the editor's text.
    let options = HookOptions {
        priority: 0,
        name: Some("acp-editor-fs".into()),
    };
    let link = Arc::clone(editor);
    host.on("after_tool", options, move |payload| {
        Ok(editor_fs::after_tool(&link, payload))
    })?;
    // Keeps a file's text before an edit, for the write back to the
    // editor; it never decides a call.
    let options = HookOptions {
        priority: 0,
        name: Some("acp-editor-write".into()),
    };
    let link = Arc::clone(editor);
    host.on("before_tool", options, move |payload| {
        editor_write::before_tool(&link, payload);
        Ok(serde_json::Value::Null)
    })
}

struct AcpPlugin;

impl Plugin for AcpPlugin {
    const NAME: &'static str = "acp";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    fn init(host: &Host) -> Result<(), String> {
        let _ = LOG.set(host.clone());
        host.register_frontend("acp", Acp { host: host.clone() })
    }
}

uji_sdk::export_plugin!(AcpPlugin);
