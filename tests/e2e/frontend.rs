//! A session as an interactive frontend drives it: operations in, events
//! out, approval questions answered by the user. Core, the real tools and
//! openai-chat plugins, and the fake model server, all in process.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use uji_core::server::serve;
use uji_core::session::service::{SessionOptions, Sessions, Start};
use uji_fake_model::chat::ChatEvents;
use uji_fake_model::{FakeModel, Script};
use uji_host::paths::Dirs;
use uji_host::{PluginSearch, SessionPort};
use uji_tests::artifact;

struct Session {
    port: Arc<uji_core::server::ServerPort>,
    runtime: tokio::runtime::Runtime,
    _root: tempfile::TempDir,
    work: std::path::PathBuf,
}

fn start(model: &FakeModel) -> Session {
    let root = tempfile::tempdir().unwrap();
    let (config, data, work) = (
        root.path().join("config"),
        root.path().join("data"),
        root.path().join("work"),
    );
    for dir in [&config, &data, &work] {
        std::fs::create_dir_all(dir).unwrap();
    }
    let work = work.canonicalize().unwrap();
    std::fs::write(work.join("notes.txt"), "one\ntwo\n").unwrap();
    let search = PluginSearch {
        exe_dir: None,
        plugin_path: Some(format!(
            "{}:{}",
            artifact("uji_plugin_tools").display(),
            artifact("uji_plugin_openai_chat").display()
        )),
        config_plugins: None,
    };
    let dirs = Dirs {
        config,
        data: data.clone(),
    };
    let booted = uji_core::boot(uji_core::BootOptions::new(dirs, &work).search(search));
    assert!(
        booted.plugins.failed.is_empty(),
        "{:?}",
        booted.plugins.failed
    );
    let provider = json!({"id": "fake", "wire": "openai-chat", "base_url": model.base_url(), "models": [{"id": "m"}]});
    booted
        .registry
        .call_service("test", "provider.add", provider)
        .unwrap();
    let sessions = Sessions::new(
        &booted,
        SessionOptions {
            model: Some("fake/m".to_string()),
            ..SessionOptions::default()
        },
    )
    .unwrap();
    let (agent, resumed) = sessions
        .start(&Start::New {
            title: Some("frontend test".into()),
        })
        .unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (port, _handle) = {
        let _guard = runtime.enter();
        serve(sessions, agent, resumed)
    };
    Session {
        port,
        runtime,
        _root: root,
        work,
    }
}

/// Reads events until one of type `kind` arrives (at most 10 s).
fn until(port: &dyn SessionPort, kind: &str, seen: &mut Vec<Value>) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if let Some(event) = port.next_event(100).unwrap() {
            seen.push(event.clone());
            if event["type"] == kind {
                return event;
            }
        }
    }
    panic!("no {kind} event; saw {seen:#?}");
}

fn edit_call() -> Script {
    let args = json!({"path": "notes.txt", "old_string": "two", "new_string": "TWO"}).to_string();
    Script::sse(
        ChatEvents::new("m")
            .tool_call(0, "c_edit", "edit_file", &args, 3)
            .finish("tool_calls")
            .done(),
    )
}

fn answer(text: &str) -> Script {
    Script::sse(ChatEvents::new("m").text(text, 2).finish("stop").done())
}

#[test]
fn an_ask_becomes_a_question_with_the_diff_and_the_answer_decides() {
    let model = FakeModel::start();
    model.push(edit_call()).push(answer("edited"));
    let session = start(&model);
    let port: &dyn SessionPort = session.port.as_ref();
    let mut seen = Vec::new();
    port.submit(json!({"type": "user_message", "text": "capitalise two"}))
        .unwrap();
    assert_eq!(
        until(port, "session_configured", &mut seen)["resumed"],
        false
    );
    let question = until(port, "approval_request", &mut seen);
    assert_eq!(question["tool"], "edit_file");
    assert_eq!(question["verb"], "Update");
    assert_eq!(question["subject"], "notes.txt");
    assert_eq!(question["question"], "Edit this file?");
    assert_eq!(
        question["diff"]["unified"],
        "--- notes.txt\n+++ notes.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n"
    );
    assert_eq!(
        std::fs::read_to_string(session.work.join("notes.txt")).unwrap(),
        "one\ntwo\n",
        "nothing written before the answer"
    );
    port.submit(json!({"type": "approval", "call_id": question["call_id"], "allow": true}))
        .unwrap();
    let done = until(port, "turn_finished", &mut seen);
    assert_eq!(done["text"], "edited");
    assert_eq!(
        std::fs::read_to_string(session.work.join("notes.txt")).unwrap(),
        "one\nTWO\n"
    );
    assert!(
        seen.iter().any(|e| e["type"] == "delta"),
        "streamed text reaches the frontend"
    );
    assert!(
        seen.iter()
            .any(|e| e["type"] == "tool_started" && e["subject"] == "notes.txt")
    );
    port.submit(json!({"type": "shutdown"})).unwrap();
    until(port, "closed", &mut seen);
    drop(session.runtime);
}

