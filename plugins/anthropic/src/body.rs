//! uji's request as a Messages API request.

use serde_json::{Map, Value, json};
use uji_sdk::protocol::wire::WireTool;
use uji_sdk::{Image, Message, WireRequest};
use uji_wire_common::HttpRequest;

use crate::thinking::Style;

/// Used when the provider has no base URL.
pub const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
/// The API version uji speaks.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";
/// `max_tokens` when the request sets no output limit.
pub const DEFAULT_MAX_TOKENS: u64 = 8192;
/// The API's smallest thinking budget.
pub const MIN_THINKING_BUDGET: u64 = 1024;

/// `<base_url>/v1/messages` (a base URL that already ends in `/v1` gets
/// only `/messages`).
pub fn url(base_url: &str) -> String {
    let base = base_url.trim().trim_end_matches('/');
    let base = if base.is_empty() {
        DEFAULT_BASE_URL
    } else {
        base
    };
    if base.ends_with("/v1/messages") {
        base.to_string()
    } else if base.ends_with("/v1") {
        format!("{base}/messages")
    } else {
        format!("{base}/v1/messages")
    }
}

/// The HTTP request for a wire request.
pub fn http_request(request: WireRequest) -> HttpRequest {
    let body = body(&request);
    let mut http = HttpRequest::post(url(&request.provider.base_url))
        .idle_timeout_secs(request.idle_timeout)
        .header("anthropic-version", ANTHROPIC_VERSION);
    if let Some(key) = request.auth.key.as_deref().map(str::trim)
        && !key.is_empty()
    {
        http = http.header("x-api-key", key);
    }
    drop(request);
    http.with_json(&body)
}

/// The thinking a request asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Thinking {
    /// Nothing sent: the model's default.
    Off,
    /// A token budget (older models).
    Budget(u64),
    /// Adaptive thinking at an effort level.
    Adaptive(&'static str),
}

/// The thinking for a request, by the model's style and the effort, and
/// `max_tokens`. No thinking in a tool loop whose earlier steps have none
/// this model can replay (another model made them): the API refuses it.
fn thinking(request: &WireRequest) -> (Thinking, u64) {
    let effort = request.effort.as_deref();
    let plain = request.max_output.unwrap_or(DEFAULT_MAX_TOKENS).max(1);
    let (wanted, max_tokens) = match crate::thinking::style(&request.model) {
        Style::Adaptive => match crate::thinking::effort(effort) {
            Some(level) => (Thinking::Adaptive(level), plain),
            None => (Thinking::Off, plain),
        },
        Style::Budget => match thinking_budget(effort) {
            Some(budget) => {
                // Room for the answer after the thinking.
                let max_tokens = request
                    .max_output
                    .unwrap_or((budget + DEFAULT_MAX_TOKENS).min(32_000))
                    .max(1);
                // The budget must stay below max_tokens.
                let budget = budget.min(max_tokens.saturating_sub(MIN_THINKING_BUDGET));
                if budget >= MIN_THINKING_BUDGET {
                    (Thinking::Budget(budget), max_tokens)
                } else {
                    (Thinking::Off, max_tokens)
                }
            }
            None => (Thinking::Off, plain),
        },
    };
    if wanted != Thinking::Off && !replayable_turn(request) {
        return (Thinking::Off, max_tokens);
    }
    (wanted, max_tokens)
}

/// Thinking budget for an effort level; `None` for no thinking.
pub fn thinking_budget(effort: Option<&str>) -> Option<u64> {
    match effort? {
        "" | "off" | "none" => None,
        "minimal" => Some(1024),
        "low" => Some(2048),
        "medium" => Some(8192),
        "high" => Some(16_384),
        "xhigh" => Some(24_576),
        "max" => Some(31_999),
        _ => Some(8192),
    }
}

/// `cache_control` for the request's cache setting (`None`: no caching).
fn cache_control(cache: Option<&str>) -> Option<Value> {
    match cache.unwrap_or("short") {
        "off" => None,
        "long" => Some(json!({"type": "ephemeral", "ttl": "1h"})),
        _ => Some(json!({"type": "ephemeral"})),
    }
}

