//! The lines of `uji run --json` (docs/headless.md) as a reader decodes
//! them: a parent uji reading its subagent, or any program. uji-cli writes
//! them; what it writes is checked against these types in its tests, so
//! the two cannot drift apart unnoticed.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::FileDiff;
use crate::frontend::BudgetLimit;
use crate::session::StoredMessage;
use crate::wire::Usage;

/// Version of the line schema, in the `session` line.
pub const SCHEMA_VERSION: u64 = 1;

/// What a `done` line's `error` says when the turn was interrupted.
pub const INTERRUPTED: &str = "interrupted";

/// One line. Types a reader does not need (`progress`, `notice`,
/// `subagent`) and any a later schema adds are [`Line::Other`].
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Line {
    /// The session's id, first.
    Session { id: String },
    /// A message as the session file keeps it.
    Message { message: Box<StoredMessage> },
    /// A subagent's tool call starting (a run with `--parent`).
    Tool {
        call_id: String,
        name: String,
        subject: String,
    },
    /// What a subagent used so far (a run with `--parent`).
    Usage {
        usage: Usage,
        #[serde(default)]
        cost: Option<f64>,
    },
    /// A question for the parent (a run with `--ask-parent`): the frontend
    /// protocol's `approval_request` event.
    ApprovalRequest(Box<Question>),
    /// The turn's end, last.
    Done(Done),
    #[serde(other)]
    Other,
}

/// An `approval_request` line's fields.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Question {
    pub call_id: String,
    #[serde(default)]
    pub tool: String,
    #[serde(default)]
    pub verb: String,
    #[serde(default)]
    pub subject: String,
    #[serde(default)]
    pub question: String,
    #[serde(default)]
    pub diff: Option<FileDiff>,
    #[serde(default)]
    pub args: Value,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
}

/// A `done` line.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Done {
    #[serde(default)]
    pub usage: Usage,
    /// The answer (absent or null when the turn gave none, or failed).
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub error: Option<String>,
    /// The budget limit that stopped the turn.
    #[serde(default)]
    pub budget: Option<BudgetLimit>,
    /// The session's cost in US dollars; absent where a price was unknown.
    #[serde(default)]
    pub cost: Option<f64>,
}

impl Done {
    /// The turn was interrupted (`"error": "interrupted"`).
    pub fn interrupted(&self) -> bool {
        self.error.as_deref() == Some(INTERRUPTED)
    }
}

impl Line {
    /// Reads one line; `None` for one that is not a line of this schema.
    pub fn read(text: &str) -> Option<Line> {
        serde_json::from_str(text).ok()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_done_line_reads_its_answer_usage_budget_and_cost() {
        let line = Line::read(
            r#"{"type":"done","usage":{"input":10,"output":5},"error":"stopped: …","budget":"wall","cost":0.5}"#,
        );
        let Some(Line::Done(done)) = line else {
            panic!("{line:?}")
        };
        assert_eq!(done.usage.input, 10);
        assert_eq!(done.budget, Some(BudgetLimit::Wall));
        assert_eq!(done.cost, Some(0.5));
        assert!(!done.interrupted());
        let Some(Line::Done(stopped)) =
            Line::read(r#"{"type":"done","usage":{},"error":"interrupted"}"#)
        else {
            panic!()
        };
        assert!(stopped.interrupted());
    }

    #[test]
    fn lines_a_reader_does_not_need_and_later_types_are_other() {
        for text in [
            r#"{"type":"progress","tool":"run_command","line":"x"}"#,
            r#"{"type":"notice","text":"hello"}"#,
            r#"{"type":"from_the_future","x":1}"#,
        ] {
            assert_eq!(Line::read(text), Some(Line::Other), "{text}");
        }
        assert_eq!(Line::read("not json"), None);
    }
}
