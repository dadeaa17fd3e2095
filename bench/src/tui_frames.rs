//! The screen's frame costs, in process: the TUI plugin's own `App` fed
//! the events uji sends and drawn into a 120×40 in-memory terminal, the
//! way the plugin draws into the real one. (Start-up, memory and idle CPU
//! run the real binary in a pseudo-terminal: `tui_live.rs`.)

use std::sync::Arc;
use std::time::Instant;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use uji_plugin_tui::app::{App, Msg, Outbox, render};
use uji_plugin_tui::theme::Theme;
use uji_protocol::frontend::{Event as UjiEvent, ModelState, Op, SessionConfigured};
use uji_sdk::FrontendError;

use crate::{Row, median};

struct Discard;

impl Outbox for Discard {
    fn submit(&self, _id: &str, _op: &Op) -> Result<(), FrontendError> {
        Ok(())
    }
}

fn new_app() -> App {
    let mut app = App::new(Arc::new(Discard), Theme::colored());
    let model = ModelState {
        provider: "fake".into(),
        model: "m1".into(),
        effort: None,
        context_window: 200000,
    };
    app.handle(Msg::Uji(UjiEvent::SessionConfigured(Box::new(
        SessionConfigured {
            protocol: 2,
            id: "bench".into(),
            resumed: false,
            cwd: "/tmp".into(),
            title: String::new(),
            model: Some(model),
            history: vec![],
            commands: vec![],
            keymap: vec![],
            ui: Default::default(),
            tools: vec![],
            usage: Default::default(),
            mode: Default::default(),
            status: Default::default(),
        },
    ))));
    app
}

fn terminal() -> Terminal<TestBackend> {
    Terminal::new(TestBackend::new(120, 40)).expect("test terminal")
}

fn draw_ms(app: &mut App, term: &mut Terminal<TestBackend>) -> f64 {
    let started = Instant::now();
    term.draw(|frame| render(app, frame)).expect("draw");
    started.elapsed().as_secs_f64() * 1000.0
}

/// A long Markdown answer: prose, lists, code, tables, repeated to `bytes`.
pub fn long_answer(bytes: usize) -> String {
    let unit = "## Section\n\nSome *prose* with `code` and a [link](https://example.com), \
        long enough to wrap across the width of the screen at least once or twice.\n\n\
        - a list item\n  - nested **bold** item\n- another\n\n\
        ```rust\nfn main() {\n    let x = vec![1, 2, 3];\n    println!(\"{x:?}\");\n}\n```\n\n\
        | a | b |\n|---|---|\n| 1 | 2 |\n\n> a quote\n\n";
    let mut text = String::with_capacity(bytes + unit.len());
    while text.len() < bytes {
        text.push_str(unit);
    }
    text
}

/// Streams `text` one character per delta event; draws a frame every
/// `every` characters, the way the screen coalesces a fast stream to its
/// frame rate. Returns the frame times.
fn stream(text: &str, every: usize) -> Vec<f64> {
    let mut app = new_app();
    let mut term = terminal();
    let mut frames = Vec::new();
    for (i, c) in text.chars().enumerate() {
        app.handle(Msg::Uji(UjiEvent::Delta {
            text: c.to_string(),
        }));
        if i % every == 0 {
            frames.push(draw_ms(&mut app, &mut term));
        }
    }
    frames
}

fn key(c: char) -> Msg {
    Msg::Term(Event::Key(KeyEvent::new(
        KeyCode::Char(c),
        KeyModifiers::NONE,
    )))
}

/// Keys typed into a draft of `lines` lines, a frame after each.
fn typing(lines: usize) -> Vec<f64> {
    let mut app = new_app();
    let mut term = terminal();
    let draft: String = (0..lines)
        .map(|i| format!("line {i} of the draft\n"))
        .collect();
    app.handle(Msg::Term(Event::Paste(draft)));
    let mut times = Vec::new();
    for i in 0..500 {
        let started = Instant::now();
        app.handle(key(if i % 10 == 9 { ' ' } else { 'x' }));
        term.draw(|frame| render(&mut app, frame)).expect("draw");
        times.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    times
}

pub fn run() -> Vec<Row> {
    let answer = long_answer(5 * 1024 * 1024);
    let started = Instant::now();
    let frames = stream(&answer, 1_000);
    let total = started.elapsed().as_secs_f64();
    let chars = answer.chars().count();
    let typing = typing(10_000);
    vec![
        Row {
            area: "tui",
            what: format!(
                "frame while streaming a 5 MB answer in 1-char deltas (median of {} frames)",
                frames.len()
            ),
            value: median(frames.clone()),
            unit: "ms",
            target: Some(2.0),
        },
        Row {
            area: "tui",
            what: "slowest such frame".to_string(),
            value: frames.iter().copied().fold(0.0, f64::max),
            unit: "ms",
            target: None,
        },
        Row {
            area: "tui",
            what: format!("applying one delta event ({chars} deltas, frames included)"),
            value: total * 1_000_000.0 / chars as f64,
            unit: "µs",
            target: None,
        },
        Row {
            area: "tui",
            what: "key typed into a 10,000-line draft, with its frame".to_string(),
            value: median(typing),
            unit: "ms",
            target: Some(5.0),
        },
    ]
}
