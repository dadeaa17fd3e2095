//! `uji acp` end to end: the real binary speaking the Agent Client Protocol
//! on its stdin and stdout to a client in the test (as Zed or CodeCompanion
//! would), the real tools, Lua and openai-chat plugins, and the fake model
//! server scripting the model's tool calls.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use uji_fake_model::{FakeModel, Script};
use uji_tests::acp::{Client, sandbox};
use uji_tests::chat::{answer, call};
use uji_tests::{Sandbox, names};

/// `uji acp` with a new session, its id, the fake model with `scripts`
/// queued and the sandbox using it.
fn open(scripts: Vec<Script>) -> (Client, String, FakeModel, Sandbox) {
    let model = FakeModel::start();
    for script in scripts {
        model.push(script);
    }
    let sandbox = sandbox(&model);
    let mut client = Client::spawn(&sandbox);
    let session = client.start(&sandbox);
    (client, session, model, sandbox)
}

fn prompt(client: &mut Client, session: &str, text: &str) -> u64 {
    client.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]}),
    )
}

/// Reads until the prompt's answer, answering each permission request with
/// `choose(request)` (an ACP outcome).
fn run_prompt(
    client: &mut Client,
    id: u64,
    choose: impl Fn(&Value) -> Value,
) -> (Value, Vec<Value>) {
    let mut asked = Vec::new();
    loop {
        let message = client.until("the prompt's answer or a permission request", |m| {
            (m["id"] == id && m.get("method").is_none())
                || m["method"] == "session/request_permission"
        });
        if message["method"] == "session/request_permission" {
            let outcome = choose(&message);
            client.respond(&message["id"], json!({"outcome": outcome}));
            asked.push(message);
        } else {
            return (message, asked);
        }
    }
}

fn selected(option: &str) -> Value {
    json!({"outcome": "selected", "optionId": option})
}

fn updates_of<'a>(client: &'a Client, kind: &str) -> Vec<&'a Value> {
    client
        .updates()
        .into_iter()
        .filter(|u| u["sessionUpdate"] == kind)
        .collect()
}

