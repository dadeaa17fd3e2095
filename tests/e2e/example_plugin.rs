//! The third-party example plugins: built on their own, found through
//! `$UJI_PLUGIN_PATH`, and they work: hello-tool's tool runs, echo-wire
//! answers, minimal-frontend drives a turn against the fake model.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;
use std::sync::Arc;

use serde_json::{Value, json};
use uji_fake_model::chat::ChatEvents;
use uji_fake_model::{FakeModel, Script};
use uji_host::{Registry, load_plugin_file};
use uji_protocol::ToolCall;
use uji_tests::{Sandbox, copy_into, target_dir, text, with_stdin};

/// Builds the example exactly as docs/plugins.md tells a plugin author to.
fn build_example() -> std::path::PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let manifest = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/hello-tool/Cargo.toml"
    );
    let status = Command::new(cargo)
        .args(["build", "--quiet", "--manifest-path", manifest])
        .env("CARGO_TARGET_DIR", target_dir().parent().unwrap())
        .status()
        .expect("run cargo");
    assert!(status.success(), "building the example plugin failed");
    let lib = target_dir().join(format!(
        "{}hello_tool{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    assert!(lib.exists(), "{} built", lib.display());
    lib
}

#[test]
fn the_example_plugin_is_listed_from_uji_plugin_path_and_its_tool_runs() {
    let lib = build_example();
    let dir = tempfile::tempdir().unwrap();
    let installed = copy_into(&lib, dir.path());

    let sandbox = Sandbox::new();
    let output = sandbox
        .uji()
        .arg("plugins")
        .env("UJI_PLUGIN_PATH", dir.path())
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    let line = stdout
        .lines()
        .find(|l| l.starts_with("hello-tool "))
        .unwrap_or_else(|| panic!("example listed:\n{stdout}"));
    assert!(line.contains("tools: word_count"), "{line}");
    assert!(line.contains(installed.to_str().unwrap()), "{line}");

    // The tool answers through the host exactly as it will for the model.
    let registry = Registry::new();
    load_plugin_file(&installed, &registry).unwrap();
    std::fs::write(sandbox.work().join("notes.txt"), "one two\nthree\n").unwrap();
    let tool = registry.tool("word_count").unwrap();
    assert_eq!(
        tool.subject(&json!({"path": "notes.txt"})).unwrap(),
        "notes.txt"
    );
    let call = ToolCall {
        id: "call_1".into(),
        args: json!({"path": "notes.txt"}),
        cwd: sandbox.work().to_string_lossy().into_owned(),
        roots: None,
        sandbox: None,
        spill: None,
        session: None,
    };
    let output = tool
        .start(&call, Arc::new(|_: &str| {}))
        .unwrap()
        .wait_blocking()
        .unwrap();
    assert_eq!(output.text, "notes.txt: 2 lines, 3 words, 14 bytes");
    let bad = ToolCall {
        args: json!({}),
        ..call
    };
    let output = tool
        .start(&bad, Arc::new(|_: &str| {}))
        .unwrap()
        .wait_blocking()
        .unwrap();
    assert_eq!(
        output.text,
        "error: `path` is required and must be a non-empty string"
    );
    assert!(output.is_error);
}

/// `uji run` with the echo-wire example on `$UJI_PLUGIN_PATH` and `args`.
fn run_echo(args: &[&str]) -> (std::process::ExitStatus, String, String) {
    let plugins = uji_tests::plugin_dir(&["echo_wire"]);
    let sandbox = Sandbox::new();
    let output = sandbox
        .uji()
        .arg("run")
        .args(args)
        .env("UJI_PLUGIN_PATH", plugins.path())
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    (output.status, stdout, stderr)
}

#[test]
fn the_echo_wire_example_is_selectable_with_model_and_answers_offline() {
    let (status, stdout, stderr) = run_echo(&["--model", "echo/parrot", "hello there"]);
    assert!(status.success(), "{stderr}");
    assert_eq!(stdout, "hello there\n");

    let (status, stdout, stderr) = run_echo(&["--model", "echo/shout", "hello"]);
    assert!(status.success(), "{stderr}");
    assert_eq!(stdout, "HELLO\n");

    // Only the provider: its default model.
    let (status, stdout, stderr) = run_echo(&["--model", "echo", "hi"]);
    assert!(status.success(), "{stderr}");
    assert_eq!(stdout, "hi\n");
}

#[test]
fn the_echo_wire_example_in_json_reports_the_answer_model_and_usage() {
    let (status, stdout, stderr) = run_echo(&["--json", "--model", "echo/parrot", "hello"]);
    assert!(status.success(), "{stderr}");
    let events: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let assistant = events
        .iter()
        .find(|e| e["message"]["role"] == "assistant")
        .unwrap_or_else(|| panic!("an assistant message in:\n{stdout}"));
    assert_eq!(assistant["message"]["text"], "hello");
    assert_eq!(assistant["message"]["model"], "echo/parrot");
    let done = events.last().unwrap();
    assert_eq!(done["type"], "done");
    assert_eq!(done["text"], "hello");
    assert_eq!(done["usage"]["output"], 1);
}

#[test]
fn an_unknown_echo_model_reaches_the_wire_which_refuses_it() {
    let (status, stdout, stderr) = run_echo(&["--model", "echo/nope", "hello"]);
    assert_eq!(status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    assert!(
        stderr.contains(
            "uji: error: provider: echo has no model \"nope\": use echo/parrot or echo/shout"
        ),
        "{stderr}"
    );
}

#[test]
fn docs_plugins_md_shows_the_echo_wire_example_as_it_is() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let docs = std::fs::read_to_string(format!("{root}/docs/plugins.md")).unwrap();
    let source = std::fs::read_to_string(format!("{root}/examples/echo-wire/src/lib.rs")).unwrap();
    assert!(
        docs.contains(&format!("```rust\n{source}```")),
        "docs/plugins.md's \"Write a wire\" must show examples/echo-wire/src/lib.rs verbatim"
    );
}

/// `uji --frontend minimal` with the minimal-frontend example on
/// `$UJI_PLUGIN_PATH`, the fake model as the only provider, and `typed` as
/// what the user types; returns the sandbox and what the frontend printed.
fn run_minimal(model: &FakeModel, typed: &str) -> (Sandbox, String) {
    let sandbox = Sandbox::new();
    sandbox.write_init(&format!(
        "uji.provider.add({{ id = \"fake\", wire = \"openai-chat\", base_url = \"{}\", models = {{ \"m\" }} }})\nuji.model.use(\"fake/m\")\n",
        model.base_url()
    ));
    let plugins = uji_tests::plugin_path(&[
        "minimal_frontend",
        "uji_plugin_tools",
        "uji_plugin_openai_chat",
        "uji_plugin_lua",
    ]);
    let mut uji = sandbox.uji();
    uji.env("UJI_PLUGIN_PATH", plugins)
        .args(["--frontend", "minimal"]);
    let output = with_stdin(uji, typed);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    (sandbox, stdout)
}

/// The model asks to write `hello.txt`, then answers.
fn write_then_answer(model: &FakeModel, answer: &str) {
    let args = json!({"path": "hello.txt", "content": "hi\n"}).to_string();
    model
        .push(Script::sse(
            ChatEvents::new("m")
                .tool_call(0, "c1", "write_file", &args, 2)
                .finish("tool_calls")
                .done(),
        ))
        .push(Script::sse(
            ChatEvents::new("m").text(answer, 3).finish("stop").done(),
        ));
}

/// The result of the call the model was sent back, and the user message.
fn sent(model: &FakeModel) -> (Value, Value) {
    let requests = model.requests();
    assert_eq!(requests.len(), 2, "one call, then the answer");
    let first = requests[0].json["messages"].as_array().unwrap();
    let user = first.iter().find(|m| m["role"] == "user").unwrap();
    let second = requests[1].json["messages"].as_array().unwrap();
    let tool = second.iter().find(|m| m["role"] == "tool").unwrap();
    (user["content"].clone(), tool["content"].clone())
}

#[test]
fn the_minimal_frontend_example_streams_the_turn_and_a_yes_allows_the_call() {
    let model = FakeModel::start();
    write_then_answer(&model, "wrote hello.txt");
    let (sandbox, stdout) = run_minimal(&model, "say hi in a file\ny\n");
    assert_eq!(
        stdout,
        "\n> write_file hello.txt\nCreate or overwrite this file? hello.txt [y/N]\nwrote hello.txt\n"
    );
    let (prompt, result) = sent(&model);
    assert_eq!(prompt, "say hi in a file");
    assert_eq!(result, "created hello.txt (1 line)");
    assert_eq!(
        std::fs::read_to_string(sandbox.work().join("hello.txt")).unwrap(),
        "hi\n"
    );
}

#[test]
fn the_minimal_frontend_example_denies_on_any_other_answer_or_none() {
    for typed in ["say hi in a file\nn\n", "say hi in a file\n"] {
        let model = FakeModel::start();
        write_then_answer(&model, "left it");
        let (sandbox, stdout) = run_minimal(&model, typed);
        assert!(stdout.ends_with("[y/N]\nleft it\n"), "{stdout}");
        let (prompt, result) = sent(&model);
        assert_eq!(prompt, "say hi in a file");
        assert_eq!(result, "denied: user denied");
        assert!(!sandbox.work().join("hello.txt").exists());
    }
}

#[test]
fn docs_frontends_md_shows_the_minimal_frontend_example_as_it_is() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let docs = std::fs::read_to_string(format!("{root}/docs/frontends.md")).unwrap();
    let source =
        std::fs::read_to_string(format!("{root}/examples/minimal-frontend/src/lib.rs")).unwrap();
    assert!(
        docs.contains(&format!("```rust\n{source}```")),
        "docs/frontends.md's \"A frontend in 40 lines\" must show examples/minimal-frontend/src/lib.rs verbatim"
    );
}
