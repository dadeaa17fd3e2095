//! The model's tools for its jobs: `job_output` and `stop_job`. Both only
//! reach jobs this uji started, so they are allowed without asking.

use serde_json::{Value, json};
use uji_sdk::protocol::jobs::StoppedBy;
use uji_sdk::{Tool, ToolCall, ToolContext, ToolOutput, ToolSpec};

use super::{Job, Jobs, status_line};

const ID_SCHEMA_DESCRIPTION: &str = "The job's number, as in `job 3`";

fn id_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "id": {"type": "integer", "minimum": 1, "description": ID_SCHEMA_DESCRIPTION}
        },
        "required": ["id"]
    })
}

/// The job id of a call: `3`, `"3"` or `"job 3"`.
fn job_id(args: &Value) -> Result<u64, String> {
    let bad = || "`id` must be a job's number, e.g. {\"id\": 3} for job 3".to_string();
    match args.get("id") {
        Some(Value::Number(n)) => n.as_u64().filter(|&n| n >= 1).ok_or_else(bad),
        Some(Value::String(s)) => {
            let digits = s.trim().trim_start_matches("job").trim();
            digits
                .parse()
                .ok()
                .filter(|&n: &u64| n >= 1)
                .ok_or_else(bad)
        }
        _ => Err(bad()),
    }
}

/// "job 3" for policy rules and the transcript.
fn job_subject(args: &Value) -> String {
    match job_id(args) {
        Ok(id) => format!("job {id}"),
        Err(_) => "job ?".to_string(),
    }
}

/// The output the model has not read, then the job's status.
fn unread_and_status(job: &Job) -> String {
    let unread = job.take_unread();
    let status = status_line(&job.info());
    if unread.is_empty() {
        format!("(no new output)\n{status}")
    } else {
        format!("{unread}\n{status}")
    }
}

/// `job_output { id }` over the jobs of a [`Jobs`] table.
#[derive(Clone, Default)]
pub struct JobOutput {
    jobs: Jobs,
}

impl JobOutput {
    pub fn new(jobs: &Jobs) -> JobOutput {
        JobOutput { jobs: jobs.clone() }
    }
}

impl Tool for JobOutput {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "job_output",
            "Read a background job's output printed since the last read (the last 2000 lines \
             or 50 KB of it; the full output is in the file the result names) and its status: \
             running, or how it ended with its exit code. Jobs come from run_command with \
             `run_in_background`, or a command still running at its timeout.",
        )
        .allow()
        .read_only()
        .verb("Job output")
        .parameters(id_schema())
    }

    fn subject(&self, args: &Value) -> String {
        job_subject(args)
    }

    fn run(&self, call: ToolCall, _ctx: &ToolContext) -> ToolOutput {
        let id = match job_id(&call.args) {
            Ok(id) => id,
            Err(e) => return ToolOutput::error(e),
        };
        match own_job(&self.jobs, id, &call) {
            Ok(job) => {
                let text = unread_and_status(&job);
                let summary = status_line(&job.info());
                ToolOutput {
                    text,
                    summary: Some(summary),
                    ..Default::default()
                }
            }
            Err(e) => ToolOutput::error(e),
        }
    }
}

/// Job `id` as the calling session may have it: a session reads and stops
/// only the jobs it started (a subagent's are its own, its parent's are
/// the parent's); a call of no session (`uji tool run`) may have any.
fn own_job(jobs: &Jobs, id: u64, call: &ToolCall) -> Result<std::sync::Arc<Job>, String> {
    let job = jobs.get(id).ok_or_else(|| jobs.no_such_job(id))?;
    match (&job.session, &call.session) {
        (Some(owner), Some(caller)) if owner != caller => Err(format!(
            "job {id} was started by another session (a subagent's or its parent's): a session reads and stops only the jobs it started"
        )),
        _ => Ok(job),
    }
}

/// `stop_job { id }` over the jobs of a [`Jobs`] table.
#[derive(Clone, Default)]
pub struct StopJob {
    jobs: Jobs,
}

impl StopJob {
    pub fn new(jobs: &Jobs) -> StopJob {
        StopJob { jobs: jobs.clone() }
    }
}

impl Tool for StopJob {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "stop_job",
            "Stop a background job: kill it and every process it started (servers, watchers \
             and their children included). Returns the output it printed since the last read \
             and how it ended. Stop the jobs you no longer need: at most 8 run at once.",
        )
        .allow()
        .verb("Stop job")
        .parameters(id_schema())
    }

    fn subject(&self, args: &Value) -> String {
        job_subject(args)
    }

    fn run(&self, call: ToolCall, _ctx: &ToolContext) -> ToolOutput {
        let id = match job_id(&call.args) {
            Ok(id) => id,
            Err(e) => return ToolOutput::error(e),
        };
        let was_running = match own_job(&self.jobs, id, &call) {
            Ok(job) => job.output().state.is_running(),
            Err(e) => return ToolOutput::error(e),
        };
        match self.jobs.stop(id, StoppedBy::Model) {
            Ok(job) => {
                let mut text = unread_and_status(&job);
                if !was_running {
                    text.push_str(" (it had already ended)");
                }
                ToolOutput {
                    text,
                    summary: Some(status_line(&job.info())),
                    ..Default::default()
                }
            }
            Err(e) => ToolOutput::error(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_read_from_numbers_and_job_names() {
        assert_eq!(job_id(&json!({"id": 3})), Ok(3));
        assert_eq!(job_id(&json!({"id": "job 4"})), Ok(4));
        assert_eq!(job_id(&json!({"id": " 5 "})), Ok(5));
        for bad in [
            json!({}),
            json!({"id": 0}),
            json!({"id": "x"}),
            json!({"id": -1}),
        ] {
            assert!(job_id(&bad).is_err(), "{bad}");
        }
        assert_eq!(job_subject(&json!({"id": 2})), "job 2");
    }
}
