//! uji's request as a Chat Completions request.

use serde_json::{Map, Value, json};
use uji_sdk::protocol::wire::WireTool;
use uji_sdk::{Image, Message, WireRequest};
use uji_wire_common::HttpRequest;

/// Used when the provider has no base URL.
pub const DEFAULT_BASE_URL: &str = "https://api.openai.com/v1";

/// `<base_url>/chat/completions`.
pub fn url(base_url: &str) -> String {
    uji_wire_common::endpoint(base_url, DEFAULT_BASE_URL, "chat/completions")
}

/// The HTTP request for a wire request. The key goes only into the
/// `Authorization` header, and only when there is one (Ollama needs none).
pub fn http_request(request: WireRequest) -> HttpRequest {
    uji_wire_common::bearer_json_request(url(&request.provider.base_url), request, body)
}

fn data_url(image: &Image) -> Value {
    json!({
        "type": "image_url",
        "image_url": {"url": format!("data:{};base64,{}", image.media_type, image.data)}
    })
}

/// The JSON body.
pub fn body(request: &WireRequest) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));
    body.insert("messages".into(), Value::Array(messages(request)));
    if !request.tools.is_empty() {
        body.insert(
            "tools".into(),
            Value::Array(request.tools.iter().map(tool).collect()),
        );
    }
    body.insert("stream".into(), json!(true));
    body.insert("stream_options".into(), json!({"include_usage": true}));
    if let Some(max) = request.max_output {
        body.insert("max_tokens".into(), json!(max));
    }
    if let Some(effort) = request.effort.as_deref()
        && !effort.is_empty()
        && effort != "off"
    {
        body.insert("reasoning_effort".into(), json!(effort));
    }
    if let Some(session) = request.session.as_deref()
        && !session.is_empty()
    {
        body.insert("prompt_cache_key".into(), json!(session));
    }
    Value::Object(body)
}

fn tool(tool: &WireTool) -> Value {
    let parameters = uji_wire_common::object_schema(&tool.parameters);
    json!({
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": parameters,
        }
    })
}

