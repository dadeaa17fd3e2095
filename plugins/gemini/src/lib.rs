//! uji's `gemini` wire: the Gemini API's `streamGenerateContent` with
//! `alt=sse`: function declarations and calls, thoughts and their
//! signatures replayed to the same model, images in, usage.
//!
//! [`body`] maps uji's request to the API's JSON and [`GeminiStream`] turns
//! the streamed responses back into an answer; both are pure. The HTTP side
//! is `uji-wire-common`'s.

pub mod body;
pub mod stream;

pub use stream::GeminiStream;

use uji_sdk::{Canceller, Host, Plugin, Reply, Wire, WireRequest};

/// The `gemini` wire.
pub struct Gemini;

impl Wire for Gemini {
    fn stream(&self, request: WireRequest, reply: Reply) -> Option<Canceller> {
        let parser = GeminiStream::new(&request.model);
        uji_wire_common::spawn_stream(body::http_request(request), parser, reply)
    }
}

/// The plugin that registers the wire.
pub struct GeminiPlugin;

impl Plugin for GeminiPlugin {
    const NAME: &'static str = "gemini";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const DESCRIPTION: &'static str = "Gemini API wire (streamGenerateContent)";

    fn init(host: &Host) -> Result<(), String> {
        host.register_wire("gemini", Gemini)
    }
}

uji_sdk::export_plugin!(GeminiPlugin);
