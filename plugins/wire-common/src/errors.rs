//! Turning HTTP error answers into [`Failure`]s.

use serde_json::Value;
use std::time::{SystemTime, UNIX_EPOCH};

use uji_sdk::Failure;
use uji_sdk::protocol::wire::Transport;

/// How much of an error body goes into a failure message.
pub const BODY_START_CHARS: usize = 500;

/// The start of an error body: trimmed, at most [`BODY_START_CHARS`]
/// characters, `…` when cut.
pub fn trim_body(body: &str) -> String {
    let body = body.trim();
    match body.char_indices().nth(BODY_START_CHARS) {
        Some((cut, _)) => format!("{}…", body[..cut].trim_end()),
        None => body.to_string(),
    }
}

/// Seconds to wait, from a `Retry-After` value: delay-seconds (fractions
/// accepted) or an HTTP date (IMF-fixdate), which counts from `now`. A date
/// in the past gives 0. Anything else: `None`.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<f64> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then_some(seconds);
    }
    let date = parse_http_date(value)?;
    let now = now.duration_since(UNIX_EPOCH).ok()?.as_secs_f64();
    Some((date as f64 - now).max(0.0))
}

/// The wait a response asks for: `retry-after-ms` (OpenAI's, more precise)
/// or `retry-after`.
pub fn retry_after_from(headers: &reqwest::header::HeaderMap) -> Option<f64> {
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(ms / 1000.0);
    }
    get("retry-after").and_then(|v| parse_retry_after(v, SystemTime::now()))
}

