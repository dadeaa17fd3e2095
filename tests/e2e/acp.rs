//! `uji acp` end to end: the real binary speaking the Agent Client Protocol
//! on its stdin and stdout to the `agent-client-protocol` crate's client
//! side (as Zed would), the real tools, Lua and openai-chat plugins, and the
//! fake model server scripting the model's tool calls.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use agent_client_protocol::ErrorCode;
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AuthenticateRequest, CancelNotification, ContentBlock, EmbeddedResource,
    EmbeddedResourceResource, ImageContent, InitializeRequest, ListSessionsRequest,
    LoadSessionRequest, McpServer, McpServerStdio, PromptRequest, RequestPermissionOutcome,
    ResourceLink, SessionConfigKind, SessionConfigSelectOptions, SetSessionConfigOptionRequest,
    SetSessionModeRequest, StopReason, TextResourceContents,
};
use serde_json::{Value, json};
use uji_fake_model::{FakeModel, Script};
use uji_tests::acp::{Client, reading_editor, sandbox, sandbox_with, selected, writing_editor};
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
    let client = Client::spawn(&sandbox);
    let session = client.start(&sandbox);
    (client, session, model, sandbox)
}

fn question_about<'a>(questions: &'a [Value], call: &str) -> Option<&'a Value> {
    questions
        .iter()
        .find(|q| q["toolCall"]["toolCallId"] == call)
}

