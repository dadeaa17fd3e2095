//! Time from a built model request to its first byte on the socket, through
//! a real wire plugin loaded by uji-host: `openai-chat` (the default),
//! `openai-responses`, `gemini` or `anthropic`, named as the argument. The
//! loopback server answers each request with a short stream in the wire's
//! own format (from the fake model's builders).
//!
//! `cargo run --release -p uji-tests --example wire_first_byte [WIRE]`
//! prints `first_byte_cold_us <µs> first_byte_warm_us <median µs>`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, mpsc};
use std::time::Instant;

use uji_fake_model::anthropic::AnthropicEvents;
use uji_fake_model::chat::ChatEvents;
use uji_fake_model::gemini::GeminiEvents;
use uji_fake_model::responses::ResponsesEvents;
use uji_host::{Registry, WireEvents, load_plugin_file};
use uji_protocol::wire::{Auth, Message, ProviderInfo, WireRequest};

struct Quiet;
impl WireEvents for Quiet {
    fn text(&self, _: &str) {}
    fn reasoning(&self, _: &str) {}
}

/// The plugin library and a one-word answer in the wire's format.
fn plugin_and_answer(wire: &str) -> (&'static str, Vec<String>) {
    match wire {
        "openai-chat" => (
            "uji_plugin_openai_chat",
            ChatEvents::new("m").text("ok", 1).finish("stop").done(),
        ),
        "openai-responses" => (
            "uji_plugin_openai_responses",
            ResponsesEvents::new("m").text("ok", 1).completed(),
        ),
        "gemini" => (
            "uji_plugin_gemini",
            GeminiEvents::new("m").text("ok", 1).finish("STOP"),
        ),
        "anthropic" => (
            "uji_plugin_anthropic",
            AnthropicEvents::new("m").text("ok", 1).build(),
        ),
        other => panic!("unknown wire {other}: openai-chat, openai-responses, gemini or anthropic"),
    }
}

fn main() {
    let wire_name = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "openai-chat".to_string());
    let (lib_name, frames) = plugin_and_answer(&wire_name);
    let exe = std::env::current_exe().unwrap();
    let release = exe.parent().and_then(|p| p.parent()).unwrap();
    let lib = release.join(format!(
        "{}{lib_name}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    let registry = Registry::new();
    load_plugin_file(&lib, &registry).unwrap_or_else(|e| panic!("{}: {}", lib.display(), e.reason));
    let wire = registry.wire(&wire_name).unwrap();

    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (arrived_tx, arrived_rx) = mpsc::channel::<Instant>();
    let body = frames.concat();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut buf = [0u8; 65536];
            let Ok(n) = stream.read(&mut buf) else {
                continue;
            };
            let arrived = Instant::now();
            let mut got = buf[..n].to_vec();
            // Read the rest of the request (headers and body) before answering.
            while !request_complete(&got) {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => got.extend_from_slice(&buf[..n]),
                }
            }
            let _ = arrived_tx.send(arrived);
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });

    let mut samples = Vec::new();
    for i in 0..51 {
        let request = WireRequest {
            model: "m".into(),
            system: "You are a benchmark.".into(),
            messages: vec![Message::User {
                text: format!("request {i}"),
                images: Vec::new(),
            }],
            tools: Vec::new(),
            effort: None,
            max_output: None,
            cache: None,
            session: None,
            provider: ProviderInfo {
                id: "bench".into(),
                base_url: format!("http://{addr}"),
            },
            auth: Auth {
                key: Some("bench-key".into()),
            },
            idle_timeout: None,
        };
        let started = Instant::now();
        let running = wire.stream(request, Arc::new(Quiet)).unwrap();
        let arrived = arrived_rx.recv().unwrap();
        samples.push(arrived.duration_since(started).as_secs_f64() * 1e6);
        // The answer must have been read as the wire's format, or the
        // numbers would time a failure.
        if let Err(e) = running.wait_blocking() {
            panic!("{wire_name} could not read the answer: {e}");
        }
    }
    let cold = samples[0];
    let mut warm = samples[1..].to_vec();
    warm.sort_by(f64::total_cmp);
    println!(
        "first_byte_cold_us {cold:.1} first_byte_warm_us {:.1}",
        warm[warm.len() / 2]
    );
}

fn request_complete(bytes: &[u8]) -> bool {
    let Some(end) = bytes.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let head = String::from_utf8_lossy(&bytes[..end]).to_ascii_lowercase();
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    bytes.len() >= end + 4 + length
}