/// System first, then the conversation. Tool messages cannot carry images,
/// so the images of a run of tool results follow it in one user message.
pub fn messages(request: &WireRequest) -> Vec<Value> {
    let mut out = Vec::with_capacity(request.messages.len() + 2);
    if !request.system.is_empty() {
        out.push(json!({"role": "system", "content": request.system}));
    }
    let mut pending_images: Vec<Value> = Vec::new();
    for message in &request.messages {
        if !matches!(message, Message::Tool { .. }) && !pending_images.is_empty() {
            out.push(json!({"role": "user", "content": std::mem::take(&mut pending_images)}));
        }
        match message {
            Message::User { text, images } => {
                if images.is_empty() {
                    out.push(json!({"role": "user", "content": text}));
                } else {
                    let mut parts = Vec::with_capacity(images.len() + 1);
                    if !text.is_empty() {
                        parts.push(json!({"type": "text", "text": text}));
                    }
                    parts.extend(images.iter().map(data_url));
                    out.push(json!({"role": "user", "content": parts}));
                }
            }
            Message::Assistant {
                text, tool_calls, ..
            } => {
                let mut message = Map::new();
                message.insert("role".into(), json!("assistant"));
                if tool_calls.is_empty() {
                    message.insert("content".into(), json!(text));
                } else {
                    let content = if text.is_empty() {
                        Value::Null
                    } else {
                        json!(text)
                    };
                    message.insert("content".into(), content);
                    let calls: Vec<Value> = tool_calls
                        .iter()
                        .map(|call| {
                            json!({
                                "id": call.id,
                                "type": "function",
                                "function": {"name": call.name, "arguments": call.arguments},
                            })
                        })
                        .collect();
                    message.insert("tool_calls".into(), Value::Array(calls));
                }
                out.push(Value::Object(message));
            }
            Message::Tool {
                tool_call_id,
                name,
                content,
                images,
            } => {
                out.push(json!({"role": "tool", "tool_call_id": tool_call_id, "content": content}));
                if !images.is_empty() {
                    let noun = if images.len() == 1 { "image" } else { "images" };
                    pending_images.push(json!({
                        "type": "text",
                        "text": format!("The {noun} returned by the {name} tool call {tool_call_id}:"),
                    }));
                    pending_images.extend(images.iter().map(data_url));
                }
            }
        }
    }
    if !pending_images.is_empty() {
        out.push(json!({"role": "user", "content": pending_images}));
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use uji_sdk::ToolCallRequest;
    use uji_sdk::protocol::wire::{Auth, ProviderInfo};

    use super::*;

    fn image(data: &str) -> Image {
        Image {
            media_type: "image/png".into(),
            data: data.into(),
            name: None,
        }
    }

    fn request() -> WireRequest {
        WireRequest {
            model: "m".into(),
            system: "be brief".into(),
            messages: vec![
                Message::User {
                    text: "look".into(),
                    images: vec![image("AAAA")],
                },
                Message::Assistant {
                    text: String::new(),
                    reasoning: Some("hmm".into()),
                    tool_calls: vec![
                        ToolCallRequest {
                            id: "c1".into(),
                            name: "read_file".into(),
                            arguments: "{\"path\":\"a.png\"}".into(),
                        },
                        ToolCallRequest {
                            id: "c2".into(),
                            name: "read_file".into(),
                            arguments: "{\"path\":\"b\"}".into(),
                        },
                    ],
                    replay: None,
                },
                Message::Tool {
                    tool_call_id: "c1".into(),
                    name: "read_file".into(),
                    content: "an image".into(),
                    images: vec![image("BBBB")],
                },
                Message::Tool {
                    tool_call_id: "c2".into(),
                    name: "read_file".into(),
                    content: "text".into(),
                    images: vec![],
                },
                Message::User {
                    text: "thanks".into(),
                    images: vec![],
                },
            ],
            tools: vec![WireTool {
                name: "read_file".into(),
                description: "Reads".into(),
                parameters: json!({"type": "object"}),
            }],
            effort: Some("high".into()),
            max_output: Some(1000),
            cache: None,
            session: Some("s-1".into()),
            provider: ProviderInfo {
                id: "openai".into(),
                base_url: "http://x/v1/".into(),
            },
            auth: Auth { key: None },
            idle_timeout: None,
        }
    }

    #[test]
    fn body_has_everything_in_place() {
        let body = body(&request());
        let messages = body["messages"].as_array().unwrap();
        let roles: Vec<&str> = messages
            .iter()
            .map(|m| m["role"].as_str().unwrap())
            .collect();
        assert_eq!(
            roles,
            [
                "system",
                "user",
                "assistant",
                "tool",
                "tool",
                "user",
                "user"
            ]
        );
        assert_eq!(
            messages[1]["content"][1]["image_url"]["url"],
            "data:image/png;base64,AAAA"
        );
        assert_eq!(messages[2]["content"], Value::Null);
        assert_eq!(messages[2]["tool_calls"][1]["id"], "c2");
        assert!(messages[2].get("reasoning_content").is_none());
        assert_eq!(messages[3]["tool_call_id"], "c1");
        // The images of the tool results come right after the tool messages.
        assert_eq!(
            messages[5]["content"][1]["image_url"]["url"],
            "data:image/png;base64,BBBB"
        );
        assert_eq!(messages[6]["content"], "thanks");
        assert_eq!(body["tools"][0]["function"]["name"], "read_file");
        assert_eq!(body["stream_options"]["include_usage"], true);
        assert_eq!(body["max_tokens"], 1000);
        assert_eq!(body["reasoning_effort"], "high");
        assert_eq!(body["prompt_cache_key"], "s-1");
    }

    #[test]
    fn optional_fields_are_left_out() {
        let mut request = request();
        request.effort = Some("off".into());
        request.max_output = None;
        request.session = None;
        request.tools.clear();
        let body = body(&request);
        for key in [
            "reasoning_effort",
            "max_tokens",
            "prompt_cache_key",
            "tools",
        ] {
            assert!(body.get(key).is_none(), "{key}");
        }
    }

    #[test]
    fn url_and_authorization() {
        assert_eq!(url("http://x/v1/"), "http://x/v1/chat/completions");
        assert_eq!(url(""), "https://api.openai.com/v1/chat/completions");
        let mut request = request();
        assert!(
            !http_request(request.clone())
                .headers
                .iter()
                .any(|(n, _)| n == "authorization")
        );
        request.auth.key = Some(" sk-1\n".into());
        let http = http_request(request.clone());
        let sent: Value = serde_json::from_slice(&http.body).unwrap();
        assert_eq!(sent, body(&request), "the body is the request's, encoded");
        assert!(
            http.headers
                .contains(&("authorization".into(), "Bearer sk-1".into()))
        );
        assert!(!format!("{http:?}").contains("sk-1"));
    }
}
