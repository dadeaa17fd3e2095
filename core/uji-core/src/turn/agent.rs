//! The turn loop: send the conversation to the model, run the tool calls it
//! makes through the gate, send the results back, until it answers without
//! tool calls. Every message is saved as it happens.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::watch;
use uji_host::{ProgressSink, Registry, StreamError, WireEvents};
use uji_protocol::frontend::{Event, ModelState, NoticeLevel};
use uji_protocol::session::{MessageBody, StoredMessage};
use uji_protocol::wire::{
    Answer, Auth, Message, ProviderInfo, ToolCallRequest, Usage, WireRequest, WireTool,
    answer_too_long,
};
use uji_protocol::{Image, ToolOutput};

use crate::auth::providers::Resolved;
use crate::gate::{Approver, Gate, GateResult, Started, ToolRequest};
use crate::session::store::{SessionFile, new_call_id};
use crate::turn::answer_sink::AnswerSink;
pub use crate::turn::control::EventSink;
use crate::turn::control::{ChosenModel, MessageQueue, SessionControl};
use crate::turn::interrupt::Interrupt;
use crate::{turn::compaction, turn::prompt, turn::retry};

mod checkpointing;
mod delegating;
mod mentioned;
mod spending;

pub use checkpointing::{
    Checkpointing, DISABLED as CHECKPOINTS_DISABLED, RestoreRequest,
    Settings as CheckpointSettings, announce as announce_checkpoints, describe_restore,
};

/// What a turn is run with.
#[derive(Clone)]
pub struct TurnSettings {
    /// The model requests go to, or why there is none yet (no key set up):
    /// an interactive session opens anyway, and each turn ends with this
    /// error until a model is chosen.
    pub model: Result<Resolved, String>,
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
    /// The session's budget when it is not the configured one: a
    /// subagent's (its agent file's limits within what is left of its
    /// parent's).
    pub budget: Option<crate::turn::budget::Budget>,
    /// The session this one runs as a subagent of, in this process (not a
    /// saved subagent session resumed on its own).
    pub subagent_of: Option<String>,
}

/// Whether `--tools` (`only`, all when `None`) offers the tool `name`.
pub fn offered(only: &Option<Vec<String>>, name: &str) -> bool {
    only.as_ref()
        .is_none_or(|only| only.iter().any(|n| n == name))
}

pub use crate::auth::redact::{REDACTED, redact};

/// Runs blocking work (a disk flush) where the runtime can do without the
/// thread meanwhile: its other tasks move to another worker. On a runtime
/// of one thread (tests) there is nowhere to move them, and it just runs.
fn off_the_runtime<R>(work: impl FnOnce() -> R) -> R {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(work)
        }
        _ => work(),
    }
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
    /// The budget limit that stopped the turn (`error` says how to raise it).
    pub budget: Option<uji_protocol::frontend::BudgetLimit>,
}

/// One session's agent. Whoever runs it (the session server's worker)
/// owns it and everything in it; what others read of it while it works is
/// published as a [`SessionSnapshot`], and what they change reaches it
/// through its [`MessageQueue`] and [`SessionControl`].
pub struct Agent {
    gate: Gate,
    registry: Registry,
    session: SessionFile,
    /// `model` and `effort` are what the running request uses: a copy of
    /// the control's choice, taken at each safe point.
    settings: TurnSettings,
    approver: Arc<dyn Approver>,
    events: EventSink,
    /// Tokens the whole session used.
    usage: Usage,
    /// Tokens the last request read: what the context holds.
    context_used: u64,
    /// What the last answered request used.
    last_usage: Usage,
    /// Requests answered in the session (saved answers, then this run's).
    requests: u64,
    /// When the running turn started; `None` between turns.
    turn_started: Option<Instant>,
    /// What `turn_context` handlers added to the system prompt for the
    /// running turn (each after a blank line); cleared when it ends.
    turn_system: Vec<String>,
    /// Messages the user sent while a turn runs.
    queue: MessageQueue,
    /// Model, title and `!cmd` results set from outside the turn.
    control: SessionControl,
    /// Where the snapshot goes each time it changes.
    published: watch::Sender<SessionSnapshot>,
    /// The workspace's checkpoints, opened at the first call that may
    /// change files.
    checkpointing: checkpointing::Checkpointing,
    /// What the session spent since this uji opened it, for budgets.
    spending: spending::Spending,
}

/// What others read of a session while its agent works (`session.info`,
/// whether a session to delete is the running one), published by the
/// agent whenever it changes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionSnapshot {
    pub id: String,
    pub title: String,
    pub cwd: String,
    /// Messages in the session so far.
    pub messages: u64,
    /// Tokens the whole session used.
    pub usage: Usage,
    /// Tokens the last request's context held.
    pub context_used: u64,
    /// Tokens the model the agent uses can read; `None` without a model.
    pub context_window: Option<u64>,
    /// What the last answered request used.
    pub last_usage: Usage,
    /// Requests answered in the session.
    pub requests: u64,
    /// When the running turn started; `None` between turns.
    pub turn_started: Option<Instant>,
    /// What this run's requests cost, in millionths of a dollar; `None`
    /// once one went to a model without a price.
    pub cost: Option<u64>,
}

/// Where a session server points an agent: its events, the queue and side
/// door it takes changes from, who answers its questions, and where its
/// snapshot goes.
pub struct Connection {
    pub events: EventSink,
    pub queue: MessageQueue,
    pub control: SessionControl,
    /// `None` keeps the agent's own approver (a headless session's).
    pub approver: Option<Arc<dyn Approver>>,
    pub snapshot: watch::Sender<SessionSnapshot>,
}

