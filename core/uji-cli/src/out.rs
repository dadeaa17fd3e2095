//! Printing for commands without a screen.
//!
//! `println!` and `eprintln!` panic when the reader has gone (`uji list |
//! head -1` closes the pipe after one line). Here a closed stdout ends uji
//! quietly with the status of a process killed by SIGPIPE, as other Unix
//! tools end, and a failed write to stderr is only logged: there is no one
//! left to tell.

use std::fmt;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Exit status once stdout's reader has gone: 128 + SIGPIPE.
pub const EXIT_CLOSED_PIPE: u8 = 141;

/// Set once a write found stdout closed (see [`write_stdout`]).
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Whether a write found stdout closed by its reader.
pub fn stdout_closed() -> bool {
    STDOUT_CLOSED.load(Ordering::SeqCst)
}

/// Why a write to stdout failed.
#[derive(Debug)]
pub enum WriteError {
    /// The reader went away: stop quietly.
    Closed,
    /// Anything else (a full disk): worth a message.
    Failed(String),
}

/// Writes `text` to `out` and flushes it, telling a closed pipe apart.
pub fn write_to(out: &mut impl Write, text: &str) -> Result<(), WriteError> {
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
            STDOUT_CLOSED.store(true, Ordering::SeqCst);
            Err(WriteError::Closed)
        }
        Err(e) => Err(WriteError::Failed(format!("cannot write to stdout: {e}"))),
    }
}

/// Writes `text` to stdout and flushes it, for commands that have nothing
/// left to clean up: a closed pipe exits at once.
pub fn print(text: &str) -> Result<(), String> {
    match write_to(&mut io::stdout().lock(), text) {
        Ok(()) => Ok(()),
        Err(WriteError::Closed) => exit_closed(),
        Err(WriteError::Failed(message)) => Err(message),
    }
}

/// Ends uji after stdout's reader went away.
pub fn exit_closed() -> ! {
    tracing::debug!("stdout was closed by its reader; quitting");
    std::process::exit(EXIT_CLOSED_PIPE.into())
}

/// Writes one line to stderr; a failure is logged, never a panic.
pub fn say_line(args: fmt::Arguments) {
    let mut stderr = io::stderr().lock();
    if let Err(e) = stderr
        .write_fmt(args)
        .and_then(|()| stderr.write_all(b"\n"))
    {
        tracing::debug!("cannot write to stderr: {e}");
    }
}

/// `eprintln!` that never panics: see [`say_line`].
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::out::say_line(format_args!($($arg)*))
    };
}
pub(crate) use say;
