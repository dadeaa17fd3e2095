//! The Lua thread.
//!
//! One Lua state per plugin instance lives on a thread of its own. Everything
//! that reaches Lua from uji (tool runs, subjects, hooks, commands, wires,
//! timers) is a job sent over a channel and run there in order. Calls that
//! must answer (hooks, subjects, commands) wait for the job's reply; tool runs
//! and wire streams return at once and finish later through their context.
//!
//! Re-entrancy: when Lua calls a host service that calls back into this
//! plugin on the same thread (`uji.emit` running Lua handlers, for instance),
//! [`Link::call`] sees it is already on the Lua thread and runs the job
//! directly instead of queueing it, which would deadlock.

use std::cell::{Cell, RefCell};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use mlua::{Function, Lua};
use uji_sdk::{Host, LogLevel, Reply, ToolContext};

use crate::errors::{LuaFailure, describe};
use crate::interrupt::Interrupts;

/// How long the Lua thread keeps polling for the next job after one ran,
/// before it sleeps.
const SPIN: Duration = Duration::from_micros(200);

/// Work for the Lua thread.
pub type Job = Box<dyn FnOnce(&Rc<State>) + Send>;

/// The handle everything uji holds to reach the Lua thread.
pub struct Link {
    tx: Sender<Job>,
    thread: ThreadId,
    next: AtomicU64,
    /// Calls whose Lua code must stop ([`crate::interrupt`]).
    pub interrupts: Interrupts,
}

impl Link {
    /// Queues `job`; false when the Lua thread is gone.
    pub fn post(&self, job: Job) -> bool {
        self.tx.send(job).is_ok()
    }

    pub fn on_lua_thread(&self) -> bool {
        std::thread::current().id() == self.thread
    }

    /// A number unique within this plugin instance.
    pub fn next_id(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// Runs `f` on the Lua thread and waits for its answer. On the Lua
    /// thread itself (a host call calling back) it runs `f` directly.
    pub fn call<R: Send + 'static>(
        &self,
        f: impl FnOnce(&Rc<State>) -> R + Send + 'static,
    ) -> Result<R, String> {
        if self.on_lua_thread() {
            let state = current().ok_or("the Lua state is not ready")?;
            // Never let a panic unwind into the host's call (it would mark
            // the whole plugin failed).
            return catch_unwind(AssertUnwindSafe(|| f(&state)))
                .map_err(|_| "internal error in the Lua plugin (a panic)".to_string());
        }
        let (tx, rx) = mpsc::sync_channel(1);
        let posted = self.post(Box::new(move |state| {
            let _ = tx.send(f(state));
        }));
        if !posted {
            return Err("the Lua thread has stopped".to_string());
        }
        rx.recv()
            .map_err(|_| "the Lua call ended without an answer (an internal error)".to_string())
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Rc<State>>> = const { RefCell::new(None) };
}

/// The state of the Lua thread this code runs on.
pub fn current() -> Option<Rc<State>> {
    CURRENT.with(|c| c.borrow().clone())
}

/// One running tool call.
pub struct CallSlot {
    pub tool: String,
    pub ctx: RefCell<Option<ToolContext>>,
    pub cancel: RefCell<Option<Function>>,
}

/// One running wire request.
pub struct StreamSlot {
    pub wire: String,
    pub reply: RefCell<Option<Reply>>,
    pub cancel: RefCell<Option<Function>>,
    pub text: RefCell<String>,
    pub reasoning: RefCell<String>,
}

/// What `uji.tool.add` stored for one tool.
pub struct ToolEntry {
    pub name: String,
    pub run: Function,
    pub subject: Option<Function>,
}

/// A key binding kept for `uji.keymap.list()`.
pub struct KeyBinding {
    pub mode: String,
    pub key: String,
    /// As given (a function stays one).
    pub binding: mlua::Value,
    /// As uji was told: an action name or `{"command": name}`.
    pub forwarded: serde_json::Value,
}

#[derive(Default)]
pub struct Timers {
    heap: BinaryHeap<Reverse<(Instant, u64)>>,
    /// Each callback with the function that scheduled it, for messages.
    callbacks: HashMap<u64, (Function, &'static str)>,
}

/// Everything the Lua thread owns. Only ever touched on that thread; never
/// hold a `RefCell` borrow across a call into Lua or the host.
pub struct State {
    pub lua: Lua,
    pub host: Host,
    pub link: Arc<Link>,
    pub config_dir: Option<PathBuf>,
    pub tools: RefCell<HashMap<u64, ToolEntry>>,
    pub calls: RefCell<HashMap<u64, Rc<CallSlot>>>,
    pub hooks: RefCell<HashMap<u64, Function>>,
    pub hook_names: RefCell<HashSet<String>>,
    pub commands: RefCell<HashMap<u64, Function>>,
    pub wires: RefCell<HashMap<u64, Function>>,
    pub streams: RefCell<HashMap<u64, Rc<StreamSlot>>>,
    pub keymap: RefCell<Vec<KeyBinding>>,
    pub timers: RefCell<Timers>,
    pub timer_seq: Cell<u64>,
    /// Work that found something busy (ctx.done called from inside
    /// ctx.progress, say); it runs right after the current job.
    pub later: RefCell<Vec<Later>>,
    /// Tokens of the calls whose Lua code runs now, innermost last: an
    /// interrupt of one of them stops the code ([`crate::interrupt`]).
    pub running: RefCell<Vec<u64>>,
    /// While a configuration file loads, when it must have finished
    /// ([`crate::limits`]).
    pub load_until: Cell<Option<std::time::Instant>>,
}

/// How a Lua entry point run as a task came back ([`State::call_in_task`]).
pub enum Entered {
    /// It ended without waiting, with these results.
    Done(mlua::MultiValue),
    /// It waits; the function cancels it.
    Waiting(Function),
}

/// Work queued with [`State::later`].
pub type Later = Box<dyn FnOnce(&Rc<State>)>;

impl State {
    /// Whether the file loading now has run past its deadline.
    pub fn load_overdue(&self) -> bool {
        self.load_until
            .get()
            .is_some_and(|until| std::time::Instant::now() > until)
    }

