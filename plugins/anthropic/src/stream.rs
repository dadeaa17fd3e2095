//! The Messages API's streaming events: `message_start`,
//! `content_block_start` / `content_block_delta` / `content_block_stop`,
//! `message_delta`, `message_stop`, `ping` and `error`.

use serde_json::{Value, json};
use uji_sdk::{Answer, Failure, ToolCallRequest, Usage};
use uji_wire_common::sse::json_values;
use uji_wire_common::{Delta, StreamParser, ended_early};

#[derive(Debug)]
enum Block {
    Text,
    Thinking {
        signature: String,
        thinking: String,
    },
    Redacted {
        data: String,
    },
    ToolUse {
        id: String,
        name: String,
        json: String,
        input: Value,
    },
    Other,
}

/// Assembles a streamed Messages answer.
///
/// Thinking blocks that carry a signature (and redacted thinking) are kept
/// in [`Answer::replay`] as `{"model": ..., "thinking": [blocks]}` so they
/// can be sent back to the same model with the next request.
#[derive(Debug)]
pub struct AnthropicStream {
    model: String,
    /// By the API's `index`, in order of arrival.
    blocks: Vec<(u64, Block)>,
    text: String,
    reasoning: String,
    usage: Usage,
    stop_reason: Option<String>,
    stopped: bool,
    failure: Option<Failure>,
}

fn number(value: &Value, key: &str) -> Option<u64> {
    value.get(key).and_then(Value::as_u64)
}

impl AnthropicStream {
    /// `model` is the model asked for; replayed thinking is tied to it.
    pub fn new(model: &str) -> AnthropicStream {
        AnthropicStream {
            model: model.to_string(),
            blocks: Vec::new(),
            text: String::new(),
            reasoning: String::new(),
            usage: Usage::default(),
            stop_reason: None,
            stopped: false,
            failure: None,
        }
    }

    /// Usage fields present in `usage` replace what was known (the counts in
    /// `message_delta` are cumulative).
    fn usage(&mut self, usage: &Value) {
        if let Some(n) = number(usage, "input_tokens") {
            self.usage.input = n;
        }
        if let Some(n) = number(usage, "output_tokens") {
            self.usage.output = n;
        }
        if let Some(n) = number(usage, "cache_read_input_tokens") {
            self.usage.cache_read = n;
        }
        if let Some(n) = number(usage, "cache_creation_input_tokens") {
            self.usage.cache_write = n;
        }
    }

    fn block(&mut self, index: u64) -> Option<&mut Block> {
        self.blocks
            .iter_mut()
            .rev()
            .find(|(i, _)| *i == index)
            .map(|(_, block)| block)
    }

    fn start_thinking(&mut self, out: &mut Vec<Delta>) {
        if !self.reasoning.is_empty() {
            self.reasoning.push_str("\n\n");
            out.push(Delta::Reasoning("\n\n".into()));
        }
    }

