//! The terminal reader and its pause: while an external editor has the
//! terminal (Ctrl+G), no key may be read by uji. The reader waits on the
//! terminal, a wake pipe and a SIGWINCH pipe at once (poll(2), no timeout:
//! an idle screen still uses no CPU). A pause request writes to the wake
//! pipe, and the reader parks until it is resumed; a resize writes to the
//! other, and crossterm, which counts the signal too, reports it.

use std::io::{PipeReader, PipeWriter, Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use rustix::event::{PollFd, PollFlags, poll};

use super::Msg;

/// How long a pause waits for the reader to park before going on anyway.
const PARK_WAIT: Duration = Duration::from_secs(2);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Reading,
    PauseAsked,
    Parked,
}

/// The main loop's handle on the reader.
pub struct InputGate {
    shared: Arc<(Mutex<State>, Condvar)>,
    wake: Mutex<PipeWriter>,
}

impl InputGate {
    /// Stops the reader before the terminal is handed over; returns once
    /// it is parked (or after [`PARK_WAIT`]).
    pub fn pause(&self) {
        let (state, changed) = &*self.shared;
        let mut guard = lock(state);
        *guard = State::PauseAsked;
        drop(guard);
        let _ = lock(&self.wake).write_all(b"p");
        let guard = lock(state);
        let _ = changed.wait_timeout_while(guard, PARK_WAIT, |s| *s != State::Parked);
    }

    /// Lets the reader read again.
    pub fn resume(&self) {
        let (state, changed) = &*self.shared;
        *lock(state) = State::Reading;
        changed.notify_all();
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Starts the reader: terminal events go to `tx` until it closes.
pub fn spawn(tx: SyncSender<Msg>) -> Result<InputGate, String> {
    let (wake_rx, wake_tx) =
        std::io::pipe().map_err(|e| format!("cannot start the input reader: {e}"))?;
    let (resized_rx, resized_tx) =
        std::io::pipe().map_err(|e| format!("cannot start the input reader: {e}"))?;
    signal_hook::low_level::pipe::register(signal_hook::consts::SIGWINCH, resized_tx)
        .map_err(|e| format!("cannot listen for terminal resizes: {e}"))?;
    let shared = Arc::new((Mutex::new(State::Reading), Condvar::new()));
    let reader = Reader {
        shared: Arc::clone(&shared),
        wake: wake_rx,
        resized: resized_rx,
        tty: Tty::open(),
    };
    std::thread::Builder::new()
        .name("uji-tui-input".into())
        .spawn(move || reader.run(&tx))
        .map_err(|e| format!("cannot start the input reader: {e}"))?;
    Ok(InputGate {
        shared,
        wake: Mutex::new(wake_tx),
    })
}

/// The terminal crossterm reads: stdin when it is one, else /dev/tty (as
/// crossterm chooses).
enum Tty {
    Stdin(std::io::Stdin),
    Device(std::fs::File),
    /// Neither could be had: poll only the pipe and let crossterm block.
    None,
}

impl Tty {
    fn open() -> Tty {
        let stdin = std::io::stdin();
        if rustix::termios::isatty(&stdin) {
            return Tty::Stdin(stdin);
        }
        match std::fs::File::open("/dev/tty") {
            Ok(file) => Tty::Device(file),
            Err(_) => Tty::None,
        }
    }

    fn fd(&self) -> Option<BorrowedFd<'_>> {
        match self {
            Tty::Stdin(stdin) => Some(stdin.as_fd()),
            Tty::Device(file) => Some(file.as_fd()),
            Tty::None => None,
        }
    }
}

struct Reader {
    shared: Arc<(Mutex<State>, Condvar)>,
    wake: PipeReader,
    /// A byte per SIGWINCH.
    resized: PipeReader,
    tty: Tty,
}

impl Reader {
    fn run(mut self, tx: &SyncSender<Msg>) {
        loop {
            // What crossterm has buffered or can read now, first.
            loop {
                match crossterm::event::poll(Duration::ZERO) {
                    Ok(true) => {}
                    Ok(false) => break,
                    Err(_) => return,
                }
                let Ok(event) = crossterm::event::read() else {
                    return;
                };
                let more = crossterm::event::poll(Duration::ZERO).unwrap_or(false);
                let msg = if more {
                    Msg::TermBurst(event)
                } else {
                    Msg::Term(event)
                };
                if tx.send(msg).is_err() {
                    return;
                }
            }
            if !self.wait_for_input() {
                return;
            }
        }
    }

    /// Sleeps until the terminal has input or a pause is asked (then parks
    /// until resumed). False when waiting failed for good.
    fn wait_for_input(&mut self) -> bool {
        if self.tty.fd().is_none() {
            // No terminal to wait on: crossterm waits (and cannot pause).
            return crossterm::event::poll(Duration::from_secs(3600)).is_ok();
        }
        let (woke, resized) = {
            let mut fds = vec![
                PollFd::new(&self.wake, PollFlags::IN),
                PollFd::new(&self.resized, PollFlags::IN),
            ];
            if let Some(tty) = self.tty.fd() {
                fds.push(PollFd::from_borrowed_fd(tty, PollFlags::IN));
            }
            match poll(&mut fds, None) {
                Ok(_) => (!fds[0].revents().is_empty(), !fds[1].revents().is_empty()),
                Err(rustix::io::Errno::INTR) => (false, false),
                Err(_) => return false,
            }
        };
        let mut bytes = [0u8; 64];
        if resized {
            // crossterm reports the resize at its next poll, just after.
            let _ = self.resized.read(&mut bytes);
        }
        if woke {
            let _ = self.wake.read(&mut bytes);
            self.park();
        }
        true
    }

    fn park(&self) {
        let (state, changed) = &*self.shared;
        let mut guard = lock(state);
        if *guard != State::PauseAsked {
            return;
        }
        *guard = State::Parked;
        changed.notify_all();
        let _guard = changed.wait_while(guard, |s| *s != State::Reading);
    }
}
