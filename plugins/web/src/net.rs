//! Core's `http.*` and `policy.check` services as the web tools use them:
//! a request opened, its body read whole up to a bound, always closed.

use uji_sdk::Host;
use uji_sdk::services::ServiceError;
use uji_sdk::services::{HttpClose, HttpOpen, HttpOpened, HttpRead};

/// Bytes asked for per `http.read`.
const READ_PIECE: u64 = 256 * 1024;
/// How long one `http.read` waits before the tool looks at its cancel
/// flag again (core's own timeouts end a body that stalls).
const READ_WAIT_MS: u64 = 250;

/// Why a body was not read whole.
#[derive(Debug, PartialEq)]
pub(crate) enum BodyError {
    /// It is longer than the bound (bytes read so far, bound).
    TooLarge(usize),
    /// The user interrupted the call.
    Cancelled,
    /// The connection broke or a timeout passed (core's message).
    Failed(String),
}

/// `http.open`; a service error as its message.
pub(crate) fn open(host: &Host, request: &HttpOpen) -> Result<HttpOpened, String> {
    host.service(request).map_err(|e| unavailable_or(&e))
}

/// Drops request `id` (a body not read, or read in part).
pub(crate) fn close(host: &Host, id: u64) {
    let _ = host.service(&HttpClose { id });
}

/// The whole body of `id` as text, at most `cap` bytes; closes the request
/// when it stops early.
pub(crate) fn read_body(
    host: &Host,
    id: u64,
    cap: usize,
    cancelled: &dyn Fn() -> bool,
) -> Result<String, BodyError> {
    let mut body = String::new();
    loop {
        if cancelled() {
            close(host, id);
            return Err(BodyError::Cancelled);
        }
        let read = HttpRead {
            id,
            max_bytes: Some(READ_PIECE),
            wait_ms: READ_WAIT_MS,
        };
        let chunk = match host.service(&read) {
            Ok(chunk) => chunk,
            // A failed read forgets the request: nothing to close.
            Err(e) => return Err(BodyError::Failed(e.message().to_string())),
        };
        body.push_str(&chunk.data);
        if body.len() > cap {
            close(host, id);
            return Err(BodyError::TooLarge(cap));
        }
        if chunk.done {
            return Ok(body);
        }
    }
}

/// A service error's message; a missing service says where the tools work.
fn unavailable_or(error: &ServiceError) -> String {
    match error {
        ServiceError::Unavailable { .. } => format!(
            "{}; the web tools reach the network through uji's session (uji, uji run), not `uji tool run`",
            error.message()
        ),
        _ => error.message().to_string(),
    }
}
