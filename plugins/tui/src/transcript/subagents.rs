//! The subagents a `subagent` call runs, as its block shows them: one row
//! each while they run (its agent, what it does now, its tokens), and, when
//! the block is expanded (ctrl+o), each one's transcript under its row: its
//! answers, its tool calls with their results' summaries, its errors.
//!
//! Built from the subagents' `uji run --json` lines (docs/headless.md);
//! each keeps its last [`MAX_STEPS`] rows.

use std::collections::VecDeque;

use ratatui::text::Line;
use serde_json::Value;
use uji_protocol::session::{MessageBody, StoredMessage};
use uji_protocol::wire::Usage;

use super::tool::{clean_bounded, cut, one_line};
use crate::theme::Theme;

/// Transcript rows kept per subagent; older ones are counted, not kept.
pub const MAX_STEPS: usize = 200;
/// Lines of one answer shown.
const ANSWER_LINES: usize = 12;

/// What a transcript row stands for (how it is styled).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The task it was given.
    Task,
    /// What its model said.
    Said,
    /// A tool call it made.
    Call,
    /// The summary of that call's result.
    Result,
    /// A failed call, or the turn's error.
    Failed,
}

#[derive(Debug, Clone, PartialEq)]
struct Step {
    kind: Kind,
    text: String,
}

/// One subagent of the call.
#[derive(Debug, Clone, PartialEq)]
struct Child {
    session: String,
    agent: String,
    doing: String,
    tokens: u64,
    steps: VecDeque<Step>,
    /// Rows dropped to keep [`MAX_STEPS`].
    dropped: usize,
}

impl Child {
    fn row(&self) -> String {
        let tokens = if self.tokens > 0 {
            format!(" · {} tokens", self.tokens)
        } else {
            String::new()
        };
        format!("{}: {}{tokens}", self.agent, self.doing)
    }

    fn push(&mut self, kind: Kind, text: &str) {
        if self.steps.len() == MAX_STEPS {
            self.steps.pop_front();
            self.dropped += 1;
        }
        self.steps.push_back(Step {
            kind,
            text: text.to_string(),
        });
    }

    /// The rows a saved message of its session adds.
    fn message(&mut self, message: &StoredMessage) {
        match &message.body {
            MessageBody::User {
                text,
                hidden: false,
                ..
            } => self.push(Kind::Task, &format!("› {}", one_line(text))),
            MessageBody::Assistant { text, .. } => {
                let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
                for line in lines.iter().take(ANSWER_LINES) {
                    self.push(Kind::Said, &clean_bounded(line));
                }
                if lines.len() > ANSWER_LINES {
                    let more = lines.len() - ANSWER_LINES;
                    self.push(Kind::Said, &format!("… {more} more lines"));
                }
            }
            MessageBody::Tool {
                name,
                subject,
                summary,
                content,
                is_error,
                ..
            } => {
                let subject = subject.as_deref().unwrap_or_default();
                self.push(Kind::Call, &one_line(&format!("● {name} {subject}")));
                let said = summary
                    .clone()
                    .filter(|s| !s.trim().is_empty())
                    .unwrap_or_else(|| content.lines().next().unwrap_or_default().to_string());
                let kind = if *is_error {
                    Kind::Failed
                } else {
                    Kind::Result
                };
                self.push(kind, &format!("  ⎿ {}", one_line(&said)));
            }
            MessageBody::Error { text } => self.push(Kind::Failed, &one_line(text)),
            _ => {}
        }
    }
}

/// The subagents of one call, in the order they started.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Subagents {
    children: Vec<Child>,
}

impl Subagents {
    pub fn is_empty(&self) -> bool {
        self.children.is_empty()
    }

    /// One line of subagent `session`'s stream.
    pub fn line(&mut self, session: &str, agent: &str, line: &Value) {
        let tokens = serde_json::from_value::<Usage>(line["usage"].clone())
            .map(|usage| usage.total())
            .unwrap_or(0);
        let doing = match line["type"].as_str() {
            Some("session") => Some("starting".to_string()),
            Some("tool") => Some(format!(
                "{} {}",
                line["name"].as_str().unwrap_or_default(),
                line["subject"].as_str().unwrap_or_default()
            )),
            Some("done") => Some(if line["error"].is_string() {
                "failed".to_string()
            } else {
                "done".to_string()
            }),
            Some("usage" | "message") => None,
            _ => return,
        };
        let child = self.child(session, agent);
        if let Some(doing) = doing {
            child.doing = doing;
        }
        if tokens > 0 {
            child.tokens = tokens;
        }
        if line["type"] == "message"
            && let Ok(message) = serde_json::from_value::<StoredMessage>(line["message"].clone())
        {
            child.message(&message);
        }
    }

