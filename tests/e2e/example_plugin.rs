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
