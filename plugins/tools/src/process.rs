//! One running command: its bash (`uji_protocol::bash`) in a session of its own, stdout and stderr
//! merged into one pipe, and the guard that kills its whole tree. The
//! foreground loop of `run_command` and a background job's thread both read
//! it through [`Running::pump`], so a command moves from one to the other
//! without losing a byte.

use std::io::{self, Read};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use uji_sdk::protocol::services::ChildEnv;

use crate::exit_fd;
use crate::reaper;
use crate::sandbox::Prepared;
use crate::spawner;

/// After a kill, how long to collect output still in the pipe.
const DRAIN_AFTER_KILL: Duration = Duration::from_millis(300);

/// Kills the command's whole tree (see [`reaper`]) if it is dropped armed
/// (an error or a panic in the code that holds it).
pub struct TreeGuard {
    pub root: libc::pid_t,
    pub mark: String,
    pub armed: bool,
}

impl TreeGuard {
    pub fn kill(&mut self) {
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

/// What one [`Running::pump`] saw.
pub enum Pumped {
    /// Output was passed on, or nothing happened within the wait.
    Busy,
    /// Every process holding the pipe is gone and `sh` has exited.
    Exited(Option<ExitStatus>),
}

/// A started command.
pub struct Running {
    child: Child,
    reader: io::PipeReader,
    pub guard: TreeGuard,
    eof: bool,
    buf: Vec<u8>,
    pub started: Instant,
    /// The session whose call started it, kept if it becomes a job.
    pub session: Option<String>,
}

impl Running {
    /// Starts `command` with `bash -c` in `cwd`, in `sandbox`.
    pub fn start(command: &str, cwd: &Path, sandbox: &Prepared) -> io::Result<Running> {
        let (reader, writer) = io::pipe()?;
        let writer2 = writer.try_clone()?;
        let mut cmd = uji_sdk::protocol::bash::command(command);
        cmd.stdin(Stdio::null()).stdout(writer2).stderr(writer);
        // No provider key or UJI_* secret reaches the command (docs/configuration.md).
        let (child, guard) = start_tree(cmd, cwd, &uji_sdk::child::env(), sandbox)?;
        // The Command (now gone) held the pipe's write ends; with them closed
        // in this process the reader sees end-of-file when the command's
        // processes exit.
        Ok(Running {
            guard,
            child,
            reader,
            eof: false,
            buf: vec![0u8; 64 * 1024],
            started: Instant::now(),
            session: None,
        })
    }

    /// Waits at most `wait` for output (passed to `sink`) or the end.
    pub fn pump(&mut self, wait: Duration, sink: &mut dyn FnMut(&[u8])) -> Pumped {
        if !self.eof {
            // Output first: the command lasts while any process holds the pipe.
            self.read_once(wait, sink);
            return Pumped::Busy;
        }
        match self.child.try_wait() {
            Ok(Some(status)) => Pumped::Exited(Some(status)),
            Ok(None) => {
                // The pipe closes a moment before `sh` becomes a zombie.
                exit_fd::wait_for_exit(self.child.id(), wait);
                Pumped::Busy
            }
            Err(_) => Pumped::Exited(None),
        }
    }

    fn read_once(&mut self, wait: Duration, sink: &mut dyn FnMut(&[u8])) {
        match wait_readable(self.reader.as_raw_fd(), wait) {
            Ok(true) => match self.reader.read(&mut self.buf) {
                Ok(0) => self.eof = true,
                Ok(n) => sink(&self.buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => self.eof = true,
            },
            Ok(false) => {}
            Err(_) => self.eof = true,
        }
    }

    /// Kills the whole tree, reaps `sh` and collects what is still in the
    /// pipe (stopping early if a process that left the group keeps it open).
    pub fn kill(&mut self, sink: &mut dyn FnMut(&[u8])) -> Option<ExitStatus> {
        self.guard.kill();
        let status = self.child.wait().ok();
        let drain_until = Instant::now() + DRAIN_AFTER_KILL;
        while !self.eof {
            let now = Instant::now();
            if now >= drain_until {
                break;
            }
            self.read_once(drain_until - now, sink);
        }
        self.guard.armed = false;
        status
    }

    /// The command ended on its own: remember its orphans that outlive it
    /// (so they are reaped once they exit) and disarm the guard.
    pub fn ended(&mut self) {
        self.guard.armed = false;
        reaper::note_survivors(self.guard.root, &self.guard.mark);
    }
}

/// Starts `cmd` (its program, arguments and streams set by the caller) the
/// way every process of this plugin starts: in `cwd`; with `env` applied,
/// so it inherits nothing uji withholds from children (variables set on
/// `cmd` itself stay); marked for the [`reaper`]; in a session and process
/// group of its own; killed if uji dies; inside `sandbox`; from the
/// [`spawner`] thread. The guard it answers kills the whole tree.
pub fn start_tree(
    mut cmd: Command,
    cwd: &Path,
    env: &ChildEnv,
    sandbox: &Prepared,
) -> io::Result<(Child, TreeGuard)> {
    reaper::become_subreaper();
    reaper::reap_adopted();
    let mark = reaper::new_mark();
    cmd.current_dir(cwd);
    env.apply(&mut cmd);
    sandbox.apply_proxy(&mut cmd);
    cmd.env(reaper::MARK_VAR, &mark);
    let enter = sandbox.enter(cwd);
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: setsid, prctl, getppid, and the sandbox's unshare, open,
    // write, mount and landlock_restrict_self are async-signal-safe system
    // calls on data prepared before the fork. setsid puts the command in a new
    // session and process group (so the whole tree can be killed with one
    // killpg) without a controlling terminal, so password prompts fail at
    // once instead of stopping the job. PR_SET_PDEATHSIG kills `sh` if uji
    // dies without stopping it (see `spawner`); a uji already gone before
    // the prctl is seen through getppid. The ruleset fd outlives the spawn
    // (the caller holds `sandbox`).
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() == -1 {
                return Err(io::Error::last_os_error());
            }
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) == -1
                || libc::getppid() != parent
            {
                return Err(io::Error::other("uji exited while the command started"));
            }
            if let Some(enter) = &enter {
                enter.apply()?;
            }
            Ok(())
        });
    }
    let child = spawner::spawn(cmd)?;
    let guard = TreeGuard {
        root: child.id() as libc::pid_t,
        mark,
        armed: true,
    };
    Ok((child, guard))
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
