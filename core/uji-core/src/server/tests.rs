//! The session server in process, on a wire that answers at once (model
//! `unit/quick`) or when the test says so (`unit/held`): what host services
//! read of the session, `turn_context` handlers, and a lock poisoned while
//! a turn runs.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use uji_host::PluginSearch;
use uji_host::paths::Dirs;
use uji_protocol::HookOptions;
use uji_protocol::services::{
    MessageFact, ModelInfo, ModelUse, Provider, SessionFacts, SessionFactsRequest, SessionInfo,
    SessionInfoRequest, SessionMessagesRequest,
};
use uji_protocol::session::MessageBody;
use uji_sdk::{Answer, Canceller, Host, Message, Plugin, Reply, Usage, Wire, WireRequest};

use super::*;
use crate::session::service::SessionOptions;

/// Replies of `unit/held` and `unit/partial` requests, by session id,
/// until a test answers them.
static HELD: Mutex<Vec<(String, Reply)>> = Mutex::new(Vec::new());

/// Every request's messages, by session id, as the wire got them.
static SENT: Mutex<Vec<(String, Vec<Message>)>> = Mutex::new(Vec::new());

/// Every request's system prompt, by session id.
static SYSTEMS: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

/// What `turn_context` handlers were called with.
static CONTEXT_CALLS: Mutex<Vec<Value>> = Mutex::new(Vec::new());

struct UnitWire;

impl Wire for UnitWire {
    fn stream(&self, request: WireRequest, reply: Reply) -> Option<Canceller> {
        let session = request.session.clone().unwrap_or_default();
        SENT.lock()
            .push((session.clone(), request.messages.clone()));
        SYSTEMS
            .lock()
            .push((session.clone(), request.system.clone()));
        match request.model.as_str() {
            "held" => HELD.lock().push((session, reply)),
            // Streams half an answer, then waits like `held`.
            "partial" => {
                reply.text("half an ");
                reply.text("answer");
                HELD.lock().push((session, reply));
            }
            _ => reply.done(answer("quick answer")),
        }
        None
    }
}

fn answer(text: &str) -> Answer {
    Answer {
        text: text.to_string(),
        usage: Usage {
            input: 3,
            output: 2,
            ..Usage::default()
        },
        ..Answer::default()
    }
}

struct UnitPlugin;

impl Plugin for UnitPlugin {
    const NAME: &'static str = "unit-wire";
    const VERSION: &'static str = "0.0.0";

    fn init(host: &Host) -> Result<(), String> {
        host.register_wire("unit", UnitWire)?;
        let provider = Provider::new("unit", "unit")
            .model(ModelInfo::new("quick"))
            .model(ModelInfo::new("held").context_window(200_000))
            .model(ModelInfo::new("partial"));
        host.add_provider(provider).map_err(|e| e.to_string())
    }
}

/// Handlers of `turn_context`: one adds to the system prompt and the
/// turn for the message `hello`, one fails, one answers a string for it.
struct ContextPlugin;

impl Plugin for ContextPlugin {
    const NAME: &'static str = "unit-context";
    const VERSION: &'static str = "0.0.0";

    fn init(host: &Host) -> Result<(), String> {
        let named = |name: &str, priority| HookOptions {
            priority,
            name: Some(name.to_string()),
        };
        let hello = |payload: &Value| payload["text"] == "hello";
        host.on("turn_context", named("branch", 10), move |payload| {
            CONTEXT_CALLS.lock().push(payload.clone());
            Ok(if hello(&payload) {
                json!({"system": "Work on branch main.", "turn": "The tests live in tests/."})
            } else {
                Value::Null
            })
        })?;
        host.on("turn_context", named("broken", 20), |_| {
            Err("boom".to_string())
        })?;
        host.on("turn_context", named("plain", 30), move |payload| {
            Ok(if hello(&payload) {
                json!("Answer briefly.")
            } else {
                Value::Null
            })
        })
    }
}

struct Running {
    port: Arc<ServerPort>,
    shared: Arc<Shared>,
    id: String,
    _runtime: tokio::runtime::Runtime,
    _root: tempfile::TempDir,
}

/// A session on `model`, served, its `session_configured` read.
fn start(model: &str) -> Running {
    start_with(model, None)
}

