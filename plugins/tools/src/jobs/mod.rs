//! Background jobs: commands that run on after their `run_command` call
//! returned, each read by a thread of its own.
//!
//! A job keeps its output twice, both bounded like every tool result
//! (`uji_protocol::spill`): the whole output's tail with its spill file
//! (`log`, for the report at its end and the full output on disk), and the
//! part the model has not read yet (`unread`, a window whose note names the
//! same file), which `job_output` takes. Starts, output lines (about ten a
//! second) and ends go to the host as `jobs.report`; the plugin serves the
//! `jobs.*` host services of [`services`].
//!
//! The table of jobs is a [`Jobs`] value: the plugin makes one in `init`
//! and hands it to its tools and services, so nothing lives in statics and
//! a test's jobs are its own.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex, MutexGuard};

use uji_sdk::Host;
use uji_sdk::protocol::jobs::{
    DEFAULT_LIFETIME_SECS, DEFAULT_MAX_JOBS, JobEvent, JobInfo, JobReport, JobState, StoppedBy,
};
use uji_sdk::protocol::spill::Capture;

use crate::process::Running;

mod report;
pub mod services;
mod thread;
pub mod tools;

pub use report::{finished_report, status_line};

/// Finished jobs kept for `job_output` and `/jobs`; older ones are forgotten.
const KEEP_FINISHED: usize = 32;

/// What the job's thread and its readers share.
pub struct Output {
    /// The whole output's bounded tail, and its spill file.
    pub log: Capture,
    /// What `job_output` has not returned yet.
    pub unread: Capture,
    pub last_line: String,
    pub state: JobState,
    pub ended: Option<Instant>,
    /// The host has been told of the end (what [`Job::wait_end`] waits
    /// for, so a stop is answered after the frontend heard of it).
    pub told: bool,
}

/// One background job.
pub struct Job {
    pub id: u64,
    pub command: String,
    pub started: Instant,
    pub started_ms: u64,
    /// The file `log` spills to (and `unread`'s note names).
    pub log_path: PathBuf,
    /// The session whose call started it.
    pub session: Option<String>,
    pub out: Mutex<Output>,
    /// Signalled on new output and at the end.
    pub changed: Condvar,
    /// Set to ask the thread to stop the job.
    stop: Mutex<Option<StoppedBy>>,
}

impl Job {
    pub fn output(&self) -> MutexGuard<'_, Output> {
        self.out.lock()
    }

    pub fn info(&self) -> JobInfo {
        let out = self.output();
        let end = out.ended.unwrap_or_else(Instant::now);
        JobInfo {
            id: self.id,
            command: self.command.clone(),
            state: out.state,
            started_ms: self.started_ms,
            elapsed_ms: end.duration_since(self.started).as_millis() as u64,
            last_line: out.last_line.clone(),
            lines: out.log.total_lines() as u64,
            log: out.log.spill_file().map(|p| p.display().to_string()),
            session: self.session.clone(),
        }
    }

    fn request_stop(&self, by: StoppedBy) {
        self.stop.lock().get_or_insert(by);
    }

    fn stop_requested(&self) -> Option<StoppedBy> {
        *self.stop.lock()
    }

    /// Waits until the job has ended and the host was told, at most
    /// `limit`; whether it has.
    pub fn wait_end(&self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        let mut out = self.output();
        while !out.told {
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            self.changed.wait_for(&mut out, deadline - now);
        }
        true
    }

    /// Takes the output the model has not read, bounded, with its note.
    pub fn take_unread(&self) -> String {
        let mut out = self.output();
        let unread = std::mem::replace(&mut out.unread, Capture::window(self.log_path.clone()));
        drop(out);
        unread.render().with_note()
    }
}

/// How jobs are limited.
#[derive(Clone, Copy)]
struct Limits {
    max: usize,
    lifetime_secs: u64,
}

struct State {
    next_id: u64,
    jobs: BTreeMap<u64, Arc<Job>>,
    limits: Limits,
}

