//! What the fake model answers to one request.

use std::time::Duration;

/// How an SSE response ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum End {
    /// The body ends properly after the last event.
    Complete,
    /// The connection stays open, silent, until the client leaves or the
    /// stall limit runs out.
    Stall,
    /// The connection is closed mid-body (no end of the chunked body).
    Drop,
    /// [`Script::repeat`] is sent again and again until the client leaves
    /// (or the server stops): a model that never stops talking.
    Endless,
}

#[derive(Debug, Clone)]
pub(crate) enum Kind {
    Sse { events: Vec<String>, end: End },
    Status { code: u16, body: String },
}

/// One scripted response.
#[derive(Debug, Clone)]
pub struct Script {
    pub(crate) kind: Kind,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) delay: Duration,
    pub(crate) garbage: bool,
    pub(crate) crlf: bool,
    pub(crate) stall_limit: Duration,
    /// The event an [`End::Endless`] stream repeats.
    pub(crate) repeat: String,
}

/// The longest a stall lasts unless [`Script::stall_limit`] says otherwise.
pub const DEFAULT_STALL_LIMIT: Duration = Duration::from_secs(60);

impl Script {
    fn new(kind: Kind) -> Script {
        Script {
            kind,
            headers: Vec::new(),
            delay: Duration::ZERO,
            garbage: false,
            crlf: false,
            stall_limit: DEFAULT_STALL_LIMIT,
            repeat: String::new(),
        }
    }

    fn events(events: impl IntoIterator<Item = impl Into<String>>, end: End) -> Script {
        Script::new(Kind::Sse {
            events: events.into_iter().map(Into::into).collect(),
            end,
        })
    }

    /// A 200 `text/event-stream` response sending `events` (raw SSE frames,
    /// e.g. from [`crate::anthropic`] or [`crate::chat`]), each as one
    /// chunk, then ending the body.
    pub fn sse(events: impl IntoIterator<Item = impl Into<String>>) -> Script {
        Script::events(events, End::Complete)
    }

    /// Sends `events`, then keeps the connection open without a byte until
    /// the client leaves (counted in `dropped_connections`) or the stall
    /// limit runs out.
    pub fn stall_after(events: impl IntoIterator<Item = impl Into<String>>) -> Script {
        Script::events(events, End::Stall)
    }

    /// Sends `events`, then closes the connection in the middle of the body.
    pub fn drop_after(events: impl IntoIterator<Item = impl Into<String>>) -> Script {
        Script::events(events, End::Drop)
    }

    /// Sends `events`, then `repeat` over and over until the client leaves.
    pub fn endless(
        events: impl IntoIterator<Item = impl Into<String>>,
        repeat: impl Into<String>,
    ) -> Script {
        let mut script = Script::events(events, End::Endless);
        script.repeat = repeat.into();
        script
    }

    /// A plain response: `code`, `body` (content-type application/json
    /// unless `headers` set one) and extra `headers` such as `retry-after`.
    pub fn status(code: u16, body: &str, headers: &[(&str, &str)]) -> Script {
        let mut script = Script::new(Kind::Status {
            code,
            body: body.to_string(),
        });
        for (name, value) in headers {
            script = script.header(name, value);
        }
        script
    }

    /// An extra response header.
    pub fn header(mut self, name: &str, value: &str) -> Script {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// Waits this long before each event (and before a status response).
    pub fn delay(mut self, delay: Duration) -> Script {
        self.delay = delay;
        self
    }

    /// Puts comments, lines without a colon, non-JSON data and `id:` /
    /// `retry:` fields between the events.
    pub fn with_garbage(mut self) -> Script {
        self.garbage = true;
        self
    }

    /// Ends the lines of the events with `\r\n` instead of `\n`.
    pub fn crlf(mut self) -> Script {
        self.crlf = true;
        self
    }

    /// The longest a [`Script::stall_after`] stall lasts.
    pub fn stall_limit(mut self, limit: Duration) -> Script {
        self.stall_limit = limit;
        self
    }
}
