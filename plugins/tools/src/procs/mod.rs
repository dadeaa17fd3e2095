//! Processes for other plugins: the `proc.*` host services
//! (`uji_protocol::procs`), which the Lua plugin's `uji.job.start` is built
//! on. A process is started like a `run_command` nobody approved
//! ([`start`]: bash for a command line, the same key-free environment, the
//! sandbox core's gate gives such a command, the same process tree and
//! reaper) and read by a thread of its own ([`pump`]), which cuts its
//! stdout and stderr into lines, writes its stdin, and kills it at its
//! timeout or when stopped.
//!
//! What nobody reads stays bounded: past [`MAX_BUFFERED_BYTES`] the thread
//! stops reading the pipes and the process waits on its writes. The table
//! is a [`Procs`] value the plugin makes in `init`, like its jobs.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex, MutexGuard};
use uji_sdk::protocol::procs::{
    MAX_BUFFERED_BYTES, MAX_BYTES_PER_READ, MAX_LINES_PER_READ, MAX_PENDING_INPUT, MAX_PROCS,
    MAX_WAIT_MS, ProcClose, ProcExit, ProcOutput, ProcRead, ProcStart, ProcStarted, ProcStop,
    ProcWrite,
};
use uji_sdk::{CallSandbox, Host};

mod lines;
mod pump;
pub mod services;
mod start;
mod wake;

use wake::Wake;

/// What a buffered line costs besides its bytes (the `String` and its slot),
/// so a flood of empty lines is bounded too.
const LINE_OVERHEAD: usize = 32;
/// How long `proc.stop` waits for the process to be gone.
const STOP_WAIT: Duration = Duration::from_secs(5);

/// Which stream a line came from.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Stream {
    Stdout,
    Stderr,
}

/// The state of a process's stdin.
#[derive(Clone, PartialEq, Eq, Debug)]
enum Input {
    Open,
    /// `proc.close` was called: closed once what is queued is written.
    Closing,
    /// Closed; why, for a later `proc.write`.
    Closed(String),
}

/// What the process's thread and the services share.
struct Shared {
    /// Lines not read yet, in the order they came.
    lines: VecDeque<(Stream, String)>,
    /// What `lines` costs, counted against [`MAX_BUFFERED_BYTES`].
    buffered: usize,
    /// Input queued for stdin, not written yet.
    input: VecDeque<u8>,
    input_state: Input,
    /// `proc.stop` was called.
    stop: bool,
    /// Set by the thread once every line was added.
    exit: Option<ProcExit>,
    /// The exit went to a reader: the id is forgotten.
    delivered: bool,
}

/// One process.
struct Proc {
    id: u64,
    shared: Mutex<Shared>,
    /// Signalled when lines come and at the end.
    changed: Condvar,
    /// Wakes the process's thread (input queued, room made, stop asked).
    wake: Wake,
}

impl Proc {
    fn shared(&self) -> MutexGuard<'_, Shared> {
        self.shared.lock()
    }

    /// Whether the thread may read more output now.
    fn has_room(&self) -> bool {
        self.shared().buffered < MAX_BUFFERED_BYTES
    }

    /// Adds lines of one stream and wakes readers.
    fn add_lines(&self, stream: Stream, lines: Vec<String>) {
        if lines.is_empty() {
            return;
        }
        let mut shared = self.shared();
        for line in lines {
            shared.buffered += line.len() + LINE_OVERHEAD;
            shared.lines.push_back((stream, line));
        }
        drop(shared);
        self.changed.notify_all();
    }

    /// Records the end (after the last line) and wakes readers.
    fn set_exit(&self, exit: ProcExit) {
        let mut shared = self.shared();
        shared.exit = Some(exit);
        if matches!(shared.input_state, Input::Open | Input::Closing) {
            shared.input_state = Input::Closed("it has ended".to_string());
        }
        shared.input.clear();
        drop(shared);
        self.changed.notify_all();
    }
}

/// Where the sandbox of a started process comes from.
enum SandboxFrom {
    /// Asked of uji for every process (`tool.command_sandbox`).
    Uji(Host),
    /// Given once (tests, the tools used as a library outside uji).
    Given(Option<CallSandbox>),
}

struct Table {
    procs: Mutex<BTreeMap<u64, Arc<Proc>>>,
    next_id: AtomicU64,
    sandbox: SandboxFrom,
    /// The session's directory, where a process runs unless told.
    host: Option<Host>,
}

/// The plugin's processes: cheap to clone (one shared table).
#[derive(Clone)]
pub struct Procs(Arc<Table>);

impl Procs {
    /// The table of the plugin in uji: each process runs in the sandbox
    /// uji gives a `run_command` nobody approved, asked of core
    /// (`tool.command_sandbox`, the gate's `call_sandbox`) when it starts,
    /// so the user's `uji.tool.sandbox` settings (mode, network, writable
    /// directories) apply as they do to `run_command`; a uji that cannot
    /// say refuses the start.
    pub fn new(host: &Host) -> Procs {
        Procs::with(SandboxFrom::Uji(host.clone()), Some(host.clone()))
    }

    /// A table outside uji (tests, the tools as a library): every process
    /// runs in `sandbox` (`None`: no OS sandbox), with the environment
    /// children get without uji (`uji_sdk::child`: its minimal fallback),
    /// in the current directory unless told.
    pub fn with_sandbox(sandbox: Option<CallSandbox>) -> Procs {
        Procs::with(SandboxFrom::Given(sandbox), None)
    }

    fn with(sandbox: SandboxFrom, host: Option<Host>) -> Procs {
        Procs(Arc::new(Table {
            procs: Mutex::new(BTreeMap::new()),
            next_id: AtomicU64::new(1),
            sandbox,
            host,
        }))
    }

