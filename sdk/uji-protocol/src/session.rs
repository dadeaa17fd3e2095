//! Sessions as stored and as frontends see them: messages, the operations a
//! frontend submits and the events it receives.
//!
//! The `--json` output of `uji run` is a separate, smaller and versioned
//! schema built from these at the edge (see `headless`), so this module may
//! grow without breaking scripts.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::wire::{ToolCallRequest, Usage};
use crate::{FileDiff, Image};

/// The first line of a session file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionHeader {
    /// Format version of the file.
    pub version: u32,
    pub id: String,
    pub cwd: String,
    #[serde(default)]
    pub title: String,
    /// Milliseconds since the Unix epoch.
    pub created: u64,
}

/// What a message says, by role.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum MessageBody {
    User {
        text: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<Image>,
        /// Sent to the model but not shown (e.g. a before_stop nudge).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        hidden: bool,
    },
    Assistant {
        #[serde(default)]
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reasoning: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCallRequest>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<Usage>,
        /// `provider/model` that answered.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        replay: Option<Value>,
    },
    Tool {
        tool_call_id: String,
        name: String,
        content: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<Image>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        diff: Option<FileDiff>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        subject: Option<String>,
    },
    /// A failure or an interruption, kept in the transcript; never sent to
    /// the model.
    Error { text: String },
    /// A summary that replaces every message up to `through` (a seq) when
    /// talking to the model. The raw history stays in the file.
    Compaction { summary: String, through: u64 },
}

/// One saved message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredMessage {
    /// Position in the session, from 1.
    pub seq: u64,
    /// Milliseconds since the Unix epoch.
    pub time: u64,
    #[serde(flatten)]
    pub body: MessageBody,
}

/// What a frontend sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Op {
    /// Start a turn (or queue it while one runs).
    UserMessage {
        text: String,
        #[serde(default)]
        images: Vec<Image>,
    },
    /// Stop the running turn.
    Interrupt,
    /// Answer an approval question.
    Approval {
        call_id: String,
        allow: bool,
        #[serde(default)]
        guidance: Option<String>,
    },
    /// Summarise older messages now.
    Compact,
    /// End the session.
    Shutdown,
}

/// What a frontend receives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    Session {
        id: String,
        resumed: bool,
    },
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
    ToolStarted {
        call_id: String,
        name: String,
        subject: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        verb: Option<String>,
    },
    Progress {
        call_id: String,
        tool: String,
        line: String,
    },
    ApprovalRequest {
        call_id: String,
        tool: String,
        verb: String,
        subject: String,
        question: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        diff: Option<FileDiff>,
    },
    Notice {
        text: String,
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
    },
    /// The session ended; no more events.
    Closed,
}
