//! The whole screen, in process: the plugin's `App` fed the events uji
//! sends and the keys a person presses, drawn into ratatui's TestBackend.
//! Each test asserts on what is on screen and on the operations the screen
//! sent to uji. (The real binary in a real pseudo-terminal is
//! tests/e2e/tui.rs.)

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind};
use parking_lot::Mutex;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::Color;
use serde_json::{Value, json};
use uji_plugin_tui::app::{App, Msg, Outbox, render};
use uji_plugin_tui::approval_guard::{GUARD, ManualClock};
use uji_plugin_tui::theme::Theme;
use uji_protocol::FileDiff;
use uji_protocol::frontend::answers::{self, Answer, CommandOutput, ModelList, SessionList};
use uji_protocol::frontend::answers::{ProviderList, SessionSummary};
use uji_protocol::frontend::{
    ApprovalDecision, CommandInfo, Delivery, DialogAnswer, DialogKind, Event as UjiEvent,
    GateDecision, KeyOrigin, ModelEntry, ModelState, Op, ProviderEntry, Resolution, Secret,
    SessionConfigured, ToolInfo,
};
use uji_protocol::session::{MessageBody, StoredMessage};
use uji_protocol::wire::{ToolCallRequest, Usage};
use uji_sdk::FrontendError;

#[path = "screen/snapshots.rs"]
mod snapshots;

/// The operations the screen sent, with the ids it gave them.
#[derive(Default)]
struct Recorder(Mutex<Vec<(String, Op)>>);

impl Outbox for Recorder {
    fn submit(&self, id: &str, op: &Op) -> Result<(), FrontendError> {
        self.0.lock().push((id.to_string(), op.clone()));
        Ok(())
    }
}

struct Screen {
    app: App,
    term: Terminal<TestBackend>,
    sent: Arc<Recorder>,
    clock: Arc<ManualClock>,
}

impl Screen {
    fn new(width: u16, height: u16) -> Screen {
        Screen::with_theme(width, height, Theme::colored())
    }

    fn with_theme(width: u16, height: u16, theme: Theme) -> Screen {
        let sent = Arc::new(Recorder::default());
        let outbox: Arc<dyn Outbox> = sent.clone();
        let clock = Arc::new(ManualClock::default());
        let mut screen = Screen {
            app: App::with_clock(outbox, theme, clock.clone()),
            term: Terminal::new(TestBackend::new(width, height)).unwrap(),
            sent,
            clock,
        };
        screen.event(configured(vec![], vec![]));
        screen
    }

    fn event(&mut self, event: UjiEvent) -> &mut Screen {
        self.app.handle(Msg::Uji(event));
        self
    }

    /// The ack of the last operation sent, carrying `answer`.
    fn answer<A: Answer>(&mut self, answer: &A) -> &mut Screen {
        let op_id = self.last_id();
        let result = Some(answers::encode(answer).unwrap());
        self.event(UjiEvent::Ack { op_id, result })
    }

    fn key(&mut self, code: KeyCode, modifiers: KeyModifiers) -> &mut Screen {
        self.app
            .handle(Msg::Term(Event::Key(KeyEvent::new(code, modifiers))));
        self
    }

    fn press(&mut self, code: KeyCode) -> &mut Screen {
        self.key(code, KeyModifiers::NONE)
    }

    fn ctrl(&mut self, c: char) -> &mut Screen {
        self.key(KeyCode::Char(c), KeyModifiers::CONTROL)
    }

    fn type_text(&mut self, text: &str) -> &mut Screen {
        for c in text.chars() {
            self.press(KeyCode::Char(c));
        }
        self
    }

    /// Draws the open question, then lets the guard time pass without a
    /// key: the question takes answers now.
    fn ready(&mut self) -> &mut Screen {
        self.text();
        self.clock.advance(GUARD);
        self.app.tick();
        self
    }

    fn wait(&mut self, time: std::time::Duration) -> &mut Screen {
        self.clock.advance(time);
        self.app.tick();
        self
    }

