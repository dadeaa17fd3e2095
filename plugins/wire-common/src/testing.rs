//! Helpers for the wires' parser tests: replay an SSE body through a parser
//! in awkward chunks, and read the real captures in `shared/fixtures/sse`.

use uji_sdk::{Answer, Failure};

use crate::{Delta, StreamParser, StreamState};

/// Feeds `sse` to `parser` in chunks of `chunk` bytes; returns the result
/// and the text and reasoning deltas it streamed.
pub fn replay<P: StreamParser>(
    parser: P,
    sse: &str,
    chunk: usize,
) -> (Result<Answer, Failure>, String, String) {
    let mut state = StreamState::new(parser);
    let (mut text, mut reasoning) = (String::new(), String::new());
    let mut sink = |d: Delta| match d {
        Delta::Text(t) => text.push_str(&t),
        Delta::Reasoning(r) => reasoning.push_str(&r),
    };
    for piece in sse.as_bytes().chunks(chunk.max(1)) {
        state.push(piece, &mut sink);
    }
    let result = state.end(&mut sink);
    (result, text, reasoning)
}

/// A capture from `shared/fixtures/sse/` (beside the repository, as in CI),
/// found from the calling crate's manifest directory; `None`, with a note on
/// stderr, when it is not there.
pub fn fixture(manifest_dir: &str, name: &str) -> Option<String> {
    let path = format!("{manifest_dir}/../../../shared/fixtures/sse/{name}");
    match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) => {
            eprintln!("skipping: fixture {path} not readable ({e})");
            None
        }
    }
}

/// SSE and JSON fragments every stream format is made of.
const COMMON_PIECES: &[&str] = &[
    "data: ",
    "event: ",
    "\n",
    "\n\n",
    "\r\n",
    "\r",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "null",
    "18446744073709551615",
    "-1",
    "1.5",
    "\"x\"",
    "\"index\":",
    "\"type\":",
    "\"delta\":",
    "\"usage\":",
    "[DONE]",
    "é",
    ": c\n",
];

/// Feeds thousands of random streams, built from the common fragments and
/// the format's own `pieces`, plus random bytes, to fresh parsers: the
/// parser must never panic.
pub fn never_panics<P: StreamParser>(parser: impl Fn() -> P, pieces: &[&str]) {
    let all: Vec<&str> = COMMON_PIECES.iter().chain(pieces).copied().collect();
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..3000 {
        let mut sse = String::new();
        for _ in 0..(next() % 60) {
            sse.push_str(all[(next() % all.len() as u64) as usize]);
        }
        let _ = replay(parser(), &sse, 7);
        let mut state = StreamState::new(parser());
        let bytes: Vec<u8> = (0..(next() % 200)).map(|_| next() as u8).collect();
        state.push(&bytes, &mut |_| {});
        let _ = state.end(&mut |_| {});
    }
}

/// Feeds `body` to `state` in uneven network-sized reads, as a socket
/// delivers it, until the parser is done (for the parser benchmarks).
pub fn push_in_reads<P: StreamParser>(
    state: &mut StreamState<P>,
    body: &[u8],
    sink: &mut dyn FnMut(Delta),
) {
    let sizes = [1_371, 4_096, 16_384, 733, 8_192];
    let mut rest = body;
    let mut i = 0;
    while !rest.is_empty() {
        let take = sizes[i % sizes.len()].min(rest.len());
        let (now, later) = rest.split_at(take);
        if state.push(now, sink) {
            break;
        }
        rest = later;
        i += 1;
    }
}