    fn block_start(&mut self, index: u64, block: &Value, out: &mut Vec<Delta>) {
        let block = match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                if let Some(text) = block.get("text").and_then(Value::as_str)
                    && !text.is_empty()
                {
                    self.text.push_str(text);
                    out.push(Delta::Text(text.to_string()));
                }
                Block::Text
            }
            Some("thinking") => {
                self.start_thinking(out);
                let thinking = block
                    .get("thinking")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if !thinking.is_empty() {
                    self.reasoning.push_str(thinking);
                    out.push(Delta::Reasoning(thinking.to_string()));
                }
                Block::Thinking {
                    thinking: thinking.to_string(),
                    signature: block
                        .get("signature")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                }
            }
            Some("redacted_thinking") => Block::Redacted {
                data: block
                    .get("data")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            },
            Some("tool_use") => Block::ToolUse {
                id: block
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                name: block
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                json: String::new(),
                input: block.get("input").cloned().unwrap_or(Value::Null),
            },
            _ => Block::Other,
        };
        self.blocks.push((index, block));
    }

    fn block_delta(&mut self, index: u64, delta: &Value, out: &mut Vec<Delta>) {
        let kind = delta.get("type").and_then(Value::as_str).unwrap_or("");
        let field = |key: &str| delta.get(key).and_then(Value::as_str).unwrap_or_default();
        // A delta for a block that never started: start it from the delta.
        if self.block(index).is_none() {
            let start = match kind {
                "text_delta" => json!({"type": "text"}),
                "thinking_delta" | "signature_delta" => json!({"type": "thinking"}),
                "input_json_delta" => json!({"type": "tool_use"}),
                _ => json!({}),
            };
            self.block_start(index, &start, out);
        }
        match kind {
            "text_delta" => {
                let text = field("text");
                if !text.is_empty() {
                    self.text.push_str(text);
                    out.push(Delta::Text(text.to_string()));
                }
            }
            "thinking_delta" => {
                let text = field("thinking");
                if let Some(Block::Thinking { thinking, .. }) = self.block(index) {
                    thinking.push_str(text);
                }
                if !text.is_empty() {
                    self.reasoning.push_str(text);
                    out.push(Delta::Reasoning(text.to_string()));
                }
            }
            "signature_delta" => {
                let text = field("signature");
                if let Some(Block::Thinking { signature, .. }) = self.block(index) {
                    signature.push_str(text);
                }
            }
            "input_json_delta" => {
                let text = field("partial_json");
                if let Some(Block::ToolUse { json, .. }) = self.block(index) {
                    json.push_str(text);
                }
            }
            _ => {}
        }
    }

    fn event(&mut self, kind: &str, value: &Value, out: &mut Vec<Delta>) {
        let index = number(value, "index").unwrap_or(0);
        match kind {
            "message_start" => {
                if let Some(usage) = value.get("message").and_then(|m| m.get("usage")) {
                    self.usage(usage);
                }
            }
            "content_block_start" => {
                let block = value.get("content_block").cloned().unwrap_or(Value::Null);
                self.block_start(index, &block, out);
            }
            "content_block_delta" => {
                if let Some(delta) = value.get("delta") {
                    self.block_delta(index, delta, out);
                }
            }
            "message_delta" => {
                if let Some(reason) = value
                    .get("delta")
                    .and_then(|d| d.get("stop_reason"))
                    .and_then(Value::as_str)
                {
                    self.stop_reason = Some(reason.to_string());
                }
                if let Some(usage) = value.get("usage") {
                    self.usage(usage);
                }
            }
            "message_stop" => self.stopped = true,
            "error" => self.failure = Some(error_failure(value)),
            // ping, content_block_stop, and anything new.
            _ => {}
        }
    }
}

impl StreamParser for AnthropicStream {
    fn feed(&mut self, event: &str, data: &str) -> Vec<Delta> {
        let mut out = Vec::new();
        if self.is_done() {
            return out;
        }
        for value in json_values(data) {
            let kind = value
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or(event)
                .to_string();
            self.event(&kind, &value, &mut out);
            if self.is_done() {
                break;
            }
        }
        out
    }

    fn is_done(&self) -> bool {
        self.stopped || self.failure.is_some()
    }

    fn finish(self) -> Result<Answer, Failure> {
        if let Some(failure) = self.failure {
            return Err(failure);
        }
        // `message_delta` carries the stop reason: a stream cut right after
        // it lost nothing.
        if !self.stopped && self.stop_reason.is_none() {
            return Err(ended_early());
        }
        let mut tool_calls = Vec::new();
        let mut replay = Vec::new();
        for (_, block) in self.blocks {
            match block {
                Block::ToolUse {
                    id,
                    name,
                    json,
                    input,
                } => {
                    let arguments = if !json.is_empty() {
                        json
                    } else if input.as_object().is_some_and(|o| !o.is_empty()) {
                        input.to_string()
                    } else {
                        "{}".to_string()
                    };
                    tool_calls.push(ToolCallRequest {
                        id,
                        name,
                        arguments,
                    });
                }
                Block::Thinking {
                    thinking,
                    signature,
                } if !signature.is_empty() => replay.push(json!({
                    "type": "thinking",
                    "thinking": thinking,
                    "signature": signature,
                })),
                Block::Redacted { data } if !data.is_empty() => {
                    replay.push(json!({"type": "redacted_thinking", "data": data}))
                }
                _ => {}
            }
        }
        Ok(Answer {
            text: self.text,
            reasoning: (!self.reasoning.is_empty()).then_some(self.reasoning),
            tool_calls,
            usage: self.usage,
            replay: (!replay.is_empty()).then(|| json!({"model": self.model, "thinking": replay})),
        })
    }

