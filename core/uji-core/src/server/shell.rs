//! The `shell` operation (`!cmd` in an input line): runs a command in the
//! session directory, streams its lines as progress, and saves it in the
//! transcript. The model never sees it.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;
use uji_host::progress::{self, Paced};
use uji_protocol::frontend::{Event, NoticeLevel};
use uji_protocol::services::ChildEnv;
use uji_protocol::session::MessageBody;

use super::{Reply, Shared, answered};
use crate::turn::agent::redact;
use crate::turn::interrupt::{Interrupt, Interrupter, interrupt_pair};
use uji_protocol::frontend::answers::ShellFinished;

/// Longest a `!cmd` may run.
const SHELL_TIMEOUT: Duration = Duration::from_secs(600);

/// Output kept in the transcript; the rest is counted, not kept.
const OUTPUT_CAP: usize = 64 * 1024;

/// The running `!cmd`s, so an interrupt stops them too.
#[derive(Default)]
pub(super) struct Shells {
    running: Mutex<HashMap<u64, Interrupter>>,
    next: AtomicU64,
}

impl Shells {
    fn start(&self) -> (u64, Interrupt) {
        let (interrupter, interrupt) = interrupt_pair();
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.running.lock().insert(id, interrupter);
        (id, interrupt)
    }

    fn done(&self, id: u64) {
        self.running.lock().remove(&id);
    }

    pub(super) fn stop_all(&self) {
        for interrupter in self.running.lock().values() {
            interrupter.interrupt();
        }
    }
}

/// A command's output, bounded.
#[derive(Default)]
struct Collected {
    text: String,
    left_out: usize,
}

impl Collected {
    fn push_line(&mut self, line: &str) {
        if self.text.len() + line.len() < OUTPUT_CAP {
            self.text.push_str(line);
            self.text.push('\n');
        } else {
            self.left_out += line.len() + 1;
        }
    }

    fn finish(mut self) -> String {
        if self.left_out > 0 {
            self.text
                .push_str(&format!("… {} more bytes not kept\n", self.left_out));
        }
        self.text
    }
}

impl Shared {
    pub(super) fn shell(
        self: &Arc<Self>,
        op_id: Option<&str>,
        command: String,
    ) -> Result<Reply, String> {
        if command.trim().is_empty() {
            return Err("the shell command is empty".to_string());
        }
        let shared = Arc::clone(self);
        let op_id = op_id.map(str::to_string);
        let (id, interrupt) = self.shells.start();
        tokio::spawn(async move {
            let call_id = format!("shell-{}", op_id.as_deref().unwrap_or("service"));
            let secrets = shared.sessions.providers.secret_values();
            let emitter = Arc::clone(&shared);
            // Paced like a tool's progress, redacted, then cut.
            let progress = Paced::new(Arc::new(move |line: &str| {
                let line = redact(line, &secrets);
                emitter.emit(Event::Progress {
                    call_id: call_id.clone(),
                    tool: "shell".to_string(),
                    line: progress::shorten(&line, progress::WIDTH).into_owned(),
                });
            }));
            let env = crate::gate::child_env::child_env(
                &shared.sessions.registry,
                &shared.sessions.providers,
            );
            let checkpoint = shared.checkpoint_before_shell(&command).await;
            let result = run(&command, shared.sessions.cwd(), &env, interrupt, &progress).await;
            if let Some((checkpointing, before)) = checkpoint
                && let Err(e) = checkpointing.after_shell(&command, before).await
            {
                shared.emit(Event::notice(
                    NoticeLevel::Warn,
                    format!("the checkpoint after !{command} failed ({e}); /undo may not cover it"),
                ));
            }
            shared.shells.done(id);
            match result {
                Ok((output, exit_code)) => {
                    shared.control.save_message(MessageBody::Shell {
                        command,
                        output,
                        exit_code,
                    });
                    shared.apply_when_idle();
                    shared.reply(op_id.as_deref(), answered(&ShellFinished { exit_code }));
                }
                Err(e) => shared.reply(op_id.as_deref(), Err(e)),
            }
        });
        Ok(Reply::Later)
    }
}

impl Shared {
    /// A checkpoint before a `!cmd` that may change files
    /// (docs/checkpoints.md); a failure is a notice, and the command runs.
    async fn checkpoint_before_shell(
        &self,
        command: &str,
    ) -> Option<(crate::turn::agent::Checkpointing, u64)> {
        if !crate::gate::command_may_change_files(command) {
            return None;
        }
        let checkpointing = self.checkpointing.lock().clone()?;
        match checkpointing.before_shell(command).await {
            Ok(Some(before)) => Some((checkpointing, before)),
            Ok(None) => None,
            Err(e) => {
                self.emit(Event::notice(
                    NoticeLevel::Warn,
                    format!(
                        "no checkpoint was taken before !{command} ({e}); /undo cannot undo it"
                    ),
                ));
                None
            }
        }
    }
}

/// Runs `command` with bash (`uji_protocol::bash`) in `cwd`, in a process group of its own so
/// an interrupt or the timeout kills everything it started.
async fn run(
    command: &str,
    cwd: &std::path::Path,
    env: &ChildEnv,
    mut interrupt: Interrupt,
    progress: &Paced,
) -> Result<(String, Option<i32>), String> {
    let mut bash = uji_protocol::bash::command(command);
    // No provider key or UJI_* secret reaches it (docs/configuration.md);
    // removing them keeps bash's own removals (BASH_ENV…) in place.
    env.apply(&mut bash);
    let mut child = Command::from(bash)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| {
            let shell = uji_protocol::bash::shell_name().to_string_lossy();
            format!("cannot start {shell}: {e}")
        })?;
    let pid = child.id();
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err("cannot read the command's output".to_string());
    };
    let mut out = BufReader::new(stdout).lines();
    let mut err = BufReader::new(stderr).lines();
    let mut collected = Collected::default();
    let (mut out_open, mut err_open) = (true, true);
    let deadline = tokio::time::sleep(SHELL_TIMEOUT);
    tokio::pin!(deadline);
    let mut stopped = None;
    let mut tick = tokio::time::interval(progress::INTERVAL);
    while out_open || err_open {
        let line = tokio::select! {
            line = out.next_line(), if out_open => line.ok().flatten().or_else(|| { out_open = false; None }),
            line = err.next_line(), if err_open => line.ok().flatten().or_else(|| { err_open = false; None }),
            _ = tick.tick() => { progress.flush(false); None }
            () = interrupt.wait() => { stopped = Some("interrupted"); break; }
            () = &mut deadline => { stopped = Some("timed out"); break; }
        };
        if let Some(line) = line {
            progress.line(&line);
            collected.push_line(&line);
        }
    }
    progress.flush(true);
    if let Some(why) = stopped {
        kill_group(pid);
        let _ = child.wait().await;
        collected.push_line(&format!("[{why}: the command was stopped]"));
        return Ok((collected.finish(), None));
    }
    let status = child
        .wait()
        .await
        .map_err(|e| format!("cannot wait for the command: {e}"))?;
    Ok((collected.finish(), status.code()))
}

fn kill_group(pid: Option<u32>) {
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        // SAFETY: kill(2) with a negative pid signals the process group the
        // command leads (process_group(0) made it its own leader).
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}
