//! The turn loop: send the conversation to the model, run the tool calls it
//! makes through the gate, send the results back, until it answers without
//! tool calls. Every message is saved as it happens.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};
use uji_host::{ProgressSink, Registry, WireEvents};
use uji_protocol::session::{Event, MessageBody, StoredMessage};
use uji_protocol::wire::{
    Answer, Auth, Message, ProviderInfo, ToolCallRequest, Usage, WireRequest, WireTool,
};
use uji_protocol::{Image, ToolOutput};

use crate::gate::{Approver, Gate, ToolRequest};
use crate::interrupt::Interrupt;
use crate::providers::Resolved;
use crate::store::{SessionFile, new_call_id};
use crate::{compaction, prompt, retry};

/// Receives everything a frontend shows.
pub type EventSink = Arc<dyn Fn(Event) + Send + Sync>;

/// What a turn is run with.
#[derive(Clone)]
pub struct TurnSettings {
    pub model: Resolved,
    /// Offer only these tools (`--tools`); all when `None`.
    pub tools: Option<Vec<String>>,
    /// Added to the system prompt after a blank line (`--append-prompt`).
    pub append_prompt: Option<String>,
    /// Reasoning effort (`off`, `minimal`, `low`, `medium`, `high`,
    /// `xhigh`, `max`); the wire maps it to its API.
    pub effort: Option<String>,
    /// Seconds without stream data before a request counts as stalled.
    pub idle_timeout: Option<u64>,
    pub cwd: PathBuf,
    /// API keys to scrub from everything saved or shown (a tool that prints
    /// the environment must not put a key in the transcript).
    pub secrets: Vec<String>,
}

/// What replaces a key in saved and shown text.
pub const REDACTED: &str = "<redacted>";

/// Replaces every secret (8 characters or more) in `text`.
pub fn redact(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_string();
    for secret in secrets.iter().filter(|s| s.len() >= 8) {
        if out.contains(secret.as_str()) {
            out = out.replace(secret.as_str(), REDACTED);
        }
    }
    out
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnOutcome {
    /// The final answer.
    pub text: Option<String>,
    /// Why the turn failed.
    pub error: Option<String>,
    pub interrupted: bool,
    /// Tokens this turn used.
    pub usage: Usage,
}

/// One session's agent.
pub struct Agent {
    pub gate: Gate,
    pub registry: Registry,
    pub session: SessionFile,
    pub settings: TurnSettings,
    pub approver: Arc<dyn Approver>,
    pub events: EventSink,
    /// Tokens the whole session used.
    pub usage: Usage,
    /// Messages the user sent while this turn runs.
    pub steering: Steering,
}

/// Messages typed while a turn runs. The turn takes one before each model
/// call (the user steers the work in progress) and keeps going while any
/// are left, instead of stopping.
#[derive(Clone, Default)]
pub struct Steering(Arc<std::sync::Mutex<std::collections::VecDeque<QueuedMessage>>>);

/// A user message waiting for the turn: its text and images.
type QueuedMessage = (String, Vec<Image>);

impl Steering {
    pub fn push(&self, text: String, images: Vec<Image>) {
        if let Ok(mut queue) = self.0.lock() {
            queue.push_back((text, images));
        }
    }

    pub fn pop(&self) -> Option<(String, Vec<Image>)> {
        self.0.lock().ok().and_then(|mut queue| queue.pop_front())
    }

    pub fn is_empty(&self) -> bool {
        self.0.lock().map(|queue| queue.is_empty()).unwrap_or(true)
    }
}

const INTERRUPTED: &str = "interrupted";
const BEFORE_RUN: &str = "interrupted by the user before this tool ran";

/// What the saved answers of a session used (a resumed session starts its
/// count from here).
pub fn saved_usage(messages: &[StoredMessage]) -> Usage {
    let mut total = Usage::default();
    for message in messages {
        if let MessageBody::Assistant {
            usage: Some(usage), ..
        } = &message.body
        {
            add_usage(&mut total, usage);
        }
    }
    total
}

pub(crate) fn add_usage(total: &mut Usage, more: &Usage) {
    total.input += more.input;
    total.output += more.output;
    total.cache_read += more.cache_read;
    total.cache_write += more.cache_write;
}

struct StreamToEvents(EventSink);

impl WireEvents for StreamToEvents {
    fn text(&self, delta: &str) {
        (self.0)(Event::Delta {
            text: delta.to_string(),
        });
    }

    fn reasoning(&self, delta: &str) {
        (self.0)(Event::Reasoning {
            text: delta.to_string(),
        });
    }
}

/// How the model sees the saved history: errors are left out, and the
/// newest compaction replaces everything it summarised.
pub fn wire_messages(messages: &[StoredMessage]) -> Vec<Message> {
    let compaction = messages.iter().rev().find_map(|m| match &m.body {
        MessageBody::Compaction { summary, through } => Some((summary.clone(), *through)),
        _ => None,
    });
    let mut out = Vec::new();
    let mut from_seq = 0;
    if let Some((summary, through)) = compaction {
        out.push(Message::User {
            text: format!("Summary of the earlier part of this conversation:\n{summary}"),
            images: Vec::new(),
        });
        from_seq = through;
    }
    for message in messages.iter().filter(|m| m.seq > from_seq) {
        match &message.body {
            MessageBody::User { text, images, .. } => out.push(Message::User {
                text: text.clone(),
                images: images.clone(),
            }),
            MessageBody::Assistant {
                text,
                reasoning,
                tool_calls,
                replay,
                ..
            } => out.push(Message::Assistant {
                text: text.clone(),
                reasoning: reasoning.clone(),
                tool_calls: tool_calls.clone(),
                replay: replay.clone(),
            }),
            MessageBody::Tool {
                tool_call_id,
                name,
                content,
                images,
                ..
            } => out.push(Message::Tool {
                tool_call_id: tool_call_id.clone(),
                name: name.clone(),
                content: content.clone(),
                images: images.clone(),
            }),
            MessageBody::Error { .. } | MessageBody::Compaction { .. } => {}
        }
    }
    out
}

/// Decodes a model's tool-call arguments, or says what is wrong with them.
pub fn decode_arguments(raw: &str) -> Result<Value, String> {
    if raw.trim().is_empty() {
        return Ok(Value::Object(Default::default()));
    }
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::Object(map)) => Ok(Value::Object(map)),
        Ok(other) => {
            let kind = match other {
                Value::Array(_) => "an array",
                Value::Null => "null",
                Value::String(_) => "a string",
                Value::Number(_) => "a number",
                Value::Bool(_) => "a boolean",
                Value::Object(_) => "an object",
            };
            Err(format!(
                "error: arguments must be a JSON object, got {kind}. Send a single object matching the tool schema."
            ))
        }
        Err(e) => {
            let received: String = raw.chars().take(500).collect();
            Err(format!(
                "error: arguments are not valid JSON ({e}). Send a single JSON object matching the tool schema, with no markdown fences. Received: {received}"
            ))
        }
    }
}

