//! `session.facts` and `session.messages`: what a plugin reads of the
//! running session (Lua's `uji.session.usage/context/queue/state/elapsed`
//! and `uji.session.messages`). Read from the snapshot the agent publishes,
//! the message queue and the saved session, never from the agent itself
//! (it may be busy with a turn).

use std::sync::Arc;

use uji_protocol::services::{
    ContextFacts, MAX_MESSAGE_FACT_BYTES, MAX_MESSAGE_FACTS, MessageFact, STATE_IDLE,
    STATE_WORKING, SessionFacts, SessionFactsRequest, SessionMessagesRequest, UsageFacts,
};
use uji_protocol::session::{MessageBody, StoredMessage};

use super::Shared;
use crate::session::store::StoreError;

/// `session.facts`: state, elapsed time, queue, context and usage.
pub(super) fn facts(shared: &Arc<Shared>, _: SessionFactsRequest) -> Result<SessionFacts, String> {
    let snapshot = shared.snapshot.borrow().clone();
    // Working while a turn runs, as the agent published it: the worker
    // stays busy a moment after a turn ends (its `turn_finished` handlers
    // run then), and those handlers must read the turn as over, elapsed
    // and state alike. A compaction asked for with /compact is no turn.
    let working = shared.busy() && snapshot.turn_started.is_some();
    let elapsed_secs = snapshot
        .turn_started
        .filter(|_| working)
        .map(|started| started.elapsed().as_secs_f64());
    Ok(SessionFacts {
        state: if working { STATE_WORKING } else { STATE_IDLE }.to_string(),
        elapsed_secs,
        queue: shared.queue.texts(),
        context: ContextFacts {
            used: snapshot.context_used,
            window: snapshot.context_window,
        },
        usage: UsageFacts {
            cost: snapshot.cost.map(|micros| micros as f64 / 1e6),
            ..UsageFacts::new(snapshot.usage, snapshot.last_usage, snapshot.requests)
        },
    })
}

/// `session.messages`: the running session's saved messages, the newest
/// [`MAX_MESSAGE_FACTS`], each text cut at [`MAX_MESSAGE_FACT_BYTES`].
pub(super) fn messages(
    shared: &Arc<Shared>,
    _: SessionMessagesRequest,
) -> Result<Vec<MessageFact>, String> {
    let id = shared.snapshot.borrow().id.clone();
    match shared.sessions.messages(&id) {
        Ok(messages) => Ok(message_facts(&messages)),
        // Nothing saved yet.
        Err(StoreError::NotFound(_)) => Ok(Vec::new()),
        Err(e) => Err(format!(
            "could not read the messages of session {id}: {e}; its file may be damaged (`uji list` shows the saved sessions)"
        )),
    }
}

/// The newest [`MAX_MESSAGE_FACTS`] of `messages` as facts, oldest first.
pub(super) fn message_facts(messages: &[StoredMessage]) -> Vec<MessageFact> {
    let from = messages.len().saturating_sub(MAX_MESSAGE_FACTS);
    messages[from..].iter().map(|m| fact(&m.body)).collect()
}

fn fact(body: &MessageBody) -> MessageFact {
    let (kind, text, name) = match body {
        MessageBody::User {
            text, hidden: true, ..
        } => ("context", cut(text), None),
        MessageBody::User { text, .. } => ("user", cut(text), None),
        MessageBody::Assistant { text, .. } => ("assistant", cut(text), None),
        MessageBody::Tool { name, content, .. } => ("tool", cut(content), Some(name.clone())),
        MessageBody::Shell {
            command, output, ..
        } => {
            let text = if output.is_empty() {
                cut(command)
            } else {
                cut(&format!("{command}\n{output}"))
            };
            ("shell", text, None)
        }
        MessageBody::Error { text } => ("error", cut(text), None),
        MessageBody::Compaction { summary, .. } => ("compaction", cut(summary), None),
    };
    MessageFact {
        r#type: kind.to_string(),
        text,
        name,
    }
}

/// `text`, cut at [`MAX_MESSAGE_FACT_BYTES`] on a character boundary.
fn cut(text: &str) -> String {
    if text.len() <= MAX_MESSAGE_FACT_BYTES {
        return text.to_string();
    }
    let mut end = MAX_MESSAGE_FACT_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(seq: u64, body: MessageBody) -> StoredMessage {
        StoredMessage { seq, time: 0, body }
    }

    fn user(text: &str, hidden: bool) -> MessageBody {
        MessageBody::User {
            text: text.to_string(),
            images: Vec::new(),
            hidden,
        }
    }

    #[test]
    fn each_kind_of_message_has_its_type_and_a_tool_its_name() {
        let messages = vec![
            stored(1, user("fix it", false)),
            stored(2, user("the branch is main", true)),
            stored(
                3,
                MessageBody::Assistant {
                    text: "reading".to_string(),
                    reasoning: Some("think".to_string()),
                    tool_calls: Vec::new(),
                    usage: None,
                    model: None,
                    effort: None,
                    replay: None,
                },
            ),
            stored(
                4,
                MessageBody::Tool {
                    tool_call_id: "c1".to_string(),
                    name: "read_file".to_string(),
                    content: "fn main() {}".to_string(),
                    is_error: false,
                    images: Vec::new(),
                    summary: None,
                    diff: None,
                    subject: None,
                    error_kind: None,
                },
            ),
            stored(
                5,
                MessageBody::Shell {
                    command: "ls".to_string(),
                    output: "a\nb".to_string(),
                    exit_code: Some(0),
                },
            ),
            stored(
                6,
                MessageBody::Error {
                    text: "interrupted".to_string(),
                },
            ),
            stored(
                7,
                MessageBody::Compaction {
                    summary: "did things".to_string(),
                    through: 6,
                },
            ),
        ];
        let facts = message_facts(&messages);
        let seen: Vec<(&str, &str, Option<&str>)> = facts
            .iter()
            .map(|f| (f.r#type.as_str(), f.text.as_str(), f.name.as_deref()))
            .collect();
        assert_eq!(
            seen,
            [
                ("user", "fix it", None),
                ("context", "the branch is main", None),
                ("assistant", "reading", None),
                ("tool", "fn main() {}", Some("read_file")),
                ("shell", "ls\na\nb", None),
                ("error", "interrupted", None),
                ("compaction", "did things", None),
            ]
        );
        let json = serde_json::to_value(&facts[3]).unwrap_or_default();
        assert_eq!(
            json,
            serde_json::json!({"type": "tool", "text": "fn main() {}", "name": "read_file"})
        );
    }

    #[test]
    fn only_the_newest_thousand_messages_are_told_and_long_texts_are_cut_whole_characters() {
        let messages: Vec<StoredMessage> = (1..=1_005)
            .map(|seq| stored(seq, user(&format!("message {seq}"), false)))
            .collect();
        let facts = message_facts(&messages);
        assert_eq!(facts.len(), MAX_MESSAGE_FACTS);
        assert_eq!(facts[0].text, "message 6");
        assert_eq!(facts[999].text, "message 1005");
        // "é" is two bytes: a cut at an odd byte keeps the character whole.
        let long = format!("a{}", "é".repeat(MAX_MESSAGE_FACT_BYTES));
        let facts = message_facts(&[stored(1, user(&long, false))]);
        let text = &facts[0].text;
        assert_eq!(text.len(), MAX_MESSAGE_FACT_BYTES - 1);
        assert!(text.ends_with('é') && long.starts_with(text.as_str()));
    }
}
