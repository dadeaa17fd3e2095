//! The Responses API streaming format: one JSON event per `data:` line,
//! typed by its `type` (also the `event:` name); the stream ends with
//! `response.completed`, `response.incomplete` or `response.failed`, with no
//! `[DONE]`.

use serde_json::{Value, json};
use uji_sdk::{Answer, Failure, Usage};
use uji_wire_common::sse::json_values;
use uji_wire_common::{Delta, StreamParser, ended_early, numbered_calls, stream_error};

#[derive(Debug, Default)]
struct Call {
    /// The output item's id, which argument deltas name.
    item_id: String,
    call_id: String,
    name: String,
    arguments: String,
}

/// Assembles a streamed Responses answer. Reasoning items (with their
/// encrypted content) are kept in [`Answer::replay`] as
/// `{"model": ..., "items": [...]}`, to go back to the same model.
#[derive(Debug, Default)]
pub struct ResponsesStream {
    model: String,
    text: String,
    reasoning: String,
    calls: Vec<Call>,
    reasoning_items: Vec<Value>,
    /// Bytes of the reasoning items kept, for the answer cap.
    item_bytes: usize,
    usage: Usage,
    /// Why the answer stopped early (`response.incomplete`).
    incomplete: Option<String>,
    done: bool,
    failure: Option<Failure>,
}

impl ResponsesStream {
    /// `model` is the model asked for: replayed reasoning is tied to it.
    pub fn new(model: &str) -> ResponsesStream {
        ResponsesStream {
            model: model.to_string(),
            ..ResponsesStream::default()
        }
    }

    fn event(&mut self, kind: &str, event: &Value, out: &mut Vec<Delta>) {
        let delta = || event.get("delta").and_then(Value::as_str).unwrap_or("");
        match kind {
            "response.output_text.delta" | "response.refusal.delta" => {
                self.text.push_str(delta());
                out.push(Delta::Text(delta().to_string()));
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                self.reasoning.push_str(delta());
                out.push(Delta::Reasoning(delta().to_string()));
            }
            "response.reasoning_summary_part.added" => self.separate_summaries(event, out),
            "response.output_item.added" => self.item_added(event),
            "response.function_call_arguments.delta" => {
                if let Some(call) = self.call_of(event) {
                    call.arguments.push_str(delta());
                }
            }
            "response.function_call_arguments.done" => {
                let whole = event.get("arguments").and_then(Value::as_str);
                if let (Some(call), Some(whole)) = (self.call_of(event), whole) {
                    call.arguments = whole.to_string();
                }
            }
            "response.output_item.done" => self.item_done(event),
            "response.completed" => self.completed(event),
            "response.incomplete" => {
                let response = event.get("response");
                self.incomplete = Some(
                    response
                        .and_then(|r| r.pointer("/incomplete_details/reason"))
                        .and_then(Value::as_str)
                        .unwrap_or("unknown")
                        .to_string(),
                );
                self.completed(event);
            }
            "response.failed" => {
                let error = event.pointer("/response/error").cloned();
                self.failure = Some(match error.filter(|e| !e.is_null()) {
                    Some(error) => stream_error(&error),
                    None => Failure::Provider {
                        message: "the response failed without saying why".into(),
                    },
                });
            }
            "error" => self.failure = Some(stream_error(event.get("error").unwrap_or(event))),
            _ => {}
        }
    }

    /// A second summary part starts on a new paragraph.
    fn separate_summaries(&mut self, event: &Value, out: &mut Vec<Delta>) {
        let index = event.get("summary_index").and_then(Value::as_u64);
        if index.is_some_and(|i| i > 0) && !self.reasoning.is_empty() {
            self.reasoning.push_str("\n\n");
            out.push(Delta::Reasoning("\n\n".into()));
        }
    }

