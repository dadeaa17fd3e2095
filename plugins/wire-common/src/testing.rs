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
