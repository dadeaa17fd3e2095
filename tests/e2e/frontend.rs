//! A session as an interactive frontend drives it: operations in, events
//! out, approval questions answered by the user. Core, the real tools and
//! openai-chat plugins, and the fake model server, all in process: most
//! tests speak the wire's JSON to the server's port, the last runs a
//! frontend written on the typed SDK against it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use uji_core::server::serve;
use uji_core::session::service::{SessionOptions, Sessions, Start};
use uji_fake_model::chat::ChatEvents;
use uji_fake_model::{FakeModel, Script};
use uji_host::paths::Dirs;
use uji_host::{PluginSearch, Registry, SessionPort, load_module};
use uji_protocol::frontend::answers::{self, Answer, ModelSet, SessionList};
use uji_protocol::frontend::{Event, Op};
use uji_sdk::{Frontend, FrontendSession, Host, Plugin, in_process_module};
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
            parent: None,
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

/// What the typed frontend below found: the session it was configured with,
/// the ids `submit` returned and the answers they were acked with.
#[derive(Debug)]
struct Found {
    session: String,
    ids: Vec<String>,
    sessions: SessionList,
    model: ModelSet,
}

static FOUND: OnceLock<Found> = OnceLock::new();

/// A frontend on the typed SDK, as a Rust plugin author writes one: a turn,
/// then `list_sessions` and `set_model`, each ack matched by the id
/// `submit` returned and decoded with `answers::decode`.
struct Typed;

/// Reads events until `pick` takes one; the others are skipped.
fn wait_for<T>(
    session: &FrontendSession,
    mut pick: impl FnMut(Event) -> Option<T>,
) -> Result<T, String> {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        let event = session.next_event(Duration::from_millis(100));
        if let Some(found) = event.map_err(|e| e.to_string())?.and_then(&mut pick) {
            return Ok(found);
        }
    }
    Err("no such event within 10 s".to_string())
}

/// Submits `op` and decodes the result its ack carries.
fn ask<A: Answer>(session: &FrontendSession, op: &Op) -> Result<(String, A), String> {
    let id = session.submit(op).map_err(|e| e.to_string())?;
    let result = wait_for(session, |event| match event {
        Event::Ack { op_id, result } if op_id == id => Some(Ok(result)),
        Event::Error { op_id, message } if op_id.as_deref() == Some(&id) => Some(Err(message)),
        _ => None,
    })??;
    let answer = answers::decode(result.as_ref()).map_err(|e| e.to_string())?;
    Ok((id, answer))
}

impl Frontend for Typed {
    fn run(&self, session: FrontendSession) -> Result<(), String> {
        let configured = wait_for(&session, |event| match event {
            Event::SessionConfigured(configured) => Some(configured.id),
            _ => None,
        })?;
        let text = "remember the plum".to_string();
        let (images, delivery) = (Vec::new(), Default::default());
        let turn = session.submit(&Op::UserMessage {
            text,
            images,
            delivery,
        });
        turn.map_err(|e| e.to_string())?;
        wait_for(&session, |event| {
            matches!(event, Event::TurnFinished { .. }).then_some(())
        })?;
        let (listed, sessions) = ask(&session, &Op::ListSessions { all: false })?;
        let model = Some("fake/m".to_string());
        let (set, model) = ask(
            &session,
            &Op::SetModel {
                model,
                effort: None,
            },
        )?;
        session.submit(&Op::Shutdown).map_err(|e| e.to_string())?;
        wait_for(&session, |event| (event == Event::Closed).then_some(()))?;
        let found = Found {
            session: configured,
            ids: vec![listed, set],
            sessions,
            model,
        };
        FOUND.set(found).map_err(|_| "run twice".to_string())
    }
}

struct TypedPlugin;

impl Plugin for TypedPlugin {
    const NAME: &'static str = "typed-frontend";
    const VERSION: &'static str = "0.1.0";
    fn init(host: &Host) -> Result<(), String> {
        host.register_frontend("typed", Typed)
    }
}

#[test]
fn a_typed_frontend_matches_acks_by_the_ids_submit_returned_and_decodes_the_answers() {
    let model = FakeModel::start();
    model.push(answer("noted"));
    let session = start(&model);
    let registry = Registry::new();
    load_module(in_process_module::<TypedPlugin>(), "(test)", &registry).unwrap();
    let port: Arc<dyn SessionPort> = session.port.clone();
    registry.frontend("typed").unwrap().run(port).unwrap();
    let found = FOUND.get().unwrap();
    assert_eq!(found.ids, ["f2", "f3"], "the user message was f1");
    let listed: Vec<&str> = found
        .sessions
        .sessions
        .iter()
        .map(|s| s.id.as_str())
        .collect();
    assert_eq!(listed, [found.session.as_str()]);
    assert_eq!(found.sessions.sessions[0].title, "frontend test");
    assert_eq!(found.model.model.provider, "fake");
    assert_eq!(found.model.model.model, "m");
    assert_eq!(model.requests().len(), 1);
}
