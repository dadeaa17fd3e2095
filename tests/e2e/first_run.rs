//! What a first run meets: no API key, or an init.lua that does not load.
//! The real `uji` binary with the `scripted` frontend fixture (see
//! tests/support/scripted.rs), the real plugins and the fake model server.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use uji_core::auth::providers::NO_PROVIDER;
use uji_fake_model::FakeModel;
use uji_tests::scripted::{answer, assert_ok, drive, of_type, plugin_path};
use uji_tests::{Sandbox, text};

fn say(text: &str, id: &str) -> Value {
    json!({"send": {"id": id, "type": "user_message", "text": text}})
}

#[test]
fn without_a_key_the_session_opens_says_how_to_set_one_up_and_takes_a_model_later() {
    let model = FakeModel::start();
    model.push(answer("hello at last"));
    let sandbox = Sandbox::new();
    // A provider, but no uji.model.use and no key in the environment.
    let init = format!(
        r#"require("uji.defaults")
uji.provider.add({{ id = "fake", wire = "openai-chat", base_url = "{}", models = {{ "m1" }} }})
uji.keymap.add("insert", "<c-S>", "submit")
"#,
        model.base_url()
    );
    std::fs::write(sandbox.config().join("init.lua"), init).unwrap();
    let script = json!([
        {"wait": "session_configured"},
        {"wait": "notice", "where": {"level": "warn"}},
        say("hi", "a"),
        {"wait": "turn_finished"},
        {"send": {"id": "e", "type": "set_model", "effort": "high"}},
        {"wait": "error", "where": {"op_id": "e"}},
        {"send": {"id": "show", "type": "run_command", "name": "model", "args": ""}},
        {"wait": "error", "where": {"op_id": "show"}},
        {"send": {"id": "m", "type": "set_model", "model": "fake/m1"}},
        {"wait": "ack", "where": {"op_id": "m"}},
        say("again", "b"),
        {"wait": "turn_finished", "where": {"text": "hello at last"}},
        {"send": {"id": "q", "type": "shutdown"}},
        {"wait": "closed"},
    ]);
    let (output, events) = drive(&sandbox, &[], script);
    assert_ok(&output, &events);
    let configured = &events[0];
    assert_eq!(configured["type"], "session_configured", "{events:#?}");
    assert_eq!(configured["model"], Value::Null);
    let notice = &events[1];
    assert_eq!(notice["type"], "notice", "{events:#?}");
    assert_eq!(
        (notice["level"].as_str(), notice["text"].as_str()),
        (Some("warn"), Some(NO_PROVIDER))
    );
    let finished = of_type(&events, "turn_finished");
    assert_eq!(finished[0]["error"], NO_PROVIDER);
    assert_eq!(finished[1]["error"], Value::Null);
    let errors = of_type(&events, "error");
    assert_eq!(
        errors[0]["message"], NO_PROVIDER,
        "an effort alone needs a model"
    );
    assert_eq!(
        errors[1]["message"], NO_PROVIDER,
        "/model says there is none"
    );
    let requests = model.requests();
    assert_eq!(requests.len(), 1, "nothing was sent without a model");
    assert_eq!(requests[0].json["model"], "m1");
    // The keymap the frontend gets: the user's bindings, canonical.
    let keymap = configured["keymap"].as_array().unwrap();
    for binding in [
        json!({"mode": "normal", "key": "<C-s>", "binding": "submit"}),
        json!({"mode": "normal", "key": "<C-b>", "binding": {"command": "plan"}}),
        json!({"mode": "normal", "key": "<A-e>", "binding": {"command": "effort"}}),
    ] {
        assert!(keymap.contains(&binding), "{binding} in {keymap:#?}");
    }
}

/// `uji ARGS` in `sandbox` with the real plugins; (stdout, stderr, success).
fn uji(sandbox: &Sandbox, args: &[&str]) -> (String, String, bool) {
    let output = sandbox
        .uji()
        .env("UJI_PLUGIN_PATH", plugin_path())
        .args(args)
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    (stdout, stderr, output.status.success())
}

/// What `uji plugins` prints to stderr with `UJI_LUA_MEMORY=mib`.
fn plugins_with_lua_memory(sandbox: &Sandbox, mib: &str) -> String {
    let output = sandbox
        .uji()
        .env("UJI_PLUGIN_PATH", plugin_path())
        .env("UJI_LUA_MEMORY", mib)
        .arg("plugins")
        .output()
        .unwrap();
    text(&output).1
}

fn with_init(init: &str) -> Sandbox {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.config().join("init.lua"), init).unwrap();
    sandbox
}

#[test]
fn an_init_lua_that_does_not_compile_leaves_the_defaults_in_force_and_says_where() {
    let sandbox = with_init(
        "uji.tool.policy({ run_command = { deny = { \"/^git push/\" } } })\n\nlocal = 1\n",
    );
    let error = "init.lua:3: '<name>' expected near '=' (none of init.lua ran; the shipped defaults (uji.defaults) apply). Fix init.lua and start uji again";
    let (stdout, stderr, ok) = uji(&sandbox, &["policy", "check", "run_command", "rm -rf /"]);
    assert!(ok && stdout.starts_with("deny"), "{stdout}{stderr}");
    assert!(
        stderr.contains("uji: lua: error: ") && stderr.contains(error),
        "{stderr}"
    );
    let (stdout, _, _) = uji(&sandbox, &["policy", "check", "run_command", "git push"]);
    assert!(stdout.starts_with("ask"), "none of init.lua ran: {stdout}");
    for args in [&["tool", "list"][..], &["plugins"][..]] {
        let (_, stderr, ok) = uji(&sandbox, args);
        assert!(ok && stderr.contains(error), "uji {args:?}: {stderr}");
    }

    let script =
        json!([{"wait": "notice", "where": {"level": "error"}}, {"send": {"type": "shutdown"}}]);
    let (output, events) = drive(&sandbox, &[], script);
    assert_ok(&output, &events);
    let notice = of_type(&events, "notice")
        .into_iter()
        .find(|n| n["level"] == "error")
        .unwrap();
    assert_eq!(notice["source"], "lua");
    assert!(notice["text"].as_str().unwrap().contains(error), "{notice}");
    let first: Vec<&str> = events
        .iter()
        .take(3)
        .map(|e| e["type"].as_str().unwrap())
        .collect();
    assert_eq!(first[0], "session_configured");
    assert!(
        first.contains(&"notice"),
        "among the first events: {events:#?}"
    );
}

