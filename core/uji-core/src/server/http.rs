//! `http.open`, `http.read` and `http.close`: HTTP for plugins through
//! core's reqwest client (rustls), so that no plugin links a TLS stack of
//! its own (docs/plugins.md, "HTTP").
//!
//! The calls block the plugin's thread; the requests run on the session's
//! runtime. One task per request sends it, hands the status and headers
//! back through a std channel, then pumps the body into a buffer at most
//! [`READ_AHEAD`] bytes ahead of the plugin's reads, which `http.read`
//! waits on with a condition variable. No runtime thread ever waits for a
//! plugin, and a call made on a runtime thread is refused rather than
//! block it.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use reqwest::{Method, Url};
use tokio::runtime::Handle;
use tokio::sync::Notify;
use uji_protocol::services::{
    HTTP_DEFAULT_IDLE_MS, HTTP_DEFAULT_READ_BYTES, HTTP_DEFAULT_TIMEOUT_MS, HTTP_MAX_REDIRECTS,
    HttpChunk, HttpClose, HttpOpen, HttpOpened, HttpRead,
};
use uji_protocol::web::SearchBackend;

use crate::auth::providers::Providers;

/// Body bytes read ahead of the plugin's reads; past it the connection
/// waits for the plugin.
const READ_AHEAD: usize = 1024 * 1024;
/// The longest any wait or limit is taken to be: 30 days (a larger number
/// of milliseconds means "no limit" and must not overflow a clock).
const LONGEST_MS: u64 = 30 * 24 * 3600 * 1000;

/// The HTTP requests plugins opened, and the clients that send them.
pub(crate) struct Http {
    runtime: Handle,
    clients: Mutex<HashMap<ClientKind, reqwest::Client>>,
    /// Where web search keys come from (`auth`).
    keys: Providers,
    open: Mutex<HashMap<u64, Open>>,
    /// Requests open or being opened.
    used: Arc<AtomicUsize>,
    max_open: usize,
    next_id: AtomicU64,
}

/// Which client sends a request: one connection pool through the
/// environment's proxies, one direct for loopback servers, each following
/// redirects or not (reqwest sets that per client); built on first use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct ClientKind {
    direct: bool,
    follow: bool,
}

/// An open request: its body, the task that reads it, and its place among
/// the open ones.
struct Open {
    body: Arc<Body>,
    pump: tokio::task::AbortHandle,
    _slot: Slot,
}

impl Drop for Open {
    /// Drops the connection; a read waiting on it hears so.
    fn drop(&mut self) {
        // Ended first: the aborted task's own ending must not win.
        self.body.finish(End::Failed(
            "the request was closed (http.close) while it was read".to_string(),
        ));
        self.pump.abort();
    }
}

/// A place among the open requests, given back when dropped.
struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A response's body as it arrives.
#[derive(Default)]
struct Body {
    state: Mutex<BodyState>,
    /// Data arrived or the body ended.
    arrived: Condvar,
    /// The plugin took data: there may be room to read ahead again.
    room: Notify,
}

#[derive(Default)]
struct BodyState {
    data: Vec<u8>,
    /// Set once: the body ended or failed.
    end: Option<End>,
}

#[derive(Debug, Clone, PartialEq)]
enum End {
    Done,
    Failed(String),
}

/// What a read found.
#[derive(Debug, PartialEq)]
enum Taken {
    Chunk(HttpChunk),
    Failed(String),
}

/// The status and headers, as `http.open` answers them.
struct Head {
    status: u16,
    headers: BTreeMap<String, String>,
    url: String,
}

/// How long a request may take.
#[derive(Clone, Copy)]
struct Limits {
    timeout: Duration,
    idle: Duration,
    stream: bool,
}

impl Http {
    /// Requests run on `runtime`; at most `max_open` are open at once;
    /// web search keys come from `keys`.
    pub(crate) fn new(runtime: Handle, max_open: usize, keys: Providers) -> Http {
        Http {
            runtime,
            clients: Mutex::new(HashMap::new()),
            keys,
            open: Mutex::new(HashMap::new()),
            used: Arc::new(AtomicUsize::new(0)),
            max_open,
            next_id: AtomicU64::new(1),
        }
    }

