//! The plugin's runtime and HTTP client, and the streaming loop.
//!
//! A wire plugin is a cdylib with its own copy of tokio's statics, so it
//! cannot use uji's runtime: each plugin lazily starts one small runtime of
//! its own (one worker thread) and one HTTP client (connection pool) on
//! first use. Everything here runs on that runtime.

use std::sync::OnceLock;
use std::time::Duration;

use parking_lot::Mutex;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use tokio::runtime::Runtime;
use tokio::sync::oneshot;
use uji_sdk::{Answer, Canceller, Failure, Reply};

use crate::errors::{retry_after_from, status_failure, transport_failure};
use crate::{Delta, StreamParser, StreamState};
use uji_sdk::protocol::wire::Transport;

/// Used when the request sets no idle timeout.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(120);

/// How much of an error body is read (the message keeps less).
const ERROR_BODY_BYTES: usize = 8 * 1024;

/// Header names whose values are secrets: marked sensitive, never printed.
const SECRET_HEADERS: [&str; 4] = ["authorization", "x-api-key", "api-key", "x-goog-api-key"];

/// One streaming POST.
#[derive(Clone)]
pub struct HttpRequest {
    pub url: String,
    /// Lower-case names. `content-type: application/json` and
    /// `accept: text/event-stream` are added when absent.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// No data for this long fails the request as stalled.
    pub idle_timeout: Duration,
}

impl std::fmt::Debug for HttpRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(name, value)| {
                let shown = if SECRET_HEADERS.contains(&name.as_str()) {
                    "<secret>"
                } else {
                    value.as_str()
                };
                (name.as_str(), shown)
            })
            .collect();
        f.debug_struct("HttpRequest")
            .field("url", &self.url)
            .field("headers", &headers)
            .field("body_bytes", &self.body.len())
            .field("idle_timeout", &self.idle_timeout)
            .finish()
    }
}

impl HttpRequest {
    /// A POST to `url` with no body yet.
    pub fn post(url: impl Into<String>) -> HttpRequest {
        HttpRequest {
            url: url.into(),
            headers: Vec::new(),
            body: Vec::new(),
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
        }
    }

    /// A JSON POST to `url`.
    pub fn json(url: impl Into<String>, body: &serde_json::Value) -> HttpRequest {
        HttpRequest::post(url).with_json(body)
    }

    /// The body, `body` encoded. A wire builds its body from the request,
    /// drops the request, then encodes here: the conversation is then held
    /// twice at most (the body and its bytes), never three times.
    pub fn with_json(mut self, body: &serde_json::Value) -> HttpRequest {
        self.body = serde_json::to_vec(body).unwrap_or_default();
        self
    }

    pub fn header(mut self, name: &str, value: impl Into<String>) -> HttpRequest {
        self.headers.push((name.to_ascii_lowercase(), value.into()));
        self
    }

    /// Seconds from a wire request (`None` or 0: the default).
    pub fn idle_timeout_secs(mut self, seconds: Option<u64>) -> HttpRequest {
        self.idle_timeout = match seconds {
            Some(s) if s > 0 => Duration::from_secs(s),
            _ => DEFAULT_IDLE_TIMEOUT,
        };
        self
    }

    /// The values of secret headers, and the token of a `Bearer` value.
    fn secrets(&self) -> Vec<String> {
        let mut secrets = Vec::new();
        for (name, value) in &self.headers {
            if SECRET_HEADERS.contains(&name.as_str()) {
                secrets.push(value.clone());
                if let Some(token) = value.strip_prefix("Bearer ") {
                    secrets.push(token.trim().to_string());
                }
            }
        }
        secrets
    }

    fn header_map(&self) -> Result<HeaderMap, Failure> {
        let mut map = HeaderMap::new();
        for (name, value) in &self.headers {
            let header =
                HeaderName::from_bytes(name.as_bytes()).map_err(|_| Failure::Provider {
                    message: format!("invalid HTTP header name {name:?}"),
                })?;
            let secret = SECRET_HEADERS.contains(&name.as_str());
            let mut value = HeaderValue::from_str(value).map_err(|_| Failure::Provider {
                // Never the value: it may be a key.
                message: format!(
                    "invalid characters in the value of the {name} header{}",
                    if secret { " (check the api key)" } else { "" }
                ),
            })?;
            value.set_sensitive(secret);
            map.insert(header, value);
        }
        if !map.contains_key("content-type") {
            map.insert("content-type", HeaderValue::from_static("application/json"));
        }
        if !map.contains_key("accept") {
            map.insert("accept", HeaderValue::from_static("text/event-stream"));
        }
        Ok(map)
    }
}

