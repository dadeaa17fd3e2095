//! Background jobs as the session sees them. The tools plugin owns the
//! processes and reports every start, output line and end (`jobs.report`);
//! the session passes them on as events, and puts a finished job's report
//! into the conversation as a hidden user message, which the next request
//! carries (saved with the session like any message). When the session is
//! idle and `wake` is on, the report starts a turn.

use std::sync::Arc;

use uji_host::Registry;
use uji_protocol::frontend::{Event, NoticeLevel};
use uji_protocol::jobs::{
    JobEvent, JobInfo, JobReport, JobState, JobsBackground, JobsList, JobsStopAll, StopRequest,
    StoppedBy, WAKE_DEFAULT_KEY, WAKE_KEY,
};
use uji_protocol::services::Service;
use uji_protocol::session::MessageBody;

use super::{Reply, Shared, Work, answered};
use uji_protocol::frontend::answers::{Backgrounded, JobList, JobStopped};

/// What a frontend reads when the tools plugin is missing.
const NO_JOBS: &str = "background jobs come with the tools plugin (libuji_plugin_tools), which is \
                       not loaded; `uji plugins` says why";

/// Calls the tools plugin's service `S`; says so when it is not loaded.
pub fn ask<S: Service>(registry: &Registry, request: &S) -> Result<S::Answer, String> {
    if !registry.serves(S::METHOD) {
        return Err(NO_JOBS.to_string());
    }
    registry.call(uji_host::CORE_CALLER, request)
}

/// Stops the jobs `session` started (a subagent's, when its turn ends: jobs
/// never outlive the session that started them), each with its process
/// tree. Blocks until they ended; harmless without the tools plugin.
pub fn stop_session(registry: &Registry, session: &str) {
    if !registry.serves(JobsList::METHOD) {
        return;
    }
    let jobs = ask(registry, &JobsList {}).unwrap_or_default();
    for job in jobs {
        let running = matches!(job.state, JobState::Running);
        if running && job.session.as_deref() == Some(session) {
            let stop = StopRequest {
                id: job.id,
                by: StoppedBy::Uji,
            };
            if let Err(e) = ask(registry, &stop) {
                tracing::warn!("job {} of subagent {session} not stopped: {e}", job.id);
            }
        }
    }
}

/// Stops every job and its process tree (quit, end of `uji run`, a
/// signal, a session switch). Harmless without the tools plugin.
pub fn stop_all(registry: &Registry) {
    if registry.serves(JobsStopAll::METHOD) {
        let _ = ask(registry, &JobsStopAll {});
    }
}

/// Whether a report starts a turn in an idle session: `uji.jobs.configure`'s
/// `wake`, else the launcher's default for the frontend.
fn wake(registry: &Registry) -> bool {
    [WAKE_KEY, WAKE_DEFAULT_KEY]
        .iter()
        .find_map(|key| registry.config(key).and_then(|v| v.as_bool()))
        .unwrap_or(false)
}

/// "job 2 (`npm test`) exited with code 1"
fn notice_text(job: &JobInfo) -> String {
    let command: String = job.command.split_whitespace().collect::<Vec<_>>().join(" ");
    let command = if command.chars().count() > 60 {
        format!("{}…", command.chars().take(59).collect::<String>())
    } else {
        command
    };
    format!("job {} (`{command}`) {}", job.id, job.state.describe())
}

impl Shared {
    pub(super) fn list_jobs(&self) -> Result<Reply, String> {
        let jobs = ask(&self.sessions.registry, &JobsList {})?;
        Reply::answer(&JobList { jobs })
    }

    /// Stops a job from the frontend; its end may take a moment, so the
    /// router goes on meanwhile.
    pub(super) fn stop_job(
        self: &Arc<Self>,
        op_id: Option<&str>,
        id: u64,
    ) -> Result<Reply, String> {
        let shared = Arc::clone(self);
        let op_id = op_id.map(str::to_string);
        tokio::task::spawn_blocking(move || {
            let request = StopRequest {
                id,
                by: StoppedBy::User,
            };
            let result = ask(&shared.sessions.registry, &request)
                .and_then(|job| answered(&JobStopped { job }));
            shared.reply(op_id.as_deref(), result);
        });
        Ok(Reply::Later)
    }

    pub(super) fn background(&self) -> Result<Reply, String> {
        let running = ask(&self.sessions.registry, &JobsBackground {})?;
        Reply::answer(&Backgrounded { running })
    }

    pub(super) fn job_event(&self, event: JobEvent) {
        match event {
            JobEvent::Started { job } => self.emit(Event::JobStarted { job }),
            JobEvent::Output { id, line } => self.emit(Event::JobOutput { id, line }),
            JobEvent::Finished { job, report } => self.job_finished(job, report),
        }
    }

    fn job_finished(&self, job: JobInfo, report: Option<String>) {
        let level = match job.state {
            JobState::Exited { code: 0 } | JobState::Stopped { .. } => NoticeLevel::Info,
            _ => NoticeLevel::Warn,
        };
        self.emit(Event::notice(level, notice_text(&job)));
        // A subagent's job reports to that subagent while it runs (its
        // next request carries it), and to no other session: the parent's
        // model never started it.
        let subagent = job
            .session
            .clone()
            .filter(|session| *session != self.snapshot.borrow().id);
        self.emit(Event::JobFinished { job });
        let Some(report) = report else { return };
        if let Some(subagent) = subagent {
            if let Some(link) = self.sessions.gate.subagent_links().get(&subagent) {
                link.control.save_message(MessageBody::User {
                    text: report,
                    images: Vec::new(),
                    hidden: true,
                });
            }
            return;
        }
        self.control.save_message(MessageBody::User {
            text: report,
            images: Vec::new(),
            hidden: true,
        });
        if !self.busy() {
            let work = if wake(&self.sessions.registry) {
                Work::Wake
            } else {
                Work::Apply
            };
            let _ = self.send_work(work);
        }
    }
}

/// `jobs.report` from the tools plugin, for as long as the session lives.
pub(super) fn install(shared: &Arc<Shared>) {
    super::serve_typed(shared, |shared, JobReport(event)| {
        shared.job_event(event);
        Ok(())
    });
}