    fn held_bytes(&self) -> usize {
        let blocks: usize = self
            .blocks
            .iter()
            .map(|(_, block)| match block {
                Block::Thinking {
                    signature,
                    thinking,
                } => signature.len() + thinking.len(),
                Block::Redacted { data } => data.len(),
                Block::ToolUse { id, name, json, .. } => id.len() + name.len() + json.len(),
                Block::Text | Block::Other => 0,
            })
            .sum();
        self.text.len() + self.reasoning.len() + blocks
    }
}

/// An `error` event: overloaded, rate-limited and server errors keep an HTTP
/// status so core retries them; key problems are auth failures; the rest
/// cannot be retried.
pub fn error_failure(value: &Value) -> Failure {
    let error = value.get("error").unwrap_or(value);
    let kind = error.get("type").and_then(Value::as_str).unwrap_or("error");
    let detail = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let message = if detail.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}: {detail}")
    };
    let status = match kind {
        "overloaded_error" => 529,
        "rate_limit_error" => 429,
        "api_error" => 500,
        "timeout_error" => 504,
        "authentication_error" => {
            return Failure::Auth {
                status: 401,
                message: Some(message),
            };
        }
        "permission_error" => {
            return Failure::Auth {
                status: 403,
                message: Some(message),
            };
        }
        _ => return Failure::Provider { message },
    };
    Failure::Http {
        status: Some(status),
        message,
        retry_after: None,
        transport: None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn replay(sse: &str) -> (Result<Answer, Failure>, String, String) {
        uji_wire_common::testing::replay(AnthropicStream::new("claude-x"), sse, 5)
    }

    fn fixture(name: &str) -> Option<String> {
        uji_wire_common::testing::fixture(env!("CARGO_MANIFEST_DIR"), name)
    }

    fn frame(data: Value) -> String {
        format!(
            "event: {}\ndata: {data}\n\n",
            data["type"].as_str().unwrap()
        )
    }

    #[test]
    fn llama_cpp_tool_use_capture() {
        let Some(sse) = fixture("anthropic-stream-tooluse.sse") else {
            return;
        };
        let answer = replay(&sse).0.unwrap();
        assert_eq!(answer.text, "");
        assert_eq!(answer.tool_calls.len(), 1);
        assert_eq!(answer.tool_calls[0].name, "read_file");
        assert_eq!(answer.tool_calls[0].id, "rlPwvlbxKlHQAbdmi8uIGrhbisq9IOE4");
        let args: Value = serde_json::from_str(&answer.tool_calls[0].arguments).unwrap();
        assert_eq!(args, json!({"path": "README.md"}));
        assert_eq!(
            answer.usage,
            Usage {
                input: 97,
                output: 39,
                cache_read: 195,
                cache_write: 0
            }
        );
        assert_eq!(answer.replay, None);
    }

    #[test]
    fn litellm_tool_use_capture() {
        let Some(sse) = fixture("litellm-anthropic-stream-tooluse.sse") else {
            return;
        };
        let answer = replay(&sse).0.unwrap();
        assert_eq!(answer.tool_calls.len(), 1);
        assert_eq!(answer.tool_calls[0].name, "read_file");
        let args: Value = serde_json::from_str(&answer.tool_calls[0].arguments).unwrap();
        assert_eq!(args, json!({"path": "README.md"}));
        // message_delta's cumulative counts win.
        assert_eq!(
            answer.usage,
            Usage {
                input: 1,
                output: 39,
                cache_read: 280,
                cache_write: 0
            }
        );
    }

    #[test]
    fn thinking_text_and_tools_as_documented() {
        let sse = [
            frame(
                json!({"type": "message_start", "message": {"id": "msg_1", "type": "message", "role": "assistant", "content": [], "model": "claude-x", "stop_reason": null, "usage": {"input_tokens": 10, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 200, "output_tokens": 1}}}),
            ),
            frame(json!({"type": "ping"})),
            frame(
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
            ),
            frame(
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "Let me "}}),
            ),
            frame(
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "look."}}),
            ),
            frame(
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "sig=="}}),
            ),
            frame(json!({"type": "content_block_stop", "index": 0})),
            frame(
                json!({"type": "content_block_start", "index": 1, "content_block": {"type": "redacted_thinking", "data": "opaque"}}),
            ),
            frame(json!({"type": "content_block_stop", "index": 1})),
            frame(
                json!({"type": "content_block_start", "index": 2, "content_block": {"type": "text", "text": ""}}),
            ),
            frame(
                json!({"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": "Reading "}}),
            ),
            frame(
                json!({"type": "content_block_delta", "index": 2, "delta": {"type": "text_delta", "text": "both."}}),
            ),
            frame(json!({"type": "content_block_stop", "index": 2})),
            frame(
                json!({"type": "content_block_start", "index": 3, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}}),
            ),
            frame(
                json!({"type": "content_block_delta", "index": 3, "delta": {"type": "input_json_delta", "partial_json": ""}}),
            ),
            frame(
                json!({"type": "content_block_delta", "index": 3, "delta": {"type": "input_json_delta", "partial_json": "{\"path\": \"a"}}),
            ),
            frame(
                json!({"type": "content_block_delta", "index": 3, "delta": {"type": "input_json_delta", "partial_json": "\"}"}}),
            ),
            frame(json!({"type": "content_block_stop", "index": 3})),
            frame(
                json!({"type": "content_block_start", "index": 4, "content_block": {"type": "tool_use", "id": "toolu_2", "name": "list", "input": {}}}),
            ),
            frame(json!({"type": "content_block_stop", "index": 4})),
            frame(
                json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 42}}),
            ),
            frame(json!({"type": "message_stop"})),
        ]
        .concat();
        let (answer, text, reasoning) = replay(&sse);
        let answer = answer.unwrap();
        assert_eq!(text, "Reading both.");
        assert_eq!(reasoning, "Let me look.");
        assert_eq!(answer.text, text);
        assert_eq!(answer.reasoning.as_deref(), Some("Let me look."));
        assert_eq!(answer.tool_calls.len(), 2);
        assert_eq!(answer.tool_calls[0].arguments, "{\"path\": \"a\"}");
        assert_eq!(answer.tool_calls[1].arguments, "{}");
        assert_eq!(
            answer.usage,
            Usage {
                input: 10,
                output: 42,
                cache_read: 200,
                cache_write: 100
            }
        );
        assert_eq!(
            answer.replay,
            Some(json!({"model": "claude-x", "thinking": [
                {"type": "thinking", "thinking": "Let me look.", "signature": "sig=="},
                {"type": "redacted_thinking", "data": "opaque"}
            ]}))
        );
    }

    #[test]
    fn error_events() {
        let overloaded = frame(
            json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        );
        assert_eq!(
            replay(&overloaded).0.unwrap_err(),
            Failure::Http {
                status: Some(529),
                message: "overloaded_error: Overloaded".into(),
                retry_after: None,
                transport: None,
            }
        );
        let invalid = frame(
            json!({"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}),
        );
        assert!(matches!(
            replay(&invalid).0.unwrap_err(),
            Failure::Provider { .. }
        ));
    }

    #[test]
    fn a_stream_cut_before_the_stop_fails() {
        let sse = [
            frame(json!({"type": "message_start", "message": {"usage": {"input_tokens": 1}}})),
            frame(
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "par"}}),
            ),
        ]
        .concat();
        let (result, text, _) = replay(&sse);
        assert_eq!(text, "par");
        assert_eq!(result.unwrap_err(), ended_early());
    }

    #[test]
    fn incomplete_tool_json_and_garbage() {
        let sse = [
            ": comment\n\ngarbage\n\ndata: {oops\n\n".to_string(),
            frame(
                json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t", "name": "x"}}),
            ),
            frame(
                json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"a\": "}}),
            ),
            frame(
                json!({"type": "message_delta", "delta": {"stop_reason": "max_tokens"}, "usage": {"output_tokens": 5}}),
            ),
            frame(json!({"type": "message_stop"})),
        ]
        .concat();
        let answer = replay(&sse).0.unwrap();
        assert_eq!(answer.tool_calls[0].arguments, "{\"a\": ");
    }

    /// Pieces of this format; the SSE and JSON basics come from wire-common.
    const PIECES: &[&str] = &[
        "\"message_start\"",
        "\"content_block_start\"",
        "\"content_block_delta\"",
        "\"message_delta\"",
        "\"message_stop\"",
        "\"error\"",
        "\"tool_use\"",
        "\"thinking\"",
        "\"text_delta\"",
        "\"input_json_delta\"",
        "\"signature_delta\"",
        "\"partial_json\":",
        "\"content_block\":",
        "\"message\":",
        "\"input_tokens\":",
        "\"stop_reason\":",
    ];

    /// Random streams built from pieces of the format: never a panic.
    #[test]
    fn random_input_never_panics() {
        uji_wire_common::testing::never_panics(|| AnthropicStream::new("m"), PIECES);
    }
}