/// The plugin's jobs: cheap to clone (one shared table).
#[derive(Clone)]
pub struct Jobs(Arc<Table>);

struct Table {
    state: Mutex<State>,
    /// The host to report to; none for tools used on their own (tests).
    host: Option<Host>,
    /// Bumped by each request to move the foreground commands to the
    /// background.
    background_requests: AtomicU64,
    /// Foreground commands running now.
    foreground: AtomicUsize,
}

impl Default for Jobs {
    /// A table of its own that reports to nobody.
    fn default() -> Jobs {
        Jobs::new(None)
    }
}

impl Jobs {
    /// A new, empty table reporting to `host`.
    pub fn new(host: Option<Host>) -> Jobs {
        Jobs(Arc::new(Table {
            state: Mutex::new(State {
                next_id: 1,
                jobs: BTreeMap::new(),
                limits: Limits {
                    max: DEFAULT_MAX_JOBS,
                    lifetime_secs: DEFAULT_LIFETIME_SECS,
                },
            }),
            host,
            background_requests: AtomicU64::new(0),
            foreground: AtomicUsize::new(0),
        }))
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.0.state.lock()
    }

    /// Tells the running session about a job. Without one (`uji tool`)
    /// there is nobody to tell.
    fn report(&self, event: JobEvent) {
        if let Some(host) = &self.0.host {
            let _ = host.service(&JobReport(event));
        }
    }

    /// The default lifetime of a job whose call gives none.
    pub fn default_lifetime(&self) -> Duration {
        Duration::from_secs(self.state().limits.lifetime_secs)
    }

    /// Asks every foreground command to move to the background; answers
    /// how many were running.
    pub fn ask_background(&self) -> u64 {
        self.0.background_requests.fetch_add(1, Ordering::SeqCst);
        self.0.foreground.load(Ordering::SeqCst) as u64
    }

    /// Changes with every [`Jobs::ask_background`]: a foreground command
    /// compares it with the value it started with.
    pub fn background_requests(&self) -> u64 {
        self.0.background_requests.load(Ordering::SeqCst)
    }

    /// Counts a foreground command until the guard is dropped.
    pub fn enter_foreground(&self) -> InForeground {
        self.0.foreground.fetch_add(1, Ordering::SeqCst);
        InForeground(self.clone())
    }
}

/// A foreground command counted for Ctrl+Z's answer.
pub struct InForeground(Jobs);