    /// Shows a notice (source: the lua plugin).
    pub fn notify(&self, text: &str) {
        self.host.notify(text);
    }

    /// Reports a Lua failure as a notice, `what` saying what failed, and logs
    /// the whole error.
    pub fn report(&self, what: &str, err: &mlua::Error) -> LuaFailure {
        let failure = describe(err);
        self.notify(&format!("{what} failed: {}", failure.full()));
        self.host.log(LogLevel::Debug, &format!("{what}: {err}"));
        failure
    }

    /// Calls `f(args)` as a task (tasks.lua), so that it may wait:
    /// `Ok(Entered::Done(results))` when it ended without waiting, `Err`
    /// when it failed so, `Ok(Entered::Waiting(cancel))` when it waits;
    /// `on_end(ok, ...)` then hears how it ends.
    pub fn call_in_task(
        &self,
        f: &Function,
        on_end: Option<Function>,
        args: impl mlua::IntoLuaMulti,
    ) -> mlua::Result<Entered> {
        let call: Function = self.lua.named_registry_value(crate::api::TASK_CALL)?;
        let mut results = call
            .call::<mlua::MultiValue>((f.clone(), on_end, args))?
            .into_iter();
        match results.next() {
            Some(mlua::Value::Boolean(true)) => Ok(Entered::Done(results.collect())),
            _ => match results.next() {
                Some(mlua::Value::Function(cancel)) => Ok(Entered::Waiting(cancel)),
                _ => Ok(Entered::Waiting(self.lua.create_function(|_, ()| Ok(()))?)),
            },
        }
    }

    /// Runs `f` as the Lua code of call `token`, which an interrupt of that
    /// call stops.
    pub fn run_for<R>(&self, token: u64, f: impl FnOnce() -> R) -> R {
        /// Pops the token also when `f` panics.
        struct Pop<'a>(&'a RefCell<Vec<u64>>);
        impl Drop for Pop<'_> {
            fn drop(&mut self) {
                self.0.borrow_mut().pop();
            }
        }
        self.running.borrow_mut().push(token);
        let _pop = Pop(&self.running);
        f()
    }

    /// Runs `f` right after the current job.
    pub fn later(&self, f: Later) {
        self.later.borrow_mut().push(f);
    }

    /// Runs `f` after `delay` on this thread; returns the timer's id. `api`
    /// (`uji.defer`, `uji.schedule`) names it when it fails.
    pub fn add_timer(&self, delay: Duration, f: Function, api: &'static str) -> u64 {
        let id = self.timer_seq.get() + 1;
        self.timer_seq.set(id);
        let mut timers = self.timers.borrow_mut();
        timers.heap.push(Reverse((Instant::now() + delay, id)));
        timers.callbacks.insert(id, (f, api));
        id
    }

    /// Cancels a timer; true if it had not run yet.
    pub fn cancel_timer(&self, id: u64) -> bool {
        self.timers.borrow_mut().callbacks.remove(&id).is_some()
    }

    fn next_deadline(&self) -> Option<Instant> {
        let mut timers = self.timers.borrow_mut();
        // Drop cancelled entries at the top so they do not wake us.
        while let Some(Reverse((_, id))) = timers.heap.peek().copied() {
            if timers.callbacks.contains_key(&id) {
                break;
            }
            timers.heap.pop();
        }
        timers.heap.peek().map(|Reverse((at, _))| *at)
    }

