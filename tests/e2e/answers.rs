//! What a model's answer may not do to uji, through `uji run` against the
//! fake model server (Chat Completions stream on 127.0.0.1): grow without
//! end, stall forever, print the user's key, be garbage, or reuse a
//! tool-call id.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Output, Stdio};

use serde_json::{Value, json};
use uji_fake_model::chat::{self, ChatEvents};
use uji_fake_model::{FakeModel, Script};
use uji_tests::scripted::drive_with_env;
use uji_tests::{Sandbox, text};

const MODEL: &str = "openrouter/test-model";
const KEY: &str = "sk-answers-secret-key-0042";

/// `uji run ARGS` (with `--model openrouter/test-model` unless ARGS pick one).
fn run(sandbox: &Sandbox, model: &FakeModel, args: &[&str]) -> (Output, String, String) {
    let mut cmd = sandbox.uji();
    cmd.env("OPENROUTER_API_KEY", KEY)
        .env("OPENROUTER_BASE_URL", model.base_url())
        .env_remove("ANTHROPIC_API_KEY")
        .arg("run");
    if !args.contains(&"--model") {
        cmd.args(["--model", MODEL]);
    }
    let output = cmd.args(args).stdin(Stdio::null()).output().unwrap();
    let (stdout, stderr) = text(&output);
    (output, stdout, stderr)
}

fn events(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

fn answer(text: &str, pieces: usize) -> Script {
    Script::sse(
        ChatEvents::new("test-model")
            .text(text, pieces)
            .finish("stop")
            .usage(10, 5, 0)
            .done(),
    )
}

/// A text chunk of the Chat Completions stream.
fn text_chunk(text: &str) -> String {
    chat::frame(&json!({
        "id": "chatcmpl-endless",
        "object": "chat.completion.chunk",
        "model": "test-model",
        "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}],
    }))
}

#[test]
fn an_answer_that_never_ends_is_stopped_with_a_clear_error() {
    let sandbox = Sandbox::new();
    let line = format!("{}\n", "all work and no play ".repeat(50));
    for args in [&["--json", "talk"][..], &["talk"][..]] {
        let model = FakeModel::start();
        model.push(Script::endless(Vec::<String>::new(), text_chunk(&line)));
        let (output, stdout, stderr) = run(&sandbox, &model, args);
        assert_eq!(output.status.code(), Some(1), "stderr: {stderr}");
        let said = if args[0] == "--json" {
            let done = events(&stdout).into_iter().last().unwrap();
            assert_eq!(done["type"], "done");
            done["error"].as_str().unwrap().to_string()
        } else {
            stderr.clone()
        };
        assert!(said.contains("grew past 8 MiB"), "{said}");
        assert!(said.contains("shorter answer"), "{said}");
        // Not retried: one request, and the fake server saw uji leave.
        assert_eq!(model.requests().len(), 1);
        assert!(model.wait_for_dropped(1, std::time::Duration::from_secs(10)));
    }
}

#[test]
fn a_stream_that_keeps_stalling_gives_up_after_two_stalls() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    // A provider that counts 1 s without data as a stall.
    std::fs::write(
        sandbox.config().join("init.lua"),
        format!(
            r#"uji.provider.add({{
                id = "slow", wire = "openai-chat", base_url = "{}",
                key_env = "OPENROUTER_API_KEY", idle_timeout = 1,
                models = {{ {{ id = "test-model" }} }},
            }})"#,
            model.base_url()
        ),
    )
    .unwrap();
    for _ in 0..6 {
        model.push(Script::stall_after(vec![text_chunk("thinking")]));
    }
    let (output, stdout, stderr) = run(
        &sandbox,
        &model,
        &["--model", "slow/test-model", "--json", "hello"],
    );
    assert_eq!(output.status.code(), Some(1), "stderr: {stderr}");
    let done = events(&stdout).into_iter().last().unwrap();
    let error = done["error"].as_str().unwrap();
    assert!(error.contains("stream stalled"), "{error}");
    assert!(error.contains("gave up after 2 stalls"), "{error}");
    // Two attempts, not the six the retry count alone would allow.
    assert_eq!(model.requests().len(), 2);
}

#[test]
fn the_key_in_the_models_own_answer_is_never_printed() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    let said = format!("your key is {KEY} and that is all");
    // Split in many pieces, so the key crosses deltas.
    model.push(answer(&said, 17));
    let (output, stdout, stderr) = run(&sandbox, &model, &["--json", "what is my key"]);
    assert!(output.status.success(), "stderr: {stderr}");
    assert!(!stdout.contains(KEY), "{stdout}");
    assert!(!stderr.contains(KEY), "{stderr}");
    let events = events(&stdout);
    let saved = events
        .iter()
        .find(|e| e["type"] == "message" && e["message"]["role"] == "assistant")
        .expect("the answer as a message event");
    assert!(saved.to_string().contains("<redacted>"), "{saved}");
    let done = events.last().unwrap();
    assert_eq!(done["text"], "your key is <redacted> and that is all");

    model.push(answer(&said, 9));
    let (output, stdout, stderr) = run(&sandbox, &model, &["what is my key"]);
    assert!(output.status.success(), "stderr: {stderr}");
    assert!(
        !stdout.contains(KEY) && !stderr.contains(KEY),
        "{stdout}{stderr}"
    );
    assert!(
        stdout.contains("your key is <redacted> and that is all"),
        "{stdout}"
    );
}

