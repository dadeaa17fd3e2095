//! The wire plugins against the fake model server: the real cdylibs, loaded
//! in process through uji-host as core loads them, streaming from
//! 127.0.0.1. Each test checks what uji sent and what the reply delivered.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use uji_fake_model::anthropic::{self, AnthropicEvents};
use uji_fake_model::chat::{self, ChatEvents};
use uji_fake_model::gemini::GeminiEvents;
use uji_fake_model::responses::ResponsesEvents;
use uji_fake_model::{FakeModel, RecordedRequest, Script};
use uji_host::{
    RegisteredWire, Registry, RunningStream, StreamError, WireEvents, load_plugin_file,
};
use uji_protocol::Image;
use uji_protocol::wire::{
    Answer, Auth, Failure, Message, ProviderInfo, ToolCallRequest, Transport, Usage, WireRequest,
    WireTool,
};
use uji_tests::plugin_dir;

const KEY: &str = "sk-test-key-0123456789";

struct Loaded {
    registry: Registry,
    _dir: tempfile::TempDir,
}

/// Both wire plugins, loaded once for the whole test binary (the debug
/// libraries are large; one copy each is enough).
fn wire(name: &str) -> Arc<RegisteredWire> {
    static LOADED: OnceLock<Loaded> = OnceLock::new();
    let loaded = LOADED.get_or_init(|| {
        let dir = plugin_dir(&[
            "uji_plugin_anthropic",
            "uji_plugin_openai_chat",
            "uji_plugin_openai_responses",
            "uji_plugin_gemini",
        ]);
        let registry = Registry::new();
        for entry in std::fs::read_dir(dir.path()).unwrap() {
            let path = entry.unwrap().path();
            let plugin = load_plugin_file(&path, &registry)
                .unwrap_or_else(|e| panic!("{}: {}", path.display(), e.reason));
            assert!(
                ["anthropic", "openai-chat", "openai-responses", "gemini"]
                    .contains(&plugin.manifest.name.as_str())
            );
        }
        Loaded {
            registry,
            _dir: dir,
        }
    });
    loaded.registry.wire(name).expect("wire registered")
}

#[derive(Default)]
struct Collect {
    text: Mutex<Vec<String>>,
    reasoning: Mutex<Vec<String>>,
}

impl Collect {
    fn text(&self) -> String {
        self.text.lock().unwrap().concat()
    }
    fn text_deltas(&self) -> usize {
        self.text.lock().unwrap().len()
    }
    fn reasoning(&self) -> String {
        self.reasoning.lock().unwrap().concat()
    }
}

impl WireEvents for Collect {
    fn text(&self, delta: &str) {
        self.text.lock().unwrap().push(delta.to_string());
    }
    fn reasoning(&self, delta: &str) {
        self.reasoning.lock().unwrap().push(delta.to_string());
    }
}

fn tool() -> WireTool {
    WireTool {
        name: "read_file".into(),
        description: "Reads a file.".into(),
        parameters: json!({
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"]
        }),
    }
}

fn user(text: &str) -> Message {
    Message::User {
        text: text.into(),
        images: Vec::new(),
    }
}

fn png(data: &str) -> Image {
    Image {
        media_type: "image/png".into(),
        data: data.into(),
        name: Some("shot.png".into()),
    }
}

fn request(base_url: String, model: &str, messages: Vec<Message>) -> WireRequest {
    WireRequest {
        model: model.into(),
        system: "You are a test.".into(),
        messages,
        tools: vec![tool()],
        effort: None,
        max_output: None,
        cache: None,
        session: None,
        provider: ProviderInfo {
            id: "fake".into(),
            base_url,
        },
        auth: Auth {
            key: Some(KEY.into()),
        },
        idle_timeout: Some(10),
    }
}

/// A Claude model that takes a thinking budget (4.5 and older).
fn anthropic_request(server: &FakeModel, messages: Vec<Message>) -> WireRequest {
    request(server.base_url(), "claude-sonnet-4-5", messages)
}

fn chat_request(server: &FakeModel, messages: Vec<Message>) -> WireRequest {
    request(format!("{}/v1/", server.base_url()), "gpt-test", messages)
}

fn start(wire: &str, request: &WireRequest) -> (RunningStream, Arc<Collect>) {
    let events = Arc::new(Collect::default());
    let running = self::wire(wire)
        .stream(request.clone(), events.clone())
        .expect("the wire accepts the request");
    (running, events)
}

/// Waits for the end of a stream, failing the test instead of hanging.
fn finish(running: RunningStream) -> Result<Answer, StreamError> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(running.wait_blocking());
    });
    rx.recv_timeout(Duration::from_secs(20))
        .expect("the wire finished the reply in time")
}

fn call(wire: &str, request: &WireRequest) -> (Result<Answer, StreamError>, Arc<Collect>) {
    let (running, events) = start(wire, request);
    (finish(running), events)
}

fn failure(result: Result<Answer, StreamError>) -> Failure {
    match result {
        Err(StreamError::Failure(failure)) => failure,
        other => panic!("expected a failure, got {other:?}"),
    }
}

fn only_request(server: &FakeModel) -> RecordedRequest {
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    requests.into_iter().next().unwrap()
}

fn args(call: &ToolCallRequest) -> Value {
    serde_json::from_str(&call.arguments)
        .unwrap_or_else(|e| panic!("arguments {:?}: {e}", call.arguments))
}

/// A failure without an HTTP status, of kind `kind` (what retry decides
/// on), whose message says `needle` (what the user reads).
fn assert_no_status(failure: &Failure, kind: Transport, needle: &str) {
    match failure {
        Failure::Http {
            status: None,
            message,
            transport,
            ..
        } => {
            assert_eq!(*transport, Some(kind), "{message:?}");
            assert!(message.contains(needle), "{message:?} lacks {needle:?}");
        }
        other => panic!("expected an HTTP failure without status, got {other:?}"),
    }
}