#[test]
fn an_init_lua_that_stops_keeps_what_ran_and_adds_the_defaults_it_had_not_loaded() {
    let sandbox = with_init(
        "uji.tool.policy({ run_command = { deny = { \"/^git push/\" } } })\nerror(\"boom\")\n",
    );
    let (stdout, stderr, _) = uji(&sandbox, &["policy", "check", "run_command", "git push"]);
    assert!(
        stdout.starts_with("deny"),
        "the part before the error ran: {stdout}"
    );
    assert!(
        stderr.contains("init.lua:2: boom (init.lua ran up to that error; the shipped defaults (uji.defaults) apply)"),
        "{stderr}"
    );
    let (stdout, _, _) = uji(&sandbox, &["policy", "check", "run_command", "rm -rf /"]);
    assert!(stdout.starts_with("deny"), "{stdout}");

    let sandbox = with_init(
        "require(\"uji.defaults\")\nuji.keymap.add(\"normal\", \"<C-b>\", \"nothing\")\nerror(\"late\")\n",
    );
    let (stdout, stderr, _) = uji(&sandbox, &["policy", "check", "run_command", "rm -rf /"]);
    assert!(stdout.starts_with("deny"), "{stdout}");
    assert!(
        stderr.contains("init.lua:3: late (init.lua ran up to that error; it had already loaded the shipped defaults (uji.defaults))"),
        "{stderr}"
    );
    // The defaults did not run twice: the unbinding after them stands.
    let script = json!([{"wait": "session_configured"}, {"send": {"type": "shutdown"}}]);
    let (output, events) = drive(&sandbox, &[], script);
    assert_ok(&output, &events);
    let keymap = events[0]["keymap"].as_array().unwrap();
    assert!(
        !keymap
            .iter()
            .any(|b| b["key"] == "<C-b>" && b["binding"] != "nothing"),
        "{keymap:#?}"
    );
}

#[test]
fn an_init_lua_that_never_returns_is_stopped_at_its_line_and_the_defaults_apply() {
    // One line: the hook may stop the loop at any of its instructions.
    let sandbox = with_init("local n = 0\n\nwhile true do n = n + 1 end\n");
    let (stdout, stderr, ok) = uji(&sandbox, &["plugins"]);
    assert!(ok, "{stdout}{stderr}");
    assert!(stdout.contains("lua "), "the Lua plugin loaded: {stdout}");
    assert!(
        stderr.contains("init.lua:3: stopped after running for 5 s while uji loaded its configuration (an endless loop or recursion?) (init.lua ran up to that error; the shipped defaults (uji.defaults) apply)"),
        "{stderr}"
    );
    let (stdout, _, _) = uji(&sandbox, &["policy", "check", "run_command", "rm -rf /"]);
    assert!(stdout.starts_with("deny"), "{stdout}");
}

#[test]
fn endless_recursion_caught_by_pcall_in_init_lua_does_not_hang_uji_run() {
    let model = FakeModel::start();
    model.push(answer("still here"));
    let sandbox = with_init(
        "require(\"uji.defaults\")\nlocal function f(n) return f(n + 1) end while true do pcall(f, 1) end\n",
    );
    let output = uji_tests::chat::uji_with_model(&sandbox, &model, "sk-test-key")
        .args(["run", "--model", "openrouter/m", "hi"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}{stderr}");
    assert_eq!(stdout, "still here\n");
    assert!(
        stderr.contains("init.lua:2: stopped after running for 5 s"),
        "the stop is not caught by the pcall around it: {stderr}"
    );
}

#[test]
fn lua_memory_is_limited_and_string_rep_past_the_limit_is_an_error() {
    let sandbox = with_init("require(\"uji.defaults\")\nlocal s = string.rep(\"x\", 2^32)\n");
    let (_, stderr, _) = uji(&sandbox, &["plugins"]);
    assert!(
        stderr.contains("init.lua:2: string.rep: the result would be 4294967296 bytes, over Lua's memory limit of 256 MiB (UJI_LUA_MEMORY sets it)"),
        "{stderr}"
    );

    let sandbox = with_init("local s = (\"x\"):rep(40 * 2^20)\nlocal t = {}\n");
    let stderr = plugins_with_lua_memory(&sandbox, "32");
    assert!(
        stderr.contains("init.lua:1: string.rep: the result would be 41943040 bytes, over Lua's memory limit of 32 MiB"),
        "{stderr}"
    );

    let sandbox = with_init("local t = {}\nfor i = 1, 1e9 do t[i] = i end\n");
    let stderr = plugins_with_lua_memory(&sandbox, "32");
    assert!(
        stderr.contains("out of memory: not enough memory (past Lua's memory limit; UJI_LUA_MEMORY sets it, in MiB) (init.lua ran up to that error; the shipped defaults (uji.defaults) apply)"),
        "{stderr}"
    );
}
