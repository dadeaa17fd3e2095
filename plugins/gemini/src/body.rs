//! uji's request as a Gemini `streamGenerateContent` request.
//!
//! Gemini answers function calls without ids and pairs results with calls
//! by name and order, so uji's call ids stay on uji's side. A thinking
//! model signs its function calls (`thoughtSignature`); the signatures are
//! kept in the answer's `replay` and sent back on the same parts, to the
//! same model only.

use serde_json::{Map, Value, json};
use uji_sdk::protocol::wire::WireTool;
use uji_sdk::{Image, Message, WireRequest};
use uji_wire_common::HttpRequest;

/// Used when the provider has no base URL.
pub const DEFAULT_BASE_URL: &str = "https://generativelanguage.googleapis.com/v1beta";

/// `<base_url>/models/<model>:streamGenerateContent?alt=sse`.
pub fn url(base_url: &str, model: &str) -> String {
    let base = base_url.trim().trim_end_matches('/');
    let base = if base.is_empty() {
        DEFAULT_BASE_URL
    } else {
        base
    };
    let model = model.trim_start_matches("models/");
    format!("{base}/models/{model}:streamGenerateContent?alt=sse")
}

/// The HTTP request; the key goes only into the `x-goog-api-key` header.
pub fn http_request(request: WireRequest) -> HttpRequest {
    let body = body(&request);
    let mut http = HttpRequest::post(url(&request.provider.base_url, &request.model))
        .idle_timeout_secs(request.idle_timeout);
    if let Some(key) = request
        .auth
        .key
        .as_deref()
        .map(str::trim)
        .filter(|k| !k.is_empty())
    {
        http = http.header("x-goog-api-key", key);
    }
    drop(request);
    http.with_json(&body)
}

/// Thinking budgets for uji's effort levels (tokens; -1 lets the model pick).
fn thinking_budget(effort: &str) -> i64 {
    match effort {
        "minimal" => 512,
        "low" => 2_048,
        "medium" => 8_192,
        "high" => 24_576,
        "xhigh" | "max" => 32_768,
        _ => -1,
    }
}

/// Gemini 3 and later take a thinking level instead of a budget; a model
/// id without a version (a proxy's name) is taken to be a new one.
fn takes_thinking_level(model: &str) -> bool {
    let major = model
        .split(['-', '.', '/'])
        .find_map(|part| part.parse::<u32>().ok());
    major.is_none_or(|major| major >= 3)
}

/// The thinking levels Gemini 3 takes (`minimal` is refused by some).
fn thinking_level(effort: &str) -> &'static str {
    match effort {
        "minimal" | "low" => "low",
        "medium" => "medium",
        _ => "high",
    }
}

/// `thinkingConfig` for an effort, in the model's form.
fn thinking_config(model: &str, effort: &str) -> Value {
    if takes_thinking_level(model) {
        json!({"includeThoughts": true, "thinkingLevel": thinking_level(effort)})
    } else {
        json!({"includeThoughts": true, "thinkingBudget": thinking_budget(effort)})
    }
}

/// The JSON body.
pub fn body(request: &WireRequest) -> Value {
    let mut body = Map::new();
    if !request.system.is_empty() {
        body.insert(
            "systemInstruction".into(),
            json!({"parts": [{"text": request.system}]}),
        );
    }
    body.insert("contents".into(), Value::Array(contents(request)));
    if !request.tools.is_empty() {
        let declarations: Vec<Value> = request.tools.iter().map(tool).collect();
        body.insert(
            "tools".into(),
            json!([{"functionDeclarations": declarations}]),
        );
    }
    let mut config = Map::new();
    if let Some(max) = request.max_output {
        config.insert("maxOutputTokens".into(), json!(max));
    }
    if let Some(effort) = request
        .effort
        .as_deref()
        .filter(|e| !e.is_empty() && *e != "off")
    {
        config.insert(
            "thinkingConfig".into(),
            thinking_config(&request.model, effort),
        );
    }
    if !config.is_empty() {
        body.insert("generationConfig".into(), Value::Object(config));
    }
    Value::Object(body)
}

fn tool(tool: &WireTool) -> Value {
    json!({
        "name": tool.name,
        "description": tool.description,
        "parameters": uji_wire_common::object_schema(&tool.parameters),
    })
}

fn image(image: &Image) -> Value {
    json!({"inlineData": {"mimeType": image.media_type, "data": image.data}})
}

/// The signatures of `replay`, one per part, when `model` wrote them.
fn signatures<'a>(replay: Option<&'a Value>, model: &str) -> Option<&'a Map<String, Value>> {
    replay
        .filter(|r| r.get("model").and_then(Value::as_str) == Some(model))
        .and_then(|r| r.get("signatures"))
        .and_then(Value::as_object)
}

/// The conversation as contents: `user` and `model` turns; tool results
/// are `functionResponse` parts of a user turn, one turn per run of them.
pub fn contents(request: &WireRequest) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::with_capacity(request.messages.len());
    let mut results: Vec<Value> = Vec::new();
    for message in &request.messages {
        if !matches!(message, Message::Tool { .. }) && !results.is_empty() {
            out.push(json!({"role": "user", "parts": std::mem::take(&mut results)}));
        }
        match message {
            Message::User { text, images } => {
                let mut parts = Vec::with_capacity(images.len() + 1);
                if !text.is_empty() || images.is_empty() {
                    parts.push(json!({"text": text}));
                }
                parts.extend(images.iter().map(image));
                out.push(json!({"role": "user", "parts": parts}));
            }
            Message::Assistant {
                text,
                tool_calls,
                replay,
                ..
            } => {
                let signed = signatures(replay.as_ref(), &request.model);
                let sign = |mut part: Value, key: String| {
                    if let Some(sig) = signed.and_then(|s| s.get(&key)) {
                        part["thoughtSignature"] = sig.clone();
                    }
                    part
                };
                let mut parts = Vec::with_capacity(tool_calls.len() + 1);
                if !text.is_empty() {
                    parts.push(sign(json!({"text": text}), "text".into()));
                }
                for (i, call) in tool_calls.iter().enumerate() {
                    let args: Value =
                        serde_json::from_str(&call.arguments).unwrap_or_else(|_| json!({}));
                    parts.push(sign(
                        json!({"functionCall": {"name": call.name, "args": args}}),
                        format!("call{i}"),
                    ));
                }
                if !parts.is_empty() {
                    out.push(json!({"role": "model", "parts": parts}));
                }
            }
            Message::Tool {
                name,
                content,
                images,
                ..
            } => {
                results.push(
                    json!({"functionResponse": {"name": name, "response": {"content": content}}}),
                );
                results.extend(images.iter().map(image));
            }
        }
    }
    if !results.is_empty() {
        out.push(json!({"role": "user", "parts": results}));
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn gemini_2_takes_a_budget_and_gemini_3_on_a_level() {
        assert_eq!(
            super::thinking_config("gemini-2.5-flash", "high"),
            json!({"includeThoughts": true, "thinkingBudget": 24_576})
        );
        for model in [
            "gemini-3.8-flash",
            "gemini-4-carbon",
            "gemini-3.1-pro-preview",
            "proxy",
        ] {
            assert_eq!(
                super::thinking_config(model, "minimal"),
                json!({"includeThoughts": true, "thinkingLevel": "low"}),
                "{model}"
            );
        }
        assert_eq!(super::thinking_level("max"), "high");
    }
}