// ---- anthropic ----------------------------------------------------------------

#[test]
fn anthropic_streams_text_and_sends_a_complete_request() {
    let server = FakeModel::start();
    let text = "Hello from the fake Claude, streamed in many small pieces.";
    server.push(Script::sse(
        AnthropicEvents::new("claude-test")
            .usage(12, 34, 1000, 200)
            .ping()
            .text(text, 12)
            .build(),
    ));
    let (result, events) = call(
        "anthropic",
        &anthropic_request(&server, vec![user("Say hello")]),
    );
    let answer = result.unwrap();
    assert_eq!(answer.text, text);
    assert_eq!(events.text(), text);
    assert!(events.text_deltas() >= 10, "{}", events.text_deltas());
    assert!(answer.tool_calls.is_empty());
    assert_eq!(
        answer.usage,
        Usage {
            input: 12,
            output: 34,
            cache_read: 1000,
            cache_write: 200
        }
    );

    let sent = only_request(&server);
    assert_eq!(sent.method, "POST");
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(sent.header("x-api-key"), Some(KEY));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(sent.header("content-type"), Some("application/json"));
    assert!(sent.header("authorization").is_none());
    let body = &sent.json;
    assert_eq!(body["model"], "claude-sonnet-4-5");
    assert_eq!(body["stream"], true);
    assert_eq!(body["max_tokens"], 8192);
    assert_eq!(body["system"][0]["text"], "You are a test.");
    // Caching is on unless turned off: the system prompt and the newest
    // message carry markers.
    assert_eq!(
        body["system"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [
            {"type": "text", "text": "Say hello", "cache_control": {"type": "ephemeral"}}
        ]}])
    );
    assert_eq!(body["tools"][0]["name"], "read_file");
    assert_eq!(
        body["tools"][0]["input_schema"]["required"],
        json!(["path"])
    );
    assert!(body.get("thinking").is_none());
    assert!(body.get("temperature").is_none());
}

#[test]
fn anthropic_assembles_parallel_tool_calls_from_many_fragments() {
    let server = FakeModel::start();
    server.push(
        Script::sse(
            AnthropicEvents::new("claude-test")
                .text("Reading both files.", 3)
                .tool_use("toolu_01", "read_file", r#"{"path": "README.md"}"#, 9)
                .tool_use("toolu_02", "read_file", r#"{"path": "src/main.rs"}"#, 11)
                .build(),
        )
        .with_garbage(),
    );
    let (result, events) = call("anthropic", &anthropic_request(&server, vec![user("read")]));
    let answer = result.unwrap();
    assert_eq!(events.text(), "Reading both files.");
    let calls: Vec<(&str, &str, Value)> = answer
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), args(c)))
        .collect();
    assert_eq!(
        calls,
        vec![
            ("toolu_01", "read_file", json!({"path": "README.md"})),
            ("toolu_02", "read_file", json!({"path": "src/main.rs"})),
        ]
    );
}

/// Two answers: thinking then a read_file call of `path` (`toolu_01`), and
/// then `text`.
fn push_thought_call_then_text(
    server: &FakeModel,
    model: &str,
    (thought, signature): (&str, &str),
    path: &str,
    text: &str,
) {
    let args = json!({ "path": path }).to_string();
    server.push(Script::sse(
        AnthropicEvents::new(model)
            .thinking(thought, signature, 3)
            .tool_use("toolu_01", "read_file", &args, 2)
            .build(),
    ));
    server.push(Script::sse(
        AnthropicEvents::new(model).text(text, 2).build(),
    ));
}

#[test]
fn anthropic_thinking_streams_and_is_replayed_with_its_signature() {
    let server = FakeModel::start();
    push_thought_call_then_text(
        &server,
        "claude-test",
        ("I should read the file first.", "EqQBCgIYAhIM=="),
        "shot.png",
        "It is a screenshot.",
    );

    let mut first = anthropic_request(&server, vec![user("what is in shot.png?")]);
    first.effort = Some("high".into());
    first.cache = Some("long".into());
    let (result, events) = call("anthropic", &first);
    let answer = result.unwrap();
    assert_eq!(events.reasoning(), "I should read the file first.");
    assert_eq!(
        answer.reasoning.as_deref(),
        Some("I should read the file first.")
    );
    let replay = answer.replay.clone().expect("thinking is kept for replay");
    assert_eq!(replay["thinking"][0]["signature"], "EqQBCgIYAhIM==");
    let body = &server.requests()[0].json;
    assert_eq!(body["thinking"]["type"], "enabled");
    let budget = body["thinking"]["budget_tokens"].as_u64().unwrap();
    assert!(budget >= 1024 && budget < body["max_tokens"].as_u64().unwrap());
    assert!(body.get("temperature").is_none());
    assert_eq!(body["system"][0]["cache_control"]["ttl"], "1h");

    // The next step: the assistant message with its replay, the tool result
    // with an image.
    let mut second = first.clone();
    second.messages.push(Message::Assistant {
        text: answer.text.clone(),
        reasoning: answer.reasoning.clone(),
        tool_calls: answer.tool_calls.clone(),
        replay: answer.replay.clone(),
    });
    second.messages.push(Message::Tool {
        tool_call_id: "toolu_01".into(),
        name: "read_file".into(),
        content: "image 10x10".into(),
        images: vec![png("iVBORw0KGgo=")],
    });
    let (result, _) = call("anthropic", &second);
    assert_eq!(result.unwrap().text, "It is a screenshot.");

    let body = &server.requests()[1].json;
    assert_eq!(body["thinking"]["type"], "enabled");
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3);
    let assistant = &messages[1]["content"];
    assert_eq!(
        assistant[0],
        json!({"type": "thinking", "thinking": "I should read the file first.", "signature": "EqQBCgIYAhIM=="})
    );
    assert_eq!(assistant[1]["type"], "tool_use");
    assert_eq!(assistant[1]["input"], json!({"path": "shot.png"}));
    let long = json!({"type": "ephemeral", "ttl": "1h"});
    assert_eq!(assistant[1]["cache_control"], long);
    let result_block = &messages[2]["content"][0];
    assert_eq!(result_block["type"], "tool_result");
    assert_eq!(result_block["tool_use_id"], "toolu_01");
    assert_eq!(result_block["content"][0]["text"], "image 10x10");
    assert_eq!(
        result_block["content"][1],
        json!({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}})
    );
    assert_eq!(result_block["cache_control"], long);
    // Older messages carry no marker.
    assert!(!messages[0].to_string().contains("cache_control"));
}

