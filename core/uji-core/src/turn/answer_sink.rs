//! Where a wire's deltas go on their way to the frontend: keys redacted
//! (also one split between deltas), and the answer's size counted so a
//! model that never stops is stopped, whichever wire streams it.

use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;
use tokio::sync::Notify;
use uji_host::WireEvents;
use uji_protocol::frontend::Event;
use uji_protocol::wire::MAX_ANSWER_BYTES;

use crate::auth::redact::StreamRedactor;
use crate::turn::control::EventSink;

pub(crate) struct AnswerSink {
    events: EventSink,
    state: Mutex<Shown>,
    over: AtomicBool,
    too_long: Notify,
}

/// What has streamed so far.
struct Shown {
    text: StreamRedactor,
    reasoning: StreamRedactor,
    bytes: usize,
    /// The answer's text as shown (redacted), kept for an interruption:
    /// what the person read stays in the conversation.
    shown_text: String,
}

impl AnswerSink {
    pub(crate) fn new(events: EventSink, secrets: &[String]) -> AnswerSink {
        AnswerSink {
            events,
            state: Mutex::new(Shown {
                text: StreamRedactor::new(secrets),
                reasoning: StreamRedactor::new(secrets),
                bytes: 0,
                shown_text: String::new(),
            }),
            over: AtomicBool::new(false),
            too_long: Notify::new(),
        }
    }

    /// Resolves once the answer passed [`MAX_ANSWER_BYTES`].
    pub(crate) async fn too_long(&self) {
        if !self.over.load(Ordering::SeqCst) {
            self.too_long.notified().await;
        }
    }

    /// The stream ended: shows what was held back in case it began a key.
    pub(crate) fn flush(&self) {
        let mut shown = self.state.lock();
        let text = shown.text.flush();
        shown.shown_text.push_str(&text);
        let reasoning = shown.reasoning.flush();
        self.emit(text, false);
        self.emit(reasoning, true);
    }

    /// The stream was cut (an interruption): flushes what was held back and
    /// answers the whole text shown, redacted as it was shown.
    pub(crate) fn partial_text(&self) -> String {
        self.flush();
        std::mem::take(&mut self.state.lock().shown_text)
    }

    fn pass(&self, delta: &str, reasoning: bool) {
        if self.over.load(Ordering::SeqCst) {
            return;
        }
        // Held while emitting, so deltas keep their order.
        let mut shown = self.state.lock();
        shown.bytes += delta.len();
        if shown.bytes > MAX_ANSWER_BYTES {
            self.over.store(true, Ordering::SeqCst);
            // notify_one keeps a permit if nobody waits yet.
            self.too_long.notify_one();
            return;
        }
        let visible = if reasoning {
            shown.reasoning.push(delta)
        } else {
            let visible = shown.text.push(delta);
            shown.shown_text.push_str(&visible);
            visible
        };
        self.emit(visible, reasoning);
    }

    fn emit(&self, text: String, reasoning: bool) {
        if text.is_empty() {
            return;
        }
        (self.events)(if reasoning {
            Event::Reasoning { text }
        } else {
            Event::Delta { text }
        });
    }
}

impl WireEvents for AnswerSink {
    fn text(&self, delta: &str) {
        self.pass(delta, false);
    }

    fn reasoning(&self, delta: &str) {
        self.pass(delta, true);
    }
}
