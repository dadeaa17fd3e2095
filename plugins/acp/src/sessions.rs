//! uji's saved sessions as ACP's `session/list` answer.

use serde_json::{Value, json};

/// `sessions` from a `list_sessions` ack, those of `cwd` when given.
pub fn list(result: &Value, cwd: Option<&str>) -> Value {
    let sessions: Vec<Value> = result["sessions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| cwd.is_none_or(|cwd| s["cwd"] == cwd))
        .map(|s| {
            json!({
                "sessionId": s["id"],
                "cwd": s["cwd"],
                "title": s["title"],
                "updatedAt": uji_protocol::time::rfc3339(s["updated"].as_u64().unwrap_or(0)),
            })
        })
        .collect();
    json!({"sessions": sessions})
}
