//! The editor's MCP servers as `mcp.add` requests for the MCP plugin:
//! `{"name", "spec"}` with the spec `uji.mcp.add` takes (docs/mcp.md).

use std::path::Path;

use agent_client_protocol::v1::schema::McpServer;
use serde_json::{Map, Value, json};

/// One editor MCP server, as the MCP plugin's `mcp.add` takes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Server {
    /// The server's name, for the log.
    pub name: String,
    /// `{"name", "spec"}`.
    pub request: Value,
}

/// One `mcp.add` request per server uji can run; SSE servers (uji does not
/// advertise them) are logged and left out.
pub fn specs(servers: &[McpServer], cwd: &Path) -> Vec<Server> {
    servers.iter().filter_map(|s| spec(s, cwd)).collect()
}

fn spec(server: &McpServer, cwd: &Path) -> Option<Server> {
    let (name, spec) = match server {
        McpServer::Stdio(stdio) => {
            let env: Map<String, Value> = stdio
                .env
                .iter()
                .map(|v| (v.name.clone(), Value::String(v.value.clone())))
                .collect();
            let spec = json!({
                "command": stdio.command.to_string_lossy(),
                "args": stdio.args,
                "env": env,
                "cwd": cwd.to_string_lossy(),
            });
            (&stdio.name, spec)
        }
        McpServer::Http(http) => {
            let headers: Map<String, Value> = http
                .headers
                .iter()
                .map(|h| (h.name.clone(), Value::String(h.value.clone())))
                .collect();
            (&http.name, json!({"url": http.url, "headers": headers}))
        }
        other => {
            crate::log_warn(&format!(
                "the editor's MCP server {other:?} uses a transport uji does not speak (stdio and HTTP only); it is left out"
            ));
            return None;
        }
    };
    Some(Server {
        name: name.clone(),
        request: json!({"name": name, "spec": spec}),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn stdio_and_http_servers_become_mcp_add_requests() {
        let servers: Vec<McpServer> = serde_json::from_value(json!([
            {"name": "files", "command": "/bin/srv", "args": ["-v"],
             "env": [{"name": "TOKEN", "value": "t"}]},
            {"type": "http", "name": "web", "url": "http://127.0.0.1:9/mcp",
             "headers": [{"name": "Authorization", "value": "Bearer x"}]},
            {"type": "sse", "name": "old", "url": "http://127.0.0.1:9/sse", "headers": []},
        ]))
        .unwrap();
        let specs = specs(&servers, Path::new("/w"));
        let requests: Vec<Value> = specs.into_iter().map(|s| s.request).collect();
        assert_eq!(
            requests,
            [
                json!({"name": "files", "spec": {"command": "/bin/srv", "args": ["-v"],
                    "env": {"TOKEN": "t"}, "cwd": "/w"}}),
                json!({"name": "web", "spec": {"url": "http://127.0.0.1:9/mcp",
                    "headers": {"Authorization": "Bearer x"}}}),
            ]
        );
    }
}
