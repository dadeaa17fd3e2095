//! Responses API streams as its reference documents them: every event has
//! `event: <type>` and a JSON `data:` with the same `type` and a
//! `sequence_number`; `response.created` first; output items announced by
//! `response.output_item.added` and closed by `response.output_item.done`
//! (reasoning items carry `encrypted_content` when it was included);
//! `response.output_text.delta`, `response.reasoning_summary_text.delta` and
//! `response.function_call_arguments.delta` pieces; `response.completed`
//! with the usage last, and no `[DONE]`.

use serde_json::{Value, json};

use crate::split;

/// Builds a streamed response.
#[derive(Debug, Clone)]
pub struct ResponsesEvents {
    model: String,
    frames: Vec<String>,
    sequence: u64,
    items: u64,
    usage: Value,
}

impl ResponsesEvents {
    /// Starts with `response.created` and `response.in_progress`.
    pub fn new(model: &str) -> ResponsesEvents {
        let mut events = ResponsesEvents {
            model: model.to_string(),
            frames: Vec::new(),
            sequence: 0,
            items: 0,
            usage: Value::Null,
        };
        let response = events.response("in_progress");
        events.push("response.created", json!({"response": response}));
        let response = events.response("in_progress");
        events.push("response.in_progress", json!({"response": response}));
        events
    }

    fn response(&self, status: &str) -> Value {
        json!({
            "id": "resp_fake0001", "object": "response", "status": status,
            "model": self.model, "output": [], "usage": self.usage,
        })
    }

    /// Any event: `type` and `sequence_number` are added to `data`.
    pub fn push(&mut self, kind: &str, mut data: Value) -> &mut Self {
        if let Some(map) = data.as_object_mut() {
            map.insert("type".into(), json!(kind));
            map.insert("sequence_number".into(), json!(self.sequence));
        }
        self.sequence += 1;
        self.frames
            .push(crate::frame(Some(kind), &data.to_string()));
        self
    }

    fn next_item(&mut self) -> (u64, String) {
        self.items += 1;
        (self.items - 1, format!("item_{}", self.items))
    }

    /// A message item whose text arrives in `pieces` deltas.
    pub fn text(mut self, text: &str, pieces: usize) -> Self {
        let (index, id) = self.next_item();
        let empty = json!({"type": "message", "id": id, "role": "assistant", "status": "in_progress", "content": []});
        self.push(
            "response.output_item.added",
            json!({"output_index": index, "item": empty}),
        );
        for piece in split(text, pieces) {
            self.push(
                "response.output_text.delta",
                json!({"item_id": id, "output_index": index, "content_index": 0, "delta": piece}),
            );
        }
        let done = json!({"type": "message", "id": id, "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]});
        self.push(
            "response.output_item.done",
            json!({"output_index": index, "item": done}),
        );
        self
    }

    /// A reasoning item: its summary in `pieces` deltas, then the item with
    /// `encrypted_content`.
    pub fn reasoning(mut self, summary: &str, encrypted: &str, pieces: usize) -> Self {
        let (index, id) = self.next_item();
        self.push(
            "response.output_item.added",
            json!({"output_index": index, "item": {"type": "reasoning", "id": id, "summary": []}}),
        );
        for piece in split(summary, pieces) {
            self.push(
                "response.reasoning_summary_text.delta",
                json!({"item_id": id, "output_index": index, "summary_index": 0, "delta": piece}),
            );
        }
        let item = json!({"type": "reasoning", "id": id,
            "summary": [{"type": "summary_text", "text": summary}], "encrypted_content": encrypted});
        self.push(
            "response.output_item.done",
            json!({"output_index": index, "item": item}),
        );
        self
    }

    /// Function calls, announced together and their arguments interleaved
    /// in `pieces` deltas each, as parallel calls stream.
    pub fn function_calls(mut self, calls: &[(&str, &str, &str)], pieces: usize) -> Self {
        let mut open = Vec::new();
        for (call_id, name, _) in calls {
            let (index, id) = self.next_item();
            let item = json!({"type": "function_call", "id": id, "call_id": call_id, "name": name,
                "arguments": "", "status": "in_progress"});
            self.push(
                "response.output_item.added",
                json!({"output_index": index, "item": item}),
            );
            open.push((index, id));
        }
        let split_args: Vec<Vec<String>> = calls.iter().map(|c| split(c.2, pieces)).collect();
        for round in 0..pieces.max(1) {
            for ((index, id), parts) in open.iter().zip(&split_args) {
                if let Some(piece) = parts.get(round) {
                    self.push(
                        "response.function_call_arguments.delta",
                        json!({"item_id": id, "output_index": index, "delta": piece}),
                    );
                }
            }
        }
        for ((index, id), (call_id, name, args)) in open.iter().zip(calls) {
            self.push(
                "response.function_call_arguments.done",
                json!({"item_id": id, "output_index": index, "arguments": args}),
            );
            let item = json!({"type": "function_call", "id": id, "call_id": call_id, "name": name,
                "arguments": args, "status": "completed"});
            self.push(
                "response.output_item.done",
                json!({"output_index": index, "item": item}),
            );
        }
        self
    }

    /// The usage `response.completed` reports.
    pub fn usage(mut self, input: u64, output: u64, cached: u64) -> Self {
        self.usage = json!({"input_tokens": input, "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": output, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": input + output});
        self
    }

    /// The events so far, without an ending (a stream cut short).
    pub fn unfinished(self) -> Vec<String> {
        self.frames
    }

    /// Ends with `response.completed`.
    pub fn completed(mut self) -> Vec<String> {
        let response = self.response("completed");
        self.push("response.completed", json!({"response": response}));
        self.frames
    }

    /// Ends with `response.failed` carrying `code` and `message`.
    pub fn failed(mut self, code: &str, message: &str) -> Vec<String> {
        let mut response = self.response("failed");
        response["error"] = json!({"code": code, "message": message});
        self.push("response.failed", json!({"response": response}));
        self.frames
    }
}
