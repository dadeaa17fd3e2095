//! Code shared by uji's model-API wires (`anthropic`, `openai-chat`).
//!
//! - [`sse`]: an incremental server-sent-events reader;
//! - [`StreamParser`]: what each API implements, a pure state machine fed
//!   one SSE event at a time (testable without a network);
//! - [`StreamState`]: SSE reader and parser together, fed raw bytes;
//! - [`http`]: the plugin's own tokio runtime and HTTP client, the streaming
//!   loop (idle timeout, cancel, error mapping) and [`http::spawn_stream`],
//!   which a wire's `stream` calls;
//! - [`errors`]: `Retry-After` parsing, error-body trimming, status mapping.

pub mod errors;
pub mod http;
pub mod sse;
pub mod testing;

use uji_sdk::protocol::wire::{MAX_ANSWER_BYTES, answer_too_long};
use uji_sdk::{Answer, Failure, ToolCallRequest};

pub use errors::{
    ended_early, parse_retry_after, status_failure, stream_error, transport_failure, trim_body,
};
pub use http::{HttpRequest, spawn_stream};
pub use sse::SseReader;

/// A piece of the answer to show while it streams.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delta {
    Text(String),
    Reasoning(String),
}

/// One API's streaming format: fed one SSE event at a time, it returns the
/// deltas to show and, at the end, the assembled answer.
pub trait StreamParser: Send + 'static {
    /// Handles one event. `event` is the `event:` name (`""` when absent),
    /// `data` the raw data. Malformed data is skipped.
    fn feed(&mut self, event: &str, data: &str) -> Vec<Delta>;

    /// True once nothing more is expected (the finish event, or an error
    /// event): the caller stops reading.
    fn is_done(&self) -> bool;

    /// The answer, or why there is none (also when the stream ended early).
    fn finish(self) -> Result<Answer, Failure>;

    /// Bytes of answer held so far (text, reasoning, tool-call arguments):
    /// past [`MAX_ANSWER_BYTES`] the stream is stopped.
    fn held_bytes(&self) -> usize;
}

/// How many bytes of a stream are kept to explain a body that held no
/// events at all.
const PREFIX_BYTES: usize = 2048;

/// An SSE reader and a [`StreamParser`] together: feed raw bytes, get deltas.
pub struct StreamState<P> {
    reader: SseReader,
    parser: P,
    events: u64,
    prefix: Vec<u8>,
    /// The answer passed [`MAX_ANSWER_BYTES`]: nothing more is read.
    too_long: bool,
}

impl<P: StreamParser> StreamState<P> {
    pub fn new(parser: P) -> StreamState<P> {
        StreamState {
            reader: SseReader::new(),
            parser,
            events: 0,
            prefix: Vec::new(),
            too_long: false,
        }
    }

    /// Feeds bytes; `on_delta` runs for each delta. Returns true once the
    /// parser is done.
    pub fn push(&mut self, bytes: &[u8], on_delta: &mut dyn FnMut(Delta)) -> bool {
        if self.events == 0 && self.prefix.len() < PREFIX_BYTES {
            let room = PREFIX_BYTES - self.prefix.len();
            self.prefix
                .extend_from_slice(&bytes[..bytes.len().min(room)]);
        }
        let parser = &mut self.parser;
        let events = &mut self.events;
        let too_long = &mut self.too_long;
        self.reader.push(bytes, &mut |event, data| {
            *events += 1;
            if *too_long || parser.is_done() {
                return;
            }
            for delta in parser.feed(event, data) {
                on_delta(delta);
            }
            *too_long = parser.held_bytes() > MAX_ANSWER_BYTES;
        });
        self.is_done()
    }

    /// True once the parser is done, or the answer grew too long.
    pub fn is_done(&self) -> bool {
        self.too_long || self.parser.is_done()
    }

