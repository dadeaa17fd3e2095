//! A fake model API server for uji's tests.
//!
//! [`FakeModel::start`] binds `127.0.0.1:0` (loopback only) and serves
//! HTTP/1.1 on threads of its own, one request per connection. Each request
//! is recorded ([`FakeModel::requests`]) and answered with the next queued
//! [`Script`]: an SSE stream (complete, stalling or cut off, optionally with
//! garbage between the events and a delay before each), or a plain status
//! with a body and headers. [`anthropic`] and [`chat`] build event sequences
//! shaped like the providers' documented streams.
//!
//! Everything is bounded: a stall lasts at most its limit (60 s by default),
//! waits notice a client that went away, and dropping the server stops it.
//!
//! ```no_run
//! use uji_fake_model::{FakeModel, Script, chat};
//!
//! let server = FakeModel::start();
//! server.push(Script::sse(chat::ChatEvents::new("m").text("Hello there", 4).finish("stop").done()));
//! // ... point a wire at server.base_url() ...
//! let request = &server.requests()[0];
//! assert_eq!(request.path, "/chat/completions");
//! ```

pub mod anthropic;
pub mod chat;
pub mod gemini;
pub mod responses;
mod script;

pub use script::{DEFAULT_STALL_LIMIT, Script};

use std::collections::{BTreeMap, VecDeque};
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use script::{End, Kind};
use serde_json::Value;

/// The largest request head or body the server reads.
const MAX_REQUEST: usize = 64 * 1024 * 1024;
/// How often waits look for a client that went away (and for shutdown).
const POLL: Duration = Duration::from_millis(10);

/// One request as the server received it.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    pub method: String,
    /// The request target, e.g. `/v1/messages`.
    pub path: String,
    /// Names lower-cased; a repeated header keeps its last value.
    pub headers: BTreeMap<String, String>,
    /// The raw body.
    pub body: Vec<u8>,
    /// The body parsed as JSON (`Value::Null` when it is not JSON).
    pub json: Value,
}

impl RecordedRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }

    pub fn body_text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Which requests a script of [`FakeModel::push_when`] answers.
pub type Matcher = Box<dyn Fn(&RecordedRequest) -> bool + Send + Sync>;

#[derive(Default)]
struct Shared {
    scripts: Mutex<VecDeque<Script>>,
    /// Scripts for the requests their matcher takes, in the order pushed:
    /// each session of a test (a parent, its subagents) by its own script.
    matched: Mutex<Vec<(Matcher, Script)>>,
    requests: Mutex<Vec<RecordedRequest>>,
    dropped: AtomicUsize,
    completed: AtomicUsize,
    stop: AtomicBool,
}

/// The running server. Dropping it stops it.
pub struct FakeModel {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

impl FakeModel {
    /// Starts a server on `127.0.0.1` and a free port.
    ///
    /// # Panics
    /// When no loopback port can be bound (a broken test machine).
    #[allow(clippy::expect_used)]
    pub fn start() -> FakeModel {
        let listener = TcpListener::bind(("127.0.0.1", 0)).expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address");
        let shared = Arc::new(Shared::default());
        let accept_shared = Arc::clone(&shared);
        let accept = std::thread::Builder::new()
            .name("fake-model-accept".into())
            .spawn(move || accept_loop(listener, accept_shared))
            .expect("spawn the accept thread");
        FakeModel {
            addr,
            shared,
            accept: Some(accept),
        }
    }

    /// `http://127.0.0.1:<port>`, without a trailing slash.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Queues the answer to a future request (first in, first out). A
    /// request with no script left gets a 500 saying so.
    pub fn push(&self, script: Script) -> &FakeModel {
        self.shared.scripts.lock().push_back(script);
        self
    }

    /// Queues the answer to a future request that `matches` takes; such
    /// scripts are looked at before the common queue, the first pushed
    /// first. Concurrent sessions (subagents) each get their own answers.
    pub fn push_when(
        &self,
        matches: impl Fn(&RecordedRequest) -> bool + Send + Sync + 'static,
        script: Script,
    ) -> &FakeModel {
        self.shared.matched.lock().push((Box::new(matches), script));
        self
    }

    /// Scripts not used yet.
    pub fn pending(&self) -> usize {
        self.shared.scripts.lock().len() + self.shared.matched.lock().len()
    }

    /// Every request received so far, in order of arrival.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.requests.lock().clone()
    }

