//! Chat Completions streams, chunk by chunk as the API documents them: a
//! first chunk with the role, `delta.content` pieces, tool calls whose
//! `function.arguments` arrive in fragments keyed by `index` (id, type and
//! name only in the first fragment), a chunk with `finish_reason`, with
//! `stream_options.include_usage` a last chunk with `choices: []` and
//! `usage`, then `data: [DONE]`.

use serde_json::{Value, json};

use crate::split;

/// A `data:` frame holding `chunk`.
pub fn frame(chunk: &Value) -> String {
    crate::frame(None, &chunk.to_string())
}

/// The `data: [DONE]` frame.
pub fn done_frame() -> String {
    crate::frame(None, "[DONE]")
}

/// Builds a streamed completion.
#[derive(Debug, Clone)]
pub struct ChatEvents {
    model: String,
    frames: Vec<String>,
}

impl ChatEvents {
    /// Starts with the role chunk (`content: null`, as llama.cpp sends it).
    pub fn new(model: &str) -> ChatEvents {
        let mut events = ChatEvents {
            model: model.to_string(),
            frames: Vec::new(),
        };
        events.push(json!({"role": "assistant", "content": null}), None);
        events
    }

    fn chunk(&self, choices: Value, usage: Value) -> Value {
        json!({
            "id": "chatcmpl-fake0001",
            "object": "chat.completion.chunk",
            "created": 1_700_000_000,
            "model": self.model,
            "system_fingerprint": null,
            "choices": choices,
            "usage": usage,
        })
    }

    fn push(&mut self, delta: Value, finish_reason: Option<&str>) {
        let chunk = self.chunk(
            json!([{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish_reason}]),
            Value::Null,
        );
        self.frames.push(frame(&chunk));
    }

    /// Any delta object, as one chunk.
    pub fn delta(mut self, delta: Value) -> Self {
        self.push(delta, None);
        self
    }

    /// Text in `pieces` chunks.
    pub fn text(mut self, text: &str, pieces: usize) -> Self {
        for piece in split(text, pieces) {
            self.push(json!({"content": piece}), None);
        }
        self
    }

    /// Reasoning in `pieces` chunks under `reasoning_content` (DeepSeek,
    /// vLLM, llama.cpp).
    pub fn reasoning(self, text: &str, pieces: usize) -> Self {
        self.reasoning_field("reasoning_content", text, pieces)
    }

    /// Reasoning under another field name (`reasoning` for OpenRouter and
    /// Ollama).
    pub fn reasoning_field(mut self, field: &str, text: &str, pieces: usize) -> Self {
        for piece in split(text, pieces) {
            self.push(json!({"content": null, field: piece}), None);
        }
        self
    }

    /// One tool call whose arguments arrive in `pieces` fragments.
    pub fn tool_call(
        self,
        index: u64,
        id: &str,
        name: &str,
        arguments: &str,
        pieces: usize,
    ) -> Self {
        self.parallel_tool_calls(&[(index, id, name, arguments)], pieces)
    }

    /// Several tool calls, their fragments interleaved chunk by chunk (each
    /// chunk carries one fragment of one call).
    pub fn parallel_tool_calls(mut self, calls: &[(u64, &str, &str, &str)], pieces: usize) -> Self {
        for (index, id, name, _) in calls {
            self.push(
                json!({"tool_calls": [{
                    "index": index, "id": id, "type": "function",
                    "function": {"name": name, "arguments": ""},
                }]}),
                None,
            );
        }
        let fragments: Vec<Vec<String>> = calls
            .iter()
            .map(|(_, _, _, arguments)| split(arguments, pieces))
            .collect();
        let longest = fragments.iter().map(Vec::len).max().unwrap_or(0);
        for step in 0..longest {
            for ((index, ..), parts) in calls.iter().zip(&fragments) {
                if let Some(part) = parts.get(step) {
                    self.push(
                        json!({"tool_calls": [{"index": index, "function": {"arguments": part}}]}),
                        None,
                    );
                }
            }
        }
        self
    }

    /// The chunk with an empty delta and `finish_reason`.
    pub fn finish(mut self, reason: &str) -> Self {
        self.push(json!({}), Some(reason));
        self
    }

    /// The usage chunk (`choices: []`), with cached prompt tokens under
    /// `prompt_tokens_details.cached_tokens`.
    pub fn usage(mut self, prompt: u64, completion: u64, cached: u64) -> Self {
        let chunk = self.chunk(
            json!([]),
            json!({
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt.saturating_add(completion),
                "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": 0},
            }),
        );
        self.frames.push(frame(&chunk));
        self
    }

    /// The frames so far, without `[DONE]`.
    pub fn build(self) -> Vec<String> {
        self.frames
    }

    /// The frames followed by `data: [DONE]`.
    pub fn done(mut self) -> Vec<String> {
        self.frames.push(done_frame());
        self.frames
    }
}

/// The first user message of a Chat Completions request (its text): what
/// tells one session's requests from another's (a subagent's task).
pub fn first_user_text(request: &crate::RecordedRequest) -> String {
    request.json["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str().map(str::to_string))
        .unwrap_or_default()
}