    fn item_added(&mut self, event: &Value) {
        let Some(item) = event.get("item") else {
            return;
        };
        if item.get("type").and_then(Value::as_str) != Some("function_call") {
            return;
        }
        let text = |key: &str| {
            item.get(key)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        self.calls.push(Call {
            item_id: text("id"),
            call_id: text("call_id"),
            name: text("name"),
            arguments: text("arguments"),
        });
    }

    /// The call an event's `item_id` names; the last one when it names none.
    fn call_of(&mut self, event: &Value) -> Option<&mut Call> {
        let id = event.get("item_id").and_then(Value::as_str).unwrap_or("");
        match self
            .calls
            .iter()
            .rposition(|c| !id.is_empty() && c.item_id == id)
        {
            Some(pos) => self.calls.get_mut(pos),
            None => self.calls.last_mut(),
        }
    }

    fn item_done(&mut self, event: &Value) {
        let Some(item) = event.get("item") else {
            return;
        };
        match item.get("type").and_then(Value::as_str) {
            Some("reasoning") => {
                // Only what the API takes back as input.
                let kept = json!({
                    "type": "reasoning",
                    "id": item.get("id").cloned().unwrap_or(Value::Null),
                    "summary": item.get("summary").cloned().unwrap_or_else(|| json!([])),
                    "encrypted_content": item.get("encrypted_content").cloned().unwrap_or(Value::Null),
                });
                self.item_bytes += kept.to_string().len();
                self.reasoning_items.push(kept);
            }
            Some("function_call") => {
                let whole = |key: &str| {
                    item.get(key)
                        .and_then(Value::as_str)
                        .filter(|v| !v.is_empty())
                };
                let id = item
                    .get("id")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                let position = self.calls.iter().position(|c| c.item_id == id);
                let call = match position {
                    Some(pos) => &mut self.calls[pos],
                    None => {
                        self.calls.push(Call {
                            item_id: id,
                            ..Call::default()
                        });
                        let last = self.calls.len() - 1;
                        &mut self.calls[last]
                    }
                };
                if let Some(v) = whole("call_id") {
                    call.call_id = v.to_string();
                }
                if let Some(v) = whole("name") {
                    call.name = v.to_string();
                }
                if let Some(v) = whole("arguments") {
                    call.arguments = v.to_string();
                }
            }
            _ => {}
        }
    }

    fn completed(&mut self, event: &Value) {
        if let Some(usage) = event.pointer("/response/usage").filter(|u| u.is_object()) {
            self.usage = map_usage(usage);
        }
        self.done = true;
    }
}

impl StreamParser for ResponsesStream {
    fn feed(&mut self, event: &str, data: &str) -> Vec<Delta> {
        let mut out = Vec::new();
        for value in json_values(data) {
            if self.is_done() {
                break;
            }
            let kind = value
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or(event)
                .to_string();
            self.event(&kind, &value, &mut out);
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
        if !self.done {
            return Err(ended_early());
        }
        if self.text.is_empty() && self.calls.is_empty() {
            let message = match self.incomplete.as_deref() {
                Some("max_output_tokens") => {
                    "empty response (the output limit was reached first)".to_string()
                }
                Some(reason) => format!("empty response (incomplete: {reason})"),
                None => "empty response".to_string(),
            };
            return Err(Failure::Provider { message });
        }
        let tool_calls = numbered_calls(
            self.calls
                .into_iter()
                .map(|call| (call.call_id, call.name, call.arguments)),
        );
        let replay = (!self.reasoning_items.is_empty())
            .then(|| json!({"model": self.model, "items": self.reasoning_items}));
        Ok(Answer {
            text: self.text,
            reasoning: (!self.reasoning.is_empty()).then_some(self.reasoning),
            tool_calls,
            usage: self.usage,
            replay,
        })
    }

    fn held_bytes(&self) -> usize {
        let calls: usize = self
            .calls
            .iter()
            .map(|c| c.call_id.len() + c.name.len() + c.arguments.len())
            .sum();
        self.text.len() + self.reasoning.len() + self.item_bytes + calls
    }
}

use uji_wire_common::count as number;

/// The response's `usage`: input excludes cached reads.
pub fn map_usage(usage: &Value) -> Usage {
    let input = number(usage.get("input_tokens"));
    let cache_read = number(usage.pointer("/input_tokens_details/cached_tokens"));
    Usage {
        input: input.saturating_sub(cache_read),
        output: number(usage.get("output_tokens")),
        cache_read,
        cache_write: 0,
    }
}
