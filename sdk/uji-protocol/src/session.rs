//! Sessions as stored: the header and the messages. Frontends receive
//! messages in these shapes too (see [`crate::frontend`]).

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
    /// The session this one works for (`uji run --parent ID`: a subagent's
    /// run); such sessions are left out of `uji list` and the picker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
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
        /// The reasoning effort it was asked for, if one was chosen.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        effort: Option<String>,
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
        /// Why the call failed, where uji acts on it (a denied call is shown
        /// as denied). Absent in files written before it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error_kind: Option<crate::ToolErrorKind>,
    },
    /// A failure or an interruption, kept in the transcript; never sent to
    /// the model.
    Error { text: String },
    /// A summary that replaces every message up to `through` (a seq) when
    /// talking to the model. The raw history stays in the file.
    Compaction { summary: String, through: u64 },
    /// A command the user ran with `!cmd`: shown, never sent to the model.
    Shell {
        command: String,
        output: String,
        /// Exit code; none when it was killed or could not start.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i32>,
    },
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
