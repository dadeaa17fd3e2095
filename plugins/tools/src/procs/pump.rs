//! The thread that runs one process to its end: it reads stdout and stderr
//! into lines while there is room for them (so a process nobody reads
//! waits on its writes), writes the queued input to stdin, closes stdin
//! when asked, kills the whole tree at the timeout or when stopped, and
//! records the exit once every line was added.

use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, ExitStatus};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use uji_sdk::protocol::procs::{ProcExit, REASON_STOPPED, REASON_TIMEOUT};

use super::lines::Lines;
use super::{Input, Proc, Stream};
use crate::args::os_error;
use crate::exit_fd::ExitFd;
use crate::process::TreeGuard;
use crate::reaper;

/// Bytes read from a pipe at once.
const CHUNK: usize = 64 * 1024;
/// How long a poll waits when nothing can wake it sooner but the clock.
const IDLE: Duration = Duration::from_secs(1);
/// How often the process is looked at once its pipes are closed.
const EXIT_POLL: Duration = Duration::from_millis(20);
/// After a kill, how long to collect output still in the pipes.
const DRAIN_AFTER_KILL: Duration = Duration::from_millis(300);

/// The process's ends of its pipes; `None` once closed.
pub struct Pipes {
    pub stdin: Option<ChildStdin>,
    pub stdout: Option<ChildStdout>,
    pub stderr: Option<ChildStderr>,
}

/// A started process and the guard of its tree. Dropped before the
/// process ended (an error, a panic, a thread that could not start), it
/// kills the whole tree and reaps the process.
pub struct Tree {
    pub child: Child,
    guard: TreeGuard,
}

impl Tree {
    pub fn new(child: Child, guard: TreeGuard) -> Tree {
        live::add(guard.root);
        Tree { child, guard }
    }

    /// Kills the whole tree and reaps the process.
    fn kill(&mut self) {
        self.guard.kill();
        let _ = self.child.wait();
        self.guard.armed = false;
    }

    /// The process ended on its own: its orphans that outlive it are
    /// remembered (and reaped once they exit), as `run_command` does.
    fn ended(&mut self) {
        self.guard.armed = false;
        reaper::note_survivors(self.guard.root, &self.guard.mark);
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        if self.guard.armed {
            self.kill();
        }
        live::remove(self.guard.root);
    }
}

/// Starts the process's thread.
pub fn start(
    proc: Arc<Proc>,
    tree: Tree,
    pipes: Pipes,
    deadline: Option<Instant>,
) -> io::Result<()> {
    std::thread::Builder::new()
        .name(format!("uji-proc-{}", proc.id))
        .spawn(move || run(&proc, tree, pipes, deadline))
        .map(|_| ())
}

/// The two output streams as lines.
struct Readers {
    stdout: Lines,
    stderr: Lines,
    buf: Vec<u8>,
}

impl Readers {
    /// Reads once from the pipe of `stream` (which poll said is ready);
    /// closes it at its end.
    fn read(&mut self, proc: &Proc, pipes: &mut Pipes, stream: Stream) {
        let (pipe, lines): (Option<&mut dyn Read>, &mut Lines) = match stream {
            Stream::Stdout => (
                pipes.stdout.as_mut().map(|p| p as &mut dyn Read),
                &mut self.stdout,
            ),
            Stream::Stderr => (
                pipes.stderr.as_mut().map(|p| p as &mut dyn Read),
                &mut self.stderr,
            ),
        };
        let Some(pipe) = pipe else {
            return;
        };
        let mut out = Vec::new();
        let ended = match pipe.read(&mut self.buf) {
            Ok(0) => true,
            Ok(n) => {
                lines.push(&self.buf[..n], &mut out);
                false
            }
            Err(e) => !matches!(
                e.kind(),
                io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock
            ),
        };
        if ended {
            lines.finish(&mut out);
            match stream {
                Stream::Stdout => pipes.stdout = None,
                Stream::Stderr => pipes.stderr = None,
            }
        }
        proc.add_lines(stream, out);
    }

    /// The last lines without a newline, once the process is gone.
    fn finish(&mut self, proc: &Proc) {
        for (stream, lines) in [
            (Stream::Stdout, &mut self.stdout),
            (Stream::Stderr, &mut self.stderr),
        ] {
            let mut out = Vec::new();
            lines.finish(&mut out);
            proc.add_lines(stream, out);
        }
    }
}

