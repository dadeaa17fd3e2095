//! The wire contract: what core hands a model-API adapter and what the
//! adapter reports back. The same shapes are offered to Lua as `uji.wire.add`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::Image;

/// A message in uji's own format; each wire maps it to its API.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum Message {
    User {
        #[serde(default)]
        text: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<Image>,
    },
    Assistant {
        #[serde(default)]
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reasoning: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCallRequest>,
        /// Provider-specific data (e.g. signed thinking blocks) that is sent
        /// back only to the same wire and model.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        replay: Option<Value>,
    },
    Tool {
        tool_call_id: String,
        name: String,
        content: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<Image>,
    },
}

/// A tool call as the model made it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCallRequest {
    pub id: String,
    pub name: String,
    /// The arguments exactly as the model sent them (a JSON string that may be
    /// invalid: core reports that back to the model).
    pub arguments: String,
}

/// A tool as a wire presents it to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WireTool {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ProviderInfo {
    pub id: String,
    pub base_url: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Auth {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

/// One model request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WireRequest {
    pub model: String,
    pub system: String,
    pub messages: Vec<Message>,
    #[serde(default)]
    pub tools: Vec<WireTool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output: Option<u64>,
    /// `off`, `short` or `long`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    pub provider: ProviderInfo,
    #[serde(default)]
    pub auth: Auth,
    /// Seconds without data before the stream is declared stalled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_timeout: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Usage {
    #[serde(default)]
    pub input: u64,
    #[serde(default)]
    pub output: u64,
    #[serde(default)]
    pub cache_read: u64,
    #[serde(default)]
    pub cache_write: u64,
}

impl Usage {
    /// Adds `more`, each counter stopping at `u64::MAX` instead of
    /// wrapping: a model may report any number.
    pub fn add(&mut self, more: &Usage) {
        self.input = self.input.saturating_add(more.input);
        self.output = self.output.saturating_add(more.output);
        self.cache_read = self.cache_read.saturating_add(more.cache_read);
        self.cache_write = self.cache_write.saturating_add(more.cache_write);
    }

    /// Every token counted: read, written, cache read and written,
    /// saturating.
    pub fn total(&self) -> u64 {
        self.context().saturating_add(self.output)
    }

    /// The tokens of the context the answer was given (input, cached or
    /// not), saturating.
    pub fn context(&self) -> u64 {
        self.input
            .saturating_add(self.cache_read)
            .saturating_add(self.cache_write)
    }
}

/// The most one answer may hold: its text, reasoning and tool-call
/// arguments together. A model's output limit is far below it (128k tokens
/// are about 0.5 MB); a stream past it is a runaway and is stopped.
pub const MAX_ANSWER_BYTES: usize = 8 * 1024 * 1024;

/// The failure of a stream stopped at [`MAX_ANSWER_BYTES`].
pub fn answer_too_long() -> Failure {
    Failure::Provider {
        message: format!(
            "the model's answer grew past {} MiB (text, reasoning and tool-call arguments) and was stopped; \
             ask for a shorter answer, or split the work into smaller steps",
            MAX_ANSWER_BYTES / (1024 * 1024)
        ),
    }
}

/// A finished model answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Answer {
    #[serde(default)]
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    #[serde(default)]
    pub tool_calls: Vec<ToolCallRequest>,
    #[serde(default)]
    pub usage: Usage,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<Value>,
}

/// Why a model request failed. Core decides what is retried.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Failure {
    /// A transport or HTTP failure. `status` is absent when the connection
    /// dropped or stalled.
    Http {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<u16>,
        message: String,
        /// What went wrong when there is no status. Retry decides on it;
        /// absent from wires older than it (then the failure is retried as
        /// a dropped connection).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        transport: Option<Transport>,
        /// Seconds the server asked us to wait.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_after: Option<f64>,
    },
    /// The key was refused (401/403).
    Auth {
        status: u16,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// The API answered, but with an error uji cannot retry.
    Provider { message: String },
}

/// Why a request failed without an HTTP status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// No connection: DNS, refused, TLS, proxy.
    Connect,
    /// The connection dropped, or the stream ended before the answer did.
    Dropped,
    /// No data for the idle timeout.
    Stalled,
    /// uji cancelled the request (an interrupt): never retried.
    Cancelled,
    /// A kind this uji does not know (from a newer wire).
    #[serde(other)]
    Other,
}
