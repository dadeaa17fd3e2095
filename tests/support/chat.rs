//! Scripted Chat Completions answers for `uji run` against the fake model.

use std::process::{Command, Output, Stdio};

use serde_json::Value;
use uji_fake_model::chat::ChatEvents;
use uji_fake_model::{FakeModel, Script};

use crate::Sandbox;

/// A final answer of `text`.
pub fn answer(text: &str) -> Script {
    Script::sse(
        ChatEvents::new("test-model")
            .text(text, 3)
            .finish("stop")
            .usage(120, 30, 20)
            .done(),
    )
}

/// One tool call.
pub fn call(id: &str, name: &str, args: Value) -> Script {
    Script::sse(
        ChatEvents::new("test-model")
            .tool_call(0, id, name, &args.to_string(), 4)
            .finish("tool_calls")
            .usage(100, 10, 0)
            .done(),
    )
}

/// `--json` output as events, one a line.
pub fn events(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

/// A `uji` command in `sandbox` talking to `model` as the `openrouter`
/// provider, with `key` as its API key.
pub fn uji_with_model(sandbox: &Sandbox, model: &FakeModel, key: &str) -> Command {
    let mut cmd = sandbox.uji();
    cmd.env("OPENROUTER_API_KEY", key)
        .env("OPENROUTER_BASE_URL", model.base_url())
        .env_remove("ANTHROPIC_API_KEY");
    cmd
}

/// One `uji run --model openrouter/test-model ARGS go` in which the model
/// sends each of `commands` as a `run_command` call in turn, then answers
/// "done"; the output and what each call's result said, in order.
pub fn run_commands(
    sandbox: &Sandbox,
    commands: &[&str],
    args: &[&str],
    env: &[(&str, &str)],
) -> (Output, Vec<String>) {
    let model = FakeModel::start();
    for (i, command) in commands.iter().enumerate() {
        model.push(call(
            &format!("c{i}"),
            "run_command",
            serde_json::json!({ "command": command }),
        ));
    }
    model.push(answer("done"));
    let output = uji_with_model(sandbox, &model, "sk-e2e")
        .envs(env.iter().copied())
        .args(["run", "--model", "openrouter/test-model"])
        .args(args)
        .arg("go")
        .stdin(Stdio::null())
        .output()
        .expect("run uji");
    let results = tool_results(&model);
    assert_eq!(results.len(), commands.len(), "{:?}", crate::text(&output));
    (output, results)
}

/// What each tool call's result said, in order, as the model's last
/// request carried them.
pub fn tool_results(model: &FakeModel) -> Vec<String> {
    model
        .requests()
        .last()
        .map(|r| r.json["messages"].as_array().cloned().unwrap_or_default())
        .unwrap_or_default()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or("").to_string())
        .collect()
}