#[test]
fn anthropic_newer_models_think_adaptively_with_an_effort_and_replay_it() {
    let server = FakeModel::start();
    push_thought_call_then_text(
        &server,
        "claude-sonnet-5-5",
        ("Read it first.", "c2lnLTU1"),
        "a.txt",
        "done",
    );
    let mut first = request(
        server.base_url(),
        "claude-sonnet-5-5",
        vec![user("read a.txt")],
    );
    first.effort = Some("xhigh".into());
    let (result, events) = call("anthropic", &first);
    let answer = result.unwrap();
    assert_eq!(events.reasoning(), "Read it first.");
    let body = &server.requests()[0].json;
    // Sonnet 5.5 answers 400 to a budget, sampling parameters, forced tool
    // choice or `thinking: disabled`: none of them is sent.
    assert_eq!(
        body["thinking"],
        json!({"type": "adaptive", "display": "summarized"})
    );
    assert_eq!(body["output_config"], json!({"effort": "xhigh"}));
    for refused in [
        "budget_tokens",
        "temperature",
        "top_p",
        "top_k",
        "tool_choice",
        "disabled",
    ] {
        assert!(!body.to_string().contains(refused), "{refused} in {body}");
    }

    let mut second = first.clone();
    second.messages.push(Message::Assistant {
        text: answer.text.clone(),
        reasoning: answer.reasoning.clone(),
        tool_calls: answer.tool_calls.clone(),
        replay: answer.replay.clone(),
    });
    second.messages.push(Message::Tool {
        tool_call_id: "toolu_01".into(),
        name: "read_file".into(),
        content: "1| a".into(),
        images: vec![],
    });
    let (result, _) = call("anthropic", &second);
    assert_eq!(result.unwrap().text, "done");
    let body = &server.requests()[1].json;
    assert_eq!(body["thinking"]["type"], "adaptive");
    assert_eq!(
        body["messages"][1]["content"][0],
        json!({"type": "thinking", "thinking": "Read it first.", "signature": "c2lnLTU1"})
    );
}

#[test]
fn anthropic_user_images_and_cache_off() {
    let server = FakeModel::start();
    server.push(Script::sse(
        AnthropicEvents::new("claude-test").text("ok", 1).build(),
    ));
    let mut request = anthropic_request(
        &server,
        vec![Message::User {
            text: "look".into(),
            images: vec![png("AAAA")],
        }],
    );
    request.cache = Some("off".into());
    request.max_output = Some(1000);
    call("anthropic", &request).0.unwrap();
    let body = only_request(&server).json;
    assert!(!body.to_string().contains("cache_control"));
    assert_eq!(body["max_tokens"], 1000);
    assert_eq!(
        body["messages"][0]["content"],
        json!([
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}},
            {"type": "text", "text": "look"}
        ])
    );
}

#[test]
fn anthropic_error_event_keeps_a_retryable_status() {
    let server = FakeModel::start();
    let mut events = AnthropicEvents::new("claude-test")
        .text("partial", 2)
        .unfinished();
    events.push(anthropic::error("overloaded_error", "Overloaded"));
    server.push(Script::stall_after(events));
    let (result, _) = call("anthropic", &anthropic_request(&server, vec![user("hi")]));
    assert_eq!(
        failure(result),
        Failure::Http {
            status: Some(529),
            message: "overloaded_error: Overloaded".into(),
            retry_after: None,
            transport: None,
        }
    );
}