    fn child(&mut self, session: &str, agent: &str) -> &mut Child {
        let at = match self.children.iter().position(|c| c.session == session) {
            Some(at) => at,
            None => {
                self.children.push(Child {
                    session: session.to_string(),
                    agent: agent.to_string(),
                    doing: "starting".to_string(),
                    tokens: 0,
                    steps: VecDeque::new(),
                    dropped: 0,
                });
                self.children.len() - 1
            }
        };
        &mut self.children[at]
    }

    /// One row per subagent.
    pub fn rows(&self, width: usize, theme: &Theme) -> Vec<Line<'static>> {
        self.children
            .iter()
            .map(|child| Line::styled(cut(&one_line(&child.row()), width), theme.dim))
            .collect()
    }

    /// Each subagent's row, then its transcript.
    pub fn transcripts(&self, width: usize, theme: &Theme) -> Vec<Line<'static>> {
        let mut rows = Vec::new();
        for child in &self.children {
            rows.push(Line::styled(cut(&one_line(&child.row()), width), theme.dim));
            let inner = width.saturating_sub(2);
            if child.dropped > 0 {
                let text = format!("  … {} earlier rows", child.dropped);
                rows.push(Line::styled(cut(&text, width), theme.dim));
            }
            for step in &child.steps {
                let style = match step.kind {
                    Kind::Task | Kind::Result => theme.dim,
                    Kind::Said | Kind::Call => theme.text,
                    Kind::Failed => theme.error,
                };
                let text = format!("  {}", cut(&step.text, inner));
                rows.push(Line::styled(text, style));
            }
        }
        rows
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    fn texts(rows: &[Line<'_>]) -> Vec<String> {
        rows.iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    /// A `message` line: the message's fields beside its `seq` and `time`.
    fn message(seq: u64, body: Value) -> Value {
        let mut message = body;
        message["seq"] = json!(seq);
        message["time"] = json!(0);
        json!({"type": "message", "message": message})
    }

    #[test]
    fn an_expanded_call_shows_each_subagents_task_calls_results_and_answer() {
        let theme = Theme::colored();
        let mut subagents = Subagents::default();
        let lines = [
            json!({"type": "session", "id": "s1", "schema": 1}),
            message(1, json!({"role": "user", "text": "Summarise notes.txt"})),
            json!({"type": "tool", "call_id": "k1", "name": "read_file", "subject": "notes.txt"}),
            message(
                2,
                json!({"role": "tool", "tool_call_id": "k1", "name": "read_file",
                    "content": "1| hello", "subject": "notes.txt", "summary": "1 line"}),
            ),
            message(
                3,
                json!({"role": "tool", "tool_call_id": "k2", "name": "run_command",
                    "content": "denied: no", "subject": "rm -rf x", "is_error": true}),
            ),
            message(
                4,
                // What a subagent's model says cannot drive the terminal.
                json!({"role": "assistant", "text": "The notes say \u{1b}[31mhello.\n\nThat is all."}),
            ),
            json!({"type": "done", "text": "The notes say hello.", "usage": {"input": 40, "output": 2}}),
        ];
        for line in &lines {
            subagents.line("s1", "general", line);
        }
        assert_eq!(
            texts(&subagents.transcripts(60, &theme)),
            [
                "general: done · 42 tokens",
                "  › Summarise notes.txt",
                "  ● read_file notes.txt",
                "    ⎿ 1 line",
                "  ● run_command rm -rf x",
                "    ⎿ denied: no",
                "  The notes say hello.",
                "  That is all.",
            ]
        );
        assert_eq!(
            texts(&subagents.rows(60, &theme)),
            ["general: done · 42 tokens"]
        );
        let failed = &subagents.transcripts(60, &theme)[5];
        assert_eq!(failed.style, theme.error);
    }

    #[test]
    fn a_long_transcript_keeps_its_last_rows_and_says_how_many_went() {
        let theme = Theme::colored();
        let mut subagents = Subagents::default();
        for seq in 0..(MAX_STEPS as u64 + 5) {
            subagents.line(
                "s1",
                "general",
                &message(
                    seq,
                    json!({"role": "assistant", "text": format!("step {seq}")}),
                ),
            );
        }
        let rows = texts(&subagents.transcripts(60, &theme));
        assert_eq!(rows.len(), MAX_STEPS + 2);
        assert_eq!(rows[1], "  … 5 earlier rows");
        assert_eq!(rows.last().unwrap(), &format!("  step {}", MAX_STEPS + 4));
    }
}
