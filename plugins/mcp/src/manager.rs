//! The servers configured so far, and the events `uji.mcp.*` sends.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use uji_sdk::{Host, LogLevel};

use crate::config::{self, ServerConfig};
use crate::runtime;
use crate::server::{self, Server, State};

pub const EVENTS: [&str; 4] = ["mcp.add", "mcp.remove", "mcp.list", "mcp.trust_project"];

/// Trusts the project's `.mcp.json` without init.lua (headless runs, CI).
const TRUST_ENV: &str = "UJI_MCP_TRUST_PROJECT";

#[derive(Clone)]
pub struct Manager {
    host: Host,
    servers: Arc<Mutex<BTreeMap<String, Arc<Server>>>>,
}

impl Manager {
    pub fn new(host: Host) -> Manager {
        Manager {
            host,
            servers: Arc::default(),
        }
    }

    fn servers(&self) -> Vec<Arc<Server>> {
        self.servers
            .lock()
            .map(|s| s.values().cloned().collect())
            .unwrap_or_default()
    }

    /// Answers one event; failures come back as `{error = "…"}` for the
    /// prelude to raise at the caller's line.
    pub fn handle(&self, event: &str, payload: &Value) -> Value {
        let result = match event {
            "mcp.add" => self.add_from(payload),
            "mcp.remove" => Ok(json!(
                self.remove(payload["name"].as_str().unwrap_or_default())
            )),
            "mcp.list" => Ok(self.list(payload["wait_ms"].as_u64().unwrap_or(0))),
            "mcp.trust_project" => self.trust_project(payload["cwd"].as_str()),
            _ => Err(format!("unknown event {event}")),
        };
        match result {
            Ok(answer) => json!({ "ok": answer }),
            Err(error) => json!({ "error": error }),
        }
    }

    fn add_from(&self, payload: &Value) -> Result<Value, String> {
        let name = payload["name"].as_str().unwrap_or_default();
        let config = ServerConfig::parse(name, &payload["spec"]).map_err(|e| e.to_string())?;
        self.add(config)?;
        Ok(Value::Bool(true))
    }

    /// Starts a server in the background; one of the same name is replaced.
    pub fn add(&self, config: ServerConfig) -> Result<(), String> {
        let name = config.name.clone();
        self.remove(&name);
        let server = Server::new(config, self.host.clone());
        runtime::spawn(Arc::clone(&server).supervise())?;
        if let Ok(mut servers) = self.servers.lock() {
            servers.insert(name, server);
        }
        Ok(())
    }

    pub fn remove(&self, name: &str) -> bool {
        let removed = self.servers.lock().ok().and_then(|mut s| s.remove(name));
        match removed {
            Some(server) => {
                server.stop();
                true
            }
            None => false,
        }
    }

    /// Every server's status. With `wait_ms`, first waits (at most that
    /// long) for the servers still starting, so `uji mcp list` shows results.
    pub fn list(&self, wait_ms: u64) -> Value {
        let deadline = Instant::now() + Duration::from_millis(wait_ms);
        while Instant::now() < deadline
            && self
                .servers()
                .iter()
                .any(|s| s.status().state == State::Starting)
        {
            std::thread::sleep(Duration::from_millis(20));
        }
        server::statuses_json(&self.servers())
    }

    /// The `/mcp` listing.
    pub fn describe(&self) -> String {
        let servers = self.servers();
        if servers.is_empty() {
            return "no MCP servers configured (add one with uji.mcp.add in init.lua)".to_string();
        }
        servers
            .iter()
            .map(|s| describe_one(&s.status()))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Starts the servers of `<cwd>/.mcp.json`: the user trusts the file.
    fn trust_project(&self, cwd: Option<&str>) -> Result<Value, String> {
        let dir = match cwd {
            Some(dir) => std::path::PathBuf::from(dir),
            None => std::env::current_dir().map_err(|e| format!("current directory: {e}"))?,
        };
        let path = dir.join(".mcp.json");
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(json!([])),
            Err(e) => return Err(format!("{}: {e}", path.display())),
        };
        let configs =
            config::parse_project(&path.display().to_string(), &text).map_err(|e| e.to_string())?;
        let names: Vec<String> = configs.iter().map(|c| c.name.clone()).collect();
        for config in configs {
            self.add(config)?;
        }
        Ok(json!(names))
    }

    /// `UJI_MCP_TRUST_PROJECT=1`: trust `.mcp.json` of the current directory.
    pub fn trust_from_env(&self) {
        if std::env::var(TRUST_ENV).is_ok_and(|v| v == "1") {
            if let Err(e) = self.trust_project(None) {
                self.host.notify(&format!("mcp: {e}"));
            }
        } else if std::path::Path::new(".mcp.json").exists() {
            self.host.log(
                LogLevel::Info,
                "mcp: .mcp.json not trusted, its servers are not started \
                 (uji.mcp.trust_project() in init.lua or UJI_MCP_TRUST_PROJECT=1)",
            );
        }
    }
}

fn describe_one(s: &server::Status) -> String {
    let state = serde_json::to_value(s.state).unwrap_or_default();
    let state = state.as_str().unwrap_or("?");
    let mut line = format!(
        "{} ({}) {state}: {} tools",
        s.name,
        s.transport,
        s.tools.len()
    );
    if !s.tools.is_empty() {
        line.push_str(&format!(" [{}]", s.tools.join(", ")));
    }
    if let Some(e) = &s.last_error {
        line.push_str(&format!("; last error: {e}"));
    }
    line
}
