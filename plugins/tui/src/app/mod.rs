//! The screen's main loop: terminal input, uji's events and signals meet
//! in one channel; the state changes, and a frame is drawn when something
//! changed, at most once per frame interval. Nothing wakes it when nothing
//! happens, so an idle screen uses no CPU.

mod attach;
mod attention;
mod clipboard;
mod commands;
mod dialogs;
mod draw;
mod editor;
mod events;
mod input;
mod input_gate;
mod jobs;
mod login;
mod plan;
mod question;
mod recall;
mod reload;
mod state;

use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::time::{Duration, Instant};

use uji_protocol::frontend::Event;
use uji_sdk::{FrontendError, FrontendSession};

pub use draw::render;
pub use state::{App, Outbox, Status};

use crate::terminal::TerminalGuard;

/// Frames are drawn at most this often; a flood of events in between is
/// applied first and drawn once.
const FRAME: Duration = Duration::from_millis(16);
/// How long the event reader waits in uji before asking again.
const EVENT_WAIT: Duration = Duration::from_secs(60);
/// How long to wait for `closed` after asking the session to end.
const CLOSE_WAIT: Duration = Duration::from_secs(3);

/// What wakes the loop.
#[expect(
    clippy::large_enum_variant,
    reason = "an event moves through the channel once; boxing it would allocate per streamed delta"
)]
pub enum Msg {
    Term(crossterm::event::Event),
    /// A terminal event read while more input was already waiting: keys
    /// typed ahead, or held back while uji was busy and delivered at once.
    /// It is typing, never an answer, however long the question has been
    /// quiet (a stall must not turn the next letter into an answer).
    TermBurst(crossterm::event::Event),
    /// An event from uji ([`Event::Unknown`] ones are skipped).
    Uji(Event),
    /// The session's event stream ended (or failed).
    UjiGone(FrontendError),
    /// SIGTERM, SIGHUP, SIGINT or SIGQUIT: end as if the user quit.
    Signal(i32),
}

/// Runs the screen until the user quits or the session closes.
pub fn run(session: FrontendSession) -> Result<(), String> {
    let session = Arc::new(session);
    let (tx, rx) = sync_channel::<Msg>(1024);
    spawn_event_reader(Arc::clone(&session), tx.clone())?;
    spawn_signal_listener(tx.clone())?;
    let mut guard = TerminalGuard::enter().map_err(|e| {
        format!("cannot take over the terminal ({e}); `uji run \"prompt\"` works without one")
    })?;
    let input = input_gate::spawn(tx)?;
    let outbox: Arc<dyn Outbox> = session;
    let mut app = App::new(outbox, crate::theme::Theme::from_env());
    app.hello();
    if let Some(draft) = reload::carried_draft() {
        app.composer.set_text(&draft);
    }
    let result = main_loop(&mut app, &mut guard, &input, &rx);
    drop(guard);
    if let Some((id, draft)) = app.reload_target() {
        // Only returns when uji could not be started again.
        let why = reload::restart(&id, draft.as_ref());
        return Err(format!(
            "could not start uji again for /reload ({why}); resume with: uji resume --id {id}"
        ));
    }
    // On the terminal again, below the shell prompt's line.
    if let Some(farewell) = app.farewell() {
        use std::io::Write;
        let _ = std::io::stdout().write_all(farewell.as_bytes());
    }
    result
}

fn main_loop(
    app: &mut App,
    guard: &mut TerminalGuard,
    input: &input_gate::InputGate,
    rx: &Receiver<Msg>,
) -> Result<(), String> {
    let mut last_draw: Option<Instant> = None;
    let mut closing_since: Option<Instant> = None;
    loop {
        let wait = app.next_wakeup(last_draw, FRAME);
        let first = match wait {
            Some(wait) => match rx.recv_timeout(wait) {
                Ok(msg) => Some(msg),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => return Ok(()),
            },
            None => match rx.recv() {
                Ok(msg) => Some(msg),
                Err(_) => return Ok(()),
            },
        };
        if let Some(msg) = first {
            app.handle(msg);
        }
        // Apply everything already waiting before drawing once.
        let started = Instant::now();
        while started.elapsed() < FRAME {
            match rx.try_recv() {
                Ok(msg) => app.handle(msg),
                Err(_) => break,
            }
        }
        if app.closed() {
            return Ok(());
        }
        if app.quitting() {
            let since = *closing_since.get_or_insert_with(Instant::now);
            if since.elapsed() > CLOSE_WAIT {
                return Ok(());
            }
        }
        if let Some(draft) = app.editor_request.take() {
            let edited = editor::edit(&draft, guard, input);
            app.editor_done(edited);
        }
        app.tick();
        let due = last_draw.is_none_or(|at| at.elapsed() >= FRAME);
        if app.needs_draw() && due {
            draw::frame(app, &mut guard.screen).map_err(|e| format!("cannot draw: {e}"))?;
            last_draw = Some(Instant::now());
        }
    }
}

fn spawn_event_reader(session: Arc<FrontendSession>, tx: SyncSender<Msg>) -> Result<(), String> {
    std::thread::Builder::new()
        .name("uji-tui-events".into())
        .spawn(move || {
            loop {
                // A long wait: the thread sleeps in uji until an event comes.
                match session.next_event(EVENT_WAIT) {
                    Ok(Some(event)) => {
                        if tx.send(Msg::Uji(event)).is_err() {
                            return;
                        }
                    }
                    Ok(None) => {}
                    Err(e) => {
                        let _ = tx.send(Msg::UjiGone(e));
                        return;
                    }
                }
            }
        })
        .map(|_| ())
        .map_err(|e| format!("cannot start the event reader: {e}"))
}

fn spawn_signal_listener(tx: SyncSender<Msg>) -> Result<(), String> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGHUP, SIGINT, SIGQUIT])
        .map_err(|e| format!("cannot listen for signals: {e}"))?;
    std::thread::Builder::new()
        .name("uji-tui-signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                if tx.send(Msg::Signal(signal)).is_err() {
                    return;
                }
            }
        })
        .map(|_| ())
        .map_err(|e| format!("cannot start the signal listener: {e}"))
}
