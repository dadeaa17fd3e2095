//! `uji acp`: uji as an Agent Client Protocol agent, for editors (Zed,
//! Neovim's CodeCompanion) that spawn it and speak JSON-RPC on its stdin
//! and stdout. A frontend plugin like the TUI: it only sends operations and
//! reads events of the frontend protocol (docs/frontends.md, docs/editors.md).
//!
//! The messages follow the ACP schema (protocol version 1, as in
//! agent-client-protocol-schema 1.20) but are built as JSON here rather than
//! with the `agent-client-protocol` crate: its async runtime would be a
//! second executor inside a cdylib that already gets events as blocking
//! calls, and its schema crate turns on serde_json's `preserve_order` for the
//! whole workspace, changing the key order of every JSON uji prints.

mod agent;
mod prompt;
mod rpc;
mod sessions;
mod updates;

use std::io::BufRead;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, OnceLock};

use serde_json::Value;
use uji_protocol::LogLevel;
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

/// What the main loop waits for: a line from the editor or an event.
enum Input {
    Line(String),
    StdinClosed,
    Event(Value),
    SessionEnded(String),
}

struct Session(Arc<FrontendSession>);

impl agent::Ops for Session {
    fn submit(&self, op: &Value) -> Result<(), String> {
        self.0.submit(op)
    }

    /// The MCP plugin, when loaded, offers the host service `mcp.add`;
    /// without it the editor's servers are logged and left out.
    fn add_mcp_servers(&self, session_id: &str, servers: &Value) {
        let Some(host) = HOST.get() else { return };
        let params = serde_json::json!({"session_id": session_id, "servers": servers});
        if let Err(e) = host.call("mcp.add", &params) {
            log_warn(&format!(
                "the editor's MCP servers are not used ({e}); load the MCP plugin to use them"
            ));
        }
    }
}

fn read_stdin(tx: Sender<Input>) {
    for line in std::io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        if !line.trim().is_empty() && tx.send(Input::Line(line)).is_err() {
            return;
        }
    }
    let _ = tx.send(Input::StdinClosed);
}

fn read_events(session: Arc<FrontendSession>, tx: Sender<Input>) {
    loop {
        let input = match session.next_event(1000) {
            Ok(Some(event)) => Input::Event(event),
            Ok(None) => continue,
            Err(e) => Input::SessionEnded(e),
        };
        let ended = matches!(input, Input::SessionEnded(_));
        if tx.send(input).is_err() || ended {
            return;
        }
    }
}

struct Acp;

impl Frontend for Acp {
    fn run(&self, session: FrontendSession) -> Result<(), String> {
        let session = Arc::new(session);
        let (tx, rx) = channel();
        let events_tx = tx.clone();
        let events = Arc::clone(&session);
        std::thread::Builder::new()
            .name("acp-events".into())
            .spawn(move || read_events(events, events_tx))
            .map_err(|e| format!("cannot start the event reader: {e}"))?;
        // stdin blocks in read(2) with no way to wake it: the thread is left
        // to end with the process.
        std::thread::Builder::new()
            .name("acp-stdin".into())
            .spawn(move || read_stdin(tx))
            .map_err(|e| format!("cannot start the stdin reader: {e}"))?;
        serve(&Session(session), &rx)
    }
}

fn serve(session: &Session, rx: &Receiver<Input>) -> Result<(), String> {
    let out = rpc::Writer::stdout();
    let mut agent = agent::Agent::new(&out, session);
    let mut closing = false;
    while let Ok(input) = rx.recv() {
        let written = match input {
            Input::Line(line) => match rpc::parse(&line) {
                Ok(message) => agent.incoming(message),
                Err((id, error)) => {
                    log_warn(&format!("bad line from the editor: {error}"));
                    out.fail(&id, &error)
                }
            },
            Input::Event(event) => match agent.event(&event) {
                Ok(true) => Ok(()),
                Ok(false) => return Ok(()),
                Err(e) => Err(e),
            },
            Input::StdinClosed => {
                closing = true;
                shutdown(session)
            }
            Input::SessionEnded(e) => return if closing { Ok(()) } else { Err(e) },
        };
        if let Err(e) = written {
            // The editor closed our stdout: end the session as if it had quit.
            log_warn(&format!("stdout closed ({e}); ending the session"));
            closing = true;
            shutdown(session).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

fn shutdown(session: &Session) -> std::io::Result<()> {
    use agent::Ops;
    let op = serde_json::json!({"id": "acp-shutdown", "type": "shutdown"});
    session.submit(&op).map_err(std::io::Error::other)
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
