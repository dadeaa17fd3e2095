//! Pacing a tool's progress lines on the host side of the callback, so
//! every tool (native, Lua, any future kind) is covered: a command that
//! prints a million lines must not become a million events.
//!
//! At most one line per [`INTERVAL`] passes at once; a line that comes
//! sooner waits as the latest (replacing any older waiting one) and is sent
//! by the next [`Paced::flush`] once the interval is over, so the frontend
//! always ends on the newest line. Lines are cut to [`HOLD_CHARS`] before
//! they are kept.

use parking_lot::Mutex;
use std::time::{Duration, Instant};

use crate::calls::ProgressSink;

/// At most one progress line per call this often (about ten a second).
pub const INTERVAL: Duration = Duration::from_millis(100);

/// How much of a line is kept and passed on. More than a frontend shows
/// ([`WIDTH`]): the sink redacts keys before cutting to that, and a key
/// that starts within the shown part must still be whole here.
pub const HOLD_CHARS: usize = 1000;

/// How many characters of a progress line a frontend is sent.
pub const WIDTH: usize = 200;

/// `line` cut to at most `max` characters, with `…` when cut.
pub fn shorten(line: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match line.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", &line[..end]).into(),
        None => line.into(),
    }
}

/// A progress sink that passes on at most one line per [`INTERVAL`].
pub struct Paced {
    sink: ProgressSink,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    last_sent: Option<Instant>,
    waiting: Option<String>,
}

impl Paced {
    pub fn new(sink: ProgressSink) -> Paced {
        Paced {
            sink,
            state: Mutex::default(),
        }
    }

    /// A new line from the tool.
    pub fn line(&self, line: &str) {
        let mut state = self.state.lock();
        let line = shorten(line, HOLD_CHARS);
        let now = Instant::now();
        if state.last_sent.is_some_and(|t| now - t < INTERVAL) {
            let waiting = state.waiting.get_or_insert_with(String::new);
            waiting.clear();
            waiting.push_str(&line);
            return;
        }
        state.last_sent = Some(now);
        state.waiting = None;
        // Sent under the lock: lines reach the sink in the order they came.
        (self.sink)(&line);
    }

    /// Sends the waiting line once its interval is over (`force`: now).
    pub fn flush(&self, force: bool) {
        let mut state = self.state.lock();
        let now = Instant::now();
        let due = force || state.last_sent.is_none_or(|t| now - t >= INTERVAL);
        if due && let Some(line) = state.waiting.take() {
            state.last_sent = Some(now);
            (self.sink)(&line);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn recorder() -> (Arc<Mutex<Vec<String>>>, ProgressSink) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let record = Arc::clone(&seen);
        let sink: ProgressSink = Arc::new(move |line: &str| record.lock().push(line.to_string()));
        (seen, sink)
    }

    #[test]
    fn a_flood_becomes_its_first_line_then_the_latest() {
        let (seen, sink) = recorder();
        let paced = Paced::new(sink);
        let started = std::time::Instant::now();
        for n in 0..100_000 {
            paced.line(&n.to_string());
        }
        paced.flush(false);
        // One line per interval at most, however slow the machine is.
        let intervals = started.elapsed().as_millis() / INTERVAL.as_millis() + 1;
        let during = seen.lock().clone();
        assert_eq!(during.first().map(String::as_str), Some("0"));
        assert!(during.len() as u128 <= intervals, "{} lines", during.len());
        std::thread::sleep(INTERVAL);
        paced.flush(false);
        let after = seen.lock().clone();
        assert_eq!(after.last().map(String::as_str), Some("99999"));
        paced.flush(true);
        assert_eq!(seen.lock().len(), after.len(), "nothing waits any more");
    }

    #[test]
    fn long_lines_are_cut_at_a_character() {
        assert_eq!(shorten("héllo", 2), "hé…");
        assert_eq!(shorten("héllo", 5), "héllo");
        let (seen, sink) = recorder();
        Paced::new(sink).line(&"é".repeat(5000));
        assert_eq!(seen.lock()[0].chars().count(), HOLD_CHARS + 1);
    }
}
