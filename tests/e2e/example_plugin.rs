//! The third-party example plugin: built on its own, found through
//! `$UJI_PLUGIN_PATH`, and its tool works.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;
use std::sync::Arc;

use serde_json::json;
use uji_host::{Registry, load_plugin_file};
use uji_protocol::ToolCall;
use uji_tests::{Sandbox, copy_into, target_dir, text};

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