impl Agent {
    fn emit(&self, event: Event) {
        (self.events)(event);
    }

    fn notice(&self, text: String) {
        let text = redact(&text, &self.settings.secrets);
        tracing::info!("notice: {text}");
        self.emit(Event::Notice { text });
    }

    fn redact_body(&self, body: MessageBody) -> MessageBody {
        let secrets = &self.settings.secrets;
        if secrets.is_empty() {
            return body;
        }
        let r = |text: String| redact(&text, secrets);
        match body {
            MessageBody::User {
                text,
                images,
                hidden,
            } => MessageBody::User {
                text: r(text),
                images,
                hidden,
            },
            MessageBody::Assistant {
                text,
                reasoning,
                tool_calls,
                usage,
                model,
                replay,
            } => MessageBody::Assistant {
                text: r(text),
                reasoning: reasoning.map(r),
                tool_calls: tool_calls
                    .into_iter()
                    .map(|mut call| {
                        call.arguments = redact(&call.arguments, secrets);
                        call
                    })
                    .collect(),
                usage,
                model,
                replay,
            },
            MessageBody::Tool {
                tool_call_id,
                name,
                content,
                is_error,
                images,
                summary,
                diff,
                subject,
            } => MessageBody::Tool {
                tool_call_id,
                name,
                content: r(content),
                is_error,
                images,
                summary,
                diff,
                subject: subject.map(r),
            },
            MessageBody::Error { text } => MessageBody::Error { text: r(text) },
            MessageBody::Compaction { summary, through } => MessageBody::Compaction {
                summary: r(summary),
                through,
            },
        }
    }

