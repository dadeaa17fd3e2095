//! What reaches a running session from outside its turn: user messages
//! waiting for it ([`MessageQueue`]) and changes made while it may be busy
//! ([`SessionControl`]: a model switch, a new title, a `!cmd` result, a
//! background job's report). The
//! agent takes both at safe points: before each model request and when a
//! turn ends, so a change never lands in the middle of a request.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, RwLock};

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
        if let Ok(mut slot) = self.sink.write() {
            *slot = Some(sink);
        }
    }

    pub fn push(&self, message: Queued) {
        if let Ok(mut items) = self.items.lock() {
            items.push_back(message);
        }
        self.changed();
    }

    /// The oldest message, whatever its delivery (between turns).
    pub fn pop(&self) -> Option<Queued> {
        let popped = self.items.lock().ok()?.pop_front();
        if popped.is_some() {
            self.changed();
        }
        popped
    }

    /// The oldest message meant to steer the running turn.
    pub fn pop_steering(&self) -> Option<Queued> {
        let popped = {
            let mut items = self.items.lock().ok()?;
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
            .map(|items| items.iter().any(|q| q.delivery == Delivery::Steer))
            .unwrap_or(false)
    }

    /// Drops everything (a shutdown or a switch to another session).
    pub fn clear(&self) {
        let had = self
            .items
            .lock()
            .map(|mut items| {
                let had = !items.is_empty();
                items.clear();
                had
            })
            .unwrap_or(false);
        if had {
            self.changed();
        }
    }

    fn changed(&self) {
        let queued: Vec<String> = self
            .items
            .lock()
            .map(|items| items.iter().map(|q| q.text.clone()).collect())
            .unwrap_or_default();
        let sink = self.sink.read().ok().and_then(|s| s.clone());
        if let Some(sink) = sink {
            sink(Event::QueueChanged { queued });
        }
    }
}

/// Changes waiting for the agent's next safe point.
#[derive(Default)]
pub struct Pending {
    /// The model (and effort) the next request uses.
    pub model: Option<(Resolved, Option<String>)>,
    /// Why there is no model any more (its key was removed).
    pub no_model: Option<String>,
    /// The keys to keep out of everything, after a login added one.
    pub secrets: Option<Vec<String>>,
    pub title: Option<String>,
    /// Messages to save (`!cmd` results, background jobs' reports).
    pub messages: Vec<MessageBody>,
}

/// The running session's side door, shared by the session server, host
/// services (`uji.model.use` from a hook or command) and the agent.
#[derive(Clone, Default)]
pub struct SessionControl {
    pending: Arc<Mutex<Pending>>,
}

impl SessionControl {
    pub fn set_model(&self, model: Resolved, effort: Option<String>) {
        if let Ok(mut pending) = self.pending.lock() {
            pending.no_model = None;
            pending.model = Some((model, effort));
        }
    }

    /// The model can no longer be used: requests fail with `why`.
    pub fn unset_model(&self, why: String) {
        if let Ok(mut pending) = self.pending.lock() {
            pending.model = None;
            pending.no_model = Some(why);
        }
    }

    pub fn set_secrets(&self, secrets: Vec<String>) {
        if let Ok(mut pending) = self.pending.lock() {
            pending.secrets = Some(secrets);
        }
    }

    pub fn set_title(&self, title: String) {
        if let Ok(mut pending) = self.pending.lock() {
            pending.title = Some(title);
        }
    }

    pub fn save_message(&self, body: MessageBody) {
        if let Ok(mut pending) = self.pending.lock() {
            pending.messages.push(body);
        }
    }

    /// Whether messages wait to be saved.
    pub fn has_messages(&self) -> bool {
        self.pending
            .lock()
            .map(|pending| !pending.messages.is_empty())
            .unwrap_or(false)
    }

    /// Everything waiting, leaving nothing behind.
    pub fn take(&self) -> Pending {
        self.pending
            .lock()
            .map(|mut pending| std::mem::take(&mut *pending))
            .unwrap_or_default()
    }
}