#[test]
fn the_key_never_reaches_a_frontend_even_split_between_deltas() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    let said = format!("your key is {KEY} and that is all");
    // 40 pieces: the key (26 characters) is cut in several places.
    model.push(answer(&said, 40));
    let script = json!([
        {"send": {"id": "a", "type": "user_message", "text": "what is my key"}},
        {"wait": "turn_finished"},
    ]);
    std::fs::write(
        sandbox.config().join("init.lua"),
        format!(r#"uji.model.use("{MODEL}")"#),
    )
    .unwrap();
    let base_url = model.base_url();
    let (output, events) = drive_with_env(
        &sandbox,
        &["--frontend", "scripted"],
        &[
            ("OPENROUTER_API_KEY", KEY),
            ("OPENROUTER_BASE_URL", &base_url),
        ],
        script,
    );
    let (_, stderr) = text(&output);
    assert!(output.status.success(), "stderr: {stderr}");
    let deltas: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "delta")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert!(
        deltas.len() > 5,
        "{deltas:?}\nevents: {events:#?}\nstderr: {stderr}\nrequests: {}",
        model.requests().len()
    );
    assert_eq!(deltas.concat(), "your key is <redacted> and that is all");
    // No piece of the key shows either (the start of it is held back).
    assert!(
        deltas.iter().all(|d| !d.contains("sk-answers")),
        "{deltas:?}"
    );
    let all: String = events.iter().map(Value::to_string).collect();
    assert!(!all.contains(KEY));
}

#[test]
fn a_stream_of_garbage_is_an_error_not_an_empty_answer() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    let garbage = || {
        Script::sse(vec![
            "data: {not json\n\n".to_string(),
            "event: nonsense\ndata: 42\n\n".to_string(),
            ": a comment\n\n".to_string(),
            "data: {\"unrelated\": true}\n\n".to_string(),
        ])
    };
    model.push(garbage());
    let (output, stdout, stderr) = run(&sandbox, &model, &["--json", "hello"]);
    assert_eq!(
        output.status.code(),
        Some(1),
        "stdout: {stdout}\nstderr: {stderr}"
    );
    let done = events(&stdout).into_iter().last().unwrap();
    assert_eq!(done["type"], "done");
    let error = done["error"].as_str().unwrap();
    assert!(error.contains("ended without any answer"), "{error}");
    assert!(error.contains("check the provider's base_url"), "{error}");
    assert!(done["text"].is_null(), "{done}");
    // The server's failure, not the connection's: retrying would repeat it.
    assert_eq!(model.requests().len(), 1);
}

#[test]
fn two_tool_calls_with_one_id_both_run_and_keep_their_own_results() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.work().join("a.txt"), "alpha\n").unwrap();
    std::fs::write(sandbox.work().join("b.txt"), "beta\n").unwrap();
    let model = FakeModel::start();
    model.push(Script::sse(
        ChatEvents::new("test-model")
            .parallel_tool_calls(
                &[
                    (0, "call_same", "read_file", r#"{"path":"a.txt"}"#),
                    (1, "call_same", "read_file", r#"{"path":"b.txt"}"#),
                ],
                2,
            )
            .finish("tool_calls")
            .done(),
    ));
    model.push(answer("read both", 2));
    let (output, _stdout, stderr) = run(&sandbox, &model, &["--json", "read a and b"]);
    assert!(output.status.success(), "stderr: {stderr}");
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    let messages = requests[1].json["messages"].as_array().unwrap().clone();
    let assistant = messages
        .iter()
        .find(|m| m["role"] == "assistant")
        .expect("the answer with the calls is sent back");
    let ids: Vec<&str> = assistant["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 2);
    assert_ne!(ids[0], ids[1], "each call keeps an id of its own");
    assert_eq!(ids[0], "call_same");
    // Each result answers its own call.
    for (id, want) in ids.iter().zip(["alpha", "beta"]) {
        let result = messages
            .iter()
            .find(|m| m["role"] == "tool" && m["tool_call_id"] == *id)
            .unwrap_or_else(|| panic!("no result for {id}"));
        assert!(
            result["content"].as_str().unwrap().contains(want),
            "{result}"
        );
    }
}
