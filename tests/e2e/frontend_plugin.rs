//! Whole sessions driven through the plugin ABI by a frontend plugin, as
//! the TUI or an editor bridge will: the real `uji` binary started with
//! `--frontend scripted` (a fixture that follows a JSON script and logs
//! every event), the real tools, Lua and openai-chat plugins, and the fake
//! model server. Tests assert on the events, on what the model was sent
//! and on the files.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Stdio;

use serde_json::{Value, json};
use uji_fake_model::chat::ChatEvents;
use uji_fake_model::{FakeModel, Script};
use uji_tests::chat::call;
use uji_tests::scripted::{
    ack_of, answer, assert_ok, drive, drive_as_configured, of_type, plugin_path,
};
use uji_tests::{Sandbox, names, text, uji_bin};

fn command_call(id: &str, command: &str) -> Script {
    let args = json!({"command": command}).to_string();
    Script::sse(
        ChatEvents::new("m1")
            .tool_call(0, id, "run_command", &args, 2)
            .finish("tool_calls")
            .done(),
    )
}

/// A sandbox whose init.lua adds the fake provider (models m1 and m2), uses
/// m1, and adds a `/fast` command that switches to m2.
fn sandbox(model: &FakeModel) -> Sandbox {
    let sandbox = Sandbox::new();
    let init = format!(
        r#"
uji.provider.add({{ id = "fake", wire = "openai-chat", base_url = "{}", models = {{ "m1", "m2" }} }})
uji.model.use("fake/m1")
uji.command.add("fast", {{
  desc = "Switch to the fast model",
  handler = function(args) uji.model.use("fake/m2"); return "now on m2 " .. args end,
}})
uji.command.add("name", function(args)
  uji.session.set_title(args)
  return uji.session.info().model
end)
uji.on("before_stop", function(e)
  if e.text == "switch me" and e.continued == 0 then
    uji.model.use("fake/m2")
    return "go on with the other model"
  end
end)
"#,
        model.base_url()
    );
    std::fs::write(sandbox.config().join("init.lua"), init).unwrap();
    sandbox
}

/// [`sandbox`] with `more` appended to its init.lua.
fn sandbox_with(model: &FakeModel, more: &str) -> Sandbox {
    let sandbox = sandbox(model);
    let init = std::fs::read_to_string(sandbox.config().join("init.lua")).unwrap();
    sandbox.write_init(&format!("{init}\n{more}\n"));
    sandbox
}

/// One turn per file: the model writes it (`path`, `content`), then
/// answers `wrote PATH`.
/// [`sandbox`] where `write_file` runs without a question.
fn allowing_writes(model: &FakeModel) -> Sandbox {
    sandbox_with(
        model,
        "uji.tool.policy({ write_file = { default = 'allow' } })",
    )
}

/// What `uji checkpoints` lists for the sandbox's latest session.
fn listed_checkpoints(sandbox: &Sandbox) -> String {
    let listed = sandbox
        .uji()
        .arg("checkpoints")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (stdout, stderr) = text(&listed);
    assert!(listed.status.success(), "{stderr}");
    stdout
}

fn push_writes(model: &FakeModel, files: &[(&str, &str)]) {
    for (i, (path, content)) in files.iter().enumerate() {
        model
            .push(call(
                &format!("w{i}"),
                "write_file",
                json!({"path": path, "content": content}),
            ))
            .push(answer(&format!("wrote {path}")));
    }
}

fn say(text: &str, id: &str) -> Value {
    json!({"send": {"id": id, "type": "user_message", "text": text}})
}

fn wait(kind: &str) -> Value {
    json!({"wait": kind})
}

