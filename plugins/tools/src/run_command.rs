//! `run_command`: a shell command in its own session and process group,
//! stdout and stderr merged into one pipe, a bounded tail of the output for
//! the model and the full output spilled to a file when it is too long.
//! A command may run in the background as a job ([`crate::jobs`]): asked
//! for with `run_in_background`, when it is still running at its timeout,
//! or when the user sends it there (Ctrl+Z).

use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use uji_sdk::protocol::jobs::MAX_LIFETIME_SECS;
use uji_sdk::protocol::spill::{Capture, temp_spill_path};
use uji_sdk::{SubjectKind, Tool, ToolCall, ToolContext, ToolOutput, ToolSpec};

use crate::args::{self, os_error};
use crate::jobs::{Jobs, Refused};
use crate::process::{Pumped, Running};
use crate::sandbox;

mod background;
mod outcome;

use outcome::{End, render};

const NAME: &str = "run_command";
const DEFAULT_TIMEOUT_SECS: u64 = 120;
const MAX_TIMEOUT_SECS: u64 = 600;
/// How often cancellation, the deadline and Ctrl+Z are checked.
const POLL: Duration = Duration::from_millis(50);

const DESCRIPTION: &str = "Run a shell command with `bash -c` in the working directory and \
return its output, stdout and stderr merged in the order they were written. stdin is closed \
and there is no terminal, so anything that prompts fails at once: pass flags such as `--yes`, \
`-y` or `--no-pager`. `timeout` is in seconds (default 120, at most 600). A command still \
running at its timeout moves to the background as a job (a command that only sleeps is \
killed); when the user interrupts, the command and every process it started are killed. A \
non-zero exit ends the output with `(exit code N)`. Long output keeps only its last 2000 \
lines or 50 KB, and the full output is saved to a file the result names (read it with \
read_file). For dev servers, watchers and long builds set `run_in_background`: the call \
returns at once with the job's number and its first output; read more with job_output, stop \
it with stop_job, and when it ends its exit status and last lines come with your next \
request. A background job lives `timeout` seconds (default 1800, at most 7200).";

/// The `run_command` tool; its background jobs go into a [`Jobs`] table.
#[derive(Clone, Default)]
pub struct RunCommand {
    jobs: Jobs,
}

impl RunCommand {
    pub fn new(jobs: &Jobs) -> RunCommand {
        RunCommand { jobs: jobs.clone() }
    }
}

impl Tool for RunCommand {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(NAME, DESCRIPTION)
            .subject_kind(SubjectKind::Command)
            .verb("Shell")
            .question("Run this command?")
            .parameters(json!({
                "type": "object",
                "properties": {
                    "command": {
                        "type": "string",
                        "description": "The command line, run with bash -c in the working directory"
                    },
                    "timeout": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": MAX_LIFETIME_SECS,
                        "description": "Seconds before the command moves to the background \
                                        (default 120, at most 600); for a background job, \
                                        seconds before it is stopped (default 1800, at most 7200)"
                    },
                    "run_in_background": {
                        "type": "boolean",
                        "description": "Start the command as a background job and return at once"
                    }
                },
                "required": ["command"]
            }))
    }

    fn subject(&self, args: &Value) -> String {
        args::subject(args, "command", NAME)
    }

    fn run(&self, call: ToolCall, ctx: &ToolContext) -> ToolOutput {
        let request = match parse(&call.args) {
            Ok(parsed) => parsed,
            Err(message) => return ToolOutput::error(message),
        };
        let spill = call
            .spill
            .as_ref()
            .map(PathBuf::from)
            .unwrap_or_else(temp_spill_path);
        let jobs = &self.jobs;
        match start(jobs, &request, &call) {
            Ok(running) if request.background => {
                let lifetime = request.lifetime(jobs);
                background::start(jobs, &request.command, lifetime, running, spill, ctx)
            }
            Ok(running) => foreground(jobs, &request, running, spill, ctx),
            Err(message) => ToolOutput::error(message),
        }
    }
}

/// A call's arguments.
struct Request {
    command: String,
    /// As given (`None`: the default of the mode).
    timeout: Option<u64>,
    background: bool,
}

impl Request {
    fn foreground_timeout(&self) -> u64 {
        self.timeout
            .unwrap_or(DEFAULT_TIMEOUT_SECS)
            .min(MAX_TIMEOUT_SECS)
    }

    fn lifetime(&self, jobs: &Jobs) -> Duration {
        match self.timeout {
            Some(secs) => Duration::from_secs(secs.min(MAX_LIFETIME_SECS)),
            None => jobs.default_lifetime(),
        }
    }
}

fn parse(args: &Value) -> Result<Request, String> {
    let map = args::object(args)?;
    let command = args::non_blank_str(map, "command")?.to_string();
    let timeout = args::optional_positive_int(map, "timeout")
        .map_err(|_| "`timeout` must be a whole number of seconds ≥ 1".to_string())?;
    let background = args::optional_bool(map, "run_in_background")?.unwrap_or(false);
    Ok(Request {
        command,
        timeout,
        background,
    })
}

