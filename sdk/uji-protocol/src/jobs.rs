//! Background jobs: commands `run_command` started in the background (or
//! moved there at their timeout or by the user) that outlive the call.
//!
//! The tools plugin owns the processes; the core shows them to frontends and
//! reports to the model. They talk in these shapes:
//! - plugin → host: the service [`JobReport`] (`jobs.report`) for every
//!   start, output line (paced) and end;
//! - host or Lua → plugin: the services the tools plugin serves (ABI 1.1):
//!   [`JobsList`], [`StopRequest`], [`Settings`], [`JobsBackground`] and
//!   [`JobsStopAll`]. Without the tools plugin they fail as services uji
//!   does not offer.

use serde::{Deserialize, Serialize};

use crate::services::{Service, service};

/// A job lives this long unless its call gives a timeout.
pub const DEFAULT_LIFETIME_SECS: u64 = 30 * 60;
/// …and never longer than this.
pub const MAX_LIFETIME_SECS: u64 = 2 * 60 * 60;
/// Jobs running at once, unless `uji.jobs.configure({ max })` says otherwise.
pub const DEFAULT_MAX_JOBS: usize = 8;
/// The most `max` may be set to.
pub const MAX_MAX_JOBS: usize = 64;
/// Lines of a finished job's output its report to the model carries.
pub const REPORT_LINES: usize = 20;

/// `jobs.list`: the jobs kept, running first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobsList {}
service!(JobsList, "jobs.list", "{}", Vec<JobInfo>);

/// `jobs.background`: moves the running foreground commands to the
/// background (the TUI's Ctrl+Z); answers how many were running.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobsBackground {}
service!(JobsBackground, "jobs.background", "{}", u64);

/// `jobs.stop_all`: stops every job (quit, end of `uji run`, a session
/// switch); answers how many were running.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobsStopAll {}
service!(JobsStopAll, "jobs.stop_all", "{}", u64);

/// Config key: whether a job's report starts a turn when the session is
/// idle (set by `uji.jobs.configure({ wake })`).
pub const WAKE_KEY: &str = "jobs.wake";
/// Config key: the frontend's default for [`WAKE_KEY`] (the launcher sets
/// it: on for the TUI, off for `uji run` and other frontends).
pub const WAKE_DEFAULT_KEY: &str = "jobs.wake_default";

/// Who stopped a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StoppedBy {
    /// `/jobs`, `uji.jobs.stop`.
    User,
    /// The `stop_job` tool.
    Model,
    /// uji itself: quitting, the end of `uji run`, a session switch.
    Uji,
}

/// Where a job is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum JobState {
    Running,
    /// Ended on its own with this exit code.
    Exited {
        code: i32,
    },
    /// Ended by a signal nobody in uji sent.
    Killed {
        signal: i32,
    },
    /// Killed at the end of its lifetime.
    TimedOut {
        after_secs: u64,
    },
    Stopped {
        by: StoppedBy,
    },
}

impl JobState {
    pub fn is_running(self) -> bool {
        self == JobState::Running
    }

    /// "running", "exited with code 0", "stopped by the model"…
    pub fn describe(self) -> String {
        match self {
            JobState::Running => "running".to_string(),
            JobState::Exited { code } => format!("exited with code {code}"),
            JobState::Killed { signal } => format!("killed by signal {signal}"),
            JobState::TimedOut { after_secs } => {
                format!("stopped at the end of its {after_secs}s lifetime")
            }
            JobState::Stopped { by } => match by {
                StoppedBy::User => "stopped by the user".to_string(),
                StoppedBy::Model => "stopped by the model".to_string(),
                StoppedBy::Uji => "stopped by uji".to_string(),
            },
        }
    }
}

/// One job as frontends and Lua see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobInfo {
    /// The number in its name, "job N".
    pub id: u64,
    pub command: String,
    #[serde(flatten)]
    pub state: JobState,
    /// Milliseconds since the Unix epoch.
    pub started_ms: u64,
    /// How long it ran (so far).
    pub elapsed_ms: u64,
    /// The latest line of its output (cut to 1000 bytes).
    #[serde(default)]
    pub last_line: String,
    /// Complete lines of output so far.
    #[serde(default)]
    pub lines: u64,
    /// The file with its full output, once it was too long to keep in
    /// memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<String>,
    /// The session whose call started it (a subagent's jobs are stopped
    /// when its turn ends, and their reports go to no other session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
}

/// What the tools plugin tells the host about a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum JobEvent {
    Started {
        job: JobInfo,
    },
    /// The latest line, at most about ten a second per job.
    Output {
        id: u64,
        line: String,
    },
    Finished {
        job: JobInfo,
        /// The report for the model (exit status and the last lines);
        /// none when the user, the model or uji stopped it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        report: Option<String>,
    },
}

/// `jobs.report`: the tools plugin tells the running session about a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobReport(pub JobEvent);
service!(
    JobReport,
    "jobs.report",
    "{\"kind\": started|output|finished, …}",
    ()
);

/// `jobs.stop`: stops one job and its process tree; answers the job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StopRequest {
    pub id: u64,
    pub by: StoppedBy,
}
service!(
    StopRequest,
    "jobs.stop",
    "{\"id\": job number, \"by\": \"user\"}",
    JobInfo
);

/// `jobs.configure`, its request and its answer (the settings now in
/// force): what is not given stays.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    /// Start a turn with a finished job's report when the session is idle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wake: Option<bool>,
    /// Jobs running at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<usize>,
    /// Default lifetime in seconds of a job whose call gives no timeout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
}
service!(
    Settings,
    "jobs.configure",
    "{ wake = boolean, max = number, limit = seconds }",
    Settings
);

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn job_info_is_flat_json_with_its_state() {
        let info = JobInfo {
            id: 3,
            command: "npm run dev".into(),
            state: JobState::Exited { code: 2 },
            started_ms: 1,
            elapsed_ms: 2,
            last_line: "ready".into(),
            lines: 4,
            log: None,
            session: Some("s1".into()),
        };
        let value = serde_json::to_value(&info).unwrap();
        assert_eq!(value["state"], "exited");
        assert_eq!(value["code"], 2);
        assert_eq!(serde_json::from_value::<JobInfo>(value).unwrap(), info);
        let stopped = serde_json::to_value(JobState::Stopped {
            by: StoppedBy::Model,
        })
        .unwrap();
        assert_eq!(stopped, json!({"state": "stopped", "by": "model"}));
    }
}
