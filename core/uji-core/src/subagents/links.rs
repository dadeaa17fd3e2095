//! What the `subagent` tool needs of the session that calls it, by session
//! id: who answers its questions, where its events go, which tools it has
//! and what is left of its budget. The session's agent owns these and
//! puts a fresh copy here whenever one changes; the tool reads a copy.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::RwLock;

use crate::gate::{Approver, SessionRules};
use crate::turn::control::{EventSink, SessionControl};

/// What is left of the parent's budget, for its children's own.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Remaining {
    pub turns: Option<u64>,
    pub tokens: Option<u64>,
    /// Dollars.
    pub cost: Option<f64>,
    /// Child sessions the parent may still start (`uji.budget{children}`).
    pub children: Option<u64>,
    /// When the parent's `wall` budget runs out: a moment, not a length,
    /// since time passes between updates of this copy.
    pub wall_ends: Option<std::time::Instant>,
}

/// A session that may start subagents.
#[derive(Clone)]
pub struct ParentLink {
    pub approver: Arc<dyn Approver>,
    pub events: EventSink,
    /// The tools the session may use (its `--tools`, else every tool).
    pub tools: Vec<String>,
    /// `provider/model` the session uses, for children of agents that
    /// name none.
    pub model: Option<String>,
    pub effort: Option<String>,
    pub remaining: Remaining,
    /// The session's "allow for this session" answers, which its
    /// subagents' own read through.
    pub rules: SessionRules,
    /// The session's side door: a finished background job's report of a
    /// subagent's reaches the subagent there.
    pub control: SessionControl,
}

/// The links of this process's sessions.
#[derive(Clone, Default)]
pub struct Links(Arc<RwLock<HashMap<String, ParentLink>>>);

impl Links {
    pub fn set(&self, session: &str, link: ParentLink) {
        self.0.write().insert(session.to_string(), link);
    }

    /// Changes the budget left of a linked session.
    pub fn set_remaining(&self, session: &str, remaining: Remaining) {
        if let Some(link) = self.0.write().get_mut(session) {
            link.remaining = remaining;
        }
    }

    pub fn get(&self, session: &str) -> Option<ParentLink> {
        self.0.read().get(session).cloned()
    }

    pub fn forget(&self, session: &str) {
        self.0.write().remove(session);
    }
}