#[test]
fn anthropic_http_errors_map_to_failures() {
    let server = FakeModel::start();
    let body500 =
        r#"{"type":"error","error":{"type":"api_error","message":"Internal server error"}}"#;
    server.push(Script::status(500, body500, &[]));
    server.push(Script::status(
        401,
        r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#,
        &[],
    ));
    server.push(Script::status(
        429,
        r#"{"type":"error","error":{"type":"rate_limit_error","message":"slow down"}}"#,
        &[("retry-after", "7")],
    ));
    let request = anthropic_request(&server, vec![user("hi")]);

    match failure(call("anthropic", &request).0) {
        Failure::Http {
            status: Some(500),
            message,
            retry_after: None,
            transport: None,
        } => assert_eq!(message, body500),
        other => panic!("{other:?}"),
    }
    match failure(call("anthropic", &request).0) {
        Failure::Auth {
            status: 401,
            message: Some(message),
        } => {
            assert!(message.contains("invalid x-api-key"));
            assert!(!message.contains(KEY));
        }
        other => panic!("{other:?}"),
    }
    match failure(call("anthropic", &request).0) {
        Failure::Http {
            status: Some(429),
            message,
            retry_after: Some(wait),
            transport: None,
        } => {
            assert_eq!(wait, 7.0);
            assert!(message.contains("slow down"));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn anthropic_stall_fails_after_the_idle_timeout() {
    let server = FakeModel::start();
    server.push(Script::stall_after(
        AnthropicEvents::new("claude-test")
            .text("so far", 2)
            .unfinished(),
    ));
    let mut request = anthropic_request(&server, vec![user("hi")]);
    request.idle_timeout = Some(1);
    let started = Instant::now();
    let (result, events) = call("anthropic", &request);
    let elapsed = started.elapsed();
    assert_eq!(events.text(), "so far");
    let failure = failure(result);
    assert_no_status(
        &failure,
        Transport::Stalled,
        "stream stalled: no data for 1s",
    );
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    assert!(server.wait_for_dropped(1, Duration::from_secs(5)));
}

#[test]
fn anthropic_dropped_connection_fails_without_status() {
    let server = FakeModel::start();
    server.push(Script::drop_after(
        AnthropicEvents::new("claude-test")
            .text("cut off", 3)
            .unfinished(),
    ));
    let (result, events) = call("anthropic", &anthropic_request(&server, vec![user("hi")]));
    assert_eq!(events.text(), "cut off");
    assert_no_status(
        &failure(result),
        Transport::Dropped,
        "before the answer finished",
    );
}

#[test]
fn anthropic_cancel_drops_the_connection_at_once() {
    let server = FakeModel::start();
    server.push(Script::stall_after(
        AnthropicEvents::new("claude-test")
            .text("thinking about it", 2)
            .unfinished(),
    ));
    let (running, events) = start("anthropic", &anthropic_request(&server, vec![user("hi")]));
    let deadline = Instant::now() + Duration::from_secs(10);
    while events.text() != "thinking about it" {
        assert!(Instant::now() < deadline, "no text arrived");
        std::thread::sleep(Duration::from_millis(5));
    }
    let cancelled_at = Instant::now();
    running.cancel();
    running.cancel();
    let failure = failure(finish(running));
    assert_no_status(&failure, Transport::Cancelled, "cancelled");
    assert!(server.wait_for_dropped(1, Duration::from_secs(2)));
    assert!(cancelled_at.elapsed() < Duration::from_secs(2));
}

#[test]
fn anthropic_connection_refused_is_an_http_failure_without_the_key() {
    let server = FakeModel::start();
    let base_url = server.base_url();
    drop(server);
    let (result, _) = call(
        "anthropic",
        &request(base_url, "claude-test", vec![user("hi")]),
    );
    let failure = failure(result);
    assert_no_status(&failure, Transport::Connect, "connection failed");
    assert!(!format!("{failure:?}").contains(KEY));
}

// ---- openai-chat ----------------------------------------------------------------

#[test]
fn chat_streams_text_with_usage_and_sends_a_complete_request() {
    let server = FakeModel::start();
    let text = "Streaming text through Chat Completions, piece by piece.";
    server.push(
        Script::sse(
            ChatEvents::new("gpt-test")
                .text(text, 15)
                .finish("stop")
                .usage(1200, 40, 1000)
                .done(),
        )
        .with_garbage()
        .crlf(),
    );
    let mut request = chat_request(&server, vec![user("Stream please")]);
    request.max_output = Some(2048);
    request.effort = Some("low".into());
    request.session = Some("session-42".into());
    let (result, events) = call("openai-chat", &request);
    let answer = result.unwrap();
    assert_eq!(answer.text, text);
    assert_eq!(events.text(), text);
    assert!(events.text_deltas() >= 10);
    assert_eq!(
        answer.usage,
        Usage {
            input: 200,
            output: 40,
            cache_read: 1000,
            cache_write: 0
        }
    );

    let sent = only_request(&server);
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(
        sent.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert!(sent.header("x-api-key").is_none());
    let body = &sent.json;
    assert_eq!(body["model"], "gpt-test");
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(body["max_tokens"], 2048);
    assert_eq!(body["reasoning_effort"], "low");
    assert_eq!(body["prompt_cache_key"], "session-42");
    assert_eq!(
        body["messages"],
        json!([
            {"role": "system", "content": "You are a test."},
            {"role": "user", "content": "Stream please"}
        ])
    );
    assert_eq!(
        body["tools"][0],
        json!({"type": "function", "function": {
            "name": "read_file",
            "description": "Reads a file.",
            "parameters": tool().parameters,
        }})
    );
}

#[test]
fn chat_without_a_key_sends_no_authorization_and_no_optional_fields() {
    let server = FakeModel::start();
    // finish_reason, then the server closes without [DONE]: still complete.
    server.push(Script::sse(
        ChatEvents::new("llama")
            .text("hi", 1)
            .finish("stop")
            .build(),
    ));
    let mut request = chat_request(&server, vec![user("hi")]);
    request.auth.key = None;
    request.effort = Some("off".into());
    assert_eq!(call("openai-chat", &request).0.unwrap().text, "hi");
    let sent = only_request(&server);
    assert!(sent.header("authorization").is_none());
    for field in ["max_tokens", "reasoning_effort", "prompt_cache_key"] {
        assert!(sent.json.get(field).is_none(), "{field}");
    }
}

#[test]
fn chat_assembles_interleaved_parallel_tool_calls() {
    let server = FakeModel::start();
    server.push(Script::sse(
        ChatEvents::new("gpt-test")
            .parallel_tool_calls(
                &[
                    (0, "call_a", "read_file", r#"{"path": "README.md"}"#),
                    (1, "call_b", "read_file", r#"{"path": "Cargo.toml"}"#),
                ],
                10,
            )
            .finish("tool_calls")
            .usage(50, 20, 0)
            .done(),
    ));
    let (result, events) = call("openai-chat", &chat_request(&server, vec![user("read")]));
    let answer = result.unwrap();
    assert_eq!(events.text(), "");
    let calls: Vec<(&str, &str, Value)> = answer
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), args(c)))
        .collect();
    assert_eq!(
        calls,
        vec![
            ("call_a", "read_file", json!({"path": "README.md"})),
            ("call_b", "read_file", json!({"path": "Cargo.toml"})),
        ]
    );
}

#[test]
fn chat_reasoning_from_either_field() {
    let server = FakeModel::start();
    server.push(Script::sse(
        ChatEvents::new("deepseek")
            .reasoning("First, ", 3)
            .reasoning_field("reasoning", "then.", 2)
            .text("Answer.", 2)
            .finish("stop")
            .done(),
    ));
    let (result, events) = call("openai-chat", &chat_request(&server, vec![user("why")]));
    let answer = result.unwrap();
    assert_eq!(events.reasoning(), "First, then.");
    assert_eq!(answer.reasoning.as_deref(), Some("First, then."));
    assert_eq!(answer.text, "Answer.");
}

#[test]
fn chat_sends_history_tool_results_and_images() {
    let server = FakeModel::start();
    server.push(Script::sse(
        ChatEvents::new("gpt-test")
            .text("done", 1)
            .finish("stop")
            .done(),
    ));
    let messages = vec![
        Message::User {
            text: "compare".into(),
            images: vec![png("AAAA")],
        },
        Message::Assistant {
            text: String::new(),
            reasoning: None,
            tool_calls: vec![
                ToolCallRequest {
                    id: "call_1".into(),
                    name: "read_file".into(),
                    arguments: r#"{"path":"a.png"}"#.into(),
                },
                ToolCallRequest {
                    id: "call_2".into(),
                    name: "read_file".into(),
                    arguments: r#"{"path":"b.txt"}"#.into(),
                },
            ],
            replay: None,
        },
        Message::Tool {
            tool_call_id: "call_1".into(),
            name: "read_file".into(),
            content: "an image".into(),
            images: vec![png("BBBB")],
        },
        Message::Tool {
            tool_call_id: "call_2".into(),
            name: "read_file".into(),
            content: "hello".into(),
            images: Vec::new(),
        },
    ];
    call("openai-chat", &chat_request(&server, messages))
        .0
        .unwrap();
    let body = only_request(&server).json;
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 6, "{messages:#?}");
    assert_eq!(
        messages[1]["content"],
        json!([
            {"type": "text", "text": "compare"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
        ])
    );
    assert_eq!(messages[2]["role"], "assistant");
    assert_eq!(
        messages[2]["tool_calls"][0],
        json!({"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{\"path\":\"a.png\"}"}})
    );
    assert_eq!(
        messages[3],
        json!({"role": "tool", "tool_call_id": "call_1", "content": "an image"})
    );
    assert_eq!(
        messages[4],
        json!({"role": "tool", "tool_call_id": "call_2", "content": "hello"})
    );
    // Tool messages cannot carry images: they follow in a user message.
    assert_eq!(messages[5]["role"], "user");
    assert_eq!(
        messages[5]["content"][1],
        json!({"type": "image_url", "image_url": {"url": "data:image/png;base64,BBBB"}})
    );
}

#[test]
fn chat_http_errors_map_to_failures() {
    let server = FakeModel::start();
    let long_body = format!("{{\"error\": \"{}\"}}", "x".repeat(2000));
    server.push(Script::status(500, &long_body, &[]));
    server.push(Script::status(
        403,
        r#"{"error":{"message":"no access"}}"#,
        &[],
    ));
    server.push(Script::status(
        429,
        "rate limited",
        &[("retry-after", "Fri, 31 Dec 1999 23:59:59 GMT")],
    ));
    server.push(Script::status(503, "", &[("retry-after-ms", "1500")]));
    let request = chat_request(&server, vec![user("hi")]);

    match failure(call("openai-chat", &request).0) {
        Failure::Http {
            status: Some(500),
            message,
            ..
        } => {
            assert!(message.starts_with("{\"error\": \"xxx"), "{message}");
            assert!(message.chars().count() <= 501, "{}", message.len());
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        failure(call("openai-chat", &request).0),
        Failure::Auth {
            status: 403,
            message: Some(r#"{"error":{"message":"no access"}}"#.into())
        }
    );
    assert_eq!(
        failure(call("openai-chat", &request).0),
        Failure::Http {
            status: Some(429),
            message: "rate limited".into(),
            // A date in the past: retry at once.
            retry_after: Some(0.0),
            transport: None,
        }
    );
    match failure(call("openai-chat", &request).0) {
        Failure::Http {
            status: Some(503),
            retry_after: Some(wait),
            ..
        } => assert_eq!(wait, 1.5),
        other => panic!("{other:?}"),
    }
}

#[test]
fn chat_stall_fails_after_the_idle_timeout() {
    let server = FakeModel::start();
    server.push(Script::stall_after(
        ChatEvents::new("gpt-test").text("half", 1).build(),
    ));
    let mut request = chat_request(&server, vec![user("hi")]);
    request.idle_timeout = Some(1);
    let started = Instant::now();
    let (result, events) = call("openai-chat", &request);
    assert_eq!(events.text(), "half");
    assert_no_status(
        &failure(result),
        Transport::Stalled,
        "stream stalled: no data for 1s",
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn chat_stall_before_the_headers_also_times_out() {
    let server = FakeModel::start();
    server.push(Script::status(200, "late", &[]).delay(Duration::from_secs(4)));
    let mut request = chat_request(&server, vec![user("hi")]);
    request.idle_timeout = Some(1);
    let started = Instant::now();
    assert_no_status(
        &failure(call("openai-chat", &request).0),
        Transport::Stalled,
        "stream stalled",
    );
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[test]
fn chat_dropped_connection_fails_without_status() {
    let server = FakeModel::start();
    server.push(Script::drop_after(
        ChatEvents::new("gpt-test")
            .text("some text", 2)
            .tool_call(0, "call_x", "read_file", r#"{"path": "a"}"#, 5)
            .build(),
    ));
    let (result, events) = call("openai-chat", &chat_request(&server, vec![user("hi")]));
    assert_eq!(events.text(), "some text");
    assert_no_status(
        &failure(result),
        Transport::Dropped,
        "before the answer finished",
    );
}

#[test]
fn chat_cancel_drops_the_connection_at_once() {
    let server = FakeModel::start();
    server.push(
        Script::sse(
            ChatEvents::new("gpt-test")
                .text("a slow answer that goes on and on", 30)
                .finish("stop")
                .done(),
        )
        .delay(Duration::from_millis(200)),
    );
    let (running, events) = start("openai-chat", &chat_request(&server, vec![user("hi")]));
    let deadline = Instant::now() + Duration::from_secs(10);
    while events.text().is_empty() {
        assert!(Instant::now() < deadline, "no text arrived");
        std::thread::sleep(Duration::from_millis(5));
    }
    running.cancel();
    assert_no_status(&failure(finish(running)), Transport::Cancelled, "cancelled");
    assert!(server.wait_for_dropped(1, Duration::from_secs(2)));
    assert_eq!(server.completed_responses(), 0);
}

#[test]
fn chat_empty_answer_is_a_provider_failure() {
    let server = FakeModel::start();
    server.push(Script::sse(
        ChatEvents::new("gpt-test")
            .finish("stop")
            .usage(10, 0, 0)
            .done(),
    ));
    assert_eq!(
        failure(call("openai-chat", &chat_request(&server, vec![user("hi")])).0),
        Failure::Provider {
            message: "empty response".into()
        }
    );
}

#[test]
fn chat_error_chunk_in_the_stream() {
    let server = FakeModel::start();
    let mut events = ChatEvents::new("gpt-test").text("par", 1).build();
    events.push(chat::frame(
        &json!({"error": {"message": "upstream overloaded", "code": 502}}),
    ));
    server.push(Script::stall_after(events));
    assert_eq!(
        failure(call("openai-chat", &chat_request(&server, vec![user("hi")])).0),
        Failure::Http {
            status: Some(502),
            message: "upstream overloaded".into(),
            retry_after: None,
            transport: None,
        }
    );
}

#[test]
fn both_wires_serve_one_request_after_another() {
    let server = FakeModel::start();
    for i in 0..8 {
        let text = format!("answer {i}");
        if i % 2 == 0 {
            server.push(Script::sse(
                AnthropicEvents::new("claude-test").text(&text, 3).build(),
            ));
        } else {
            server.push(Script::sse(
                ChatEvents::new("gpt-test")
                    .text(&text, 3)
                    .finish("stop")
                    .done(),
            ));
        }
    }
    // Scripts are served in arrival order: one request after another,
    // alternating between the two plugins (each with its own runtime).
    let mut texts = Vec::new();
    for i in 0..8 {
        let (wire, request) = if i % 2 == 0 {
            ("anthropic", anthropic_request(&server, vec![user("hi")]))
        } else {
            ("openai-chat", chat_request(&server, vec![user("hi")]))
        };
        texts.push(call(wire, &request).0.unwrap().text);
    }
    let expected: Vec<String> = (0..8).map(|i| format!("answer {i}")).collect();
    assert_eq!(texts, expected);
}

#[test]
fn chat_answer_finished_before_a_stall_is_kept() {
    let server = FakeModel::start();
    // finish_reason came, then neither usage nor [DONE]: the answer stands.
    server.push(Script::stall_after(
        ChatEvents::new("gpt-test")
            .text("complete", 2)
            .finish("stop")
            .build(),
    ));
    let mut request = chat_request(&server, vec![user("hi")]);
    request.idle_timeout = Some(1);
    assert_eq!(call("openai-chat", &request).0.unwrap().text, "complete");
}

#[test]
fn a_key_echoed_by_the_server_is_redacted() {
    let server = FakeModel::start();
    let echo = format!(r#"{{"error":{{"message":"Incorrect API key provided: {KEY}"}}}}"#);
    server.push(Script::status(401, &echo, &[]));
    server.push(Script::status(400, &echo, &[]));
    let request = chat_request(&server, vec![user("hi")]);
    for _ in 0..2 {
        let failure = failure(call("openai-chat", &request).0);
        let text = format!("{failure:?}");
        assert!(!text.contains(KEY), "{text}");
        assert!(
            text.contains("Incorrect API key provided: <redacted>"),
            "{text}"
        );
    }
}

// ---- openai-responses -----------------------------------------------------------

fn responses_request(server: &FakeModel, messages: Vec<Message>) -> WireRequest {
    request(format!("{}/v1/", server.base_url()), "gpt-test", messages)
}

#[test]
fn responses_streams_text_with_usage_and_sends_a_complete_request() {
    let server = FakeModel::start();
    let text = "Hello from the fake Responses API, in pieces.";
    server.push(Script::sse(
        ResponsesEvents::new("gpt-test")
            .text(text, 9)
            .usage(1200, 40, 1000)
            .completed(),
    ));
    let mut request = responses_request(&server, vec![user("hi")]);
    request.max_output = Some(4096);
    request.session = Some("session-1".into());
    let (result, events) = call("openai-responses", &request);
    let answer = result.unwrap();
    assert_eq!(answer.text, text);
    assert!(events.text_deltas() >= 9 && events.text() == text);
    assert_eq!(
        answer.usage,
        Usage {
            input: 200,
            output: 40,
            cache_read: 1000,
            cache_write: 0
        }
    );
    let sent = only_request(&server);
    assert_eq!(sent.path, "/v1/responses");
    assert_eq!(
        sent.header("authorization"),
        Some(&*format!("Bearer {KEY}"))
    );
    assert_eq!(
        sent.json,
        json!({
            "model": "gpt-test",
            "instructions": "You are a test.",
            "input": [{"role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
            "tools": [{"type": "function", "name": "read_file", "description": "Reads a file.",
                "parameters": tool().parameters}],
            "stream": true,
            "store": false,
            "max_output_tokens": 4096,
            "prompt_cache_key": "session-1",
        })
    );
}

#[test]
fn responses_parallel_calls_and_reasoning_are_replayed_to_the_same_model_only() {
    let server = FakeModel::start();
    server.push(Script::sse(
        ResponsesEvents::new("gpt-test")
            .reasoning("Two files to read.", "enc-blob-1", 4)
            .function_calls(
                &[
                    ("call_a", "read_file", r#"{"path": "a.txt"}"#),
                    ("call_b", "read_file", r#"{"path": "b.txt"}"#),
                ],
                5,
            )
            .usage(10, 5, 0)
            .completed(),
    ));
    let mut request = responses_request(&server, vec![user("read both")]);
    request.effort = Some("high".into());
    let (result, events) = call("openai-responses", &request);
    let answer = result.unwrap();
    assert_eq!(events.reasoning(), "Two files to read.");
    let ids: Vec<&str> = answer.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["call_a", "call_b"]);
    assert_eq!(args(&answer.tool_calls[1]), json!({"path": "b.txt"}));
    let sent = only_request(&server);
    assert_eq!(
        sent.json["reasoning"],
        json!({"effort": "high", "summary": "auto"})
    );
    assert_eq!(sent.json["include"], json!(["reasoning.encrypted_content"]));

    let replay = answer.replay.clone().unwrap();
    let history = |model: &str| {
        let mut next = responses_request(
            &server,
            vec![
                user("read both"),
                Message::Assistant {
                    text: String::new(),
                    reasoning: answer.reasoning.clone(),
                    tool_calls: answer.tool_calls.clone(),
                    replay: Some(replay.clone()),
                },
                Message::Tool {
                    tool_call_id: "call_a".into(),
                    name: "read_file".into(),
                    content: "A".into(),
                    images: vec![png("QUJD")],
                },
            ],
        );
        next.model = model.into();
        next
    };
    for model in ["gpt-test", "other-model"] {
        server.push(Script::sse(
            ResponsesEvents::new(model).text("done", 1).completed(),
        ));
        assert_eq!(
            call("openai-responses", &history(model)).0.unwrap().text,
            "done"
        );
    }
    let requests = server.requests();
    let input = requests[1].json["input"].as_array().unwrap().clone();
    assert_eq!(input[1]["type"], "reasoning");
    assert_eq!(input[1]["encrypted_content"], "enc-blob-1");
    assert_eq!(
        input[2],
        json!({"type": "function_call", "call_id": "call_a", "name": "read_file",
            "arguments": r#"{"path": "a.txt"}"#})
    );
    assert_eq!(
        input[4],
        json!({"type": "function_call_output", "call_id": "call_a", "output": "A"})
    );
    assert_eq!(
        input[5]["content"][1]["image_url"],
        "data:image/png;base64,QUJD"
    );
    let other = requests[2].json["input"].as_array().unwrap().clone();
    assert!(
        other.iter().all(|item| item["type"] != "reasoning"),
        "another model got the encrypted reasoning: {other:?}"
    );
}

#[test]
fn responses_failures_errors_and_a_dropped_stream() {
    let server = FakeModel::start();
    server.push(Script::sse(
        ResponsesEvents::new("gpt-test")
            .text("partial", 2)
            .failed("rate_limit_exceeded", "slow down"),
    ));
    server.push(Script::status(
        401,
        r#"{"error":{"message":"bad key"}}"#,
        &[],
    ));
    server.push(Script::status(503, "", &[("retry-after", "2")]));
    server.push(Script::drop_after(
        ResponsesEvents::new("gpt-test")
            .text("some text", 2)
            .unfinished(),
    ));
    let request = responses_request(&server, vec![user("hi")]);
    match failure(call("openai-responses", &request).0) {
        Failure::Http {
            status: Some(429),
            message,
            ..
        } => assert_eq!(message, "slow down"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        failure(call("openai-responses", &request).0),
        Failure::Auth { status: 401, .. }
    ));
    assert!(matches!(
        failure(call("openai-responses", &request).0),
        Failure::Http {
            status: Some(503),
            retry_after: Some(_),
            ..
        }
    ));
    let (result, events) = call("openai-responses", &request);
    assert_eq!(events.text(), "some text");
    assert_no_status(
        &failure(result),
        Transport::Dropped,
        "before the answer finished",
    );
}

// ---- gemini -----------------------------------------------------------------------

fn gemini_request(server: &FakeModel, messages: Vec<Message>) -> WireRequest {
    request(
        format!("{}/v1beta/", server.base_url()),
        "gemini-test",
        messages,
    )
}

#[test]
fn gemini_streams_text_and_thoughts_with_usage_and_sends_a_complete_request() {
    let server = FakeModel::start();
    server.push(Script::sse(
        GeminiEvents::new("gemini-test")
            .thought("Thinking it over.", 3)
            .usage(1500, 20, 1000, 7)
            .text("Hello from the fake Gemini.", 5)
            .finish("STOP"),
    ));
    let mut request = gemini_request(
        &server,
        vec![Message::User {
            text: "look".into(),
            images: vec![png("QUJD")],
        }],
    );
    request.effort = Some("low".into());
    request.max_output = Some(2048);
    let (result, events) = call("gemini", &request);
    let answer = result.unwrap();
    assert_eq!(answer.text, "Hello from the fake Gemini.");
    assert_eq!(events.text(), answer.text);
    assert_eq!(events.reasoning(), "Thinking it over.");
    assert_eq!(
        answer.usage,
        Usage {
            input: 500,
            output: 27,
            cache_read: 1000,
            cache_write: 0
        }
    );
    let sent = only_request(&server);
    assert_eq!(
        sent.path,
        "/v1beta/models/gemini-test:streamGenerateContent?alt=sse"
    );
    assert_eq!(sent.header("x-goog-api-key"), Some(KEY));
    assert_eq!(sent.header("authorization"), None);
    assert_eq!(
        sent.json,
        json!({
            "systemInstruction": {"parts": [{"text": "You are a test."}]},
            "contents": [{"role": "user", "parts": [
                {"text": "look"},
                {"inlineData": {"mimeType": "image/png", "data": "QUJD"}},
            ]}],
            "tools": [{"functionDeclarations": [{"name": "read_file",
                "description": "Reads a file.", "parameters": tool().parameters}]}],
            "generationConfig": {"maxOutputTokens": 2048,
                "thinkingConfig": {"includeThoughts": true, "thinkingLevel": "low"}},
        })
    );
}

#[test]
fn gemini_parallel_calls_and_signatures_are_replayed_to_the_same_model_only() {
    let server = FakeModel::start();
    server.push(Script::sse(
        GeminiEvents::new("gemini-test")
            .function_calls(
                &[
                    ("read_file", json!({"path": "a.txt"})),
                    ("read_file", json!({"path": "b.txt"})),
                ],
                "sig-A",
            )
            .finish("STOP"),
    ));
    let (result, _) = call("gemini", &gemini_request(&server, vec![user("read both")]));
    let answer = result.unwrap();
    let ids: Vec<&str> = answer.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["call_0", "call_1"]);
    assert_eq!(args(&answer.tool_calls[1]), json!({"path": "b.txt"}));
    let history = |model: &str| {
        let mut next = gemini_request(
            &server,
            vec![
                user("read both"),
                Message::Assistant {
                    text: String::new(),
                    reasoning: None,
                    tool_calls: answer.tool_calls.clone(),
                    replay: answer.replay.clone(),
                },
                Message::Tool {
                    tool_call_id: "call_0".into(),
                    name: "read_file".into(),
                    content: "A".into(),
                    images: Vec::new(),
                },
                Message::Tool {
                    tool_call_id: "call_1".into(),
                    name: "read_file".into(),
                    content: "B".into(),
                    images: Vec::new(),
                },
            ],
        );
        next.model = model.into();
        next
    };
    for model in ["gemini-test", "gemini-other"] {
        server.push(Script::sse(
            GeminiEvents::new(model).text("done", 1).finish("STOP"),
        ));
        assert_eq!(call("gemini", &history(model)).0.unwrap().text, "done");
    }
    let requests = server.requests();
    let contents = requests[1].json["contents"].as_array().unwrap().clone();
    assert_eq!(
        contents[1],
        json!({"role": "model", "parts": [
            {"functionCall": {"name": "read_file", "args": {"path": "a.txt"}}, "thoughtSignature": "sig-A"},
            {"functionCall": {"name": "read_file", "args": {"path": "b.txt"}}},
        ]})
    );
    assert_eq!(
        contents[2],
        json!({"role": "user", "parts": [
            {"functionResponse": {"name": "read_file", "response": {"content": "A"}}},
            {"functionResponse": {"name": "read_file", "response": {"content": "B"}}},
        ]})
    );
    let other = requests[2].json["contents"][1].to_string();
    assert!(
        !other.contains("sig-A"),
        "another model got the signature: {other}"
    );
}

#[test]
fn gemini_errors_and_a_dropped_stream() {
    let server = FakeModel::start();
    let overloaded =
        json!({"error": {"code": 503, "message": "overloaded", "status": "UNAVAILABLE"}});
    server.push(Script::sse([uji_fake_model::frame(
        None,
        &overloaded.to_string(),
    )]));
    server.push(Script::status(
        400,
        r#"{"error":{"code":400,"message":"API key not valid"}}"#,
        &[],
    ));
    server.push(Script::status(429, "quota", &[("retry-after", "3")]));
    server.push(Script::drop_after(
        GeminiEvents::new("gemini-test")
            .text("some text", 2)
            .unfinished(),
    ));
    let request = gemini_request(&server, vec![user("hi")]);
    match failure(call("gemini", &request).0) {
        Failure::Http {
            status: Some(503),
            message,
            ..
        } => assert_eq!(message, "overloaded"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        failure(call("gemini", &request).0),
        Failure::Http {
            status: Some(400),
            ..
        }
    ));
    assert!(matches!(
        failure(call("gemini", &request).0),
        Failure::Http {
            status: Some(429),
            retry_after: Some(_),
            ..
        }
    ));
    let (result, events) = call("gemini", &request);
    assert_eq!(events.text(), "some text");
    assert_no_status(
        &failure(result),
        Transport::Dropped,
        "before the answer finished",
    );
}
