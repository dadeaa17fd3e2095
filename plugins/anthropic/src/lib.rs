//! uji's `anthropic` wire: the Anthropic Messages API, streamed.
//!
//! [`body`] maps uji's request to the API's JSON (prompt caching, thinking
//! and its replay, images, tool results) and [`AnthropicStream`] turns the
//! streamed events back into an answer; both are pure and tested without a
//! network. The HTTP side (runtime, idle timeout, cancel, error mapping) is
//! `uji-wire-common`'s.

pub mod body;
pub mod stream;
pub mod thinking;

pub use stream::AnthropicStream;

use uji_sdk::{Canceller, Host, Plugin, Reply, Wire, WireRequest};

/// The `anthropic` wire.
pub struct Anthropic;

impl Wire for Anthropic {
    fn stream(&self, request: WireRequest, reply: Reply) -> Option<Canceller> {
        let parser = AnthropicStream::new(&request.model);
        uji_wire_common::spawn_stream(body::http_request(request), parser, reply)
    }
}

/// The plugin that registers the wire.
pub struct AnthropicPlugin;

impl Plugin for AnthropicPlugin {
    const NAME: &'static str = "anthropic";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const DESCRIPTION: &'static str = "Anthropic Messages API wire";

    fn init(host: &Host) -> Result<(), String> {
        host.register_wire("anthropic", Anthropic)
    }
}

uji_sdk::export_plugin!(AnthropicPlugin);