    fn get(&self, id: u64) -> Result<Arc<Proc>, String> {
        self.0
            .procs
            .lock()
            .get(&id)
            .cloned()
            .ok_or_else(|| no_such(id))
    }

    /// `proc.start`.
    pub fn start(&self, request: ProcStart) -> Result<ProcStarted, String> {
        start::start(self, request)
    }

    /// `proc.read`: waits up to `wait_ms` for a line or the end.
    pub fn read(&self, request: ProcRead) -> Result<ProcOutput, String> {
        let proc = self.get(request.id)?;
        let wait = Duration::from_millis(request.wait_ms.min(MAX_WAIT_MS));
        let deadline = Instant::now() + wait;
        let mut shared = proc.shared();
        loop {
            if shared.delivered {
                return Err(no_such(request.id));
            }
            if !shared.lines.is_empty() || shared.exit.is_some() {
                break;
            }
            if proc.changed.wait_until(&mut shared, deadline).timed_out() {
                // Lines may have come with the timeout: look once more.
                if shared.lines.is_empty() && shared.exit.is_none() {
                    return Ok(ProcOutput::default());
                }
            }
        }
        let mut output = take_lines(&mut shared);
        if shared.lines.is_empty()
            && let Some(exit) = shared.exit.clone()
        {
            shared.delivered = true;
            output.exit = Some(exit);
        }
        let forget = shared.delivered;
        drop(shared);
        if forget {
            self.0.procs.lock().remove(&request.id);
        } else {
            // Room was made: the thread may read the pipes again.
            proc.wake.wake();
        }
        Ok(output)
    }

    /// `proc.write`: queues `data` for stdin.
    pub fn write(&self, request: ProcWrite) -> Result<(), String> {
        let proc = self.get(request.id)?;
        let mut shared = proc.shared();
        match &shared.input_state {
            Input::Open => {}
            Input::Closing => {
                return Err(format!(
                    "process {} has its input closed (proc.close was called): nothing more can \
                     be written to it",
                    request.id
                ));
            }
            Input::Closed(why) => {
                return Err(format!(
                    "process {} no longer takes input: {why}",
                    request.id
                ));
            }
        }
        let queued = shared.input.len();
        if queued + request.data.len() > MAX_PENDING_INPUT {
            return Err(format!(
                "process {} has not read the {queued} bytes written before, and at most {} may \
                 wait: write again once it has read some (or in smaller parts), or stop it",
                request.id, MAX_PENDING_INPUT
            ));
        }
        shared.input.extend(request.data.as_bytes());
        drop(shared);
        proc.wake.wake();
        Ok(())
    }

    /// `proc.close`: closes stdin once the queued input is written.
    pub fn close(&self, request: ProcClose) -> Result<(), String> {
        let proc = self.get(request.id)?;
        let mut shared = proc.shared();
        if shared.input_state == Input::Open {
            shared.input_state = Input::Closing;
        }
        drop(shared);
        proc.wake.wake();
        Ok(())
    }

    /// `proc.stop`: kills the process's tree; waits (briefly) until it
    /// is gone, so the next read has the exit.
    pub fn stop(&self, request: ProcStop) -> Result<(), String> {
        let proc = self.get(request.id)?;
        let mut shared = proc.shared();
        if shared.exit.is_some() {
            return Ok(());
        }
        shared.stop = true;
        proc.wake.wake();
        let deadline = Instant::now() + STOP_WAIT;
        while shared.exit.is_none() {
            if proc.changed.wait_until(&mut shared, deadline).timed_out() {
                break;
            }
        }
        Ok(())
    }

    /// What process `id`'s unread lines cost now, counted against
    /// [`MAX_BUFFERED_BYTES`] (their bytes and a little per line); `None`
    /// when there is no such process.
    pub fn buffered(&self, id: u64) -> Option<usize> {
        let proc = self.get(id).ok()?;
        Some(proc.shared().buffered)
    }

    /// Processes kept now (running, or with output or an exit not read).
    pub fn count(&self) -> usize {
        self.0.procs.lock().len()
    }

    /// Adds a started process under a new id, unless [`MAX_PROCS`] are
    /// kept already.
    fn insert(&self, make: impl FnOnce(u64) -> Arc<Proc>) -> Result<Arc<Proc>, String> {
        let mut procs = self.0.procs.lock();
        if procs.len() >= MAX_PROCS {
            return Err(too_many());
        }
        let id = self.0.next_id.fetch_add(1, Ordering::Relaxed);
        let proc = make(id);
        procs.insert(id, Arc::clone(&proc));
        Ok(proc)
    }

    fn remove(&self, id: u64) {
        self.0.procs.lock().remove(&id);
    }
}

fn no_such(id: u64) -> String {
    format!(
        "no process {id}: it was never started, or proc.read already reported its exit (a \
         process is forgotten then)"
    )
}

fn too_many() -> String {
    format!(
        "cannot start another process: {MAX_PROCS} are running or have output not read yet; \
         stop one with proc.stop, or read one to its end with proc.read"
    )
}

/// Takes the lines a read may carry.
fn take_lines(shared: &mut Shared) -> ProcOutput {
    let mut output = ProcOutput::default();
    let (mut count, mut bytes) = (0, 0);
    while let Some((_, line)) = shared.lines.front() {
        if count > 0 && (count >= MAX_LINES_PER_READ || bytes + line.len() > MAX_BYTES_PER_READ) {
            break;
        }
        let Some((stream, line)) = shared.lines.pop_front() else {
            break;
        };
        count += 1;
        bytes += line.len();
        shared.buffered = shared.buffered.saturating_sub(line.len() + LINE_OVERHEAD);
        match stream {
            Stream::Stdout => output.stdout.push(line),
            Stream::Stderr => output.stderr.push(line),
        }
    }
    output
}
