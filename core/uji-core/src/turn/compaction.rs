//! Keeping the conversation inside the model's context window: older
//! messages are summarised by the model into a checkpoint. The raw history
//! stays in the session file; only what is sent to the model changes.

use uji_protocol::session::{MessageBody, StoredMessage};
use uji_protocol::wire::Message;

use crate::turn::agent::{Agent, Streamed, wire_messages};
use crate::turn::interrupt::Interrupt;

/// Characters per token in the estimate (the usual rough rule).
const CHARS_PER_TOKEN: usize = 4;
/// Tokens counted for each image.
const IMAGE_TOKENS: usize = 1_600;
/// Most characters of history handed to the summariser (newest kept).
const MAX_SUMMARY_INPUT: usize = 200_000;

const SUMMARY_SYSTEM: &str = "You write checkpoint summaries of a coding agent's conversation so the work can continue in a fresh context. \
Write plain text with these sections: Goal; Constraints and preferences; Progress (done, in progress, blocked); Key decisions; Files touched; Next steps; Critical context (exact names, paths, commands, error messages that must not be lost). \
Be specific and complete but brief. Do not address the user.";

/// The rough token count of a request.
pub fn estimate_tokens(system: &str, messages: &[Message]) -> usize {
    let mut chars = system.chars().count();
    let mut images = 0;
    for message in messages {
        match message {
            Message::User { text, images: i } => {
                chars += text.chars().count();
                images += i.len();
            }
            Message::Assistant {
                text,
                reasoning,
                tool_calls,
                ..
            } => {
                chars +=
                    text.chars().count() + reasoning.as_deref().map_or(0, |r| r.chars().count());
                for call in tool_calls {
                    chars += call.name.len() + call.arguments.chars().count();
                }
            }
            Message::Tool {
                content, images: i, ..
            } => {
                chars += content.chars().count();
                images += i.len();
            }
        }
    }
    chars / CHARS_PER_TOKEN + images * IMAGE_TOKENS
}

/// Where to cut: messages up to the returned seq are summarised, the rest
/// (about `keep_tokens` worth) stay verbatim. The kept part never starts
/// with a tool result: the cut moves back to the assistant message that
/// made the call, so a call and its result stay together.
fn cut_point(messages: &[StoredMessage], keep_tokens: usize) -> Option<u64> {
    let mut kept = 0usize;
    let mut cut = messages.len();
    while cut > 0 {
        let size = match &messages[cut - 1].body {
            MessageBody::User { text, .. } | MessageBody::Error { text } => text.len(),
            MessageBody::Assistant {
                text, tool_calls, ..
            } => text.len() + tool_calls.iter().map(|c| c.arguments.len()).sum::<usize>(),
            MessageBody::Tool { content, .. } => content.len(),
            MessageBody::Compaction { summary, .. } => summary.len(),
            MessageBody::Shell { .. } => 0,
        } / CHARS_PER_TOKEN;
        if kept + size > keep_tokens {
            break;
        }
        kept += size;
        cut -= 1;
    }
    if cut == messages.len() {
        // Not even the newest message fits: keep only it (with the call
        // that produced it, when it is a tool result).
        cut = messages.len().saturating_sub(1);
    }
    while cut > 0 && cut < messages.len() && matches!(messages[cut].body, MessageBody::Tool { .. })
    {
        cut -= 1;
    }
    if cut == 0 || cut >= messages.len() {
        return None;
    }
    Some(messages[cut - 1].seq)
}

fn transcript(messages: &[Message]) -> String {
    let mut parts: Vec<String> = messages
        .iter()
        .map(|m| match m {
            Message::User { text, .. } => format!("USER: {text}"),
            Message::Assistant {
                text, tool_calls, ..
            } => {
                let calls: Vec<String> = tool_calls
                    .iter()
                    .map(|c| format!("{}({})", c.name, c.arguments))
                    .collect();
                format!(
                    "ASSISTANT: {text}{}",
                    if calls.is_empty() {
                        String::new()
                    } else {
                        format!("\nCALLS: {}", calls.join("; "))
                    }
                )
            }
            Message::Tool { name, content, .. } => format!("RESULT of {name}: {content}"),
        })
        .collect();
    // Keep the newest part when over the limit.
    let mut total: usize = parts.iter().map(String::len).sum();
    while total > MAX_SUMMARY_INPUT && parts.len() > 1 {
        total -= parts.remove(0).len();
    }
    let mut text = parts.join("\n\n");
    if text.len() > MAX_SUMMARY_INPUT {
        let mut start = text.len() - MAX_SUMMARY_INPUT;
        while !text.is_char_boundary(start) {
            start += 1;
        }
        text = text[start..].to_string();
    }
    text
}

/// Summarises older messages now. Returns how many were folded.
pub async fn compact(
    agent: &mut Agent,
    keep_tokens: usize,
    interrupt: &mut Interrupt,
) -> Result<usize, String> {
    let messages = agent.messages().to_vec();
    let Some(through) = cut_point(&messages, keep_tokens) else {
        return Err("nothing to compact".to_string());
    };
    let folded: Vec<StoredMessage> = messages
        .iter()
        .filter(|m| m.seq <= through)
        .cloned()
        .collect();
    let previous = wire_messages(&folded);
    let request_text = format!(
        "Summarise this conversation so far into the checkpoint described in your instructions.\n\n{}",
        transcript(&previous)
    );
    let build = |agent: &Agent| {
        agent.request(
            SUMMARY_SYSTEM.to_string(),
            vec![Message::User {
                text: request_text.clone(),
                images: Vec::new(),
            }],
            Vec::new(),
        )
    };
    let answer = match agent.stream_with_retries(build, interrupt, false).await? {
        Streamed::Answer(answer) => answer,
        Streamed::Interrupted { .. } => return Err("interrupted".to_string()),
    };
    agent.add_usage(&answer.usage);
    if answer.text.trim().is_empty() {
        return Err("the model returned an empty summary".to_string());
    }
    let count = folded
        .iter()
        .filter(|m| !matches!(m.body, MessageBody::Compaction { .. }))
        .count();
    agent.save(MessageBody::Compaction {
        summary: answer.text,
        through,
    });
    agent.emit(uji_protocol::frontend::Event::Compacted {
        messages: count as u64,
        through,
    });
    Ok(count)
}

/// Compacts before a model call when the request would come near the
/// model's context window.
pub async fn compact_if_needed(
    agent: &mut Agent,
    system: &str,
    interrupt: &mut Interrupt,
) -> Result<(), String> {
    let model = &agent.model()?.model;
    let window = model.context_window as usize;
    let reserve = (model.max_output.unwrap_or(20_000) as usize).min(window / 4);
    let messages = wire_messages(agent.messages());
    let estimate = estimate_tokens(system, &messages);
    let limit = window.saturating_sub(reserve);
    if estimate < limit {
        tracing::debug!("context ~{estimate} tokens, compaction starts at {limit}");
        return Ok(());
    }
    let keep = 20_000usize.min(limit / 4);
    tracing::info!("context ~{estimate} tokens reaches {limit}: compacting, keeping ~{keep}");
    let count = compact(agent, keep, interrupt).await?;
    agent.notify_plugins(
        "session_compacted",
        serde_json::json!({"count": count, "session": agent.id()}),
    );
    // The `compacted` event `compact` sent is the one word on it.
    tracing::info!("compacted {count} earlier messages");
    Ok(())
}
