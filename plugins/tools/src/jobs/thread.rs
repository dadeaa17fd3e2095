//! The thread that reads one job until it ends: output into the job's
//! captures, the latest line to the host about ten times a second, and the
//! stop asked for or the end of its lifetime carried out.

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::{Duration, Instant};

use uji_sdk::protocol::jobs::{JobEvent, JobState};

use super::{Job, Jobs, finished_report};
use crate::process::{Pumped, Running};

/// How often a stop request and the lifetime are checked.
const POLL: Duration = Duration::from_millis(50);
/// At most one output line goes to the host per job in this time.
const OUTPUT_EVERY: Duration = Duration::from_millis(100);

pub fn start(jobs: Jobs, job: Arc<Job>, running: Running, lifetime: Duration) {
    let spawned = std::thread::Builder::new()
        .name(format!("uji-job-{}", job.id))
        .spawn({
            let job = Arc::clone(&job);
            let jobs = jobs.clone();
            move || run(&jobs, &job, running, lifetime)
        });
    if spawned.is_err() {
        // The closure (and the command in it, whose guard kills its tree)
        // is gone: the job ended before it began.
        end(
            &jobs,
            &job,
            JobState::Stopped {
                by: uji_sdk::protocol::jobs::StoppedBy::Uji,
            },
        );
    }
}

fn run(jobs: &Jobs, job: &Job, mut running: Running, lifetime: Duration) {
    let deadline = running.started + lifetime;
    let mut sent = String::new();
    let mut last_sent = Instant::now() - OUTPUT_EVERY;
    let mut sink = |chunk: &[u8]| take_output(job, chunk);
    let state = loop {
        if let Some(by) = job.stop_requested() {
            running.kill(&mut sink);
            break JobState::Stopped { by };
        }
        if Instant::now() >= deadline {
            running.kill(&mut sink);
            break JobState::TimedOut {
                after_secs: lifetime.as_secs(),
            };
        }
        if let Pumped::Exited(status) = running.pump(POLL, &mut sink) {
            running.ended();
            break state_of(status);
        }
        if last_sent.elapsed() >= OUTPUT_EVERY {
            send_latest(jobs, job, &mut sent);
            last_sent = Instant::now();
        }
    };
    send_latest(jobs, job, &mut sent);
    end(jobs, job, state);
}

/// Passes a chunk to both captures and keeps the latest complete line.
fn take_output(job: &Job, chunk: &[u8]) {
    let mut out = job.output();
    let mut latest: Option<String> = None;
    out.log.push(chunk, &mut |line| {
        latest = Some(String::from_utf8_lossy(line).into_owned());
    });
    out.unread.push(chunk, &mut |_| {});
    if let Some(line) = latest {
        out.last_line = line;
    }
    drop(out);
    job.changed.notify_all();
}

fn send_latest(jobs: &Jobs, job: &Job, sent: &mut String) {
    let line = job.output().last_line.clone();
    if line != *sent {
        jobs.report(JobEvent::Output {
            id: job.id,
            line: line.clone(),
        });
        *sent = line;
    }
}

fn state_of(status: Option<ExitStatus>) -> JobState {
    match status.map(|s| (s.code(), s.signal())) {
        Some((Some(code), _)) => JobState::Exited { code },
        Some((None, Some(signal))) => JobState::Killed { signal },
        _ => JobState::Exited { code: -1 },
    }
}

/// Records the end, wakes whoever waits for it and tells the host.
fn end(jobs: &Jobs, job: &Job, state: JobState) {
    let mut out = job.output();
    let mut latest: Option<String> = None;
    out.log.finish(&mut |line| {
        latest = Some(String::from_utf8_lossy(line).into_owned());
    });
    out.unread.finish(&mut |_| {});
    if let Some(line) = latest {
        out.last_line = line;
    }
    out.state = state;
    out.ended = Some(Instant::now());
    drop(out);
    job.changed.notify_all();
    let info = job.info();
    let report_text = (!matches!(state, JobState::Stopped { .. })).then(|| finished_report(job));
    jobs.report(JobEvent::Finished {
        job: info,
        report: report_text,
    });
    job.output().told = true;
    job.changed.notify_all();
}