/// What one round of the loop may wait for.
struct Round {
    stop: bool,
    room: bool,
    pending: bool,
    closing: bool,
}

fn round(proc: &Proc) -> Round {
    let shared = proc.shared();
    Round {
        stop: shared.stop,
        room: shared.buffered < uji_sdk::protocol::procs::MAX_BUFFERED_BYTES,
        pending: !shared.input.is_empty(),
        closing: shared.input_state == Input::Closing,
    }
}

fn run(proc: &Proc, mut tree: Tree, mut pipes: Pipes, deadline: Option<Instant>) {
    let mut readers = Readers {
        stdout: Lines::default(),
        stderr: Lines::default(),
        buf: vec![0u8; CHUNK],
    };
    // Once the pipes are closed, the process's exit wakes the poll (where
    // the kernel has pidfds); else it is looked at every EXIT_POLL.
    let mut exit_fd: Option<ExitFd> = None;
    let exit = loop {
        let now = Instant::now();
        let state = round(proc);
        if state.stop {
            break killed(proc, &mut tree, &mut pipes, &mut readers, REASON_STOPPED);
        }
        if deadline.is_some_and(|d| now >= d) {
            break killed(proc, &mut tree, &mut pipes, &mut readers, REASON_TIMEOUT);
        }
        if state.closing && !state.pending && pipes.stdin.is_some() {
            pipes.stdin = None;
            proc.shared().input_state = Input::Closed("proc.close closed its input".to_string());
        }
        let open = pipes.stdout.is_some() || pipes.stderr.is_some();
        if !open {
            // Every process holding the pipes is gone: only the exit is left.
            match tree.child.try_wait() {
                Ok(Some(status)) => {
                    tree.ended();
                    break exit_of(Some(status));
                }
                Ok(None) => {}
                Err(_) => {
                    tree.ended();
                    break exit_of(None);
                }
            }
            match exit_fd.as_ref().map(|exit| exit.wait(Duration::ZERO)) {
                None => exit_fd = ExitFd::open(tree.child.id()),
                // Said it exited, yet not reapable: never spin on it.
                Some(true) => exit_fd = None,
                Some(false) => {}
            }
        }
        let mut wait = if open || exit_fd.is_some() {
            IDLE
        } else {
            EXIT_POLL
        };
        if let Some(deadline) = deadline {
            wait = wait.min(deadline.saturating_duration_since(now));
        }
        let mut polled = Polled::default();
        polled.add(proc.wake.fd(), libc::POLLIN, Ready::Wake);
        if let Some(exit) = &exit_fd {
            polled.add(exit.fd(), libc::POLLIN, Ready::Exit);
        }
        if state.room {
            if let Some(out) = &pipes.stdout {
                polled.add(out.as_raw_fd(), libc::POLLIN, Ready::Out(Stream::Stdout));
            }
            if let Some(err) = &pipes.stderr {
                polled.add(err.as_raw_fd(), libc::POLLIN, Ready::Out(Stream::Stderr));
            }
        }
        if state.pending
            && let Some(input) = &pipes.stdin
        {
            polled.add(input.as_raw_fd(), libc::POLLOUT, Ready::In);
        }
        for ready in polled.wait(wait) {
            match ready {
                Ready::Wake => proc.wake.clear(),
                // Reaped at the top of the next round.
                Ready::Exit => {}
                Ready::Out(stream) => readers.read(proc, &mut pipes, stream),
                Ready::In => write_input(proc, &mut pipes.stdin),
            }
        }
    };
    drop(pipes);
    readers.finish(proc);
    proc.set_exit(exit);
    drop(tree);
}

/// Kills the tree, collects what is still in the pipes (briefly, while
/// there is room), and answers the exit uji caused.
fn killed(
    proc: &Proc,
    tree: &mut Tree,
    pipes: &mut Pipes,
    readers: &mut Readers,
    reason: &str,
) -> ProcExit {
    tree.kill();
    pipes.stdin = None;
    let until = Instant::now() + DRAIN_AFTER_KILL;
    while pipes.stdout.is_some() || pipes.stderr.is_some() {
        let now = Instant::now();
        if now >= until || !proc.has_room() {
            break;
        }
        let mut polled = Polled::default();
        if let Some(out) = &pipes.stdout {
            polled.add(out.as_raw_fd(), libc::POLLIN, Ready::Out(Stream::Stdout));
        }
        if let Some(err) = &pipes.stderr {
            polled.add(err.as_raw_fd(), libc::POLLIN, Ready::Out(Stream::Stderr));
        }
        let ready = polled.wait(until - now);
        if ready.is_empty() {
            break;
        }
        for ready in ready {
            if let Ready::Out(stream) = ready {
                readers.read(proc, pipes, stream);
            }
        }
    }
    ProcExit {
        code: -1,
        reason: Some(reason.to_string()),
        signal: None,
    }
}

