//! Which model-request failures are retried, and how long to wait.

use std::time::Duration;

use uji_host::StreamError;
use uji_protocol::wire::{Failure, Transport};

/// Retries after the first attempt.
pub const MAX_RETRIES: u32 = 5;
/// Stalls (no data for the idle timeout) one request may have before uji
/// gives up, whatever retries are left: about 4 minutes with the default
/// 120 s idle timeout.
pub const MAX_STALLS: u32 = 2;
/// A server's `Retry-After` is honoured up to this.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// Transport failures (no status) other than a cancelled request, and 408,
/// 409, 425, 429 and 5xx, are worth another try; auth, provider errors and
/// other 4xx are not. Decided on the failure's kinds, never its message.
pub fn retryable(error: &StreamError) -> bool {
    match error {
        StreamError::Failure(Failure::Http {
            status: None,
            transport,
            ..
        }) => *transport != Some(Transport::Cancelled),
        StreamError::Failure(Failure::Http {
            status: Some(status),
            ..
        }) => matches!(status, 408 | 409 | 425 | 429) || (500..600).contains(status),
        _ => false,
    }
}

/// The stream stalled: no data for the idle timeout.
pub fn is_stall(error: &StreamError) -> bool {
    matches!(
        error,
        StreamError::Failure(Failure::Http {
            status: None,
            transport: Some(Transport::Stalled),
            ..
        })
    )
}

/// The wait before retry number `attempt` (1-based): the server's
/// `Retry-After` (capped at 60 s), else 2 s doubling per attempt, capped at
/// 30 s, with ±25% jitter.
pub fn delay(error: &StreamError, attempt: u32, jitter_seed: u64) -> Duration {
    if let StreamError::Failure(Failure::Http {
        retry_after: Some(seconds),
        ..
    }) = error
        && seconds.is_finite()
        && *seconds >= 0.0
    {
        // Capped before converting: a huge value would not fit a Duration.
        return Duration::from_secs_f64(seconds.min(MAX_RETRY_AFTER.as_secs_f64()));
    }
    let base = (2.0 * 2f64.powi(attempt.saturating_sub(1) as i32)).min(30.0);
    // A cheap, well-spread jitter in [-0.25, 0.25] from the seed.
    let mixed = jitter_seed
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .rotate_left(17);
    let unit = (mixed >> 11) as f64 / (1u64 << 53) as f64;
    Duration::from_secs_f64(base * (1.0 + (unit - 0.5) * 0.5))
}

/// The notice shown for a retry.
pub fn notice(error: &StreamError, wait: Duration, attempt: u32) -> String {
    let reason = error.to_string();
    let mut first = reason.lines().next().unwrap_or_default().to_string();
    if first.chars().count() > 160 {
        first = first.chars().take(160).collect::<String>() + "…";
    }
    format!(
        "request failed ({first}), retrying in {}s ({attempt}/{MAX_RETRIES})",
        (wait.as_secs_f64() * 10.0).round() / 10.0
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn http(status: Option<u16>, retry_after: Option<f64>) -> StreamError {
        StreamError::Failure(Failure::Http {
            status,
            message: "boom".into(),
            retry_after,
            transport: None,
        })
    }

    fn transport(kind: Transport, message: &str) -> StreamError {
        StreamError::Failure(Failure::Http {
            status: None,
            message: message.into(),
            retry_after: None,
            transport: Some(kind),
        })
    }

    #[test]
    fn kinds_decide_not_message_text() {
        // A cancelled request is never retried, whatever its message says;
        // a stall is a stall whatever its message says.
        assert!(!retryable(&transport(
            Transport::Cancelled,
            "stream stalled"
        )));
        assert!(retryable(&transport(Transport::Dropped, "cancelled")));
        assert!(is_stall(&transport(Transport::Stalled, "no data")));
        assert!(!is_stall(&transport(
            Transport::Dropped,
            "stream stalled: no data for 1s"
        )));
        assert!(retryable(&transport(Transport::Connect, "refused")));
        assert!(retryable(&transport(Transport::Other, "a newer kind")));
    }

    #[test]
    fn what_is_retried() {
        for status in [408, 409, 425, 429, 500, 502, 503, 529] {
            assert!(retryable(&http(Some(status), None)), "{status}");
        }
        for status in [400, 404, 413, 422] {
            assert!(!retryable(&http(Some(status), None)), "{status}");
        }
        assert!(retryable(&http(None, None)), "dropped connection");
        assert!(!retryable(&StreamError::Failure(Failure::Auth {
            status: 401,
            message: None
        })));
        assert!(!retryable(&StreamError::Failure(Failure::Provider {
            message: "x".into()
        })));
    }

    #[test]
    fn waits_honour_retry_after_else_back_off_with_jitter() {
        assert_eq!(
            delay(&http(Some(429), Some(3.0)), 1, 7),
            Duration::from_secs(3)
        );
        assert_eq!(
            delay(&http(Some(429), Some(600.0)), 1, 7),
            Duration::from_secs(60)
        );
        for (attempt, base) in [
            (1, 2.0),
            (2, 4.0),
            (3, 8.0),
            (4, 16.0),
            (5, 30.0),
            (9, 30.0),
        ] {
            for seed in 0..50 {
                let wait = delay(&http(Some(500), None), attempt, seed).as_secs_f64();
                assert!(
                    wait >= base * 0.75 - 1e-9 && wait <= base * 1.25 + 1e-9,
                    "{attempt} {seed} {wait}"
                );
            }
        }
        let text = notice(&http(Some(500), None), Duration::from_secs(2), 1);
        assert_eq!(
            text,
            "request failed (http: 500: boom), retrying in 2s (1/5)"
        );
    }
}
