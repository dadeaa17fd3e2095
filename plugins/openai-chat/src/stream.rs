//! The Chat Completions streaming format: `chat.completion.chunk` objects,
//! one per `data:` event, then `data: [DONE]`.

use serde_json::Value;
use uji_sdk::{Answer, Failure, Usage};
use uji_wire_common::sse::json_values;
use uji_wire_common::{Delta, StreamParser, ended_early, numbered_calls, stream_error};

#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// Assembles a streamed Chat Completions answer.
///
/// Tolerates what compatible servers do: a first chunk with
/// `content: null`; reasoning under `reasoning_content`, `reasoning` or
/// `reasoning_text`; tool-call fragments keyed by `index` (and servers that
/// reuse index 0 for parallel calls with different ids); a usage chunk with
/// `choices: []`; extra fields; an `error` object in the stream.
#[derive(Debug, Default)]
pub struct ChatStream {
    text: String,
    reasoning: String,
    calls: Vec<PartialCall>,
    /// Position in `calls` of each streamed `index`.
    slots: Vec<(u64, usize)>,
    usage: Usage,
    finish_reason: Option<String>,
    done: bool,
    failure: Option<Failure>,
}

impl ChatStream {
    pub fn new() -> ChatStream {
        ChatStream::default()
    }

    fn chunk(&mut self, chunk: &Value, out: &mut Vec<Delta>) {
        if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
            self.failure = Some(stream_error(error));
            return;
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = map_usage(usage);
        }
        let Some(choices) = chunk.get("choices").and_then(Value::as_array) else {
            return;
        };
        for choice in choices {
            // uji asks for one choice; ignore any other.
            if choice.get("index").and_then(Value::as_u64).unwrap_or(0) != 0 {
                continue;
            }
            if let Some(delta) = choice.get("delta").or_else(|| choice.get("message")) {
                self.delta(delta, out);
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                if reason == "error" && self.failure.is_none() {
                    self.failure = Some(Failure::Provider {
                        message: "the provider ended the answer with finish_reason \"error\""
                            .into(),
                    });
                }
                self.finish_reason = Some(reason.to_string());
            }
        }
    }

    fn delta(&mut self, delta: &Value, out: &mut Vec<Delta>) {
        let reasoning = ["reasoning_content", "reasoning", "reasoning_text"]
            .iter()
            .find_map(|key| delta.get(*key).and_then(Value::as_str))
            .filter(|r| !r.is_empty());
        if let Some(reasoning) = reasoning {
            self.reasoning.push_str(reasoning);
            out.push(Delta::Reasoning(reasoning.to_string()));
        }
        match delta.get("content") {
            Some(Value::String(text)) => self.push_text(text, out),
            // Content as parts (Mistral's reasoning models): text parts, and
            // thinking parts holding text parts.
            Some(Value::Array(parts)) => {
                for part in parts {
                    match part.get("type").and_then(Value::as_str) {
                        Some("thinking") => {
                            for inner in part
                                .get("thinking")
                                .and_then(Value::as_array)
                                .into_iter()
                                .flatten()
                            {
                                if let Some(text) = inner.get("text").and_then(Value::as_str)
                                    && !text.is_empty()
                                {
                                    self.reasoning.push_str(text);
                                    out.push(Delta::Reasoning(text.to_string()));
                                }
                            }
                        }
                        _ => {
                            if let Some(text) = part.get("text").and_then(Value::as_str) {
                                self.push_text(text, out);
                            }
                        }
                    }
                }
            }
            _ => {}
        }
        if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
            for call in calls {
                self.tool_call(call);
            }
        }
    }

    fn push_text(&mut self, text: &str, out: &mut Vec<Delta>) {
        if !text.is_empty() {
            self.text.push_str(text);
            out.push(Delta::Text(text.to_string()));
        }
    }

    fn tool_call(&mut self, call: &Value) {
        let id = call.get("id").and_then(Value::as_str).unwrap_or_default();
        let function = call.get("function");
        let name = function
            .and_then(|f| f.get("name"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        let arguments = function
            .and_then(|f| f.get("arguments"))
            .and_then(|a| match a {
                Value::String(s) => Some(s.clone()),
                Value::Null => None,
                // A server that sends the arguments as an object.
                other => Some(other.to_string()),
            })
            .unwrap_or_default();
        let position = match call.get("index").and_then(Value::as_u64) {
            Some(index) => {
                match self.slots.iter().rev().find(|(i, _)| *i == index) {
                    // The same index with another id: a server that numbers
                    // every parallel call 0. A new call.
                    Some(&(_, pos))
                        if id.is_empty()
                            || self.calls[pos].id.is_empty()
                            || self.calls[pos].id == id =>
                    {
                        pos
                    }
                    _ => {
                        self.calls.push(PartialCall::default());
                        let pos = self.calls.len() - 1;
                        self.slots.push((index, pos));
                        pos
                    }
                }
            }
            // No index: a new call when it has a new id, else the last one.
            None => match self.calls.iter().rposition(|c| c.id == id) {
                Some(pos) if !id.is_empty() => pos,
                _ if id.is_empty() && !self.calls.is_empty() => self.calls.len() - 1,
                _ => {
                    self.calls.push(PartialCall::default());
                    self.calls.len() - 1
                }
            },
        };
        let slot = &mut self.calls[position];
        if slot.id.is_empty() && !id.is_empty() {
            slot.id = id.to_string();
        }
        if slot.name.is_empty() {
            slot.name = name.to_string();
        } else if !name.is_empty() && name != slot.name {
            // Some servers repeat the name on every fragment; others stream it.
            slot.name.push_str(name);
        }
        slot.arguments.push_str(&arguments);
    }
}

impl StreamParser for ChatStream {
    fn feed(&mut self, _event: &str, data: &str) -> Vec<Delta> {
        let mut out = Vec::new();
        if self.is_done() {
            return out;
        }
        if data.trim() == "[DONE]" {
            self.done = true;
            return out;
        }
        for chunk in json_values(data) {
            self.chunk(&chunk, &mut out);
        }
        out
    }

    fn is_done(&self) -> bool {
        self.done || self.failure.is_some()
    }

    fn finish(self) -> Result<Answer, Failure> {
        if let Some(failure) = self.failure {
            return Err(failure);
        }
        if !self.done && self.finish_reason.is_none() {
            return Err(ended_early());
        }
        if self.text.is_empty() && self.calls.is_empty() {
            let message = match self.finish_reason.as_deref() {
                Some("length") => "empty response (the output limit was reached first)".into(),
                Some(reason) if reason != "stop" => {
                    format!("empty response (finish_reason {reason})")
                }
                _ => "empty response".to_string(),
            };
            return Err(Failure::Provider { message });
        }
        let tool_calls = numbered_calls(
            self.calls
                .into_iter()
                .map(|call| (call.id, call.name, call.arguments)),
        );
        Ok(Answer {
            text: self.text,
            reasoning: (!self.reasoning.is_empty()).then_some(self.reasoning),
            tool_calls,
            usage: self.usage,
            replay: None,
        })
    }

    fn held_bytes(&self) -> usize {
        let calls: usize = self
            .calls
            .iter()
            .map(|c| c.id.len() + c.name.len() + c.arguments.len())
            .sum();
        self.text.len() + self.reasoning.len() + calls
    }
}

use uji_wire_common::count as number;

/// `usage` of a chunk: input excludes cached reads and writes.
pub fn map_usage(usage: &Value) -> Usage {
    let prompt = number(usage.get("prompt_tokens"));
    let details = usage.get("prompt_tokens_details");
    let mut cache_read = number(details.and_then(|d| d.get("cached_tokens")));
    if cache_read == 0 {
        // DeepSeek.
        cache_read = number(usage.get("prompt_cache_hit_tokens"));
    }
    let mut cache_write = number(details.and_then(|d| d.get("cache_write_tokens")));
    if cache_write == 0 {
        cache_write = number(usage.get("cache_creation_input_tokens"));
    }
    Usage {
        input: prompt.saturating_sub(cache_read.saturating_add(cache_write)),
        output: number(usage.get("completion_tokens")),
        cache_read,
        cache_write,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use serde_json::json;

    fn replay(sse: &str) -> (Result<Answer, Failure>, String, String) {
        uji_wire_common::testing::replay(ChatStream::new(), sse, 7)
    }

    fn fixture(name: &str) -> Option<String> {
        uji_wire_common::testing::fixture(env!("CARGO_MANIFEST_DIR"), name)
    }

    fn chunk(delta: Value) -> String {
        format!(
            "data: {}\n\n",
            json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": null}]})
        )
    }

    fn finish(reason: &str) -> String {
        format!(
            "data: {}\n\n",
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
        )
    }

    #[test]
    fn llama_cpp_tool_call_capture() {
        let Some(sse) = fixture("openai-stream-toolcall.sse") else {
            return;
        };
        let (answer, text, _) = replay(&sse);
        let answer = answer.unwrap();
        assert_eq!(text, "");
        assert_eq!(answer.tool_calls.len(), 1);
        let call = &answer.tool_calls[0];
        assert_eq!(call.name, "read_file");
        assert_eq!(call.id, "n8RbFDxm539w7VZbHowIKHqvQIYlkc8G");
        let args: Value = serde_json::from_str(&call.arguments).unwrap();
        assert_eq!(args, json!({"path": "README.md"}));
    }

    #[test]
    fn llama_cpp_text_capture_with_usage() {
        let Some(sse) = fixture("openai-stream-text.sse") else {
            return;
        };
        let (answer, text, _) = replay(&sse);
        let answer = answer.unwrap();
        assert_eq!(answer.text, "Hello, welcome to my world.");
        assert_eq!(text, answer.text);
        assert!(answer.tool_calls.is_empty());
        assert_eq!(
            answer.usage,
            Usage {
                input: 17,
                output: 8,
                cache_read: 10,
                cache_write: 0
            }
        );
    }

    #[test]
    fn crlf_capture_gives_the_same_answer() {
        let Some(sse) = fixture("openai-stream-text.sse") else {
            return;
        };
        let (answer, _, _) = replay(&sse.replace('\n', "\r\n"));
        assert_eq!(answer.unwrap().text, "Hello, welcome to my world.");
    }

    #[test]
    fn reasoning_fields_of_every_flavour() {
        let sse = [
            chunk(json!({"role": "assistant", "content": null})),
            chunk(json!({"reasoning_content": "think "})),
            chunk(json!({"reasoning": "more "})),
            chunk(json!({"reasoning_text": "done"})),
            chunk(json!({"content": "answer"})),
            finish("stop"),
            "data: [DONE]\n\n".to_string(),
        ]
        .concat();
        let (answer, text, reasoning) = replay(&sse);
        let answer = answer.unwrap();
        assert_eq!(reasoning, "think more done");
        assert_eq!(answer.reasoning.as_deref(), Some("think more done"));
        assert_eq!(text, "answer");
    }

    #[test]
    fn content_as_parts() {
        let sse = [
            chunk(json!({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "hmm"}]}]})),
            chunk(json!({"content": [{"type": "text", "text": "yes"}]})),
            finish("stop"),
        ]
        .concat();
        let (answer, text, reasoning) = replay(&sse);
        assert_eq!(answer.unwrap().text, "yes");
        assert_eq!((text.as_str(), reasoning.as_str()), ("yes", "hmm"));
    }

    #[test]
    fn parallel_calls_interleaved_by_index() {
        let sse = [
            chunk(json!({"tool_calls": [{"index": 0, "id": "a", "type": "function", "function": {"name": "read_file", "arguments": ""}}]})),
            chunk(json!({"tool_calls": [{"index": 1, "id": "b", "type": "function", "function": {"name": "run_command", "arguments": "{\"comm"}}]})),
            chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"path\":"}}]})),
            chunk(json!({"tool_calls": [{"index": 1, "function": {"arguments": "and\":\"ls\"}"}}]})),
            chunk(json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"a.txt\"}"}}]})),
            finish("tool_calls"),
        ]
        .concat();
        let (answer, _, _) = replay(&sse);
        let answer = answer.unwrap();
        let calls: Vec<(&str, &str, &str)> = answer
            .tool_calls
            .iter()
            .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
            .collect();
        assert_eq!(
            calls,
            vec![
                ("a", "read_file", "{\"path\":\"a.txt\"}"),
                ("b", "run_command", "{\"command\":\"ls\"}")
            ]
        );
    }

    #[test]
    fn servers_that_number_every_parallel_call_zero() {
        let sse = [
            chunk(json!({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "x", "arguments": "{}"}}]})),
            chunk(json!({"tool_calls": [{"index": 0, "id": "b", "function": {"name": "y", "arguments": "{}"}}]})),
            finish("tool_calls"),
        ]
        .concat();
        let answer = replay(&sse).0.unwrap();
        assert_eq!(answer.tool_calls.len(), 2);
        assert_eq!(answer.tool_calls[1].name, "y");
    }

    #[test]
    fn ending_early_empty_answers_and_errors() {
        let early = chunk(json!({"content": "partial"}));
        assert_eq!(replay(&early).0.unwrap_err(), ended_early());
        let empty = [chunk(json!({"content": ""})), finish("stop")].concat();
        assert_eq!(
            replay(&empty).0.unwrap_err(),
            Failure::Provider {
                message: "empty response".into()
            }
        );
        let error = format!(
            "data: {}\n\n",
            json!({"error": {"message": "Provider returned error", "code": 429}})
        );
        assert_eq!(
            replay(&error).0.unwrap_err(),
            Failure::Http {
                status: Some(429),
                message: "Provider returned error".into(),
                retry_after: None,
                transport: None,
            }
        );
        let bad = format!(
            "data: {}\n\n",
            json!({"error": {"message": "context too long", "type": "invalid_request_error"}})
        );
        assert!(matches!(
            replay(&bad).0.unwrap_err(),
            Failure::Provider { .. }
        ));
    }

    #[test]
    fn incomplete_tool_json_is_returned_as_is() {
        let sse = [
            chunk(json!({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "x", "arguments": "{\"path\": \"RE"}}]})),
            finish("length"),
        ]
        .concat();
        let answer = replay(&sse).0.unwrap();
        assert_eq!(answer.tool_calls[0].arguments, "{\"path\": \"RE");
    }

    #[test]
    fn garbage_between_events_is_ignored() {
        let sse = [
            ": keep-alive\n\n".to_string(),
            chunk(json!({"content": "a"})),
            "garbage line\n\ndata: {not json\n\nevent: odd\ndata: 42\n\n".to_string(),
            chunk(json!({"content": "b"})),
            finish("stop"),
            "data: [DONE]\n\n".to_string(),
        ]
        .concat();
        assert_eq!(replay(&sse).0.unwrap().text, "ab");
    }

    #[test]
    fn usage_subtracts_cached_reads_and_writes() {
        let usage = map_usage(&json!({
            "prompt_tokens": 1000, "completion_tokens": 50,
            "prompt_tokens_details": {"cached_tokens": 600, "cache_write_tokens": 300}
        }));
        assert_eq!(
            usage,
            Usage {
                input: 100,
                output: 50,
                cache_read: 600,
                cache_write: 300
            }
        );
        let deepseek = map_usage(&json!({
            "prompt_tokens": 10, "completion_tokens": 1, "prompt_cache_hit_tokens": 4
        }));
        assert_eq!(deepseek.input, 6);
        assert_eq!(deepseek.cache_read, 4);
    }

    /// Pieces of this format; the SSE and JSON basics come from wire-common.
    const PIECES: &[&str] = &[
        "\"choices\":",
        "\"tool_calls\":",
        "\"function\":",
        "\"arguments\":",
        "\"name\":",
        "\"id\":",
        "\"content\":",
        "\"reasoning_content\":",
        "\"finish_reason\":",
        "\"error\":",
        "\"code\":",
        "\"prompt_tokens\":",
        "\"prompt_tokens_details\":",
        "\"cached_tokens\":",
        "\"thinking\":",
        "\"text\":",
    ];

    /// Random streams built from pieces of the format: never a panic.
    #[test]
    fn random_input_never_panics() {
        uji_wire_common::testing::never_panics(ChatStream::new, PIECES);
    }
}