    /// The stream ended (or the parser is done): the answer or the failure.
    /// A body without a single event is reported with its start, since it
    /// was not an event stream at all (an error page, a JSON error).
    pub fn end(mut self, on_delta: &mut dyn FnMut(Delta)) -> Result<Answer, Failure> {
        if self.too_long {
            return Err(answer_too_long());
        }
        if !self.parser.is_done() {
            let parser = &mut self.parser;
            let events = &mut self.events;
            self.reader.finish(&mut |event, data| {
                *events += 1;
                if parser.is_done() {
                    return;
                }
                for delta in parser.feed(event, data) {
                    on_delta(delta);
                }
            });
        }
        let events = self.events;
        let prefix = std::mem::take(&mut self.prefix);
        match self.parser.finish() {
            Err(Failure::Http { status: None, .. })
                if events == 0 && looks_like_a_body(&prefix) =>
            {
                Err(Failure::Provider {
                    message: format!(
                        "the server did not answer with an event stream: {}",
                        trim_body(&String::from_utf8_lossy(&prefix))
                    ),
                })
            }
            other => other,
        }
    }
}

impl<P: StreamParser> StreamState<P> {
    /// The body ended as it should, maybe before the answer did. When it
    /// held events but nothing of an answer (no text, reasoning or tool
    /// call), the server sent something else than this API's stream:
    /// that is the server's failure, which retrying would only repeat,
    /// rather than a connection that broke.
    pub fn end_of_body(self, on_delta: &mut dyn FnMut(Delta)) -> Result<Answer, Failure> {
        let events = self.events;
        let nothing = !self.is_done() && events > 0 && self.parser.held_bytes() == 0;
        match self.end(on_delta) {
            Err(Failure::Http {
                status: None,
                message,
                ..
            }) if nothing => Err(Failure::Provider {
                message: format!(
                    "the server's event stream ended without any answer ({events} events, none this API sends): {message}; \
                     check the provider's base_url and wire"
                ),
            }),
            other => other,
        }
    }
}

/// Bytes that are something other than SSE comments and blank lines.
fn looks_like_a_body(prefix: &[u8]) -> bool {
    let text = String::from_utf8_lossy(prefix);
    text.lines()
        .map(str::trim)
        .any(|line| !line.is_empty() && !line.starts_with(':'))
}

/// `<base_url>/<path>`, with `default` for an empty base URL and the path
/// not repeated when the base URL already ends with it (users paste either).
/// The streamed calls `(id, name, arguments)` of an answer, in order; a
/// call the server sent without an id is named `call_N` by its position.
pub fn numbered_calls(
    calls: impl IntoIterator<Item = (String, String, String)>,
) -> Vec<ToolCallRequest> {
    calls
        .into_iter()
        .enumerate()
        .map(|(i, (id, name, arguments))| ToolCallRequest {
            id: if id.is_empty() {
                format!("call_{i}")
            } else {
                id
            },
            name,
            arguments,
        })
        .collect()
}

pub fn endpoint(base_url: &str, default: &str, path: &str) -> String {
    let base = base_url.trim().trim_end_matches('/');
    let base = if base.is_empty() { default } else { base };
    if base.ends_with(&format!("/{path}")) {
        base.to_string()
    } else {
        format!("{base}/{path}")
    }
}

/// Adds `Authorization: Bearer KEY` when there is a key (local servers
/// such as Ollama need none). The key goes nowhere else.
pub fn with_bearer(http: HttpRequest, key: Option<&str>) -> HttpRequest {
    match key.map(str::trim).filter(|k| !k.is_empty()) {
        Some(key) => http.header("authorization", format!("Bearer {key}")),
        None => http,
    }
}

/// The JSON POST of an OpenAI-style API (a bearer key): `body` is built
/// from the request, then the request is dropped before the body is
/// encoded, so the conversation is never held three times at once.
pub fn bearer_json_request(
    url: String,
    request: uji_sdk::WireRequest,
    body: impl FnOnce(&uji_sdk::WireRequest) -> serde_json::Value,
) -> HttpRequest {
    let body = body(&request);
    let http = HttpRequest::post(url).idle_timeout_secs(request.idle_timeout);
    let http = with_bearer(http, request.auth.key.as_deref());
    drop(request);
    http.with_json(&body)
}

/// A tool's parameters as a JSON schema: an empty object schema when the
/// tool declared none (the APIs refuse a missing one).
pub fn object_schema(parameters: &serde_json::Value) -> serde_json::Value {
    if parameters.is_object() {
        parameters.clone()
    } else {
        serde_json::json!({"type": "object", "properties": {}})
    }
}

/// A token count from a usage object: 0 when absent or not a number.
pub fn count(value: Option<&serde_json::Value>) -> u64 {
    value.and_then(serde_json::Value::as_u64).unwrap_or(0)
}
