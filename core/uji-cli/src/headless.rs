//! The headless frontend: what `uji run` shows. Compiled into the binary so
//! scripts and CI never depend on a plugin loading, yet registered through
//! the same Frontend interface as any other frontend.
//!
//! Text mode prints the final answer on stdout and what happens on stderr.
//! `--json` prints one JSON object per line on stdout: the versioned schema
//! documented in docs/headless.md.

use std::io::Write;

use serde_json::{Value, json};
use uji_host::PluginModuleRef;
use uji_sdk::{Frontend, FrontendSession, Host, Plugin};

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

fn line(out: &mut impl Write, value: &Value) -> Result<(), String> {
    writeln!(out, "{value}").map_err(|e| format!("cannot write to stdout: {e}"))
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
fn json_line(out: &mut impl Write, kind: &str, event: &Value) -> Result<(), String> {
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
fn text_line(out: &mut impl Write, kind: &str, event: &Value) -> Result<(), String> {
    match kind {
        "tool_started" => {
            let verb = event["verb"]
                .as_str()
                .or(event["name"].as_str())
                .unwrap_or_default();
            eprintln!(
                "uji: {verb} {}",
                event["subject"].as_str().unwrap_or_default()
            );
        }
        "notice" => eprintln!("uji: {}", notice_text(event)),
        "turn_finished" => {
            if let Some(text) = event["text"].as_str() {
                let text = text.trim_end_matches('\n');
                writeln!(out, "{text}").map_err(|e| format!("cannot write to stdout: {e}"))?;
            }
        }
        _ => {}
    }
    Ok(())
}

impl Frontend for Headless {
    fn run(&self, session: FrontendSession) -> Result<(), String> {
        let as_json = self.host.config(JSON_KEY) == Some(Value::Bool(true));
        let stdout = std::io::stdout();
        let mut out = stdout.lock();
        loop {
            let event = match session.next_event(250) {
                Ok(Some(event)) => event,
                Ok(None) => continue,
                Err(_) => return Ok(()),
            };
            let kind = event["type"].as_str().unwrap_or_default();
            if kind == "error" {
                // An operation failed (the prompt could not start a turn):
                // nothing more will come of this run.
                eprintln!(
                    "uji: error: {}",
                    event["message"].as_str().unwrap_or_default()
                );
                let _ = session.submit(&json!({"type": "shutdown"}));
                continue;
            }
            if as_json {
                json_line(&mut out, kind, &event)?;
            } else {
                text_line(&mut out, kind, &event)?;
            }
            if kind == "turn_finished" {
                out.flush()
                    .map_err(|e| format!("cannot write to stdout: {e}"))?;
                let _ = session.submit(&json!({"type": "shutdown"}));
            }
            if kind == "closed" {
                out.flush()
                    .map_err(|e| format!("cannot write to stdout: {e}"))?;
                return Ok(());
            }
        }
    }
}
