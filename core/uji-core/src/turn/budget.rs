//! Budgets (docs/budgets.md): what a session may spend before uji stops it
//! at the next safe point (before a model request), and what it has spent.
//! Pure: the agent counts, this decides.
//!
//! A budget comes from `uji.budget{...}` in init.lua and `uji run`'s
//! `--max-*` flags (a flag wins over init.lua for its own limit), as the
//! `budget` config value. It counts what the session spends from when this
//! uji opened it. At 80 % of a limit the user is told once; at 100 % the
//! turn stops with a message that names the limit and how to raise it.

use std::time::Duration;

use serde::Deserialize;
use uji_protocol::frontend::BudgetLimit;

/// The config value that holds the budget.
pub const CONFIG_KEY: &str = "budget";

/// The share of a limit at which the user is warned.
const WARN_AT: f64 = 0.8;

/// The limits; `None` is no limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    /// Tokens read and written by the model (cache reads included).
    pub tokens: Option<u64>,
    /// Dollars, at the models' prices (a model without one cannot be run
    /// under a cost budget).
    pub cost: Option<f64>,
    /// Model requests: each answer the model gives, tool calls and all.
    pub turns: Option<u64>,
    /// Tool calls the model made.
    pub tool_calls: Option<u64>,
    /// Seconds since the session opened.
    pub wall: Option<u64>,
    /// Subagents the session may start (the `subagent` tool refuses a call
    /// that would start more).
    pub children: Option<u64>,
}

impl Budget {
    /// The budget in the config value `value` (`None` or unreadable: none).
    pub fn from_config(value: Option<serde_json::Value>) -> Budget {
        value
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default()
    }

    fn limits(&self) -> [(BudgetLimit, Option<u64>); 5] {
        [
            (BudgetLimit::Tokens, self.tokens),
            (
                BudgetLimit::Cost,
                self.cost.map(|dollars| (dollars * 1e6).round() as u64),
            ),
            (BudgetLimit::Turns, self.turns),
            (BudgetLimit::ToolCalls, self.tool_calls),
            (BudgetLimit::Wall, self.wall),
        ]
    }

    /// `limit` raised by `more` (in its own unit; millionths of a dollar
    /// for cost). A limit that is not set stays unset.
    pub fn raise(&mut self, limit: BudgetLimit, more: u64) {
        match limit {
            BudgetLimit::Tokens => self.tokens = self.tokens.map(|n| n.saturating_add(more)),
            BudgetLimit::Cost => self.cost = self.cost.map(|c| c + more as f64 / 1e6),
            BudgetLimit::Turns => self.turns = self.turns.map(|n| n.saturating_add(more)),
            BudgetLimit::ToolCalls => {
                self.tool_calls = self.tool_calls.map(|n| n.saturating_add(more))
            }
            BudgetLimit::Wall => self.wall = self.wall.map(|n| n.saturating_add(more)),
        }
    }

    /// The first limit `spent` has reached.
    pub fn reached(&self, spent: &Spent) -> Option<Reached> {
        self.limits().into_iter().find_map(|(limit, allowed)| {
            let allowed = allowed?;
            let used = spent.of(limit);
            (used >= allowed).then_some(Reached {
                limit,
                allowed,
                used,
            })
        })
    }

    /// The limits `spent` has used 80 % or more of (but not all).
    pub fn nearly(&self, spent: &Spent) -> Vec<Reached> {
        self.limits()
            .into_iter()
            .filter_map(|(limit, allowed)| {
                let allowed = allowed?;
                let used = spent.of(limit);
                let near = used as f64 >= allowed as f64 * WARN_AT && used < allowed;
                near.then_some(Reached {
                    limit,
                    allowed,
                    used,
                })
            })
            .collect()
    }
}

/// What the session spent so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Spent {
    pub tokens: u64,
    /// Millionths of a dollar.
    pub cost: u64,
    pub turns: u64,
    pub tool_calls: u64,
    pub wall: Duration,
    /// Subagents started.
    pub children: u64,
}

impl Spent {
    /// What is left of `budget` for a subagent's own budget.
    pub fn left_of(&self, budget: &Budget) -> crate::subagents::Remaining {
        crate::subagents::Remaining {
            turns: budget.turns.map(|n| n.saturating_sub(self.turns)),
            tokens: budget.tokens.map(|n| n.saturating_sub(self.tokens)),
            cost: budget
                .cost
                .map(|dollars| (dollars - self.cost as f64 / 1e6).max(0.0)),
            children: budget.children.map(|n| n.saturating_sub(self.children)),
            wall_ends: budget.wall.map(|seconds| {
                let left = Duration::from_secs(seconds).saturating_sub(self.wall);
                std::time::Instant::now() + left
            }),
        }
    }

