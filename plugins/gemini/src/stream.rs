//! The Gemini streaming format with `alt=sse`: each `data:` event is a
//! whole `GenerateContentResponse` holding the next parts of the answer
//! (text, thoughts marked `thought: true`, `functionCall`s, each maybe with
//! a `thoughtSignature`), `usageMetadata`, and `finishReason` on the last.

use serde_json::{Map, Value, json};
use uji_sdk::{Answer, Failure, ToolCallRequest, Usage};
use uji_wire_common::sse::json_values;
use uji_wire_common::{Delta, StreamParser, ended_early, stream_error};

/// Assembles a streamed Gemini answer. Thought signatures are kept in
/// [`Answer::replay`] as `{"model": ..., "signatures": {"text" | "callN": sig}}`.
#[derive(Debug, Default)]
pub struct GeminiStream {
    model: String,
    text: String,
    reasoning: String,
    calls: Vec<ToolCallRequest>,
    signatures: Map<String, Value>,
    signature_bytes: usize,
    usage: Usage,
    finish_reason: Option<String>,
    failure: Option<Failure>,
}

impl GeminiStream {
    /// `model` is the model asked for: signatures are tied to it.
    pub fn new(model: &str) -> GeminiStream {
        GeminiStream {
            model: model.to_string(),
            ..GeminiStream::default()
        }
    }

    fn response(&mut self, response: &Value, out: &mut Vec<Delta>) {
        if let Some(error) = response.get("error").filter(|e| !e.is_null()) {
            self.failure = Some(stream_error(error));
            return;
        }
        if let Some(usage) = response.get("usageMetadata").filter(|u| u.is_object()) {
            self.usage = map_usage(usage);
        }
        if let Some(reason) = response
            .pointer("/promptFeedback/blockReason")
            .and_then(Value::as_str)
        {
            self.failure = Some(Failure::Provider {
                message: format!("Gemini blocked the prompt ({reason})"),
            });
            return;
        }
        // uji asks for one candidate.
        let Some(candidate) = response.pointer("/candidates/0") else {
            return;
        };
        let parts = candidate
            .pointer("/content/parts")
            .and_then(Value::as_array);
        for part in parts.into_iter().flatten() {
            self.part(part, out);
        }
        if let Some(reason) = candidate.get("finishReason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_string());
        }
    }

    fn part(&mut self, part: &Value, out: &mut Vec<Delta>) {
        let key = if let Some(call) = part.get("functionCall") {
            let index = self.calls.len();
            self.calls.push(ToolCallRequest {
                id: call
                    .get("id")
                    .and_then(Value::as_str)
                    .filter(|id| !id.is_empty())
                    .map_or_else(|| format!("call_{index}"), str::to_string),
                name: call
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                arguments: call
                    .get("args")
                    .map_or_else(|| "{}".to_string(), Value::to_string),
            });
            format!("call{index}")
        } else {
            let text = part.get("text").and_then(Value::as_str).unwrap_or("");
            if part.get("thought").and_then(Value::as_bool) == Some(true) {
                self.reasoning.push_str(text);
                out.push(Delta::Reasoning(text.to_string()));
            } else if !text.is_empty() {
                self.text.push_str(text);
                out.push(Delta::Text(text.to_string()));
            }
            "text".to_string()
        };
        if let Some(signature) = part.get("thoughtSignature").filter(|s| s.is_string()) {
            self.signature_bytes += signature.as_str().map_or(0, str::len);
            self.signatures.insert(key, signature.clone());
        }
    }
}

impl StreamParser for GeminiStream {
    fn feed(&mut self, _event: &str, data: &str) -> Vec<Delta> {
        let mut out = Vec::new();
        for value in json_values(data) {
            if self.is_done() {
                break;
            }
            self.response(&value, &mut out);
        }
        out
    }

    fn is_done(&self) -> bool {
        self.finish_reason.is_some() || self.failure.is_some()
    }

    fn finish(self) -> Result<Answer, Failure> {
        if let Some(failure) = self.failure {
            return Err(failure);
        }
        let Some(reason) = self.finish_reason else {
            return Err(ended_early());
        };
        if self.text.is_empty() && self.calls.is_empty() {
            let message = match reason.as_str() {
                "MAX_TOKENS" => "empty response (the output limit was reached first)".to_string(),
                "STOP" => "empty response".to_string(),
                other => format!("empty response (finishReason {other})"),
            };
            return Err(Failure::Provider { message });
        }
        let replay = (!self.signatures.is_empty())
            .then(|| json!({"model": self.model, "signatures": self.signatures}));
        Ok(Answer {
            text: self.text,
            reasoning: (!self.reasoning.is_empty()).then_some(self.reasoning),
            tool_calls: self.calls,
            usage: self.usage,
            replay,
        })
    }

    fn held_bytes(&self) -> usize {
        let calls: usize = self
            .calls
            .iter()
            .map(|c| c.name.len() + c.arguments.len())
            .sum();
        self.text.len() + self.reasoning.len() + self.signature_bytes + calls
    }
}

use uji_wire_common::count as number;

/// `usageMetadata`: input excludes cached tokens; thoughts count as output.
pub fn map_usage(usage: &Value) -> Usage {
    let prompt = number(usage.get("promptTokenCount"));
    let cached = number(usage.get("cachedContentTokenCount"));
    Usage {
        input: prompt.saturating_sub(cached),
        output: number(usage.get("candidatesTokenCount"))
            .saturating_add(number(usage.get("thoughtsTokenCount"))),
        cache_read: cached,
        cache_write: 0,
    }
}