/// Checks the working directory and the job limit, and starts the command.
fn start(jobs: &Jobs, request: &Request, call: &ToolCall) -> Result<Running, String> {
    let cwd = Path::new(&call.cwd);
    if !cwd.is_dir() {
        return Err(format!(
            "the working directory {} does not exist",
            cwd.display()
        ));
    }
    if request.background {
        jobs.has_room()
            .map_err(|full| format!("cannot start a background job: {}", full.describe()))?;
    }
    let sandbox = sandbox::prepare(call.sandbox.as_ref())
        .map_err(|e| format!("could not set up the sandbox: {e}"))?;
    let mut running = Running::start(&request.command, cwd, &sandbox).map_err(|e| {
        let shell = uji_sdk::protocol::bash::shell_name().to_string_lossy();
        format!("could not start {shell}: {}", os_error(&e))
    })?;
    running.session = call.session.clone();
    Ok(running)
}

/// Runs the command to its end, its timeout, an interrupt or a move to
/// the background.
fn foreground(
    jobs: &Jobs,
    request: &Request,
    mut running: Running,
    spill: PathBuf,
    ctx: &ToolContext,
) -> ToolOutput {
    let _counted = jobs.enter_foreground();
    let timeout_secs = request.foreground_timeout();
    let deadline = running.started + Duration::from_secs(timeout_secs);
    let mut capture = Capture::new(Some(spill.clone()));
    let mut progress = |head: &[u8]| ctx.progress(&String::from_utf8_lossy(head));
    loop {
        let end = wait(jobs, &mut running, deadline, ctx, &mut |chunk| {
            capture.push(chunk, &mut progress)
        });
        let moved = match end {
            End::Timeout if !only_sleeps(&request.command) => Some(true),
            End::MoveAsked => Some(false),
            _ => None,
        };
        let Some(at_timeout) = moved else {
            return finish(running, capture, end, timeout_secs, ctx);
        };
        match background::adopt(
            jobs,
            &request.command,
            running,
            capture,
            spill.clone(),
            at_timeout,
        ) {
            Ok(output) => return output,
            Err(refused) => {
                let Refused {
                    running: back,
                    log,
                    full,
                } = *refused;
                if at_timeout {
                    let end = End::TimeoutFull(full.max);
                    return finish(back, log, end, timeout_secs, ctx);
                }
                // Ctrl+Z with no room: say why and keep running.
                ctx.progress(&format!(
                    "cannot move it to the background: {}",
                    full.describe()
                ));
                (running, capture) = (back, log);
            }
        }
    }
}

/// Pumps the command until something ends the wait.
fn wait(
    jobs: &Jobs,
    running: &mut Running,
    deadline: Instant,
    ctx: &ToolContext,
    sink: &mut dyn FnMut(&[u8]),
) -> End {
    let asked = jobs.background_requests();
    loop {
        if ctx.is_cancelled() {
            return End::Interrupted;
        }
        if jobs.background_requests() != asked {
            return End::MoveAsked;
        }
        let now = Instant::now();
        if now >= deadline {
            return End::Timeout;
        }
        if let Pumped::Exited(status) = running.pump(POLL.min(deadline - now), sink) {
            running.ended();
            return End::Exited(status);
        }
    }
}

/// Kills the command if it still runs, and renders the result.
fn finish(
    mut running: Running,
    mut capture: Capture,
    end: End,
    timeout_secs: u64,
    ctx: &ToolContext,
) -> ToolOutput {
    let mut progress = |head: &[u8]| ctx.progress(&String::from_utf8_lossy(head));
    let status: Option<ExitStatus> = match end {
        End::Exited(status) => status,
        _ => running.kill(&mut |chunk| capture.push(chunk, &mut progress)),
    };
    capture.finish(&mut progress);
    let elapsed = running.started.elapsed().as_secs_f64();
    render(&capture, end, status, timeout_secs, elapsed)
}

/// Whether every command of the line is a `sleep`: such a command is
/// killed at its timeout rather than moved to the background.
fn only_sleeps(command: &str) -> bool {
    command
        .split([';', '\n', '&', '|'])
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .all(|part| part.split_whitespace().next() == Some("sleep"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_lines_of_sleeps_count_as_sleeping() {
        for sleeping in ["sleep 30", " sleep 1; sleep 2 ", "sleep 5 && sleep 5"] {
            assert!(only_sleeps(sleeping), "{sleeping}");
        }
        for working in [
            "sleep 5; npm start",
            "make && sleep 1",
            "sleepy 3",
            "echo sleep",
        ] {
            assert!(!only_sleeps(working), "{working}");
        }
    }
}