    /// `http.open`: sends the request and waits for its status and headers.
    pub(crate) fn open(&self, request: HttpOpen) -> Result<HttpOpened, String> {
        off_runtime("http.open")?;
        let url = Url::parse(&request.url).map_err(|e| {
            format!(
                "http.open: {:?} is not a URL ({e}); give a whole http:// or https:// URL",
                request.url
            )
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(format!(
                "http.open reaches only http and https URLs, not {}: {}",
                url.scheme(),
                shown(&url)
            ));
        }
        let method = Method::from_bytes(request.method.to_ascii_uppercase().as_bytes())
            .map_err(|_| {
                format!(
                    "http.open: {:?} is not an HTTP method; use GET, POST, PUT, PATCH, DELETE, HEAD or OPTIONS",
                    request.method
                )
            })?;
        let mut headers = header_map(&request.headers)?;
        // A request carrying a key is never redirected: the key must not
        // follow it to another host.
        let follow = request.follow_redirects.unwrap_or(true) && request.auth.is_none();
        if let Some(backend) = request.auth {
            self.add_key(backend, &url, &mut headers)?;
        }
        let limits = Limits {
            timeout: millis(request.timeout_ms.unwrap_or(HTTP_DEFAULT_TIMEOUT_MS)),
            idle: millis(request.idle_ms.unwrap_or(HTTP_DEFAULT_IDLE_MS)),
            stream: request.stream,
        };
        let slot = self.reserve()?;
        let client = self.client(&url, follow)?;
        let mut sent = client.request(method, url.clone()).headers(headers);
        if let Some(body) = request.body {
            sent = sent.body(body);
        }
        let body = Arc::new(Body::default());
        // A std channel: the caller is a plugin's thread, not the runtime's.
        let (head_tx, head_rx) = std::sync::mpsc::channel();
        let task = self
            .runtime
            .spawn(run(sent, Arc::clone(&body), limits, shown(&url), head_tx));
        let head = match head_rx.recv() {
            Ok(Ok(head)) => head,
            Ok(Err(message)) => return Err(message),
            Err(_) => {
                task.abort();
                return Err(format!(
                    "http.open: the session ended before {} answered",
                    shown(&url)
                ));
            }
        };
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let open = Open {
            body,
            pump: task.abort_handle(),
            _slot: slot,
        };
        self.open.lock().insert(id, open);
        Ok(HttpOpened {
            id,
            status: head.status,
            headers: head.headers,
            url: head.url,
        })
    }

    /// `http.read`: the next piece of the body, waiting at most `wait_ms`
    /// for one.
    pub(crate) fn read(&self, request: HttpRead) -> Result<HttpChunk, String> {
        off_runtime("http.read")?;
        let body = self
            .open
            .lock()
            .get(&request.id)
            .map(|o| Arc::clone(&o.body));
        let Some(body) = body else {
            return Err(format!(
                "http.read: no open HTTP request has id {}: it was read to its end, failed or was closed; open it again with http.open",
                request.id
            ));
        };
        let max = request.max_bytes.unwrap_or(HTTP_DEFAULT_READ_BYTES);
        let max = usize::try_from(max).unwrap_or(usize::MAX).max(1);
        let until = Instant::now() + millis(request.wait_ms);
        match body.take(max, until) {
            Taken::Chunk(chunk) => {
                if chunk.done {
                    self.forget(request.id);
                }
                Ok(chunk)
            }
            Taken::Failed(message) => {
                self.forget(request.id);
                Err(message)
            }
        }
    }

    /// `http.close`: drops the request and its connection.
    pub(crate) fn close(&self, request: HttpClose) {
        self.forget(request.id);
    }

    fn forget(&self, id: u64) {
        let removed = self.open.lock().remove(&id);
        // Dropped outside the table's lock: it takes the body's.
        drop(removed);
    }

    /// A place for one more open request, or the error that says there is
    /// none.
    fn reserve(&self) -> Result<Slot, String> {
        let max = self.max_open;
        self.used
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |used| {
                (used < max).then_some(used + 1)
            })
            .map(|_| Slot(Arc::clone(&self.used)))
            .map_err(|_| {
                format!(
                    "http.open: {max} HTTP requests are open already, the most uji allows at once; read one to its end or close it (http.close) first"
                )
            })
    }

