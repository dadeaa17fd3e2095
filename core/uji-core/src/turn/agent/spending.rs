//! What the session spends, counted for its budget (turn/budget.rs
//! decides): tokens, model requests and tool calls since this uji opened
//! the session, and the time since. The 80 % warning is given once per
//! limit; reaching a limit stops the turn before its next request.

use std::collections::HashSet;
use std::time::Instant;

use uji_protocol::frontend::{BudgetLimit, Event, NoticeLevel};
use uji_protocol::session::MessageBody;
use uji_protocol::wire::Usage;

use super::{Agent, TurnOutcome};
use crate::turn::budget::{self, Budget, Reached, Spent};

pub(crate) struct Spending {
    opened: Instant,
    spent: Spent,
    warned: HashSet<BudgetLimit>,
}

impl Default for Spending {
    fn default() -> Spending {
        Spending {
            opened: Instant::now(),
            spent: Spent::default(),
            warned: HashSet::new(),
        }
    }
}

impl Agent {
    fn budget(&self) -> Budget {
        Budget::from_config(self.registry.config(budget::CONFIG_KEY))
    }

    fn spent(&self) -> Spent {
        Spent {
            wall: self.spending.opened.elapsed(),
            ..self.spending.spent
        }
    }

    /// Counts one answer: its tokens, one request, its tool calls; warns
    /// once at 80 % of a limit.
    pub(super) fn spend(&mut self, usage: &Usage, tool_calls: usize) {
        let spent = &mut self.spending.spent;
        spent.turns += 1;
        spent.tool_calls += tool_calls as u64;
        spent.tokens = spent
            .tokens
            .saturating_add(usage.input)
            .saturating_add(usage.output)
            .saturating_add(usage.cache_read)
            .saturating_add(usage.cache_write);
        let nearly = self.budget().nearly(&self.spent());
        for near in nearly {
            if self.spending.warned.insert(near.limit) {
                self.emit(Event::notice(NoticeLevel::Warn, near.warning()));
            }
        }
    }

    /// The limit the session has reached, if any.
    pub(super) fn budget_reached(&self) -> Option<Reached> {
        self.budget().reached(&self.spent())
    }

    /// Ends the turn at a budget's limit: the message says which and how
    /// to raise it; the conversation keeps it, so the model knows too.
    pub(super) fn budget_stop(&mut self, reached: Reached, usage: Usage) -> TurnOutcome {
        let text = reached.stopped();
        self.save(MessageBody::Error { text: text.clone() });
        self.finish(TurnOutcome {
            text: None,
            error: Some(text),
            interrupted: false,
            usage,
            budget: Some(reached.limit),
        })
    }
}
