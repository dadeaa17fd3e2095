//! The session as a parent of subagents: the link the `subagent` tool
//! reads (who answers, where events go, tools, model, what is left of the
//! budget), and what the subagents spent counted as the session's own.

use std::sync::Arc;

use uji_protocol::Spent as CallSpent;

use super::{Agent, offered};
use crate::subagents::ParentLink;

impl Agent {
    /// Puts the session's link in place: when a frontend connects and at
    /// each turn's start (the model or tools may have changed).
    pub(super) fn link_subagents(&self) {
        let tools = self
            .registry
            .tools()
            .iter()
            .map(|t| t.spec().name.clone())
            .filter(|name| offered(&self.settings.tools, name))
            .collect();
        let link = ParentLink {
            approver: Arc::clone(&self.approver),
            events: Arc::clone(&self.events),
            tools,
            model: self.settings.model.as_ref().ok().map(|m| m.label()),
            effort: self.settings.effort.clone(),
            remaining: self.spent().left_of(&self.budget()),
            rules: self.gate.session_rules().clone(),
            control: self.control.clone(),
        };
        self.gate.subagent_links().set(self.session.id(), link);
    }

    /// What is left of the budget now, whenever it changes (a request
    /// answered, a call's subagents counted, a limit raised).
    pub(super) fn update_subagent_budget(&self) {
        let left = self.spent().left_of(&self.budget());
        self.gate
            .subagent_links()
            .set_remaining(self.session.id(), left);
    }

    /// Counts what a call's subagents spent: their tokens in the session's
    /// usage, and their tokens, requests, cost and number in its budget.
    pub(super) fn spend_of_call(&mut self, spent: &CallSpent) {
        self.usage.add(&spent.usage);
        self.spend_elsewhere(spent);
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        self.gate.subagent_links().forget(self.session.id());
    }
}