/// This plugin's runtime, started on first use.
pub fn runtime() -> Result<&'static Runtime, String> {
    static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .max_blocking_threads(4)
                .thread_name("uji-wire")
                .enable_all()
                .build()
                .map_err(|e| format!("could not start the wire's runtime: {e}"))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// This plugin's HTTP client for `url` (one connection pool), built on
/// first use. Proxies from the environment (`HTTPS_PROXY`, `NO_PROXY`...)
/// apply, except to loopback servers (Ollama, llama.cpp on this machine),
/// which are always reached directly.
pub fn client(url: &str) -> Result<&'static reqwest::Client, Failure> {
    static PROXIED: OnceLock<Result<reqwest::Client, String>> = OnceLock::new();
    static DIRECT: OnceLock<Result<reqwest::Client, String>> = OnceLock::new();
    let direct = is_loopback(url);
    let slot = if direct { &DIRECT } else { &PROXIED };
    slot.get_or_init(|| {
        let builder = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(30))
            .pool_idle_timeout(Duration::from_secs(60))
            .user_agent(concat!("uji/", env!("CARGO_PKG_VERSION")));
        let builder = if direct { builder.no_proxy() } else { builder };
        builder
            .build()
            .map_err(|e| format!("could not create the HTTP client: {}", describe(&e)))
    })
    .as_ref()
    .map_err(|message| Failure::Provider {
        message: message.clone(),
    })
}