    /// The screen's rows as text (trailing spaces trimmed).
    fn text(&mut self) -> String {
        let app = &mut self.app;
        self.term.draw(|frame| render(app, frame)).unwrap();
        let buffer = self.term.backend().buffer();
        let width = usize::from(buffer.area.width);
        buffer
            .content
            .chunks(width)
            .map(|row| {
                let line: String = row.iter().map(|cell| cell.symbol()).collect();
                line.trim_end().to_string()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn sent(&self) -> Vec<Op> {
        self.sent
            .0
            .lock()
            .iter()
            .map(|(_, op)| op.clone())
            .collect()
    }

    fn last_sent(&self) -> Op {
        self.sent().last().cloned().expect("an operation was sent")
    }

    /// The id of the last operation sent.
    fn last_id(&self) -> String {
        let sent = self.sent.0.lock();
        sent.last()
            .map(|(id, _)| id.clone())
            .expect("an operation was sent")
    }
}

fn command(name: &str, description: &str, source: &str) -> CommandInfo {
    CommandInfo {
        name: name.into(),
        description: description.into(),
        source: source.into(),
    }
}

fn configured(history: Vec<StoredMessage>, keymap: Vec<Value>) -> UjiEvent {
    let tool = |name: &str, verb: &str| ToolInfo {
        name: name.into(),
        description: String::new(),
        verb: Some(verb.into()),
    };
    UjiEvent::SessionConfigured(Box::new(SessionConfigured {
        protocol: 2,
        id: "s-1".into(),
        resumed: false,
        cwd: "/work".into(),
        title: String::new(),
        model: Some(ModelState {
            provider: "fake".into(),
            model: "m1".into(),
            effort: Some("high".into()),
            context_window: 200000,
        }),
        history,
        commands: vec![
            command("compact", "Summarise earlier messages now", "uji"),
            command("review", "Review the diff", "lua"),
        ],
        keymap,
        ui: Default::default(),
        tools: vec![tool("run_command", "Shell"), tool("edit_file", "Update")],
        usage: Usage::default(),
        mode: Default::default(),
        status: Default::default(),
    }))
}

/// A saved message.
fn saved(seq: u64, body: MessageBody) -> StoredMessage {
    StoredMessage { seq, time: 0, body }
}

fn user(text: &str) -> MessageBody {
    MessageBody::User {
        text: text.into(),
        images: vec![],
        hidden: false,
    }
}

fn assistant(text: &str, tool_calls: Vec<ToolCallRequest>) -> MessageBody {
    MessageBody::Assistant {
        text: text.into(),
        reasoning: None,
        tool_calls,
        usage: None,
        model: None,
        effort: None,
        replay: None,
    }
}

fn tool_result(call_id: &str, name: &str, content: &str, subject: Option<&str>) -> MessageBody {
    MessageBody::Tool {
        tool_call_id: call_id.into(),
        name: name.into(),
        content: content.into(),
        is_error: false,
        images: vec![],
        summary: None,
        diff: None,
        subject: subject.map(str::to_string),
        error_kind: None,
    }
}

fn message(seq: u64, body: MessageBody) -> UjiEvent {
    UjiEvent::Message {
        message: saved(seq, body),
    }
}

fn turn_started(text: &str) -> UjiEvent {
    UjiEvent::TurnStarted { text: text.into() }
}

fn delta(text: &str) -> UjiEvent {
    UjiEvent::Delta { text: text.into() }
}

fn usage(input: u64, output: u64, context_used: u64) -> UjiEvent {
    UjiEvent::Usage {
        turn: Usage::default(),
        session: Usage {
            input,
            output,
            ..Usage::default()
        },
        cost: None,
        context_used,
        context_window: 200000,
    }
}

/// `tool_started` for `call_id` calling `(name, verb)` on `subject`, with
/// the gate's `(decision, because)`.
fn tool_started(
    call_id: &str,
    (name, verb): (&str, &str),
    subject: &str,
    (decision, because): (GateDecision, &str),
) -> UjiEvent {
    UjiEvent::ToolStarted {
        call_id: call_id.into(),
        name: name.into(),
        subject: subject.into(),
        verb: Some(verb.into()),
        decision: Some(decision),
        because: Some(because.into()),
    }
}

fn diff(path: &str, unified: &str) -> FileDiff {
    FileDiff {
        path: path.into(),
        unified: unified.into(),
        added: 1,
        removed: 1,
    }
}

fn approval_request(
    call_id: &str,
    (tool, verb): (&str, &str),
    (subject, question): (&str, &str),
    args: Value,
    diff: Option<FileDiff>,
) -> UjiEvent {
    UjiEvent::ApprovalRequest {
        call_id: call_id.into(),
        tool: tool.into(),
        verb: verb.into(),
        subject: subject.into(),
        question: question.into(),
        diff,
        args,
        answers: vec![
            ApprovalDecision::AllowOnce,
            ApprovalDecision::AllowSession,
            ApprovalDecision::Deny,
        ],
        labels: Default::default(),
        agent: None,
    }
}

/// The `approval` operation answering `call_id`.
fn approval(call_id: &str, decision: ApprovalDecision, guidance: Option<&str>) -> Op {
    Op::Approval {
        call_id: call_id.into(),
        decision: Some(decision),
        allow: None,
        guidance: guidance.map(str::to_string),
    }
}

fn user_message(text: &str) -> Op {
    Op::UserMessage {
        text: text.into(),
        images: vec![],
        delivery: Delivery::Steer,
    }
}

fn run_command(name: &str, args: &str) -> Op {
    Op::RunCommand {
        name: name.into(),
        args: args.into(),
    }
}

fn set_model(model: Option<&str>, effort: Option<&str>) -> Op {
    Op::SetModel {
        model: model.map(str::to_string),
        effort: effort.map(str::to_string),
    }
}

/// The binding of `key` in normal mode to `command`, as uji.keymap.add
/// gives it.
fn bound(key: &str, command: &str) -> Vec<Value> {
    vec![json!({"mode": "normal", "key": key, "binding": {"command": command}})]
}

#[test]
fn a_prompt_is_sent_as_a_user_message_and_shown_when_saved() {
    let mut s = Screen::new(80, 24);
    s.type_text("fix the test").press(KeyCode::Enter);
    assert_eq!(s.last_sent(), user_message("fix the test"));
    s.event(turn_started("fix the test"))
        .event(message(1, user("fix the test")));
    let screen = s.text();
    assert!(screen.contains("› fix the test"), "{screen}");
    assert!(screen.contains("Working ("), "{screen}");
}

#[test]
fn streamed_text_shows_live_and_a_retry_withdraws_it() {
    let mut s = Screen::new(80, 24);
    s.event(turn_started("hi")).event(delta("first attempt"));
    assert!(s.text().contains("first attempt"));
    s.event(retry(1)).event(delta("second try"));
    let screen = s.text();
    assert!(!screen.contains("first attempt"), "{screen}");
    assert!(screen.contains("second try"), "{screen}");
}

fn retry(attempt: u32) -> UjiEvent {
    UjiEvent::StreamRetry {
        attempt,
        wait_ms: 10,
        reason: "http: 529: overloaded".into(),
        message: format!("request failed (http: 529: overloaded), retrying in 2s ({attempt}/5)"),
    }
}

#[test]
fn each_retry_of_a_request_updates_one_line_in_place() {
    let mut s = Screen::new(80, 24);
    s.event(turn_started("hi")).event(delta("partial"));
    s.event(retry(1))
        .event(delta("again"))
        .event(retry(2))
        .event(retry(3));
    let screen = s.text();
    assert_eq!(screen.matches("request failed").count(), 1, "{screen}");
    assert!(screen.contains("retrying in 2s (3/5)"), "{screen}");
    assert!(
        !screen.contains("partial") && !screen.contains("again"),
        "{screen}"
    );
    // The answer that finally comes follows the one line.
    s.event(delta("third time lucky"));
    let screen = s.text();
    let (retry_at, answer_at) = (screen.find("(3/5)"), screen.find("third time lucky"));
    assert!(retry_at.is_some() && retry_at < answer_at, "{screen}");
    // A later request's retry is a line of its own.
    s.event(message(1, assistant("third time lucky", vec![])))
        .event(retry(1));
    assert_eq!(
        s.text().matches("request failed").count(),
        2,
        "{}",
        s.text()
    );
}

#[test]
fn reasoning_is_hidden_until_thinking_is_turned_on() {
    let mut s = Screen::new(80, 24);
    s.event(UjiEvent::Reasoning {
        text: "pondering deeply".into(),
    })
    .event(delta("answer"));
    assert!(!s.text().contains("pondering deeply"));
    s.type_text("/thinking").press(KeyCode::Enter);
    assert!(s.text().contains("pondering deeply"));
    // /thinking is the screen's own: nothing was sent to uji for it.
    assert!(
        s.sent()
            .iter()
            .all(|op| !matches!(op, Op::RunCommand { .. }))
    );
}

fn ask_edit(s: &mut Screen) {
    let edit = ("edit_file", "Update");
    s.event(turn_started("edit"))
        .event(tool_started(
            "c1",
            edit,
            "notes.txt",
            (GateDecision::Ask, "edit_file default ask"),
        ))
        .event(approval_request(
            "c1",
            edit,
            ("notes.txt", "Edit this file?"),
            json!({"path": "notes.txt", "old_string": "hello", "new_string": "goodbye"}),
            Some(diff("notes.txt", "@@ -1 +1 @@\n-hello\n+goodbye\n")),
        ));
}

#[test]
fn an_approval_shows_the_question_and_y_allows_once() {
    let mut s = Screen::new(80, 24);
    ask_edit(&mut s);
    let screen = s.text();
    assert!(screen.contains("Edit this file?"), "{screen}");
    assert!(screen.contains("Yes, proceed (y)"), "{screen}");
    s.ready().press(KeyCode::Char('y'));
    assert_eq!(
        s.last_sent(),
        approval("c1", ApprovalDecision::AllowOnce, None)
    );
    assert!(!s.text().contains("Edit this file?"));
}

#[test]
fn a_denial_takes_guidance_for_the_model() {
    let mut s = Screen::new(80, 24);
    ask_edit(&mut s);
    s.ready().press(KeyCode::Char('n'));
    // Letters are guidance now, not shortcuts: `y` does not allow.
    s.type_text("keep hello, say yes").press(KeyCode::Enter);
    assert_eq!(
        s.last_sent(),
        approval("c1", ApprovalDecision::Deny, Some("keep hello, say yes"))
    );
}

#[test]
fn allow_for_the_session_is_a() {
    let mut s = Screen::new(80, 24);
    ask_edit(&mut s);
    s.ready().press(KeyCode::Char('a'));
    assert_eq!(
        s.last_sent(),
        approval("c1", ApprovalDecision::AllowSession, None)
    );
}

#[test]
fn esc_interrupts_a_running_turn_and_does_nothing_when_idle() {
    let mut s = Screen::new(80, 24);
    s.press(KeyCode::Esc);
    assert!(s.sent().is_empty(), "{:?}", s.sent());
    s.event(turn_started("x"));
    s.type_text("draft stays").press(KeyCode::Esc);
    assert_eq!(s.last_sent(), Op::Interrupt);
    assert!(s.text().contains("draft stays"));
}

#[test]
fn ctrl_c_twice_asks_the_session_to_end() {
    let mut s = Screen::new(80, 24);
    s.ctrl('c');
    assert!(!s.app.quitting(), "one press never quits");
    assert!(s.sent().is_empty(), "{:?}", s.sent());
    assert!(s.text().contains("press Ctrl+C again to quit"));
    s.ctrl('c');
    assert_eq!(s.last_sent(), Op::Shutdown);
    assert!(s.app.quitting());
    s.event(UjiEvent::Closed);
    assert!(s.app.closed());
}

#[test]
fn messages_typed_while_working_are_listed_as_queued() {
    let mut s = Screen::new(80, 24);
    s.event(turn_started("x"));
    s.type_text("and then this").press(KeyCode::Enter);
    assert_eq!(s.last_sent(), user_message("and then this"));
    s.event(UjiEvent::QueueChanged {
        queued: vec!["and then this".into()],
    });
    let screen = s.text();
    assert!(screen.contains("queued: and then this"), "{screen}");
    assert!(screen.contains("1 queued"), "{screen}");
}

#[test]
fn the_status_line_shows_model_effort_context_and_tokens() {
    let mut s = Screen::new(100, 24);
    s.event(usage(12345, 678, 50000));
    let screen = s.text();
    let status = screen.lines().last().unwrap();
    assert!(status.contains("fake/m1 · high"), "{status}");
    assert!(status.contains("ctx 25%"), "{status}");
    assert!(status.contains("↑12.3k ↓678"), "{status}");
}

#[test]
fn a_bang_command_runs_in_the_shell_and_streams_its_lines() {
    let mut s = Screen::new(80, 24);
    s.type_text("!git status").press(KeyCode::Enter);
    let command = "git status".to_string();
    assert_eq!(s.last_sent(), Op::Shell { command });
    let id = s.last_id();
    s.event(UjiEvent::Progress {
        call_id: format!("shell-{id}"),
        tool: "shell".into(),
        line: "On branch main".into(),
    });
    let screen = s.text();
    assert!(screen.contains("git status"), "{screen}");
    assert!(screen.contains("On branch main"), "{screen}");
}

#[test]
fn slash_suggestions_complete_with_tab_and_run_a_lua_command() {
    let mut s = Screen::new(80, 24);
    s.type_text("/rev");
    assert!(s.text().contains("Review the diff"));
    s.press(KeyCode::Tab)
        .type_text("src/")
        .press(KeyCode::Enter);
    assert_eq!(s.last_sent(), run_command("review", "src/"));
    s.answer(&CommandOutput {
        output: "looks good".into(),
    });
    assert!(s.text().contains("looks good"));
}

#[test]
fn a_command_added_mid_session_is_suggested_at_once() {
    let mut s = Screen::new(80, 24);
    s.type_text("/dep");
    assert!(!s.text().contains("Deploy the site"));
    s.event(UjiEvent::CommandsChanged {
        commands: vec![
            command("compact", "Summarise earlier messages now", "uji"),
            command("deploy", "Deploy the site", "lua"),
        ],
    });
    assert!(
        s.text().contains("Deploy the site"),
        "the open list shows it"
    );
    s.press(KeyCode::Tab).press(KeyCode::Enter);
    assert_eq!(s.last_sent(), run_command("deploy", ""));
}

/// The answer to `list_models`: fake/m1 and fake/m2.
fn two_models() -> ModelList {
    let model = |model: &str, context_window| ModelEntry {
        provider: "fake".into(),
        model: model.into(),
        context_window,
        available: true,
    };
    ModelList {
        models: vec![model("m1", 200000), model("m2", 100000)],
    }
}

#[test]
fn model_picker_lists_the_models_and_sets_the_chosen_one() {
    let mut s = Screen::new(80, 24);
    s.type_text("/model").press(KeyCode::Enter);
    assert_eq!(s.last_sent(), Op::ListModels);
    s.answer(&two_models());
    assert!(s.text().contains("fake/m2"));
    s.ready().press(KeyCode::Down).press(KeyCode::Enter);
    assert_eq!(s.last_sent(), set_model(Some("fake/m2"), None));
}

#[test]
fn sessions_picker_resumes_and_deletes_after_a_second_ctrl_d() {
    let mut s = Screen::new(80, 24);
    s.type_text("/sessions").press(KeyCode::Enter);
    let session = |id: &str, title: &str| SessionSummary {
        id: id.into(),
        title: title.into(),
        cwd: String::new(),
        created: 0,
        updated: 0,
        parent: None,
    };
    s.answer(&SessionList {
        sessions: vec![session("s-1", "this one"), session("s-2", "older work")],
    });
    assert!(s.text().contains("older work"));
    s.ready().press(KeyCode::Down).ctrl('d');
    assert!(!matches!(s.last_sent(), Op::DeleteSession { .. }));
    s.ctrl('d');
    assert_eq!(
        s.last_sent(),
        Op::DeleteSession {
            session_id: "s-2".into()
        },
        "{:?}\n{}",
        s.sent(),
        s.text()
    );
}

#[test]
fn a_key_bound_in_the_config_runs_its_command() {
    let mut s = Screen::new(80, 24);
    s.event(configured(vec![], bound("<C-r>", "review")));
    s.ctrl('r');
    assert_eq!(s.last_sent(), run_command("review", ""));
}

#[test]
fn a_resumed_session_shows_its_history() {
    let mut s = Screen::new(80, 24);
    let call = ToolCallRequest {
        id: "c1".into(),
        name: "run_command".into(),
        arguments: "{}".into(),
    };
    let history = vec![
        saved(1, user("what is in notes")),
        saved(2, assistant("", vec![call])),
        saved(
            3,
            tool_result("c1", "run_command", "hello", Some("cat notes.txt")),
        ),
        saved(4, assistant("It says **hello**.", vec![])),
    ];
    s.event(configured(history, vec![]));
    let screen = s.text();
    assert!(screen.contains("what is in notes"), "{screen}");
    assert!(screen.contains("Shell (cat notes.txt)"), "{screen}");
    assert!(screen.contains("It says"), "{screen}");
}

#[test]
fn the_wheel_scrolls_back_and_end_returns() {
    let mut s = Screen::new(60, 12);
    for i in 0..40 {
        s.event(message(i, user(&format!("message {i}"))));
    }
    assert!(s.text().contains("message 39"));
    for _ in 0..10 {
        s.app.handle(Msg::Term(Event::Mouse(MouseEvent {
            kind: MouseEventKind::ScrollUp,
            column: 0,
            row: 0,
            modifiers: KeyModifiers::NONE,
        })));
    }
    let screen = s.text();
    assert!(!screen.contains("message 39"), "{screen}");
    assert!(screen.contains("more below"), "{screen}");
    s.key(KeyCode::End, KeyModifiers::CONTROL);
    assert!(s.text().contains("message 39"));
}

#[test]
fn tiny_and_odd_sizes_draw_without_panicking() {
    for (w, h) in [(1, 1), (2, 3), (10, 4), (20, 5), (80, 24), (300, 100)] {
        let mut s = Screen::new(w, h);
        ask_edit(&mut s);
        s.event(delta("# Title\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"));
        let screen = s.text();
        assert_eq!(screen.lines().count(), usize::from(h));
    }
}

#[test]
fn no_color_draws_without_colours() {
    let mut s = Screen::with_theme(80, 24, Theme::plain());
    ask_edit(&mut s);
    s.event(delta("some `code` and **bold**"));
    s.text();
    let buffer = s.term.backend().buffer();
    for cell in &buffer.content {
        assert_eq!(cell.fg, Color::Reset, "a coloured cell: {cell:?}");
        assert_eq!(cell.bg, Color::Reset, "a coloured cell: {cell:?}");
    }
}

#[test]
fn text_arriving_below_does_not_move_what_the_user_reads() {
    let mut s = Screen::new(60, 12);
    for i in 0..40 {
        s.event(message(i, user(&format!("message {i}"))));
    }
    s.press(KeyCode::PageUp);
    let before = s.text();
    assert!(before.contains("more below"), "{before}");
    s.event(turn_started("x"));
    for i in 0..20 {
        s.event(delta(&format!("streamed line {i}\n\n")));
    }
    let after = s.text();
    let transcript_rows = |screen: &str| {
        screen
            .lines()
            .take(5)
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        transcript_rows(&before),
        transcript_rows(&after),
        "{before}\n---\n{after}"
    );
    s.key(KeyCode::End, KeyModifiers::CONTROL);
    assert!(s.text().contains("streamed line 19"));
}

#[test]
fn status_items_from_plugins_show_in_the_status_line() {
    let mut s = Screen::new(80, 24);
    s.event(UjiEvent::Status {
        name: "plan".into(),
        text: Some("PLAN".into()),
    });
    let screen = s.text();
    assert!(
        screen.lines().last().unwrap().contains(" PLAN "),
        "{screen}"
    );
    s.event(UjiEvent::Status {
        name: "plan".into(),
        text: None,
    });
    assert!(!s.text().contains("PLAN"));
}

#[test]
fn new_compact_and_quit_commands_send_their_operations() {
    for (command, op) in [
        ("/new", Op::NewSession { title: None }),
        ("/compact", Op::Compact),
        ("/quit", Op::Shutdown),
    ] {
        let mut s = Screen::new(80, 24);
        s.type_text(command).press(KeyCode::Enter);
        assert_eq!(s.last_sent(), op, "{command}");
    }
}

#[test]
fn alt_e_from_the_defaults_opens_the_effort_picker() {
    let mut s = Screen::new(80, 24);
    s.event(configured(vec![], bound("<A-e>", "effort")));
    s.key(KeyCode::Char('e'), KeyModifiers::ALT);
    let screen = s.text();
    assert!(screen.contains("Reasoning effort"), "{screen}");
    // The picker starts on the current effort (high); two up is low.
    s.ready()
        .press(KeyCode::Up)
        .press(KeyCode::Up)
        .press(KeyCode::Enter);
    assert_eq!(s.last_sent(), set_model(None, Some("low")));
}

// A question answers only a key pressed once it has been on screen for the
// guard time with no key pressed for as long (docs/tui.md, "Approvals").

const KEY_GAP: std::time::Duration = std::time::Duration::from_millis(80);

fn approvals_sent(s: &Screen) -> Vec<Op> {
    s.sent()
        .into_iter()
        .filter(|op| matches!(op, Op::Approval { .. }))
        .collect()
}

/// Types `text` a key every [`KEY_GAP`], as a person does.
fn type_slowly(s: &mut Screen, text: &str) {
    for c in text.chars() {
        s.press(KeyCode::Char(c));
        s.wait(KEY_GAP);
        s.text();
    }
}

#[test]
fn typing_ahead_while_a_question_arrives_answers_nothing_and_fills_the_draft() {
    let mut s = Screen::new(100, 30);
    s.event(turn_started("edit"));
    type_slowly(&mut s, "ok ");
    ask_edit(&mut s);
    let screen = s.text();
    assert!(screen.contains("not ready for an answer yet"), "{screen}");
    assert!(!screen.contains("❯ 1."), "nothing looks chosen: {screen}");
    // 36 keys over ~3 s: long past the guard time, but never quiet.
    type_slowly(&mut s, "yes please also run it now and again");
    assert!(approvals_sent(&s).is_empty(), "{:?}", s.sent());
    let screen = s.text();
    assert!(screen.contains("Edit this file?"), "{screen}");
    assert!(
        screen.contains("✎ draft: ok yes please also run it now and again"),
        "{screen}"
    );
    s.wait(GUARD);
    assert!(s.text().contains("❯ 1. Yes, proceed (y)"));
    s.press(KeyCode::Char('a'));
    assert_eq!(approvals_sent(&s).len(), 1);
    assert_eq!(
        s.last_sent(),
        approval("c1", ApprovalDecision::AllowSession, None)
    );
    // The question is gone; the draft is in the input, unsent.
    let screen = s.text();
    assert!(
        screen.contains("ok yes please also run it now and again"),
        "{screen}"
    );
    assert!(!screen.contains("✎ draft"), "{screen}");
    assert!(
        s.sent()
            .iter()
            .all(|op| !matches!(op, Op::UserMessage { .. }))
    );
}

#[test]
fn keys_that_arrive_in_a_burst_after_a_stall_answer_nothing() {
    let mut s = Screen::new(80, 24);
    ask_edit(&mut s);
    s.ready();
    // uji was busy while the user typed on: the keys come all at once.
    for c in "yes and".chars() {
        s.app.handle(Msg::TermBurst(Event::Key(KeyEvent::new(
            KeyCode::Char(c),
            KeyModifiers::NONE,
        ))));
    }
    assert!(approvals_sent(&s).is_empty(), "{:?}", s.sent());
    assert!(s.text().contains("✎ draft: yes and"));
    // A deliberate key once the typing has stopped answers.
    s.wait(GUARD);
    s.text();
    s.press(KeyCode::Char('y'));
    assert_eq!(approvals_sent(&s).len(), 1);
}

#[test]
fn guidance_typed_in_a_burst_after_n_is_guidance() {
    let mut s = Screen::new(80, 24);
    ask_edit(&mut s);
    s.ready();
    s.press(KeyCode::Char('n'));
    for code in "do x".chars().map(KeyCode::Char).chain([KeyCode::Enter]) {
        s.app.handle(Msg::TermBurst(Event::Key(KeyEvent::new(
            code,
            KeyModifiers::NONE,
        ))));
    }
    assert_eq!(approvals_sent(&s).len(), 1, "{:?}", s.sent());
    assert_eq!(
        s.last_sent(),
        approval("c1", ApprovalDecision::Deny, Some("do x"))
    );
}

#[test]
fn a_question_never_drawn_takes_no_key_however_long_it_waited() {
    let mut s = Screen::new(80, 24);
    ask_edit(&mut s);
    s.wait(GUARD * 10).press(KeyCode::Char('y'));
    assert!(approvals_sent(&s).is_empty(), "{:?}", s.sent());
    assert!(s.text().contains("✎ draft: y"));
}

#[test]
fn enter_while_the_question_is_not_ready_sends_nothing_and_keeps_the_draft() {
    let mut s = Screen::new(80, 24);
    s.event(turn_started("x"));
    ask_edit(&mut s);
    s.text();
    s.type_text("and then").press(KeyCode::Enter);
    s.wait(GUARD / 2);
    s.press(KeyCode::Enter);
    assert!(
        s.sent()
            .iter()
            .all(|op| !matches!(op, Op::Approval { .. } | Op::UserMessage { .. })),
        "{:?}",
        s.sent()
    );
    // Editing keys still edit the draft.
    s.ctrl('w');
    let screen = s.text();
    assert!(
        screen.contains("✎ draft: and") && !screen.contains("then"),
        "{screen}"
    );
}

#[test]
fn a_paste_never_answers_and_goes_to_the_draft() {
    let mut s = Screen::new(80, 24);
    ask_edit(&mut s);
    s.text();
    s.app.handle(Msg::Term(Event::Paste("y".into())));
    s.ready();
    s.app.handle(Msg::Term(Event::Paste("a\n".into())));
    assert!(approvals_sent(&s).is_empty(), "{:?}", s.sent());
    assert!(s.text().contains("✎ draft: ya"), "{}", s.text());
    // The paste at the ready question showed the user is typing: it waits.
    s.press(KeyCode::Char('y'));
    assert!(approvals_sent(&s).is_empty(), "{:?}", s.sent());
}

#[test]
fn a_letter_the_question_has_no_use_for_makes_it_wait_again() {
    let mut s = Screen::new(80, 24);
    ask_edit(&mut s);
    s.ready();
    s.press(KeyCode::Char('p'));
    assert!(s.text().contains("not ready for an answer yet"));
    s.press(KeyCode::Char('a'));
    assert!(approvals_sent(&s).is_empty(), "{:?}", s.sent());
    assert!(s.text().contains("✎ draft: pa"));
    s.wait(GUARD);
    s.press(KeyCode::Char('n'));
    assert!(s.text().contains("Tell uji what to do differently"));
    // Guidance is the question's own text, letters included.
    s.type_text("say yes").press(KeyCode::Enter);
    assert_eq!(
        s.last_sent(),
        approval("c1", ApprovalDecision::Deny, Some("say yes"))
    );
}

#[test]
fn a_digit_moves_to_its_row_and_enter_takes_it() {
    let mut s = Screen::new(80, 24);
    ask_edit(&mut s);
    s.ready().press(KeyCode::Char('3'));
    assert!(approvals_sent(&s).is_empty(), "{:?}", s.sent());
    assert!(s.text().contains("❯ 3. No"), "{}", s.text());
    s.press(KeyCode::Enter);
    assert!(s.text().contains("Tell uji what to do differently"));
}

#[test]
fn the_next_question_waits_for_its_own_guard_time() {
    let mut s = Screen::new(80, 24);
    ask_edit(&mut s);
    s.event(approval_request(
        "c2",
        ("run_command", "Shell"),
        ("rm -r build", "Run this command?"),
        json!({"command": "rm -r build"}),
        None,
    ));
    s.ready()
        .press(KeyCode::Char('y'))
        .press(KeyCode::Char('y'));
    let answered = approvals_sent(&s);
    assert_eq!(answered.len(), 1, "{answered:?}");
    assert!(
        matches!(&answered[0], Op::Approval { call_id, .. } if call_id == "c1"),
        "{answered:?}"
    );
    let screen = s.text();
    assert!(screen.contains("Run this command?"), "{screen}");
    s.ready().press(KeyCode::Char('n'));
    assert!(s.text().contains("Tell uji what to do differently"));
}

#[test]
fn esc_and_ctrl_c_work_while_the_question_is_not_ready() {
    let mut s = Screen::new(80, 24);
    ask_edit(&mut s);
    s.text();
    s.press(KeyCode::Esc);
    assert_eq!(s.last_sent(), Op::Interrupt);
    s.ctrl('c');
    s.ctrl('c');
    assert_eq!(s.last_sent(), Op::Shutdown);
    assert!(approvals_sent(&s).is_empty(), "{:?}", s.sent());
}

#[test]
fn ctrl_c_clears_a_draft_into_history_and_the_hint_goes_after_two_seconds() {
    let mut s = Screen::new(80, 24);
    s.type_text("keep me");
    s.ctrl('c');
    let screen = s.text();
    assert!(!screen.contains("keep me"), "{screen}");
    assert!(
        screen.contains("draft cleared (Up brings it back)"),
        "{screen}"
    );
    assert!(!s.app.quitting());
    s.wait(std::time::Duration::from_millis(2100));
    let screen = s.text();
    assert!(!screen.contains("Ctrl+C again"), "{screen}");
    s.press(KeyCode::Up);
    assert!(s.text().contains("keep me"));
    // The window has passed: this press only clears again.
    s.ctrl('c');
    assert!(!s.app.quitting());
}

#[test]
fn a_picker_takes_keys_only_once_ready() {
    let mut s = Screen::new(80, 24);
    s.type_text("/model").press(KeyCode::Enter);
    s.answer(&two_models());
    let screen = s.text();
    assert!(!screen.contains("enter choose"), "{screen}");
    s.press(KeyCode::Down).type_text("m2").press(KeyCode::Enter);
    assert!(
        !matches!(s.last_sent(), Op::SetModel { .. }),
        "{:?}",
        s.sent()
    );
    assert!(s.text().contains("✎ draft: m2"), "{}", s.text());
    s.ready();
    assert!(s.text().contains("enter choose"));
    s.press(KeyCode::Enter);
    assert_eq!(s.last_sent(), set_model(Some("fake/m1"), None));
}

#[test]
fn esc_closes_a_picker_at_once() {
    let mut s = Screen::new(80, 24);
    s.type_text("/effort").press(KeyCode::Enter);
    assert!(s.text().contains("Reasoning effort"));
    s.press(KeyCode::Esc);
    let screen = s.text();
    assert!(!screen.contains("Reasoning effort"), "{screen}");
    assert!(screen.contains("Ask uji anything"), "{screen}");
}

/// `/login groq` up to the key prompt.
fn key_prompt(s: &mut Screen) {
    s.type_text("/login groq").press(KeyCode::Enter);
    s.answer(&ProviderList {
        providers: vec![ProviderEntry {
            id: "groq".into(),
            name: "Groq".into(),
            key: KeyOrigin::Missing,
            key_env: Some("GROQ_API_KEY".into()),
            checks_key: false,
        }],
    });
    assert!(s.text().contains("Key for Groq"));
}

#[test]
fn the_key_prompt_saves_only_on_an_enter_once_ready_and_keeps_the_key_out_of_the_draft() {
    let mut s = Screen::new(80, 24);
    key_prompt(&mut s);
    assert!(s.text().contains("enter saves in a moment"));
    s.type_text("gsk-").press(KeyCode::Enter);
    s.app.handle(Msg::Term(Event::Paste("secret\n".into())));
    assert!(
        s.sent().iter().all(|op| !matches!(op, Op::Login { .. })),
        "{:?}",
        s.sent()
    );
    let screen = s.text();
    assert!(screen.contains("10 characters (hidden)"), "{screen}");
    assert!(
        !screen.contains("gsk") && !screen.contains("✎ draft"),
        "{screen}"
    );
    s.ready();
    assert!(s.text().contains("enter save ·"));
    s.press(KeyCode::Enter);
    let Op::Login { key, .. } = s.last_sent() else {
        panic!("not a login: {:?}", s.sent());
    };
    assert_eq!(key, Secret::new("gsk-secret"));
}

#[test]
fn a_key_bound_to_a_command_does_nothing_while_the_question_is_not_ready() {
    let mut s = Screen::new(80, 24);
    s.event(configured(vec![], bound("<C-r>", "review")));
    ask_edit(&mut s);
    s.text();
    let before = s.sent().len();
    s.ctrl('r');
    assert_eq!(s.sent().len(), before, "{:?}", s.sent());
}

#[test]
fn after_a_denial_a_paste_is_guidance() {
    let mut s = Screen::new(80, 24);
    ask_edit(&mut s);
    s.ready().press(KeyCode::Char('n'));
    s.app
        .handle(Msg::Term(Event::Paste("keep hello\nand yes".into())));
    s.press(KeyCode::Enter);
    assert_eq!(
        s.last_sent(),
        approval("c1", ApprovalDecision::Deny, Some("keep hello and yes"))
    );
}

#[test]
fn an_answer_of_another_shape_is_an_error_that_names_the_operation() {
    let mut s = Screen::new(100, 24);
    s.type_text("/model").press(KeyCode::Enter);
    let op_id = s.last_id();
    s.event(UjiEvent::Ack {
        op_id,
        result: Some(json!({"models": "three"})),
    });
    let screen = s.text();
    assert!(screen.contains("list_models"), "{screen}");
    assert!(!screen.contains("Model"), "no picker opened: {screen}");
    assert!(!s.app.closed());
}

#[test]
fn an_unknown_event_is_skipped() {
    let mut s = Screen::new(80, 24);
    let before = s.text();
    s.event(UjiEvent::Unknown);
    assert_eq!(s.text(), before);
}

#[test]
fn at_forty_by_ten_the_question_box_still_shows_the_question() {
    let mut s = Screen::new(40, 10);
    ask_edit(&mut s);
    let screen = s.text();
    assert!(screen.contains("Edit this file?"), "{screen}");
    assert!(screen.contains("y yes"), "the answers show too: {screen}");
}

#[test]
fn a_call_you_denied_says_denied_once_with_what_you_said() {
    let mut s = Screen::new(80, 24);
    ask_edit(&mut s);
    s.ready().press(KeyCode::Char('n'));
    s.type_text("keep hello").press(KeyCode::Enter);
    s.event(UjiEvent::ApprovalResolved {
        call_id: "c1".into(),
        resolution: uji_protocol::frontend::Resolution::Answered,
        decision: Some(ApprovalDecision::Deny),
    });
    let mut result = tool_result(
        "c1",
        "edit_file",
        "denied: user denied\nThe user says: keep hello",
        Some("notes.txt"),
    );
    if let MessageBody::Tool {
        is_error,
        error_kind,
        ..
    } = &mut result
    {
        *is_error = true;
        *error_kind = Some(uji_protocol::ToolErrorKind::Denied);
    }
    s.event(message(2, result));
    let screen = s.text();
    assert_eq!(screen.matches("denied").count(), 1, "{screen}");
    assert!(screen.contains("⎿  denied by you"), "{screen}");
    assert!(screen.contains("The user says: keep hello"), "{screen}");
}

fn turn_finished() -> UjiEvent {
    UjiEvent::TurnFinished {
        text: Some("The plan: 1. read 2. fix".into()),
        error: None,
        interrupted: false,
        usage: Usage::default(),
        budget: None,
        cost: None,
    }
}

#[test]
fn after_a_plan_mode_turn_the_plan_can_be_run_at_once() {
    let mut s = Screen::new(80, 24);
    s.event(UjiEvent::ModeChanged {
        mode: uji_protocol::ApprovalMode::Plan,
    });
    s.event(message(1, user("plan the fix")))
        .event(turn_started("plan the fix"))
        .event(message(2, assistant("The plan: 1. read 2. fix", vec![])))
        .event(turn_finished());
    let screen = s.text();
    assert!(screen.contains("Run this plan?"), "{screen}");
    assert!(screen.contains("Yes, and accept edits"), "{screen}");
    s.ready().press(KeyCode::Enter);
    let sent = s.sent();
    assert_eq!(
        sent[sent.len() - 2..],
        [
            Op::SetMode {
                mode: uji_protocol::ApprovalMode::AcceptEdits
            },
            user_message("The plan is approved: carry it out now."),
        ]
    );
}

#[test]
fn keep_planning_leaves_the_mode_and_sends_nothing() {
    let mut s = Screen::new(80, 24);
    s.event(UjiEvent::ModeChanged {
        mode: uji_protocol::ApprovalMode::Plan,
    });
    s.event(message(1, user("plan it")))
        .event(message(2, assistant("A plan.", vec![])))
        .event(turn_finished());
    let before = s.sent().len();
    s.ready().press(KeyCode::Esc);
    assert_eq!(s.sent().len(), before);
    assert!(!s.text().contains("Run this plan?"));
    // Outside plan mode no question comes.
    s.event(UjiEvent::ModeChanged {
        mode: uji_protocol::ApprovalMode::Ask,
    });
    s.event(message(3, assistant("Done.", vec![])))
        .event(turn_finished());
    assert!(!s.text().contains("Run this plan?"));
}

#[test]
fn a_model_chosen_in_the_picker_is_confirmed() {
    let mut s = Screen::new(80, 24);
    s.type_text("/effort").press(KeyCode::Enter);
    s.ready().press(KeyCode::Enter);
    let answer = uji_protocol::frontend::answers::ModelSet {
        model: ModelState {
            provider: "fake".into(),
            model: "m1".into(),
            effort: Some("low".into()),
            context_window: 200000,
        },
    };
    s.answer(&answer);
    let screen = s.text();
    assert!(
        screen.contains("model: fake/m1, effort low, from the next request on"),
        "{screen}"
    );
}

#[test]
fn a_compaction_is_one_rule_with_its_count() {
    let mut s = Screen::new(80, 24);
    s.event(message(
        5,
        MessageBody::Compaction {
            summary: "the story so far".into(),
            through: 4,
        },
    ))
    .event(UjiEvent::Compacted {
        messages: 4,
        through: 4,
    });
    let screen = s.text();
    assert_eq!(screen.matches("compacted").count(), 1, "{screen}");
    assert!(screen.contains("compacted 4 earlier messages"), "{screen}");
}

// ---- plugins' dialogs (ui.dialog) -------------------------------------------

fn dialog(id: &str, kind: DialogKind, title: &str) -> UjiEvent {
    UjiEvent::Dialog {
        dialog_id: id.into(),
        kind,
        title: title.into(),
        items: Vec::new(),
        current: None,
        value: None,
        hidden: false,
        body: None,
    }
}

fn select_dialog(id: &str, title: &str, items: &[&str], current: Option<usize>) -> UjiEvent {
    let mut event = dialog(id, DialogKind::Select, title);
    if let UjiEvent::Dialog {
        items: list,
        current: at,
        ..
    } = &mut event
    {
        *list = items.iter().map(|item| item.to_string()).collect();
        *at = current;
    }
    event
}

fn answered(id: &str, answer: DialogAnswer) -> Op {
    Op::AnswerDialog {
        dialog_id: id.into(),
        answer,
    }
}

fn dialog_answers(s: &Screen) -> Vec<Op> {
    s.sent()
        .into_iter()
        .filter(|op| matches!(op, Op::AnswerDialog { .. }))
        .collect()
}

#[test]
fn a_select_dialog_is_a_fuzzy_picker_and_enter_answers_the_items_index() {
    let mut s = Screen::new(70, 20);
    s.event(select_dialog(
        "dialog-1",
        "Deploy which branch?",
        &["main", "dev", "release/1.0"],
        Some(1),
    ));
    let screen = s.ready().text();
    assert!(screen.contains("Deploy which branch?"), "{screen}");
    assert!(screen.contains("release/1.0"), "{screen}");
    // It opens on `current`: Enter now would pick "dev".
    s.type_text("rls");
    let screen = s.text();
    assert!(
        !screen.contains("main"),
        "the filter hides the rest: {screen}"
    );
    s.press(KeyCode::Enter);
    assert_eq!(
        s.last_sent(),
        answered("dialog-1", DialogAnswer::Selected { index: 2 })
    );
    assert!(!s.text().contains("Deploy which branch?"));
}

#[test]
fn a_select_dialog_opens_on_its_current_item_and_esc_cancels_it() {
    let mut s = Screen::new(70, 20);
    s.event(select_dialog(
        "dialog-1",
        "Branch",
        &["main", "dev"],
        Some(1),
    ));
    s.ready().press(KeyCode::Enter);
    assert_eq!(
        s.last_sent(),
        answered("dialog-1", DialogAnswer::Selected { index: 1 })
    );
    s.event(select_dialog("dialog-2", "Branch", &["main", "dev"], None));
    s.ready().press(KeyCode::Esc);
    assert_eq!(s.last_sent(), answered("dialog-2", DialogAnswer::Cancelled));
}

#[test]
fn keys_typed_before_a_dialog_is_ready_go_to_the_draft_and_never_answer_it() {
    let mut s = Screen::new(70, 20);
    s.type_text("please al");
    s.event(select_dialog("dialog-1", "Branch", &["main", "dev"], None));
    s.type_text("so");
    s.press(KeyCode::Enter);
    assert!(dialog_answers(&s).is_empty(), "{:?}", s.sent());
    let confirm = dialog("dialog-2", DialogKind::Confirm, "Push now?");
    s.event(confirm);
    s.press(KeyCode::Char('y'));
    assert!(dialog_answers(&s).is_empty(), "{:?}", s.sent());
    // The typing is in the draft, and the dialog still waits.
    s.ready();
    s.press(KeyCode::Esc);
    assert_eq!(s.last_sent(), answered("dialog-1", DialogAnswer::Cancelled));
    let screen = s.text();
    assert!(screen.contains("please also"), "{screen}");
}

#[test]
fn a_prompt_dialog_is_prefilled_and_enter_answers_its_text() {
    let mut s = Screen::new(70, 20);
    let mut prompt = dialog("dialog-1", DialogKind::Prompt, "Commit message");
    if let UjiEvent::Dialog { value, .. } = &mut prompt {
        *value = Some("fix: ".into());
    }
    s.event(prompt);
    // Enter before the prompt is ready answers nothing.
    s.press(KeyCode::Enter);
    assert!(dialog_answers(&s).is_empty());
    s.type_text("parser");
    let screen = s.text();
    assert!(screen.contains("fix: parser"), "{screen}");
    s.ready().press(KeyCode::Enter);
    assert_eq!(
        s.last_sent(),
        answered(
            "dialog-1",
            DialogAnswer::Text {
                text: "fix: parser".into()
            }
        )
    );
}

#[test]
fn a_hidden_prompt_dialog_never_draws_what_is_typed() {
    let mut s = Screen::new(70, 20);
    let mut prompt = dialog("dialog-1", DialogKind::Prompt, "Deploy token");
    if let UjiEvent::Dialog { hidden, .. } = &mut prompt {
        *hidden = true;
    }
    s.event(prompt);
    s.type_text("tok-secret");
    let screen = s.text();
    assert!(!screen.contains("tok-secret"), "{screen}");
    assert!(screen.contains("10 characters (hidden)"), "{screen}");
    s.ready().press(KeyCode::Enter);
    assert_eq!(
        s.last_sent(),
        answered(
            "dialog-1",
            DialogAnswer::Text {
                text: "tok-secret".into()
            }
        )
    );
}

#[test]
fn a_confirm_dialog_is_the_question_box_y_answers_yes_and_esc_no() {
    let mut s = Screen::new(70, 20);
    let mut confirm = dialog("dialog-1", DialogKind::Confirm, "Push to origin?");
    if let UjiEvent::Dialog { body, .. } = &mut confirm {
        *body = Some("3 commits on main".into());
    }
    s.event(confirm);
    let screen = s.ready().text();
    assert!(screen.contains("Push to origin?"), "{screen}");
    assert!(screen.contains("3 commits on main"), "{screen}");
    assert!(screen.contains("Yes (y)"), "{screen}");
    s.press(KeyCode::Char('y'));
    assert_eq!(
        s.last_sent(),
        answered("dialog-1", DialogAnswer::Confirmed { yes: true })
    );
    s.event(dialog("dialog-2", DialogKind::Confirm, "Force?"));
    s.ready().press(KeyCode::Esc);
    assert_eq!(
        s.last_sent(),
        answered("dialog-2", DialogAnswer::Confirmed { yes: false })
    );
    s.event(dialog("dialog-3", DialogKind::Confirm, "Tag?"));
    s.ready().press(KeyCode::Char('n'));
    assert_eq!(
        s.last_sent(),
        answered("dialog-3", DialogAnswer::Confirmed { yes: false })
    );
    // A dialog's answer is never an approval.
    assert!(!s.sent().iter().any(|op| matches!(op, Op::Approval { .. })));
}

#[test]
fn dialogs_are_shown_one_at_a_time_in_order() {
    let mut s = Screen::new(70, 20);
    s.event(dialog("dialog-1", DialogKind::Confirm, "First?"));
    s.event(select_dialog("dialog-2", "Second", &["a", "b"], None));
    s.event(dialog("dialog-3", DialogKind::Confirm, "Third?"));
    let screen = s.ready().text();
    assert!(
        screen.contains("First?") && !screen.contains("Second"),
        "{screen}"
    );
    // The third goes before it is shown (its plugin gave up).
    s.event(UjiEvent::DialogResolved {
        dialog_id: "dialog-3".into(),
        resolution: Resolution::Withdrawn,
        answer: None,
    });
    s.press(KeyCode::Char('y'));
    let screen = s.text();
    assert!(screen.contains("Second"), "{screen}");
    // The next one has a guard of its own: the same key again answers
    // nothing.
    s.press(KeyCode::Enter);
    assert_eq!(dialog_answers(&s).len(), 1);
    s.ready().press(KeyCode::Enter);
    assert_eq!(
        dialog_answers(&s),
        [
            answered("dialog-1", DialogAnswer::Confirmed { yes: true }),
            answered("dialog-2", DialogAnswer::Selected { index: 0 }),
        ]
    );
    assert!(!s.text().contains("Third?"));
}

#[test]
fn a_dialog_that_timed_out_leaves_the_screen_with_a_notice() {
    let mut s = Screen::new(70, 20);
    s.event(select_dialog("dialog-1", "Branch", &["main"], None));
    s.ready();
    s.event(UjiEvent::DialogResolved {
        dialog_id: "dialog-1".into(),
        resolution: Resolution::TimedOut,
        answer: None,
    });
    let screen = s.text();
    assert!(screen.contains("timed out"), "{screen}");
    s.press(KeyCode::Enter);
    assert!(dialog_answers(&s).is_empty());
}

#[test]
fn the_screen_says_it_shows_dialogs() {
    let mut s = Screen::new(70, 20);
    s.app.hello();
    assert_eq!(s.last_sent(), Op::Hello { dialogs: true });
}