    fn of(&self, limit: BudgetLimit) -> u64 {
        match limit {
            BudgetLimit::Tokens => self.tokens,
            BudgetLimit::Cost => self.cost,
            BudgetLimit::Turns => self.turns,
            BudgetLimit::ToolCalls => self.tool_calls,
            BudgetLimit::Wall => self.wall.as_secs(),
        }
    }
}

/// A limit and how much of it was used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reached {
    pub limit: BudgetLimit,
    pub allowed: u64,
    pub used: u64,
}

impl Reached {
    /// What it counts, in words.
    fn what(&self) -> String {
        match self.limit {
            BudgetLimit::Tokens => format!("{} of {} tokens", self.used, self.allowed),
            BudgetLimit::Cost => format!(
                "${:.4} of ${:.2}",
                self.used as f64 / 1e6,
                self.allowed as f64 / 1e6
            ),
            BudgetLimit::Turns => format!("{} of {} model requests", self.used, self.allowed),
            BudgetLimit::ToolCalls => format!("{} of {} tool calls", self.used, self.allowed),
            BudgetLimit::Wall => format!("{} of {} seconds", self.used, self.allowed),
        }
    }

    /// How to raise it.
    pub fn raise(&self) -> &'static str {
        match self.limit {
            BudgetLimit::Tokens => "--max-tokens, or uji.budget({ tokens = … })",
            BudgetLimit::Cost => "--max-cost, or uji.budget({ cost = … })",
            BudgetLimit::Turns => "--max-turns, or uji.budget({ turns = … })",
            BudgetLimit::ToolCalls => "--max-tool-calls, or uji.budget({ tool_calls = … })",
            BudgetLimit::Wall => "--max-wall, or uji.budget({ wall = \"…\" })",
        }
    }

    /// Why the turn stopped, and what to do.
    pub fn stopped(&self) -> String {
        format!(
            "stopped: this session's {} budget is spent ({}); raise it with {} and send a message to go on",
            self.limit.as_str(),
            self.what(),
            self.raise()
        )
    }

    /// The question a person answers at the limit.
    pub fn question(&self) -> String {
        format!(
            "This session's {} budget is spent ({}). Go on?",
            self.limit.as_str(),
            self.what()
        )
    }

    /// What "go on" allows: the limit once more.
    pub fn as_much_again(&self) -> String {
        match self.limit {
            BudgetLimit::Tokens => format!("{} more tokens", self.allowed),
            BudgetLimit::Cost => format!("${:.2} more", self.allowed as f64 / 1e6),
            BudgetLimit::Turns => format!("{} more model requests", self.allowed),
            BudgetLimit::ToolCalls => format!("{} more tool calls", self.allowed),
            BudgetLimit::Wall => format!("{} more seconds", self.allowed),
        }
    }

    /// The 80 % warning.
    pub fn warning(&self) -> String {
        format!(
            "budget: {} used of this session's {} budget; uji stops the turn at the limit (raise it with {})",
            self.what(),
            self.limit.as_str(),
            self.raise()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_limit_reached_stops_and_eighty_percent_warns() {
        let budget = Budget {
            turns: Some(3),
            tokens: Some(1000),
            ..Budget::default()
        };
        let mut spent = Spent {
            turns: 2,
            tokens: 850,
            ..Spent::default()
        };
        assert_eq!(budget.reached(&spent), None);
        let nearly: Vec<BudgetLimit> = budget.nearly(&spent).iter().map(|r| r.limit).collect();
        assert_eq!(nearly, [BudgetLimit::Tokens]);
        spent.turns = 3;
        let reached = budget.reached(&spent).unwrap();
        assert_eq!(reached.limit, BudgetLimit::Turns);
        assert!(reached.stopped().contains("3 of 3 model requests"));
        assert!(reached.stopped().contains("--max-turns"));
    }

    #[test]
    fn no_limits_never_stop_and_unknown_fields_are_no_budget() {
        let spent = Spent {
            tokens: u64::MAX,
            ..Spent::default()
        };
        assert_eq!(Budget::default().reached(&spent), None);
        let odd = Budget::from_config(Some(serde_json::json!({"tokenz": 5})));
        assert_eq!(odd, Budget::default());
        let wall = Budget::from_config(Some(serde_json::json!({"wall": 60})));
        assert_eq!(wall.wall, Some(60));
    }
}