/// True for `http(s)://localhost...`, `127.x.x.x` and `[::1]`.
pub fn is_loopback(url: &str) -> bool {
    let Some((_, rest)) = url.split_once("://") else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = if let Some(v6) = host.strip_prefix('[') {
        v6.split(']').next().unwrap_or_default()
    } else {
        host.split(':').next().unwrap_or_default()
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// An error and its causes on one line, without the URL.
pub fn describe(error: &reqwest::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = current {
        let text = e.to_string();
        let text = text
            .split(" for url (")
            .next()
            .unwrap_or_default()
            .to_string();
        if !text.is_empty() && !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        current = e.source();
    }
    parts.join(": ")
}

fn stalled(idle: Duration) -> Failure {
    transport_failure(
        Transport::Stalled,
        format!("stream stalled: no data for {}s", idle.as_secs()),
    )
}

/// Sends the request and streams the answer through `parser`. `on_delta`
/// gets the deltas as they arrive. Secret header values (the key) are
/// blanked out of any failure message, even when a server echoes them.
pub async fn run<P: StreamParser>(
    request: HttpRequest,
    parser: P,
    on_delta: &mut (dyn FnMut(Delta) + Send),
) -> Result<Answer, Failure> {
    let secrets = request.secrets();
    stream_response(request, parser, on_delta)
        .await
        .map_err(|failure| redact(failure, &secrets))
}

async fn stream_response<P: StreamParser>(
    request: HttpRequest,
    parser: P,
    on_delta: &mut (dyn FnMut(Delta) + Send),
) -> Result<Answer, Failure> {
    let client = client(&request.url)?;
    let headers = request.header_map()?;
    let idle = request.idle_timeout;
    let send = client
        .post(&request.url)
        .headers(headers)
        .body(request.body)
        .send();
    let mut response = match tokio::time::timeout(idle, send).await {
        Err(_) => return Err(stalled(idle)),
        Ok(Err(e)) => {
            return Err(transport_failure(
                Transport::Connect,
                format!("connection failed: {}", describe(&e.without_url())),
            ));
        }
        Ok(Ok(response)) => response,
    };
    let status = response.status();
    if !status.is_success() {
        let retry_after = retry_after_from(response.headers());
        let body = read_error_body(&mut response, idle).await;
        return Err(status_failure(status.as_u16(), &body, retry_after));
    }
    let mut state = StreamState::new(parser);
    // When the stream breaks, an answer whose finish event already came is
    // still good; otherwise the reason it broke is the failure.
    let broken =
        |state: StreamState<P>, on_delta: &mut (dyn FnMut(Delta) + Send), why: Failure| match state
            .end(on_delta)
        {
            Err(Failure::Http { status: None, .. }) => Err(why),
            other => other,
        };
    loop {
        match tokio::time::timeout(idle, response.chunk()).await {
            Err(_) => return broken(state, on_delta, stalled(idle)),
            Ok(Ok(Some(bytes))) => {
                if state.push(&bytes, on_delta) {
                    drain(response);
                    break;
                }
            }
            Ok(Ok(None)) => break,
            Ok(Err(e)) => {
                let why = transport_failure(
                    Transport::Dropped,
                    format!(
                        "connection lost before the answer finished: {}",
                        describe(&e.without_url())
                    ),
                );
                return broken(state, on_delta, why);
            }
        }
    }
    state.end_of_body(on_delta)
}

/// Reads what is left of a finished stream (usually just the end of the
/// chunked body) in the background, so the connection can be reused
/// instead of reconnecting for the next request.
fn drain(mut response: reqwest::Response) {
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        return;
    };
    handle.spawn(async move {
        let mut left = 64 * 1024usize;
        while let Ok(Ok(Some(bytes))) =
            tokio::time::timeout(Duration::from_millis(500), response.chunk()).await
        {
            left = left.saturating_sub(bytes.len());
            if left == 0 {
                break;
            }
        }
    });
}

/// `failure` with every secret replaced by `<redacted>`.
pub fn redact(failure: Failure, secrets: &[String]) -> Failure {
    let clean = |text: String| {
        secrets
            .iter()
            .filter(|s| s.len() >= 4)
            .fold(text, |text, secret| {
                text.replace(secret.as_str(), "<redacted>")
            })
    };
    match failure {
        Failure::Http {
            status,
            message,
            retry_after,
            transport,
        } => Failure::Http {
            status,
            message: clean(message),
            retry_after,
            transport,
        },
        Failure::Auth { status, message } => Failure::Auth {
            status,
            message: message.map(clean),
        },
        Failure::Provider { message } => Failure::Provider {
            message: clean(message),
        },
    }
}

/// Reads up to [`ERROR_BODY_BYTES`] of an error body; what cannot be read
/// in time is left out.
async fn read_error_body(response: &mut reqwest::Response, idle: Duration) -> String {
    let mut body = Vec::new();
    while body.len() < ERROR_BODY_BYTES {
        match tokio::time::timeout(idle, response.chunk()).await {
            Ok(Ok(Some(bytes))) => body.extend_from_slice(&bytes),
            _ => break,
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}

/// The failure a cancelled request ends with.
pub fn cancelled() -> Failure {
    transport_failure(Transport::Cancelled, "cancelled")
}

/// Starts a streaming request on the plugin's runtime and returns at once.
/// Deltas go to `reply` as they arrive; the answer or failure finishes it.
/// The returned canceller drops the connection and fails the reply with
/// "cancelled".
pub fn spawn_stream<P: StreamParser>(
    request: HttpRequest,
    parser: P,
    reply: Reply,
) -> Option<Canceller> {
    let runtime = match runtime() {
        Ok(runtime) => runtime,
        Err(message) => {
            reply.fail(Failure::Provider { message });
            return None;
        }
    };
    let (cancel_tx, cancel_rx) = oneshot::channel::<()>();
    runtime.spawn(async move {
        let result = {
            let mut on_delta = |delta: Delta| match delta {
                Delta::Text(text) => reply.text(&text),
                Delta::Reasoning(text) => reply.reasoning(&text),
            };
            tokio::select! {
                biased;
                Ok(()) = cancel_rx => Err(cancelled()),
                result = run(request, parser, &mut on_delta) => result,
            }
        };
        match result {
            Ok(answer) => reply.done(answer),
            Err(failure) => reply.fail(failure),
        }
    });
    let cancel_tx = Mutex::new(Some(cancel_tx));
    Some(Box::new(move || {
        if let Some(tx) = cancel_tx.lock().take() {
            let _ = tx.send(());
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_urls() {
        assert!(is_loopback("http://127.0.0.1:8080/v1"));
        assert!(is_loopback("http://localhost/v1"));
        assert!(is_loopback("http://[::1]:11434"));
        assert!(is_loopback("http://user:pw@127.0.0.2"));
        assert!(!is_loopback("https://api.anthropic.com"));
        assert!(!is_loopback("http://10.0.0.1:8000"));
        assert!(!is_loopback("not a url"));
    }

    #[test]
    fn secrets_are_redacted_from_failures() {
        let request = HttpRequest::json("http://x", &serde_json::json!({}))
            .header("authorization", "Bearer sk-secret-1");
        let failure = Failure::Auth {
            status: 401,
            message: Some("Incorrect API key provided: sk-secret-1.".into()),
        };
        assert_eq!(
            redact(failure, &request.secrets()),
            Failure::Auth {
                status: 401,
                message: Some("Incorrect API key provided: <redacted>.".into())
            }
        );
    }
}
