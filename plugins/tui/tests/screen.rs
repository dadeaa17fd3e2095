//! The whole screen, in process: the plugin's `App` fed the events uji
//! sends and the keys a person presses, drawn into ratatui's TestBackend.
//! Each test asserts on what is on screen and on the operations the screen
//! sent to uji. (The real binary in a real pseudo-terminal is
//! tests/e2e/tui.rs.)

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::style::Color;
use serde_json::{Value, json};
use uji_plugin_tui::app::{App, Msg, Outbox, render};
use uji_plugin_tui::approval_guard::{GUARD, ManualClock};
use uji_plugin_tui::theme::Theme;

#[derive(Default)]
struct Recorder(Mutex<Vec<Value>>);

impl Outbox for Recorder {
    fn submit(&self, op: &Value) -> Result<(), String> {
        self.0.lock().unwrap().push(op.clone());
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
        screen.event(configured(json!([]), json!([])));
        screen
    }

    fn event(&mut self, event: Value) -> &mut Screen {
        self.app.handle(Msg::Uji(event));
        self
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

    fn sent(&self) -> Vec<Value> {
        self.sent.0.lock().unwrap().clone()
    }

    fn last_sent(&self) -> Value {
        self.sent().last().cloned().unwrap_or(Value::Null)
    }
}

fn configured(history: Value, keymap: Value) -> Value {
    json!({
        "type": "session_configured", "protocol": 2, "id": "s-1", "cwd": "/work",
        "title": "", "model": {"provider": "fake", "model": "m1", "effort": "high", "context_window": 200000},
        "history": history,
        "commands": [
            {"name": "compact", "description": "Summarise earlier messages now", "source": "uji"},
            {"name": "review", "description": "Review the diff", "source": "lua"}
        ],
        "keymap": keymap,
        "tools": [{"name": "run_command", "description": "", "verb": "Shell"},
                  {"name": "edit_file", "description": "", "verb": "Update"}],
        "usage": {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}
    })
}

#[test]
fn a_prompt_is_sent_as_a_user_message_and_shown_when_saved() {
    let mut s = Screen::new(80, 24);
    s.type_text("fix the test").press(KeyCode::Enter);
    let op = s.last_sent();
    assert_eq!(op["type"], "user_message");
    assert_eq!(op["text"], "fix the test");
    s.event(json!({"type": "turn_started", "text": "fix the test"}))
        .event(json!({"type": "message", "message": {"seq": 1, "time": 0, "role": "user", "text": "fix the test"}}));
    let screen = s.text();
    assert!(screen.contains("› fix the test"), "{screen}");
    assert!(screen.contains("Working ("), "{screen}");
}

#[test]
fn streamed_text_shows_live_and_a_retry_withdraws_it() {
    let mut s = Screen::new(80, 24);
    s.event(json!({"type": "turn_started", "text": "hi"}))
        .event(json!({"type": "delta", "text": "first attempt"}));
    assert!(s.text().contains("first attempt"));
    s.event(json!({"type": "stream_retry", "attempt": 1, "wait_ms": 10, "reason": "http 529"}))
        .event(json!({"type": "delta", "text": "second try"}));
    let screen = s.text();
    assert!(!screen.contains("first attempt"), "{screen}");
    assert!(screen.contains("second try"), "{screen}");
}

#[test]
fn reasoning_is_hidden_until_thinking_is_turned_on() {
    let mut s = Screen::new(80, 24);
    s.event(json!({"type": "reasoning", "text": "pondering deeply"}))
        .event(json!({"type": "delta", "text": "answer"}));
    assert!(!s.text().contains("pondering deeply"));
    s.type_text("/thinking").press(KeyCode::Enter);
    assert!(s.text().contains("pondering deeply"));
    // /thinking is the screen's own: nothing was sent to uji for it.
    assert!(s.sent().iter().all(|op| op["type"] != "run_command"));
}

fn ask_edit(s: &mut Screen) {
    s.event(json!({"type": "turn_started", "text": "edit"}))
        .event(json!({"type": "tool_started", "call_id": "c1", "name": "edit_file", "verb": "Update",
                      "subject": "notes.txt", "decision": "ask", "because": "edit_file default ask"}))
        .event(json!({"type": "approval_request", "call_id": "c1", "tool": "edit_file", "verb": "Update",
                      "subject": "notes.txt", "question": "Edit this file?",
                      "args": {"path": "notes.txt", "old_string": "hello", "new_string": "goodbye"},
                      "diff": {"path": "notes.txt", "unified": "@@ -1 +1 @@\n-hello\n+goodbye\n", "added": 1, "removed": 1},
                      "answers": ["allow_once", "allow_session", "deny"]}));
}

#[test]
fn an_approval_shows_the_question_and_y_allows_once() {
    let mut s = Screen::new(80, 24);
    ask_edit(&mut s);
    let screen = s.text();
    assert!(screen.contains("Edit this file?"), "{screen}");
    assert!(screen.contains("Yes, proceed (y)"), "{screen}");
    s.ready().press(KeyCode::Char('y'));
    let op = s.last_sent();
    assert_eq!(op["type"], "approval");
    assert_eq!(op["call_id"], "c1");
    assert_eq!(op["decision"], "allow_once");
    assert!(!s.text().contains("Edit this file?"));
}

#[test]
fn a_denial_takes_guidance_for_the_model() {
    let mut s = Screen::new(80, 24);
    ask_edit(&mut s);
    s.ready().press(KeyCode::Char('n'));
    // Letters are guidance now, not shortcuts: `y` does not allow.
    s.type_text("keep hello, say yes").press(KeyCode::Enter);
    let op = s.last_sent();
    assert_eq!(op["decision"], "deny");
    assert_eq!(op["guidance"], "keep hello, say yes");
}

#[test]
fn allow_for_the_session_is_a() {
    let mut s = Screen::new(80, 24);
    ask_edit(&mut s);
    s.ready().press(KeyCode::Char('a'));
    assert_eq!(s.last_sent()["decision"], "allow_session");
}

#[test]
fn esc_interrupts_a_running_turn_and_does_nothing_when_idle() {
    let mut s = Screen::new(80, 24);
    s.press(KeyCode::Esc);
    assert!(s.sent().is_empty(), "{:?}", s.sent());
    s.event(json!({"type": "turn_started", "text": "x"}));
    s.type_text("draft stays").press(KeyCode::Esc);
    assert_eq!(s.last_sent()["type"], "interrupt");
    assert!(s.text().contains("draft stays"));
}

#[test]
fn ctrl_c_asks_the_session_to_end() {
    let mut s = Screen::new(80, 24);
    s.ctrl('c');
    assert_eq!(s.last_sent()["type"], "shutdown");
    assert!(s.app.quitting());
    s.event(json!({"type": "closed"}));
    assert!(s.app.closed());
}

#[test]
fn messages_typed_while_working_are_listed_as_queued() {
    let mut s = Screen::new(80, 24);
    s.event(json!({"type": "turn_started", "text": "x"}));
    s.type_text("and then this").press(KeyCode::Enter);
    assert_eq!(s.last_sent()["type"], "user_message");
    s.event(json!({"type": "queue_changed", "queued": ["and then this"]}));
    let screen = s.text();
    assert!(screen.contains("queued: and then this"), "{screen}");
    assert!(screen.contains("1 queued"), "{screen}");
}

#[test]
fn the_status_line_shows_model_effort_context_and_tokens() {
    let mut s = Screen::new(100, 24);
    s.event(json!({"type": "usage", "turn": {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0},
                   "session": {"input": 12345, "output": 678, "cache_read": 0, "cache_write": 0},
                   "context_used": 50000, "context_window": 200000}));
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
    let op = s.last_sent();
    assert_eq!(op["type"], "shell");
    assert_eq!(op["command"], "git status");
    let id = op["id"].as_str().unwrap().to_string();
    s.event(json!({"type": "progress", "call_id": format!("shell-{id}"), "tool": "shell", "line": "On branch main"}));
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
    let op = s.last_sent();
    assert_eq!(op["type"], "run_command");
    assert_eq!(op["name"], "review");
    assert_eq!(op["args"], "src/");
    let id = op["id"].as_str().unwrap().to_string();
    s.event(json!({"type": "ack", "op_id": id, "result": {"output": "looks good"}}));
    assert!(s.text().contains("looks good"));
}

#[test]
fn a_command_added_mid_session_is_suggested_at_once() {
    let mut s = Screen::new(80, 24);
    s.type_text("/dep");
    assert!(!s.text().contains("Deploy the site"));
    s.event(json!({"type": "commands_changed", "commands": [
        {"name": "compact", "description": "Summarise earlier messages now", "source": "uji"},
        {"name": "deploy", "description": "Deploy the site", "source": "lua"}
    ]}));
    assert!(
        s.text().contains("Deploy the site"),
        "the open list shows it"
    );
    s.press(KeyCode::Tab).press(KeyCode::Enter);
    let op = s.last_sent();
    assert_eq!(op["type"], "run_command");
    assert_eq!(op["name"], "deploy");
}

#[test]
fn model_picker_lists_the_models_and_sets_the_chosen_one() {
    let mut s = Screen::new(80, 24);
    s.type_text("/model").press(KeyCode::Enter);
    let op = s.last_sent();
    assert_eq!(op["type"], "list_models");
    let id = op["id"].as_str().unwrap().to_string();
    s.event(json!({"type": "ack", "op_id": id, "result": {"models": [
        {"provider": "fake", "model": "m1", "context_window": 200000, "available": true},
        {"provider": "fake", "model": "m2", "context_window": 100000, "available": true}]}}));
    assert!(s.text().contains("fake/m2"));
    s.ready().press(KeyCode::Down).press(KeyCode::Enter);
    let op = s.last_sent();
    assert_eq!(op["type"], "set_model");
    assert_eq!(op["model"], "fake/m2");
}

#[test]
fn sessions_picker_resumes_and_deletes_after_a_second_ctrl_d() {
    let mut s = Screen::new(80, 24);
    s.type_text("/sessions").press(KeyCode::Enter);
    let id = s.last_sent()["id"].as_str().unwrap().to_string();
    s.event(json!({"type": "ack", "op_id": id, "result": {"sessions": [
        {"id": "s-1", "title": "this one"}, {"id": "s-2", "title": "older work"}]}}));
    assert!(s.text().contains("older work"));
    s.ready().press(KeyCode::Down).ctrl('d');
    assert_ne!(s.last_sent()["type"], "delete_session");
    s.ctrl('d');
    assert_eq!(
        s.last_sent()["type"],
        "delete_session",
        "{:?}\n{}",
        s.sent(),
        s.text()
    );
    assert_eq!(s.last_sent()["session_id"], "s-2");
}

#[test]
fn a_key_bound_in_the_config_runs_its_command() {
    let mut s = Screen::new(80, 24);
    s.event(configured(
        json!([]),
        json!([{"mode": "normal", "key": "<C-r>", "binding": {"command": "review"}}]),
    ));
    s.ctrl('r');
    let op = s.last_sent();
    assert_eq!(op["type"], "run_command");
    assert_eq!(op["name"], "review");
}

#[test]
fn a_resumed_session_shows_its_history() {
    let mut s = Screen::new(80, 24);
    let history = json!([
        {"seq": 1, "time": 0, "role": "user", "text": "what is in notes"},
        {"seq": 2, "time": 0, "role": "assistant", "text": "", "tool_calls": [{"id": "c1", "name": "run_command", "arguments": "{}"}]},
        {"seq": 3, "time": 0, "role": "tool", "tool_call_id": "c1", "name": "run_command", "content": "hello", "subject": "cat notes.txt"},
        {"seq": 4, "time": 0, "role": "assistant", "text": "It says **hello**."}
    ]);
    s.event(configured(history, json!([])));
    let screen = s.text();
    assert!(screen.contains("what is in notes"), "{screen}");
    assert!(screen.contains("Shell (cat notes.txt)"), "{screen}");
    assert!(screen.contains("It says"), "{screen}");
}

#[test]
fn the_wheel_scrolls_back_and_end_returns() {
    let mut s = Screen::new(60, 12);
    for i in 0..40 {
        s.event(json!({"type": "message", "message": {"seq": i, "time": 0, "role": "user", "text": format!("message {i}")}}));
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
        s.event(json!({"type": "delta", "text": "# Title\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"}));
        let screen = s.text();
        assert_eq!(screen.lines().count(), usize::from(h));
    }
}

#[test]
fn no_color_draws_without_colours() {
    let mut s = Screen::with_theme(80, 24, Theme::plain());
    ask_edit(&mut s);
    s.event(json!({"type": "delta", "text": "some `code` and **bold**"}));
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
        s.event(json!({"type": "message", "message": {"seq": i, "time": 0, "role": "user", "text": format!("message {i}")}}));
    }
    s.press(KeyCode::PageUp);
    let before = s.text();
    assert!(before.contains("more below"), "{before}");
    s.event(json!({"type": "turn_started", "text": "x"}));
    for i in 0..20 {
        s.event(json!({"type": "delta", "text": format!("streamed line {i}\n\n")}));
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
    s.event(json!({"type": "status", "name": "plan", "text": "PLAN"}));
    let screen = s.text();
    assert!(
        screen.lines().last().unwrap().contains(" PLAN "),
        "{screen}"
    );
    s.event(json!({"type": "status", "name": "plan"}));
    assert!(!s.text().contains("PLAN"));
}

/// A whole frame, row by row: the transcript (a message, a command with
/// its output, an edit with its diff, an answer in Markdown), the input and
/// the status line.
#[test]
fn snapshot_of_a_whole_frame() {
    let mut s = Screen::new(60, 24);
    s.event(json!({"type": "message", "message": {"seq": 1, "time": 0, "role": "user", "text": "fix the greeting"}}))
        .event(json!({"type": "tool_started", "call_id": "c1", "name": "run_command", "verb": "Shell",
                      "subject": "cat notes.txt", "decision": "allow", "because": "rule"}))
        .event(json!({"type": "tool_finished", "call_id": "c1", "name": "run_command",
                      "summary": "1 line, exit code 0, 0.0s", "is_error": false}))
        .event(json!({"type": "message", "message": {"seq": 2, "time": 0, "role": "tool", "tool_call_id": "c1",
                      "name": "run_command", "content": "hello world"}}))
        .event(json!({"type": "tool_started", "call_id": "c2", "name": "edit_file", "verb": "Update",
                      "subject": "notes.txt", "decision": "allow", "because": "rule"}))
        .event(json!({"type": "tool_finished", "call_id": "c2", "name": "edit_file", "is_error": false,
                      "diff": {"path": "notes.txt", "unified": "@@ -1 +1 @@\n-hello world\n+goodbye world\n", "added": 1, "removed": 1}}))
        .event(json!({"type": "delta", "text": "Changed **hello** to `goodbye`:\n\n- one file\n"}))
        .event(json!({"type": "usage", "turn": {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0},
                      "session": {"input": 2100, "output": 90, "cache_read": 0, "cache_write": 0},
                      "context_used": 2100, "context_window": 200000}));
    s.type_text("thanks");
    let expected = [
        "",
        "",
        "",
        "",
        "",
        "",
        "› fix the greeting",
        "",
        "● Shell (cat notes.txt)",
        "  ⎿  hello world",
        "     1 line, exit code 0, 0.0s",
        "",
        "● Update (notes.txt)",
        "  ⎿  Added 1 line, removed 1 line",
        "     1 -hello world",
        "     1 +goodbye world",
        "",
        "Changed hello to goodbye:",
        "",
        "• one file",
        "────────────────────────────────────────────────────────────",
        " › thanks",
        "────────────────────────────────────────────────────────────",
        "fake/m1 · high                            ctx 1% · ↑2.1k ↓90",
    ];
    assert_eq!(s.text(), expected.join("\n"));
}

#[test]
fn new_compact_and_quit_commands_send_their_operations() {
    for (command, op) in [
        ("/new", "new_session"),
        ("/compact", "compact"),
        ("/quit", "shutdown"),
    ] {
        let mut s = Screen::new(80, 24);
        s.type_text(command).press(KeyCode::Enter);
        assert_eq!(s.last_sent()["type"], op, "{command}");
    }
}

#[test]
fn alt_e_from_the_defaults_opens_the_effort_picker() {
    let mut s = Screen::new(80, 24);
    s.event(configured(
        json!([]),
        json!([{"mode": "normal", "key": "<A-e>", "binding": {"command": "effort"}}]),
    ));
    s.key(KeyCode::Char('e'), KeyModifiers::ALT);
    let screen = s.text();
    assert!(screen.contains("Reasoning effort"), "{screen}");
    // The picker starts on the current effort (high); two up is low.
    s.ready()
        .press(KeyCode::Up)
        .press(KeyCode::Up)
        .press(KeyCode::Enter);
    let op = s.last_sent();
    assert_eq!(op["type"], "set_model");
    assert_eq!(op["effort"], "low");
}

// A question answers only a key pressed once it has been on screen for the
// guard time with no key pressed for as long (docs/tui.md, "Approvals").

const KEY_GAP: std::time::Duration = std::time::Duration::from_millis(80);

fn approvals_sent(s: &Screen) -> Vec<Value> {
    s.sent()
        .into_iter()
        .filter(|op| op["type"] == "approval")
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
    s.event(json!({"type": "turn_started", "text": "edit"}));
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
    assert_eq!(s.last_sent()["decision"], "allow_session");
    // The question is gone; the draft is in the input, unsent.
    let screen = s.text();
    assert!(
        screen.contains("ok yes please also run it now and again"),
        "{screen}"
    );
    assert!(!screen.contains("✎ draft"), "{screen}");
    assert!(s.sent().iter().all(|op| op["type"] != "user_message"));
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
    assert_eq!(s.last_sent()["guidance"], "do x");
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
    s.event(json!({"type": "turn_started", "text": "x"}));
    ask_edit(&mut s);
    s.text();
    s.type_text("and then").press(KeyCode::Enter);
    s.wait(GUARD / 2);
    s.press(KeyCode::Enter);
    assert!(
        s.sent()
            .iter()
            .all(|op| op["type"] != "approval" && op["type"] != "user_message"),
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
    assert_eq!(s.last_sent()["decision"], "deny");
    assert_eq!(s.last_sent()["guidance"], "say yes");
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
    s.event(
        json!({"type": "approval_request", "call_id": "c2", "tool": "run_command", "verb": "Shell",
                   "subject": "rm -r build", "question": "Run this command?",
                   "args": {"command": "rm -r build"},
                   "answers": ["allow_once", "allow_session", "deny"]}),
    );
    s.ready()
        .press(KeyCode::Char('y'))
        .press(KeyCode::Char('y'));
    let answered = approvals_sent(&s);
    assert_eq!(answered.len(), 1, "{answered:?}");
    assert_eq!(answered[0]["call_id"], "c1");
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
    assert_eq!(s.last_sent()["type"], "interrupt");
    s.ctrl('c');
    assert_eq!(s.last_sent()["type"], "shutdown");
    assert!(approvals_sent(&s).is_empty(), "{:?}", s.sent());
}

#[test]
fn a_picker_takes_keys_only_once_ready() {
    let mut s = Screen::new(80, 24);
    s.type_text("/model").press(KeyCode::Enter);
    let id = s.last_sent()["id"].as_str().unwrap().to_string();
    s.event(json!({"type": "ack", "op_id": id, "result": {"models": [
        {"provider": "fake", "model": "m1", "context_window": 200000, "available": true},
        {"provider": "fake", "model": "m2", "context_window": 100000, "available": true}]}}));
    let screen = s.text();
    assert!(!screen.contains("enter choose"), "{screen}");
    s.press(KeyCode::Down).type_text("m2").press(KeyCode::Enter);
    assert_ne!(s.last_sent()["type"], "set_model", "{:?}", s.sent());
    assert!(s.text().contains("✎ draft: m2"), "{}", s.text());
    s.ready();
    assert!(s.text().contains("enter choose"));
    s.press(KeyCode::Enter);
    assert_eq!(s.last_sent()["type"], "set_model");
    assert_eq!(s.last_sent()["model"], "fake/m1");
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
    let id = s.last_sent()["id"].as_str().unwrap().to_string();
    s.event(json!({"type": "ack", "op_id": id, "result": {"providers": [
        {"id": "groq", "name": "Groq", "key": "missing", "key_env": "GROQ_API_KEY"}]}}));
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
        s.sent().iter().all(|op| op["type"] != "login"),
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
    assert_eq!(s.last_sent()["type"], "login");
    assert_eq!(s.last_sent()["key"], "gsk-secret");
}

#[test]
fn a_key_bound_to_a_command_does_nothing_while_the_question_is_not_ready() {
    let mut s = Screen::new(80, 24);
    s.event(configured(
        json!([]),
        json!([{"mode": "normal", "key": "<C-r>", "binding": {"command": "review"}}]),
    ));
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
    assert_eq!(s.last_sent()["decision"], "deny");
    assert_eq!(s.last_sent()["guidance"], "keep hello and yes");
}
