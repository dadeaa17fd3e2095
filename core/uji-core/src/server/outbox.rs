//! The queue of events waiting for the frontend, bounded: a frontend that
//! reads slower than a turn produces slows the turn down (the sender waits
//! for room) instead of letting events pile up in memory. Progress is
//! already paced where it starts (`uji_host::progress`), so what waits here
//! is mostly streamed text.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use uji_protocol::frontend::Event;

/// Events waiting for the frontend, at most.
pub(super) const CAPACITY: usize = 1024;

/// How long an event waits for room before it is dropped: a frontend that
/// stopped reading must not hang the session for ever.
const WAIT_FOR_ROOM: Duration = Duration::from_secs(30);

const ENDED: &str = "the session has ended";

/// A bounded event queue: its sending and reading ends.
pub(super) fn queue() -> (Sender, Reader) {
    let (tx, rx) = mpsc::sync_channel(CAPACITY);
    let closed = Arc::new(AtomicBool::new(false));
    let sender = Sender {
        tx,
        closed: Arc::clone(&closed),
    };
    let reader = Reader {
        rx: Mutex::new(rx),
        closed,
    };
    (sender, reader)
}

/// Where the session puts its events.
pub(super) struct Sender {
    tx: SyncSender<Event>,
    /// Set when nobody reads any more. A flag rather than dropping the
    /// receiver: a reader thread may be waiting on it, holding its lock.
    closed: Arc<AtomicBool>,
}

impl Sender {
    /// Queues `event`, waiting while the queue is full (with short sleeps:
    /// senders are plugin threads and runtime workers alike); dropped when
    /// the frontend stopped reading.
    pub(super) fn send(&self, mut event: Event) {
        let deadline = Instant::now() + WAIT_FOR_ROOM;
        let mut pause = Duration::from_millis(1);
        loop {
            if self.closed.load(Ordering::Relaxed) {
                return;
            }
            match self.tx.try_send(event) {
                Ok(()) | Err(TrySendError::Disconnected(_)) => return,
                Err(TrySendError::Full(back)) => event = back,
            }
            if Instant::now() >= deadline {
                tracing::warn!(
                    "the frontend read no event for {}s; an event was dropped",
                    WAIT_FOR_ROOM.as_secs()
                );
                return;
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(20));
        }
    }
}

/// The frontend's end.
pub(super) struct Reader {
    rx: Mutex<Receiver<Event>>,
    closed: Arc<AtomicBool>,
}

impl Reader {
    /// The next event (`Ok(None)` on timeout).
    pub(super) fn next(&self, timeout: Duration) -> Result<Option<Event>, String> {
        if self.closed.load(Ordering::Relaxed) {
            return Err(ENDED.to_string());
        }
        let events = self.rx.lock();
        match events.recv_timeout(timeout) {
            Ok(event) => Ok(Some(event)),
            Err(RecvTimeoutError::Timeout) => Ok(None),
            Err(RecvTimeoutError::Disconnected) => Err(ENDED.to_string()),
        }
    }

    /// Nobody reads any more: events from now on are dropped at once
    /// (the session winding down after its frontend returned must not wait
    /// for room).
    pub(super) fn close(&self) {
        self.closed.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_reader_never_blocks_the_sender() {
        let (sender, reader) = queue();
        for _ in 0..CAPACITY {
            sender.send(Event::Closed);
        }
        reader.close();
        let started = Instant::now();
        sender.send(Event::Closed);
        assert!(started.elapsed() < Duration::from_secs(1));
        assert!(reader.next(Duration::ZERO).is_err());
    }

    #[test]
    fn a_full_queue_waits_for_the_reader() {
        let (sender, reader) = queue();
        for _ in 0..CAPACITY {
            sender.send(Event::Closed);
        }
        let drain = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            let mut read = 0;
            while let Ok(Some(_)) = reader.next(Duration::from_millis(200)) {
                read += 1;
            }
            read
        });
        sender.send(Event::Closed);
        drop(sender);
        assert_eq!(drain.join().ok(), Some(CAPACITY + 1));
    }
}
