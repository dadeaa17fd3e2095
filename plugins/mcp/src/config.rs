//! Server configurations: what `uji.mcp.add` receives and what a project's
//! `.mcp.json` holds (the `mcpServers` format Claude Code uses).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;
use uji_sdk::DeclaredPolicy;

/// How long a server may take to answer `initialize` when no `timeout` is set.
pub const DEFAULT_HANDSHAKE: Duration = Duration::from_secs(30);

/// How long a tool call may wait for its answer when no `call_timeout` is set.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(120);

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("an MCP server needs a name of letters, digits, `-` and `_`, got {0:?}")]
    BadName(String),
    #[error("server {name}: {message}")]
    Spec { name: String, message: String },
    #[error(
        "server {name}: give either `command` (a stdio server) or `url` (a streamable-HTTP server)"
    )]
    NoTransport { name: String },
    #[error("{path}: {message}")]
    ProjectFile { path: String, message: String },
}

/// How to reach one server.
#[derive(Debug, Clone, PartialEq)]
pub enum Transport {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<String>,
    },
    Http {
        url: String,
        headers: BTreeMap<String, String>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    pub name: String,
    pub transport: Transport,
    pub handshake: Duration,
    /// How long a tool call waits for the server's answer.
    pub call_timeout: Duration,
    /// What its tools declare to the gate; rules still override it.
    pub policy: DeclaredPolicy,
}

/// The table `uji.mcp.add` takes (and one entry of `.mcp.json`, whose
/// `type` key says `stdio`, `http` or `sse`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Spec {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<String>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    /// Seconds to wait for the handshake.
    timeout: Option<f64>,
    /// Seconds a tool call may wait for its answer.
    call_timeout: Option<f64>,
    policy: Option<DeclaredPolicy>,
    #[serde(rename = "type")]
    kind: Option<String>,
}

fn check_name(name: &str) -> Result<(), ConfigError> {
    let ok = !name.is_empty()
        && name.len() <= 32
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(ConfigError::BadName(name.to_string()))
    }
}

/// An empty Lua table arrives as an empty array; where a table of names is
/// expected (the spec, `env`, `headers`) it means an empty object.
fn empty_tables_as_objects(spec: Value) -> Value {
    let empty = |v: &Value| matches!(v, Value::Array(items) if items.is_empty());
    match spec {
        v if empty(&v) => Value::Object(Default::default()),
        Value::Object(mut map) => {
            for key in ["env", "headers"] {
                if map.get(key).is_some_and(empty) {
                    map.insert(key.to_string(), Value::Object(Default::default()));
                }
            }
            Value::Object(map)
        }
        other => other,
    }
}

impl ServerConfig {
    /// Reads one server's table; `name` becomes the prefix of its tools.
    pub fn parse(name: &str, spec: &Value) -> Result<ServerConfig, ConfigError> {
        check_name(name)?;
        let spec_error = |message: String| ConfigError::Spec {
            name: name.to_string(),
            message,
        };
        let spec = empty_tables_as_objects(spec.clone());
        let spec: Spec = serde_json::from_value(spec).map_err(|e| spec_error(e.to_string()))?;
        let transport = match (spec.command, spec.url) {
            (Some(command), None) => Transport::Stdio {
                command,
                args: spec.args,
                env: spec.env,
                cwd: spec.cwd,
            },
            (None, Some(url)) => Transport::Http {
                url,
                headers: spec.headers,
            },
            _ => {
                return Err(ConfigError::NoTransport {
                    name: name.to_string(),
                });
            }
        };
        if let Some(kind) = spec.kind.as_deref()
            && !matches!(kind, "stdio" | "http" | "sse" | "streamable-http")
        {
            return Err(spec_error(format!("unknown type {kind:?}")));
        }
        let handshake = seconds("timeout", spec.timeout, DEFAULT_HANDSHAKE).map_err(spec_error)?;
        let call_timeout =
            seconds("call_timeout", spec.call_timeout, DEFAULT_CALL_TIMEOUT).map_err(spec_error)?;
        Ok(ServerConfig {
            name: name.to_string(),
            transport,
            handshake,
            call_timeout,
            policy: spec.policy.unwrap_or(DeclaredPolicy::Ask),
        })
    }
}

/// A duration given in seconds, `default` when absent.
fn seconds(key: &str, given: Option<f64>, default: Duration) -> Result<Duration, String> {
    match given {
        Some(secs) if secs.is_finite() && secs > 0.0 && secs <= 86_400.0 => {
            Ok(Duration::from_secs_f64(secs))
        }
        Some(secs) => Err(format!(
            "{key} must be a number of seconds > 0 and at most 86400, got {secs}"
        )),
        None => Ok(default),
    }
}

/// The servers of a project's `.mcp.json`.
pub fn parse_project(path: &str, text: &str) -> Result<Vec<ServerConfig>, ConfigError> {
    let file_error = |message: String| ConfigError::ProjectFile {
        path: path.to_string(),
        message,
    };
    let json: Value = serde_json::from_str(text).map_err(|e| file_error(e.to_string()))?;
    let Some(servers) = json.get("mcpServers").and_then(Value::as_object) else {
        return Err(file_error("no `mcpServers` object".to_string()));
    };
    servers
        .iter()
        .map(|(name, spec)| ServerConfig::parse(name, spec))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn stdio_and_http_specs() -> Result<(), ConfigError> {
        let stdio = ServerConfig::parse(
            "fs",
            &json!({"command": "srv", "args": ["-v"], "timeout": 2}),
        )?;
        assert!(
            matches!(stdio.transport, Transport::Stdio { ref command, .. } if command == "srv")
        );
        assert_eq!(stdio.handshake, Duration::from_secs(2));
        assert_eq!(stdio.call_timeout, DEFAULT_CALL_TIMEOUT);
        let quick = ServerConfig::parse("q", &json!({"command": "srv", "call_timeout": 0.5}))?;
        assert_eq!(quick.call_timeout, Duration::from_millis(500));
        let http = ServerConfig::parse(
            "web",
            &json!({"url": "http://127.0.0.1:1/mcp", "headers": {"A": "b"}}),
        )?;
        assert!(matches!(http.transport, Transport::Http { .. }));
        assert_eq!(http.handshake, Duration::from_secs(30));
        assert_eq!(http.policy, DeclaredPolicy::Ask);
        Ok(())
    }

    #[test]
    fn bad_specs_say_what_is_wrong() {
        let both = ServerConfig::parse("x", &json!({"command": "a", "url": "b"}));
        assert!(matches!(both, Err(ConfigError::NoTransport { .. })));
        let typo = ServerConfig::parse("x", &json!({"comand": "a"}));
        assert!(typo.is_err_and(|e| e.to_string().contains("comand")));
        assert!(ServerConfig::parse("a b", &json!({"command": "a"})).is_err());
        let never = ServerConfig::parse("x", &json!({"command": "a", "call_timeout": 0}));
        assert!(never.is_err_and(|e| e.to_string().contains("call_timeout must be")));
    }

    #[test]
    fn project_file() -> Result<(), ConfigError> {
        let text = r#"{"mcpServers": {"a": {"command": "x"}, "b": {"type": "http", "url": "http://h/mcp"}}}"#;
        assert_eq!(parse_project(".mcp.json", text)?.len(), 2);
        Ok(())
    }
}