    /// The client for `url`: direct to a loopback server, else through the
    /// environment's proxies.
    fn client(&self, url: &Url, follow: bool) -> Result<reqwest::Client, String> {
        let kind = ClientKind {
            direct: is_loopback(url),
            follow,
        };
        let mut clients = self.clients.lock();
        if let Some(client) = clients.get(&kind) {
            return Ok(client.clone());
        }
        let client = build_client(kind)?;
        clients.insert(kind, client.clone());
        Ok(client)
    }

    /// Adds `backend`'s key to a request to `url`, or refuses it
    /// (another origin, no key).
    fn add_key(
        &self,
        backend: SearchBackend,
        url: &Url,
        headers: &mut HeaderMap,
    ) -> Result<(), String> {
        let Some((name, value)) = self.keys.search_credential(backend, url)? else {
            return Ok(());
        };
        let mut value = HeaderValue::from_str(&value).map_err(|_| {
            format!(
                "the {} key holds characters a header cannot; set it again (`uji login {}`)",
                backend.name(),
                backend.id()
            )
        })?;
        value.set_sensitive(true);
        headers.insert(HeaderName::from_static(name), value);
        Ok(())
    }
}

/// Refuses a blocking call on a thread of uji's runtime (it would stop
/// the work the call waits for).
fn off_runtime(method: &str) -> Result<(), String> {
    match Handle::try_current() {
        Ok(_) => Err(format!(
            "{method} waits for the network and must not be called on uji's async runtime; call it from a thread of the plugin's own"
        )),
        Err(_) => Ok(()),
    }
}

fn build_client(kind: ClientKind) -> Result<reqwest::Client, String> {
    let redirects = if kind.follow {
        reqwest::redirect::Policy::limited(HTTP_MAX_REDIRECTS)
    } else {
        reqwest::redirect::Policy::none()
    };
    let mut builder = reqwest::Client::builder()
        .redirect(redirects)
        .user_agent(concat!("uji/", env!("CARGO_PKG_VERSION")));
    if kind.direct {
        builder = builder.no_proxy();
    }
    for certificate in extra_roots()? {
        builder = builder.add_root_certificate(certificate);
    }
    builder.build().map_err(|e| {
        format!(
            "http.open: could not create the HTTP client: {}",
            describe(&e)
        )
    })
}

/// The certificates of the PEM file `SSL_CERT_FILE` names, trusted besides
/// the built-in roots (a company's own certificate authority).
fn extra_roots() -> Result<Vec<reqwest::Certificate>, String> {
    let Some(path) = std::env::var_os("SSL_CERT_FILE").filter(|p| !p.is_empty()) else {
        return Ok(Vec::new());
    };
    let path = std::path::PathBuf::from(path);
    let pem = std::fs::read(&path).map_err(|e| {
        format!(
            "http.open: SSL_CERT_FILE names {}, which cannot be read ({e}); point it at a PEM file of certificates, or unset it",
            path.display()
        )
    })?;
    reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| {
        format!(
            "http.open: SSL_CERT_FILE names {}, which holds no certificates uji can read ({}); point it at a PEM file of certificates, or unset it",
            path.display(),
            describe(&e)
        )
    })
}

/// Whether `url`'s host is this machine (`localhost`, `127.x.x.x`, `::1`).
fn is_loopback(url: &Url) -> bool {
    let Some(host) = url.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// `url` as messages name it: without its query, fragment and password,
/// which may hold a key.
fn shown(url: &Url) -> String {
    let mut shown = url.clone();
    shown.set_query(None);
    shown.set_fragment(None);
    let _ = shown.set_password(None);
    shown.to_string()
}

fn millis(ms: u64) -> Duration {
    Duration::from_millis(ms.min(LONGEST_MS))
}

/// `duration` for people: `120 seconds`, `0.3 seconds`.
fn seconds(duration: Duration) -> String {
    let ms = duration.as_millis();
    match ms {
        1000 => "1 second".to_string(),
        ms if ms % 1000 == 0 => format!("{} seconds", ms / 1000),
        _ => format!("{:.1} seconds", duration.as_secs_f64()),
    }
}

fn header_map(headers: &BTreeMap<String, String>) -> Result<HeaderMap, String> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        let header = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("http.open: {name:?} is not an HTTP header name"))?;
        let value = HeaderValue::from_str(value).map_err(|_| {
            format!(
                "http.open: the value of header {name} is not an HTTP header value (no line breaks or control characters)"
            )
        })?;
        map.append(header, value);
    }
    Ok(map)
}

