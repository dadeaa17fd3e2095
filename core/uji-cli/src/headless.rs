//! The headless frontend: what `uji run` shows. Compiled into the binary so
//! scripts and CI never depend on a plugin loading, yet registered through
//! the same Frontend interface as any other frontend.
//!
//! Text mode prints the final answer on stdout and what happens on stderr.
//! `--json` prints one JSON object per line on stdout: the versioned schema
//! documented in docs/headless.md.

use std::collections::HashMap;
use std::io::Write;

use serde_json::{Value, json};
use uji_host::PluginModuleRef;
use uji_sdk::{Frontend, FrontendSession, Host, Plugin};

use crate::out::{WriteError, say, write_to};

/// Version of the `--json` event schema.
pub const JSON_SCHEMA_VERSION: u64 = 1;

/// Config key: print JSON events instead of text.
pub const JSON_KEY: &str = "headless.json";

pub struct HeadlessPlugin;

impl Plugin for HeadlessPlugin {
    const NAME: &'static str = "headless";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const DESCRIPTION: &'static str = "The frontend of `uji run`: text or JSON lines, no screen";

    fn init(host: &Host) -> Result<(), String> {
        host.register_frontend("headless", Headless { host: host.clone() })
    }
}

/// The plugins linked into the executable.
pub fn builtins() -> Vec<(PluginModuleRef, &'static str)> {
    vec![(uji_sdk::in_process_module::<HeadlessPlugin>(), "(built in)")]
}

struct Headless {
    host: Host,
}

fn line(out: &mut impl Write, value: &Value) -> Result<(), WriteError> {
    write_to(out, &format!("{value}\n"))
}

/// A notice as one line: the plugin that sent it, then its text.
fn notice_text(event: &Value) -> String {
    let text = event["text"].as_str().unwrap_or_default();
    match event["source"].as_str() {
        Some(source) => format!("{source}: {text}"),
        None => text.to_string(),
    }
}

/// `--json`: the frontend protocol's events mapped to the stable schema of
/// docs/headless.md (version [`JSON_SCHEMA_VERSION`]).
fn json_line(out: &mut impl Write, kind: &str, event: &Value) -> Result<(), WriteError> {
    match kind {
        "session_configured" => line(
            out,
            &json!({"type": "session", "id": event["id"], "schema": JSON_SCHEMA_VERSION}),
        ),
        "message" => line(
            out,
            &json!({"type": "message", "message": event["message"]}),
        ),
        "progress" => line(
            out,
            &json!({"type": "progress", "tool": event["tool"], "line": event["line"]}),
        ),
        "notice" => line(out, &json!({"type": "notice", "text": notice_text(event)})),
        "turn_finished" => {
            let mut done = json!({"type": "done", "usage": event["usage"]});
            if let Some(error) = event["error"].as_str() {
                done["error"] = json!(error);
            } else if event["interrupted"] == json!(true) {
                done["error"] = json!("interrupted");
            } else {
                done["text"] = event["text"].clone();
            }
            line(out, &done)
        }
        _ => Ok(()),
    }
}

/// Text mode: the answer on stdout, what happens on stderr.
#[derive(Default)]
struct TextMode {
    /// Each call (`run_command ls`) by id, with the reason the gate gave
    /// when it denied the call, for the line saying so.
    calls: HashMap<String, (String, Option<String>)>,
}

impl TextMode {
    fn line(&mut self, out: &mut impl Write, kind: &str, event: &Value) -> Result<(), WriteError> {
        match kind {
            "tool_started" => self.started(event),
            "message" => self.denied(&event["message"]),
            "notice" => {
                // As `uji tool list` prints them: `uji: lua: error: …`.
                let level = if event["level"] == "error" {
                    "error: "
                } else {
                    ""
                };
                let source = event["source"]
                    .as_str()
                    .map(|s| format!("{s}: "))
                    .unwrap_or_default();
                let text = event["text"].as_str().unwrap_or_default();
                say!("uji: {source}{level}{text}");
            }
            "turn_finished" => {
                if let Some(text) = event["text"].as_str() {
                    write_to(out, &format!("{}\n", text.trim_end_matches('\n')))?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// A call the gate let through (or asks about) is shown as it starts;
    /// a denied one only once its result comes.
    fn started(&mut self, event: &Value) {
        let text = |key: &str| event[key].as_str().unwrap_or_default();
        let denied = text("decision") == "deny";
        if !denied {
            let verb = event["verb"].as_str().unwrap_or(text("name"));
            say!("uji: {verb} {}", text("subject"));
        }
        let call = format!("{} {}", text("name"), text("subject"));
        let because = denied.then(|| text("because").to_string());
        self.calls
            .insert(text("call_id").to_string(), (call, because));
    }

    /// A tool result the gate refused: `uji: denied run_command rm -rf /:
    /// deny rule … matched`, the rule that denied it or else the result's
    /// reason (an ask nobody could answer, a hook's denial).
    fn denied(&mut self, message: &Value) {
        if message["role"] != "tool" {
            return;
        }
        let content = message["content"].as_str().unwrap_or_default();
        let Some(reason) = content.strip_prefix("denied: ") else {
            return;
        };
        let call_id = message["tool_call_id"].as_str().unwrap_or_default();
        let (call, because) = self.calls.remove(call_id).unwrap_or_else(|| {
            let name = message["name"].as_str().unwrap_or_default();
            (name.to_string(), None)
        });
        let why = because
            .filter(|b| !b.is_empty())
            .unwrap_or_else(|| reason.lines().next().unwrap_or_default().to_string());
        say!("uji: denied {call}: {why}");
    }
}

impl Frontend for Headless {
    fn run(&self, session: FrontendSession) -> Result<(), String> {
        let as_json = self.host.config(JSON_KEY) == Some(Value::Bool(true));
        let stdout = std::io::stdout();
        let mut out = stdout.lock();
        let mut text = TextMode::default();
        // Once stdout's reader has gone nothing more is printed: the
        // session shuts down (interrupting the turn) and uji exits quietly.
        let mut closed = false;
        loop {
            let event = match session.next_event_value(250) {
                Ok(Some(event)) => event,
                Ok(None) => continue,
                Err(_) => return Ok(()),
            };
            let kind = event["type"].as_str().unwrap_or_default();
            if kind == "closed" {
                return Ok(());
            }
            if closed {
                continue;
            }
            if kind == "error" {
                // An operation failed (the prompt could not start a turn):
                // nothing more will come of this run.
                say!(
                    "uji: error: {}",
                    event["message"].as_str().unwrap_or_default()
                );
                let _ = session.submit_json(&json!({"type": "shutdown"}));
                continue;
            }
            let written = if as_json {
                json_line(&mut out, kind, &event)
            } else {
                text.line(&mut out, kind, &event)
            };
            match written {
                Ok(()) => {}
                Err(WriteError::Closed) => closed = true,
                Err(WriteError::Failed(message)) => return Err(message),
            }
            if closed || kind == "turn_finished" {
                let _ = session.submit_json(&json!({"type": "shutdown"}));
            }
        }
    }
}
