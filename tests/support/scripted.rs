//! Driving `uji` with the `scripted` frontend fixture
//! (tests/fixtures/plugins/scripted-frontend): the real binary, the real
//! tools, Lua and openai-chat plugins, a JSON script of operations and
//! waits, and the events the frontend logged.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Output, Stdio};

use serde_json::Value;
use uji_fake_model::Script;
use uji_fake_model::chat::ChatEvents;

use crate::{Sandbox, text};

/// A Chat Completions answer of model `m1`: `text` in three chunks, then
/// the usage (100 in, 20 out).
pub fn answer(text: &str) -> Script {
    Script::sse(
        ChatEvents::new("m1")
            .text(text, 3)
            .finish("stop")
            .usage(100, 20, 0)
            .done(),
    )
}

/// `UJI_PLUGIN_PATH` with the frontend fixtures and the plugins a session
/// needs.
pub fn plugin_path() -> String {
    crate::plugin_path(&[
        "uji_fixture_scripted_frontend",
        "uji_fixture_legacy_frontend",
        "uji_plugin_tools",
        "uji_plugin_openai_chat",
        "uji_plugin_lua",
    ])
}

/// Runs `uji ARGS --frontend scripted` with `script`; returns the output
/// and the events the frontend logged.
pub fn drive(sandbox: &Sandbox, args: &[&str], script: Value) -> (Output, Vec<Value>) {
    let mut args = args.to_vec();
    args.extend(["--frontend", "scripted"]);
    drive_as_configured(sandbox, &args, script)
}

/// Like [`drive`], leaving the choice of frontend to the arguments given
/// and the config.
pub fn drive_as_configured(
    sandbox: &Sandbox,
    args: &[&str],
    script: Value,
) -> (Output, Vec<Value>) {
    drive_with_env(sandbox, args, &[], script)
}

/// Like [`drive_as_configured`], with more environment variables (a key,
/// a base URL).
pub fn drive_with_env(
    sandbox: &Sandbox,
    args: &[&str],
    env: &[(&str, &str)],
    script: Value,
) -> (Output, Vec<Value>) {
    let script_path = sandbox.root.path().join("script.json");
    let log_path = sandbox.root.path().join("events.jsonl");
    std::fs::write(&script_path, script.to_string()).unwrap();
    let output = sandbox
        .uji()
        .env("UJI_PLUGIN_PATH", plugin_path())
        .env("UJI_SCRIPT", &script_path)
        .env("UJI_SCRIPT_LOG", &log_path)
        .envs(env.iter().copied())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let log = std::fs::read_to_string(&log_path).unwrap_or_default();
    let events = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (output, events)
}

/// The events of type `kind`.
pub fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

/// The `ack` of operation `op_id`; panics when there is none.
pub fn ack_of<'a>(events: &'a [Value], op_id: &str) -> &'a Value {
    events
        .iter()
        .find(|e| e["type"] == "ack" && e["op_id"] == op_id)
        .unwrap_or_else(|| panic!("no ack of {op_id}: {events:#?}"))
}

/// Asserts uji succeeded and the script never waited in vain.
pub fn assert_ok(output: &Output, events: &[Value]) {
    let (stdout, stderr) = text(output);
    assert!(
        output.status.success(),
        "uji failed\nstdout: {stdout}\nstderr: {stderr}\nevents: {events:#?}"
    );
    assert!(
        of_type(events, "fixture_timeout").is_empty(),
        "the script waited in vain: {events:#?}"
    );
}
