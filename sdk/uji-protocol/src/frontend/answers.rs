//! What each operation's `ack` carries, typed: the server builds its answer
//! from these types and frontends decode `Event::Ack::result` into them, so
//! neither side looks fields up by name.
//!
//! ```
//! use uji_protocol::frontend::answers::{self, SessionList};
//!
//! let result = serde_json::json!({"sessions": [
//!     {"id": "s1", "title": "fix the build", "cwd": "/w", "created": 1, "updated": 2}
//! ]});
//! let list: SessionList = answers::decode(Some(&result)).unwrap();
//! assert_eq!(list.sessions[0].title, "fix the build");
//! ```
//!
//! Operations without an [`Answer`] (an interrupt, an approval, a user
//! message…) are acked with no `result`.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ModelEntry, ModelState, ProviderEntry};
use crate::jobs::JobInfo;

pub use super::LoginResult;

/// The answer an operation's ack carries. `OP` is the operation's type as
/// it appears in JSON (`Op::kind`), so each answer names its question.
pub trait Answer: Serialize + DeserializeOwned {
    const OP: &'static str;
}

/// Why an ack's `result` is not the answer a frontend expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the answer to `{op}` is not what this frontend expects: {message}")]
pub struct AnswerError {
    pub op: &'static str,
    pub message: String,
}

/// Decodes an ack's `result` as `A`. A missing result decodes as `{}` (an
/// answer whose fields all have defaults still decodes).
pub fn decode<A: Answer>(result: Option<&Value>) -> Result<A, AnswerError> {
    let value = result
        .cloned()
        .unwrap_or_else(|| Value::Object(Default::default()));
    serde_json::from_value(value).map_err(|e| AnswerError {
        op: A::OP,
        message: e.to_string(),
    })
}

/// Encodes `answer` as an ack's `result`.
pub fn encode<A: Answer>(answer: &A) -> Result<Value, AnswerError> {
    serde_json::to_value(answer).map_err(|e| AnswerError {
        op: A::OP,
        message: e.to_string(),
    })
}

macro_rules! answers {
    ($($ty:ty => $op:literal),* $(,)?) => {
        $(impl Answer for $ty { const OP: &'static str = $op; })*
    };
}

answers! {
    ModelSet => "set_model",
    ModeSet => "set_mode",
    SessionSwitched => "new_session",
    SessionList => "list_sessions",
    ModelList => "list_models",
    ProviderList => "list_providers",
    LoginResult => "login",
    LoggedOut => "logout",
    ShellFinished => "shell",
    CompactDone => "compact",
    Rewound => "rewind",
    Unqueued => "unqueue",
    CommandOutput => "run_command",
    JobList => "list_jobs",
    JobStopped => "stop_job",
    Backgrounded => "background",
}

/// `set_model`: the model the next request uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelSet {
    pub model: ModelState,
}

/// `set_mode`: the approval mode in force now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModeSet {
    pub mode: crate::ApprovalMode,
}

/// `new_session` and `resume_session`: the session that runs now (its
/// `session_configured` came first).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionSwitched {
    pub id: String,
}

/// How many leading characters of a session id a frontend shows for it
/// (the sessions picker); `resume_session` and `/resume` take them.
pub const SHORT_ID: usize = 8;

/// One saved session (`list_sessions`, `uji list`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionSummary {
    pub id: String,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub cwd: String,
    /// Milliseconds since the epoch.
    #[serde(default)]
    pub created: u64,
    /// Last write, milliseconds since the epoch.
    #[serde(default)]
    pub updated: u64,
    /// The session this one works for, when it is a subagent's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
}

/// `list_sessions`: newest first.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SessionList {
    #[serde(default)]
    pub sessions: Vec<SessionSummary>,
}

/// `list_models`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ModelList {
    #[serde(default)]
    pub models: Vec<ModelEntry>,
}

/// `list_providers`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ProviderList {
    #[serde(default)]
    pub providers: Vec<ProviderEntry>,
}

/// `logout`: whether a saved key was removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LoggedOut {
    #[serde(default)]
    pub removed: bool,
}

/// `shell`: how the `!cmd` ended (its output came as `progress` and a
/// `message`); none when it was killed or could not start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ShellFinished {
    #[serde(default)]
    pub exit_code: Option<i32>,
}

/// `compact`: how many messages were summarised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CompactDone {
    #[serde(default)]
    pub messages: u64,
}

/// `rewind`: how many messages left the conversation, and the text of
/// the user's message it went back before (to edit and send again).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Rewound {
    pub dropped: u64,
    #[serde(default)]
    pub text: String,
    /// With `code`: what was put back, file by file (protocol 8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restored: Option<String>,
}

/// `unqueue`: the text of the message taken back; none when the queue
/// was empty.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Unqueued {
    #[serde(default)]
    pub text: Option<String>,
}

/// `run_command`: what the command printed, for the frontend to show.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct CommandOutput {
    #[serde(default)]
    pub output: String,
}

/// `list_jobs`: running jobs first.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct JobList {
    #[serde(default)]
    pub jobs: Vec<JobInfo>,
}

/// `stop_job`: the job as it ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobStopped {
    pub job: JobInfo,
}

/// `background`: how many foreground commands moved (0: none ran).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Backgrounded {
    #[serde(default)]
    pub running: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_answer_round_trips_through_an_ack_result() {
        let answer = JobList { jobs: vec![] };
        let value = encode(&answer).unwrap();
        assert_eq!(value, json!({"jobs": []}));
        assert_eq!(decode::<JobList>(Some(&value)).unwrap(), answer);
    }

    #[test]
    fn an_answer_of_the_wrong_shape_names_its_operation() {
        let error = decode::<JobStopped>(Some(&json!({"job": 3}))).unwrap_err();
        assert_eq!(error.op, "stop_job");
        assert!(error.to_string().contains("stop_job"), "{error}");
    }

    #[test]
    fn a_missing_result_decodes_when_every_field_has_a_default() {
        assert_eq!(
            decode::<LoggedOut>(None).unwrap(),
            LoggedOut { removed: false }
        );
        assert!(decode::<SessionSwitched>(None).is_err());
    }
}