/// A reqwest error and its causes on one line, without the URL (messages
/// name it themselves).
fn describe(error: &reqwest::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = current {
        let text = e.to_string();
        let text = text.split(" for url (").next().unwrap_or_default().trim();
        if !text.is_empty() && !parts.iter().any(|p| p.contains(text)) {
            parts.push(text.to_string());
        }
        current = e.source();
    }
    parts.join(": ")
}

/// Sends the request, tells `head` the status and headers (or why there
/// are none), then reads the body into `body`.
async fn run(
    request: reqwest::RequestBuilder,
    body: Arc<Body>,
    limits: Limits,
    url: String,
    head: std::sync::mpsc::Sender<Result<Head, String>>,
) {
    let started = tokio::time::Instant::now();
    let response = match tokio::time::timeout(limits.timeout, request.send()).await {
        Ok(Ok(response)) => response,
        Ok(Err(e)) if e.is_redirect() => {
            let _ = head.send(Err(format!(
                "http.open: {url} redirected more than {HTTP_MAX_REDIRECTS} times (or to a URL that cannot be followed): {}",
                describe(&e)
            )));
            return;
        }
        Ok(Err(e)) => {
            let _ = head.send(Err(format!(
                "http.open could not reach {url}: {}",
                describe(&e)
            )));
            return;
        }
        Err(_) => {
            let _ = head.send(Err(format!(
                "http.open: {url} did not answer within {} (timeout_ms)",
                seconds(limits.timeout)
            )));
            return;
        }
    };
    let mut headers: BTreeMap<String, String> = BTreeMap::new();
    for (name, value) in response.headers() {
        let value = String::from_utf8_lossy(value.as_bytes());
        match headers.get_mut(name.as_str()) {
            Some(joined) => {
                joined.push_str(", ");
                joined.push_str(&value);
            }
            None => {
                headers.insert(name.as_str().to_string(), value.into_owned());
            }
        }
    }
    let answered = Head {
        status: response.status().as_u16(),
        headers,
        url: response.url().to_string(),
    };
    if head.send(Ok(answered)).is_err() {
        return;
    }
    let deadline = (!limits.stream).then(|| started + limits.timeout);
    let ended = EndedOnDrop {
        body: &body,
        url: &url,
    };
    pump(response, ended.body, limits, deadline, &url).await;
}

/// Ends a body whose task is dropped before it ended it (the session's
/// runtime shut down), so that a read waiting on it does not wait on.
struct EndedOnDrop<'a> {
    body: &'a Body,
    url: &'a str,
}

impl Drop for EndedOnDrop<'_> {
    fn drop(&mut self) {
        self.body.finish(End::Failed(format!(
            "http.read: the session ended while the body of {} was read",
            self.url
        )));
    }
}

/// Reads the body into `body` until it ends, fails, or goes quiet.
async fn pump(
    mut response: reqwest::Response,
    body: &Body,
    limits: Limits,
    deadline: Option<tokio::time::Instant>,
    url: &str,
) {
    loop {
        body.wait_for_room().await;
        let quiet_at = tokio::time::Instant::now() + limits.idle;
        let until = deadline.map_or(quiet_at, |deadline| deadline.min(quiet_at));
        let end = match tokio::time::timeout_at(until, response.chunk()).await {
            Ok(Ok(Some(bytes))) => {
                body.push(&bytes);
                continue;
            }
            Ok(Ok(None)) => End::Done,
            Ok(Err(e)) => End::Failed(format!(
                "http.read: the body of {url} broke off: {}",
                describe(&e)
            )),
            Err(_) if deadline.is_some_and(|deadline| deadline <= quiet_at) => {
                End::Failed(format!(
                    "http.read: {url} took longer than {} (timeout_ms) to send its whole body; raise timeout_ms, or open it with stream = true",
                    seconds(limits.timeout)
                ))
            }
            Err(_) => End::Failed(format!(
                "no data arrived for {} from {url} (idle_ms); raise idle_ms if the server is that slow",
                seconds(limits.idle)
            )),
        };
        body.finish(end);
        return;
    }
}

