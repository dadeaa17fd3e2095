//! The frontend protocol: what a frontend (the headless printer, a TUI, an
//! editor bridge) sends to a session and what it receives, as JSON.
//!
//! A frontend submits [`Submission`]s (an operation with the frontend's own
//! id) and reads [`Event`]s. uji answers every operation with exactly one
//! [`Event::Ack`] or [`Event::Error`] naming its id; what the operation
//! causes (a turn, a new session, a command's output) follows as events.
//!
//! Evolution rules (docs/frontends.md): both sides ignore fields they do not
//! know; an unknown operation type is answered with an error event, an
//! unknown event type becomes [`Event::Unknown`] for the frontend to skip;
//! existing types and fields are never renamed or removed, new fields are
//! optional. [`PROTOCOL_VERSION`] counts these additions and is the first
//! thing a frontend hears, in `session_configured`.

pub mod answers;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::jobs::JobInfo;
use crate::session::StoredMessage;
use crate::wire::Usage;
use crate::{ApprovalMode, FileDiff, Image};

/// Version of this protocol. 1 was the unversioned shape of uji 0.1 (ops
/// without ids, `approval` with `allow: bool`); 2 added ids, acks and the
/// events and operations an interactive frontend needs; 4 added
/// `list_providers`, `login` and `logout`, and background jobs
/// (`list_jobs`, `stop_job`, `background`; `job_started`, `job_output`,
/// `job_finished`); 5 added `commands_changed`; 6 added the `stop` decision, `set_mode` and `mode_changed`;
/// 7 added dialogs (`hello` with `dialogs`, `answer_dialog`, `refuse_dialog`;
/// `dialog`, `dialog_resolved`); 8 added checkpoints (`rewind`'s `code` and
/// `conversation`, `rewound`'s `restored`; `/undo` and `/redo` are commands)
/// and budgets (`turn_finished`'s `budget`); 9 added subagents
/// (`approval_request`'s `agent`, `subagent`).
pub const PROTOCOL_VERSION: u32 = 9;

/// An operation with the id the frontend gave it. Frontends of protocol 1
/// sent no id; uji then names the operation by its position.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Submission {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(flatten)]
    pub op: Op,
}

impl Submission {
    pub fn new(id: impl Into<String>, op: Op) -> Submission {
        Submission {
            id: Some(id.into()),
            op,
        }
    }
}

/// How a message typed while a turn runs is delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Delivery {
    /// Taken by the running turn before its next model call (the user
    /// steers the work in progress). When no turn runs, starts one.
    #[default]
    Steer,
    /// Waits until the running turn has finished, then starts the next.
    Queue,
}

/// An answer to an approval question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalDecision {
    /// Run this call.
    AllowOnce,
    /// Run this call, and identical calls (same tool, same subject) for the
    /// rest of the session without asking. Deny rules still deny.
    AllowSession,
    /// Do not run it; `guidance`, if given, tells the model what to do.
    Deny,
    /// Do not run it, and end the turn here: the calls after it do not run
    /// and the model is not asked again until the next message. Offered by
    /// questions about a tool call (protocol 6).
    Stop,
    /// A decision a newer uji offers that this frontend does not know: do
    /// not show it. uji refuses it as an answer.
    #[serde(other)]
    Unknown,
}

impl ApprovalDecision {
    pub fn as_str(self) -> &'static str {
        match self {
            ApprovalDecision::AllowOnce => "allow_once",
            ApprovalDecision::AllowSession => "allow_session",
            ApprovalDecision::Deny => "deny",
            ApprovalDecision::Stop => "stop",
            ApprovalDecision::Unknown => "unknown",
        }
    }
}

/// What the gate decided for a tool call ([`Event::ToolStarted`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GateDecision {
    /// It runs without a question.
    Allow,
    /// The person is asked first (an `approval_request` follows).
    Ask,
    /// It does not run; `because` says what denied it.
    Deny,
    /// A decision a newer uji reports that this frontend does not know:
    /// treat it as "wait for what follows" (a question or the result).
    #[serde(other)]
    Unknown,
}