impl TurnSettings {
    /// The model as frontends show it; `None` while there is none.
    pub fn model_state(&self) -> Option<ModelState> {
        let model = self.model.as_ref().ok()?;
        Some(ModelState {
            provider: model.provider.id.clone(),
            model: model.model.id.clone(),
            effort: self.effort.clone(),
            context_window: model.model.context_window,
        })
    }

    /// The model, or the error that says how to set one up.
    pub fn resolved(&self) -> Result<&Resolved, String> {
        self.model.as_ref().map_err(Clone::clone)
    }
}

const INTERRUPTED: &str = "interrupted";
/// The hook event that adds context to a turn (`uji.context.add`).
pub const TURN_CONTEXT: &str = "turn_context";

/// What one `turn_context` handler added.
#[derive(Debug, Default, PartialEq)]
struct AddedContext {
    /// For this turn's system prompt.
    system: Option<String>,
    /// Saved as a hidden user message.
    turn: Option<String>,
}

/// Reads a `turn_context` handler's answer: `null`, a string (for the
/// system prompt) or `{system?, turn?}`. Blank texts add nothing.
fn read_context(answer: Value) -> Result<AddedContext, String> {
    let text = |value: Option<Value>, field: &str| match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) if text.trim().is_empty() => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(other) => Err(format!(
            "its {field} is {}, not a string",
            json_kind(&other)
        )),
    };
    match answer {
        Value::Null => Ok(AddedContext::default()),
        Value::String(_) => Ok(AddedContext {
            system: text(Some(answer), "answer")?,
            turn: None,
        }),
        Value::Object(mut fields) => Ok(AddedContext {
            system: text(fields.remove("system"), "system")?,
            turn: text(fields.remove("turn"), "turn")?,
        }),
        other => Err(format!(
            "it answered {}; answer nothing, a string for the system prompt, or {{system = text, turn = text}}",
            json_kind(&other)
        )),
    }
}

/// What kind of JSON value `value` is, for messages.
fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Array(_) => "an array",
        Value::Null => "null",
        Value::String(_) => "a string",
        Value::Number(_) => "a number",
        Value::Bool(_) => "a boolean",
        Value::Object(_) => "an object",
    }
}
const BEFORE_RUN: &str = "interrupted by the user before this tool ran";

/// How streaming one request ended, short of a failure.
pub(crate) enum Streamed {
    Answer(Answer),
    /// The user interrupted; `partial` is the text shown so far.
    Interrupted {
        partial: String,
    },
}

impl Streamed {
    /// Interrupted before anything was shown.
    fn interrupted_early() -> Streamed {
        Streamed::Interrupted {
            partial: String::new(),
        }
    }
}

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

/// What the newest saved answer used, and how many saved answers report
/// their usage (a resumed session counts its requests from here).
pub fn saved_requests(messages: &[StoredMessage]) -> (Usage, u64) {
    let mut last = Usage::default();
    let mut requests = 0u64;
    for message in messages {
        if let MessageBody::Assistant {
            usage: Some(usage), ..
        } = &message.body
        {
            last = *usage;
            requests = requests.saturating_add(1);
        }
    }
    (last, requests)
}

