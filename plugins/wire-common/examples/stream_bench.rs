//! Streams a 50,000-chunk Chat Completions answer from memory through the
//! SSE reader and the `openai-chat` parser, as the wire does with network
//! reads, and prints `stream_50k_chunks_ms <ms>` (the median of 5 runs).
//!
//! `cargo run --release -p uji-wire-common --example stream_bench`

use std::time::Instant;

use uji_plugin_openai_chat::ChatStream;
use uji_wire_common::{Delta, StreamState};

const CHUNKS: usize = 50_000;
const RUNS: usize = 5;

/// The body a server would send: role chunk, text chunks, a tool call in
/// fragments, finish, usage, `[DONE]`.
fn body() -> Vec<u8> {
    let mut out = String::with_capacity(CHUNKS * 260);
    let head = r#"{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"bench","system_fingerprint":null,"choices":[{"index":0,"delta":"#;
    out.push_str("data: ");
    out.push_str(head);
    out.push_str(r#"{"role":"assistant","content":null},"logprobs":null,"finish_reason":null}],"usage":null}"#);
    out.push_str("\n\n");
    let text_chunks = CHUNKS - 1_000;
    for i in 0..text_chunks {
        out.push_str("data: ");
        out.push_str(head);
        out.push_str(&format!(
            r#"{{"content":"word{} \"q\" é "}},"logprobs":null,"finish_reason":null}}],"usage":null}}"#,
            i % 1000
        ));
        out.push_str("\n\n");
    }
    out.push_str("data: ");
    out.push_str(head);
    out.push_str(r#"{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read_file","arguments":""}}]},"logprobs":null,"finish_reason":null}],"usage":null}"#);
    out.push_str("\n\n");
    for _ in 0..998 {
        out.push_str("data: ");
        out.push_str(head);
        out.push_str(r#"{"tool_calls":[{"index":0,"function":{"arguments":"ab"}}]},"logprobs":null,"finish_reason":null}],"usage":null}"#);
        out.push_str("\n\n");
    }
    out.push_str("data: ");
    out.push_str(head);
    out.push_str(r#"{},"logprobs":null,"finish_reason":"tool_calls"}],"usage":null}"#);
    out.push_str("\n\n");
    out.push_str(r#"data: {"id":"chatcmpl-bench","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":100,"completion_tokens":50000,"total_tokens":50100}}"#);
    out.push_str("\n\ndata: [DONE]\n\n");
    out.into_bytes()
}

/// One run: feeds the body in uneven network-sized reads. Returns the
/// milliseconds taken and the number of text bytes delivered.
fn run(body: &[u8]) -> (f64, usize) {
    let started = Instant::now();
    let mut state = StreamState::new(ChatStream::new());
    let mut delivered = 0usize;
    let mut sink = |delta: Delta| {
        if let Delta::Text(text) = delta {
            delivered += text.len();
        }
    };
    uji_wire_common::testing::push_in_reads(&mut state, body, &mut sink);
    let answer = match state.end(&mut sink) {
        Ok(answer) => answer,
        Err(failure) => {
            eprintln!("stream_bench: the stream failed: {failure:?}");
            std::process::exit(1);
        }
    };
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    if answer.tool_calls.len() != 1 || answer.tool_calls[0].arguments.len() != 998 * 2 {
        eprintln!("stream_bench: wrong tool call assembled");
        std::process::exit(1);
    }
    (ms, delivered.max(answer.text.len()))
}

fn main() {
    let body = body();
    let mut times = Vec::with_capacity(RUNS);
    let mut delivered = 0;
    for _ in 0..RUNS {
        let (ms, bytes) = run(&body);
        times.push(ms);
        delivered = bytes;
    }
    times.sort_by(f64::total_cmp);
    let median = times[RUNS / 2];
    eprintln!(
        "stream_bench: {} body bytes, {} text bytes, runs (ms): {:?}",
        body.len(),
        delivered,
        times
    );
    println!("stream_50k_chunks_ms {median:.1}");
}
