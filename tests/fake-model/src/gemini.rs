//! Gemini `streamGenerateContent?alt=sse` streams as its reference
//! documents them: `data:` events without names, each a whole
//! `GenerateContentResponse` with the next parts of the one candidate
//! (`text`, thoughts with `thought: true`, `functionCall` with `name` and
//! `args` as an object, a `thoughtSignature` on signed parts), the usage so
//! far in `usageMetadata`, and `finishReason` on the last event. The stream
//! simply ends; there is no `[DONE]`.

use serde_json::{Value, json};

use crate::split;

/// Builds a streamed Gemini answer.
#[derive(Debug, Clone, Default)]
pub struct GeminiEvents {
    model: String,
    frames: Vec<String>,
    usage: Value,
}

impl GeminiEvents {
    pub fn new(model: &str) -> GeminiEvents {
        GeminiEvents {
            model: model.to_string(),
            ..GeminiEvents::default()
        }
    }

    /// One response event with these parts (and `finish`, when given).
    pub fn parts(mut self, parts: Value, finish: Option<&str>) -> Self {
        let mut candidate = json!({"content": {"role": "model", "parts": parts}, "index": 0});
        if let Some(reason) = finish {
            candidate["finishReason"] = json!(reason);
        }
        let response = json!({"candidates": [candidate], "usageMetadata": self.usage,
            "modelVersion": self.model, "responseId": "fake-gemini-1"});
        self.frames.push(crate::frame(None, &response.to_string()));
        self
    }

    /// Text in `pieces` events.
    pub fn text(self, text: &str, pieces: usize) -> Self {
        split(text, pieces).into_iter().fold(self, |events, piece| {
            events.parts(json!([{"text": piece}]), None)
        })
    }

    /// A thought summary in `pieces` events.
    pub fn thought(self, text: &str, pieces: usize) -> Self {
        split(text, pieces).into_iter().fold(self, |events, piece| {
            events.parts(json!([{"text": piece, "thought": true}]), None)
        })
    }

    /// Function calls in one event, as parallel calls arrive; the first is
    /// signed with `signature`.
    pub fn function_calls(self, calls: &[(&str, Value)], signature: &str) -> Self {
        let parts: Vec<Value> = calls
            .iter()
            .enumerate()
            .map(|(i, (name, args))| {
                let mut part = json!({"functionCall": {"name": name, "args": args}});
                if i == 0 {
                    part["thoughtSignature"] = json!(signature);
                }
                part
            })
            .collect();
        self.parts(Value::Array(parts), None)
    }

    /// The usage reported from now on.
    pub fn usage(mut self, prompt: u64, candidates: u64, cached: u64, thoughts: u64) -> Self {
        self.usage = json!({"promptTokenCount": prompt, "candidatesTokenCount": candidates,
            "cachedContentTokenCount": cached, "thoughtsTokenCount": thoughts,
            "totalTokenCount": prompt + candidates + thoughts});
        self
    }

    /// The events so far, without a finish (a stream cut short).
    pub fn unfinished(self) -> Vec<String> {
        self.frames
    }

    /// Ends with an event holding `finishReason` (and the usage).
    pub fn finish(self, reason: &str) -> Vec<String> {
        self.parts(json!([{"text": ""}]), Some(reason)).frames
    }
}