impl Body {
    async fn wait_for_room(&self) {
        loop {
            // Made before the check: a read in between leaves a permit.
            let room = self.room.notified();
            if self.state.lock().data.len() < READ_AHEAD {
                return;
            }
            room.await;
        }
    }

    fn push(&self, bytes: &[u8]) {
        self.state.lock().data.extend_from_slice(bytes);
        self.arrived.notify_all();
    }

    /// Ends the body, unless it ended already.
    fn finish(&self, end: End) {
        let mut state = self.state.lock();
        if state.end.is_none() {
            state.end = Some(end);
        }
        drop(state);
        self.arrived.notify_all();
    }

    /// Up to `max` bytes as text, waiting until `until` for some.
    fn take(&self, max: usize, until: Instant) -> Taken {
        let mut state = self.state.lock();
        loop {
            if let Some(taken) = state.take(max) {
                drop(state);
                self.room.notify_one();
                return taken;
            }
            if self.arrived.wait_until(&mut state, until).timed_out() {
                let taken = state.take(max);
                drop(state);
                self.room.notify_one();
                return taken.unwrap_or(Taken::Chunk(HttpChunk::default()));
            }
        }
    }
}

impl BodyState {
    /// The next piece, or `None` when there is none yet.
    fn take(&mut self, max: usize) -> Option<Taken> {
        if self.data.is_empty() {
            return match &self.end {
                None => None,
                Some(End::Done) => Some(Taken::Chunk(HttpChunk {
                    data: String::new(),
                    done: true,
                })),
                Some(End::Failed(message)) => Some(Taken::Failed(message.clone())),
            };
        }
        let n = piece_len(&self.data, max, self.end.is_some())?;
        let data = String::from_utf8_lossy(&self.data[..n]).into_owned();
        self.data.drain(..n);
        let done = self.data.is_empty() && self.end == Some(End::Done);
        Some(Taken::Chunk(HttpChunk { data, done }))
    }
}

/// How many of `data`'s bytes the next piece takes: at most `max`, never
/// ending inside a character whose other bytes may still come (`ended`:
/// none will). `None` when all there is is part of one character.
fn piece_len(data: &[u8], max: usize, ended: bool) -> Option<usize> {
    let n = max.min(data.len());
    if ended && n == data.len() {
        return Some(n);
    }
    match partial_char_start(&data[..n]) {
        None => Some(n),
        Some(start) if start > 0 => Some(start),
        // The piece would be part of its first character: take that
        // character whole (up to 3 bytes past `max`), or what of it is
        // there when it is not valid UTF-8.
        Some(_) => {
            let width = char_width(data[0]);
            let continued = data[1..]
                .iter()
                .take(width - 1)
                .take_while(|b| is_continuation(**b))
                .count();
            if continued == width - 1 || 1 + continued < data.len() || ended {
                Some(1 + continued)
            } else {
                None
            }
        }
    }
}

/// Where `piece` ends with the first bytes of a multi-byte character that
/// lacks the rest.
fn partial_char_start(piece: &[u8]) -> Option<usize> {
    let n = piece.len();
    for at in (n.saturating_sub(3)..n).rev() {
        let byte = piece[at];
        if is_continuation(byte) {
            continue;
        }
        return (char_width(byte) > n - at).then_some(at);
    }
    None
}

fn is_continuation(byte: u8) -> bool {
    byte & 0xC0 == 0x80
}

/// The bytes of the character a lead byte starts (1 for ASCII and bytes
/// that start none).
fn char_width(byte: u8) -> usize {
    match byte {
        0xC0..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF7 => 4,
        _ => 1,
    }
}

#[cfg(test)]
mod tests;