/// How a screen behaves, from `uji.ui.configure` (docs/lua.md).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UiSettings {
    /// How to call the user back when a turn ends or a question waits
    /// while the terminal is not focused.
    #[serde(default)]
    pub notify: Attention,
    /// Whether the screen reads the mouse (the wheel scrolls); off, the
    /// terminal selects text with a plain drag.
    #[serde(default = "on")]
    pub mouse: bool,
    /// Vi keys in the composer (Esc to normal mode, `i` back to insert).
    #[serde(default)]
    pub vim: bool,
}

impl Default for UiSettings {
    fn default() -> UiSettings {
        UiSettings {
            notify: Attention::default(),
            mouse: true,
            vim: false,
        }
    }
}

fn on() -> bool {
    true
}

/// How a screen gets the user's attention.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Attention {
    /// The terminal's bell.
    #[default]
    Bell,
    /// A desktop notification through OSC 9 (iTerm2, WezTerm, kitty,
    /// Windows Terminal, foot, Ghostty).
    Osc9,
    /// A desktop notification through OSC 777 (rxvt-unicode, VTE
    /// terminals such as GNOME Terminal).
    Osc777,
    /// Nothing.
    Off,
    /// A way a newer uji knows: nothing.
    #[serde(other)]
    Unknown,
}

/// What a frontend sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Op {
    /// A user message: starts a turn, or joins the running one as `delivery`
    /// says.
    UserMessage {
        text: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<Image>,
        #[serde(default)]
        delivery: Delivery,
    },
    /// Stops the running turn (and withdraws its open approval question).
    Interrupt,
    /// Answers an approval question. Protocol 1 frontends send `allow`.
    Approval {
        call_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        decision: Option<ApprovalDecision>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        allow: Option<bool>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        guidance: Option<String>,
    },
    /// Runs a slash command (built in, Lua or plugin) by name, without the
    /// slash; `args` is the rest of the line.
    RunCommand {
        name: String,
        #[serde(default)]
        args: String,
    },
    /// Switches model and/or effort from the next request on.
    SetModel {
        /// `provider/model`, or `provider` for its default model.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        effort: Option<String>,
    },
    /// Starts a fresh session in the same directory.
    NewSession {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
    },
    /// Switches to a saved session. (Not `id`: that names the operation.)
    ResumeSession {
        session_id: String,
    },
    /// Saved sessions of this directory (or all): the ack's `result`.
    ListSessions {
        #[serde(default)]
        all: bool,
    },
    /// Deletes a saved session (not the running one).
    DeleteSession {
        session_id: String,
    },
    /// The models of every configured provider: the ack's `result` is
    /// `{"models": [ModelEntry…]}`.
    ListModels,
    /// The providers and where each one's key comes from: the ack's
    /// `result` is `{"providers": [ProviderEntry…]}`.
    ListProviders,
    /// Checks `key` with the provider when it offers a cheap check, then
    /// saves it as `uji login` does; the ack's `result` is a
    /// [`LoginResult`]. A refused key is an error and is not saved.
    Login {
        provider: String,
        key: Secret,
    },
    /// Forgets the key `uji login` saved for `provider`; the ack's `result`
    /// is `{"removed": bool}`.
    Logout {
        provider: String,
    },
    /// Runs a shell command in the session directory (the `!cmd` of the
    /// input line): shown and saved, never sent to the model.
    Shell {
        command: String,
    },
    /// Summarises older messages now.
    Compact,
    /// Takes back the newest message waiting in the queue, to edit it
    /// (protocol 6): `queue_changed` follows, and the ack's `result` is
    /// `{"text": "…"}` (`null` when nothing waited).
    Unqueue,
    /// Takes the conversation back to before the user's message `to_seq`
    /// (its `seq`), to send it again edited (protocol 6): that message and
    /// everything after it leave the conversation (they stay in the session
    /// file). Runs after the turn in progress; `session_configured`
    /// follows with the shortened history, and the ack's `result` is
    /// `{"dropped": N, "text": "the message's text"}`. With `code` (protocol
    /// 8) the files the turns from that message on changed go back to how
    /// they were before it, from the checkpoints (docs/checkpoints.md; a
    /// file changed since is asked about), and `restored` says what was put
    /// back; `conversation: false` leaves the conversation as it is.
    Rewind {
        to_seq: u64,
        #[serde(default = "yes")]
        conversation: bool,
        #[serde(default)]
        code: bool,
    },
    SetTitle {
        title: String,
    },
    /// Switches the approval mode (protocol 6); `mode_changed` follows, and
    /// the ack's `result` is `{"mode": …}`.
    SetMode {
        mode: ApprovalMode,
    },
    /// Ends the session; `closed` follows.
    Shutdown,
    /// The background jobs, running first: the ack's `result` is
    /// `{"jobs": [JobInfo…]}`.
    ListJobs,
    /// Stops a background job and its whole process tree (no report goes
    /// to the model). The ack's `result` is `{"job": JobInfo}`.
    StopJob {
        job_id: u64,
    },
    /// Moves the running foreground command to the background (Ctrl+Z);
    /// the turn goes on. The ack's `result` is `{"running": n}`, the
    /// commands that were running (0: nothing to move).
    Background,
    /// What this frontend can show (protocol 7); send it first. A
    /// frontend that never sends it shows no dialogs: `ui.dialog` then
    /// fails at once instead of waiting.
    Hello {
        /// It shows `dialog` events and answers them (`answer_dialog` or
        /// `refuse_dialog`).
        #[serde(default)]
        dialogs: bool,
    },
    /// Answers the open dialog `dialog_id` (protocol 7). (Not `id`: that
    /// names the operation.) An `error` when no such dialog is open or the
    /// answer does not fit its kind (the dialog stays open).
    AnswerDialog {
        dialog_id: String,
        answer: DialogAnswer,
    },
    /// This frontend cannot show the dialog `dialog_id` (protocol 7): the
    /// plugin that asked gets an error with `reason`.
    RefuseDialog {
        dialog_id: String,
        reason: String,
    },
    /// An operation this uji does not know (from a newer frontend).
    #[serde(other)]
    Unknown,
}