/// Saturating: usage from a model is never trusted to stay small.
pub(crate) fn add_usage(total: &mut Usage, more: &Usage) {
    total.add(more);
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
            MessageBody::Error { .. }
            | MessageBody::Compaction { .. }
            | MessageBody::Shell { .. } => {}
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
            let kind = json_kind(&other);
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
    /// The agent of `session`, run with `settings`, its questions answered
    /// by `approver`. Its usage starts from what the session's saved
    /// answers used; its events go nowhere until it is connected.
    pub fn new(
        gate: Gate,
        registry: Registry,
        session: SessionFile,
        settings: TurnSettings,
        approver: Arc<dyn Approver>,
    ) -> Agent {
        let usage = saved_usage(&session.messages);
        let (last_usage, requests) = saved_requests(&session.messages);
        let control = SessionControl::new(ChosenModel {
            model: settings.model.clone(),
            effort: settings.effort.clone(),
        });
        let data_dir = registry
            .config(crate::boot::DATA_DIR_KEY)
            .and_then(|dir| dir.as_str().map(PathBuf::from));
        let checkpointing =
            checkpointing::Checkpointing::new(data_dir, session.id(), &settings.cwd, &registry);
        // The last turn run, for what is checkpointed before the next one
        // (a `!cmd`, an undo).
        checkpointing.set_turn(session.last_turn());
        Agent {
            gate,
            registry,
            session,
            settings,
            approver,
            events: Arc::new(|_| {}),
            usage,
            context_used: 0,
            last_usage,
            requests,
            turn_started: None,
            turn_system: Vec::new(),
            queue: MessageQueue::default(),
            control,
            // Nobody reads it until the agent is connected.
            published: watch::Sender::new(SessionSnapshot::default()),
            checkpointing,
            spending: spending::Spending::default(),
        }
    }

    /// Points the agent at a session server's connection, and publishes
    /// its snapshot there.
    pub fn connect(&mut self, to: Connection) {
        self.events = to.events;
        self.queue = to.queue;
        self.control = to.control;
        if let Some(approver) = to.approver {
            self.approver = approver;
        }
        self.published = to.snapshot;
        self.checkpointing.connect(self.events.clone());
        self.publish();
        self.link_subagents();
    }

    /// What others may read of the session now.
    pub fn snapshot(&self) -> SessionSnapshot {
        SessionSnapshot {
            id: self.session.id().to_string(),
            title: self.session.header.title.clone(),
            cwd: self.session.header.cwd.clone(),
            messages: self.session.messages.len() as u64,
            usage: self.usage,
            context_used: self.context_used,
            context_window: self
                .settings
                .model
                .as_ref()
                .ok()
                .map(|m| m.model.context_window),
            last_usage: self.last_usage,
            requests: self.requests,
            turn_started: self.turn_started,
            cost: self.cost(),
        }
    }

    fn publish(&self) {
        self.published.send_replace(self.snapshot());
    }

    pub fn id(&self) -> &str {
        self.session.id()
    }

    pub fn title(&self) -> &str {
        &self.session.header.title
    }

    /// The directory the session was started in.
    pub fn cwd(&self) -> &str {
        &self.session.header.cwd
    }

    /// Everything saved in the session, oldest first.
    pub fn messages(&self) -> &[StoredMessage] {
        &self.session.messages
    }

    /// What opening the session's file found damaged.
    pub fn damage(&self) -> &[String] {
        &self.session.notices
    }

    /// Tokens the whole session used.
    pub fn usage(&self) -> Usage {
        self.usage
    }

    /// The model as frontends show it; `None` while there is none.
    pub fn model_state(&self) -> Option<ModelState> {
        self.settings.model_state()
    }

    /// The model requests use, or the error that says how to set one up.
    pub fn model(&self) -> Result<&Resolved, String> {
        self.settings.resolved()
    }

    /// The model and effort the agent uses, as a control's choice.
    pub fn chosen_model(&self) -> ChosenModel {
        ChosenModel {
            model: self.settings.model.clone(),
            effort: self.settings.effort.clone(),
        }
    }

    /// Runs the handlers plugins registered for `event` (a session's
    /// start, a compaction).
    pub fn notify_plugins(&self, event: &str, payload: Value) {
        self.registry.emit(event, payload);
    }

    /// Adds tokens used outside a turn (a summary) to the session's.
    pub(crate) fn add_usage(&mut self, more: &Usage) {
        add_usage(&mut self.usage, more);
        self.answered(more);
        self.publish();
    }

    pub(crate) fn emit(&self, event: Event) {
        (self.events)(event);
    }

    /// A warning for the user (a failed save, a retry, a failing hook).
    pub(crate) fn notice(&self, text: String) {
        let text = redact(&text, &self.settings.secrets);
        tracing::info!("notice: {text}");
        self.emit(Event::notice(NoticeLevel::Warn, text));
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
                effort,
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
                effort,
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
                error_kind,
            } => MessageBody::Tool {
                tool_call_id,
                name,
                content: r(content),
                is_error,
                images,
                summary,
                diff,
                subject: subject.map(r),
                error_kind,
            },
            MessageBody::Error { text } => MessageBody::Error { text: r(text) },
            MessageBody::Compaction { summary, through } => MessageBody::Compaction {
                summary: r(summary),
                through,
            },
            MessageBody::Shell {
                command,
                output,
                exit_code,
            } => MessageBody::Shell {
                command: r(command),
                output: r(output),
                exit_code,
            },
        }
    }

    /// Saves a message and tells the frontend and `message_appended`
    /// handlers. A message that cannot be saved is still shown, with a
    /// notice: losing the disk must not lose the turn.
    pub fn save(&mut self, body: MessageBody) -> StoredMessage {
        let body = self.redact_body(body);
        let (message, written) = self.session.append(body);
        self.publish();
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
            MessageBody::Shell { command, .. } => ("shell", command.clone()),
        };
        self.emit(Event::Message {
            message: message.clone(),
        });
        if !self.registry.hooks("message_appended").is_empty() {
            self.registry.emit(
                "message_appended",
                json!({"type": kind, "text": text, "session": self.id()}),
            );
        }
        message
    }

    fn tools(&self) -> Vec<WireTool> {
        self.registry
            .tools()
            .iter()
            .map(|t| t.spec())
            .filter(|spec| offered(&self.settings.tools, &spec.name))
            .map(|spec| WireTool {
                name: spec.name.clone(),
                description: spec.description.clone(),
                parameters: spec.parameters.clone(),
            })
            .collect()
    }

    /// The system prompt after `before_turn` handlers (each may replace
    /// it), then what `turn_context` handlers added for this turn.
    fn system_prompt(&self) -> String {
        let config_dir = self
            .registry
            .config(crate::boot::CONFIG_DIR_KEY)
            .and_then(|dir| dir.as_str().map(PathBuf::from));
        let mut system = prompt::system_prompt(
            &self.settings.cwd,
            config_dir.as_deref(),
            self.settings.append_prompt.as_deref(),
        );
        for hook in self.registry.hooks("before_turn") {
            let payload =
                json!({"event": "before_turn", "system": system, "session": self.session.id()});
            match hook.call(&payload) {
                Ok(Value::String(replacement)) => system = replacement,
                Ok(_) => {}
                Err(e) => self.notice(format!("before_turn handler failed: {e}")),
            }
        }
        for added in &self.turn_system {
            system.push_str("\n\n");
            system.push_str(added);
        }
        system
    }

    pub(crate) fn request(
        &self,
        system: String,
        messages: Vec<Message>,
        tools: Vec<WireTool>,
    ) -> Result<WireRequest, String> {
        let model = self.settings.resolved()?;
        Ok(WireRequest {
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
        })
    }

    /// Streams one request, retrying failures worth retrying, until it is
    /// answered or the user interrupts.
    ///
    /// `build` makes each attempt's request afresh and the request is handed
    /// over whole: while the wire builds its body nothing here holds another
    /// copy of the conversation (docs/benchmarks.md, "a day's session").
    pub(crate) async fn stream_with_retries(
        &self,
        build: impl Fn(&Self) -> Result<WireRequest, String>,
        interrupt: &mut Interrupt,
        show: bool,
    ) -> Result<Streamed, String> {
        let provider = &self.settings.resolved()?.provider;
        let wire_name = &provider.wire;
        let mut attempt = 0;
        let (mut stalls, mut stalled_for) = (0, Duration::ZERO);
        let mut image_refusal_learned = false;
        loop {
            let wire = self.registry.wire(wire_name).ok_or_else(|| {
                format!(
                    "the {wire_name:?} wire that provider {} needs is not loaded; `uji plugins` shows what loaded and what failed",
                    provider.id
                )
            })?;
            let events: EventSink = if show {
                Arc::clone(&self.events)
            } else {
                Arc::new(|_| {})
            };
            let sink = Arc::new(AnswerSink::new(events, &self.settings.secrets));
            // What the last request and the tool calls since freed goes
            // back before this one is built (the whole conversation, a few
            // times over): the peak is this build's, not this plus what
            // the allocator kept of the last one.
            crate::memory::release_free_pages();
            let started = Instant::now();
            let mut running = wire
                .stream(build(self)?, Arc::clone(&sink) as Arc<dyn WireEvents>)
                .map_err(|e| e.to_string())?;
            let result = tokio::select! {
                result = running.finished() => result,
                () = sink.too_long() => {
                    running.cancel();
                    return Err(StreamError::Failure(answer_too_long()).to_string());
                }
                () = interrupt.wait() => {
                    running.cancel();
                    let partial = sink.partial_text();
                    return Ok(Streamed::Interrupted { partial });
                }
            };
            let error = match result {
                Ok(answer) => {
                    sink.flush();
                    return Ok(Streamed::Answer(answer));
                }
                Err(error) => error,
            };
            if !image_refusal_learned && self.learn_image_refusal(&error) {
                // Once: the next build leaves the images out.
                image_refusal_learned = true;
                continue;
            }
            if retry::is_stall(&error) {
                stalls += 1;
                stalled_for += started.elapsed();
            }
            if stalls >= retry::MAX_STALLS {
                return Err(format!(
                    "{error}; gave up after {stalls} stalls ({}s without data in all)",
                    stalled_for.as_secs()
                ));
            }
            if !retry::retryable(&error) || attempt >= retry::MAX_RETRIES {
                return Err(error.to_string());
            }
            attempt += 1;
            let wait = retry::delay(
                &error,
                attempt,
                crate::session::store::now_ms() ^ u64::from(attempt),
            );
            let message = retry::notice(&error, wait, attempt);
            if show {
                // The frontend drops what this attempt streamed and shows
                // the message in place of the last retry's.
                let secrets = &self.settings.secrets;
                tracing::info!("notice: {}", redact(&message, secrets));
                self.emit(Event::StreamRetry {
                    attempt,
                    wait_ms: u64::try_from(wait.as_millis()).unwrap_or(u64::MAX),
                    reason: redact(&error.to_string(), secrets),
                    message: redact(&message, secrets),
                });
            } else {
                self.notice(message);
            }
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = interrupt.wait() => return Ok(Streamed::interrupted_early()),
            }
        }
    }

    fn progress_sink(&self, call_id: &str, tool: &str) -> ProgressSink {
        let events = Arc::clone(&self.events);
        let (call_id, tool) = (call_id.to_string(), tool.to_string());
        let secrets = self.settings.secrets.clone();
        // The host paces the lines; here each is redacted, then cut to
        // what a frontend shows (in that order, so no key is cut in half).
        Arc::new(move |line: &str| {
            let line = redact(line, &secrets);
            events(Event::Progress {
                call_id: call_id.clone(),
                tool: tool.clone(),
                line: uji_host::progress::shorten(&line, uji_host::progress::WIDTH).into_owned(),
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
            error_kind: output.error_kind,
        }
    }

    fn finish(&mut self, outcome: TurnOutcome) -> TurnOutcome {
        // The disk's flush takes this worker thread, not the runtime: other
        // sessions' turns (subagents running beside this one) go on.
        let _ = off_the_runtime(|| self.session.sync());
        self.end_turn_checkpoints();
        // Published before `turn_finished`, which tells the session server
        // the turn is over: no one reads a finished turn as running.
        self.turn_started = None;
        self.turn_system.clear();
        self.publish();
        // `parent` tells a subagent's turns (run in this process) from the
        // session's own.
        self.registry.emit(
            "turn_finished",
            json!({"text": outcome.text, "error": outcome.error, "interrupted": outcome.interrupted,
                "session": self.id(), "parent": self.settings.subagent_of}),
        );
        self.emit(Event::TurnFinished {
            text: outcome.text.clone(),
            error: outcome.error.clone(),
            interrupted: outcome.interrupted,
            usage: outcome.usage,
            budget: outcome.budget,
            cost: self.cost().map(|micros| micros as f64 / 1e6),
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
            budget: None,
        })
    }

    /// `provider/model` of the request now running, saved with its answer.
    fn answering_model(&self) -> Option<String> {
        self.settings.model.as_ref().ok().map(Resolved::label)
    }

    fn interrupted(&mut self, usage: Usage) -> TurnOutcome {
        self.interrupted_with(String::new(), usage)
    }

    /// Ends an interrupted turn. The text the model had streamed so far
    /// stays in the conversation as its answer (the person read it; the
    /// next request carries it, so two user messages never run together),
    /// then the interruption is noted.
    fn interrupted_with(&mut self, partial: String, usage: Usage) -> TurnOutcome {
        if !partial.trim().is_empty() {
            self.save(MessageBody::Assistant {
                text: partial,
                reasoning: None,
                tool_calls: Vec::new(),
                usage: None,
                model: self.answering_model(),
                effort: self.settings.effort.clone(),
                replay: None,
            });
        }
        self.save(MessageBody::Error {
            text: INTERRUPTED.to_string(),
        });
        self.finish(TurnOutcome {
            text: None,
            error: None,
            interrupted: true,
            usage,
            budget: None,
        })
    }

    /// Runs one turn for a user message.
    pub async fn turn(
        &mut self,
        text: String,
        images: Vec<Image>,
        interrupt: &mut Interrupt,
    ) -> TurnOutcome {
        self.apply_changes();
        self.begin_turn();
        self.title_from(&text);
        self.emit(Event::TurnStarted { text: text.clone() });
        if !self.registry.hooks("message_submitted").is_empty() {
            self.registry.emit(
                "message_submitted",
                json!({"text": text, "session": self.id()}),
            );
        }
        let context = (!self.registry.hooks(TURN_CONTEXT).is_empty()).then(|| text.clone());
        self.save_user_message(text, images, interrupt).await;
        self.mark_turn();
        if let Some(text) = context {
            self.turn_context(&text);
        }
        self.run_turn(interrupt).await
    }

    /// Saves a message of the user's (one that starts a turn, or one typed
    /// while it runs): what its `@` mentions name follows it as a hidden
    /// message, and its images (attached and mentioned) are fitted.
    async fn save_user_message(
        &mut self,
        text: String,
        mut images: Vec<Image>,
        interrupt: &mut Interrupt,
    ) {
        let mentioned = self.read_mentions(&text, interrupt).await;
        images.extend(mentioned.images);
        let images = self.fitted(images).await;
        self.save(MessageBody::User {
            text,
            images,
            hidden: false,
        });
        if let Some(files) = mentioned.context {
            self.save(MessageBody::User {
                text: files,
                images: Vec::new(),
                hidden: true,
            });
        }
    }

    /// The images a request carries: none, each a note, for a model that
    /// declares it takes none; else the 20 newest (crate::images).
    fn bound_images(&self, messages: &mut [Message]) {
        let carries_images = messages.iter().any(|m| match m {
            Message::User { images, .. } | Message::Tool { images, .. } => !images.is_empty(),
            Message::Assistant { .. } => false,
        });
        if !carries_images {
            // Most requests: nothing to bound, and no need to read what
            // uji remembers about the model.
            return;
        }
        match self.settings.resolved() {
            Ok(model) if model.model.images == Some(false) || self.refused_images(model) => {
                let note = format!(
                    "[an image is left out: {} takes no images; describe it in words or switch to a model that reads images]",
                    model.label()
                );
                crate::images::leave_out_all(messages, &note);
            }
            _ => crate::images::keep_newest(messages),
        }
    }

    /// The data directory, where uji remembers models that refused images.
    fn data_dir(&self) -> Option<PathBuf> {
        self.registry
            .config(crate::boot::DATA_DIR_KEY)
            .and_then(|dir| dir.as_str().map(PathBuf::from))
    }

    /// Whether `model` refused a request for its images before.
    fn refused_images(&self, model: &crate::auth::providers::Resolved) -> bool {
        self.data_dir()
            .is_some_and(|dir| crate::images::remembered_without_images(&dir, &model.label()))
    }

    /// Whether the conversation holds an image a request would carry.
    fn has_images(&self) -> bool {
        self.session.messages.iter().any(|m| match &m.body {
            MessageBody::User { images, .. } | MessageBody::Tool { images, .. } => {
                !images.is_empty()
            }
            _ => false,
        })
    }

    /// After `error`: when the model refused the request for its images,
    /// remember that it takes none and say so; true when the request
    /// should go again (now with notes in place of the images).
    fn learn_image_refusal(&self, error: &StreamError) -> bool {
        let Ok(model) = self.settings.resolved() else {
            return false;
        };
        if !crate::images::is_image_refusal(error)
            || !self.has_images()
            || model.model.images == Some(false)
            || self.refused_images(model)
        {
            return false;
        }
        let label = model.label();
        match self.data_dir().map(|dir| crate::images::remember_without_images(&dir, &label)) {
            Some(Ok(())) => self.notice(format!(
                "{label} refused the images ({error}); uji remembers it takes none and sends the request again with a note for each"
            )),
            _ => self.notice(format!(
                "{label} refused the images ({error}); sending the request again with a note for each (uji could not write this down, so it will try images again next time)"
            )),
        }
        true
    }

    /// The user's images fitted for the model (crate::images), off the
    /// runtime's threads (a large photo takes a while to scale); one that
    /// cannot be read is left out with a notice saying why.
    async fn fitted(&self, images: Vec<Image>) -> Vec<Image> {
        if images.is_empty() {
            return images;
        }
        let results = tokio::task::spawn_blocking(move || {
            images
                .iter()
                .map(|image| (image.name.clone(), crate::images::fit_image(image)))
                .collect::<Vec<_>>()
        })
        .await;
        let results = match results {
            Ok(results) => results,
            Err(e) => {
                self.notice(format!(
                    "the attached images could not be prepared ({e}); attach them again"
                ));
                return Vec::new();
            }
        };
        let mut fitted = Vec::with_capacity(results.len());
        for (name, result) in results {
            match result {
                Ok(image) => fitted.push(image),
                Err(e) => {
                    let which =
                        name.map_or_else(|| "an image".to_string(), |n| format!("image {n}"));
                    self.notice(format!("{which} was not attached: {e}"));
                }
            }
        }
        fitted
    }

    /// The running turn starts now; nothing is added to its system prompt
    /// yet.
    fn begin_turn(&mut self) {
        self.turn_started = Some(Instant::now());
        self.turn_system.clear();
        self.publish();
    }

    /// Runs the `turn_context` handlers, in order, for the user's `text`.
    /// Each may answer nothing, a string (added to this turn's system
    /// prompt) or `{system?, turn?}`: `turn` is saved at once as a hidden
    /// user message, so the model reads it after the user's and the
    /// transcript does not show it. A failing handler is a notice.
    fn turn_context(&mut self, text: &str) {
        let payload = json!({"event": TURN_CONTEXT, "session": self.id(), "text": text});
        for hook in self.registry.hooks(TURN_CONTEXT) {
            let name = hook
                .options()
                .name
                .clone()
                .unwrap_or_else(|| hook.plugin().to_string());
            let added = hook
                .call(&payload)
                .map_err(|e| e.to_string())
                .and_then(read_context);
            let added = match added {
                Ok(added) => added,
                Err(e) => {
                    self.notice(format!("context handler {name} failed: {e}"));
                    continue;
                }
            };
            if let Some(system) = added.system {
                self.turn_system.push(system);
            }
            if let Some(turn) = added.turn {
                self.save(MessageBody::User {
                    text: turn,
                    images: Vec::new(),
                    hidden: true,
                });
            }
        }
    }

    /// Runs a turn for what waits in the session control (a background
    /// job's report) with no new user message.
    pub async fn wake(&mut self, interrupt: &mut Interrupt) -> TurnOutcome {
        self.apply_changes();
        self.begin_turn();
        self.mark_turn();
        self.emit(Event::TurnStarted {
            text: String::new(),
        });
        self.run_turn(interrupt).await
    }

    /// The model's answers and tool calls until the turn ends.
    async fn run_turn(&mut self, interrupt: &mut Interrupt) -> TurnOutcome {
        let mut usage = Usage::default();
        let mut continued = 0u64;
        self.link_subagents();
        loop {
            if interrupt.is_set() {
                return self.interrupted(usage);
            }
            self.apply_changes();
            if let Some(steer) = self.queue.pop_steering() {
                self.save_user_message(steer.text, steer.images, interrupt)
                    .await;
            }
            match self.budget_reached() {
                Ok(Some(reached)) if self.budget_continue(reached).await => continue,
                Ok(Some(reached)) => return self.budget_stop(reached, usage),
                Ok(None) => {}
                Err(why) => return self.failed(why, usage),
            }
            let answer = match self.next_answer(interrupt).await {
                Ok(Streamed::Answer(answer)) => answer,
                Ok(Streamed::Interrupted { partial }) => {
                    return self.interrupted_with(partial, usage);
                }
                Err(error) => return self.failed(error, usage),
            };
            add_usage(&mut usage, &answer.usage);
            let answer_usage = answer.usage;
            let (final_text, tool_calls) = self.save_answer(answer);
            // Spent first, so the usage event carries this answer's cost.
            self.spend(&answer_usage, tool_calls.len());
            self.count_usage(&answer_usage, &usage);
            if tool_calls.is_empty() {
                if self.queue.has_steering() {
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
                    budget: None,
                });
            }
            if self.run_tool_calls(&tool_calls, interrupt).await {
                return self.interrupted(usage);
            }
        }
    }

    /// A session without a title takes the first line of its first message.
    fn title_from(&mut self, text: &str) {
        if !self.session.header.title.is_empty() {
            return;
        }
        let first: String = text
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or_default()
            .trim()
            .chars()
            .take(80)
            .collect();
        if !first.is_empty() {
            self.set_title(&first);
        }
    }

    pub(crate) fn set_title(&mut self, title: &str) {
        let title = redact(title, &self.settings.secrets);
        if let Err(e) = self.session.set_title(&title) {
            self.notice(format!("could not save the title: {e}"));
        }
        self.publish();
        self.emit(Event::TitleChanged { title });
    }

    /// Takes the conversation back to before the user's message `to` (its
    /// seq): that message and every later one leave it (the file keeps
    /// them). Returns how many left and the message's text, to edit and
    /// send again.
    pub(crate) fn rewind(&mut self, to: u64) -> Result<(usize, String), String> {
        let text = self.user_text(to).ok_or_else(|| {
            format!(
                "message {to} is not one of your messages in this conversation; pick one from the session's history"
            )
        })?;
        let dropped = self.session.rewind(to).map_err(|e| {
            format!(
                "could not save the rewind to {}: {e}; the conversation is unchanged",
                self.session.path().display()
            )
        })?;
        tracing::info!("rewound session {} before message {to}", self.id());
        self.publish();
        Ok((dropped.len(), text))
    }

    /// Takes what was changed from outside the turn: the model for the
    /// next request, a title, `!cmd` results to save.
    pub fn apply_changes(&mut self) {
        let pending = self.control.take();
        if let Some(choice) = pending.model {
            if let Ok(model) = &choice.model {
                self.settings.idle_timeout = model.provider.idle_timeout;
            }
            self.settings.model = choice.model;
            self.settings.effort = choice.effort;
            // Its context window is the one reported now.
            self.publish();
        }
        if let Some(secrets) = pending.secrets {
            self.gate.set_spill(self.gate.spill_dir(), secrets.clone());
            self.settings.secrets = secrets;
        }
        if let Some(title) = pending.title {
            self.set_title(&title);
        }
        for message in pending.messages {
            self.save(message);
        }
    }

    /// Builds and streams the next request (compacting first if needed).
    async fn next_answer(&mut self, interrupt: &mut Interrupt) -> Result<Streamed, String> {
        // Without a model there is nothing to ask (nor to compact for).
        self.settings.resolved()?;
        let system = self.system_prompt();
        let tools = self.tools();
        if let Err(e) = compaction::compact_if_needed(self, &system, interrupt).await
            && !interrupt.is_set()
        {
            self.notice(format!("could not compact; sending the full context ({e})"));
        }
        if interrupt.is_set() {
            return Ok(Streamed::interrupted_early());
        }
        let build = |agent: &Self| {
            let mut messages = wire_messages(&agent.session.messages);
            agent.bound_images(&mut messages);
            agent.request(system.clone(), messages, tools.clone())
        };
        self.stream_with_retries(build, interrupt, true).await
    }

    /// Adds an answer's tokens to the session and tells the frontend.
    fn count_usage(&mut self, answer: &Usage, turn: &Usage) {
        add_usage(&mut self.usage, answer);
        self.answered(answer);
        self.context_used = answer.context();
        self.publish();
        self.emit(Event::Usage {
            turn: *turn,
            session: self.usage,
            cost: self.cost().map(|micros| micros as f64 / 1e6),
            context_used: self.context_used,
            context_window: self
                .settings
                .model
                .as_ref()
                .map_or(0, |m| m.model.context_window),
        });
    }

    /// Counts one answered request that used `usage`.
    fn answered(&mut self, usage: &Usage) {
        self.last_usage = *usage;
        self.requests = self.requests.saturating_add(1);
    }

    /// Saves the model's answer; returns its text and tool calls (with
    /// usable ids).
    fn save_answer(&mut self, answer: Answer) -> (String, Vec<ToolCallRequest>) {
        let mut tool_calls = answer.tool_calls;
        let mut seen = std::collections::HashSet::new();
        for call in &mut tool_calls {
            // Blank ids, ids no API would take back, and an id a call of
            // this answer has already (results are matched by id) get a
            // fresh one.
            if call.id.trim().is_empty()
                || call.id.chars().any(char::is_control)
                || seen.contains(&call.id)
            {
                call.id = new_call_id();
            }
            seen.insert(call.id.clone());
        }
        // The model may repeat a key it saw: what is shown is redacted like
        // what is saved.
        let final_text = redact(&answer.text, &self.settings.secrets);
        self.save(MessageBody::Assistant {
            text: answer.text,
            reasoning: answer.reasoning,
            tool_calls: tool_calls.clone(),
            usage: Some(answer.usage),
            model: self.answering_model(),
            effort: self.settings.effort.clone(),
            replay: answer.replay,
        });
        (final_text, tool_calls)
    }

    /// Runs the calls one after another through the gate, saving each
    /// result. True when the user interrupted (the calls not run yet get
    /// an error result, so the history stays valid).
    async fn run_tool_calls(
        &mut self,
        tool_calls: &[ToolCallRequest],
        interrupt: &mut Interrupt,
    ) -> bool {
        for (index, call) in tool_calls.iter().enumerate() {
            let not_run = if interrupt.is_set() {
                &tool_calls[index..]
            } else {
                let result = self.run_tool_call(call, interrupt).await;
                if !result.is_some_and(|r| r.interrupted) {
                    continue;
                }
                &tool_calls[index + 1..]
            };
            for rest in not_run {
                self.finish_call(rest, ToolOutput::error(BEFORE_RUN), None);
            }
            return true;
        }
        false
    }

    /// One call: refused as unknown or malformed, or through the gate.
    /// `None` when it never reached the gate.
    async fn run_tool_call(
        &mut self,
        call: &ToolCallRequest,
        interrupt: &mut Interrupt,
    ) -> Option<GateResult> {
        // A tool that is not offered (unknown, or left out by --tools) is
        // refused as unknown, naming the offered ones, before its arguments
        // are looked at.
        if !offered(&self.settings.tools, &call.name) || self.registry.tool(&call.name).is_none() {
            let names: Vec<String> = self.tools().into_iter().map(|t| t.name).collect();
            let output = ToolOutput::error(format!(
                "unknown tool `{}`. Available tools: {}.",
                call.name,
                names.join(", ")
            ));
            self.refused_early(call, output);
            return None;
        }
        let args = match decode_arguments(&call.arguments) {
            Ok(args) => args,
            Err(message) => {
                let output = ToolOutput {
                    text: message,
                    is_error: true,
                    ..Default::default()
                };
                self.refused_early(call, output);
                return None;
            }
        };
        let request = ToolRequest {
            call_id: call.id.clone(),
            name: call.name.clone(),
            args,
            cwd: self.settings.cwd.clone(),
            session: Some(self.session.id().to_string()),
        };
        let progress = self.progress_sink(&call.id, &call.name);
        let watch = CallWatch { agent: self, call };
        let mut result = self
            .gate
            .run_observed(request, self.approver.as_ref(), progress, interrupt, &watch)
            .await;
        let subject = (!result.subject.is_empty()).then(|| result.subject.clone());
        let output = std::mem::take(&mut result.output);
        if let Some(spent) = &output.spent {
            self.spend_of_call(spent);
        }
        self.finish_call(call, output, subject);
        Some(result)
    }

    fn tool_started(&self, call: &ToolCallRequest, started: &Started<'_>) {
        self.emit(Event::ToolStarted {
            call_id: call.id.clone(),
            name: call.name.clone(),
            subject: redact(started.subject, &self.settings.secrets),
            verb: started.verb.map(str::to_string),
            decision: Some(crate::gate::reported(started.decision)),
            because: Some(started.because.clone()),
        });
    }

    /// A call refused before the gate: shown as started and denied, then
    /// finished with the error the model reads.
    fn refused_early(&mut self, call: &ToolCallRequest, output: ToolOutput) {
        let started = Started {
            subject: "",
            verb: None,
            decision: uji_policy::Decision::Deny,
            because: "the call could not be decided".to_string(),
        };
        self.tool_started(call, &started);
        self.finish_call(call, output, None);
    }

    /// Tells the frontend the call ended, then saves its result.
    fn finish_call(&mut self, call: &ToolCallRequest, output: ToolOutput, subject: Option<String>) {
        self.emit(Event::ToolFinished {
            call_id: call.id.clone(),
            name: call.name.clone(),
            summary: output.summary.clone(),
            diff: output.diff.clone(),
            is_error: output.is_error,
        });
        self.save(Self::tool_message(call, output, subject));
    }

    /// The first `before_stop` handler that returns a string sends the
    /// model back to work with it.
    fn before_stop(&self, text: &str, continued: u64) -> Option<String> {
        for hook in self.registry.hooks("before_stop") {
            let payload = json!({"event": "before_stop", "text": text, "continued": continued,
                "session": self.id()});
            match hook.call(&payload) {
                Ok(Value::String(nudge)) if !nudge.trim().is_empty() => return Some(nudge),
                Ok(_) => {}
                Err(e) => self.notice(format!("before_stop handler failed: {e}")),
            }
        }
        None
    }
}

/// A checkpoint taking longer than this shows a progress line under the
/// call (a first checkpoint of a large workspace).
const SLOW_CHECKPOINT: Duration = Duration::from_millis(300);

/// What the agent hears of a call in the gate: the transcript's start
/// line, and the checkpoint before a call that may change files.
struct CallWatch<'a> {
    agent: &'a Agent,
    call: &'a ToolCallRequest,
}

