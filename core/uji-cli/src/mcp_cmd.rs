//! `uji mcp list`: asks the mcp plugin (through the `mcp.list` event it
//! handles) for its servers, after init.lua has configured them.

use std::path::PathBuf;

use serde_json::{Value, json};

/// How long `uji mcp list` waits for servers still starting.
const WAIT_MS: u64 = 10_000;

pub fn list(
    config_dir: Option<PathBuf>,
    data_dir: Option<PathBuf>,
    json: bool,
) -> Result<(), String> {
    let booted = crate::tool_cmd::boot(config_dir, data_dir)?;
    let answers = booted
        .registry
        .emit("mcp.list", json!({ "wait_ms": WAIT_MS }));
    let Some(servers) = answers.iter().find_map(|a| a.get("ok")).cloned() else {
        return Err("the mcp plugin (libuji_plugin_mcp) is not loaded".to_string());
    };
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