impl Drop for InForeground {
    fn drop(&mut self) {
        (self.0).0.foreground.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The running jobs, to tell the model how many there are.
fn running_count(state: &State) -> usize {
    state
        .jobs
        .values()
        .filter(|job| job.output().state.is_running())
        .count()
}

/// Why a job could not start: `max` jobs run already.
pub struct Full {
    pub max: usize,
}

impl Full {
    pub fn describe(&self) -> String {
        let running = if self.max == 1 {
            "1 background job is running".to_string()
        } else {
            format!("{} background jobs are running", self.max)
        };
        format!(
            "{running}, the most uji runs at once; stop one with stop_job (or wait for one to end)"
        )
    }
}

/// A command given back because `full.max` jobs run already.
pub struct Refused {
    pub running: Running,
    pub log: Capture,
    pub full: Full,
}

impl Jobs {
    /// Whether one more job may start now.
    pub fn has_room(&self) -> Result<(), Full> {
        let state = self.state();
        if running_count(&state) >= state.limits.max {
            Err(Full {
                max: state.limits.max,
            })
        } else {
            Ok(())
        }
    }

    /// Makes `running` job N, read by a thread of its own from now on. `log`
    /// holds what it printed so far (for a command moved from the foreground).
    /// Gives the command back when `max` jobs already run.
    pub fn adopt(
        &self,
        running: Running,
        log: Capture,
        log_path: PathBuf,
        command: &str,
        lifetime: Duration,
    ) -> Result<Arc<Job>, Box<Refused>> {
        let mut state = self.state();
        if running_count(&state) >= state.limits.max {
            let full = Full {
                max: state.limits.max,
            };
            return Err(Box::new(Refused { running, log, full }));
        }
        let id = state.next_id;
        state.next_id += 1;
        let last_line = last_line_of(&log);
        let job = Arc::new(Job {
            id,
            command: command.to_string(),
            started: running.started,
            started_ms: now_ms().saturating_sub(running.started.elapsed().as_millis() as u64),
            out: Mutex::new(Output {
                log,
                unread: Capture::window(log_path.clone()),
                last_line,
                state: JobState::Running,
                ended: None,
                told: false,
            }),
            log_path,
            session: running.session.clone(),
            changed: Condvar::new(),
            stop: Mutex::new(None),
        });
        state.jobs.insert(id, Arc::clone(&job));
        forget_old(&mut state);
        drop(state);
        self.report(JobEvent::Started { job: job.info() });
        thread::start(self.clone(), Arc::clone(&job), running, lifetime);
        Ok(job)
    }

    pub fn get(&self, id: u64) -> Option<Arc<Job>> {
        self.state().jobs.get(&id).cloned()
    }

    /// Every job kept, running first, then newest first.
    pub fn list(&self) -> Vec<Arc<Job>> {
        let mut jobs: Vec<Arc<Job>> = self.state().jobs.values().cloned().collect();
        jobs.sort_by_key(|job| (!job.output().state.is_running(), std::cmp::Reverse(job.id)));
        jobs
    }

    /// Stops job `id` and its whole tree; waits (briefly) for its end.
    pub fn stop(&self, id: u64, by: StoppedBy) -> Result<Arc<Job>, String> {
        let job = self.get(id).ok_or_else(|| self.no_such_job(id))?;
        job.request_stop(by);
        job.wait_end(Duration::from_secs(5));
        Ok(job)
    }

    /// Stops every running job (uji quits, `uji run` ends).
    pub fn stop_all(&self) -> usize {
        let jobs: Vec<Arc<Job>> = self
            .list()
            .into_iter()
            .filter(|job| job.output().state.is_running())
            .collect();
        for job in &jobs {
            job.request_stop(StoppedBy::Uji);
        }
        for job in &jobs {
            job.wait_end(Duration::from_secs(5));
        }
        jobs.len()
    }

    pub fn no_such_job(&self, id: u64) -> String {
        let ids: Vec<String> = self.list().iter().map(|job| job.id.to_string()).collect();
        if ids.is_empty() {
            format!("there is no job {id}: no background job was started in this session")
        } else {
            format!("there is no job {id}; the jobs are {}", ids.join(", "))
        }
    }

    /// Sets `max` (jobs at once) and `limit` (default lifetime in seconds);
    /// answers both as they are now.
    pub fn configure(&self, max: Option<usize>, limit: Option<u64>) -> (usize, u64) {
        let mut state = self.state();
        if let Some(max) = max {
            state.limits.max = max;
        }
        if let Some(limit) = limit {
            state.limits.lifetime_secs = limit;
        }
        (state.limits.max, state.limits.lifetime_secs)
    }
}

/// The last line read so far (before the job's thread took over).
fn last_line_of(log: &Capture) -> String {
    let rendered = log.render();
    let last = rendered.output.lines().last().unwrap_or_default();
    let cut = uji_sdk::protocol::spill::cut_at_char_boundary(last.as_bytes(), 1000);
    String::from_utf8_lossy(cut).into_owned()
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Keeps at most [`KEEP_FINISHED`] finished jobs.
fn forget_old(state: &mut State) {
    let finished: Vec<u64> = state
        .jobs
        .iter()
        .filter(|(_, job)| !job.output().state.is_running())
        .map(|(&id, _)| id)
        .collect();
    for id in finished
        .iter()
        .take(finished.len().saturating_sub(KEEP_FINISHED))
    {
        state.jobs.remove(id);
    }
}