    /// Saves a message and tells the frontend and `message_appended`
    /// handlers. A message that cannot be saved is still shown, with a
    /// notice: losing the disk must not lose the turn.
    pub fn save(&mut self, body: MessageBody) -> StoredMessage {
        let body = self.redact_body(body);
        let (message, written) = self.session.append(body);
        if let Err(e) = written {
            self.notice(format!(
                "could not save to {}: {e}; this message is not in the saved session",
                self.session.path().display()
            ));
        }
        let (kind, text) = match &message.body {
            MessageBody::User { text, .. } => ("user", text.clone()),
            MessageBody::Assistant { text, .. } => ("assistant", text.clone()),
            MessageBody::Tool { content, .. } => ("tool", content.clone()),
            MessageBody::Error { text } => ("error", text.clone()),
            MessageBody::Compaction { summary, .. } => ("compaction", summary.clone()),
        };
        self.emit(Event::Message {
            message: message.clone(),
        });
        if !self.registry.hooks("message_appended").is_empty() {
            self.registry
                .emit("message_appended", json!({"type": kind, "text": text}));
        }
        message
    }

    fn tools(&self) -> Vec<WireTool> {
        self.registry
            .tools()
            .iter()
            .map(|t| t.spec())
            .filter(|spec| {
                self.settings
                    .tools
                    .as_ref()
                    .is_none_or(|only| only.iter().any(|n| n == &spec.name))
            })
            .map(|spec| WireTool {
                name: spec.name.clone(),
                description: spec.description.clone(),
                parameters: spec.parameters.clone(),
            })
            .collect()
    }

    /// The system prompt after `before_turn` handlers (each may replace it).
    fn system_prompt(&self) -> String {
        let mut system =
            prompt::system_prompt(&self.settings.cwd, self.settings.append_prompt.as_deref());
        for hook in self.registry.hooks("before_turn") {
            let payload =
                json!({"event": "before_turn", "system": system, "session": self.session.id()});
            match hook.call(&payload) {
                Ok(Value::String(replacement)) => system = replacement,
                Ok(_) => {}
                Err(e) => self.notice(format!("before_turn handler failed: {e}")),
            }
        }
        system
    }

    pub(crate) fn request(
        &self,
        system: String,
        messages: Vec<Message>,
        tools: Vec<WireTool>,
    ) -> WireRequest {
        let model = &self.settings.model;
        WireRequest {
            model: model.model.id.clone(),
            system,
            messages,
            tools,
            effort: self.settings.effort.clone(),
            max_output: model.model.max_output,
            cache: Some("short".to_string()),
            session: Some(self.session.id().to_string()),
            provider: ProviderInfo {
                id: model.provider.id.clone(),
                base_url: model.base_url.clone(),
            },
            auth: Auth {
                key: model.key.clone(),
            },
            idle_timeout: self.settings.idle_timeout,
        }
    }