    /// The last request received. Panics when there was none.
    #[allow(clippy::expect_used)]
    pub fn last_request(&self) -> RecordedRequest {
        self.shared
            .requests
            .lock()
            .last()
            .cloned()
            .expect("the fake model received no request")
    }

    /// Clients that went away before their response was complete.
    pub fn dropped_connections(&self) -> usize {
        self.shared.dropped.load(Ordering::SeqCst)
    }

    /// Responses sent to the end.
    pub fn completed_responses(&self) -> usize {
        self.shared.completed.load(Ordering::SeqCst)
    }

    /// Waits until at least `count` clients went away early; false on
    /// timeout.
    pub fn wait_for_dropped(&self, count: usize, timeout: Duration) -> bool {
        wait_until(timeout, || self.dropped_connections() >= count)
    }

    /// Waits until at least `count` requests arrived; false on timeout.
    pub fn wait_for_requests(&self, count: usize, timeout: Duration) -> bool {
        wait_until(timeout, || self.shared.requests.lock().len() >= count)
    }
}

fn wait_until(timeout: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

impl Drop for FakeModel {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the blocking accept.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    for stream in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            break;
        }
        let Ok(stream) = stream else {
            continue;
        };
        let shared = Arc::clone(&shared);
        let _ = std::thread::Builder::new()
            .name("fake-model-conn".into())
            .spawn(move || serve(stream, &shared));
    }
}

fn serve(mut stream: TcpStream, shared: &Shared) {
    let _ = stream.set_nodelay(true);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let _ = stream.set_write_timeout(Some(Duration::from_secs(10)));
    let Some(request) = read_request(&mut stream) else {
        return;
    };
    let matched = {
        let mut matched = shared.matched.lock();
        let at = matched.iter().position(|(matches, _)| matches(&request));
        at.map(|at| matched.remove(at).1)
    };
    shared.requests.lock().push(request);
    let script = matched
        .or_else(|| shared.scripts.lock().pop_front())
        .unwrap_or_else(|| {
            Script::status(
                500,
                "{\"error\":\"fake-model: no scripted response left\"}",
                &[],
            )
        });
    let mut connection = Connection {
        stream,
        shared,
        script: &script,
    };
    let finished = match &script.kind {
        Kind::Status { code, body } => connection.status(*code, body),
        Kind::Sse { events, end } => connection.sse(events, *end),
    };
    match finished {
        Outcome::Complete => {
            shared.completed.fetch_add(1, Ordering::SeqCst);
        }
        Outcome::ClientLeft => {
            shared.dropped.fetch_add(1, Ordering::SeqCst);
        }
        Outcome::Stopped => {}
    }
}

enum Outcome {
    Complete,
    ClientLeft,
    /// Cut off on purpose (drop_after, a stall that ran out) or shutdown.
    Stopped,
}

struct Connection<'a> {
    stream: TcpStream,
    shared: &'a Shared,
    script: &'a Script,
}

const GARBAGE: [&str; 5] = [
    ": this is a comment\n\n",
    "garbage without any colon\n\n",
    "data: {this is not json\n\n",
    "id: 42\nretry: 1000\n\n",
    ":\n\n",
];

