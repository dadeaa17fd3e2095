//! uji's saved sessions as ACP's `session/list` answer.

use serde_json::{Value, json};
use uji_protocol::frontend::answers::SessionList;

/// The sessions of a `list_sessions` answer, those of `cwd` when given.
pub fn list(answer: &SessionList, cwd: Option<&str>) -> Value {
    let sessions: Vec<Value> = answer
        .sessions
        .iter()
        .filter(|s| cwd.is_none_or(|cwd| s.cwd == cwd))
        .map(|s| {
            json!({
                "sessionId": s.id,
                "cwd": s.cwd,
                "title": s.title,
                "updatedAt": uji_protocol::time::rfc3339(s.updated),
            })
        })
        .collect();
    json!({"sessions": sessions})
}