/// The kind of a dialog a plugin asks through the frontend (`ui.dialog`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DialogKind {
    /// Pick one of `items`.
    Select,
    /// Type a line of text.
    Prompt,
    /// Yes or no.
    Confirm,
    /// A kind a newer uji asks for: refuse it (`refuse_dialog`).
    #[serde(other)]
    Unknown,
}

impl DialogKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DialogKind::Select => "select",
            DialogKind::Prompt => "prompt",
            DialogKind::Confirm => "confirm",
            DialogKind::Unknown => "unknown",
        }
    }
}

/// How a dialog was answered: what `ui.dialog` returns, and what a
/// frontend sends in `answer_dialog`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum DialogAnswer {
    /// A select's item, by its index in `items` (not in a filtered list).
    Selected { index: usize },
    /// A prompt's text.
    Text { text: String },
    /// A confirm's answer.
    Confirmed { yes: bool },
    /// The person dismissed it (Esc).
    Cancelled,
    /// Nobody answered within the dialog's timeout (uji's answer, never a
    /// frontend's).
    TimedOut,
    /// An answer a newer uji or frontend knows: refused as an answer.
    #[serde(other)]
    Unknown,
}

impl Op {
    /// The operation's type as it appears in JSON.
    pub fn kind(&self) -> &'static str {
        match self {
            Op::UserMessage { .. } => "user_message",
            Op::Interrupt => "interrupt",
            Op::Approval { .. } => "approval",
            Op::RunCommand { .. } => "run_command",
            Op::SetModel { .. } => "set_model",
            Op::NewSession { .. } => "new_session",
            Op::ResumeSession { .. } => "resume_session",
            Op::ListSessions { .. } => "list_sessions",
            Op::DeleteSession { .. } => "delete_session",
            Op::ListModels => "list_models",
            Op::ListProviders => "list_providers",
            Op::Login { .. } => "login",
            Op::Logout { .. } => "logout",
            Op::Shell { .. } => "shell",
            Op::Compact => "compact",
            Op::Rewind { .. } => "rewind",
            Op::Unqueue => "unqueue",
            Op::SetTitle { .. } => "set_title",
            Op::SetMode { .. } => "set_mode",
            Op::Shutdown => "shutdown",
            Op::ListJobs => "list_jobs",
            Op::StopJob { .. } => "stop_job",
            Op::Background => "background",
            Op::Hello { .. } => "hello",
            Op::AnswerDialog { .. } => "answer_dialog",
            Op::RefuseDialog { .. } => "refuse_dialog",
            Op::Unknown => "unknown",
        }
    }
}