impl crate::gate::CallObserver for CallWatch<'_> {
    fn started(&self, started: &Started<'_>) {
        self.agent.tool_started(self.call, started);
    }

    fn before_run<'a>(
        &'a self,
        run: &crate::gate::ToRun<'a>,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + 'a>> {
        if !run.may_change_files {
            return Box::pin(std::future::ready(()));
        }
        let subject = redact(run.subject, &self.agent.settings.secrets);
        let subject: String = subject.chars().take(200).collect();
        let run_tool = run.tool.to_string();
        Box::pin(async move {
            let checkpoint = self
                .agent
                .checkpoint_before(format!("{} {subject}", run_tool));
            tokio::pin!(checkpoint);
            tokio::select! {
                () = &mut checkpoint => return,
                () = tokio::time::sleep(SLOW_CHECKPOINT) => {}
            }
            // A first checkpoint of a large workspace reads every file:
            // say why the call has not started yet.
            self.agent.emit(Event::Progress {
                call_id: self.call.id.clone(),
                tool: self.call.name.clone(),
                line: "checkpointing the workspace first, so /undo can put it back".to_string(),
            });
            checkpoint.await;
        })
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
    fn a_resumed_session_counts_its_saved_answers_as_requests_and_knows_the_last() {
        let answer = |seq, input: Option<u64>| StoredMessage {
            seq,
            time: 0,
            body: MessageBody::Assistant {
                text: String::new(),
                reasoning: None,
                tool_calls: Vec::new(),
                usage: input.map(|input| Usage {
                    input,
                    ..Usage::default()
                }),
                model: None,
                effort: None,
                replay: None,
            },
        };
        // An interrupted answer saved no usage: it is no answered request.
        let saved = [answer(1, Some(5)), answer(2, Some(7)), answer(3, None)];
        let (last, requests) = saved_requests(&saved);
        assert_eq!((last.input, requests), (7, 2));
        assert_eq!(saved_requests(&[]), (Usage::default(), 0));
    }

    #[test]
    fn a_context_handler_may_answer_nothing_a_string_or_system_and_turn() {
        assert_eq!(read_context(Value::Null), Ok(AddedContext::default()));
        assert_eq!(
            read_context(json!("be brief")),
            Ok(AddedContext {
                system: Some("be brief".to_string()),
                turn: None
            })
        );
        assert_eq!(
            read_context(json!({"turn": "on main", "system": "  ", "later": 1})),
            Ok(AddedContext {
                system: None,
                turn: Some("on main".to_string())
            })
        );
        assert_eq!(
            read_context(json!({"system": 3})),
            Err("its system is a number, not a string".to_string())
        );
        assert_eq!(
            read_context(json!(["a"])),
            Err("it answered an array; answer nothing, a string for the system prompt, or {system = text, turn = text}".to_string())
        );
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