    /// Streams one request, retrying failures worth retrying. `Ok(None)`
    /// means the user interrupted.
    pub(crate) async fn stream_with_retries(
        &self,
        request: &WireRequest,
        interrupt: &mut Interrupt,
        show: bool,
    ) -> Result<Option<Answer>, String> {
        let wire_name = &self.settings.model.provider.wire;
        let mut attempt = 0;
        loop {
            let wire = self.registry.wire(wire_name).ok_or_else(|| {
                format!(
                    "the {wire_name:?} wire that provider {} needs is not loaded; `uji plugins` shows what loaded and what failed",
                    self.settings.model.provider.id
                )
            })?;
            let sink: Arc<dyn WireEvents> = if show {
                Arc::new(StreamToEvents(Arc::clone(&self.events)))
            } else {
                Arc::new(StreamToEvents(Arc::new(|_| {})))
            };
            let mut running = wire.stream(request, sink).map_err(|e| e.to_string())?;
            let result = tokio::select! {
                result = running.finished() => result,
                () = interrupt.wait() => {
                    running.cancel();
                    return Ok(None);
                }
            };
            let error = match result {
                Ok(answer) => return Ok(Some(answer)),
                Err(error) => error,
            };
            if !retry::retryable(&error) || attempt >= retry::MAX_RETRIES {
                return Err(error.to_string());
            }
            attempt += 1;
            let wait = retry::delay(&error, attempt, crate::store::now_ms() ^ u64::from(attempt));
            self.notice(retry::notice(&error, wait, attempt));
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = interrupt.wait() => return Ok(None),
            }
        }
    }

    fn progress_sink(&self, call_id: &str, tool: &str) -> ProgressSink {
        let events = Arc::clone(&self.events);
        let (call_id, tool) = (call_id.to_string(), tool.to_string());
        let secrets = self.settings.secrets.clone();
        Arc::new(move |line: &str| {
            events(Event::Progress {
                call_id: call_id.clone(),
                tool: tool.clone(),
                line: redact(line, &secrets),
            })
        })
    }

    fn tool_message(
        call: &ToolCallRequest,
        output: ToolOutput,
        subject: Option<String>,
    ) -> MessageBody {
        MessageBody::Tool {
            tool_call_id: call.id.clone(),
            name: call.name.clone(),
            content: output.text,
            is_error: output.is_error,
            images: output.images,
            summary: output.summary,
            diff: output.diff,
            subject,
        }
    }

    fn finish(&mut self, outcome: TurnOutcome) -> TurnOutcome {
        let _ = self.session.sync();
        self.registry.emit(
            "turn_finished",
            json!({"text": outcome.text, "error": outcome.error, "interrupted": outcome.interrupted}),
        );
        self.emit(Event::TurnFinished {
            text: outcome.text.clone(),
            error: outcome.error.clone(),
            interrupted: outcome.interrupted,
            usage: outcome.usage,
        });
        outcome
    }

    fn failed(&mut self, error: String, usage: Usage) -> TurnOutcome {
        let error = redact(&error, &self.settings.secrets);
        self.save(MessageBody::Error {
            text: error.clone(),
        });
        self.finish(TurnOutcome {
            text: None,
            error: Some(error),
            interrupted: false,
            usage,
        })
    }

    fn interrupted(&mut self, usage: Usage) -> TurnOutcome {
        self.save(MessageBody::Error {
            text: INTERRUPTED.to_string(),
        });
        self.finish(TurnOutcome {
            text: None,
            error: None,
            interrupted: true,
            usage,
        })
    }

    /// Runs one turn for a user message.
    pub async fn turn(
        &mut self,
        text: String,
        images: Vec<Image>,
        interrupt: &mut Interrupt,
    ) -> TurnOutcome {
        self.save(MessageBody::User {
            text,
            images,
            hidden: false,
        });
        let mut usage = Usage::default();
        let mut continued = 0u64;
        loop {
            if interrupt.is_set() {
                return self.interrupted(usage);
            }
            if let Some((text, images)) = self.steering.pop() {
                self.save(MessageBody::User {
                    text,
                    images,
                    hidden: false,
                });
            }
            let system = self.system_prompt();
            let tools = self.tools();
            if let Err(e) = compaction::compact_if_needed(self, &system, interrupt).await
                && !interrupt.is_set()
            {
                self.notice(format!("could not compact; sending the full context ({e})"));
            }
            if interrupt.is_set() {
                return self.interrupted(usage);
            }
            let request = self.request(system, wire_messages(&self.session.messages), tools);
            let answer = match self.stream_with_retries(&request, interrupt, true).await {
                Ok(Some(answer)) => answer,
                Ok(None) => return self.interrupted(usage),
                Err(error) => return self.failed(error, usage),
            };
            drop(request);
            add_usage(&mut usage, &answer.usage);
            add_usage(&mut self.usage, &answer.usage);

            let mut tool_calls = answer.tool_calls;
            for call in &mut tool_calls {
                // Blank ids, and ids no API would take back, get a fresh one.
                if call.id.trim().is_empty() || call.id.chars().any(char::is_control) {
                    call.id = new_call_id();
                }
            }
            let final_text = answer.text.clone();
            self.save(MessageBody::Assistant {
                text: answer.text,
                reasoning: answer.reasoning,
                tool_calls: tool_calls.clone(),
                usage: Some(answer.usage),
                model: Some(self.settings.model.label()),
                replay: answer.replay,
            });

            if tool_calls.is_empty() {
                if !self.steering.is_empty() {
                    // The user said more while the model answered: go on.
                    continue;
                }
                if let Some(nudge) = self.before_stop(&final_text, continued) {
                    continued += 1;
                    self.save(MessageBody::User {
                        text: nudge,
                        images: Vec::new(),
                        hidden: true,
                    });
                    continue;
                }
                return self.finish(TurnOutcome {
                    text: Some(final_text),
                    error: None,
                    interrupted: false,
                    usage,
                });
            }

            for (index, call) in tool_calls.iter().enumerate() {
                if interrupt.is_set() {
                    for rest in &tool_calls[index..] {
                        self.save(Self::tool_message(
                            rest,
                            ToolOutput::error(BEFORE_RUN),
                            None,
                        ));
                    }
                    return self.interrupted(usage);
                }
                // A tool that is not offered (unknown, or left out by
                // --tools) is refused as unknown, naming the offered ones,
                // before its arguments are looked at.
                let offered = self
                    .settings
                    .tools
                    .as_ref()
                    .is_none_or(|only| only.contains(&call.name));
                if !offered || self.registry.tool(&call.name).is_none() {
                    let names: Vec<String> = self.tools().into_iter().map(|t| t.name).collect();
                    let output = ToolOutput::error(format!(
                        "unknown tool `{}`. Available tools: {}.",
                        call.name,
                        names.join(", ")
                    ));
                    self.save(Self::tool_message(call, output, None));
                    continue;
                }
                let args = match decode_arguments(&call.arguments) {
                    Ok(args) => args,
                    Err(message) => {
                        let output = ToolOutput {
                            text: message,
                            is_error: true,
                            ..Default::default()
                        };
                        self.save(Self::tool_message(call, output, None));
                        continue;
                    }
                };
                let started = |subject: &str, verb: Option<&str>| {
                    self.emit(Event::ToolStarted {
                        call_id: call.id.clone(),
                        name: call.name.clone(),
                        subject: subject.to_string(),
                        verb: verb.map(str::to_string),
                    });
                    if !self.registry.hooks("tool_started").is_empty() {
                        self.registry.emit(
                            "tool_started",
                            json!({"name": call.name, "call_id": call.id}),
                        );
                    }
                };
                let request = ToolRequest {
                    call_id: call.id.clone(),
                    name: call.name.clone(),
                    args,
                    cwd: self.settings.cwd.clone(),
                };
                let progress = self.progress_sink(&call.id, &call.name);
                let result = self
                    .gate
                    .run_observed(
                        request,
                        self.approver.as_ref(),
                        progress,
                        interrupt,
                        &started,
                    )
                    .await;
                let subject = (!result.subject.is_empty()).then(|| result.subject.clone());
                let interrupted = result.interrupted;
                self.save(Self::tool_message(call, result.output, subject));
                if interrupted {
                    for rest in &tool_calls[index + 1..] {
                        self.save(Self::tool_message(
                            rest,
                            ToolOutput::error(BEFORE_RUN),
                            None,
                        ));
                    }
                    return self.interrupted(usage);
                }
            }
        }
    }

    /// The first `before_stop` handler that returns a string sends the
    /// model back to work with it.
    fn before_stop(&self, text: &str, continued: u64) -> Option<String> {
        for hook in self.registry.hooks("before_stop") {
            let payload = json!({"event": "before_stop", "text": text, "continued": continued});
            match hook.call(&payload) {
                Ok(Value::String(nudge)) if !nudge.trim().is_empty() => return Some(nudge),
                Ok(_) => {}
                Err(e) => self.notice(format!("before_stop handler failed: {e}")),
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argument_decoding_errors_tell_the_model_what_to_send() {
        assert_eq!(decode_arguments("  ").unwrap(), json!({}));
        assert_eq!(decode_arguments(r#"{"a":1}"#).unwrap(), json!({"a": 1}));
        let err = decode_arguments("[1]").unwrap_err();
        assert_eq!(
            err,
            "error: arguments must be a JSON object, got an array. Send a single object matching the tool schema."
        );
        let err = decode_arguments("```json\n{\"a\":1}\n```").unwrap_err();
        assert!(
            err.starts_with("error: arguments are not valid JSON ("),
            "{err}"
        );
        assert!(err.ends_with("Received: ```json\n{\"a\":1}\n```"), "{err}");
    }

    #[test]
    fn compaction_replaces_what_it_summarised() {
        let msg = |seq, body| StoredMessage { seq, time: 0, body };
        let user = |t: &str| MessageBody::User {
            text: t.into(),
            images: vec![],
            hidden: false,
        };
        let history = vec![
            msg(1, user("old")),
            msg(
                2,
                MessageBody::Error {
                    text: "boom".into(),
                },
            ),
            msg(3, user("recent")),
            msg(
                4,
                MessageBody::Compaction {
                    summary: "did old things".into(),
                    through: 2,
                },
            ),
        ];
        let wire = wire_messages(&history);
        assert_eq!(wire.len(), 2);
        assert!(
            matches!(&wire[0], Message::User { text, .. } if text.starts_with("Summary of the earlier part of this conversation:\ndid old things"))
        );
        assert!(matches!(&wire[1], Message::User { text, .. } if text == "recent"));
    }
}