#[test]
fn a_prompt_reads_edits_after_a_permission_and_runs_a_command() {
    let (mut client, session, _model, sandbox) = open(vec![
        call("c1", "read_file", json!({"path": "notes.txt"})),
        call(
            "c2",
            "edit_file",
            json!({"path": "notes.txt", "old_string": "old", "new_string": "new"}),
        ),
        call("c3", "run_command", json!({"command": "echo ran-it"})),
        answer("All done."),
    ]);
    std::fs::write(sandbox.work().join("notes.txt"), "an old line\n").unwrap();

    let id = prompt(&mut client, &session, "update the notes");
    let (answer, asked) = run_prompt(&mut client, id, |_| selected("allow_once"));

    assert_eq!(answer["result"]["stopReason"], "end_turn", "{answer}");
    assert_eq!(
        std::fs::read_to_string(sandbox.work().join("notes.txt")).unwrap(),
        "an new line\n"
    );
    // The edit asked, with the three options and the call it is about.
    let edit_question = asked
        .iter()
        .find(|q| q["params"]["toolCall"]["toolCallId"] == "c2")
        .expect("the edit asked");
    let params = &edit_question["params"];
    assert_eq!(params["sessionId"], session);
    assert_eq!(params["toolCall"]["kind"], "edit");
    let kinds: Vec<&Value> = params["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| &o["kind"])
        .collect();
    assert_eq!(
        kinds,
        [
            &json!("allow_once"),
            &json!("allow_always"),
            &json!("reject_once")
        ]
    );
    assert!(
        asked
            .iter()
            .all(|q| q["params"]["toolCall"]["toolCallId"] != "c1"),
        "reads do not ask"
    );

    let calls = updates_of(&client, "tool_call");
    let read = calls.iter().find(|u| u["toolCallId"] == "c1").unwrap();
    assert_eq!(read["kind"], "read");
    assert_eq!(read["title"], "Read notes.txt");
    let notes = sandbox.work().join("notes.txt");
    assert_eq!(read["locations"][0]["path"], notes.to_str().unwrap());
    let command = calls.iter().find(|u| u["toolCallId"] == "c3").unwrap();
    assert_eq!(command["kind"], "execute");
    assert!(
        command["title"].as_str().unwrap().contains("echo ran-it"),
        "{command}"
    );

    let finished = updates_of(&client, "tool_call_update");
    let finished_edit = finished
        .iter()
        .find(|u| u["toolCallId"] == "c2" && u["status"] == "completed")
        .unwrap();
    let diff = finished_edit["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "diff")
        .unwrap();
    assert_eq!(diff["path"], notes.to_str().unwrap());
    assert_eq!(diff["oldText"], "an old line\n");
    assert_eq!(diff["newText"], "an new line\n");
    assert!(
        finished
            .iter()
            .any(|u| u["toolCallId"] == "c3" && u["status"] == "completed")
    );
    assert!(
        finished
            .iter()
            .any(|u| u["toolCallId"] == "c2" && u["status"] == "in_progress"),
        "allowed calls go in progress"
    );

    let text: String = updates_of(&client, "agent_message_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(text, "All done.");
    let usage = updates_of(&client, "usage_update");
    assert_eq!(usage.last().unwrap()["size"], 128_000);
    assert!(client.finish().success());
}

#[test]
fn commands_are_offered_and_run_from_a_prompt_and_the_plan_mode_switches() {
    let (mut client, session, model, _sandbox) = open(vec![]);
    let offered = client.update("available commands", |u| {
        u["sessionUpdate"] == "available_commands_update"
    });
    let names = names(&offered["availableCommands"]);
    assert!(
        names.contains(&"hello") && names.contains(&"plan") && names.contains(&"compact"),
        "{names:?}"
    );

    let id = prompt(&mut client, &session, "/hello editor");
    let answer = client.answer(id);
    assert_eq!(answer["result"]["stopReason"], "end_turn");
    let said = updates_of(&client, "agent_message_chunk");
    assert_eq!(said.last().unwrap()["content"]["text"], "hello editor");

    let id = client.request(
        "session/set_mode",
        json!({"sessionId": session, "modeId": "plan"}),
    );
    assert_eq!(client.answer(id)["result"], json!({}));
    assert!(
        updates_of(&client, "current_mode_update")
            .iter()
            .any(|u| u["currentModeId"] == "plan")
    );
    let id = client.request(
        "session/set_mode",
        json!({"sessionId": session, "modeId": "fast"}),
    );
    assert_eq!(client.answer(id)["error"]["code"], -32602);
    assert_eq!(model.requests().len(), 0, "commands never reach the model");
}

#[test]
fn a_rejected_or_cancelled_permission_denies_the_call() {
    let (mut client, session, _model, sandbox) = open(vec![
        call("c1", "write_file", json!({"path": "a.txt", "content": "x"})),
        call("c2", "write_file", json!({"path": "b.txt", "content": "y"})),
        answer("Understood."),
    ]);
    let id = prompt(&mut client, &session, "write two files");
    let (answer, asked) = run_prompt(&mut client, id, |q| {
        if q["params"]["toolCall"]["toolCallId"] == "c1" {
            selected("deny")
        } else {
            json!({"outcome": "cancelled"})
        }
    });
    assert_eq!(answer["result"]["stopReason"], "end_turn");
    assert_eq!(asked.len(), 2);
    assert!(!sandbox.work().join("a.txt").exists() && !sandbox.work().join("b.txt").exists());
    for call in ["c1", "c2"] {
        let failed = updates_of(&client, "tool_call_update");
        assert!(
            failed
                .iter()
                .any(|u| u["toolCallId"] == call && u["status"] == "failed"),
            "{call} failed: {failed:#?}"
        );
    }
}

#[test]
fn cancel_stops_a_running_command_at_once() {
    let (mut client, session, _model, _sandbox) = open(vec![call(
        "c1",
        "run_command",
        json!({"command": "sleep 30"}),
    )]);
    let id = prompt(&mut client, &session, "wait a while");
    let question = client.request_from_uji("session/request_permission");
    client.respond(&question["id"], json!({"outcome": selected("allow_once")}));
    client.update("the command running", |u| {
        u["toolCallId"] == "c1" && u["status"] == "in_progress"
    });
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    client.notify("session/cancel", json!({"sessionId": session}));
    let answer = client.answer(id);
    assert_eq!(answer["result"]["stopReason"], "cancelled", "{answer}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "cancel took {:?}",
        started.elapsed()
    );
    assert!(client.finish().success());
}

#[test]
fn a_saved_session_is_listed_and_loaded_with_its_history_replayed() {
    let (mut first, session, _model, sandbox) = open(vec![answer("hello there")]);
    let id = prompt(&mut first, &session, "hi");
    assert_eq!(first.answer(id)["result"]["stopReason"], "end_turn");
    assert!(first.finish().success());

    let mut client = Client::spawn(&sandbox);
    let id = client.request("initialize", json!({"protocolVersion": 1}));
    assert_eq!(
        client.answer(id)["result"]["agentCapabilities"]["loadSession"],
        true
    );
    let id = client.request("session/list", json!({"cwd": sandbox.work()}));
    let list = client.answer(id);
    let sessions = list["result"]["sessions"].as_array().unwrap();
    let saved = sessions
        .iter()
        .find(|s| s["sessionId"] == session)
        .expect("the saved session is listed");
    assert_eq!(saved["cwd"], sandbox.work().to_str().unwrap());
    assert!(saved["updatedAt"].as_str().unwrap().ends_with('Z'));

    let id = client.request(
        "session/load",
        json!({"sessionId": session, "cwd": sandbox.work(), "mcpServers": []}),
    );
    let loaded = client.answer(id);
    assert_eq!(
        loaded["result"]["modes"]["currentModeId"], "default",
        "{loaded}"
    );
    let replayed: Vec<(&Value, &Value)> = client
        .updates()
        .into_iter()
        .filter(|u| {
            u["sessionUpdate"] == "user_message_chunk"
                || u["sessionUpdate"] == "agent_message_chunk"
        })
        .map(|u| (&u["sessionUpdate"], &u["content"]["text"]))
        .collect();
    assert_eq!(
        replayed,
        [
            (&json!("user_message_chunk"), &json!("hi")),
            (&json!("agent_message_chunk"), &json!("hello there"))
        ]
    );
    let notified = client
        .seen
        .iter()
        .filter(|m| m["method"] == "session/update");
    assert!(
        notified
            .clone()
            .all(|m| m["params"]["sessionId"] == session)
    );
}

#[test]
fn a_failing_turn_answers_the_prompt_with_uji_s_error() {
    let (mut client, session, _model, _sandbox) = open(vec![Script::status(
        400,
        r#"{"error": {"message": "bad model name"}}"#,
        &[],
    )]);
    let id = prompt(&mut client, &session, "hi");
    let answer = client.answer(id);
    let message = answer["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("an error: {answer}"));
    assert!(message.contains("bad model name"), "{message}");
    assert_eq!(answer["error"]["code"], -32603);
}

#[test]
fn garbage_and_malformed_requests_get_json_rpc_errors_and_uji_goes_on() {
    let model = FakeModel::start();
    let sandbox = sandbox(&model);
    let mut client = Client::spawn(&sandbox);
    client.send_line("this is not json");
    assert_eq!(
        client.until("a parse error", |m| m.get("error").is_some())["error"]["code"],
        -32700
    );
    client.send_line(r#"{"jsonrpc":"2.0","id":5,"method":42}"#);
    let invalid = client.answer(5);
    assert_eq!(invalid["error"]["code"], -32600);
    client.send_line("[1, 2, 3]");
    assert_eq!(
        client.until("an invalid request", |m| m.get("error").is_some()
            && m["id"].is_null())["error"]["code"],
        -32600
    );
    client.send_line(r#"{"jsonrpc":"2.0","id":6,"method":"session/teleport"}"#);
    assert_eq!(client.answer(6)["error"]["code"], -32601);
    let id = client.request("session/teleport", json!({}));
    assert_eq!(client.answer(id)["error"]["code"], -32601);
    let id = client.request("session/prompt", json!({"sessionId": "nope", "prompt": []}));
    assert_eq!(client.answer(id)["error"]["code"], -32602);
    let id = client.request("session/new", json!({"cwd": "/somewhere/else"}));
    let other = client.answer(id);
    assert!(
        other["error"]["message"]
            .as_str()
            .unwrap()
            .contains("start it in /somewhere/else"),
        "{other}"
    );
    let session = client.start(&sandbox);
    let id = client.request("session/prompt", json!({"sessionId": session, "prompt": [{"type": "audio", "data": "", "mimeType": "audio/wav"}]}));
    assert!(
        client.answer(id)["error"]["message"]
            .as_str()
            .unwrap()
            .contains("audio")
    );
    let id = client.request("session/prompt", json!({"sessionId": session}));
    assert_eq!(client.answer(id)["error"]["code"], -32602);
    assert!(client.finish().success());
}

#[test]
fn without_a_model_key_initialize_offers_an_auth_method() {
    let sandbox = Sandbox::new();
    let mut client = Client::spawn(&sandbox);
    let id = client.request("initialize", json!({"protocolVersion": 1}));
    let answer = client.answer(id);
    let methods = answer["result"]["authMethods"].as_array().unwrap();
    assert_eq!(methods.len(), 1, "{answer}");
    assert!(
        methods[0]["description"]
            .as_str()
            .unwrap()
            .contains("ANTHROPIC_API_KEY")
    );
    assert_eq!(answer["result"]["agentInfo"]["name"], "uji");
}

#[test]
fn prompts_carry_links_embedded_files_and_images_to_the_model() {
    let (mut client, session, model, _sandbox) = open(vec![answer("seen")]);
    let blocks = json!([
        {"type": "text", "text": "compare"},
        {"type": "resource_link", "uri": "file:///w/a.rs", "name": "a.rs"},
        {"type": "resource", "resource": {"uri": "file:///w/b.rs", "text": "fn b() {}"}},
        {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
    ]);
    let id = client.request(
        "session/prompt",
        json!({"sessionId": session, "prompt": blocks}),
    );
    assert_eq!(client.answer(id)["result"]["stopReason"], "end_turn");
    let sent = model.last_request().body_text();
    assert!(sent.contains("@/w/a.rs"), "{sent}");
    assert!(sent.contains("fn b() {}"), "{sent}");
    assert!(sent.contains("iVBORw0KGgo="), "{sent}");
}

#[test]
fn the_model_is_chosen_through_a_session_config_option() {
    let model = FakeModel::start();
    model.push(answer("from m2"));
    let sandbox = sandbox(&model);
    let mut client = Client::spawn(&sandbox);
    let servers = json!([{"name": "files", "command": "/bin/true", "args": [], "env": []}]);
    let started = client.start_with(&sandbox, servers);
    let session = started["result"]["sessionId"].as_str().unwrap().to_string();
    let option = &started["result"]["configOptions"][0];
    assert_eq!(option["category"], "model", "{started}");
    assert_eq!(option["type"], "select");
    assert_eq!(option["currentValue"], "fake/m1");
    assert_eq!(names_of_values(&option["options"]), ["fake/m1", "fake/m2"]);

    let id = client.request(
        "session/set_config_option",
        json!({"sessionId": session, "configId": "model", "value": "fake/m2"}),
    );
    let chosen = client.answer(id);
    assert_eq!(
        chosen["result"]["configOptions"][0]["currentValue"], "fake/m2",
        "{chosen}"
    );
    let id = client.request(
        "session/set_config_option",
        json!({"sessionId": session, "configId": "model", "value": "fake/m9"}),
    );
    assert_eq!(client.answer(id)["error"]["code"], -32602);

    let id = prompt(&mut client, &session, "hi");
    assert_eq!(client.answer(id)["result"]["stopReason"], "end_turn");
    assert!(
        model
            .last_request()
            .body_text()
            .contains("\"model\":\"m2\"")
    );
    assert!(client.finish().success());
    // Without the MCP plugin the editor's servers are logged, not used.
    let log = std::fs::read_to_string(sandbox.root.path().join("data/logs/uji.log")).unwrap();
    assert!(
        log.contains("the editor's MCP servers are not used"),
        "{log}"
    );
}

fn names_of_values(options: &Value) -> Vec<&str> {
    options
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["value"].as_str().unwrap())
        .collect()
}

#[test]
fn allow_always_is_a_session_rule_for_the_same_tool_and_subject() {
    let (mut client, session, _model, sandbox) = open(vec![
        call(
            "c1",
            "write_file",
            json!({"path": "a.txt", "content": "one"}),
        ),
        call(
            "c2",
            "write_file",
            json!({"path": "a.txt", "content": "two"}),
        ),
        answer("Written twice."),
    ]);
    let id = prompt(&mut client, &session, "write a.txt twice");
    let (answer, asked) = run_prompt(&mut client, id, |_| selected("allow_session"));
    assert_eq!(answer["result"]["stopReason"], "end_turn");
    assert_eq!(asked.len(), 1, "only the first write asks: {asked:#?}");
    assert_eq!(
        std::fs::read_to_string(sandbox.work().join("a.txt")).unwrap(),
        "two"
    );
}

#[test]
fn in_plan_mode_edits_are_refused() {
    let (mut client, session, _model, sandbox) = open(vec![
        call(
            "c1",
            "write_file",
            json!({"path": "plan.txt", "content": "x"}),
        ),
        answer("Here is the plan."),
    ]);
    let id = client.request(
        "session/set_mode",
        json!({"sessionId": session, "modeId": "plan"}),
    );
    assert_eq!(client.answer(id)["result"], json!({}));
    let id = prompt(&mut client, &session, "plan it");
    let (answer, asked) = run_prompt(&mut client, id, |_| selected("allow_once"));
    assert_eq!(answer["result"]["stopReason"], "end_turn");
    assert!(
        asked.is_empty(),
        "a disabled tool is refused without asking"
    );
    assert!(!sandbox.work().join("plan.txt").exists());
    let updates = updates_of(&client, "tool_call_update");
    assert!(
        updates
            .iter()
            .any(|u| u["toolCallId"] == "c1" && u["status"] == "failed")
    );
}
