//! uji's `openai-chat` wire: the Chat Completions API, streamed. It also
//! serves the many compatible servers (OpenRouter, Ollama, llama.cpp's
//! server, vLLM, LM Studio, Groq, DeepSeek...).
//!
//! [`body`] maps uji's request to the API's JSON and [`ChatStream`] turns
//! the streamed chunks back into an answer; both are pure and tested without
//! a network. The HTTP side (runtime, idle timeout, cancel, error mapping)
//! is `uji-wire-common`'s.

pub mod body;
pub mod stream;

pub use stream::ChatStream;

use uji_sdk::{Canceller, Host, Plugin, Reply, Wire, WireRequest};

/// The `openai-chat` wire.
pub struct OpenAiChat;

impl Wire for OpenAiChat {
    fn stream(&self, request: WireRequest, reply: Reply) -> Option<Canceller> {
        let http = body::http_request(request);
        uji_wire_common::spawn_stream(http, ChatStream::new(), reply)
    }
}

/// The plugin that registers the wire.
pub struct OpenAiChatPlugin;

impl Plugin for OpenAiChatPlugin {
    const NAME: &'static str = "openai-chat";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const DESCRIPTION: &'static str = "Chat Completions wire: OpenAI, OpenRouter, Ollama, llama.cpp, vLLM and other compatible servers";

    fn init(host: &Host) -> Result<(), String> {
        host.register_wire("openai-chat", OpenAiChat)
    }
}

uji_sdk::export_plugin!(OpenAiChatPlugin);
