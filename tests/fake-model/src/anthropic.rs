//! Anthropic Messages streams, event by event as the API documents them:
//! `message_start`, then per content block `content_block_start`,
//! `content_block_delta`s (`text_delta`, `thinking_delta`,
//! `signature_delta`, `input_json_delta`) and `content_block_stop`, then
//! `message_delta` (stop reason, cumulative usage) and `message_stop`.

use serde_json::{Value, json};

use crate::split;

/// One SSE frame whose event name is the data's `type`.
pub fn frame(data: &Value) -> String {
    let event = data
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("message");
    crate::frame(Some(event), &data.to_string())
}

/// An `error` event, e.g. `error("overloaded_error", "Overloaded")`.
pub fn error(kind: &str, message: &str) -> String {
    frame(&json!({"type": "error", "error": {"type": kind, "message": message}}))
}

/// A `ping` event.
pub fn ping() -> String {
    frame(&json!({"type": "ping"}))
}

/// Builds a streamed message.
#[derive(Debug, Clone)]
pub struct AnthropicEvents {
    model: String,
    blocks: Vec<String>,
    index: u64,
    input: u64,
    output: u64,
    cache_read: u64,
    cache_write: u64,
    stop_reason: Option<String>,
}

impl AnthropicEvents {
    pub fn new(model: &str) -> AnthropicEvents {
        AnthropicEvents {
            model: model.to_string(),
            blocks: Vec::new(),
            index: 0,
            input: 25,
            output: 1,
            cache_read: 0,
            cache_write: 0,
            stop_reason: None,
        }
    }

    /// Input and cache counts go in `message_start`; the output count in
    /// `message_delta`.
    pub fn usage(mut self, input: u64, output: u64, cache_read: u64, cache_write: u64) -> Self {
        self.input = input;
        self.output = output;
        self.cache_read = cache_read;
        self.cache_write = cache_write;
        self
    }

    fn block(mut self, start: Value, deltas: Vec<Value>) -> Self {
        let index = self.index;
        self.index += 1;
        self.blocks.push(frame(&json!({
            "type": "content_block_start", "index": index, "content_block": start,
        })));
        for delta in deltas {
            self.blocks.push(frame(&json!({
                "type": "content_block_delta", "index": index, "delta": delta,
            })));
        }
        self.blocks.push(frame(
            &json!({"type": "content_block_stop", "index": index}),
        ));
        self
    }

    /// A text block streamed in `pieces` deltas.
    pub fn text(self, text: &str, pieces: usize) -> Self {
        let deltas = split(text, pieces)
            .into_iter()
            .map(|t| json!({"type": "text_delta", "text": t}))
            .collect();
        self.block(json!({"type": "text", "text": ""}), deltas)
    }

    /// A thinking block streamed in `pieces` deltas, then its signature.
    pub fn thinking(self, thinking: &str, signature: &str, pieces: usize) -> Self {
        let mut deltas: Vec<Value> = split(thinking, pieces)
            .into_iter()
            .map(|t| json!({"type": "thinking_delta", "thinking": t}))
            .collect();
        deltas.push(json!({"type": "signature_delta", "signature": signature}));
        self.block(
            json!({"type": "thinking", "thinking": "", "signature": ""}),
            deltas,
        )
    }

    /// A redacted thinking block (no deltas).
    pub fn redacted_thinking(self, data: &str) -> Self {
        self.block(
            json!({"type": "redacted_thinking", "data": data}),
            Vec::new(),
        )
    }

    /// A `tool_use` block whose input JSON arrives in `pieces` fragments
    /// (after the empty first fragment the API sends).
    pub fn tool_use(self, id: &str, name: &str, input_json: &str, pieces: usize) -> Self {
        let mut deltas = vec![json!({"type": "input_json_delta", "partial_json": ""})];
        deltas.extend(
            split(input_json, pieces)
                .into_iter()
                .map(|p| json!({"type": "input_json_delta", "partial_json": p})),
        );
        self.block(
            json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
            deltas,
        )
    }

    /// A `ping` between blocks.
    pub fn ping(mut self) -> Self {
        self.blocks.push(ping());
        self
    }

    /// The stop reason (default: `tool_use` when a tool was used, else
    /// `end_turn`).
    pub fn stop_reason(mut self, reason: &str) -> Self {
        self.stop_reason = Some(reason.to_string());
        self
    }

    fn start(&self) -> String {
        frame(&json!({
            "type": "message_start",
            "message": {
                "id": "msg_fake_0001", "type": "message", "role": "assistant",
                "content": [], "model": self.model,
                "stop_reason": null, "stop_sequence": null,
                "usage": {
                    "input_tokens": self.input,
                    "cache_creation_input_tokens": self.cache_write,
                    "cache_read_input_tokens": self.cache_read,
                    "output_tokens": 1,
                },
            },
        }))
    }

    /// The message up to the last block, without `message_delta` and
    /// `message_stop` (for streams that are cut off).
    pub fn unfinished(self) -> Vec<String> {
        let mut out = vec![self.start()];
        out.extend(self.blocks);
        out
    }

    /// The whole message.
    pub fn build(self) -> Vec<String> {
        let reason = self.stop_reason.clone().unwrap_or_else(|| {
            let used_tool = self.blocks.iter().any(|b| b.contains("\"tool_use\""));
            if used_tool { "tool_use" } else { "end_turn" }.to_string()
        });
        let output = self.output;
        let mut out = self.unfinished();
        out.push(frame(&json!({
            "type": "message_delta",
            "delta": {"stop_reason": reason, "stop_sequence": null},
            "usage": {"output_tokens": output},
        })));
        out.push(frame(&json!({"type": "message_stop"})));
        out
    }
}
