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
                "updatedAt": iso8601(s["updated"].as_u64().unwrap_or(0)),
            })
        })
        .collect();
    json!({"sessions": sessions})
}

/// Milliseconds since the epoch as an RFC 3339 UTC time (ACP's format).
pub fn iso8601(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// Days since 1970-01-01 as a calendar date (Howard Hinnant's algorithm).
fn civil(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_rfc3339() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00Z");
        assert_eq!(iso8601(1_764_547_200_000), "2025-12-01T00:00:00Z");
    }
}
