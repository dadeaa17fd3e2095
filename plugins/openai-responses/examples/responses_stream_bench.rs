//! Streams a 50,000-event Responses answer from memory through the SSE
//! reader and the `openai-responses` parser, in uneven network-sized reads,
//! and prints `responses_50k_chunks_ms <ms>` (the median of 5 runs).
//!
//! `cargo run --release -p uji-plugin-openai-responses --example responses_stream_bench`

use std::time::Instant;

use uji_plugin_openai_responses::ResponsesStream;
use uji_wire_common::{Delta, StreamState};

const CHUNKS: usize = 50_000;
const RUNS: usize = 5;

fn event(out: &mut String, kind: &str, data: &str) {
    out.push_str("event: ");
    out.push_str(kind);
    out.push_str("\ndata: {\"type\":\"");
    out.push_str(kind);
    out.push_str("\",");
    out.push_str(data);
    out.push_str("}\n\n");
}

/// Text deltas, then one function call whose arguments come in 998 pieces.
fn body() -> Vec<u8> {
    let mut out = String::with_capacity(CHUNKS * 200);
    event(
        &mut out,
        "response.created",
        r#""response":{"id":"resp_b","status":"in_progress"}"#,
    );
    event(
        &mut out,
        "response.output_item.added",
        r#""output_index":0,"item":{"type":"message","id":"m1"}"#,
    );
    for i in 0..CHUNKS - 1_000 {
        let data = format!(
            r#""sequence_number":{i},"item_id":"m1","output_index":0,"content_index":0,"delta":"word{} \"q\" é ""#,
            i % 1000
        );
        event(&mut out, "response.output_text.delta", &data);
    }
    event(
        &mut out,
        "response.output_item.added",
        r#""output_index":1,"item":{"type":"function_call","id":"f1","call_id":"call_1","name":"read_file","arguments":""}"#,
    );
    for _ in 0..998 {
        event(
            &mut out,
            "response.function_call_arguments.delta",
            r#""item_id":"f1","output_index":1,"delta":"ab""#,
        );
    }
    event(
        &mut out,
        "response.completed",
        r#""response":{"status":"completed","usage":{"input_tokens":100,"output_tokens":50000}}"#,
    );
    out.into_bytes()
}

fn run(body: &[u8]) -> f64 {
    let started = Instant::now();
    let mut state = StreamState::new(ResponsesStream::new("bench"));
    let mut sink = |_: Delta| {};
    uji_wire_common::testing::push_in_reads(&mut state, body, &mut sink);
    match state.end(&mut sink) {
        Ok(answer)
            if answer.tool_calls.len() == 1 && answer.tool_calls[0].arguments.len() == 1996 => {}
        other => {
            eprintln!("responses_stream_bench: wrong answer: {other:?}");
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
        "responses_stream_bench: {} body bytes, runs (ms): {times:?}",
        body.len()
    );
    println!("responses_50k_chunks_ms {:.1}", times[RUNS / 2]);
}