/// The JSON body.
pub fn body(request: &WireRequest) -> Value {
    let cache = cache_control(request.cache.as_deref());
    let mut body = Map::new();
    body.insert("model".into(), json!(request.model));

    let (thinking, max_tokens) = thinking(request);
    body.insert("max_tokens".into(), json!(max_tokens));

    if !request.system.is_empty() {
        let mut block = json!({"type": "text", "text": request.system});
        if let Some(cache) = &cache {
            block["cache_control"] = cache.clone();
        }
        body.insert("system".into(), json!([block]));
    }
    let mut messages = messages(request);
    if let Some(cache) = &cache {
        mark_newest(&mut messages, cache, 2);
    }
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        body.insert(
            "tools".into(),
            Value::Array(request.tools.iter().map(tool).collect()),
        );
    }
    match thinking {
        Thinking::Budget(budget) => {
            body.insert(
                "thinking".into(),
                json!({"type": "enabled", "budget_tokens": budget}),
            );
        }
        Thinking::Adaptive(effort) => {
            // Newer models leave the thinking text out unless asked.
            body.insert(
                "thinking".into(),
                json!({"type": "adaptive", "display": "summarized"}),
            );
            body.insert("output_config".into(), json!({"effort": effort}));
        }
        Thinking::Off => {}
    }
    body.insert("stream".into(), json!(true));
    Value::Object(body)
}

fn tool(tool: &WireTool) -> Value {
    let schema = uji_wire_common::object_schema(&tool.parameters);
    json!({"name": tool.name, "description": tool.description, "input_schema": schema})
}

fn image(image: &Image) -> Value {
    json!({
        "type": "image",
        "source": {"type": "base64", "media_type": image.media_type, "data": image.data},
    })
}

/// The thinking blocks saved with an assistant message, when they belong to
/// this model.
fn replayed_thinking<'a>(replay: Option<&'a Value>, model: &str) -> Option<&'a Vec<Value>> {
    let replay = replay?;
    if let Some(saved) = replay.get("model").and_then(Value::as_str)
        && saved != model
    {
        return None;
    }
    replay
        .get("thinking")
        .and_then(Value::as_array)
        .filter(|b| !b.is_empty())
}

/// False when an assistant step after the last user message called tools
/// without thinking this model can replay.
fn replayable_turn(request: &WireRequest) -> bool {
    let last_user = request
        .messages
        .iter()
        .rposition(|m| matches!(m, Message::User { .. }))
        .map_or(0, |i| i + 1);
    request.messages[last_user..].iter().all(|m| match m {
        Message::Assistant {
            tool_calls, replay, ..
        } => tool_calls.is_empty() || replayed_thinking(replay.as_ref(), &request.model).is_some(),
        _ => true,
    })
}

