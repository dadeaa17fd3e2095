//! MCP servers: the host services the MCP plugin serves (ABI 1.1) and
//! what they answer. `uji.mcp.*` (the Lua prelude), the ACP frontend
//! (an editor's servers) and the CLI (`uji mcp list|trust`) all call
//! these; without the MCP plugin a call fails as a service uji does not
//! offer ([`NO_SUCH_SERVICE`](crate::services::NO_SUCH_SERVICE)).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::services::{Service, service};

/// Where a server is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ServerState {
    /// Configured; it starts with the first session (or `uji mcp list`).
    Configured,
    Starting,
    Running,
    Failed,
    Stopped,
    /// A state a newer MCP plugin reports that this uji does not know.
    #[serde(other)]
    Unknown,
}

impl ServerState {
    /// "configured", "running"… as `uji mcp list` prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            ServerState::Configured => "configured",
            ServerState::Starting => "starting",
            ServerState::Running => "running",
            ServerState::Failed => "failed",
            ServerState::Stopped => "stopped",
            ServerState::Unknown => "unknown",
        }
    }
}

/// What `uji mcp list`, `/mcp` and `uji.mcp.list()` show of a server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerStatus {
    pub name: String,
    /// `stdio` or `http`.
    pub transport: String,
    pub state: ServerState,
    /// Its tools as uji names them (`server__tool`).
    #[serde(default)]
    pub tools: Vec<String>,
    #[serde(default)]
    pub last_error: Option<String>,
    #[serde(default)]
    pub restarts: u32,
}

/// `mcp.add`: adds (or replaces) an MCP server, exactly as `uji.mcp.add(name,
/// spec)` does: `spec` is `{command, args?, env?, cwd?}` for a stdio server or
/// `{url, headers?}` for a streamable-HTTP one (plus `timeout?`, `policy?`).
/// The error says what to fix. Answers `true`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct McpAdd {
    pub name: String,
    pub spec: Value,
}
service!(
    McpAdd,
    "mcp.add",
    "{\"name\": server, \"spec\": {\"command\", \"args\"?, \"env\"?, \"cwd\"?} or {\"url\", \"headers\"?}}",
    bool
);

/// `mcp.remove`: stops and forgets a server; answers whether there was one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpRemove {
    pub name: String,
}
service!(McpRemove, "mcp.remove", "{\"name\": server}", bool);

/// `mcp.list`: every server's status. `start` first starts the servers
/// (as a session would); `wait_ms` waits at most that long for servers
/// still starting (by default as long as their handshakes may take when
/// starting them, else not at all).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpList {
    #[serde(default)]
    pub start: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_ms: Option<u64>,
}
service!(
    McpList,
    "mcp.list",
    "{\"start\"?: boolean, \"wait_ms\"?: milliseconds}",
    Vec<ServerStatus>
);

/// `mcp.start`: starts the servers (and deals with the project's
/// `.mcp.json`) and waits for their handshakes; answers their status.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpStart {}
service!(McpStart, "mcp.start", "{}", Vec<ServerStatus>);

/// `mcp.trust_project`: trusts the current directory's `.mcp.json` for
/// this session (`uji.mcp.trust_project()`); answers the servers it added.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpTrustProject {}
service!(McpTrustProject, "mcp.trust_project", "{}", Vec<String>);

/// `mcp.trust`: remembers that the current directory's `.mcp.json`, as it
/// is now, is trusted (`uji mcp trust`), or with `revoke` forgets the
/// decision.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpTrust {
    #[serde(default)]
    pub revoke: bool,
}
service!(
    McpTrust,
    "mcp.trust",
    "{\"revoke\"?: boolean}",
    TrustDecision
);

/// What [`McpTrust`] did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustDecision {
    /// The `.mcp.json` decided about.
    pub path: String,
    /// The file the decision is remembered in.
    pub file: String,
    /// Trusting: the servers the file names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trusted: Option<Vec<String>>,
    /// Revoking: whether a decision was remembered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked: Option<bool>,
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn a_status_reads_as_the_plugin_has_always_written_it() {
        let status: ServerStatus = serde_json::from_value(json!({
            "name": "t", "transport": "stdio", "state": "running",
            "tools": ["t__echo"], "last_error": null, "restarts": 0
        }))
        .unwrap();
        assert_eq!(status.state, ServerState::Running);
        assert_eq!(
            serde_json::to_value(&status).unwrap()["state"],
            json!("running")
        );
    }

    #[test]
    fn a_state_a_newer_plugin_adds_is_unknown_not_an_error() {
        let state: ServerState = serde_json::from_value(json!("paused")).unwrap();
        assert_eq!(state, ServerState::Unknown);
    }

    #[test]
    fn list_without_fields_neither_starts_nor_waits() {
        let list: McpList = serde_json::from_value(json!({})).unwrap();
        assert_eq!(list, McpList::default());
        assert_eq!(
            serde_json::to_value(&list).unwrap(),
            json!({"start": false})
        );
    }
}
