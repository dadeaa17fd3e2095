//! What reaches a running session from outside its turn: user messages
//! waiting for it ([`MessageQueue`]) and changes made while it may be busy
//! ([`SessionControl`]: a model switch, a new title, a `!cmd` result, a
//! background job's report). The
//! agent takes both at safe points: before each model request and when a
//! turn ends, so a change never lands in the middle of a request.
//!
//! The locks are parking_lot's, which never poison: a thread that panics
//! while holding one cannot make a later push, pop or check skip its work
//! (a queued message dropped, a busy session reported idle).

use std::collections::VecDeque;
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};
use uji_protocol::Image;
use uji_protocol::frontend::{Delivery, Event};
use uji_protocol::session::MessageBody;

use crate::auth::providers::Resolved;

/// Receives everything a frontend shows.
pub type EventSink = Arc<dyn Fn(Event) + Send + Sync>;

/// A user message waiting for the agent.
#[derive(Debug, Clone, PartialEq)]
pub struct Queued {
    pub text: String,
    pub images: Vec<Image>,
    pub delivery: Delivery,
}

/// Messages typed while a turn runs, in the order they came. A running
/// turn takes the `steer` ones before each model call (and keeps going
/// while any are left); the rest start turns of their own afterwards.
#[derive(Clone, Default)]
pub struct MessageQueue {
    items: Arc<Mutex<VecDeque<Queued>>>,
    sink: Arc<RwLock<Option<EventSink>>>,
}

impl MessageQueue {
    /// Every change is told to `sink` as `queue_changed`.
    pub fn set_sink(&self, sink: EventSink) {
        *self.sink.write() = Some(sink);
    }

    pub fn push(&self, message: Queued) {
        self.items.lock().push_back(message);
        self.changed();
    }

    /// Whether no message waits.
    pub fn is_empty(&self) -> bool {
        self.items.lock().is_empty()
    }

    /// The oldest message, whatever its delivery (between turns).
    pub fn pop(&self) -> Option<Queued> {
        let popped = self.items.lock().pop_front();
        if popped.is_some() {
            self.changed();
        }
        popped
    }

    /// The newest message, taken back by the user to edit.
    pub fn pop_newest(&self) -> Option<Queued> {
        let popped = self.items.lock().pop_back();
        if popped.is_some() {
            self.changed();
        }
        popped
    }

    /// The oldest message meant to steer the running turn.
    pub fn pop_steering(&self) -> Option<Queued> {
        let popped = {
            let mut items = self.items.lock();
            let at = items.iter().position(|q| q.delivery == Delivery::Steer)?;
            items.remove(at)
        };
        if popped.is_some() {
            self.changed();
        }
        popped
    }

    pub fn has_steering(&self) -> bool {
        self.items
            .lock()
            .iter()
            .any(|q| q.delivery == Delivery::Steer)
    }

    /// Drops everything (a shutdown or a switch to another session).
    pub fn clear(&self) {
        let had = {
            let mut items = self.items.lock();
            let had = !items.is_empty();
            items.clear();
            had
        };
        if had {
            self.changed();
        }
    }

    /// The texts of the waiting messages, oldest first, leaving them
    /// queued.
    pub fn texts(&self) -> Vec<String> {
        self.items.lock().iter().map(|q| q.text.clone()).collect()
    }

    fn changed(&self) {
        let queued = self.texts();
        let sink = self.sink.read().clone();
        if let Some(sink) = sink {
            sink(Event::QueueChanged { queued });
        }
    }
}

/// The model and effort requests use, or why there is no model (no key
/// set up, or its key was removed: requests fail with that).
#[derive(Clone, Debug)]
pub struct ChosenModel {
    pub model: Result<Resolved, String>,
    pub effort: Option<String>,
}

/// Changes waiting for the agent's next safe point.
#[derive(Default)]
pub struct Pending {
    /// The model choice, when it changed since the agent last took it.
    pub model: Option<ChosenModel>,
    /// The keys to keep out of everything, after a login added one.
    pub secrets: Option<Vec<String>>,
    pub title: Option<String>,
    /// Messages to save (`!cmd` results, background jobs' reports).
    pub messages: Vec<MessageBody>,
}

/// The running session's side door, shared by the session server, host
/// services (`uji.model.use` from a hook or command) and the agent.
///
/// It owns the model choice: the model the next request uses, as the
/// frontend and plugins last switched it. The agent copies it at its next
/// safe point (the running request keeps the model it started with), and
/// everything that asks which model a session uses reads it here.
#[derive(Clone)]
pub struct SessionControl {
    state: Arc<Mutex<State>>,
}

struct State {
    chosen: ChosenModel,
    /// Whether `chosen` changed since the agent last took it.
    switched: bool,
    pending: Pending,
}

