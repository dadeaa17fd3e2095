//! The lines of `uji run --json` (docs/headless.md): written from a
//! session's events ([`encode`]: uji-cli's `--json` stream, and a parent
//! uji's subagents shown to its frontends) and read back as [`Line`]s (a
//! parent uji reading its subagents, or any program). Writer and reader
//! live together and are tested against each other, so they cannot drift
//! apart unnoticed.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::frontend::{BudgetLimit, Event};
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
    /// The turn's end, last.
    Done(Done),
    #[serde(other)]
    Other,
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

/// One line as written, its fields in the order the schema has always
/// printed them (a `Value` would sort them).
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Written<'a> {
    Session {
        id: &'a str,
        schema: u64,
    },
    Message {
        message: &'a StoredMessage,
    },
    Progress {
        tool: &'a str,
        line: &'a str,
    },
    /// A subagent's line, tagged with its session.
    Subagent {
        call_id: &'a str,
        session: &'a str,
        agent: &'a str,
        line: &'a Value,
    },
    /// A subagent's tool call starting (children only).
    Tool {
        call_id: &'a str,
        name: &'a str,
        subject: &'a str,
    },
    /// What a subagent used so far (children only).
    Usage {
        usage: &'a Usage,
        #[serde(skip_serializing_if = "Option::is_none")]
        cost: Option<f64>,
    },
    Notice {
        text: String,
    },
    Done {
        usage: &'a Usage,
        #[serde(flatten)]
        outcome: Outcome<'a>,
        /// The budget limit that stopped the turn.
        #[serde(skip_serializing_if = "Option::is_none")]
        budget: Option<&'static str>,
        /// The session's cost so far, in US dollars, where prices are known.
        #[serde(skip_serializing_if = "Option::is_none")]
        cost: Option<f64>,
    },
}

/// How a `done` line ends: `"error": …`, or `"text": …` (null when the
/// turn gave none).
#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
enum Outcome<'a> {
    Error(&'a str),
    Text(Option<&'a str>),
}

/// What a compaction says as a line (and in `uji run`'s text mode).
pub fn compacted_text(messages: u64) -> String {
    format!("compacted {messages} earlier messages")
}

/// A notice as one line: the plugin that sent it, then its text.
fn notice_text(source: Option<&str>, text: &str) -> String {
    match source {
        Some(source) => format!("{source}: {text}"),
        None => text.to_string(),
    }
}

impl<'a> Written<'a> {
    /// The line a frontend event maps to; most events have none. A
    /// subagent's stream (`child`) has a few more.
    fn of(event: &'a Event, child: bool) -> Option<Written<'a>> {
        Some(match event {
            Event::Subagent {
                call_id,
                session,
                agent,
                line,
            } => Written::Subagent {
                call_id,
                session,
                agent,
                line,
            },
            Event::ToolStarted {
                call_id,
                name,
                subject,
                ..
            } if child => Written::Tool {
                call_id,
                name,
                subject,
            },
            Event::Usage { session, cost, .. } if child => Written::Usage {
                usage: session,
                cost: *cost,
            },
            Event::SessionConfigured(configured) => Written::Session {
                id: &configured.id,
                schema: SCHEMA_VERSION,
            },
            Event::Message { message } => Written::Message { message },
            Event::Progress { tool, line, .. } => Written::Progress { tool, line },
            Event::Notice { text, source, .. } => Written::Notice {
                text: notice_text(source.as_deref(), text),
            },
            // A retry and a compaction are notices to a reader of lines.
            Event::StreamRetry { message, .. } => Written::Notice {
                text: message.clone(),
            },
            Event::Compacted { messages, .. } => Written::Notice {
                text: compacted_text(*messages),
            },
            Event::TurnFinished {
                text,
                error,
                interrupted,
                usage,
                budget,
                cost,
            } => Written::Done {
                usage,
                budget: budget.map(|limit| limit.as_str()),
                cost: *cost,
                outcome: match error {
                    Some(error) => Outcome::Error(error),
                    None if *interrupted => Outcome::Error(INTERRUPTED),
                    None => Outcome::Text(text.as_deref()),
                },
            },
            _ => return None,
        })
    }
}

/// The line (JSON, without its newline) `event` is written as; `None` for
/// an event the schema has no line for. A subagent's stream (`child`) also
/// has `tool` and `usage` lines.
pub fn encode(event: &Event, child: bool) -> Option<Result<String, serde_json::Error>> {
    Written::of(event, child).map(|line| serde_json::to_string(&line))
}

/// The line `event` is written as, as a JSON value (to embed in another
/// line, as a parent's `subagent` lines embed their subagent's).
pub fn encode_value(event: &Event, child: bool) -> Option<Result<Value, serde_json::Error>> {
    Written::of(event, child).map(|line| serde_json::to_value(&line))
}

/// The first line of a session's stream: its id and the schema version.
pub fn session_line(id: &str) -> Result<Value, serde_json::Error> {
    serde_json::to_value(&Written::Session {
        id,
        schema: SCHEMA_VERSION,
    })
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

    /// What the writer writes, read back with the reader's types: the two
    /// cannot drift apart.
    #[test]
    fn every_line_a_subagent_writes_is_read_back_by_the_readers_types() {
        let written = |event: &Event| {
            let json = encode(event, true).expect("a line").unwrap();
            Line::read(&json).expect("a line of the schema")
        };
        let usage = Usage {
            input: 7,
            output: 3,
            cache_read: 0,
            cache_write: 0,
        };
        let finished = |error: Option<&str>, interrupted: bool| Event::TurnFinished {
            text: Some("the answer".into()),
            error: error.map(str::to_string),
            interrupted,
            usage,
            budget: error.map(|_| BudgetLimit::Wall),
            cost: Some(0.25),
        };
        let Line::Done(done) = written(&finished(None, false)) else {
            panic!("a done line")
        };
        assert_eq!(done.text.as_deref(), Some("the answer"));
        assert_eq!(
            (done.usage, done.cost, done.error),
            (usage, Some(0.25), None)
        );
        let Line::Done(stopped) = written(&finished(Some("stopped: wall"), false)) else {
            panic!("a done line")
        };
        assert_eq!(stopped.budget, Some(BudgetLimit::Wall));
        assert!(!stopped.interrupted());
        let Line::Done(interrupted) = written(&finished(None, true)) else {
            panic!("a done line")
        };
        assert!(interrupted.interrupted());

        let tool = Event::ToolStarted {
            call_id: "c1".into(),
            name: "run_command".into(),
            subject: "make".into(),
            verb: None,
            decision: None,
            because: None,
        };
        assert_eq!(
            written(&tool),
            Line::Tool {
                call_id: "c1".into(),
                name: "run_command".into(),
                subject: "make".into()
            }
        );
        let session = session_line("s1").unwrap();
        assert_eq!(
            Line::deserialize(&session).ok(),
            Some(Line::Session { id: "s1".into() })
        );
        // As a value, a line reads back the same as from its text.
        let done = finished(None, false);
        let value = encode_value(&done, true).unwrap().unwrap();
        assert_eq!(Line::deserialize(&value).ok(), Some(written(&done)));
    }
}
