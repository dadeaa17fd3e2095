//! uji's `openai-responses` wire: the OpenAI Responses API, streamed, with
//! function tools, reasoning summaries, encrypted reasoning replayed to the
//! same model, effort and prompt cache key.
//!
//! [`body`] maps uji's request to the API's JSON and [`ResponsesStream`]
//! turns the streamed events back into an answer; both are pure and tested
//! without a network. The HTTP side (runtime, idle timeout, cancel, error
//! mapping, the 8 MiB cap) is `uji-wire-common`'s.

pub mod body;
pub mod stream;

pub use stream::ResponsesStream;

use uji_sdk::{Canceller, Host, Plugin, Reply, Wire, WireRequest};

/// The `openai-responses` wire.
pub struct OpenAiResponses;

impl Wire for OpenAiResponses {
    fn stream(&self, request: WireRequest, reply: Reply) -> Option<Canceller> {
        let parser = ResponsesStream::new(&request.model);
        uji_wire_common::spawn_stream(body::http_request(request), parser, reply)
    }
}

/// The plugin that registers the wire.
pub struct OpenAiResponsesPlugin;

impl Plugin for OpenAiResponsesPlugin {
    const NAME: &'static str = "openai-responses";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const DESCRIPTION: &'static str =
        "Responses API wire: OpenAI and proxies that speak the Responses API";

    fn init(host: &Host) -> Result<(), String> {
        host.register_wire("openai-responses", OpenAiResponses)
    }
}

uji_sdk::export_plugin!(OpenAiResponsesPlugin);