/// The model a session uses.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ModelState {
    pub provider: String,
    pub model: String,
    /// Reasoning effort, when one is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<String>,
    /// Tokens the model can read.
    #[serde(default)]
    pub context_window: u64,
}

impl ModelState {
    /// What a switch to this model says it did (`/model`, `/effort`, the
    /// screen's pickers).
    pub fn switched_text(&self) -> String {
        let effort = self
            .effort
            .as_deref()
            .map(|e| format!(", effort {e}"))
            .unwrap_or_default();
        format!(
            "model: {}/{}{effort}, from the next request on",
            self.provider, self.model
        )
    }
}

/// One model a frontend can offer (`list_models`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelEntry {
    pub provider: String,
    pub model: String,
    #[serde(default)]
    pub context_window: u64,
    /// Whether a request could be sent now: the provider needs no key, or
    /// its key is set.
    #[serde(default)]
    pub available: bool,
}

/// An API key in an operation: its `Debug` never shows it, so logging an
/// operation cannot leak it.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    pub fn new(text: impl Into<String>) -> Secret {
        Secret(text.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(<hidden>)")
    }
}

/// Where a provider's key comes from (never the key itself).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyOrigin {
    /// An environment variable (`ProviderEntry::key_env` names it).
    Env,
    /// The key `uji login` saved.
    Stored,
    /// The provider takes no key (a local server).
    NotNeeded,
    Missing,
}

/// One provider a frontend can offer to log in to (`list_providers`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderEntry {
    pub id: String,
    #[serde(default)]
    pub name: String,
    pub key: KeyOrigin,
    /// The variable the key comes from (`key: env`), else the one it would
    /// be read from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_env: Option<String>,
    /// Whether a key is checked with the provider before it is saved.
    #[serde(default)]
    pub checks_key: bool,
}

/// What a `login` was answered with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoginResult {
    pub provider: String,
    /// `accepted` (the provider took the key), `unchecked` (the check could
    /// not be made: `note` says why) or `no_check` (the provider offers
    /// none).
    pub check: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The file the key was saved in.
    pub path: String,
    /// The variable that overrides the saved key while it is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overridden_by: Option<String>,
}

/// A slash command a frontend can offer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandInfo {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// `uji` for built-in commands, else the plugin (`lua`...) that added it.
    #[serde(default)]
    pub source: String,
}

/// A tool as a frontend shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolInfo {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verb: Option<String>,
}

/// Everything a frontend needs to draw a session: the first event, and the
/// event after every switch to another session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionConfigured {
    /// [`PROTOCOL_VERSION`] of the uji that sent it.
    pub protocol: u32,
    pub id: String,
    #[serde(default)]
    pub resumed: bool,
    pub cwd: String,
    #[serde(default)]
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<ModelState>,
    /// The visible history of a resumed session (hidden messages left out).
    #[serde(default)]
    pub history: Vec<StoredMessage>,
    #[serde(default)]
    pub commands: Vec<CommandInfo>,
    /// Key bindings from the config (`uji.keymap.add`), as given.
    #[serde(default)]
    pub keymap: Vec<Value>,
    /// How a screen behaves (`uji.ui.configure`).
    #[serde(default)]
    pub ui: UiSettings,
    #[serde(default)]
    pub tools: Vec<ToolInfo>,
    /// Tokens the session used so far.
    #[serde(default)]
    pub usage: Usage,
    /// The approval mode in force (protocol 6).
    #[serde(default)]
    pub mode: ApprovalMode,
    /// Status-line items plugins set (`uji.status.add`), by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub status: BTreeMap<String, String>,
}

/// How an approval question ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Resolution {
    /// The frontend answered (`decision` says how).
    Answered,
    /// Nobody answered in time: denied.
    TimedOut,
    /// An interrupt or shutdown withdrew it: the call did not run.
    Withdrawn,
}

/// How loud a notice is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoticeLevel {
    #[default]
    Info,
    Warn,
    Error,
}

