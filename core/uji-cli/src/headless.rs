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
            if as_json {
                match kind {
                    "session" => line(
                        &mut out,
                        &json!({"type": "session", "id": event["id"], "schema": JSON_SCHEMA_VERSION}),
                    )?,
                    "message" => line(
                        &mut out,
                        &json!({"type": "message", "message": event["message"]}),
                    )?,
                    "progress" => line(
                        &mut out,
                        &json!({"type": "progress", "tool": event["tool"], "line": event["line"]}),
                    )?,
                    "notice" => line(&mut out, &json!({"type": "notice", "text": event["text"]}))?,
                    "turn_finished" => {
                        let mut done = json!({"type": "done", "usage": event["usage"]});
                        if let Some(error) = event["error"].as_str() {
                            done["error"] = json!(error);
                        } else if event["interrupted"] == json!(true) {
                            done["error"] = json!("interrupted");
                        } else {
                            done["text"] = event["text"].clone();
                        }
                        line(&mut out, &done)?;
                    }
                    _ => {}
                }
            } else {
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
                    "notice" => eprintln!("uji: {}", event["text"].as_str().unwrap_or_default()),
                    "turn_finished" => {
                        if let Some(text) = event["text"].as_str() {
                            let text = text.trim_end_matches('\n');
                            writeln!(out, "{text}")
                                .map_err(|e| format!("cannot write to stdout: {e}"))?;
                        }
                    }
                    _ => {}
                }
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