/// [`start`], with the plugin `extra` loaded too.
fn start_with(model: &str, extra: Option<(uji_host::PluginModuleRef, &str)>) -> Running {
    let root = tempfile::tempdir().unwrap();
    let dirs = Dirs {
        config: root.path().join("config"),
        data: root.path().join("data"),
    };
    let work = root.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let search = PluginSearch {
        exe_dir: None,
        plugin_path: None,
        config_plugins: None,
    };
    let unit = uji_sdk::in_process_module::<UnitPlugin>();
    let mut builtins = vec![(unit, "unit-wire")];
    builtins.extend(extra);
    let booted = crate::boot(
        crate::BootOptions::new(dirs, &work)
            .search(search)
            .builtins(&builtins),
    );
    let options = SessionOptions {
        model: Some(model.to_string()),
        ..SessionOptions::default()
    };
    let sessions = Sessions::new(&booted, options).unwrap();
    let (agent, resumed) = sessions
        .start(&Start::New {
            title: None,
            parent: None,
        })
        .unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (port, _worker, shared) = {
        let _guard = runtime.enter();
        serve_shared(sessions, agent, resumed)
    };
    let id = shared.snapshot.borrow().id.clone();
    let running = Running {
        id,
        port,
        shared,
        _runtime: runtime,
        _root: root,
    };
    running.until(|event| matches!(event, Event::SessionConfigured(_)));
    running
}

impl Running {
    /// Reads events until one `wanted` (at most 10 s).
    fn until(&self, wanted: impl Fn(&Event) -> bool) -> Event {
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut seen = Vec::new();
        while Instant::now() < deadline {
            if let Some(event) = self.port.next(Duration::from_millis(100)).unwrap() {
                if wanted(&event) {
                    return event;
                }
                seen.push(event);
            }
        }
        panic!("not the event waited for; saw {seen:#?}");
    }

    fn say(&self, text: &str) {
        let op = Op::UserMessage {
            text: text.to_string(),
            images: Vec::new(),
            delivery: Delivery::Queue,
        };
        self.port.submit_op(op).unwrap();
    }

    /// What a plugin's `session.facts` answers now.
    fn facts(&self) -> SessionFacts {
        let registry = &self.shared.sessions.registry;
        registry.call("test", &SessionFactsRequest {}).unwrap()
    }

    /// What a plugin's `session.messages` answers now.
    fn message_facts(&self) -> Vec<MessageFact> {
        let registry = &self.shared.sessions.registry;
        registry.call("test", &SessionMessagesRequest {}).unwrap()
    }

    /// The system prompt of this session's latest request.
    fn last_system(&self) -> String {
        let systems = SYSTEMS.lock();
        let mine = systems.iter().rev().find(|(id, _)| *id == self.id);
        mine.map(|(_, system)| system.clone()).unwrap_or_default()
    }

    /// What a plugin's `session.info` answers now.
    fn info(&self) -> SessionInfo {
        self.shared
            .sessions
            .registry
            .call("test", &SessionInfoRequest {})
            .unwrap()
    }

    fn interrupt(&self) {
        self.port.submit_op(Op::Interrupt).unwrap();
    }

    /// Switches the model as a plugin's `uji.model.use` does.
    fn use_model(&self, model: &str) {
        let registry = &self.shared.sessions.registry;
        registry.call("test", &ModelUse::new(model)).unwrap();
    }

    /// The messages of this session's latest request.
    fn last_sent(&self) -> Vec<Message> {
        let sent = SENT.lock();
        let mine = sent.iter().rev().find(|(id, _)| *id == self.id);
        mine.map(|(_, messages)| messages.clone())
            .unwrap_or_default()
    }

    fn busy(&self) -> bool {
        self.info().extra.get("busy") == Some(&Value::Bool(true))
    }