/// The conversation: consecutive messages of one role are merged (tool
/// results, and a user message that follows them, share one user message,
/// tool results first); empty messages are left out.
pub fn messages(request: &WireRequest) -> Vec<Value> {
    let mut turns: Vec<(&'static str, Vec<Value>)> = Vec::new();
    for message in &request.messages {
        let (role, blocks) = match message {
            Message::User { text, images } => {
                let mut blocks: Vec<Value> = images.iter().map(image).collect();
                if !text.is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                ("user", blocks)
            }
            Message::Assistant {
                text,
                tool_calls,
                replay,
                ..
            } => {
                let mut blocks: Vec<Value> = replayed_thinking(replay.as_ref(), &request.model)
                    .cloned()
                    .unwrap_or_default();
                if !text.is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                for call in tool_calls {
                    let input = match serde_json::from_str::<Value>(&call.arguments) {
                        Ok(value @ Value::Object(_)) => value,
                        _ => json!({}),
                    };
                    blocks.push(json!({
                        "type": "tool_use", "id": call.id, "name": call.name, "input": input,
                    }));
                }
                ("assistant", blocks)
            }
            Message::Tool {
                tool_call_id,
                content,
                images,
                ..
            } => {
                let content = if images.is_empty() {
                    json!(content)
                } else {
                    let mut parts = Vec::with_capacity(images.len() + 1);
                    if !content.is_empty() {
                        parts.push(json!({"type": "text", "text": content}));
                    }
                    parts.extend(images.iter().map(image));
                    Value::Array(parts)
                };
                (
                    "user",
                    vec![
                        json!({"type": "tool_result", "tool_use_id": tool_call_id, "content": content}),
                    ],
                )
            }
        };
        if blocks.is_empty() {
            continue;
        }
        match turns.last_mut() {
            Some((last, existing)) if *last == role => existing.extend(blocks),
            _ => turns.push((role, blocks)),
        }
    }
    turns
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect()
}

/// Puts `cache` on the last content block of the newest `count` messages.
fn mark_newest(messages: &mut [Value], cache: &Value, count: usize) {
    for message in messages.iter_mut().rev().take(count) {
        if let Some(block) = message
            .get_mut("content")
            .and_then(Value::as_array_mut)
            .and_then(|blocks| blocks.last_mut())
        {
            let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
            if kind != "thinking" && kind != "redacted_thinking" {
                block["cache_control"] = cache.clone();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use uji_sdk::ToolCallRequest;
    use uji_sdk::protocol::wire::{Auth, ProviderInfo};

    use super::*;

    fn png(data: &str) -> Image {
        Image {
            media_type: "image/png".into(),
            data: data.into(),
            name: None,
        }
    }

    fn call(id: &str) -> ToolCallRequest {
        ToolCallRequest {
            id: id.into(),
            name: "read_file".into(),
            arguments: "{\"path\":\"a\"}".into(),
        }
    }

    fn request(messages: Vec<Message>) -> WireRequest {
        WireRequest {
            model: "claude-sonnet-4-5".into(),
            system: "sys".into(),
            messages,
            tools: vec![WireTool {
                name: "read_file".into(),
                description: "Reads".into(),
                parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
            }],
            effort: None,
            max_output: None,
            cache: Some("short".into()),
            session: None,
            provider: ProviderInfo {
                id: "anthropic".into(),
                base_url: "https://api.anthropic.com/".into(),
            },
            auth: Auth {
                key: Some("sk-ant".into()),
            },
            idle_timeout: Some(5),
        }
    }

    fn conversation(replay: Option<Value>) -> Vec<Message> {
        vec![
            Message::User {
                text: "see".into(),
                images: vec![png("AAAA")],
            },
            Message::Assistant {
                text: "ok".into(),
                reasoning: Some("thought".into()),
                tool_calls: vec![call("t1"), call("t2")],
                replay,
            },
            Message::Tool {
                tool_call_id: "t1".into(),
                name: "read_file".into(),
                content: "pic".into(),
                images: vec![png("BBBB")],
            },
            Message::Tool {
                tool_call_id: "t2".into(),
                name: "read_file".into(),
                content: "text".into(),
                images: vec![],
            },
        ]
    }

    #[test]
    fn messages_merge_tool_results_and_map_images() {
        let body = body(&request(conversation(None)));
        let messages = body["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 3);
        assert_eq!(messages[0]["content"][0]["type"], "image");
        assert_eq!(messages[0]["content"][0]["source"]["data"], "AAAA");
        assert_eq!(messages[0]["content"][1]["text"], "see");
        assert_eq!(messages[1]["content"][1]["type"], "tool_use");
        assert_eq!(messages[1]["content"][1]["input"], json!({"path": "a"}));
        let results = messages[2]["content"].as_array().unwrap();
        assert_eq!(results.len(), 2);
        assert_eq!(results[0]["tool_use_id"], "t1");
        assert_eq!(results[0]["content"][1]["source"]["data"], "BBBB");
        assert_eq!(results[1]["content"], "text");
        assert_eq!(body["tools"][0]["input_schema"]["type"], "object");
        assert_eq!(body["max_tokens"], DEFAULT_MAX_TOKENS);
        assert_eq!(body["stream"], true);
        assert!(body.get("thinking").is_none());
        assert!(body.get("temperature").is_none());
    }

    #[test]
    fn cache_markers_on_system_and_the_newest_two_messages() {
        let body_short = body(&request(conversation(None)));
        let marker = json!({"type": "ephemeral"});
        assert_eq!(body_short["system"][0]["cache_control"], marker);
        let messages = body_short["messages"].as_array().unwrap();
        assert!(messages[0]["content"][1].get("cache_control").is_none());
        assert_eq!(messages[1]["content"][2]["cache_control"], marker);
        assert_eq!(messages[2]["content"][1]["cache_control"], marker);
        assert!(messages[2]["content"][0].get("cache_control").is_none());

        let mut long = request(conversation(None));
        long.cache = Some("long".into());
        let body_long = body(&long);
        assert_eq!(body_long["system"][0]["cache_control"]["ttl"], "1h");

        let mut off = request(conversation(None));
        off.cache = Some("off".into());
        assert!(!body(&off).to_string().contains("cache_control"));
    }

    #[test]
    fn thinking_budget_and_replay() {
        let thinking = json!({"model": "claude-sonnet-4-5", "thinking": [
            {"type": "thinking", "thinking": "t", "signature": "sig"}
        ]});
        let mut with_replay = request(conversation(Some(thinking.clone())));
        with_replay.effort = Some("high".into());
        let body = body(&with_replay);
        assert_eq!(body["thinking"]["budget_tokens"], 16_384);
        assert!(body["max_tokens"].as_u64().unwrap() > 16_384);
        assert_eq!(body["messages"][1]["content"][0]["signature"], "sig");
        assert_eq!(body["messages"][1]["content"][1]["text"], "ok");

        // Another model's thinking is not sent, and thinking is then off
        // for this tool loop.
        let mut other = with_replay.clone();
        other.model = "claude-haiku-4-5".into();
        let other = super::body(&other);
        assert!(!other.to_string().contains("\"sig\""));
        assert!(other.get("thinking").is_none());

        // A small output limit shrinks the budget.
        let mut small = request(vec![Message::User {
            text: "hi".into(),
            images: vec![],
        }]);
        small.effort = Some("max".into());
        small.max_output = Some(4096);
        let small = super::body(&small);
        assert_eq!(small["max_tokens"], 4096);
        assert_eq!(small["thinking"]["budget_tokens"], 3072);
    }

    #[test]
    fn newer_models_get_adaptive_thinking_and_an_effort_never_a_budget() {
        let mut adaptive = request(vec![Message::User {
            text: "hi".into(),
            images: vec![],
        }]);
        adaptive.model = "claude-sonnet-5-5".into();
        adaptive.effort = Some("high".into());
        let body = super::body(&adaptive);
        assert_eq!(
            body["thinking"],
            json!({"type": "adaptive", "display": "summarized"})
        );
        assert_eq!(body["output_config"], json!({"effort": "high"}));
        assert_eq!(body["max_tokens"], DEFAULT_MAX_TOKENS);
        for refused in [
            "budget_tokens",
            "temperature",
            "top_p",
            "top_k",
            "tool_choice",
        ] {
            assert!(!body.to_string().contains(refused), "{refused} sent");
        }

        // No effort: nothing, so the model's own default holds (Sonnet 5.5
        // refuses `thinking: disabled`).
        adaptive.effort = Some("off".into());
        let off = super::body(&adaptive);
        assert!(off.get("thinking").is_none());
        assert!(off.get("output_config").is_none());
    }

    #[test]
    fn url_and_headers() {
        assert_eq!(
            url("https://api.anthropic.com/"),
            "https://api.anthropic.com/v1/messages"
        );
        assert_eq!(url("http://proxy/v1"), "http://proxy/v1/messages");
        let http = http_request(request(vec![]));
        assert!(
            http.headers
                .contains(&("x-api-key".into(), "sk-ant".into()))
        );
        assert!(
            http.headers
                .contains(&("anthropic-version".into(), ANTHROPIC_VERSION.into()))
        );
        assert_eq!(http.idle_timeout.as_secs(), 5);
        assert!(!format!("{http:?}").contains("sk-ant"));
    }
}