impl Connection<'_> {
    fn write(&mut self, bytes: &[u8]) -> bool {
        self.stream
            .write_all(bytes)
            .and_then(|()| self.stream.flush())
            .is_ok()
    }

    fn extra_headers(&self) -> String {
        self.script
            .headers
            .iter()
            .map(|(name, value)| format!("{name}: {value}\r\n"))
            .collect()
    }

    fn status(&mut self, code: u16, body: &str) -> Outcome {
        let has_type = self
            .script
            .headers
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case("content-type"));
        let content_type = if has_type {
            String::new()
        } else {
            "content-type: application/json\r\n".to_string()
        };
        let head = format!(
            "HTTP/1.1 {code} {}\r\n{content_type}content-length: {}\r\nconnection: close\r\n{}\r\n",
            reason(code),
            body.len(),
            self.extra_headers()
        );
        if !self.wait(self.script.delay) {
            return Outcome::ClientLeft;
        }
        let sent = self.write(head.as_bytes()) && self.write(body.as_bytes());
        let _ = self.stream.shutdown(Shutdown::Write);
        if sent {
            Outcome::Complete
        } else {
            Outcome::ClientLeft
        }
    }

    /// One chunk of the chunked body.
    fn chunk(&mut self, text: &str) -> bool {
        let text = if self.script.crlf {
            text.replace('\n', "\r\n")
        } else {
            text.to_string()
        };
        let framed = format!("{:x}\r\n{text}\r\n", text.len());
        self.write(framed.as_bytes())
    }

    fn sse(&mut self, events: &[String], end: End) -> Outcome {
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\nconnection: close\r\n{}\r\n",
            self.extra_headers()
        );
        if !self.write(head.as_bytes()) {
            return Outcome::ClientLeft;
        }
        for (i, event) in events.iter().enumerate() {
            if !self.wait(self.script.delay) {
                return Outcome::ClientLeft;
            }
            if self.script.garbage && i > 0 && !self.chunk(GARBAGE[i % GARBAGE.len()]) {
                return Outcome::ClientLeft;
            }
            if !self.chunk(event) {
                return Outcome::ClientLeft;
            }
        }
        match end {
            End::Complete => {
                // The client may close as soon as it saw the last event; a
                // failure to write the terminator does not count.
                let _ = self.write(b"0\r\n\r\n");
                let _ = self.stream.shutdown(Shutdown::Write);
                Outcome::Complete
            }
            End::Drop => {
                let _ = self.stream.shutdown(Shutdown::Both);
                Outcome::Stopped
            }
            End::Endless => {
                // Unpaced: the client's reading is what slows it down.
                let frame = self.script.repeat.clone();
                while !self.shared.stop.load(Ordering::SeqCst) {
                    if !self.chunk(&frame) {
                        return Outcome::ClientLeft;
                    }
                }
                Outcome::Stopped
            }
            End::Stall => {
                if self.wait(self.script.stall_limit) {
                    let _ = self.stream.shutdown(Shutdown::Both);
                    Outcome::Stopped
                } else {
                    Outcome::ClientLeft
                }
            }
        }
    }

    /// Waits, watching the connection. False when the client went away
    /// first. Shutdown of the server ends the wait early (true).
    fn wait(&mut self, duration: Duration) -> bool {
        let deadline = Instant::now() + duration;
        let mut buf = [0u8; 1024];
        loop {
            if self.shared.stop.load(Ordering::SeqCst) {
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                return true;
            }
            let step = (deadline - now).min(POLL).max(Duration::from_millis(1));
            let _ = self.stream.set_read_timeout(Some(step));
            match self.stream.read(&mut buf) {
                Ok(0) => return false,
                Ok(_) => {}
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
    }
}

fn reason(code: u16) -> &'static str {
    match code {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        529 => "Overloaded",
        _ => "Status",
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn read_request(stream: &mut TcpStream) -> Option<RecordedRequest> {
    let mut data = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    let head_end = loop {
        if let Some(end) = find(&data, b"\r\n\r\n") {
            break end;
        }
        if data.len() > MAX_REQUEST {
            return None;
        }
        let n = stream.read(&mut buf).ok()?;
        if n == 0 {
            return None;
        }
        data.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&data[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split_whitespace();
    let method = request_line.next()?.to_string();
    let path = request_line.next()?.to_string();
    let headers: BTreeMap<String, String> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_string()))
        .collect();
    let mut rest = data[head_end + 4..].to_vec();
    let chunked = headers
        .get("transfer-encoding")
        .is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
    let body = if chunked {
        loop {
            if let Some(body) = dechunk(&rest) {
                break body;
            }
            if rest.len() > MAX_REQUEST {
                return None;
            }
            let n = stream.read(&mut buf).ok()?;
            if n == 0 {
                return None;
            }
            rest.extend_from_slice(&buf[..n]);
        }
    } else {
        let length: usize = headers
            .get("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
            .min(MAX_REQUEST);
        while rest.len() < length {
            let n = stream.read(&mut buf).ok()?;
            if n == 0 {
                return None;
            }
            rest.extend_from_slice(&buf[..n]);
        }
        rest.truncate(length);
        rest
    };
    let json = serde_json::from_slice(&body).unwrap_or(Value::Null);
    Some(RecordedRequest {
        method,
        path,
        headers,
        body,
        json,
    })
}

/// The body of a complete chunked encoding, or `None` while incomplete.
fn dechunk(mut data: &[u8]) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line_end = find(data, b"\r\n")?;
        let size_text = String::from_utf8_lossy(&data[..line_end]);
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        data = &data[line_end + 2..];
        if size == 0 {
            return Some(body);
        }
        if data.len() < size + 2 {
            return None;
        }
        body.extend_from_slice(&data[..size]);
        data = &data[size + 2..];
    }
}

/// Splits `text` into at most `pieces` non-empty parts on character
/// boundaries (fewer when the text is shorter).
pub fn split(text: &str, pieces: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    let pieces = pieces.clamp(1, chars.len());
    let size = chars.len().div_ceil(pieces);
    chars
        .chunks(size)
        .map(|chunk| chunk.iter().collect())
        .collect()
}

/// One SSE frame: optional `event:` line, one `data:` line per line of
/// `data`, and the blank line.
pub fn frame(event: Option<&str>, data: &str) -> String {
    let mut out = String::new();
    if let Some(event) = event {
        out.push_str("event: ");
        out.push_str(event);
        out.push('\n');
    }
    for line in data.split('\n') {
        out.push_str("data: ");
        out.push_str(line);
        out.push('\n');
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn post(addr: SocketAddr, body: &str) -> (TcpStream, String) {
        let mut stream = TcpStream::connect(addr).unwrap();
        let request = format!(
            "POST /v1/x HTTP/1.1\r\nHost: a\r\nX-Api-Key: k\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).unwrap();
        let mut response = String::new();
        let _ = stream.read_to_string(&mut response);
        (stream, response)
    }

    #[test]
    fn records_requests_and_answers_in_order() {
        let server = FakeModel::start();
        server.push(Script::status(429, "slow down", &[("retry-after", "3")]));
        server.push(Script::sse(vec![frame(Some("x"), "{\"a\":1}")]).with_garbage());
        let (_, first) = post(server.addr(), "{\"n\":1}");
        assert!(first.starts_with("HTTP/1.1 429"), "{first}");
        assert!(first.contains("retry-after: 3"));
        assert!(first.ends_with("slow down"));
        let (_, second) = post(server.addr(), "not json");
        assert!(second.contains("transfer-encoding: chunked"));
        assert!(second.contains("event: x\ndata: {\"a\":1}\n\n"));
        let (_, third) = post(server.addr(), "");
        assert!(third.contains("no scripted response left"));
        let requests = server.requests();
        assert_eq!(requests.len(), 3);
        assert_eq!(requests[0].path, "/v1/x");
        assert_eq!(requests[0].header("X-API-KEY"), Some("k"));
        assert_eq!(requests[0].json["n"], 1);
        assert_eq!(requests[1].json, Value::Null);
        assert_eq!(requests[1].body_text(), "not json");
        assert_eq!(server.dropped_connections(), 0);
    }

    #[test]
    fn a_client_leaving_a_stall_is_counted() {
        let server = FakeModel::start();
        server.push(Script::stall_after(vec![frame(None, "1")]));
        let mut stream = TcpStream::connect(server.addr()).unwrap();
        stream
            .write_all(b"POST / HTTP/1.1\r\ncontent-length: 0\r\n\r\n")
            .unwrap();
        let mut buf = [0u8; 256];
        let _ = stream.read(&mut buf).unwrap();
        drop(stream);
        assert!(server.wait_for_dropped(1, Duration::from_secs(5)));
    }

    #[test]
    fn a_stall_ends_at_its_limit_and_drop_after_cuts_the_body() {
        let server = FakeModel::start();
        server.push(
            Script::stall_after(vec![frame(None, "1")]).stall_limit(Duration::from_millis(50)),
        );
        server.push(Script::drop_after(vec![frame(None, "2")]));
        let (_, stalled) = post(server.addr(), "");
        assert!(stalled.contains("data: 1"));
        let (_, cut) = post(server.addr(), "");
        assert!(cut.contains("data: 2"));
        assert!(!cut.contains("0\r\n\r\n"));
        assert_eq!(server.dropped_connections(), 0);
    }

    #[test]
    fn chunked_request_bodies_are_decoded() {
        assert_eq!(
            dechunk(b"3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n").unwrap(),
            b"abcde"
        );
        assert_eq!(dechunk(b"3\r\nab"), None);
    }

    #[test]
    fn split_keeps_characters_whole() {
        assert_eq!(split("héllo", 2), vec!["hél", "lo"]);
        assert_eq!(split("ab", 10), vec!["a", "b"]);
        assert_eq!(split("", 3), vec![""]);
        assert_eq!(split("abcdef", 3).concat(), "abcdef");
    }
}
