//! uji's request as a Responses API request.
//!
//! Requests are stateless (`store: false`): the whole conversation is sent
//! each time, and a reasoning model's encrypted reasoning items (kept in the
//! answer's `replay`) go back before the calls they led to, but only to the
//! model that wrote them, as no other can read them.

use serde_json::{Map, Value, json};
use uji_sdk::protocol::wire::WireTool;
use uji_sdk::{Image, Message, WireRequest};
use uji_wire_common::HttpRequest;

/// Used when the provider has no base URL.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// `<base_url>/responses`.
pub fn url(base_url: &str) -> String {
    uji_wire_common::endpoint(base_url, DEFAULT_BASE_URL, "responses")
}

/// The HTTP request; the key goes only into the `Authorization` header.
pub fn http_request(request: WireRequest) -> HttpRequest {
    uji_wire_common::bearer_json_request(url(&request.provider.base_url), request, body)
}

/// The effort to send, when there is one (`off` sends none).
fn effort(request: &WireRequest) -> Option<&str> {
    request
        .effort
        .as_deref()
        .filter(|e| !e.is_empty() && *e != "off")
}

/// The JSON body.
pub fn body(request: &WireRequest) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    if !request.system.is_empty() {
        body.insert("instructions".into(), json!(request.system));
    }
    body.insert("input".into(), Value::Array(input(request)));
    if !request.tools.is_empty() {
        body.insert(
            "tools".into(),
            Value::Array(request.tools.iter().map(tool).collect()),
        );
    }
    body.insert("stream".into(), json!(true));
    body.insert("store".into(), json!(false));
    if let Some(max) = request.max_output {
        body.insert("max_output_tokens".into(), json!(max));
    }
    // Only reasoning models take these; the effort says it is one.
    if let Some(effort) = effort(request) {
        body.insert(
            "reasoning".into(),
            json!({"effort": effort, "summary": "auto"}),
        );
        body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    }
    if let Some(session) = request.session.as_deref().filter(|s| !s.is_empty()) {
        body.insert("prompt_cache_key".into(), json!(session));
    }
    Value::Object(body)
}

fn tool(tool: &WireTool) -> Value {
    let parameters = uji_wire_common::object_schema(&tool.parameters);
    json!({
        "type": "function",
        "name": tool.name,
        "description": tool.description,
        "parameters": parameters,
    })
}

fn image(image: &Image) -> Value {
    json!({
        "type": "input_image",
        "image_url": format!("data:{};base64,{}", image.media_type, image.data),
    })
}

/// The reasoning items of `replay` when they were written by `model`.
fn replayed<'a>(replay: Option<&'a Value>, model: &str) -> &'a [Value] {
    replay
        .filter(|r| r.get("model").and_then(Value::as_str) == Some(model))
        .and_then(|r| r.get("items"))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// The conversation as input items. Tool outputs carry text only, so the
/// images of a run of tool results follow it in one user message.
pub fn input(request: &WireRequest) -> Vec<Value> {
    let mut out = Vec::with_capacity(request.messages.len() + 1);
    let mut pending_images: Vec<Value> = Vec::new();
    for message in &request.messages {
        if !matches!(message, Message::Tool { .. }) && !pending_images.is_empty() {
            out.push(json!({"role": "user", "content": std::mem::take(&mut pending_images)}));
        }
        match message {
            Message::User { text, images } => {
                let mut parts = Vec::with_capacity(images.len() + 1);
                if !text.is_empty() || images.is_empty() {
                    parts.push(json!({"type": "input_text", "text": text}));
                }
                parts.extend(images.iter().map(image));
                out.push(json!({"role": "user", "content": parts}));
            }
            Message::Assistant {
                text,
                tool_calls,
                replay,
                ..
            } => {
                out.extend(replayed(replay.as_ref(), &request.model).iter().cloned());
                if !text.is_empty() {
                    out.push(json!({
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": text}],
                    }));
                }
                out.extend(tool_calls.iter().map(|call| {
                    json!({
                        "type": "function_call",
                        "call_id": call.id,
                        "name": call.name,
                        "arguments": call.arguments,
                    })
                }));
            }
            Message::Tool {
                tool_call_id,
                name,
                content,
                images,
            } => {
                out.push(json!({
                    "type": "function_call_output",
                    "call_id": tool_call_id,
                    "output": content,
                }));
                if !images.is_empty() {
                    pending_images.push(json!({
                        "type": "input_text",
                        "text": format!("The images returned by the {name} tool call {tool_call_id}:"),
                    }));
                    pending_images.extend(images.iter().map(image));
                }
            }
        }
    }
    if !pending_images.is_empty() {
        out.push(json!({"role": "user", "content": pending_images}));
    }
    out
}
