//! `run_command`: a shell command in its own session and process group,
//! stdout and stderr merged into one pipe, a bounded tail of the output for
//! the model and the full output spilled to a file when it is too long.

use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use uji_sdk::protocol::spill::Capture;
use uji_sdk::{SubjectKind, Tool, ToolCall, ToolContext, ToolOutput, ToolSpec};

use crate::args::{self, os_error, plural};
use crate::reaper;
use crate::sandbox::{self, Prepared};

const NAME: &str = "run_command";
const DEFAULT_TIMEOUT_SECS: u64 = 120;
const MAX_TIMEOUT_SECS: u64 = 600;
/// How often cancellation and the deadline are checked.
const POLL: Duration = Duration::from_millis(50);
/// After a kill, how long to collect output still in the pipe.
const DRAIN_AFTER_KILL: Duration = Duration::from_millis(300);

const DESCRIPTION: &str = "Run a shell command with `sh -c` in the working directory and \
return its output, stdout and stderr merged in the order they were written. stdin is closed \
and there is no terminal, so anything that prompts fails at once: pass flags such as `--yes`, \
`-y` or `--no-pager`. `timeout` is in seconds (default 120, at most 600); when it runs out, \
or the user interrupts, the command and every process it started are killed. A non-zero exit \
ends the output with `(exit code N)`. Long output keeps only its last 2000 lines or 50 KB, \
and the full output is saved to a file the result names (read it with read_file). The call \
lasts until every process that still holds the output has exited, so start long-running \
background processes with their output redirected, e.g. `server > /tmp/server.log 2>&1 &`.";

/// The `run_command` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunCommand;

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
                        "description": "The command line, run with sh -c in the working directory"
                    },
                    "timeout": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": MAX_TIMEOUT_SECS,
                        "description": "Seconds before the command is killed (default 120, at most 600)"
                    }
                },
                "required": ["command"]
            }))
    }

    fn subject(&self, args: &Value) -> String {
        args::subject(args, "command", NAME)
    }

    fn run(&self, call: ToolCall, ctx: &ToolContext) -> ToolOutput {
        let (command, timeout) = match parse(&call.args) {
            Ok(parsed) => parsed,
            Err(message) => return ToolOutput::error(message),
        };
        let sandbox = match sandbox::prepare(call.sandbox.as_ref()) {
            Ok(prepared) => prepared,
            Err(e) => return ToolOutput::error(format!("could not set up the sandbox: {e}")),
        };
        let spill = call.spill.as_ref().map(PathBuf::from);
        match execute(command, timeout, Path::new(&call.cwd), &sandbox, spill, ctx) {
            Ok(output) => output,
            Err(message) => ToolOutput::error(message),
        }
    }
}

fn parse(args: &Value) -> Result<(&str, u64), String> {
    let map = args::object(args)?;
    let command = args::non_blank_str(map, "command")?;
    let timeout = match map.get("timeout") {
        None | Some(Value::Null) => DEFAULT_TIMEOUT_SECS,
        Some(_) => args::optional_positive_int(map, "timeout")
            .map_err(|_| "`timeout` must be a whole number of seconds ≥ 1".to_string())?
            .unwrap_or(DEFAULT_TIMEOUT_SECS),
    };
    Ok((command, timeout.min(MAX_TIMEOUT_SECS)))
}

/// Why the command was stopped before it ended on its own.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stop {
    Timeout,
    Interrupted,
}

/// Kills the command's whole tree (see [`reaper`]) if the call ends early
/// (an error or a panic).
struct TreeGuard {
    root: libc::pid_t,
    mark: String,
    armed: bool,
}

impl TreeGuard {
    fn kill(&mut self) {
        if self.root > 1 {
            // SAFETY: killpg only sends a signal; a stale group id fails with ESRCH.
            unsafe {
                libc::killpg(self.root, libc::SIGKILL);
            }
            reaper::kill_tree(self.root, &self.mark);
        }
    }
}

impl Drop for TreeGuard {
    fn drop(&mut self) {
        if self.armed {
            self.kill();
        }
    }
}

fn spawn(
    command: &str,
    cwd: &Path,
    mark: &str,
    sandbox: &Prepared,
) -> io::Result<(Child, io::PipeReader)> {
    let (reader, writer) = io::pipe()?;
    let writer2 = writer.try_clone()?;
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .env(reaper::MARK_VAR, mark)
        .stdin(Stdio::null())
        .stdout(writer2)
        .stderr(writer);
    let ruleset = match sandbox {
        Prepared::Ruleset(fd) => Some(fd.as_raw_fd()),
        Prepared::None | Prepared::Unsupported => None,
    };
    // SAFETY: setsid, prctl and landlock_restrict_self are async-signal-safe
    // system calls. setsid puts the command in a new session and process
    // group (so the whole tree can be killed with one killpg) without a
    // controlling terminal, so password prompts fail at once instead of
    // stopping the job. The ruleset fd outlives the spawn (the caller holds
    // it).
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() == -1 {
                return Err(io::Error::last_os_error());
            }
            if let Some(fd) = ruleset {
                sandbox::restrict(fd)?;
            }
            Ok(())
        });
    }
    let child = cmd.spawn();
    // The Command holds the pipe's write ends; close them in this process so
    // the reader sees end-of-file when the command's processes exit.
    drop(cmd);
    Ok((child?, reader))
}