impl SessionControl {
    /// A side door for a session that starts on `chosen`.
    pub fn new(chosen: ChosenModel) -> SessionControl {
        SessionControl {
            state: Arc::new(Mutex::new(State {
                chosen,
                switched: false,
                pending: Pending::default(),
            })),
        }
    }

    /// The model the next request uses.
    pub fn model(&self) -> ChosenModel {
        self.state.lock().chosen.clone()
    }

    /// Another session starts on `chosen`: no switch is pending any more.
    pub fn restart_on(&self, chosen: ChosenModel) {
        let mut state = self.state.lock();
        state.chosen = chosen;
        state.switched = false;
    }

    /// Changes the model choice with `change`, read and written under one
    /// lock (an effort switched meanwhile is not lost). Nothing changes
    /// when `change` fails.
    pub fn switch_model<T, E>(
        &self,
        change: impl FnOnce(&mut ChosenModel) -> Result<T, E>,
    ) -> Result<T, E> {
        let mut state = self.state.lock();
        let mut chosen = state.chosen.clone();
        let result = change(&mut chosen)?;
        state.chosen = chosen;
        state.switched = true;
        Ok(result)
    }

    pub fn set_secrets(&self, secrets: Vec<String>) {
        self.state.lock().pending.secrets = Some(secrets);
    }

    pub fn set_title(&self, title: String) {
        self.state.lock().pending.title = Some(title);
    }

    pub fn save_message(&self, body: MessageBody) {
        self.state.lock().pending.messages.push(body);
    }

    /// Whether messages wait to be saved.
    pub fn has_messages(&self) -> bool {
        !self.state.lock().pending.messages.is_empty()
    }

    /// Everything waiting, leaving nothing behind.
    pub fn take(&self) -> Pending {
        let mut state = self.state.lock();
        let mut pending = std::mem::take(&mut state.pending);
        if std::mem::take(&mut state.switched) {
            pending.model = Some(state.chosen.clone());
        }
        pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(text: &str) -> Queued {
        Queued {
            text: text.to_string(),
            images: Vec::new(),
            delivery: Delivery::Queue,
        }
    }

    /// Panics on another thread while holding the queue's lock.
    fn panic_holding(queue: &MessageQueue) {
        let items = Arc::clone(&queue.items);
        let panicked = std::thread::spawn(move || {
            let _held = items.lock();
            panic!("a thread dies holding the message queue's lock");
        })
        .join();
        assert!(panicked.is_err());
    }

    #[test]
    fn a_poisoned_lock_does_not_lose_a_queued_message() {
        let queue = MessageQueue::default();
        let told = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&told);
        queue.set_sink(Arc::new(move |event| seen.lock().push(event)));
        queue.push(message("first"));
        panic_holding(&queue);
        queue.push(message("second"));
        queue.push(Queued {
            delivery: Delivery::Steer,
            ..message("steer")
        });
        panic_holding(&queue);
        assert!(queue.has_steering());
        assert_eq!(
            queue.pop_steering().map(|q| q.text).as_deref(),
            Some("steer")
        );
        assert_eq!(queue.pop().map(|q| q.text).as_deref(), Some("first"));
        assert_eq!(queue.pop().map(|q| q.text).as_deref(), Some("second"));
        assert_eq!(queue.pop(), None);
        // Every change was told, none skipped.
        assert_eq!(told.lock().len(), 6);
    }

    #[test]
    fn listing_the_queue_leaves_every_message_waiting_in_order() {
        let queue = MessageQueue::default();
        assert!(queue.texts().is_empty());
        queue.push(message("first"));
        queue.push(Queued {
            delivery: Delivery::Steer,
            ..message("steer")
        });
        queue.push(message("third"));
        assert_eq!(queue.texts(), ["first", "steer", "third"]);
        assert_eq!(queue.texts(), ["first", "steer", "third"]);
        assert_eq!(queue.pop().map(|q| q.text).as_deref(), Some("first"));
        assert_eq!(queue.texts(), ["steer", "third"]);
    }

    #[test]
    fn a_failed_switch_changes_nothing_and_a_switch_is_taken_once() {
        let control = SessionControl::new(ChosenModel {
            model: Err("no model".to_string()),
            effort: None,
        });
        let failed = control.switch_model(|choice| {
            choice.effort = Some("high".to_string());
            choice.model.as_ref().map(drop).map_err(Clone::clone)
        });
        assert_eq!(failed, Err("no model".to_string()));
        assert_eq!(control.model().effort, None);
        assert!(control.take().model.is_none());
        control
            .switch_model(|choice| {
                choice.effort = Some("low".to_string());
                Ok::<(), ()>(())
            })
            .ok();
        let taken = control.take().model.map(|choice| choice.effort);
        assert_eq!(taken, Some(Some("low".to_string())));
        assert!(control.take().model.is_none());
        assert_eq!(control.model().effort.as_deref(), Some("low"));
    }
}
