//! Streams a 50,000-event Gemini answer from memory through the SSE reader
//! and the `gemini` parser, in uneven network-sized reads, and prints
//! `gemini_50k_chunks_ms <ms>` (the median of 5 runs).
//!
//! `cargo run --release -p uji-plugin-gemini --example gemini_stream_bench`

use std::time::Instant;

use uji_plugin_gemini::GeminiStream;
use uji_wire_common::{Delta, StreamState};

const CHUNKS: usize = 50_000;
const RUNS: usize = 5;

fn event(out: &mut String, parts: &str, finish: &str) {
    out.push_str(r#"data: {"candidates":[{"content":{"role":"model","parts":"#);
    out.push_str(parts);
    out.push_str(r#"},"index":0"#);
    out.push_str(finish);
    out.push_str(r#"}],"usageMetadata":{"promptTokenCount":100,"candidatesTokenCount":50000},"modelVersion":"bench"}"#);
    out.push_str("\n\n");
}

/// Text events, then 1,000 events each with one function call.
fn body() -> Vec<u8> {
    let mut out = String::with_capacity(CHUNKS * 220);
    for i in 0..CHUNKS - 1_000 {
        event(
            &mut out,
            &format!(r#"[{{"text":"word{} \"q\" é "}}]"#, i % 1000),
            "",
        );
    }
    for i in 0..999 {
        let part =
            format!(r#"[{{"functionCall":{{"name":"read_file","args":{{"path":"f{i}"}}}}}}]"#);
        event(&mut out, &part, "");
    }
    event(&mut out, r#"[{"text":""}]"#, r#","finishReason":"STOP""#);
    out.into_bytes()
}

fn run(body: &[u8]) -> f64 {
    let started = Instant::now();
    let mut state = StreamState::new(GeminiStream::new("bench"));
    let mut sink = |_: Delta| {};
    uji_wire_common::testing::push_in_reads(&mut state, body, &mut sink);
    match state.end(&mut sink) {
        Ok(answer) if answer.tool_calls.len() == 999 => {}
        other => {
            eprintln!(
                "gemini_stream_bench: wrong answer: {:?}",
                other.map(|a| a.tool_calls.len())
            );
            std::process::exit(1);
        }
    }
    started.elapsed().as_secs_f64() * 1000.0
}

fn main() {
    let body = body();
    let mut times: Vec<f64> = (0..RUNS).map(|_| run(&body)).collect();
    times.sort_by(f64::total_cmp);
    eprintln!(
        "gemini_stream_bench: {} body bytes, runs (ms): {times:?}",
        body.len()
    );
    println!("gemini_50k_chunks_ms {:.1}", times[RUNS / 2]);
}
