//! What the session spends, counted for its budget (turn/budget.rs
//! decides): tokens, model requests and tool calls since this uji opened
//! the session, and the time since. The 80 % warning is given once per
//! limit; reaching a limit stops the turn before its next request.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use uji_protocol::frontend::{BudgetLimit, Event, NoticeLevel};
use uji_protocol::services::Price;
use uji_protocol::session::MessageBody;
use uji_protocol::wire::Usage;

use super::{Agent, TurnOutcome};
use crate::gate::{Approval, ApprovalRequest};
use crate::turn::budget::{self, Budget, Reached, Spent};

pub(crate) struct Spending {
    opened: Instant,
    spent: Spent,
    /// What the person let the session spend beyond each limit ("go on").
    raised: HashMap<BudgetLimit, u64>,
    /// A request went to a model uji knows no price of.
    unpriced: bool,
    warned: HashSet<BudgetLimit>,
}

impl Default for Spending {
    fn default() -> Spending {
        Spending {
            opened: Instant::now(),
            spent: Spent::default(),
            raised: HashMap::new(),
            unpriced: false,
            warned: HashSet::new(),
        }
    }
}

impl Agent {
    /// The session's budget (a subagent's own, else the configured one),
    /// with what the person allowed beyond it.
    pub(super) fn budget(&self) -> Budget {
        let mut budget = self
            .settings
            .budget
            .unwrap_or_else(|| Budget::from_config(self.registry.config(budget::CONFIG_KEY)));
        for (limit, more) in &self.spending.raised {
            budget.raise(*limit, *more);
        }
        budget
    }

    /// At a limit, in a session a person answers: asks whether to go on
    /// for as much again. True when the limit was raised.
    pub(super) async fn budget_continue(&mut self, reached: Reached) -> bool {
        if self.approver.automatic() {
            return false;
        }
        let question = ApprovalRequest::yes_or_no(
            "budget",
            reached.question(),
            serde_json::json!({ "raise it for good": reached.raise() }),
            format!("go on: {}", reached.as_much_again()),
            "stop here".to_string(),
        );
        let answer = self.approver.ask(question).await;
        if !matches!(answer, Ok(Approval::Allow | Approval::AllowSession)) {
            return false;
        }
        *self.spending.raised.entry(reached.limit).or_default() += reached.allowed;
        self.spending.warned.remove(&reached.limit);
        self.update_subagent_budget();
        true
    }

    pub(super) fn spent(&self) -> Spent {
        Spent {
            wall: self.spending.opened.elapsed(),
            ..self.spending.spent
        }
    }

    /// What the session's requests cost so far, in millionths of a dollar;
    /// `None` once a request went to a model without a price.
    pub(crate) fn cost(&self) -> Option<u64> {
        (!self.spending.unpriced).then_some(self.spending.spent.cost)
    }

    /// The price of the model requests go to now.
    fn price(&self) -> Option<Price> {
        self.settings.model.as_ref().ok()?.model.price.clone()
    }

    /// Counts one answer: its tokens and cost, one request, its tool
    /// calls; warns once at 80 % of a limit.
    pub(super) fn spend(&mut self, usage: &Usage, tool_calls: usize) {
        match self.price() {
            Some(price) => {
                let cost = price.cost(usage);
                self.spending.spent.cost = self.spending.spent.cost.saturating_add(cost);
            }
            None => self.spending.unpriced = true,
        }
        let spent = &mut self.spending.spent;
        spent.turns += 1;
        spent.tool_calls += tool_calls as u64;
        spent.tokens = spent.tokens.saturating_add(usage.total());
        self.after_spending();
    }

    /// After spending: subagents started from now on get what is left,
    /// and the person is warned once per limit at 80 % of it.
    fn after_spending(&mut self) {
        self.update_subagent_budget();
        let nearly = self.budget().nearly(&self.spent());
        for near in nearly {
            if self.spending.warned.insert(near.limit) {
                self.emit(Event::notice(NoticeLevel::Warn, near.warning()));
            }
        }
    }

    /// Counts model use a tool call paid for (its subagents): tokens,
    /// requests as turns, cost, and the subagents it started.
    pub(super) fn spend_elsewhere(&mut self, more: &uji_protocol::Spent) {
        match more.cost {
            Some(cost) => self.spending.spent.cost = self.spending.spent.cost.saturating_add(cost),
            None if more.requests > 0 => self.spending.unpriced = true,
            None => {}
        }
        let spent = &mut self.spending.spent;
        spent.turns = spent.turns.saturating_add(more.requests);
        spent.children = spent.children.saturating_add(more.sessions);
        spent.tokens = spent.tokens.saturating_add(more.usage.total());
        self.after_spending();
    }

    /// The limit the session has reached, if any; a cost budget cannot be
    /// kept for a model without a price (before its first request).
    pub(super) fn budget_reached(&self) -> Result<Option<Reached>, String> {
        let budget = self.budget();
        if budget.cost.is_some() && self.price().is_none() {
            let model = self
                .settings
                .model
                .as_ref()
                .map(|m| m.label())
                .unwrap_or_default();
            return Err(format!(
                "uji knows no price for {model}, so a cost budget (--max-cost, uji.budget {{ cost = … }}) cannot be kept; give the model a price in uji.provider.add (docs/budgets.md) or use a turns or tokens budget"
            ));
        }
        Ok(budget.reached(&self.spent()))
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