/// Seconds since the epoch for an IMF-fixdate such as
/// `Sun, 06 Nov 1994 08:49:37 GMT`.
pub fn parse_http_date(value: &str) -> Option<i64> {
    let mut parts = value.split_whitespace();
    let _weekday = parts.next()?.strip_suffix(',')?;
    let day: i64 = parts.next()?.parse().ok()?;
    let month = match parts.next()? {
        "Jan" => 1,
        "Feb" => 2,
        "Mar" => 3,
        "Apr" => 4,
        "May" => 5,
        "Jun" => 6,
        "Jul" => 7,
        "Aug" => 8,
        "Sep" => 9,
        "Oct" => 10,
        "Nov" => 11,
        "Dec" => 12,
        _ => return None,
    };
    let year: i64 = parts.next()?.parse().ok()?;
    let mut clock = parts.next()?.split(':');
    let hour: i64 = clock.next()?.parse().ok()?;
    let minute: i64 = clock.next()?.parse().ok()?;
    let second: i64 = clock.next()?.parse().ok()?;
    if clock.next().is_some() || parts.next()? != "GMT" || parts.next().is_some() {
        return None;
    }
    if !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
        || !(1970..=9999).contains(&year)
    {
        return None;
    }
    Some(days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The failure for a non-2xx answer: 401 and 403 are [`Failure::Auth`],
/// everything else [`Failure::Http`] with the start of the body.
pub fn status_failure(status: u16, body: &str, retry_after: Option<f64>) -> Failure {
    let message = trim_body(body);
    if status == 401 || status == 403 {
        return Failure::Auth {
            status,
            message: (!message.is_empty()).then_some(message),
        };
    }
    let message = if message.is_empty() {
        let reason = reqwest::StatusCode::from_u16(status)
            .ok()
            .and_then(|s| s.canonical_reason())
            .unwrap_or("error");
        format!("HTTP {status} {reason} (empty body)")
    } else {
        message
    };
    Failure::Http {
        status: Some(status),
        message,
        retry_after,
        transport: None,
    }
}

/// A transport failure (no HTTP status) of kind `transport`.
pub fn transport_failure(transport: Transport, message: impl Into<String>) -> Failure {
    Failure::Http {
        status: None,
        message: message.into(),
        retry_after: None,
        transport: Some(transport),
    }
}

/// The stream ended (the body finished) before the answer's last event.
pub fn ended_early() -> Failure {
    transport_failure(
        Transport::Dropped,
        "stream ended before the answer finished",
    )
}

/// An `error` object sent inside a stream (OpenRouter, vLLM, LiteLLM and
/// the Responses API do): its status or code picks the failure, so rate
/// limits and server errors are retried like their HTTP statuses.
pub fn stream_error(error: &Value) -> Failure {
    let message = match error {
        Value::String(s) => s.clone(),
        _ => error
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| error.to_string()),
    };
    let code = error.get("code");
    let status = code
        .and_then(Value::as_u64)
        .or_else(|| code.and_then(Value::as_str).and_then(|c| c.parse().ok()))
        .filter(|c| (400..600).contains(c))
        .map(|c| c as u16);
    let kind = [error.get("type"), code]
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .find_map(|t| match t {
            "rate_limit_exceeded" | "rate_limit_error" | "too_many_requests" => Some(429),
            "server_error" | "api_error" | "internal_error" => Some(500),
            "overloaded_error" | "service_unavailable" => Some(503),
            _ => None,
        });
    match status.or(kind) {
        Some(status @ (401 | 403)) => Failure::Auth {
            status,
            message: Some(message),
        },
        Some(status) => Failure::Http {
            status: Some(status),
            message,
            retry_after: None,
            transport: None,
        },
        None => Failure::Provider { message },
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use std::time::Duration;

    use super::*;

    #[test]
    fn body_start_is_trimmed_and_cut_on_a_char_boundary() {
        assert_eq!(trim_body("  boom \n"), "boom");
        let long = "é".repeat(600);
        let cut = trim_body(&long);
        assert_eq!(cut.chars().count(), BODY_START_CHARS + 1);
        assert!(cut.ends_with('…'));
    }

    #[test]
    fn retry_after_seconds_and_dates() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_777);
        assert_eq!(parse_retry_after("120", now), Some(120.0));
        assert_eq!(parse_retry_after(" 1.5 ", now), Some(1.5));
        assert_eq!(parse_retry_after("-3", now), None);
        assert_eq!(parse_retry_after("soon", now), None);
        // Sun, 06 Nov 1994 08:49:37 GMT is 784111777.
        assert_eq!(
            parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777)
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:50:07 GMT", now),
            Some(30.0)
        );
        assert_eq!(
            parse_retry_after("Sun, 06 Nov 1994 08:00:00 GMT", now),
            Some(0.0)
        );
        assert_eq!(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        assert_eq!(
            parse_http_date("Tue, 29 Feb 2028 12:00:00 GMT"),
            Some(1_835_438_400)
        );
        assert_eq!(parse_http_date("Sun, 06 Nov 1994 08:49:37 PST"), None);
        assert_eq!(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT"), None);
        assert_eq!(
            parse_http_date("Sun, 06 Nov 9223372036854775807 08:49:37 GMT"),
            None
        );
    }

    #[test]
    fn retry_after_ms_wins() {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert("retry-after", "7".parse().unwrap());
        assert_eq!(retry_after_from(&headers), Some(7.0));
        headers.insert("retry-after-ms", "2500".parse().unwrap());
        assert_eq!(retry_after_from(&headers), Some(2.5));
    }

    #[test]
    fn statuses_map_to_failures() {
        assert_eq!(
            status_failure(401, "{\"error\":\"bad key\"}", None),
            Failure::Auth {
                status: 401,
                message: Some("{\"error\":\"bad key\"}".into())
            }
        );
        assert_eq!(
            status_failure(403, "", None),
            Failure::Auth {
                status: 403,
                message: None
            }
        );
        assert_eq!(
            status_failure(429, "slow down", Some(3.0)),
            Failure::Http {
                status: Some(429),
                message: "slow down".into(),
                retry_after: Some(3.0),
                transport: None,
            }
        );
        let Failure::Http { message, .. } = status_failure(502, " ", None) else {
            panic!()
        };
        assert_eq!(message, "HTTP 502 Bad Gateway (empty body)");
    }
}
