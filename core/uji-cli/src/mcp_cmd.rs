//! `uji mcp list` and `uji mcp trust`: ask the mcp plugin (through the
//! `mcp.*` events it handles) after init.lua has configured it.

use std::path::PathBuf;

use serde_json::{Value, json};

pub fn list(
    config_dir: Option<PathBuf>,
    data_dir: Option<PathBuf>,
    json: bool,
) -> Result<(), String> {
    let booted = crate::tool_cmd::boot(config_dir, data_dir)?;
    // Listing starts the servers: their state and tools are the point.
    let servers = ask(&booted.registry, "mcp.list", json!({ "start": true }))?;
    crate::print_notices(&booted.registry);
    if json {
        return crate::out::print(&format!("{servers}\n"));
    }
    let mut out = String::new();
    for server in servers.as_array().into_iter().flatten() {
        out.push_str(&line(server));
        out.push('\n');
    }
    if out.is_empty() {
        out.push_str("no MCP servers configured\n");
    }
    crate::out::print(&out)
}

/// The `ok` of the mcp plugin's answer to `event`, or its error.
fn ask(registry: &uji_host::Registry, event: &str, payload: Value) -> Result<Value, String> {
    for answer in registry.emit(event, payload) {
        if let Some(error) = answer.get("error").and_then(Value::as_str) {
            return Err(error.to_string());
        }
        if let Some(ok) = answer.get("ok") {
            return Ok(ok.clone());
        }
    }
    Err("the mcp plugin (libuji_plugin_mcp) is not loaded".to_string())
}

/// `uji mcp trust [--revoke]`: remembers that the current directory's
/// `.mcp.json`, as it is now, is trusted (or forgets the decision).
pub fn trust(
    config_dir: Option<PathBuf>,
    data_dir: Option<PathBuf>,
    revoke: bool,
) -> Result<(), String> {
    let booted = crate::tool_cmd::boot(config_dir, data_dir)?;
    let answer = ask(&booted.registry, "mcp.trust", json!({ "revoke": revoke }))?;
    let path = answer["path"].as_str().unwrap_or_default();
    let file = answer["file"].as_str().unwrap_or_default();
    let text = if revoke && answer["revoked"] == Value::Bool(true) {
        format!(
            "uji: forgot the trust decision for {path} (in {file}); the next session asks again\n"
        )
    } else if revoke {
        format!("uji: no trust decision was remembered for {path}\n")
    } else {
        let names: Vec<&str> = answer["trusted"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        format!(
            "uji: trusted {path} as it is now (servers: {}); remembered in {file} until the file changes\n",
            names.join(", ")
        )
    };
    crate::out::print(&text)
}

/// Servers configured but not started (no session ran), for `uji tool list`.
pub fn not_started(registry: &uji_host::Registry) -> Vec<String> {
    let Ok(servers) = ask(registry, "mcp.list", json!({ "wait_ms": 0 })) else {
        return Vec::new();
    };
    servers
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| s["state"] == "configured")
        .filter_map(|s| s["name"].as_str().map(str::to_string))
        .collect()
}

/// Starts the servers (for `uji tool run` of a tool no server has listed
/// yet) and waits for them (at most their handshake timeouts).
pub fn start(registry: &uji_host::Registry) {
    let _ = ask(registry, "mcp.start", json!({}));
}

fn line(server: &Value) -> String {
    let s = |key: &str| server[key].as_str().unwrap_or_default().to_string();
    let tools: Vec<&str> = server["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut text = format!(
        "{}\t{}\t{}\t{}",
        s("name"),
        s("transport"),
        s("state"),
        tools.join(",")
    );
    if let Some(error) = server["last_error"].as_str() {
        text.push_str(&format!("\tlast error: {error}"));
    }
    text
}