    /// Runs the timers that are due. Timers added while running wait for the
    /// next pass, so a callback that reschedules itself cannot starve jobs.
    fn run_due_timers(self: &Rc<Self>) {
        let now = Instant::now();
        let last = self.timer_seq.get();
        loop {
            let due = {
                let mut timers = self.timers.borrow_mut();
                match timers.heap.peek().copied() {
                    Some(Reverse((at, id))) if at <= now && id <= last => {
                        timers.heap.pop();
                        timers.callbacks.remove(&id)
                    }
                    _ => break,
                }
            };
            if let Some((callback, api)) = due
                && let Err(e) = self.call_in_task(&callback, None, ())
            {
                self.report(&format!("a {api} callback"), &e);
            }
        }
    }
}

/// What the thread needs to build its state.
pub struct Setup {
    pub host: Host,
    pub link: Arc<Link>,
    pub config_dir: Option<PathBuf>,
}

/// Starts the Lua thread and builds its state; returns the link to it.
pub fn start(host: Host, config_dir: Option<PathBuf>) -> Result<Arc<Link>, String> {
    let (tx, rx) = mpsc::channel::<Job>();
    let (setup_tx, setup_rx) = mpsc::sync_channel::<Setup>(1);
    let (ready_tx, ready_rx) = mpsc::sync_channel::<Result<(), String>>(1);
    let thread = std::thread::Builder::new()
        .name("uji-lua".to_string())
        .spawn(move || thread_main(rx, setup_rx, ready_tx))
        .map_err(|e| format!("cannot start the Lua thread: {e}"))?;
    let link = Arc::new(Link {
        tx,
        thread: thread.thread().id(),
        next: AtomicU64::new(1),
        interrupts: Interrupts::default(),
    });
    setup_tx
        .send(Setup {
            host,
            link: Arc::clone(&link),
            config_dir,
        })
        .map_err(|_| "the Lua thread stopped while starting".to_string())?;
    match ready_rx.recv() {
        Ok(Ok(())) => Ok(link),
        Ok(Err(e)) => Err(e),
        Err(_) => Err("the Lua thread stopped while starting".to_string()),
    }
}

/// Runs the work queued with [`State::later`], including work it queues.
fn drain_later(state: &Rc<State>) {
    loop {
        let later = std::mem::take(&mut *state.later.borrow_mut());
        if later.is_empty() {
            return;
        }
        for work in later {
            if catch_unwind(AssertUnwindSafe(|| work(state))).is_err() {
                state.notify("internal error: a Lua job panicked; uji keeps going");
            }
        }
    }
}

fn thread_main(
    rx: Receiver<Job>,
    setup: Receiver<Setup>,
    ready: mpsc::SyncSender<Result<(), String>>,
) {
    let Ok(setup) = setup.recv() else {
        return;
    };
    let built = catch_unwind(AssertUnwindSafe(|| crate::api::new_state(setup)));
    let state = match built {
        Ok(Ok(state)) => state,
        Ok(Err(e)) => {
            let _ = ready.send(Err(e));
            return;
        }
        Err(_) => {
            let _ = ready.send(Err("building the Lua state panicked".to_string()));
            return;
        }
    };
    CURRENT.with(|c| *c.borrow_mut() = Some(Rc::clone(&state)));
    let _ = ready.send(Ok(()));
    drop(ready);
    let mut last_job = Instant::now();
    loop {
        // Timers already due run before the next job: a call queued behind
        // init.lua's `uji.schedule` and `uji.defer(0, …)` sees their effects.
        run_timers(&state);
        // Right after a job, more usually follow (a turn's tool calls, hook
        // after hook): wait for them briefly without sleeping, which saves
        // the thread wake-up (tens of microseconds on some machines).
        let mut job = None;
        if last_job.elapsed() < SPIN {
            let deadline = state.next_deadline();
            while last_job.elapsed() < SPIN && deadline.is_none_or(|at| Instant::now() < at) {
                match rx.try_recv() {
                    Ok(next) => {
                        job = Some(next);
                        break;
                    }
                    Err(mpsc::TryRecvError::Empty) => std::thread::yield_now(),
                    Err(mpsc::TryRecvError::Disconnected) => break,
                }
            }
        }
        let job = match job {
            Some(job) => Some(job),
            None => match state.next_deadline() {
                Some(at) => match rx.recv_timeout(at.saturating_duration_since(Instant::now())) {
                    Ok(job) => Some(job),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => break,
                },
                None => match rx.recv() {
                    Ok(job) => Some(job),
                    Err(_) => break,
                },
            },
        };
        if let Some(job) = job {
            if catch_unwind(AssertUnwindSafe(|| job(&state))).is_err() {
                state.notify("internal error: a Lua job panicked; uji keeps going");
            }
            last_job = Instant::now();
        }
        drain_later(&state);
    }
    CURRENT.with(|c| c.borrow_mut().take());
}

/// Runs the timers that are due, then what they left for later.
fn run_timers(state: &Rc<State>) {
    if catch_unwind(AssertUnwindSafe(|| state.run_due_timers())).is_err() {
        state.notify("internal error: a Lua timer panicked; uji keeps going");
    }
    drain_later(state);
}