#[test]
fn a_refusal_with_guidance_reaches_the_model() {
    let model = FakeModel::start();
    model.push(edit_call()).push(answer("ok, leaving it"));
    let session = start(&model);
    let port: &dyn SessionPort = session.port.as_ref();
    let mut seen = Vec::new();
    port.submit(json!({"type": "user_message", "text": "capitalise two"}))
        .unwrap();
    let question = until(port, "approval_request", &mut seen);
    port.submit(json!({"type": "approval", "call_id": question["call_id"], "allow": false, "guidance": "keep it lowercase"})).unwrap();
    until(port, "turn_finished", &mut seen);
    let sent = model.requests()[1].json["messages"]
        .as_array()
        .unwrap()
        .clone();
    let result = sent.iter().find(|m| m["role"] == "tool").unwrap();
    assert_eq!(
        result["content"],
        "denied: user denied\nThe user says: keep it lowercase"
    );
    assert_eq!(
        std::fs::read_to_string(session.work.join("notes.txt")).unwrap(),
        "one\ntwo\n"
    );
}

#[test]
fn an_interrupt_op_stops_a_waiting_question() {
    let model = FakeModel::start();
    model.push(edit_call());
    let session = start(&model);
    let port: &dyn SessionPort = session.port.as_ref();
    let mut seen = Vec::new();
    port.submit(json!({"type": "user_message", "text": "capitalise two"}))
        .unwrap();
    until(port, "approval_request", &mut seen);
    port.submit(json!({"type": "interrupt"})).unwrap();
    let done = until(port, "turn_finished", &mut seen);
    assert_eq!(done["interrupted"], true);
    let tool = seen
        .iter()
        .find(|e| e["type"] == "message" && e["message"]["role"] == "tool")
        .unwrap();
    assert_eq!(
        tool["message"]["content"],
        "error: interrupted by the user before this tool ran"
    );
}

#[test]
fn compaction_can_be_asked_for() {
    let model = FakeModel::start();
    model
        .push(answer("first answer"))
        .push(answer("second answer"))
        .push(answer("SUMMARY of the talk"));
    let session = start(&model);
    let port: &dyn SessionPort = session.port.as_ref();
    let mut seen = Vec::new();
    for text in ["one", "two"] {
        port.submit(json!({"type": "user_message", "text": text}))
            .unwrap();
        until(port, "turn_finished", &mut seen);
    }
    port.submit(json!({"id": "c1", "type": "compact"})).unwrap();
    let compacted = until(port, "compacted", &mut seen);
    assert_eq!(compacted["messages"], 3, "{compacted}");
    assert_eq!(compacted["through"], 3, "all but the newest message");
    let ack = until(port, "ack", &mut seen);
    assert_eq!(ack["op_id"], "c1");
    let compaction = seen
        .iter()
        .find(|e| e["type"] == "message" && e["message"]["role"] == "compaction")
        .unwrap_or_else(|| panic!("a compaction message before the notice: {seen:#?}"));
    assert_eq!(compaction["message"]["summary"], "SUMMARY of the talk");
    let summary_request = model.requests().pop().unwrap();
    assert!(summary_request.body_text().contains("first answer"));
}

#[test]
fn a_message_sent_during_a_turn_steers_it() {
    let model = FakeModel::start();
    model
        .push(
            Script::sse(
                ChatEvents::new("m")
                    .text("answer one", 4)
                    .finish("stop")
                    .done(),
            )
            .delay(Duration::from_millis(150)),
        )
        .push(answer("answer two"));
    let session = start(&model);
    let port: &dyn SessionPort = session.port.as_ref();
    let mut seen = Vec::new();
    port.submit(json!({"type": "user_message", "text": "first"}))
        .unwrap();
    assert!(model.wait_for_requests(1, Duration::from_secs(10)));
    port.submit(json!({"type": "user_message", "text": "also this"}))
        .unwrap();
    let done = until(port, "turn_finished", &mut seen);
    assert_eq!(done["text"], "answer two", "one turn, steered");
    let sent = model.requests()[1].json["messages"]
        .as_array()
        .unwrap()
        .clone();
    let roles: Vec<&str> = sent.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
    assert_eq!(sent[3]["content"], "also this");
    assert_eq!(model.requests().len(), 2);
}