/// What a frontend receives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// First event, and again after a switch to another session.
    SessionConfigured(Box<SessionConfigured>),
    /// The operation `op_id` was carried out (or accepted, for work that
    /// follows as events). `result` holds what it returns, if anything.
    Ack {
        op_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        result: Option<Value>,
    },
    /// The operation `op_id` failed; `message` says why and what to do.
    Error {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        op_id: Option<String>,
        message: String,
    },
    /// A turn begins for this user message.
    TurnStarted {
        #[serde(default)]
        text: String,
    },
    /// A message was saved to the session (user, assistant, tool, shell,
    /// error, compaction).
    Message {
        message: StoredMessage,
    },
    /// Streamed answer text.
    Delta {
        text: String,
    },
    /// Streamed reasoning text.
    Reasoning {
        text: String,
    },
    /// The model request failed and is retried after `wait_ms`: drop the
    /// text and reasoning streamed since the request began. `message` is
    /// the line to show ("request failed (…), retrying in 2s (1/5)"); no
    /// notice repeats it, so a screen can update one line per retry.
    StreamRetry {
        attempt: u32,
        wait_ms: u64,
        #[serde(default)]
        reason: String,
        #[serde(default)]
        message: String,
    },
    /// A tool call passed the gate's decision: `decision` says which,
    /// `because` names the rule, hook or fallback.
    ToolStarted {
        call_id: String,
        name: String,
        subject: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        verb: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        decision: Option<GateDecision>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        because: Option<String>,
    },
    /// A line of a running tool's output.
    Progress {
        call_id: String,
        tool: String,
        line: String,
    },
    /// What a subagent the `subagent` call `call_id` runs did: one line of
    /// its `uji run --json` stream (docs/headless.md), tagged with the
    /// child's session and agent.
    Subagent {
        call_id: String,
        /// The child session's id.
        session: String,
        agent: String,
        line: Value,
    },
    /// A tool call ended (ran, was refused or interrupted).
    ToolFinished {
        call_id: String,
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        diff: Option<FileDiff>,
        #[serde(default)]
        is_error: bool,
    },
    /// A question for the user; answer with an `approval` operation.
    ApprovalRequest {
        call_id: String,
        tool: String,
        verb: String,
        subject: String,
        question: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        diff: Option<FileDiff>,
        /// The call's arguments, for frontends that list them.
        #[serde(default, skip_serializing_if = "Value::is_null")]
        args: Value,
        /// The decisions this question accepts.
        #[serde(default)]
        answers: Vec<ApprovalDecision>,
        /// For a question that is not about a tool call (e.g. trusting a
        /// project's `.mcp.json`): what each decision means, by decision
        /// name, to show instead of the usual words. A denial then needs
        /// no guidance.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        labels: BTreeMap<String, String>,
        /// The subagent whose call this is (`reviewer`); absent for the
        /// session's own calls.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<String>,
    },
    ApprovalResolved {
        call_id: String,
        resolution: Resolution,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        decision: Option<ApprovalDecision>,
    },
    /// Tokens used, after each model answer.
    Usage {
        /// This turn so far.
        turn: Usage,
        /// The whole session.
        session: Usage,
        /// What this run's requests cost so far, in US dollars (protocol 8);
        /// none when a model has no price (docs/budgets.md).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost: Option<f64>,
        /// Tokens the last request read (what the context holds).
        context_used: u64,
        context_window: u64,
    },
    /// The user messages waiting for the running turn to finish.
    QueueChanged {
        queued: Vec<String>,
    },
    ModelChanged {
        model: ModelState,
    },
    /// The approval mode changed (protocol 6), by `set_mode` or a plugin.
    ModeChanged {
        mode: ApprovalMode,
    },
    TitleChanged {
        title: String,
    },
    /// Older messages were summarised: the history up to `through` (a seq)
    /// reaches the model as the summary.
    Compacted {
        messages: u64,
        through: u64,
    },
    Notice {
        text: String,
        #[serde(default)]
        level: NoticeLevel,
        /// The plugin that sent it; none for uji itself.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        source: Option<String>,
    },
    /// A plugin set (`text`) or removed (no `text`) a status-line item.
    Status {
        name: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
    },
    /// The session's slash commands changed while it ran (e.g. a Lua
    /// `uji.command.add` from a hook or a command): the whole list, as in
    /// `session_configured`.
    CommandsChanged {
        commands: Vec<CommandInfo>,
    },
    /// A turn ended: its final text, or why it failed.
    TurnFinished {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
        #[serde(default)]
        interrupted: bool,
        usage: Usage,
        /// The budget limit that stopped the turn (protocol 8; `error` says
        /// how to raise it).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        budget: Option<BudgetLimit>,
        /// What the session's requests cost so far, in US dollars, at the
        /// models' prices (protocol 8); none when a model has no price.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost: Option<f64>,
    },
    /// A background job started (or a command moved to the background).
    JobStarted {
        job: JobInfo,
    },
    /// The latest line of a job's output, paced like `progress`.
    JobOutput {
        id: u64,
        line: String,
    },
    /// A job ended; `job.state` says how. A `notice` says so too.
    JobFinished {
        job: JobInfo,
    },
    /// A plugin asks the person something (protocol 7; only frontends that
    /// said `hello` with `dialogs: true` get it). Show one at a time, in
    /// order; answer with `answer_dialog`, or `refuse_dialog` a kind you
    /// cannot show.
    Dialog {
        dialog_id: String,
        kind: DialogKind,
        title: String,
        /// A select's items.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        items: Vec<String>,
        /// A select's item the list opens on.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        current: Option<usize>,
        /// A prompt's prefilled text.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        value: Option<String>,
        /// A prompt whose text is masked (a password, a key).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        hidden: bool,
        /// A confirm's details, shown under the title.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        body: Option<String>,
    },
    /// The dialog is closed (protocol 7): `answered` (`answer` says how),
    /// `timed_out`, or `withdrawn` (the session ended, or the plugin's
    /// call went away): take it off the screen.
    DialogResolved {
        dialog_id: String,
        resolution: Resolution,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        answer: Option<DialogAnswer>,
    },
    /// The session ended; no more events.
    Closed,
    /// A plugin asked to start uji again on this session (`uji.reload()`,
    /// `/reload`, `/sync`), to load the configuration afresh. A frontend
    /// that can (the screen) ends the session and starts `uji resume --id`
    /// on it, keeping the draft; others ignore it.
    Reload,
    /// An event this frontend does not know (from a newer uji): skip it.
    #[serde(other)]
    Unknown,
}

