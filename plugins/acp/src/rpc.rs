//! JSON-RPC 2.0 over newline-delimited stdin/stdout, as ACP frames it.
//! Nothing but these frames is ever written to stdout: the editor parses
//! every line of it.

use std::io::Write;
use std::sync::Mutex;

use serde_json::{Value, json};

/// JSON-RPC error codes ACP uses.
pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;

/// An error answered to a request: the code and uji's message.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message} (JSON-RPC error {code})")]
pub struct RpcError {
    pub code: i64,
    pub message: String,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
        }
    }

    pub fn invalid_params(message: impl Into<String>) -> RpcError {
        RpcError::new(INVALID_PARAMS, message)
    }

    pub fn internal(message: impl Into<String>) -> RpcError {
        RpcError::new(INTERNAL_ERROR, message)
    }
}

/// One line from the editor, classified.
#[derive(Debug, PartialEq)]
pub enum Incoming {
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
    },
    /// An answer to a request uji sent (a permission question).
    Response {
        id: Value,
        result: Result<Value, Value>,
    },
}

/// Parses one line. A line that is no JSON-RPC message is an error to
/// answer with the id it carried, if any (null otherwise).
pub fn parse(line: &str) -> Result<Incoming, (Value, RpcError)> {
    let value: Value = serde_json::from_str(line).map_err(|e| {
        (
            Value::Null,
            RpcError::new(PARSE_ERROR, format!("not JSON: {e}")),
        )
    })?;
    let id = value.get("id").cloned();
    let error_id = id.clone().unwrap_or(Value::Null);
    let invalid = |why: &str| {
        (
            error_id.clone(),
            RpcError::new(
                INVALID_REQUEST,
                format!("not a JSON-RPC 2.0 message: {why}"),
            ),
        )
    };
    if !value.is_object() {
        return Err(invalid("expected an object"));
    }
    let params = value.get("params").cloned().unwrap_or(Value::Null);
    match (value.get("method"), id) {
        (Some(Value::String(method)), Some(id)) if id.is_string() || id.is_number() => {
            Ok(Incoming::Request {
                id,
                method: method.clone(),
                params,
            })
        }
        (Some(Value::String(method)), None) => Ok(Incoming::Notification {
            method: method.clone(),
            params,
        }),
        (Some(Value::String(_)), Some(_)) => Err(invalid("the id must be a string or a number")),
        (Some(_), _) => Err(invalid("the method must be a string")),
        (None, Some(id)) => {
            response(value, id).ok_or_else(|| invalid("a response needs a result or an error"))
        }
        (None, None) => Err(invalid("no method and no id")),
    }
}

fn response(value: Value, id: Value) -> Option<Incoming> {
    let result = match (value.get("result"), value.get("error")) {
        (Some(result), _) => Ok(result.clone()),
        (None, Some(error)) => Err(error.clone()),
        (None, None) => return None,
    };
    Some(Incoming::Response { id, result })
}

/// Writes frames to stdout, one per line, whole lines only.
pub struct Writer {
    out: Mutex<Box<dyn Write + Send>>,
}

impl Writer {
    pub fn stdout() -> Writer {
        Writer {
            out: Mutex::new(Box::new(std::io::stdout())),
        }
    }

    /// Sends one frame. A closed stdout means the editor went away: the
    /// caller ends the session on the error.
    pub fn send(&self, frame: &Value) -> std::io::Result<()> {
        let mut line = frame.to_string();
        line.push('\n');
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        out.write_all(line.as_bytes())?;
        out.flush()
    }

    pub fn answer(&self, id: &Value, result: Value) -> std::io::Result<()> {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "result": result}))
    }

    pub fn fail(&self, id: &Value, error: &RpcError) -> std::io::Result<()> {
        self.send(&json!({
            "jsonrpc": "2.0", "id": id,
            "error": {"code": error.code, "message": error.message}
        }))
    }

    pub fn notify(&self, method: &str, params: Value) -> std::io::Result<()> {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
    }

    pub fn request(&self, id: u64, method: &str, params: Value) -> std::io::Result<()> {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn lines_are_classified() {
        assert!(matches!(
            parse(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#),
            Ok(Incoming::Request { .. })
        ));
        assert!(matches!(
            parse(r#"{"jsonrpc":"2.0","method":"session/cancel","params":{}}"#),
            Ok(Incoming::Notification { .. })
        ));
        assert!(matches!(
            parse(r#"{"jsonrpc":"2.0","id":0,"result":{}}"#),
            Ok(Incoming::Response { result: Ok(_), .. })
        ));
        let (id, error) = parse("garbage").unwrap_err();
        assert_eq!((id, error.code), (Value::Null, PARSE_ERROR));
        let (id, error) = parse(r#"{"id":7,"method":3}"#).unwrap_err();
        assert_eq!((id, error.code), (json!(7), INVALID_REQUEST));
        assert_eq!(parse("[1]").unwrap_err().1.code, INVALID_REQUEST);
    }
}
