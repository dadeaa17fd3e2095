//! HTTP for plugins against a small server on 127.0.0.1, called from the
//! test's thread as a plugin's thread calls it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread;

use super::*;
use uji_protocol::services::HTTP_MAX_OPEN;

/// A request as the server read it.
struct Request {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: String,
}

/// Serves each connection on a thread of its own, one request each.
fn server() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            thread::spawn(move || answer(stream));
        }
    });
    base
}

fn read_request(stream: &TcpStream) -> Option<Request> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut words = line.split_whitespace();
    let method = words.next()?.to_string();
    let path = words.next()?.to_string();
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).ok()?;
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':')?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
    }
    let length: usize = headers
        .iter()
        .find(|(name, _)| name == "content-length")
        .and_then(|(_, value)| value.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Request {
        method,
        path,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

fn respond(stream: &mut TcpStream, status: &str, headers: &[&str], body: &[u8]) {
    let mut head = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for header in headers {
        head.push_str(header);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body);
}

/// Headers for a body sent bit by bit until the connection closes.
fn open_ended(stream: &mut TcpStream) {
    let head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n";
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.flush();
}

fn answer(mut stream: TcpStream) {
    let Some(request) = read_request(&stream) else {
        return;
    };
    match request.path.as_str() {
        "/hello" => respond(
            &mut stream,
            "200 OK",
            &["Content-Type: text/plain", "X-Multi: a", "X-Multi: b"],
            b"hello world",
        ),
        "/echo" => {
            let test = request
                .headers
                .iter()
                .find(|(name, _)| name == "x-test")
                .map_or("", |(_, value)| value.as_str());
            let echoed = format!("{} x-test={test} body={}", request.method, request.body);
            respond(&mut stream, "200 OK", &[], echoed.as_bytes());
        }
        "/redirect" => respond(&mut stream, "302 Found", &["Location: /hello"], b""),
        "/loop" => respond(&mut stream, "302 Found", &["Location: /loop"], b""),
        "/missing" => respond(&mut stream, "404 Not Found", &[], b"no such page"),
        "/lines" => {
            open_ended(&mut stream);
            for n in 1..=3 {
                let _ = stream.write_all(format!("line {n}\n").as_bytes());
                let _ = stream.flush();
                thread::sleep(Duration::from_millis(500));
            }
        }
        "/silent" => {
            open_ended(&mut stream);
            let _ = stream.write_all(b"first");
            let _ = stream.flush();
            thread::sleep(Duration::from_secs(5));
        }
        "/hold" => {
            open_ended(&mut stream);
            thread::sleep(Duration::from_secs(10));
        }
        "/utf8" => respond(&mut stream, "200 OK", &[], "aé€😀z".as_bytes()),
        _ => respond(
            &mut stream,
            "500 Internal Server Error",
            &[],
            b"unknown path",
        ),
    }
}

/// Requests from this thread, run on a runtime of their own.
struct Client {
    http: Http,
    _runtime: tokio::runtime::Runtime,
}

fn client(max_open: usize) -> Client {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    Client {
        http: Http::new(
            runtime.handle().clone(),
            max_open,
            crate::auth::providers::Providers::new(std::sync::Arc::new(
                crate::auth::providers::ProcessEnvLookup,
            )),
        ),
        _runtime: runtime,
    }
}

impl Client {
    fn open(&self, request: HttpOpen) -> Result<HttpOpened, String> {
        self.http.open(request)
    }

    fn read(&self, id: u64, max_bytes: Option<u64>, wait_ms: u64) -> Result<HttpChunk, String> {
        self.http.read(HttpRead {
            id,
            max_bytes,
            wait_ms,
        })
    }

    /// The whole body, piece by piece.
    fn body(&self, id: u64) -> String {
        let mut text = String::new();
        loop {
            let chunk = self.read(id, None, 5_000).unwrap();
            text.push_str(&chunk.data);
            if chunk.done {
                return text;
            }
        }
    }
}

#[test]
fn a_get_answers_status_headers_and_body() {
    let base = server();
    let client = client(16);
    let opened = client.open(HttpOpen::get(format!("{base}/hello"))).unwrap();
    assert_eq!(opened.status, 200);
    assert_eq!(opened.url, format!("{base}/hello"));
    assert_eq!(opened.headers["content-type"], "text/plain");
    assert_eq!(opened.headers["x-multi"], "a, b");
    assert_eq!(client.body(opened.id), "hello world");
    // Read to its end, the request is forgotten.
    let e = client.read(opened.id, None, 0).unwrap_err();
    assert!(e.contains("no open HTTP request has id"), "{e}");
}

#[test]
fn a_post_sends_its_body_and_headers() {
    let base = server();
    let client = client(16);
    let request = HttpOpen {
        method: "post".to_string(),
        headers: [("X-Test".to_string(), "yes".to_string())].into(),
        body: Some("{\"a\":1}".to_string()),
        ..HttpOpen::get(format!("{base}/echo"))
    };
    let opened = client.open(request).unwrap();
    assert_eq!(opened.status, 200);
    assert_eq!(client.body(opened.id), "POST x-test=yes body={\"a\":1}");
}

#[test]
fn a_streamed_body_arrives_in_pieces_as_the_server_sends_them() {
    let base = server();
    let client = client(16);
    let request = HttpOpen {
        stream: true,
        ..HttpOpen::get(format!("{base}/lines"))
    };
    let opened = client.open(request).unwrap();
    let first = client.read(opened.id, None, 5_000).unwrap();
    // The first line alone: the server sends the next half a second later.
    assert_eq!(first.data, "line 1\n");
    assert!(!first.done);
    let mut rest = String::new();
    let mut pieces = 1;
    loop {
        let chunk = client.read(opened.id, None, 5_000).unwrap();
        if !chunk.data.is_empty() {
            pieces += 1;
        }
        rest.push_str(&chunk.data);
        if chunk.done {
            break;
        }
    }
    assert_eq!(rest, "line 2\nline 3\n");
    assert!(pieces >= 3, "{pieces} pieces");
}

#[test]
fn a_read_that_finds_no_data_in_time_answers_nothing_yet() {
    let base = server();
    let client = client(16);
    let request = HttpOpen {
        stream: true,
        ..HttpOpen::get(format!("{base}/hold"))
    };
    let opened = client.open(request).unwrap();
    let waited = Instant::now();
    let chunk = client.read(opened.id, None, 200).unwrap();
    assert_eq!(chunk, HttpChunk::default());
    assert!(waited.elapsed() >= Duration::from_millis(200));
    client.http.close(HttpClose { id: opened.id });
    // Closing twice, or an id never opened, is fine.
    client.http.close(HttpClose { id: opened.id });
    client.http.close(HttpClose { id: 999 });
}

#[test]
fn a_redirect_is_followed_and_the_final_url_told() {
    let base = server();
    let client = client(16);
    let opened = client
        .open(HttpOpen::get(format!("{base}/redirect")))
        .unwrap();
    assert_eq!(opened.status, 200);
    assert_eq!(opened.url, format!("{base}/hello"));
    assert_eq!(client.body(opened.id), "hello world");
    let e = client
        .open(HttpOpen::get(format!("{base}/loop")))
        .unwrap_err();
    assert!(e.contains("redirected more than 10 times"), "{e}");
}

#[test]
fn a_redirect_not_followed_is_answered_with_its_location() {
    let base = server();
    let client = client(16);
    let request = HttpOpen {
        follow_redirects: Some(false),
        ..HttpOpen::get(format!("{base}/redirect"))
    };
    let opened = client.open(request).unwrap();
    assert_eq!(opened.status, 302);
    assert_eq!(
        opened.headers.get("location").map(String::as_str),
        Some("/hello")
    );
    client.http.close(HttpClose { id: opened.id });
}

#[test]
fn a_search_key_is_not_sent_to_another_origin() {
    let base = server();
    let client = client(16);
    let request = HttpOpen {
        auth: Some(SearchBackend::Brave),
        ..HttpOpen::get(format!("{base}/echo"))
    };
    let e = client.open(request).unwrap_err();
    assert!(
        e.contains("goes only to https://api.search.brave.com"),
        "{e}"
    );
}

#[test]
fn a_404_is_a_response_not_an_error() {
    let base = server();
    let client = client(16);
    let opened = client
        .open(HttpOpen::get(format!("{base}/missing")))
        .unwrap();
    assert_eq!(opened.status, 404);
    assert_eq!(client.body(opened.id), "no such page");
}

#[test]
fn a_refused_connection_is_an_error_naming_the_url() {
    let port = {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let client = client(16);
    let url = format!("http://127.0.0.1:{port}/x?key=secret");
    let e = client.open(HttpOpen::get(url)).unwrap_err();
    assert!(
        e.starts_with(&format!(
            "http.open could not reach http://127.0.0.1:{port}/x: "
        )),
        "{e}"
    );
    assert!(e.to_lowercase().contains("refused"), "{e}");
    // The query, which may hold a key, is not repeated.
    assert!(!e.contains("secret"), "{e}");
    // A refused request holds no place among the open ones.
    assert_eq!(client.http.used.load(Ordering::SeqCst), 0);
}

#[test]
fn only_http_and_https_urls_are_reached() {
    let client = client(16);
    let e = client
        .open(HttpOpen::get("file:///etc/passwd"))
        .unwrap_err();
    assert_eq!(
        e,
        "http.open reaches only http and https URLs, not file: file:///etc/passwd"
    );
    let e = client.open(HttpOpen::get("not a url")).unwrap_err();
    assert!(
        e.starts_with("http.open: \"not a url\" is not a URL"),
        "{e}"
    );
}

#[test]
fn a_body_that_goes_quiet_fails_after_idle_ms() {
    let base = server();
    let client = client(16);
    let request = HttpOpen {
        stream: true,
        idle_ms: Some(300),
        ..HttpOpen::get(format!("{base}/silent"))
    };
    let opened = client.open(request).unwrap();
    // What came before the silence is read first.
    let first = client.read(opened.id, None, 5_000).unwrap();
    assert_eq!(first.data, "first");
    let e = client.read(opened.id, None, 5_000).unwrap_err();
    assert!(
        e.starts_with(&format!(
            "no data arrived for 0.3 seconds from {base}/silent"
        )),
        "{e}"
    );
    // A failed request is forgotten and gives its place back.
    assert!(client.read(opened.id, None, 0).is_err());
    assert_eq!(client.http.used.load(Ordering::SeqCst), 0);
}

#[test]
fn a_body_not_streamed_must_end_within_timeout_ms() {
    let base = server();
    let client = client(16);
    let request = HttpOpen {
        timeout_ms: Some(1_500),
        ..HttpOpen::get(format!("{base}/silent"))
    };
    let opened = client.open(request).unwrap();
    assert_eq!(client.read(opened.id, None, 5_000).unwrap().data, "first");
    let e = client.read(opened.id, None, 5_000).unwrap_err();
    assert!(
        e.contains("took longer than 1.5 seconds (timeout_ms)"),
        "{e}"
    );
    assert!(e.contains("stream = true"), "{e}");
}

#[test]
fn no_more_than_the_bound_are_open_at_once() {
    let base = server();
    let client = client(HTTP_MAX_OPEN);
    let hold = || HttpOpen {
        stream: true,
        ..HttpOpen::get(format!("{base}/hold"))
    };
    let ids: Vec<u64> = (0..HTTP_MAX_OPEN)
        .map(|_| client.open(hold()).unwrap().id)
        .collect();
    let e = client.open(hold()).unwrap_err();
    assert_eq!(
        e,
        "http.open: 16 HTTP requests are open already, the most uji allows at once; read one to its end or close it (http.close) first"
    );
    client.http.close(HttpClose { id: ids[0] });
    let again = client.open(hold()).unwrap();
    assert_eq!(again.status, 200);
}

#[test]
fn pieces_never_split_a_character() {
    let base = server();
    let client = client(16);
    let opened = client.open(HttpOpen::get(format!("{base}/utf8"))).unwrap();
    let mut pieces = Vec::new();
    loop {
        let chunk = client.read(opened.id, Some(2), 5_000).unwrap();
        if !chunk.data.is_empty() {
            pieces.push(chunk.data);
        }
        if chunk.done {
            break;
        }
    }
    assert_eq!(pieces.concat(), "aé€😀z");
    // Each piece is whole characters: two bytes at most, or one character.
    assert_eq!(pieces, ["a", "é", "€", "😀", "z"]);
}

#[test]
fn invalid_bytes_become_replacement_characters_without_losing_the_rest() {
    let euro = "€".as_bytes();
    // A lead byte followed by ASCII starts no character.
    let data = [&[0xE2, b'A'][..], euro].concat();
    assert_eq!(piece_len(&data, 1, false), Some(1));
    let mut state = BodyState {
        data,
        end: Some(End::Done),
    };
    let mut text = String::new();
    while let Some(Taken::Chunk(chunk)) = state.take(1) {
        text.push_str(&chunk.data);
        if chunk.done {
            break;
        }
    }
    assert_eq!(text, "\u{FFFD}A€");
    // Part of a character waits for the rest, unless the body ended.
    assert_eq!(piece_len(&euro[..2], 64, false), None);
    assert_eq!(piece_len(&euro[..2], 64, true), Some(2));
    assert_eq!(piece_len(&[b'x', euro[0], euro[1]], 64, false), Some(1));
}

#[test]
fn a_call_on_the_runtime_is_refused_instead_of_blocking_it() {
    let client = client(16);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let e = runtime
        .block_on(async { client.open(HttpOpen::get("http://127.0.0.1:9/")) })
        .unwrap_err();
    assert!(
        e.contains("must not be called on uji's async runtime"),
        "{e}"
    );
}

#[test]
fn a_read_hears_when_the_session_ends_instead_of_waiting_on() {
    let base = server();
    let Client {
        http,
        _runtime: runtime,
    } = client(16);
    let request = HttpOpen {
        stream: true,
        ..HttpOpen::get(format!("{base}/hold"))
    };
    let opened = http.open(request).unwrap();
    runtime.shutdown_background();
    let waited = Instant::now();
    let e = http
        .read(HttpRead {
            id: opened.id,
            max_bytes: None,
            wait_ms: 5_000,
        })
        .unwrap_err();
    // The runtime's shutdown either breaks the connection first or drops
    // the task that reads it: the read hears one or the other at once.
    let ended = format!("http.read: the session ended while the body of {base}/hold was read");
    let broke = format!("http.read: the body of {base}/hold broke off: ");
    assert!(e == ended || e.starts_with(&broke), "{e}");
    assert!(waited.elapsed() < Duration::from_secs(4));
}