fn yes() -> bool {
    true
}

/// A budget's limit (docs/budgets.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetLimit {
    Tokens,
    Cost,
    Turns,
    ToolCalls,
    Wall,
}

impl BudgetLimit {
    pub fn as_str(self) -> &'static str {
        match self {
            BudgetLimit::Tokens => "tokens",
            BudgetLimit::Cost => "cost",
            BudgetLimit::Turns => "turns",
            BudgetLimit::ToolCalls => "tool_calls",
            BudgetLimit::Wall => "wall",
        }
    }
}

impl Event {
    pub fn notice(level: NoticeLevel, text: impl Into<String>) -> Event {
        Event::Notice {
            text: text.into(),
            level,
            source: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_operations_and_fields_are_tolerated() {
        let sub: Submission =
            serde_json::from_value(json!({"id": "7", "type": "teleport", "to": "mars"})).unwrap();
        assert_eq!(sub.op, Op::Unknown);
        assert_eq!(sub.id.as_deref(), Some("7"));
        let sub: Submission =
            serde_json::from_value(json!({"type": "user_message", "text": "hi", "mood": "happy"}))
                .unwrap();
        assert_eq!(sub.id, None);
        assert_eq!(
            sub.op,
            Op::UserMessage {
                text: "hi".into(),
                images: vec![],
                delivery: Delivery::Steer
            }
        );
    }

    #[test]
    fn commands_changed_carries_the_whole_list() {
        let event: Event = serde_json::from_value(json!({"type": "commands_changed",
            "commands": [{"name": "deploy", "description": "Deploy the site", "source": "lua"}]}))
        .unwrap();
        let Event::CommandsChanged { commands } = event else {
            panic!("{event:?}");
        };
        assert_eq!(commands[0].name, "deploy");
        assert_eq!(commands[0].source, "lua");
    }

    #[test]
    fn a_gate_decision_reads_as_written_and_a_newer_one_is_unknown() {
        let started = |decision: &str| -> Event {
            serde_json::from_value(json!({
                "type": "tool_started", "call_id": "c1", "name": "run_command",
                "subject": "ls", "decision": decision, "because": "rule"
            }))
            .unwrap()
        };
        for (text, decision) in [
            ("allow", GateDecision::Allow),
            ("ask", GateDecision::Ask),
            ("deny", GateDecision::Deny),
            ("defer", GateDecision::Unknown),
        ] {
            let Event::ToolStarted { decision: read, .. } = started(text) else {
                panic!("{text}: not tool_started");
            };
            assert_eq!(read, Some(decision), "{text}");
        }
        let written = serde_json::to_value(started("deny")).unwrap();
        assert_eq!(written["decision"], "deny");
    }

    #[test]
    fn unknown_events_and_fields_are_tolerated() {
        let event: Event = serde_json::from_value(json!({"type": "hologram", "depth": 3})).unwrap();
        assert_eq!(event, Event::Unknown);
        let event: Event =
            serde_json::from_value(json!({"type": "delta", "text": "a", "colour": "red"})).unwrap();
        assert_eq!(event, Event::Delta { text: "a".into() });
    }

    #[test]
    fn a_dialog_and_its_answer_read_as_written_and_newer_values_are_unknown() {
        let event: Event =
            serde_json::from_value(json!({"type": "dialog", "dialog_id": "dialog-1",
            "kind": "select", "title": "Branch", "items": ["main", "dev"], "current": 1}))
            .unwrap();
        let Event::Dialog {
            kind,
            items,
            current,
            hidden,
            ..
        } = &event
        else {
            panic!("{event:?}");
        };
        assert_eq!(
            (*kind, items.len(), *current, *hidden),
            (DialogKind::Select, 2, Some(1), false)
        );
        let kind: DialogKind = serde_json::from_value(json!("colour")).unwrap();
        assert_eq!(kind, DialogKind::Unknown);
        let sub: Submission = serde_json::from_value(json!({"id": "9", "type": "answer_dialog",
            "dialog_id": "dialog-1", "answer": {"type": "selected", "index": 1}}))
        .unwrap();
        assert_eq!(
            sub.op,
            Op::AnswerDialog {
                dialog_id: "dialog-1".into(),
                answer: DialogAnswer::Selected { index: 1 }
            }
        );
        assert_eq!(sub.id.as_deref(), Some("9"));
        assert_eq!(
            serde_json::to_value(DialogAnswer::Cancelled).unwrap(),
            json!({"type": "cancelled"})
        );
        let newer: DialogAnswer = serde_json::from_value(json!({"type": "drawn"})).unwrap();
        assert_eq!(newer, DialogAnswer::Unknown);
        let old: Submission = serde_json::from_value(json!({"type": "hello"})).unwrap();
        assert_eq!(old.op, Op::Hello { dialogs: false });
    }

    #[test]
    fn a_login_key_never_shows_in_debug_output() {
        let sub: Submission = serde_json::from_value(
            json!({"id": "1", "type": "login", "provider": "groq", "key": "gsk-very-secret"}),
        )
        .unwrap();
        let Op::Login { key, .. } = &sub.op else {
            panic!("not a login: {sub:?}");
        };
        assert_eq!(key.expose(), "gsk-very-secret");
        assert!(!format!("{sub:?}").contains("gsk-very-secret"));
        assert_eq!(
            serde_json::to_value(&sub).unwrap()["key"],
            "gsk-very-secret"
        );
    }

    #[test]
    fn the_protocol_1_approval_still_parses() {
        let sub: Submission = serde_json::from_value(
            json!({"type": "approval", "call_id": "c1", "allow": false, "guidance": "no"}),
        )
        .unwrap();
        assert_eq!(
            sub.op,
            Op::Approval {
                call_id: "c1".into(),
                decision: None,
                allow: Some(false),
                guidance: Some("no".into())
            }
        );
    }

    #[test]
    fn session_configured_is_flat_json() {
        let event = Event::SessionConfigured(Box::new(SessionConfigured {
            protocol: PROTOCOL_VERSION,
            id: "s".into(),
            resumed: false,
            cwd: "/w".into(),
            title: String::new(),
            model: None,
            history: vec![],
            commands: vec![],
            keymap: vec![],
            ui: UiSettings::default(),
            tools: vec![],
            usage: Usage::default(),
            mode: ApprovalMode::Ask,
            status: BTreeMap::new(),
        }));
        let json = serde_json::to_value(&event).unwrap();
        assert_eq!(json["type"], "session_configured");
        assert_eq!(json["protocol"], PROTOCOL_VERSION);
        let back: Event = serde_json::from_value(json).unwrap();
        assert_eq!(back, event);
    }
}