/// Writes what is queued for stdin, as much as the pipe takes now.
fn write_input(proc: &Proc, stdin: &mut Option<ChildStdin>) {
    let Some(pipe) = stdin.as_mut() else {
        return;
    };
    let mut shared = proc.shared();
    let mut broken = None;
    while !shared.input.is_empty() {
        let (front, _) = shared.input.as_slices();
        match pipe.write(front) {
            Ok(0) => break,
            Ok(n) => {
                shared.input.drain(..n);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) => {
                broken = Some(if e.kind() == io::ErrorKind::BrokenPipe {
                    "it closed its input".to_string()
                } else {
                    format!("writing to it failed: {}", os_error(&e))
                });
                break;
            }
        }
    }
    if let Some(why) = broken {
        shared.input.clear();
        shared.input_state = Input::Closed(why);
        drop(shared);
        *stdin = None;
    }
}

fn exit_of(status: Option<ExitStatus>) -> ProcExit {
    let (code, signal) = match status.map(|s| (s.code(), s.signal())) {
        Some((Some(code), _)) => (i64::from(code), None),
        Some((None, Some(signal))) => (-1, Some(signal)),
        _ => (-1, None),
    };
    ProcExit {
        code,
        reason: None,
        signal,
    }
}

/// What a polled descriptor stands for.
#[derive(Clone, Copy)]
enum Ready {
    Wake,
    /// The process has exited.
    Exit,
    Out(Stream),
    In,
}

#[derive(Default)]
struct Polled {
    fds: Vec<libc::pollfd>,
    what: Vec<Ready>,
}

impl Polled {
    fn add(&mut self, fd: i32, events: libc::c_short, what: Ready) {
        self.fds.push(libc::pollfd {
            fd,
            events,
            revents: 0,
        });
        self.what.push(what);
    }

    /// Waits up to `wait`; answers the descriptors that are ready (or
    /// closed, or failed: a read or write then says which).
    fn wait(&mut self, wait: Duration) -> Vec<Ready> {
        // Rounded up, so a wait of less than a millisecond is no busy loop.
        let ms = wait.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32;
        // SAFETY: pollfds this value owns, for the duration of the call.
        let rc = unsafe { libc::poll(self.fds.as_mut_ptr(), self.fds.len() as libc::nfds_t, ms) };
        if rc < 0 {
            if io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                // Not expected; never spin on it.
                std::thread::sleep(EXIT_POLL);
            }
            return Vec::new();
        }
        self.fds
            .iter()
            .zip(&self.what)
            .filter(|(fd, _)| fd.revents != 0)
            .map(|(_, what)| *what)
            .collect()
    }
}

/// The process groups of processes still running, killed when uji exits
/// normally (an `atexit` handler; a uji killed outright leaves that to
/// `PR_SET_PDEATHSIG`, as for `run_command`).
mod live {
    use super::Mutex;
    use std::sync::Once;

    static LIVE: Mutex<Vec<libc::pid_t>> = Mutex::new(Vec::new());

    pub fn add(root: libc::pid_t) {
        static AT_EXIT: Once = Once::new();
        AT_EXIT.call_once(|| {
            // SAFETY: registers a function that only signals process groups.
            unsafe {
                libc::atexit(kill_at_exit);
            }
        });
        LIVE.lock().push(root);
    }

    pub fn remove(root: libc::pid_t) {
        LIVE.lock().retain(|&pid| pid != root);
    }

    extern "C" fn kill_at_exit() {
        // Never waits: a lock held now is given up on.
        if let Some(live) = LIVE.try_lock() {
            for &root in live.iter() {
                if root > 1 {
                    // SAFETY: killpg only sends a signal.
                    unsafe {
                        libc::killpg(root, libc::SIGKILL);
                    }
                }
            }
        }
    }
}
