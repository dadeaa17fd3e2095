//! `uji mcp list` and `uji mcp trust`: ask the mcp plugin (through the
//! `mcp.*` host services it serves) after init.lua has configured it.

use std::path::PathBuf;

use uji_protocol::mcp::{McpList, McpStart, McpTrust, ServerState, ServerStatus};
use uji_protocol::services::Service;

pub fn list(
    config_dir: Option<PathBuf>,
    data_dir: Option<PathBuf>,
    json: bool,
) -> Result<(), String> {
    let booted = crate::tool_cmd::boot(config_dir, data_dir)?;
    // Listing starts the servers: their state and tools are the point.
    let request = McpList {
        start: true,
        wait_ms: None,
    };
    let servers = ask(&booted.registry, &request)?;
    crate::print_notices(&booted.registry);
    if json {
        let servers = serde_json::to_string(&servers).map_err(|e| e.to_string())?;
        return crate::out::print(&format!("{servers}\n"));
    }
    let mut out = String::new();
    for server in &servers {
        out.push_str(&line(server));
        out.push('\n');
    }
    if out.is_empty() {
        out.push_str("no MCP servers configured\n");
    }
    crate::out::print(&out)
}

/// The mcp plugin's answer to `request`, or its error.
fn ask<S: Service>(registry: &uji_host::Registry, request: &S) -> Result<S::Answer, String> {
    if !registry.serves(S::METHOD) {
        return Err(
            "the mcp plugin (libuji_plugin_mcp) is not loaded; `uji plugins` says why".to_string(),
        );
    }
    registry.call(uji_host::CORE_CALLER, request)
}

/// `uji mcp trust [--revoke]`: remembers that the current directory's
/// `.mcp.json`, as it is now, is trusted (or forgets the decision).
pub fn trust(
    config_dir: Option<PathBuf>,
    data_dir: Option<PathBuf>,
    revoke: bool,
) -> Result<(), String> {
    let booted = crate::tool_cmd::boot(config_dir, data_dir)?;
    let answer = ask(&booted.registry, &McpTrust { revoke })?;
    let (path, file) = (&answer.path, &answer.file);
    let text = if revoke && answer.revoked == Some(true) {
        format!(
            "uji: forgot the trust decision for {path} (in {file}); the next session asks again\n"
        )
    } else if revoke {
        format!("uji: no trust decision was remembered for {path}\n")
    } else {
        let names = answer.trusted.clone().unwrap_or_default();
        format!(
            "uji: trusted {path} as it is now (servers: {}); remembered in {file} until the file changes\n",
            names.join(", ")
        )
    };
    crate::out::print(&text)
}

/// Servers configured but not started (no session ran), for `uji tool list`.
pub fn not_started(registry: &uji_host::Registry) -> Vec<String> {
    let request = McpList {
        start: false,
        wait_ms: Some(0),
    };
    let Ok(servers) = ask(registry, &request) else {
        return Vec::new();
    };
    servers
        .into_iter()
        .filter(|s| s.state == ServerState::Configured)
        .map(|s| s.name)
        .collect()
}

/// Starts the servers (for `uji tool run` of a tool no server has listed
/// yet) and waits for them (at most their handshake timeouts).
pub fn start(registry: &uji_host::Registry) {
    let _ = ask(registry, &McpStart {});
}

fn line(server: &ServerStatus) -> String {
    let mut text = format!(
        "{}\t{}\t{}\t{}",
        server.name,
        server.transport,
        server.state.as_str(),
        server.tools.join(",")
    );
    if let Some(error) = &server.last_error {
        text.push_str(&format!("\tlast error: {error}"));
    }
    text
}