/// Waits up to `timeout` for the pipe to have data or be closed.
fn wait_readable(fd: i32, timeout: Duration) -> io::Result<bool> {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = timeout.as_millis().min(i32::MAX as u128) as i32;
    // SAFETY: one valid pollfd for the duration of the call.
    let rc = unsafe { libc::poll(&mut pfd, 1, ms) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Ok(false);
        }
        return Err(e);
    }
    Ok(rc > 0)
}

fn execute(
    command: &str,
    timeout_secs: u64,
    cwd: &Path,
    sandbox: &Prepared,
    spill: Option<PathBuf>,
    ctx: &ToolContext,
) -> Result<ToolOutput, String> {
    if !cwd.is_dir() {
        return Err(format!(
            "the working directory {} does not exist",
            cwd.display()
        ));
    }
    reaper::become_subreaper();
    reaper::reap_adopted();
    let mark = reaper::new_mark();
    let (mut child, mut reader) = spawn(command, cwd, &mark, sandbox)
        .map_err(|e| format!("could not start sh: {}", os_error(&e)))?;
    let mut guard = TreeGuard {
        root: child.id() as libc::pid_t,
        mark,
        armed: true,
    };
    let started = Instant::now();
    let deadline = started + Duration::from_secs(timeout_secs);
    let fd = reader.as_raw_fd();
    let mut capture = Capture::new(spill);
    let mut progress = |head: &[u8]| ctx.progress(&String::from_utf8_lossy(head));
    let mut buf = vec![0u8; 64 * 1024];
    let mut eof = false;
    let mut status: Option<ExitStatus> = None;
    let mut stop = None;

    loop {
        if ctx.is_cancelled() {
            stop = Some(Stop::Interrupted);
            break;
        }
        let now = Instant::now();
        if now >= deadline {
            stop = Some(Stop::Timeout);
            break;
        }
        let wait = POLL.min(deadline - now);
        if !eof {
            // Output first: the call lasts while any process holds the pipe.
            match wait_readable(fd, wait) {
                Ok(true) => match reader.read(&mut buf) {
                    Ok(0) => eof = true,
                    Ok(n) => capture.push(&buf[..n], &mut progress),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => eof = true,
                },
                Ok(false) => {}
                Err(_) => eof = true,
            }
        } else {
            match child.try_wait() {
                Ok(Some(s)) => {
                    status = Some(s);
                    break;
                }
                Ok(None) => std::thread::sleep(wait.min(Duration::from_millis(10))),
                Err(_) => break,
            }
        }
    }

    if stop.is_some() {
        guard.kill();
        let _ = child.wait();
        // Collect what is still in the pipe; stop early if a process that
        // left the group keeps it open.
        let drain_until = Instant::now() + DRAIN_AFTER_KILL;
        while !eof {
            let now = Instant::now();
            if now >= drain_until {
                break;
            }
            match wait_readable(fd, drain_until - now) {
                Ok(true) => match reader.read(&mut buf) {
                    Ok(0) => eof = true,
                    Ok(n) => capture.push(&buf[..n], &mut progress),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => eof = true,
                },
                Ok(false) => {}
                Err(_) => eof = true,
            }
        }
    }
    guard.armed = false;
    if stop.is_none() {
        reaper::note_survivors(guard.root, &guard.mark);
    }
    drop(reader);
    capture.finish(&mut progress);

    let rendered = capture.render();
    let mut text = rendered.output;
    let mut push = |line: &str| {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(line);
    };
    if let Some(note) = &rendered.note {
        push("");
        push(note);
    }
    let lines = plural(capture.total_lines(), "line");
    let elapsed = started.elapsed().as_secs_f64();
    let (is_error, summary) = match stop {
        Some(Stop::Timeout) => {
            push(&format!("error: command timed out after {timeout_secs}s"));
            (true, format!("Timed out after {timeout_secs}s"))
        }
        Some(Stop::Interrupted) => {
            push("error: interrupted by the user while this tool ran");
            (true, "Interrupted".to_string())
        }
        None => match status {
            Some(s) => match (s.code(), s.signal()) {
                (Some(0), _) => {
                    if rendered.blank {
                        push("(no output, exit code 0)");
                    }
                    (false, format!("{lines}, exit code 0, {elapsed:.1}s"))
                }
                (Some(code), _) => {
                    push(&format!("(exit code {code})"));
                    (false, format!("{lines}, exit code {code}, {elapsed:.1}s"))
                }
                (None, Some(signal)) => {
                    push(&format!("(killed by signal {signal})"));
                    (false, format!("Killed by signal {signal}"))
                }
                (None, None) => (false, format!("{lines}, {elapsed:.1}s")),
            },
            None => {
                push("(exit status unknown)");
                (false, format!("{lines}, {elapsed:.1}s"))
            }
        },
    };
    Ok(ToolOutput {
        text,
        summary: Some(summary),
        is_error,
        ..Default::default()
    })
}