#[test]
fn a_prompt_reads_edits_after_a_permission_and_runs_a_command() {
    let (client, session, _model, sandbox) = open(vec![
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

    let answer = client
        .prompt(&session, "update the notes")
        .answer()
        .unwrap();

    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    assert_eq!(
        std::fs::read_to_string(sandbox.work().join("notes.txt")).unwrap(),
        "an new line\n"
    );
    // The edit asked, with the three options and the call it is about.
    let questions = client.questions();
    let edit = question_about(&questions, "c2").expect("the edit asked");
    assert_eq!(edit["sessionId"], session);
    assert_eq!(edit["toolCall"]["kind"], "edit");
    let kinds: Vec<&Value> = edit["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| &o["kind"])
        .collect();
    assert_eq!(kinds, ["allow_once", "allow_always", "reject_once"]);
    assert!(
        question_about(&questions, "c1").is_none(),
        "reads do not ask"
    );

    let calls = client.updates_of("tool_call");
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

    let finished = client.updates_of("tool_call_update");
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

    let text: String = client
        .updates_of("agent_message_chunk")
        .iter()
        .map(|u| u["content"]["text"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(text, "All done.");
    let usage = client.updates_of("usage_update");
    assert_eq!(usage.last().unwrap()["size"], 128_000);
    assert!(client.finish().success());
}

#[test]
fn commands_are_offered_and_run_from_a_prompt_and_the_plan_mode_switches() {
    let (client, session, model, _sandbox) = open(vec![]);
    let offered = client.update("available commands", |u| {
        u["sessionUpdate"] == "available_commands_update"
    });
    let names = names(&offered["availableCommands"]);
    assert!(
        names.contains(&"hello") && names.contains(&"plan") && names.contains(&"compact"),
        "{names:?}"
    );

    let answer = client.prompt(&session, "/hello editor").answer().unwrap();
    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    let said = client.updates_of("agent_message_chunk");
    assert_eq!(said.last().unwrap()["content"]["text"], "hello editor");

    client
        .request(SetSessionModeRequest::new(session.clone(), "plan"))
        .unwrap();
    assert!(
        client
            .updates_of("current_mode_update")
            .iter()
            .any(|u| u["currentModeId"] == "plan")
    );
    let refused = client
        .request(SetSessionModeRequest::new(session, "fast"))
        .unwrap_err();
    assert_eq!(refused.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(model.requests().len(), 0, "commands never reach the model");
}

#[test]
fn plan_mode_answers_become_a_plan_update() {
    let (client, session, _model, _sandbox) = open(vec![answer(
        "Here is the plan:\n\n1. Read src/lib.rs\n2. Add a `--dry-run` flag\n3. Run cargo test\n",
    )]);
    client
        .request(SetSessionModeRequest::new(session.clone(), "plan"))
        .unwrap();
    let answer = client.prompt(&session, "plan a dry run").answer().unwrap();
    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    let plan = client.update("a plan", |u| u["sessionUpdate"] == "plan");
    let steps: Vec<&Value> = plan["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["content"])
        .collect();
    assert_eq!(
        steps,
        [
            "Read src/lib.rs",
            "Add a `--dry-run` flag",
            "Run cargo test"
        ]
    );
    assert!(
        plan["entries"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["status"] == "pending")
    );
}

#[test]
fn a_rejected_or_cancelled_permission_denies_the_call() {
    let (client, session, _model, sandbox) = open(vec![
        call("c1", "write_file", json!({"path": "a.txt", "content": "x"})),
        call("c2", "write_file", json!({"path": "b.txt", "content": "y"})),
        answer("Understood."),
    ]);
    client.choose(|q| {
        if q.tool_call.tool_call_id.to_string() == "c1" {
            selected("deny")
        } else {
            RequestPermissionOutcome::Cancelled
        }
    });
    let answer = client.prompt(&session, "write two files").answer().unwrap();
    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    assert_eq!(client.questions().len(), 2);
    assert!(!sandbox.work().join("a.txt").exists() && !sandbox.work().join("b.txt").exists());
    let finished = client.updates_of("tool_call_update");
    for call in ["c1", "c2"] {
        assert!(
            finished
                .iter()
                .any(|u| u["toolCallId"] == call && u["status"] == "failed"),
            "{call} failed: {finished:#?}"
        );
    }
}

#[test]
fn cancel_stops_a_running_command_at_once() {
    let (client, session, _model, _sandbox) = open(vec![call(
        "c1",
        "run_command",
        json!({"command": "sleep 30"}),
    )]);
    let pending = client.prompt(&session, "wait a while");
    client.update("the command running", |u| {
        u["toolCallId"] == "c1" && u["status"] == "in_progress"
    });
    std::thread::sleep(Duration::from_millis(300));
    let started = Instant::now();
    client.notify(CancelNotification::new(session));
    let answer = pending.answer().unwrap();
    assert_eq!(answer.stop_reason, StopReason::Cancelled);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "cancel took {:?}",
        started.elapsed()
    );
    assert!(client.finish().success());
}

#[test]
fn a_saved_session_is_listed_and_loaded_with_its_history_replayed() {
    let (first, session, _model, sandbox) = open(vec![answer("hello there")]);
    let answer = first.prompt(&session, "hi").answer().unwrap();
    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    assert!(first.finish().success());

    let client = Client::spawn(&sandbox);
    let init = client
        .request(InitializeRequest::new(ProtocolVersion::V1))
        .unwrap();
    assert!(init.agent_capabilities.load_session);
    let list = client
        .request(ListSessionsRequest::new().cwd(sandbox.work()))
        .unwrap();
    let saved = list
        .sessions
        .iter()
        .find(|s| s.session_id.to_string() == session)
        .expect("the saved session is listed");
    assert_eq!(saved.cwd, sandbox.work());
    assert!(saved.updated_at.as_deref().unwrap().ends_with('Z'));

    let loaded = client
        .request(LoadSessionRequest::new(session.clone(), sandbox.work()))
        .unwrap();
    assert_eq!(loaded.modes.unwrap().current_mode_id.to_string(), "default");
    let replayed: Vec<(Value, Value)> = client
        .updates()
        .into_iter()
        .filter(|u| {
            u["sessionUpdate"] == "user_message_chunk"
                || u["sessionUpdate"] == "agent_message_chunk"
        })
        .map(|u| (u["sessionUpdate"].clone(), u["content"]["text"].clone()))
        .collect();
    assert_eq!(
        replayed,
        [
            (json!("user_message_chunk"), json!("hi")),
            (json!("agent_message_chunk"), json!("hello there"))
        ]
    );
    assert!(client.updates().iter().all(|u| u["_sessionId"] == session));
}

#[test]
fn a_failing_turn_answers_the_prompt_with_uji_s_error() {
    let (client, session, _model, _sandbox) = open(vec![Script::status(
        400,
        r#"{"error": {"message": "bad model name"}}"#,
        &[],
    )]);
    let error = client.prompt(&session, "hi").answer().unwrap_err();
    assert!(error.message.contains("bad model name"), "{error:?}");
    assert_eq!(error.code, ErrorCode::INTERNAL_ERROR);
}

#[test]
fn garbage_and_malformed_requests_get_json_rpc_errors_and_uji_goes_on() {
    let model = FakeModel::start();
    let sandbox = sandbox(&model);
    let client = Client::spawn(&sandbox);
    client.send_line("this is not json");
    let parse = client.line("a parse error", |m| m["error"]["code"] == -32700);
    assert!(parse["id"].is_null(), "{parse}");
    client.send_line(r#"{"jsonrpc":"2.0","id":5,"method":42}"#);
    client.line("an invalid request", |m| m["error"]["code"] == -32600);
    client.send_line("[1, 2, 3]");
    // Before initialize, the crate refuses every session method.
    client.send_line(r#"{"jsonrpc":"2.0","id":4,"method":"session/new","params":{"cwd":"/"}}"#);
    let early = client.line("a refusal before initialize", |m| m["id"] == 4);
    assert_eq!(early["error"]["code"], -32600, "{early}");
    let session = client.start(&sandbox);
    client.send_line(r#"{"jsonrpc":"2.0","id":6,"method":"session/teleport"}"#);
    let unknown = client.line("method not found", |m| m["id"] == 6);
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    client.send_line(
        r#"{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":3}}"#,
    );
    let bad_params = client.line("invalid params", |m| m["id"] == 7);
    assert_eq!(bad_params["error"]["code"], -32602, "{bad_params}");

    let wrong_session = client
        .request(PromptRequest::new("nope", vec![]))
        .unwrap_err();
    assert_eq!(wrong_session.code, ErrorCode::INVALID_PARAMS);
    let elsewhere = client
        .request(agent_client_protocol::v1::schema::NewSessionRequest::new(
            "/somewhere/else",
        ))
        .unwrap_err();
    assert!(
        elsewhere.message.contains("start it in /somewhere/else"),
        "{elsewhere:?}"
    );
    let auth = client
        .request(AuthenticateRequest::new("uji-config"))
        .unwrap_err();
    assert!(auth.message.contains("ANTHROPIC_API_KEY"), "{auth:?}");
    let audio = agent_client_protocol::v1::schema::AudioContent::new("", "audio/wav");
    let refused = client
        .request(PromptRequest::new(
            session,
            vec![ContentBlock::Audio(audio)],
        ))
        .unwrap_err();
    assert!(refused.message.contains("audio"), "{refused:?}");
    assert!(client.finish().success());
}

#[test]
fn without_a_model_key_initialize_offers_an_auth_method() {
    let sandbox = Sandbox::new();
    let client = Client::spawn(&sandbox);
    let init = client
        .request(InitializeRequest::new(ProtocolVersion::V1))
        .unwrap();
    let init = serde_json::to_value(&init).unwrap();
    let methods = init["authMethods"].as_array().unwrap();
    assert_eq!(methods.len(), 1, "{init}");
    assert!(
        methods[0]["description"]
            .as_str()
            .unwrap()
            .contains("ANTHROPIC_API_KEY")
    );
    assert_eq!(init["agentInfo"]["name"], "uji");
    assert_eq!(init["agentCapabilities"]["mcpCapabilities"]["http"], true);
}

#[test]
fn prompts_carry_links_embedded_files_and_images_to_the_model() {
    let (client, session, model, _sandbox) = open(vec![answer("seen")]);
    let embedded = EmbeddedResource::new(EmbeddedResourceResource::TextResourceContents(
        TextResourceContents::new("fn b() {}", "file:///w/b.rs"),
    ));
    let blocks = vec![
        ContentBlock::from("compare".to_string()),
        ContentBlock::ResourceLink(ResourceLink::new("a.rs", "file:///w/a.rs")),
        ContentBlock::Resource(embedded),
        ContentBlock::Image(ImageContent::new(ONE_PIXEL_PNG, "image/png")),
    ];
    let answer = client.request(PromptRequest::new(session, blocks)).unwrap();
    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    let sent = model.last_request().body_text();
    assert!(sent.contains("@/w/a.rs"), "{sent}");
    assert!(sent.contains("fn b() {}"), "{sent}");
    assert!(
        sent.contains(ONE_PIXEL_PNG),
        "a small image goes as it came: {sent}"
    );
}

#[test]
fn a_resource_link_to_a_workspace_file_brings_its_content_to_the_model() {
    let (client, session, model, sandbox) = open(vec![answer("seen")]);
    let file = sandbox.work().join("src/linked.rs");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "fn linked_from_the_editor() {}\n").unwrap();
    let uri = format!("file://{}", file.display());
    let blocks = vec![
        ContentBlock::from("explain".to_string()),
        ContentBlock::ResourceLink(ResourceLink::new("linked.rs", uri)),
    ];
    let answer = client.request(PromptRequest::new(session, blocks)).unwrap();
    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    let request = model.last_request();
    let messages = request.json["messages"].as_array().unwrap();
    let mention = format!("@{}", file.display());
    let user = messages
        .iter()
        .position(|m| m["content"].as_str().is_some_and(|t| t.contains(&mention)))
        .unwrap_or_else(|| panic!("the link as a mention: {messages:?}"));
    let context = messages[user + 1]["content"].as_str().unwrap();
    assert!(
        context.contains(&format!("<file path=\"{}\">", file.display()))
            && context.contains("    1| fn linked_from_the_editor() {}"),
        "the file's content went with the prompt: {context}"
    );
}

/// A 1×1 PNG, base64.
const ONE_PIXEL_PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGP4z8DwHwAFAAH/iZk9HQAAAABJRU5ErkJggg==";

fn model_choice(
    options: &[agent_client_protocol::v1::schema::SessionConfigOption],
) -> (String, Vec<String>) {
    let option = options
        .iter()
        .find(|o| o.id.to_string() == "model")
        .unwrap();
    let SessionConfigKind::Select(select) = &option.kind else {
        panic!("the model option is a select: {option:?}");
    };
    let SessionConfigSelectOptions::Ungrouped(values) = &select.options else {
        panic!("ungrouped models: {select:?}");
    };
    (
        select.current_value.to_string(),
        values.iter().map(|v| v.value.to_string()).collect(),
    )
}

#[test]
fn the_model_is_chosen_through_a_session_config_option() {
    let model = FakeModel::start();
    model.push(answer("from m2"));
    let sandbox = sandbox(&model);
    let client = Client::spawn(&sandbox);
    let servers = vec![McpServer::Stdio(McpServerStdio::new("files", "/bin/true"))];
    let started = client.start_with(&sandbox, servers);
    let session = started.session_id.to_string();
    let (current, models) = model_choice(started.config_options.as_deref().unwrap());
    assert_eq!(current, "fake/m1");
    assert_eq!(models, ["fake/m1", "fake/m2"]);

    let chosen = client
        .request(SetSessionConfigOptionRequest::new(
            session.clone(),
            "model",
            "fake/m2",
        ))
        .unwrap();
    assert_eq!(model_choice(&chosen.config_options).0, "fake/m2");
    let unknown = client
        .request(SetSessionConfigOptionRequest::new(
            session.clone(),
            "model",
            "fake/m9",
        ))
        .unwrap_err();
    assert_eq!(unknown.code, ErrorCode::INVALID_PARAMS);

    let answer = client.prompt(&session, "hi").answer().unwrap();
    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    assert!(
        model
            .last_request()
            .body_text()
            .contains("\"model\":\"m2\"")
    );
    assert!(client.finish().success());
    // The editor's server reached the MCP plugin (always shipped next to
    // the binary); `/bin/true` exits before its handshake, which is logged,
    // and the session went on without it.
    let log = std::fs::read_to_string(sandbox.root.path().join("data/logs/uji.log")).unwrap();
    assert!(log.contains("mcp server files: handshake failed"), "{log}");
}

#[test]
fn allow_always_is_a_session_rule_for_the_same_tool_and_subject() {
    let (client, session, _model, sandbox) = open(vec![
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
    client.choose(|_| selected("allow_session"));
    let answer = client
        .prompt(&session, "write a.txt twice")
        .answer()
        .unwrap();
    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    assert_eq!(client.questions().len(), 1, "only the first write asks");
    assert_eq!(
        std::fs::read_to_string(sandbox.work().join("a.txt")).unwrap(),
        "two"
    );
}

#[test]
fn in_plan_mode_edits_are_refused() {
    let (client, session, _model, sandbox) = open(vec![
        call(
            "c1",
            "write_file",
            json!({"path": "plan.txt", "content": "x"}),
        ),
        answer("Here is the plan."),
    ]);
    client
        .request(SetSessionModeRequest::new(session.clone(), "plan"))
        .unwrap();
    let answer = client.prompt(&session, "plan it").answer().unwrap();
    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    assert!(
        client.questions().is_empty(),
        "a disabled tool is refused without asking"
    );
    assert!(!sandbox.work().join("plan.txt").exists());
    assert!(
        client
            .updates_of("tool_call_update")
            .iter()
            .any(|u| u["toolCallId"] == "c1" && u["status"] == "failed")
    );
}

#[test]
fn in_accept_edits_mode_a_write_runs_without_a_question() {
    let (client, session, _model, sandbox) = open(vec![
        call(
            "c1",
            "write_file",
            json!({"path": "accepted.txt", "content": "x"}),
        ),
        answer("Wrote it."),
    ]);
    client
        .request(SetSessionModeRequest::new(session.clone(), "acceptEdits"))
        .unwrap();
    assert!(
        client
            .updates_of("current_mode_update")
            .iter()
            .any(|u| u["currentModeId"] == "acceptEdits")
    );
    let answer = client.prompt(&session, "write it").answer().unwrap();
    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    assert!(client.questions().is_empty());
    assert_eq!(
        std::fs::read_to_string(sandbox.work().join("accepted.txt")).unwrap(),
        "x"
    );
}

/// The text of the tool result uji sent the model for `call`.
fn tool_result(model: &FakeModel, call: &str) -> String {
    let body: Value = serde_json::from_str(&model.last_request().body_text()).unwrap();
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == call)
        .map(|m| m["content"].as_str().unwrap().to_string())
        .unwrap_or_else(|| panic!("no result for {call}: {body}"))
}

/// A session in an editor that offers reads (set up by `editor`, before `initialize`),
/// with `editor_fs` on, `notes.txt` saved as "saved line", and a model that reads it once.
fn editor_reading_notes(
    editor: impl FnOnce(&Client, &Path),
) -> (FakeModel, Sandbox, Client, String, PathBuf) {
    let model = FakeModel::start();
    model.push(call("c1", "read_file", json!({"path": "notes.txt"})));
    model.push(answer("read it"));
    let sandbox = sandbox_with(&model, r#"uji.config.set("acp", { editor_fs = true })"#);
    let notes = sandbox.work().join("notes.txt");
    std::fs::write(&notes, "saved line\n").unwrap();
    let client = Client::spawn(&sandbox);
    editor(&client, &notes);
    client.initialize_with(reading_editor());
    let session = client.new_session(&sandbox, vec![]).session_id.to_string();
    (model, sandbox, client, session, notes)
}

#[test]
fn with_editor_fs_on_reads_see_the_editor_s_unsaved_buffer() {
    let (model, _sandbox, client, session, notes) =
        editor_reading_notes(|client, notes| client.open_buffer(notes, "unsaved line\nsecond\n"));

    let answer = client.prompt(&session, "read the notes").answer().unwrap();
    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    assert_eq!(
        tool_result(&model, "c1"),
        "    1| unsaved line\n    2| second\n"
    );
    let reads = client.reads();
    assert_eq!(reads.len(), 1, "{reads:?}");
    assert_eq!(reads[0]["path"], notes.to_str().unwrap());
    assert_eq!(reads[0]["sessionId"], session);
    assert_eq!(
        std::fs::read_to_string(&notes).unwrap(),
        "saved line\n",
        "the file on disk is untouched"
    );
}

#[test]
fn with_editor_fs_on_a_read_the_editor_refuses_comes_from_disk() {
    let (model, sandbox, client, session, _) =
        editor_reading_notes(|client, notes| client.refuse_reads_of(notes));
    client.prompt(&session, "read the notes").answer().unwrap();
    assert_eq!(client.reads().len(), 1, "the editor was asked");
    assert_eq!(tool_result(&model, "c1"), "    1| saved line\n");
    assert!(client.finish().success());
    let log = std::fs::read_to_string(sandbox.root.path().join("data/logs/uji.log")).unwrap();
    assert!(log.contains("using the file on disk"), "{log}");
}

#[test]
fn with_editor_fs_on_a_read_the_editor_never_answers_comes_from_disk_after_10_s() {
    let (model, sandbox, client, session, _) = editor_reading_notes(|client, notes| {
        client.open_buffer(notes, "unsaved line\n");
        client.ignore_reads();
    });
    let started = Instant::now();
    let answer = client.prompt(&session, "read the notes").answer().unwrap();
    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    assert!(
        started.elapsed() >= Duration::from_secs(10),
        "uji waited for the editor first"
    );
    assert_eq!(client.reads().len(), 1, "the editor was asked");
    assert_eq!(tool_result(&model, "c1"), "    1| saved line\n");
    assert!(client.finish().success());
    let log = std::fs::read_to_string(sandbox.root.path().join("data/logs/uji.log")).unwrap();
    assert!(
        log.contains("no answer within 10 s") && log.contains("using the file on disk"),
        "{log}"
    );
}

#[test]
fn with_editor_fs_on_the_policy_gate_still_decides_reads() {
    let model = FakeModel::start();
    model.push(call("c1", "read_file", json!({"path": "/etc/hostname"})));
    model.push(answer("could not"));
    let sandbox = sandbox_with(&model, r#"uji.config.set("acp", { editor_fs = true })"#);
    let client = Client::spawn(&sandbox);
    client.initialize_with(reading_editor());
    let session = client.new_session(&sandbox, vec![]).session_id.to_string();
    client.choose(|_| selected("deny"));
    let answer = client.prompt(&session, "read outside").answer().unwrap();
    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    assert!(
        client.reads().is_empty(),
        "a refused read never reaches the editor"
    );
}

#[test]
fn with_editor_fs_off_reads_come_from_disk() {
    let (client, session, model, sandbox) = {
        let model = FakeModel::start();
        model.push(call("c1", "read_file", json!({"path": "notes.txt"})));
        model.push(answer("read it"));
        let sandbox = sandbox(&model);
        let client = Client::spawn(&sandbox);
        client.initialize_with(reading_editor());
        let session = client.new_session(&sandbox, vec![]).session_id.to_string();
        (client, session, model, sandbox)
    };
    let notes = sandbox.work().join("notes.txt");
    std::fs::write(&notes, "saved line\n").unwrap();
    client.open_buffer(&notes, "unsaved line\n");
    client.prompt(&session, "read the notes").answer().unwrap();
    assert_eq!(tool_result(&model, "c1"), "    1| saved line\n");
    assert!(client.reads().is_empty());
}

/// The editor's stdio server reaches the MCP plugin through the `mcp.add`
/// host service, is up before `session/new` answers, and its tool is
/// offered in the first request and called through the gate.
#[test]
fn editor_passed_mcp_servers_give_the_session_their_tools() {
    let model = FakeModel::start();
    model.push(call("c1", "ed__echo", json!({"text": "from the editor"})));
    model.push(answer("echoed"));
    let sandbox = sandbox(&model);
    let marks = sandbox.work().join("marks");
    let server = uji_tests::uji_bin().with_file_name("uji-test-mcp-server");
    let stdio = McpServerStdio::new("ed", server).env(vec![
        agent_client_protocol::v1::schema::EnvVariable::new(
            "MCP_TEST_MARKS",
            marks.to_string_lossy(),
        ),
    ]);
    let client = Client::spawn_with(&sandbox, &["uji_plugin_mcp"]);
    let session = client
        .start_with(&sandbox, vec![McpServer::Stdio(stdio)])
        .session_id
        .to_string();
    let answer = client.prompt(&session, "echo it").answer().unwrap();
    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    let first: Value = serde_json::from_str(&model.requests()[0].body_text()).unwrap();
    let tools: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(tools.contains(&"ed__echo"), "{tools:?}");
    // Marked as text from outside, like every MCP result (docs/policy.md).
    assert_eq!(
        tool_result(&model, "c1"),
        "<untrusted source=\"mcp\" tool=\"ed__echo\">\necho: from the editor\n</untrusted>"
    );
    assert!(client.finish().success());
}

/// `uji acp` with editor_fs on, started by an editor with `capabilities`,
/// the fake model scripted with `scripts`; the session id.
fn open_editor_fs(
    scripts: Vec<Script>,
    capabilities: agent_client_protocol::v1::schema::ClientCapabilities,
    editor_fs: bool,
) -> (Client, String, FakeModel, Sandbox) {
    let model = FakeModel::start();
    for script in scripts {
        model.push(script);
    }
    let setting = format!(r#"uji.config.set("acp", {{ editor_fs = {editor_fs} }})"#);
    let sandbox = sandbox_with(&model, &setting);
    let client = Client::spawn(&sandbox);
    client.initialize_with(capabilities);
    let session = client.new_session(&sandbox, vec![]).session_id.to_string();
    (client, session, model, sandbox)
}

fn edit(id: &str, path: &str, old: &str, new: &str) -> Script {
    call(
        id,
        "edit_file",
        json!({"path": path, "old_string": old, "new_string": new}),
    )
}

/// The `fs/write_text_file` requests as (path, content).
fn writes(client: &Client) -> Vec<(String, String)> {
    client
        .writes()
        .iter()
        .map(|w| {
            let text = |k: &str| w[k].as_str().unwrap().to_string();
            (text("path"), text("content"))
        })
        .collect()
}

fn path_of(path: &std::path::Path) -> String {
    path.to_str().unwrap().to_string()
}

#[test]
fn with_editor_fs_on_edits_and_writes_reach_the_editor_s_buffer() {
    let (client, session, _model, sandbox) = open_editor_fs(
        vec![
            edit("c1", "notes.txt", "old", "new"),
            call(
                "c2",
                "write_file",
                json!({"path": "fresh.txt", "content": "fresh\n"}),
            ),
            answer("Done."),
        ],
        writing_editor(),
        true,
    );
    let notes = sandbox.work().join("notes.txt");
    std::fs::write(&notes, "an old line\n").unwrap();
    // Open in the editor without unsaved changes.
    client.open_buffer(&notes, "an old line\n");
    let answer = client.prompt(&session, "edit and write").answer().unwrap();
    assert_eq!(answer.stop_reason, StopReason::EndTurn);

    let fresh = sandbox.work().join("fresh.txt");
    assert_eq!(
        writes(&client),
        [
            (path_of(&notes), "an new line\n".to_string()),
            (path_of(&fresh), "fresh\n".to_string())
        ]
    );
    assert!(client.writes().iter().all(|w| w["sessionId"] == session));
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "an new line\n");
    assert_eq!(std::fs::read_to_string(&fresh).unwrap(), "fresh\n");
    // The buffer was read whole before it was written.
    let reads = client.reads();
    assert_eq!(reads.len(), 1, "{reads:?}");
    assert_eq!(reads[0]["path"], path_of(&notes));
    assert!(reads[0]["line"].is_null() && reads[0]["limit"].is_null());
    assert!(client.finish().success());
}

#[test]
fn with_editor_fs_on_unsaved_changes_in_the_editor_are_never_lost() {
    let (client, session, _model, sandbox) = open_editor_fs(
        vec![
            edit("c1", "kept.txt", "two", "TWO"),
            edit("c2", "clash.txt", "alpha", "ALPHA"),
            call(
                "c3",
                "write_file",
                json!({"path": "whole.txt", "content": "replaced\n"}),
            ),
            answer("Done."),
        ],
        writing_editor(),
        true,
    );
    let work = sandbox.work();
    let (kept, clash, whole) = (
        work.join("kept.txt"),
        work.join("clash.txt"),
        work.join("whole.txt"),
    );
    std::fs::write(&kept, "one\ntwo\n").unwrap();
    std::fs::write(&clash, "alpha\n").unwrap();
    std::fs::write(&whole, "saved\n").unwrap();
    client.open_buffer(&kept, "one\ntwo\nmine, unsaved\n");
    client.open_buffer(&clash, "beta, unsaved\n");
    client.open_buffer(&whole, "saved\nmine, unsaved\n");
    let answer = client.prompt(&session, "edit them").answer().unwrap();
    assert_eq!(answer.stop_reason, StopReason::EndTurn);

    // The edit applies to the buffer: the editor and the disk get both.
    let both = "one\nTWO\nmine, unsaved\n";
    assert_eq!(writes(&client), [(path_of(&kept), both.to_string())]);
    assert_eq!(std::fs::read_to_string(&kept).unwrap(), both);
    // It does not, or a write replaces the file: the buffer is left alone
    // (its unsaved text is still there), the disk has the tool's result.
    assert_eq!(client.buffer(&clash).unwrap(), "beta, unsaved\n");
    assert_eq!(std::fs::read_to_string(&clash).unwrap(), "ALPHA\n");
    assert_eq!(client.buffer(&whole).unwrap(), "saved\nmine, unsaved\n");
    assert_eq!(std::fs::read_to_string(&whole).unwrap(), "replaced\n");
    assert!(client.finish().success());
    let log = std::fs::read_to_string(sandbox.root.path().join("data/logs/uji.log")).unwrap();
    assert!(
        log.contains("clash.txt has unsaved changes in the editor"),
        "{log}"
    );
    assert!(
        log.contains("whole.txt has unsaved changes in the editor"),
        "{log}"
    );
}

#[test]
fn with_editor_fs_off_edits_are_not_sent_to_the_editor() {
    let (client, session, _model, sandbox) = open_editor_fs(
        vec![edit("c1", "notes.txt", "old", "new"), answer("Done.")],
        writing_editor(),
        false,
    );
    let notes = sandbox.work().join("notes.txt");
    std::fs::write(&notes, "an old line\n").unwrap();
    client.prompt(&session, "edit").answer().unwrap();
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "an new line\n");
    assert!(client.writes().is_empty() && client.reads().is_empty());
}

#[test]
fn an_editor_that_does_not_write_files_is_not_sent_edits() {
    let (client, session, _model, sandbox) = open_editor_fs(
        vec![
            edit("c1", "notes.txt", "old", "new"),
            call("c2", "write_file", json!({"path": "b.txt", "content": "b"})),
            answer("Done."),
        ],
        reading_editor(),
        true,
    );
    let notes = sandbox.work().join("notes.txt");
    std::fs::write(&notes, "an old line\n").unwrap();
    client.prompt(&session, "edit").answer().unwrap();
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "an new line\n");
    assert!(client.writes().is_empty(), "{:?}", client.writes());
    assert!(client.reads().is_empty(), "no buffer read for an edit");
}

#[test]
fn a_command_added_mid_session_reaches_the_editor_s_command_list() {
    let model = FakeModel::start();
    let sandbox = sandbox_with(
        &model,
        r#"
uji.command.add("grow", { desc = "Add /later", handler = function()
  uji.command.add("later", { desc = "Added later", handler = function(args) return "later " .. args end })
  return "grown"
end })
"#,
    );
    let client = Client::spawn(&sandbox);
    let session = client.start(&sandbox);
    let first = client.update("the first command list", |u| {
        u["sessionUpdate"] == "available_commands_update"
    });
    assert!(!names(&first["availableCommands"]).contains(&"later"));

    let answer = client.prompt(&session, "/grow").answer().unwrap();
    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    let lists = client.updates_of("available_commands_update");
    assert_eq!(lists.len(), 2, "{lists:#?}");
    let second = names(&lists[1]["availableCommands"]);
    assert!(
        second.contains(&"later") && second.contains(&"grow") && second.contains(&"hello"),
        "{second:?}"
    );
    // And it runs from a prompt, as the session's commands do.
    client.prompt(&session, "/later on").answer().unwrap();
    let said = client.updates_of("agent_message_chunk");
    assert_eq!(said.last().unwrap()["content"]["text"], "later on");
    assert_eq!(model.requests().len(), 0);
    assert!(client.finish().success());
}

#[test]
fn a_command_s_output_is_shown_under_its_call_as_it_runs_and_when_done() {
    let (client, session, _model, _sandbox) = open(vec![
        call(
            "c1",
            "run_command",
            json!({"command": "echo first; sleep 1; echo second"}),
        ),
        answer("Ran."),
    ]);
    let answer = client.prompt(&session, "run it").answer().unwrap();
    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    let updates = client.updates_of("tool_call_update");
    let text_of = |u: &Value| -> String {
        u["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["content"]["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let progress = updates
        .iter()
        .find(|u| {
            u["toolCallId"] == "c1" && u["status"] == "in_progress" && u["content"].is_array()
        })
        .expect("a progress update while it ran");
    assert!(text_of(progress).contains("first"), "{progress}");
    let done = updates
        .iter()
        .rfind(|u| u["toolCallId"] == "c1" && u["status"] == "completed")
        .unwrap();
    let shown = text_of(done);
    assert!(
        shown.contains("```\n") && shown.contains("first\nsecond"),
        "{shown}"
    );
}

#[test]
fn when_the_editor_refuses_a_write_the_disk_keeps_the_edit() {
    let (client, session, _model, sandbox) = open_editor_fs(
        vec![edit("c1", "notes.txt", "old", "new"), answer("Done.")],
        writing_editor(),
        true,
    );
    let notes = sandbox.work().join("notes.txt");
    std::fs::write(&notes, "an old line\n").unwrap();
    client.refuse_writes();
    let answer = client.prompt(&session, "edit").answer().unwrap();
    assert_eq!(answer.stop_reason, StopReason::EndTurn);
    assert_eq!(client.writes().len(), 1, "the editor was asked");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "an new line\n");
    assert!(client.finish().success());
    let log = std::fs::read_to_string(sandbox.root.path().join("data/logs/uji.log")).unwrap();
    assert!(
        log.contains("the editor did not take the change to notes.txt")
            && log.contains("the file on disk has it"),
        "{log}"
    );
}

/// Issue 31: `/undo` and `/redo` are among the editor's commands, and
/// their question (the plan, put back or change nothing) is the editor's
/// permission question in their own words.
#[test]
fn undo_and_redo_are_offered_to_the_editor_and_ask_with_the_plan_first() {
    let (client, session, _model, sandbox) = open(vec![
        call(
            "c1",
            "write_file",
            json!({"path": "notes.txt", "content": "from the model\n"}),
        ),
        answer("Wrote it."),
    ]);
    let notes = sandbox.work().join("notes.txt");
    std::fs::write(&notes, "mine\n").unwrap();
    let offered = client.update("available commands", |u| {
        u["sessionUpdate"] == "available_commands_update"
    });
    let commands = names(&offered["availableCommands"]);
    assert!(
        commands.contains(&"undo") && commands.contains(&"redo"),
        "{commands:?}"
    );
    client.prompt(&session, "write the notes").answer().unwrap();
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "from the model\n");

    // Refused: nothing changes.
    client.choose(|_| selected("deny"));
    client.prompt(&session, "/undo").answer().unwrap();
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "from the model\n");
    let questions = client.questions();
    let asked = questions.last().unwrap();
    assert_eq!(
        asked["toolCall"]["title"],
        "undo of turn 1: put these files back as listed?"
    );
    assert_eq!(asked["toolCall"]["rawInput"]["restores"], "notes.txt");
    let options: Vec<(&str, &str)> = asked["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["optionId"].as_str().unwrap(), o["name"].as_str().unwrap()))
        .collect();
    assert_eq!(
        options,
        [("allow_once", "put them back"), ("deny", "change nothing")]
    );

    client.choose(|_| selected("allow_once"));
    client.prompt(&session, "/undo").answer().unwrap();
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "mine\n");
    let said: String = client
        .updates_of("agent_message_chunk")
        .iter()
        .filter_map(|u| u["content"]["text"].as_str())
        .collect();
    assert!(said.contains("restored notes.txt"), "{said}");

    client.prompt(&session, "/redo").answer().unwrap();
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "from the model\n");
    assert!(client.finish().success());
}