    /// Answers this session's held request, once the wire holds it.
    fn answer_held(&self, text: &str) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let reply = {
                let mut held = HELD.lock();
                let at = held.iter().position(|(id, _)| *id == self.id);
                at.map(|at| held.remove(at).1)
            };
            if let Some(reply) = reply {
                reply.done(answer(text));
                return;
            }
            assert!(Instant::now() < deadline, "no request was held");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits until the wire holds this session's request.
    fn wait_held(&self) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !HELD.lock().iter().any(|(id, _)| *id == self.id) {
            assert!(Instant::now() < deadline, "no request was held");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

fn turn_finished(event: &Event) -> bool {
    matches!(event, Event::TurnFinished { .. })
}

#[test]
fn session_info_reports_the_switched_model_and_the_finished_turn() {
    let session = start("unit/quick");
    let info = session.info();
    assert_eq!(
        (info.model.as_str(), info.messages, session.busy()),
        ("unit/quick", 0, false)
    );
    session.say("hello");
    session.until(turn_finished);
    // A frontend that reads turn_finished finds the turn in the answer.
    let info = session.info();
    assert_eq!((info.messages, session.busy()), (2, false));
    assert_eq!((info.usage.input, info.usage.output), (3, 2));
    assert_eq!(info.id, session.id);
    let switch = ModelUse {
        effort: Some("high".to_string()),
        ..ModelUse::new("unit/held")
    };
    session
        .shared
        .sessions
        .registry
        .call("test", &switch)
        .unwrap();
    let info = session.info();
    assert_eq!(info.model, "unit/held");
    assert_eq!(info.effort.as_deref(), Some("high"));
    session.say("again");
    session.wait_held();
    // The turn runs: its message is counted, the session is busy, and a
    // switch made meanwhile is the model the next request uses.
    assert_eq!((session.info().messages, session.busy()), (3, true));
    session.use_model("unit/quick");
    assert_eq!(session.info().model, "unit/quick");
    session.answer_held("held answer");
    session.until(turn_finished);
    let info = session.info();
    assert_eq!((info.messages, session.busy()), (4, false));
    assert_eq!((info.usage.input, info.usage.output), (6, 4));
}

#[test]
fn a_poisoned_busy_slot_does_not_lose_a_queued_message() {
    let session = start("unit/held");
    session.say("first");
    session.wait_held();
    // A thread dies holding the lock that says whether a turn runs.
    let shared = Arc::clone(&session.shared);
    let died = std::thread::spawn(move || {
        let _held = shared.current.lock();
        panic!("a thread dies holding the busy slot");
    })
    .join();
    assert!(died.is_err());
    assert!(session.busy(), "a running turn must not be reported idle");
    session.say("second");
    let queued = session.until(|event| matches!(event, Event::QueueChanged { .. }));
    assert!(
        matches!(&queued, Event::QueueChanged { queued } if queued == &["second".to_string()]),
        "{queued:?}"
    );
    session.answer_held("one");
    // The queued message is the next turn's, not dropped.
    let next = session.until(|event| matches!(event, Event::TurnStarted { .. }));
    assert!(
        matches!(&next, Event::TurnStarted { text } if text == "second"),
        "{next:?}"
    );
    session.answer_held("two");
    session.until(turn_finished);
    assert_eq!((session.info().messages, session.busy()), (4, false));
}

fn interrupted(event: &Event) -> bool {
    matches!(
        event,
        Event::TurnFinished {
            interrupted: true,
            ..
        }
    )
}

#[test]
fn an_interrupted_answer_keeps_what_streamed_and_the_next_request_carries_it() {
    let session = start("unit/partial");
    session.say("explain");
    session.wait_held();
    session.interrupt();
    let kept = session.until(|event| {
        let answer = matches!(event, Event::Message { message }
            if matches!(message.body, MessageBody::Assistant { .. }));
        answer || turn_finished(event)
    });
    assert!(
        matches!(&kept, Event::Message { message } if matches!(
            &message.body,
            MessageBody::Assistant { text, .. } if text == "half an answer"
        )),
        "the partial answer is saved before the turn ends: {kept:?}"
    );
    session.until(interrupted);
    session.use_model("unit/quick");
    session.say("go on");
    session.until(turn_finished);
    let sent = session.last_sent();
    let roles: Vec<&str> = sent
        .iter()
        .map(|m| match m {
            Message::User { .. } => "user",
            Message::Assistant { .. } => "assistant",
            _ => "other",
        })
        .collect();
    assert_eq!(roles, ["user", "assistant", "user"], "{sent:?}");
    assert!(
        matches!(&sent[1], Message::Assistant { text, .. } if text == "half an answer"),
        "{sent:?}"
    );
}

#[test]
fn an_interrupt_while_idle_does_not_interrupt_the_next_message() {
    let session = start("unit/quick");
    // Esc on a `!cmd` that already ended, or a second Esc: nothing runs.
    session.interrupt();
    session.say("hello");
    let finished = session.until(turn_finished);
    assert!(
        matches!(&finished, Event::TurnFinished { interrupted: false, text: Some(text), .. } if text == "quick answer"),
        "{finished:?}"
    );
}

/// The messages of a request as (role, text).
fn roles_and_texts(sent: &[Message]) -> Vec<(&'static str, String)> {
    sent.iter()
        .map(|m| match m {
            Message::User { text, .. } => ("user", text.clone()),
            Message::Assistant { text, .. } => ("assistant", text.clone()),
            Message::Tool { content, .. } => ("tool", content.clone()),
        })
        .collect()
}

#[test]
fn session_facts_tell_the_state_the_queue_the_context_and_the_usage() {
    let session = start("unit/held");
    let facts = session.facts();
    assert_eq!(
        (facts.state.as_str(), facts.elapsed_secs, facts.queue.len()),
        ("idle", None, 0)
    );
    assert_eq!(
        (facts.context.used, facts.context.window),
        (0, Some(200_000))
    );
    assert_eq!((facts.usage.total, facts.usage.requests), (0, 0));
    session.say("first");
    session.wait_held();
    session.say("second");
    session.until(|event| matches!(event, Event::QueueChanged { queued } if !queued.is_empty()));
    let facts = session.facts();
    assert_eq!(facts.state, "working");
    assert_eq!(facts.queue, ["second"]);
    let elapsed = facts
        .elapsed_secs
        .expect("a running turn has an elapsed time");
    std::thread::sleep(Duration::from_millis(20));
    let later = session.facts().elapsed_secs.unwrap_or_default();
    assert!(elapsed >= 0.0 && later > elapsed, "{elapsed} then {later}");
    session.answer_held("one");
    session.until(|event| matches!(event, Event::TurnStarted { text } if text == "second"));
    // The queued message is the running turn's now.
    assert!(session.facts().queue.is_empty());
    session.answer_held("two");
    session.until(turn_finished);
    let facts = session.facts();
    assert_eq!((facts.state.as_str(), facts.elapsed_secs), ("idle", None));
    let usage = &facts.usage;
    assert_eq!(
        (
            usage.input,
            usage.output,
            usage.cache_read,
            usage.cache_write
        ),
        (6, 4, 0, 0)
    );
    assert_eq!((usage.total, usage.requests), (10, 2));
    assert_eq!((usage.last.input, usage.last.output), (3, 2));
    assert_eq!(facts.context.used, 3);
    // The window is the model's the agent uses, switched while idle.
    session.use_model("unit/quick");
    let deadline = Instant::now() + Duration::from_secs(10);
    while session.facts().context.window != Some(128_000) {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn session_messages_are_the_saved_conversation_oldest_first() {
    let session = start("unit/quick");
    assert!(session.message_facts().is_empty());
    session.say("hello");
    session.until(turn_finished);
    session.say("again");
    session.until(turn_finished);
    let told: Vec<(String, String)> = session
        .message_facts()
        .into_iter()
        .map(|m| (m.r#type, m.text))
        .collect();
    let expected = [
        ("user", "hello"),
        ("assistant", "quick answer"),
        ("user", "again"),
        ("assistant", "quick answer"),
    ];
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(t, x)| (t.to_string(), x.to_string()))
        .collect();
    assert_eq!(told, expected);
}

#[test]
fn turn_context_adds_to_this_turns_system_prompt_and_a_hidden_message_after_the_users() {
    let context = uji_sdk::in_process_module::<ContextPlugin>();
    let session = start_with("unit/quick", Some((context, "unit-context")));
    session.say("hello");
    let failed = session.until(
        |event| matches!(event, Event::Notice { text, .. } if text.starts_with("context handler")),
    );
    assert!(
        matches!(&failed, Event::Notice { text, .. }
            if text == "context handler broken failed: plugin unit-context: boom"),
        "{failed:?}"
    );
    // The turn went on.
    session.until(turn_finished);
    let system = session.last_system();
    assert!(
        system.ends_with("\n\nWork on branch main.\n\nAnswer briefly."),
        "{system}"
    );
    assert_eq!(
        roles_and_texts(&session.last_sent()),
        [
            ("user", "hello".to_string()),
            ("user", "The tests live in tests/.".to_string())
        ]
    );
    let calls = CONTEXT_CALLS.lock().clone();
    let mine: Vec<&Value> = calls
        .iter()
        .filter(|c| c["session"] == *session.id)
        .collect();
    assert_eq!(
        mine,
        [&json!({"event": "turn_context", "session": session.id, "text": "hello"})]
    );
    let saved = session.shared.sessions.messages(&session.id).unwrap();
    let users: Vec<(&str, bool)> = saved
        .iter()
        .filter_map(|m| match &m.body {
            MessageBody::User { text, hidden, .. } => Some((text.as_str(), *hidden)),
            _ => None,
        })
        .collect();
    assert_eq!(
        users,
        [("hello", false), ("The tests live in tests/.", true)]
    );
    assert_eq!(session.message_facts()[1].r#type, "context");
    // The next turn adds nothing: this turn's system additions are gone.
    session.say("again");
    session.until(turn_finished);
    let system = session.last_system();
    assert!(!system.contains("Work on branch main."), "{system}");
    assert!(!system.contains("Answer briefly."), "{system}");
    let sent = roles_and_texts(&session.last_sent());
    assert_eq!(
        sent.iter().map(|(role, _)| *role).collect::<Vec<_>>(),
        ["user", "user", "assistant", "user"]
    );
}

#[test]
fn plugins_reach_http_through_the_session_services() {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/ping", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
            head.push(byte[0]);
        }
        let answer = "HTTP/1.1 200 OK\r\nContent-Length: 4\r\nConnection: close\r\n\r\npong";
        stream.write_all(answer.as_bytes()).unwrap();
    });
    let session = start("unit/quick");
    let registry = &session.shared.sessions.registry;
    let opened = registry
        .call("test", &uji_protocol::services::HttpOpen::get(url))
        .unwrap();
    assert_eq!(opened.status, 200);
    let read = uji_protocol::services::HttpRead {
        id: opened.id,
        max_bytes: None,
        wait_ms: 5_000,
    };
    let mut body = String::new();
    loop {
        let chunk = registry.call("test", &read).unwrap();
        body.push_str(&chunk.data);
        if chunk.done {
            break;
        }
    }
    assert_eq!(body, "pong");
    let close = uji_protocol::services::HttpClose { id: opened.id };
    registry.call("test", &close).unwrap();
}

/// A plugin's `ui.dialog`, asked on a thread of its own as plugins do.
fn dialog_from_plugin(
    session: &Running,
    request: uji_protocol::services::UiDialog,
) -> std::thread::JoinHandle<Result<DialogAnswer, String>> {
    let registry = session.shared.sessions.registry.clone();
    std::thread::spawn(move || registry.call("test", &request))
}

fn select(items: &[&str]) -> uji_protocol::services::UiDialog {
    uji_protocol::services::UiDialog {
        kind: DialogKind::Select,
        title: "Branch".to_string(),
        items: items.iter().map(|item| item.to_string()).collect(),
        current: Some(1),
        value: None,
        hidden: false,
        body: None,
        timeout_ms: None,
    }
}

fn hello(session: &Running, dialogs: bool) {
    session.port.submit_op(Op::Hello { dialogs }).unwrap();
    session.until(|event| matches!(event, Event::Ack { .. }));
}

fn dialog_id(session: &Running) -> String {
    match session.until(|event| matches!(event, Event::Dialog { .. })) {
        Event::Dialog { dialog_id, .. } => dialog_id,
        _ => unreachable!(),
    }
}

use uji_protocol::frontend::{DialogAnswer, DialogKind, Resolution};

#[test]
fn a_dialog_is_answered_through_a_frontend_that_shows_them() {
    let session = start("unit/quick");
    hello(&session, true);
    let asked = dialog_from_plugin(&session, select(&["main", "dev"]));
    let shown = session.until(|event| matches!(event, Event::Dialog { .. }));
    let Event::Dialog {
        dialog_id,
        kind,
        items,
        current,
        ..
    } = shown
    else {
        unreachable!()
    };
    assert_eq!(
        (kind, items.len(), current),
        (DialogKind::Select, 2, Some(1))
    );
    // An answer that does not fit is refused, and the dialog stays open.
    let wrong = Op::AnswerDialog {
        dialog_id: dialog_id.clone(),
        answer: DialogAnswer::Selected { index: 2 },
    };
    session.port.submit_op(wrong).unwrap();
    let refused = session.until(|event| matches!(event, Event::Error { .. }));
    assert!(format!("{refused:?}").contains("2 items"), "{refused:?}");
    let right = Op::AnswerDialog {
        dialog_id: dialog_id.clone(),
        answer: DialogAnswer::Selected { index: 0 },
    };
    session.port.submit_op(right).unwrap();
    let resolved = session.until(|event| matches!(event, Event::DialogResolved { .. }));
    assert_eq!(
        resolved,
        Event::DialogResolved {
            dialog_id,
            resolution: Resolution::Answered,
            answer: Some(DialogAnswer::Selected { index: 0 }),
        }
    );
    assert_eq!(
        asked.join().unwrap(),
        Ok(DialogAnswer::Selected { index: 0 })
    );
}

#[test]
fn a_frontend_that_never_said_it_shows_dialogs_makes_the_plugin_fail_at_once() {
    let session = start("unit/quick");
    let started = Instant::now();
    let answer = dialog_from_plugin(&session, select(&["a", "b"]))
        .join()
        .unwrap();
    let message = answer.unwrap_err();
    assert!(
        message.starts_with("this frontend cannot show dialogs"),
        "{message}"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[test]
fn a_dialog_nobody_answers_in_time_times_out_and_is_taken_off_the_screen() {
    let session = start("unit/quick");
    hello(&session, true);
    let mut prompt = select(&[]);
    prompt.kind = DialogKind::Prompt;
    prompt.timeout_ms = Some(100);
    let asked = dialog_from_plugin(&session, prompt);
    let id = dialog_id(&session);
    let resolved = session.until(|event| matches!(event, Event::DialogResolved { .. }));
    assert!(
        matches!(&resolved, Event::DialogResolved { dialog_id, resolution: Resolution::TimedOut, .. } if *dialog_id == id),
        "{resolved:?}"
    );
    assert_eq!(asked.join().unwrap(), Ok(DialogAnswer::TimedOut));
}

#[test]
fn a_refused_dialog_gives_the_plugin_the_frontends_reason() {
    let session = start("unit/quick");
    hello(&session, true);
    let asked = dialog_from_plugin(&session, select(&["a", "b"]));
    let dialog_id = dialog_id(&session);
    let reason = "the editor cannot ask for text".to_string();
    let op = Op::RefuseDialog {
        dialog_id,
        reason: reason.clone(),
    };
    session.port.submit_op(op).unwrap();
    assert_eq!(asked.join().unwrap(), Err(reason));
}

#[test]
fn a_dialog_open_when_the_session_ends_fails_instead_of_waiting() {
    let session = start("unit/quick");
    hello(&session, true);
    let mut confirm = select(&[]);
    confirm.kind = DialogKind::Confirm;
    confirm.body = Some("Pushes to origin".to_string());
    let asked = dialog_from_plugin(&session, confirm);
    dialog_id(&session);
    session.port.submit_op(Op::Shutdown).unwrap();
    let message = asked.join().unwrap().unwrap_err();
    assert_eq!(message, "the session ended before the dialog was answered");
}

#[test]
fn a_dialog_of_an_unknown_kind_or_a_select_without_items_is_refused() {
    let session = start("unit/quick");
    hello(&session, true);
    let empty = dialog_from_plugin(&session, select(&[])).join().unwrap();
    assert!(empty.unwrap_err().contains("needs items"));
    let registry = session.shared.sessions.registry.clone();
    let newer = registry.call_service(
        "test",
        "ui.dialog",
        serde_json::json!({"kind": "colour", "title": "t"}),
    );
    assert!(newer.unwrap_err().contains("select"));
}