#[test]
fn the_first_event_configures_the_session_and_every_operation_is_answered() {
    let model = FakeModel::start();
    model.push(answer("hello there"));
    let sandbox = sandbox(&model);
    let script = json!([
        wait("session_configured"),
        say("hi", "op-1"),
        {"wait": "ack", "where": {"op_id": "op-1"}},
        wait("turn_finished"),
        {"send": {"id": "op-2", "type": "teleport", "to": "mars"}},
        {"wait": "error", "where": {"op_id": "op-2"}},
        {"send": {"id": "op-3", "type": "approval", "call_id": "nope", "decision": "allow_once"}},
        {"wait": "error", "where": {"op_id": "op-3"}},
        {"send": {"id": "op-4", "type": "shutdown"}},
        wait("closed"),
    ]);
    let (output, events) = drive(&sandbox, &[], script);
    assert_ok(&output, &events);
    let first = &events[0];
    assert_eq!(first["type"], "session_configured", "{events:#?}");
    assert_eq!(first["protocol"], 9);
    assert_eq!(first["resumed"], false);
    assert_eq!(first["model"]["provider"], "fake");
    assert_eq!(first["model"]["model"], "m1");
    assert_eq!(first["model"]["context_window"], 128_000);
    let commands = names(&first["commands"]);
    assert!(
        commands.contains(&"fast") && commands.contains(&"model"),
        "{commands:?}"
    );
    let fast = first["commands"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "fast")
        .unwrap();
    assert_eq!(fast["description"], "Switch to the fast model");
    assert_eq!(fast["source"], "lua");
    assert!(
        first["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "run_command")
    );
    let unknown = of_type(&events, "error")[0];
    assert!(
        unknown["message"]
            .as_str()
            .unwrap()
            .contains("unknown operation type"),
        "{unknown}"
    );
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    let started = kinds.iter().position(|k| *k == "turn_started").unwrap();
    let delta = kinds.iter().position(|k| *k == "delta").unwrap();
    let usage = kinds.iter().position(|k| *k == "usage").unwrap();
    let finished = kinds.iter().position(|k| *k == "turn_finished").unwrap();
    assert!(
        started < delta && delta < usage && usage < finished,
        "{kinds:?}"
    );
    let usage = of_type(&events, "usage")[0];
    assert_eq!(usage["context_used"], 100);
    assert_eq!(usage["context_window"], 128_000);
    assert_eq!(of_type(&events, "title_changed")[0]["title"], "hi");
}

#[test]
fn a_resumed_session_shows_its_history() {
    let model = FakeModel::start();
    model.push(answer("first answer"));
    let sandbox = sandbox(&model);
    let first = json!([say("remember the plum", "a"), wait("turn_finished")]);
    let (output, events) = drive(&sandbox, &[], first);
    assert_ok(&output, &events);
    let id = events[0]["id"].as_str().unwrap().to_string();

    let script = json!([wait("session_configured")]);
    let (output, events) = drive(&sandbox, &["resume", "--id", &id], script);
    assert_ok(&output, &events);
    let configured = &events[0];
    assert_eq!(configured["id"], id.as_str());
    assert_eq!(configured["resumed"], true);
    assert_eq!(configured["title"], "remember the plum");
    let history = configured["history"].as_array().unwrap();
    let roles: Vec<&str> = history
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant"]);
    assert_eq!(history[0]["text"], "remember the plum");
    assert_eq!(history[1]["text"], "first answer");

    // `uji resume` with no id takes the newest session of the directory.
    let (output, events) = drive(&sandbox, &["resume"], json!([wait("session_configured")]));
    assert_ok(&output, &events);
    assert_eq!(events[0]["id"], id.as_str());
}

#[test]
fn a_model_switch_reaches_the_next_request_from_an_operation_and_from_a_lua_command() {
    let model = FakeModel::start();
    model
        .push(answer("one"))
        .push(answer("two"))
        .push(answer("three"));
    let sandbox = sandbox(&model);
    let script = json!([
        say("first", "a"),
        wait("turn_finished"),
        {"send": {"id": "b", "type": "run_command", "name": "fast", "args": "please"}},
        {"wait": "ack", "where": {"op_id": "b"}},
        say("second", "c"),
        wait("turn_finished"),
        {"send": {"id": "d", "type": "set_model", "model": "fake/m1", "effort": "high"}},
        {"wait": "ack", "where": {"op_id": "d"}},
        say("third", "e"),
        wait("turn_finished"),
    ]);
    let (output, events) = drive(&sandbox, &[], script);
    assert_ok(&output, &events);
    let requests = model.requests();
    let models: Vec<&str> = requests
        .iter()
        .map(|r| r.json["model"].as_str().unwrap())
        .collect();
    assert_eq!(models, ["m1", "m2", "m1"]);
    assert_eq!(requests[2].json["reasoning_effort"], "high");
    let ack = of_type(&events, "ack")
        .into_iter()
        .find(|e| e["op_id"] == "b")
        .unwrap();
    assert_eq!(ack["result"]["output"], "now on m2 please");
    let changes: Vec<&Value> = of_type(&events, "model_changed");
    assert_eq!(changes[0]["model"]["model"], "m2");
    assert_eq!(changes[1]["model"]["model"], "m1");
    assert_eq!(changes[1]["model"]["effort"], "high");
}

#[test]
fn allow_for_the_session_asks_once_and_policy_check_shows_the_rule_meanwhile() {
    let model = FakeModel::start();
    model
        .push(command_call("c1", "echo once > one.txt"))
        .push(answer("did one"))
        .push(command_call("c2", "echo once > one.txt"))
        .push(answer("did two"));
    let sandbox = sandbox(&model);
    let uji = uji_bin().display().to_string();
    let script = json!([
        say("run it", "a"),
        wait("approval_request"),
        {"send": {"id": "b", "type": "approval", "decision": "allow_session"}, "from_last": ["call_id"]},
        wait("turn_finished"),
        {"exec": [uji, "policy", "check", "run_command", "echo once > one.txt"]},
        say("again", "c"),
        wait("turn_finished"),
    ]);
    let (output, events) = drive(&sandbox, &[], script);
    assert_ok(&output, &events);
    assert_eq!(of_type(&events, "approval_request").len(), 1, "{events:#?}");
    let question = of_type(&events, "approval_request")[0];
    assert_eq!(
        question["answers"],
        json!(["allow_once", "allow_session", "deny", "stop"])
    );
    let resolved = of_type(&events, "approval_resolved")[0];
    assert_eq!(resolved["resolution"], "answered");
    assert_eq!(resolved["decision"], "allow_session");
    let started = of_type(&events, "tool_started");
    assert_eq!(started[0]["decision"], "ask");
    assert_eq!(started[1]["decision"], "allow");
    assert!(
        started[1]["because"]
            .as_str()
            .unwrap()
            .starts_with("session rule"),
        "{}",
        started[1]
    );
    let check = of_type(&events, "fixture_exec")[0]["stdout"]
        .as_str()
        .unwrap();
    assert!(check.starts_with("allow (session) session rule"), "{check}");
    let finished = of_type(&events, "tool_finished");
    assert_eq!(finished.len(), 2);
    assert_eq!(finished[1]["is_error"], false);
    // The second call ran too (the model read its result).
    let sent = &model.requests()[3].json["messages"];
    let results: Vec<&Value> = sent
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .collect();
    assert_eq!(results.len(), 2);
    assert!(
        !results[1]["content"]
            .as_str()
            .unwrap()
            .starts_with("denied")
    );
    // Outside the session, the rule is gone.
    let after = sandbox
        .uji()
        .args(["policy", "check", "run_command", "echo once > one.txt"])
        .output()
        .unwrap();
    assert!(text(&after).0.starts_with("ask"), "{:?}", text(&after));
}

#[test]
fn a_shell_command_is_shown_and_saved_but_never_sent_to_the_model() {
    let model = FakeModel::start();
    model.push(answer("ok"));
    let sandbox = sandbox(&model);
    let script = json!([
        {"send": {"id": "s", "type": "shell", "command": "echo from-the-shell; echo oops >&2; exit 3"}},
        {"wait": "ack", "where": {"op_id": "s"}},
        say("hello", "a"),
        wait("turn_finished"),
    ]);
    let (output, events) = drive(&sandbox, &[], script);
    assert_ok(&output, &events);
    let ack = of_type(&events, "ack")
        .into_iter()
        .find(|e| e["op_id"] == "s")
        .unwrap();
    assert_eq!(ack["result"]["exit_code"], 3);
    let lines: Vec<&str> = of_type(&events, "progress")
        .iter()
        .map(|e| e["line"].as_str().unwrap())
        .collect();
    assert!(
        lines.contains(&"from-the-shell") && lines.contains(&"oops"),
        "{lines:?}"
    );
    let shell = of_type(&events, "message")
        .into_iter()
        .find(|e| e["message"]["role"] == "shell")
        .unwrap();
    assert!(
        shell["message"]["output"]
            .as_str()
            .unwrap()
            .contains("from-the-shell")
    );
    let id = events[0]["id"].as_str().unwrap();
    let saved = std::fs::read_to_string(
        sandbox
            .root
            .path()
            .join(format!("data/sessions/{id}.jsonl")),
    )
    .unwrap();
    assert!(saved.contains("\"role\":\"shell\"") && saved.contains("from-the-shell"));
    assert!(!model.requests()[0].body_text().contains("from-the-shell"));
}

#[test]
fn an_interrupt_withdraws_the_open_question() {
    let model = FakeModel::start();
    model.push(command_call("c1", "touch never.txt"));
    let sandbox = sandbox(&model);
    let script = json!([
        say("do it", "a"),
        wait("approval_request"),
        {"send": {"id": "i", "type": "interrupt"}},
        {"wait": "approval_resolved", "where": {"resolution": "withdrawn"}},
        wait("turn_finished"),
    ]);
    let (output, events) = drive(&sandbox, &[], script);
    assert_ok(&output, &events);
    assert_eq!(of_type(&events, "turn_finished")[0]["interrupted"], true);
    let finished = of_type(&events, "tool_finished")[0];
    assert_eq!(finished["is_error"], true);
    assert!(!sandbox.work().join("never.txt").exists());
}

#[test]
fn a_retried_stream_withdraws_its_partial_text() {
    let model = FakeModel::start();
    model
        .push(Script::drop_after(
            ChatEvents::new("m1").text("partial answ", 2).build(),
        ))
        .push(answer("whole answer"));
    let sandbox = sandbox(&model);
    let script = json!([say("hi", "a"), wait("turn_finished")]);
    let (output, events) = drive(&sandbox, &[], script);
    assert_ok(&output, &events);
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    let retry = kinds.iter().position(|k| *k == "stream_retry").unwrap();
    // What a frontend keeps: the deltas after the last retry.
    let kept: String = events[retry..]
        .iter()
        .filter(|e| e["type"] == "delta")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    let dropped: String = events[..retry]
        .iter()
        .filter(|e| e["type"] == "delta")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(dropped, "partial answ");
    assert_eq!(kept, "whole answer");
    assert_eq!(events[retry]["attempt"], 1);
    assert_eq!(of_type(&events, "turn_finished")[0]["text"], "whole answer");
}

/// Runs the protocol 1 fixture (operations without ids, `approval` with
/// `allow: bool`) on `write the file` against `model`, refusing its
/// question with `deny` as guidance when given. Returns the call ids it was
/// asked about, one a line, and the final text it wrote.
fn run_legacy(sandbox: &Sandbox, deny: Option<&str>) -> (String, String) {
    let out = sandbox.root.path().join("legacy-out.txt");
    let asked = sandbox.root.path().join("legacy-asked.txt");
    let mut uji = sandbox.uji();
    uji.env("UJI_PLUGIN_PATH", plugin_path())
        .env("UJI_LEGACY_PROMPT", "write the file")
        .env("UJI_LEGACY_OUT", &out)
        .env("UJI_LEGACY_ASKED", &asked);
    if let Some(guidance) = deny {
        uji.env("UJI_LEGACY_DENY", guidance);
    }
    let output = uji
        .args(["--frontend", "legacy"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success(), "{:?}", text(&output));
    (
        std::fs::read_to_string(&asked).unwrap_or_default(),
        std::fs::read_to_string(&out).unwrap(),
    )
}

/// The tool result the model was sent in its second request.
fn tool_result(model: &FakeModel) -> Value {
    let requests = model.requests();
    assert_eq!(requests.len(), 2, "one call, one answer");
    let messages = requests[1].json["messages"].as_array().unwrap();
    messages.iter().find(|m| m["role"] == "tool").unwrap()["content"].clone()
}

#[test]
fn a_frontend_built_for_protocol_1_still_works() {
    let model = FakeModel::start();
    model
        .push(command_call("c1", "echo legacy > legacy.txt"))
        .push(answer("legacy done"));
    let sandbox = sandbox(&model);
    let (asked, out) = run_legacy(&sandbox, None);
    assert_eq!(out, "legacy done");
    assert_eq!(asked, "c1\n", "the call was asked about and allowed");
    assert_eq!(
        std::fs::read_to_string(sandbox.work().join("legacy.txt")).unwrap(),
        "legacy\n"
    );
    let first = model.requests()[0].json["messages"].clone();
    let prompt = first.as_array().unwrap().last().unwrap();
    assert_eq!(prompt["content"], "write the file", "{first}");
    let result = tool_result(&model);
    assert!(!result.as_str().unwrap().starts_with("denied"), "{result}");
}

#[test]
fn a_protocol_1_refusal_with_guidance_reaches_the_model() {
    let model = FakeModel::start();
    model
        .push(command_call("c1", "echo legacy > legacy.txt"))
        .push(answer("left it alone"));
    let sandbox = sandbox(&model);
    let (asked, out) = run_legacy(&sandbox, Some("not that file"));
    assert_eq!(out, "left it alone");
    assert_eq!(asked, "c1\n");
    assert!(!sandbox.work().join("legacy.txt").exists());
    assert_eq!(
        tool_result(&model),
        "denied: user denied\nThe user says: not that file"
    );
}

#[test]
fn a_missing_frontend_is_named_with_what_to_do() {
    let sandbox = Sandbox::new();
    let output = sandbox
        .uji()
        .env("UJI_PLUGIN_PATH", plugin_path())
        .env("OPENAI_API_KEY", "sk-x")
        .args(["--frontend", "nope"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = text(&output).1;
    assert!(
        stderr.contains("no frontend named \"nope\" is installed (loaded frontends: acp, headless, legacy, scripted, tui)"),
        "{stderr}"
    );
    assert!(stderr.contains("--frontend NAME"), "{stderr}");
    let output = sandbox
        .uji()
        .args(["--frontend", "headless"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        text(&output).1.contains("not interactive"),
        "{:?}",
        text(&output)
    );
}

#[test]
fn a_model_switched_from_before_stop_answers_the_next_request_and_lua_renames_the_session() {
    let model = FakeModel::start();
    model.push(answer("switch me")).push(answer("from m2"));
    let sandbox = sandbox(&model);
    let script = json!([
        {"send": {"id": "n", "type": "run_command", "name": "name", "args": "my session"}},
        {"wait": "ack", "where": {"op_id": "n"}},
        say("hi", "a"),
        wait("turn_finished"),
    ]);
    let (output, events) = drive(&sandbox, &[], script);
    assert_ok(&output, &events);
    let ack = of_type(&events, "ack")
        .into_iter()
        .find(|e| e["op_id"] == "n")
        .unwrap();
    assert_eq!(ack["result"]["output"], "fake/m1");
    assert_eq!(of_type(&events, "title_changed")[0]["title"], "my session");
    let models: Vec<String> = model
        .requests()
        .iter()
        .map(|r| r.json["model"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(models, ["m1", "m2"], "one turn, the nudge went to m2");
    assert_eq!(of_type(&events, "turn_finished")[0]["text"], "from m2");
    let listed = sandbox.uji().args(["list"]).output().unwrap();
    assert!(
        text(&listed).0.contains("my session"),
        "{:?}",
        text(&listed)
    );
}

#[test]
fn the_config_names_the_interactive_frontend() {
    let model = FakeModel::start();
    let sandbox = sandbox(&model);
    let init = sandbox.config().join("init.lua");
    let mut lua = std::fs::read_to_string(&init).unwrap();
    lua.push_str("uji.config.set(\"frontend\", \"scripted\")\n");
    std::fs::write(&init, lua).unwrap();
    let (output, events) = drive_as_configured(&sandbox, &[], json!([wait("session_configured")]));
    assert_ok(&output, &events);
    assert_eq!(events[0]["type"], "session_configured", "{events:#?}");
}

/// Two saved sessions: the frontend lists them, switches to the older one
/// (its history arrives), deletes the other, and lists the models.
#[test]
fn sessions_are_listed_resumed_and_deleted_and_models_listed() {
    let model = FakeModel::start();
    model.push(answer("first answer"));
    model.push(answer("second answer"));
    let sandbox = sandbox(&model);
    let first_run = json!([wait("session_configured"), say("first question", "1"), wait("turn_finished"),
        {"send": {"id": "2", "type": "shutdown"}}, wait("closed")]);
    let (output, events) = drive(&sandbox, &[], first_run);
    assert_ok(&output, &events);
    let first_id = events[0]["id"].as_str().unwrap().to_string();
    let second_run = json!([wait("session_configured"), say("second question", "1"), wait("turn_finished"),
        {"send": {"id": "2", "type": "list_sessions"}},
        {"wait": "ack", "where": {"op_id": "2"}},
        {"send": {"id": "3", "type": "resume_session", "session_id": first_id}},
        {"wait": "session_configured", "where": {"id": first_id}},
        {"send": {"id": "4", "type": "list_models"}},
        {"wait": "ack", "where": {"op_id": "4"}},
        {"send": {"id": "5", "type": "list_sessions"}},
        {"wait": "ack", "where": {"op_id": "5"}},
        {"send": {"id": "6", "type": "shutdown"}}, wait("closed")]);
    let (output, events) = drive(&sandbox, &[], second_run);
    assert_ok(&output, &events);
    let second_id = events[0]["id"].as_str().unwrap().to_string();
    let acks = of_type(&events, "ack");
    let listed = |op: &str| -> Vec<String> {
        let ack = acks.iter().find(|a| a["op_id"] == op).unwrap();
        ack["result"]["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["id"].as_str().unwrap().to_string())
            .collect()
    };
    let before = listed("2");
    assert!(
        before.contains(&first_id) && before.contains(&second_id),
        "{before:?}"
    );
    let resumed = of_type(&events, "session_configured")[1];
    assert_eq!(resumed["resumed"], true);
    assert_eq!(resumed["history"][0]["text"], "first question", "{resumed}");
    let models = acks.iter().find(|a| a["op_id"] == "4").unwrap();
    let models = models["result"]["models"].as_array().unwrap();
    assert!(
        models
            .iter()
            .any(|m| m["provider"] == "fake" && m["model"] == "m2" && m["available"] == true),
        "{models:?}"
    );

    // Now in the first session, delete the second.
    let third_run = json!([wait("session_configured"),
        {"send": {"id": "1", "type": "delete_session", "session_id": second_id}},
        {"wait": "ack", "where": {"op_id": "1"}},
        {"send": {"id": "2", "type": "delete_session", "session_id": first_id}},
        {"wait": "error", "where": {"op_id": "2"}},
        {"send": {"id": "3", "type": "list_sessions"}},
        {"wait": "ack", "where": {"op_id": "3"}},
        {"send": {"id": "4", "type": "shutdown"}}, wait("closed")]);
    let (output, events) = drive(&sandbox, &["resume", "--id", &first_id], third_run);
    assert_ok(&output, &events);
    let after: Vec<&str> = of_type(&events, "ack")
        .iter()
        .find(|a| a["op_id"] == "3")
        .unwrap()["result"]["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        after,
        vec![first_id.as_str()],
        "the running session stays, the other is gone"
    );
}

/// Plan mode puts `PLAN` in the status line through `uji.status.add`, takes
/// it away again, and a fresh session keeps the items that are set.
fn write_call(id: &str, path: &str) -> Script {
    let args = json!({"path": path, "content": "made\n"}).to_string();
    Script::sse(
        ChatEvents::new("m1")
            .tool_call(0, id, "write_file", &args, 2)
            .finish("tool_calls")
            .done(),
    )
}

/// Issue 28: the approval modes. Accept edits writes without a question,
/// plan (from `/plan` too) denies the write and tells the model it plans,
/// and the mode holds across a session switch.
#[test]
fn approval_modes_switch_by_set_mode_and_by_plan_and_hold_across_sessions() {
    let model = FakeModel::start();
    model
        .push(write_call("w1", "accepted.txt"))
        .push(answer("wrote it"))
        .push(write_call("w2", "planned.txt"))
        .push(answer("here is the plan"));
    let sandbox = sandbox(&model);
    let init = sandbox.config().join("init.lua");
    let mut config = std::fs::read_to_string(&init).unwrap();
    config.push_str("\nrequire(\"uji.planmode\").setup()\n");
    std::fs::write(&init, config).unwrap();
    let script = json!([
        wait("session_configured"),
        {"send": {"id": "m", "type": "set_mode", "mode": "accept_edits"}},
        {"wait": "ack", "where": {"op_id": "m"}},
        say("write it", "a"),
        wait("turn_finished"),
        {"send": {"id": "p", "type": "run_command", "name": "plan"}},
        {"wait": "ack", "where": {"op_id": "p"}},
        say("now plan the rest", "b"),
        wait("turn_finished"),
        {"send": {"id": "n", "type": "new_session"}},
        {"wait": "ack", "where": {"op_id": "n"}},
        {"send": {"id": "x", "type": "set_mode", "mode": "reckless"}},
        {"wait": "error", "where": {"op_id": "x"}},
        {"send": {"id": "q", "type": "run_command", "name": "plan"}},
        {"wait": "ack", "where": {"op_id": "q"}},
        {"send": {"id": "s", "type": "shutdown"}},
        wait("closed"),
    ]);
    let (output, events) = drive(&sandbox, &[], script);
    assert_ok(&output, &events);
    assert!(
        of_type(&events, "approval_request").is_empty(),
        "{events:#?}"
    );
    assert_eq!(
        std::fs::read_to_string(sandbox.work().join("accepted.txt")).unwrap(),
        "made\n"
    );
    assert!(!sandbox.work().join("planned.txt").exists());
    let modes: Vec<&Value> = of_type(&events, "mode_changed")
        .iter()
        .map(|e| &e["mode"])
        .collect();
    assert_eq!(
        modes,
        [&json!("accept_edits"), &json!("plan"), &json!("ask")]
    );
    let started = of_type(&events, "tool_started");
    assert!(
        started[0]["because"]
            .as_str()
            .unwrap()
            .contains("accept-edits"),
        "{}",
        started[0]
    );
    assert_eq!(started[1]["decision"], "deny");
    let configured = of_type(&events, "session_configured");
    assert_eq!(configured[0]["mode"], "ask");
    assert_eq!(configured[1]["mode"], "plan");
    // The planning turn's requests carry the plan paragraph, and the model
    // read why the write did not run.
    let requests = model.requests();
    assert!(!requests[1].body_text().contains("You are in plan mode"));
    let planning = requests[3].body_text();
    assert!(planning.contains("You are in plan mode"), "{planning}");
    assert!(planning.contains("plan mode is on"), "{planning}");
}

#[test]
fn a_stop_answer_denies_the_call_skips_the_rest_and_ends_the_turn() {
    let model = FakeModel::start();
    let first = json!({"command": "touch first.txt"}).to_string();
    let second = json!({"command": "touch second.txt"}).to_string();
    model
        .push(Script::sse(
            ChatEvents::new("m1")
                .tool_call(0, "c1", "run_command", &first, 2)
                .tool_call(1, "c2", "run_command", &second, 2)
                .finish("tool_calls")
                .done(),
        ))
        .push(answer("understood"));
    let sandbox = sandbox(&model);
    let script = json!([
        say("make two files", "a"),
        wait("approval_request"),
        {"send": {"id": "s", "type": "approval", "decision": "stop"}, "from_last": ["call_id"]},
        {"wait": "ack", "where": {"op_id": "s"}},
        wait("turn_finished"),
        say("make none", "b"),
        wait("turn_finished"),
    ]);
    let (output, events) = drive(&sandbox, &[], script);
    assert_ok(&output, &events);
    assert_eq!(of_type(&events, "approval_request").len(), 1, "{events:#?}");
    assert_eq!(of_type(&events, "turn_finished")[0]["interrupted"], true);
    assert_eq!(of_type(&events, "approval_resolved")[0]["decision"], "stop");
    assert!(!sandbox.work().join("first.txt").exists());
    assert!(!sandbox.work().join("second.txt").exists());
    // Nothing went to the model between the stop and the next message,
    // and that message reads both calls as not run.
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    let results: Vec<String> = requests[1].json["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(results[0].contains("the user stopped here"), "{results:?}");
    assert!(results[1].contains("before this tool ran"), "{results:?}");
}

#[test]
fn a_decision_the_question_does_not_offer_is_refused_and_the_question_stays_open() {
    let model = FakeModel::start();
    model
        .push(command_call("c1", "touch later.txt"))
        .push(answer("done"));
    let sandbox = sandbox(&model);
    let script = json!([
        say("do it", "a"),
        wait("approval_request"),
        {"send": {"id": "x", "type": "approval", "decision": "maybe"}, "from_last": ["call_id"]},
        {"wait": "error", "where": {"op_id": "x"}},
        {"send": {"id": "y", "type": "approval", "call_id": "c1", "decision": "allow_once"}},
        wait("turn_finished"),
    ]);
    let (output, events) = drive(&sandbox, &[], script);
    assert_ok(&output, &events);
    let refused = of_type(&events, "error")
        .into_iter()
        .find(|e| e["op_id"] == "x")
        .unwrap();
    let message = refused["message"].as_str().unwrap();
    assert!(
        message.contains("allow_once, allow_session, deny, stop"),
        "{message}"
    );
    assert!(sandbox.work().join("later.txt").exists());
}

/// The output of the run_command op `op_id`.
fn command_output<'a>(events: &'a [Value], op_id: &str) -> &'a str {
    of_type(events, "ack")
        .into_iter()
        .find(|e| e["op_id"] == op_id)
        .and_then(|e| e["result"]["output"].as_str())
        .unwrap_or_else(|| panic!("no output for {op_id}: {events:#?}"))
}

fn run(name: &str, args: &str, id: &str) -> Value {
    json!({"send": {"id": id, "type": "run_command", "name": name, "args": args}})
}

fn acked(id: &str) -> Value {
    json!({"wait": "ack", "where": {"op_id": id}})
}

/// Issue 28 part 3: /status, /export (never over a file), /clear and
/// /resume by the short id the picker shows.
#[test]
fn status_export_clear_and_resume_by_short_id() {
    let model = FakeModel::start();
    model.push(answer("The answer, in **bold**."));
    let sandbox = sandbox(&model);
    std::fs::write(sandbox.work().join("taken.md"), "mine").unwrap();
    let script = json!([
        say("explain the parser", "a"),
        wait("turn_finished"),
        run("status", "", "s"),
        acked("s"),
        run("export", "", "e"),
        acked("e"),
        run("export", "taken.md", "t"),
        {"wait": "error", "where": {"op_id": "t"}},
        run("clear", "", "c"),
        acked("c"),
    ]);
    let (output, events) = drive(&sandbox, &[], script);
    assert_ok(&output, &events);
    let status = command_output(&events, "s");
    let first = events[0]["id"].as_str().unwrap().to_string();
    for expected in [
        "fake/m1",
        &first,
        "explain the parser",
        sandbox.work().to_str().unwrap(),
        "sandbox    workspace-write",
        "mode       ask",
        "tokens     100 in, 20 out",
    ] {
        assert!(status.contains(expected), "{expected:?} in:\n{status}");
    }
    let saved = sandbox.work().join(format!("uji-{}.md", &first[..8]));
    assert!(command_output(&events, "e").contains(saved.to_str().unwrap()));
    let markdown = std::fs::read_to_string(&saved).unwrap();
    assert!(
        markdown.contains("## You\n\nexplain the parser"),
        "{markdown}"
    );
    assert!(
        markdown.contains("## uji\n\nThe answer, in **bold**."),
        "{markdown}"
    );
    assert_eq!(
        std::fs::read_to_string(sandbox.work().join("taken.md")).unwrap(),
        "mine"
    );
    let refused = of_type(&events, "error")
        .into_iter()
        .find(|e| e["op_id"] == "t")
        .unwrap();
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("exists already"),
        "{refused}"
    );
    let configured = of_type(&events, "session_configured");
    assert_eq!(configured.len(), 2, "/clear starts a new session");
    assert_ne!(configured[1]["id"], configured[0]["id"]);

    // The short id the picker shows resumes the session.
    let script = json!([run("resume", &first[..8], "r"), acked("r")]);
    let (output, events) = drive(&sandbox, &[], script);
    assert_ok(&output, &events);
    let configured = of_type(&events, "session_configured");
    assert_eq!(configured.last().unwrap()["id"], first.as_str());
}

#[test]
fn diff_shows_git_diff_in_a_repository_and_the_session_s_edits_elsewhere() {
    let model = FakeModel::start();
    model
        .push(write_call("w1", "made.txt"))
        .push(answer("made it"));
    let sandbox = sandbox(&model);
    let script = json!([
        {"send": {"id": "m", "type": "set_mode", "mode": "accept_edits"}},
        acked("m"),
        say("make a file", "a"),
        wait("turn_finished"),
        run("diff", "", "d"),
        acked("d"),
    ]);
    let (output, events) = drive(&sandbox, &[], script);
    assert_ok(&output, &events);
    let diff = command_output(&events, "d");
    assert!(diff.contains("+made"), "the session's write: {diff}");

    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(sandbox.work())
            .output()
            .unwrap();
        assert!(status.status.success(), "{status:?}");
    };
    git(&["init", "-q"]);
    git(&["add", "made.txt"]);
    git(&["commit", "-q", "-m", "first"]);
    std::fs::write(sandbox.work().join("made.txt"), "changed\n").unwrap();
    std::fs::write(sandbox.work().join("new.txt"), "n\n").unwrap();
    let script = json!([run("diff", "", "d"), acked("d")]);
    let (output, events) = drive(&sandbox, &[], script);
    assert_ok(&output, &events);
    let diff = command_output(&events, "d");
    assert!(diff.contains("-made\n+changed"), "{diff}");
    assert!(
        diff.contains("new file, not tracked yet: new.txt"),
        "{diff}"
    );
}

#[test]
fn init_asks_the_model_to_write_agents_md() {
    let model = FakeModel::start();
    model.push(answer("I will look around."));
    let sandbox = sandbox(&model);
    let script = json!([run("init", "", "i"), acked("i"), wait("turn_finished")]);
    let (output, events) = drive(&sandbox, &[], script);
    assert_ok(&output, &events);
    let sent = model.requests()[0].body_text();
    assert!(sent.contains("Write an AGENTS.md file"), "{sent}");
}

#[test]
fn rewind_drops_the_conversation_from_a_user_message_on_and_a_resume_keeps_it_dropped() {
    let model = FakeModel::start();
    model
        .push(answer("first answer"))
        .push(answer("second answer"))
        .push(answer("after the rewind"));
    let sandbox = sandbox(&model);
    let script = json!([
        say("one", "a"),
        wait("turn_finished"),
        say("two", "b"),
        wait("turn_finished"),
        // Message 2 is the assistant's answer: not a message to go back to.
        {"send": {"id": "bad", "type": "rewind", "to_seq": 2}},
        {"wait": "error", "where": {"op_id": "bad"}},
        {"send": {"id": "r", "type": "rewind", "to_seq": 3}},
        {"wait": "ack", "where": {"op_id": "r"}},
        say("two, better", "c"),
        wait("turn_finished"),
    ]);
    let (output, events) = drive(&sandbox, &[], script);
    assert_ok(&output, &events);
    let error = of_type(&events, "error")[0]["message"].as_str().unwrap();
    assert!(error.contains("not one of your messages"), "{error}");
    let ack = ack_of(&events, "r");
    assert_eq!(ack["result"], json!({"dropped": 2, "text": "two"}));
    // The frontend got the shortened history before the answer.
    let configured = of_type(&events, "session_configured");
    let history = configured.last().unwrap()["history"].as_array().unwrap();
    let texts: Vec<&str> = history
        .iter()
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["one", "first answer"]);
    // The model sees the conversation without the dropped exchange.
    let sent = model.requests()[2].body_text();
    assert!(
        sent.contains("two, better") && sent.contains("first answer"),
        "{sent}"
    );
    assert!(
        !sent.contains("second answer") && !sent.contains("\"two\""),
        "{sent}"
    );

    let id = events[0]["id"].as_str().unwrap().to_string();
    let (output, events) = drive(
        &sandbox,
        &["resume", "--id", &id],
        json!([wait("session_configured")]),
    );
    assert_ok(&output, &events);
    let history = events[0]["history"].as_array().unwrap();
    let texts: Vec<&str> = history
        .iter()
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts,
        ["one", "first answer", "two, better", "after the rewind"]
    );
}

#[test]
fn rewind_with_code_only_puts_the_files_back_and_keeps_the_conversation() {
    let model = FakeModel::start();
    push_writes(&model, &[("n.txt", "one\n"), ("n.txt", "two\n")]);
    let sandbox = allowing_writes(&model);
    let script = json!([
        say("one", "a"),
        wait("turn_finished"),
        say("two", "b"),
        wait("turn_finished"),
        {"send": {"id": "r", "type": "rewind", "to_seq": 5, "code": true, "conversation": false}},
        {"wait": "ack", "where": {"op_id": "r"}},
    ]);
    let (output, events) = drive(&sandbox, &[], script);
    assert_ok(&output, &events);
    let ack = ack_of(&events, "r");
    assert_eq!(ack["result"]["dropped"], 0, "{ack}");
    let restored = ack["result"]["restored"].as_str().unwrap();
    assert!(restored.contains("restored n.txt"), "{restored}");
    assert_eq!(
        std::fs::read_to_string(sandbox.work().join("n.txt")).unwrap(),
        "one\n",
        "the file as it was before the second message"
    );
    assert_eq!(
        of_type(&events, "session_configured").len(),
        1,
        "the conversation did not change"
    );
}

/// Issue 31: turn numbers are never given twice. After a rewind of the
/// conversation only (the files stay), the next message is a new turn, so
/// taking the code back to before it reverts that turn alone, not the
/// turns the rewind took out of the conversation.
#[test]
fn a_code_rewind_after_a_conversation_rewind_reverts_only_the_turns_after_its_message() {
    let model = FakeModel::start();
    push_writes(
        &model,
        &[
            ("a.txt", "a\n"),
            ("b.txt", "b\n"),
            ("c.txt", "c\n"),
            ("d.txt", "d\n"),
        ],
    );
    let sandbox = allowing_writes(&model);
    // Messages 1, 5 and 9 are the user's (each turn: the message, a call,
    // its result, the answer); the one after the rewind is 13.
    let script = json!([
        say("one", "a"),
        wait("turn_finished"),
        say("two", "b"),
        wait("turn_finished"),
        say("three", "c"),
        wait("turn_finished"),
        {"send": {"id": "r1", "type": "rewind", "to_seq": 5, "code": false, "conversation": true}},
        {"wait": "ack", "where": {"op_id": "r1"}},
        say("two, again", "d"),
        wait("turn_finished"),
        {"send": {"id": "r2", "type": "rewind", "to_seq": 13, "code": true, "conversation": false}},
        {"wait": "ack", "where": {"op_id": "r2"}},
    ]);
    let (output, events) = drive(&sandbox, &[], script);
    assert_ok(&output, &events);
    let ack = ack_of(&events, "r2");
    let restored = ack["result"]["restored"].as_str().unwrap();
    assert!(
        restored.starts_with("code back to before turn 4"),
        "{restored}"
    );
    let work = sandbox.work();
    assert!(!work.join("d.txt").exists(), "the new turn's file went");
    for kept in ["a.txt", "b.txt", "c.txt"] {
        assert!(work.join(kept).exists(), "{kept} stays: {restored}");
    }
    // Each turn has a number of its own in the listing.
    let stdout = listed_checkpoints(&sandbox);
    for turn in [
        "turn 1 changed: a.txt",
        "turn 2 (its message was rewound out of the conversation) changed: b.txt",
        "turn 3 (its message was rewound out of the conversation) changed: c.txt",
        "turn 4 changed: d.txt",
    ] {
        assert!(stdout.contains(turn), "{turn:?} in {stdout}");
    }
}

#[test]
fn lua_lists_the_checkpoints_and_undoes_a_turn_through_uji_checkpoint() {
    let model = FakeModel::start();
    push_writes(&model, &[("n.txt", "new\n")]);
    let sandbox = sandbox_with(
        &model,
        "uji.tool.policy({ write_file = { default = 'allow' } })\n\
         uji.command.add('cps', function()\n\
           local out = {}\n\
           for _, c in ipairs(uji.checkpoint.list()) do out[#out + 1] = c.turn .. ':' .. c.reason end\n\
           return table.concat(out, ';')\n\
         end)\n\
         uji.command.add('lundo', function(args)\n\
           local r = uji.checkpoint.restore({ undo = true, dry_run = args == 'dry' })\n\
           return r.title .. ' ' .. r.files[1].action .. ' ' .. r.files[1].path .. ' ' .. tostring(r.applied)\n\
         end)\n\
         uji.command.add('lbad', function() return uji.checkpoint.restore({ undo = true, redo = true }) end)",
    );
    std::fs::write(sandbox.work().join("n.txt"), "old\n").unwrap();
    let script = json!([
        say("write it", "a"),
        wait("turn_finished"),
        run("cps", "", "l"),
        acked("l"),
        run("lundo", "dry", "d"),
        acked("d"),
        run("lundo", "", "u"),
        acked("u"),
        run("lbad", "", "b"),
        {"wait": "error", "where": {"op_id": "b"}},
    ]);
    let (output, events) = drive(&sandbox, &[], script);
    assert_ok(&output, &events);
    let output_of = |id: &str| command_output(&events, id).to_string();
    let listed = output_of("l");
    assert!(listed.starts_with("1:write_file n.txt"), "{listed}");
    assert!(listed.contains("1:turn end"), "{listed}");
    assert_eq!(output_of("d"), "undo of turn 1 restore n.txt false");
    assert_eq!(output_of("u"), "undo of turn 1 restore n.txt true");
    assert_eq!(
        std::fs::read_to_string(sandbox.work().join("n.txt")).unwrap(),
        "old\n"
    );
    let error = of_type(&events, "error")[0]["message"].as_str().unwrap();
    assert!(error.contains("exactly one of undo"), "{error}");
}

/// `uji.checkpoint.restore` with `turn`, `overwrite` and `rewind`
/// (docs/lua.md), and refused while a turn runs.
#[test]
fn lua_restores_a_turn_overwrites_only_when_told_rewinds_and_waits_for_the_turn() {
    let model = FakeModel::start();
    push_writes(&model, &[("a.txt", "a\n"), ("b.txt", "b\n")]);
    model
        .push(call("t1", "busy", json!({})))
        .push(answer("tried"));
    let sandbox = sandbox_with(
        &model,
        "uji.tool.policy({ write_file = { default = 'allow' } })\n\
         uji.tool.add('busy', { read_only = true, policy = 'allow', run = function()\n\
           local ok, err = pcall(uji.checkpoint.restore, { undo = true })\n\
           return tostring(ok) .. ' ' .. tostring(err)\n\
         end })\n\
         uji.command.add('lr', function(args)\n\
           local kind, n, flag = args:match('^(%a+) (%d+) ?(%a*)$')\n\
           local r = uji.checkpoint.restore({ [kind] = tonumber(n), overwrite = flag == 'overwrite' })\n\
           local out = { r.title, tostring(r.applied) }\n\
           for _, f in ipairs(r.files) do\n\
             out[#out + 1] = f.action .. ' ' .. f.path .. ' done=' .. tostring(f.done)\n\
               .. (f.conflict and (' (' .. f.conflict .. ')') or '')\n\
           end\n\
           return table.concat(out, '; ')\n\
         end)",
    );
    // Every checkpoint is heard, whatever took it (outside the workspace,
    // which the log would otherwise change).
    let heard = sandbox.root.path().join("heard.log");
    let init = std::fs::read_to_string(sandbox.config().join("init.lua")).unwrap();
    sandbox.write_init(&format!(
        "{init}\nuji.on('checkpoint_created', function(e)\n\
           local f = io.open({:?}, 'a'); f:write(e.turn, ' ', e.reason, '\\n'); f:close() end)\n",
        heard.display().to_string()
    ));
    let script = json!([
        say("one", "a"),
        wait("turn_finished"),
        say("two", "b"),
        wait("turn_finished"),
        say("three", "c"),
        wait("turn_finished"),
        // The user changes what turn 2 wrote.
        {"send": {"id": "s", "type": "shell", "command": "echo mine > b.txt"}},
        {"wait": "ack", "where": {"op_id": "s"}},
        run("lr", "turn 2", "t"),
        acked("t"),
        run("lr", "turn 2 overwrite", "o"),
        acked("o"),
        run("lr", "rewind 1", "r"),
        acked("r"),
    ]);
    let (output, events) = drive(&sandbox, &[], script);
    assert_ok(&output, &events);
    let output_of = |id: &str| command_output(&events, id).to_string();
    // A restore from a tool, while its turn runs, is refused.
    let tried = model.requests()[5].body_text();
    assert!(
        tried.contains("false") && tried.contains("a turn is running; restore when it has ended"),
        "{tried}"
    );
    assert_eq!(
        output_of("t"),
        "undo of turn 2; true; remove b.txt done=false (it was changed since)"
    );
    // Left by the first: the second still finds it changed, and overwrites.
    assert_eq!(
        output_of("o"),
        "undo of turn 2; true; remove b.txt done=true (it was changed since)"
    );
    assert!(!sandbox.work().join("b.txt").exists());
    assert_eq!(
        output_of("r"),
        "code back to before turn 1; true; remove a.txt done=true"
    );
    assert!(!sandbox.work().join("a.txt").exists());
    assert_eq!(
        std::fs::read_to_string(&heard).unwrap(),
        "1 write_file a.txt\n1 turn end\n\
         2 write_file b.txt\n2 turn end\n\
         3 !echo mine > b.txt\n3 after !echo mine > b.txt\n\
         3 before undo of turn 2\n3 after undo of turn 2\n\
         3 before undo of turn 2\n3 after undo of turn 2\n\
         3 before code back to before turn 1\n3 after code back to before turn 1\n"
    );
}

/// A message that steers a running turn is part of it: the turn's
/// changes before and after it are one change set, undone together.
#[test]
fn a_message_that_steers_a_turn_is_part_of_its_changes() {
    let model = FakeModel::start();
    model
        .push(
            call(
                "w1",
                "write_file",
                json!({"path": "a.txt", "content": "a\n"}),
            )
            .delay(std::time::Duration::from_millis(800)),
        )
        .push(call(
            "w2",
            "write_file",
            json!({"path": "b.txt", "content": "b\n"}),
        ))
        .push(answer("wrote both"));
    let sandbox = allowing_writes(&model);
    let script = json!([
        say("write a", "a"),
        wait("turn_started"),
        say("and b too", "b"),
        wait("turn_finished"),
    ]);
    let (output, events) = drive(&sandbox, &[], script);
    assert_ok(&output, &events);
    assert!(
        model.requests()[1].body_text().contains("and b too"),
        "the message steered the turn"
    );
    let stdout = listed_checkpoints(&sandbox);
    assert!(stdout.contains("turn 1 changed: a.txt, b.txt"), "{stdout}");
}

#[test]
fn with_checkpoints_off_undo_says_so() {
    let model = FakeModel::start();
    let sandbox = sandbox_with(&model, "uji.checkpoint.configure({ enabled = false })");
    let script = json!([
        run("undo", "", "u"),
        {"wait": "error", "where": {"op_id": "u"}},
    ]);
    let (output, events) = drive(&sandbox, &[], script);
    assert_ok(&output, &events);
    let error = of_type(&events, "error")[0]["message"].as_str().unwrap();
    assert!(
        error.starts_with(
            "checkpoints are off: init.lua calls uji.checkpoint.configure({ enabled = false })"
        ),
        "{error}"
    );
}

#[test]
fn unqueue_takes_back_the_newest_waiting_message() {
    let model = FakeModel::start();
    model
        .push(Script::stall_after(
            ChatEvents::new("m1").text("working", 1).build(),
        ))
        .push(answer("done"));
    let sandbox = sandbox(&model);
    let script = json!([
        say("start", "a"),
        wait("delta"),
        say("keep this", "b"),
        say("take this back", "c"),
        {"wait": "queue_changed", "where": {"queued": ["keep this", "take this back"]}},
        {"send": {"id": "u", "type": "unqueue"}},
        {"wait": "ack", "where": {"op_id": "u"}},
        {"send": {"id": "i", "type": "interrupt"}},
        {"wait": "turn_finished", "where": {"text": "done"}},
    ]);
    let (output, events) = drive(&sandbox, &[], script);
    assert_ok(&output, &events);
    let ack = ack_of(&events, "u");
    assert_eq!(ack["result"], json!({"text": "take this back"}));
    let sent = model.requests()[1].body_text();
    assert!(
        sent.contains("keep this") && !sent.contains("take this back"),
        "{sent}"
    );
}

#[test]
fn title_confirms_and_uji_list_aligns_wide_titles_by_the_columns_they_take() {
    let model = FakeModel::start();
    let sandbox = sandbox(&model);
    for title in ["修正バグ", "plain title"] {
        let script = json!([
            {"send": {"id": "t", "type": "run_command", "name": "title", "args": title}},
            {"wait": "ack", "where": {"op_id": "t"}},
        ]);
        let (output, events) = drive(&sandbox, &[], script);
        assert_ok(&output, &events);
        assert_eq!(
            command_output(&events, "t"),
            format!("the session's title is now {title:?}")
        );
    }
    let listed = sandbox.uji().args(["list"]).output().unwrap();
    let (stdout, _) = text(&listed);
    // Where each row's id starts, in terminal columns (a CJK character
    // takes two).
    let id_columns: Vec<usize> = stdout
        .lines()
        .skip(1)
        .map(|row| {
            let before_id = row.rsplit_once("  ").map_or(row, |(head, _)| head);
            before_id
                .chars()
                .map(|c| {
                    if ('\u{3000}'..='\u{9fff}').contains(&c) {
                        2
                    } else {
                        1
                    }
                })
                .sum::<usize>()
        })
        .collect();
    assert_eq!(id_columns.len(), 2, "{stdout}");
    assert_eq!(id_columns[0], id_columns[1], "{stdout}");
}
