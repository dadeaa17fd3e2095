//! A session as frontends see it: operations in, events out (the
//! submission/event queue split of docs/frontends.md).
//!
//! Two tasks serve a connection. The router reads operations and answers
//! the ones it can at once (interrupts, approvals, queued messages, model
//! switches, listings, commands); the worker owns the [`Agent`] and runs
//! what needs it, one piece of work after another: turns, compaction,
//! switching to another session. Every operation gets one `ack` or `error`
//! event naming its id.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::sync::mpsc as tmpsc;
use tokio::sync::watch;
use uji_host::SessionPort;
use uji_protocol::ApprovalMode;
use uji_protocol::frontend::answers::{
    self, Answer, CompactDone, ModeSet, ModelList, ModelSet, ProviderList, SessionList,
    SessionSwitched, Unqueued,
};
use uji_protocol::frontend::{
    ApprovalDecision, CommandInfo, Delivery, Event, ModelState, NoticeLevel, Op, Submission,
};
use uji_protocol::services::{
    HTTP_MAX_OPEN, HttpClose, HttpOpen, HttpRead, ModelChoice, ModelUse, Quit, Service,
    SessionCompact, SessionInfo, SessionInfoRequest, SessionInterrupt, SessionMode, SessionReload,
    SessionSetTitle, SessionSubmit, StatusSet,
};

use crate::auth::providers::{MODEL_USE_NEEDS, Resolved};
use crate::gate::Approver;
use crate::gate::approvals::FrontendApprover;
use crate::session::service::{Approvals, Sessions, Start};
use crate::turn::agent::{Agent, Connection, SessionSnapshot, TurnOutcome};
use crate::turn::control::{EventSink, MessageQueue, Queued, SessionControl};
use crate::turn::interrupt::{Interrupter, interrupt_pair};

mod ask;
mod commands;
mod dialogs;
mod facts;
mod http;
pub mod jobs;
pub mod launch;
mod login;

mod outbox;
mod reports;
mod restore;
mod shell;
#[cfg(test)]
mod tests;

use crate::session::live;

/// The frontend's handle on a running session.
pub struct ServerPort {
    ops: tmpsc::UnboundedSender<Submission>,
    events: outbox::Reader,
    next_id: AtomicU64,
}

impl ServerPort {
    /// Submits an operation uji itself makes (the first prompt of `uji
    /// run`, a signal); returns the id its ack will name.
    pub fn submit_op(&self, op: Op) -> Result<String, String> {
        let id = format!("uji-{}", self.next_id.fetch_add(1, Ordering::Relaxed));
        self.submit_submission(Submission::new(id.clone(), op))?;
        Ok(id)
    }

    fn submit_submission(&self, submission: Submission) -> Result<(), String> {
        self.ops
            .send(submission)
            .map_err(|_| "the session has ended".to_string())
    }

    /// The next event, typed (`Ok(None)` on timeout).
    pub fn next(&self, timeout: Duration) -> Result<Option<Event>, String> {
        self.events.next(timeout)
    }

    /// The frontend returned: later events are dropped instead of waiting
    /// for room in the bounded queue.
    pub fn stop_reading(&self) {
        self.events.close();
    }
}

impl SessionPort for ServerPort {
    fn submit(&self, op: Value) -> Result<(), String> {
        let mut submission: Submission = serde_json::from_value(op).map_err(|e| {
            format!("invalid operation: {e}; docs/frontends.md lists the operations")
        })?;
        if submission.id.is_none() {
            // A protocol 1 frontend: name the operation by its position.
            submission.id = Some(format!("#{}", self.next_id.fetch_add(1, Ordering::Relaxed)));
        }
        self.submit_submission(submission)
    }

    fn next_event(&self, timeout_ms: u64) -> Result<Option<Value>, String> {
        match self.next(Duration::from_millis(timeout_ms))? {
            Some(event) => serde_json::to_value(&event)
                .map(Some)
                .map_err(|e| e.to_string()),
            None => Ok(None),
        }
    }
}

/// Work that needs the agent, run one after another.
enum Work {
    Turn(Queued),
    Compact(String),
    /// Back to before a user's message: the conversation, the code, or both.
    Rewind(String, restore::Rewind),
    /// `/undo`, `/redo`: files put back from the checkpoints.
    Restore(String, crate::turn::agent::RestoreRequest),
    Switch(String, Start),
    /// Apply what [`SessionControl`] holds now (the session is idle).
    Apply,
    /// A background job's report waits: run a turn for it.
    Wake,
}

impl Work {
    /// Whether it may begin interruptible work (a turn or a compaction),
    /// which an interrupt sent before it begins applies to.
    fn may_begin(&self) -> bool {
        matches!(self, Work::Turn(_) | Work::Wake | Work::Compact(_))
    }
}

/// What the router and the worker share. Each piece of session state has
/// one owner, and only the owner changes it:
///
/// - the worker owns the [`Agent`] (the session file, the settings the
///   running request uses, usage), and through it `snapshot`: what the
///   router and host services read of the session;
/// - `control` owns the model choice (the model the next request uses, as
///   last switched) and the changes waiting for the agent's next safe
///   point: the router and services write them, the agent takes them;
/// - `queue` owns the messages waiting for a turn: the router pushes, the
///   worker pops;
/// - `current` says whether work runs: the worker sets and clears it, the
///   router reads it and interrupts through it;
/// - `http` owns the HTTP requests plugins opened;
/// - the router owns the rest: the status-line items, the commands last
///   told, an interrupt waiting for the next piece of work, `closing`, the
///   work sender and the running `!cmd`s.
struct Shared {
    sessions: Sessions,
    events: outbox::Sender,
    /// The running work's interrupter; `Some` while busy.
    current: Mutex<Option<Interrupter>>,
    /// An interrupt between two pieces of work applies to the next one.
    pending_interrupt: AtomicBool,
    /// Pieces of work sent that may begin a turn or a compaction and have
    /// not begun: only while there are some does an interrupt that finds
    /// the session idle wait for the next one (an Esc that stopped a `!cmd`
    /// must not interrupt the message the person sends next).
    starting: AtomicUsize,
    closing: AtomicBool,
    approver: Option<FrontendApprover>,
    /// Plugins' dialogs (`ui.dialog`) and whether the frontend shows them.
    dialogs: dialogs::Dialogs,
    /// The session's runtime, for questions asked from plugins' threads.
    runtime: tokio::runtime::Handle,
    queue: MessageQueue,
    control: SessionControl,
    /// The running session as its agent last published it.
    snapshot: watch::Receiver<SessionSnapshot>,
    work: Mutex<Option<tmpsc::UnboundedSender<Work>>>,
    shells: shell::Shells,
    /// The running session's checkpoints, for `!cmd` (the agent owns them;
    /// set when it connects).
    checkpointing: parking_lot::Mutex<Option<crate::turn::agent::Checkpointing>>,
    /// Status-line items plugins set, kept across session switches.
    status: Mutex<BTreeMap<String, String>>,
    /// The slash commands the frontend was last told of.
    commands: Mutex<Vec<CommandInfo>>,
    /// The HTTP requests plugins opened (`http.*`), run on `runtime`. One
    /// session server runs per process, so its bound is the process's.
    http: http::Http,
}

/// How an operation was answered by the code that handled it.
enum Reply {
    Done(Option<Value>),
    /// The work that finishes it sends the ack or error.
    Later,
}

impl Reply {
    /// Done, with `answer` as the ack's `result`.
    fn answer<A: Answer>(answer: &A) -> Result<Reply, String> {
        answered(answer).map(Reply::Done)
    }
}

/// `answer` as an ack's `result`.
fn answered<A: Answer>(answer: &A) -> Result<Option<Value>, String> {
    answers::encode(answer).map(Some).map_err(|e| e.to_string())
}

impl Shared {
    fn emit(&self, event: Event) {
        self.events.send(event);
    }

    /// `session_configured` for `agent`, with the status-line items.
    fn configured_event(&self, agent: &Agent, resumed: bool) -> Event {
        let mut configured = self.sessions.configured(agent, resumed);
        configured.status = self.status.lock().clone();
        self.commands.lock().clone_from(&configured.commands);
        Event::SessionConfigured(Box::new(configured))
    }

    /// Tells the frontend the commands now, when they are not what it was
    /// last told (a command re-added with the same words changes nothing).
    fn commands_changed(&self) {
        let commands = self.sessions.commands();
        let mut told = self.commands.lock();
        if *told == commands {
            return;
        }
        told.clone_from(&commands);
        // Emitted under the lock, so two changes at once arrive in order.
        self.emit(Event::CommandsChanged { commands });
    }

    /// Switches the approval mode (the gate owns it) and tells the
    /// frontend.
    fn set_mode(&self, mode: ApprovalMode) -> Result<ApprovalMode, String> {
        let mode = self.sessions.gate.set_mode(mode)?;
        self.emit(Event::ModeChanged { mode });
        Ok(mode)
    }

    fn set_status(&self, item: StatusSet) {
        let mut status = self.status.lock();
        match &item.text {
            Some(text) => status.insert(item.name.clone(), text.clone()),
            None => status.remove(&item.name),
        };
        drop(status);
        self.emit(Event::Status {
            name: item.name,
            text: item.text,
        });
    }

    fn sink(self: &Arc<Self>) -> EventSink {
        let shared = Arc::clone(self);
        Arc::new(move |event| shared.emit(event))
    }

    fn reply(&self, op_id: Option<&str>, result: Result<Option<Value>, String>) {
        let Some(op_id) = op_id else { return };
        let op_id = op_id.to_string();
        self.emit(match result {
            Ok(result) => Event::Ack { op_id, result },
            Err(message) => Event::Error {
                op_id: Some(op_id),
                message,
            },
        });
    }

    fn busy(&self) -> bool {
        self.current.lock().is_some()
    }

    fn send_work(&self, work: Work) -> Result<(), String> {
        let counted = work.may_begin();
        if counted {
            self.starting.fetch_add(1, Ordering::SeqCst);
        }
        match self.work.lock().as_ref() {
            Some(tx) if tx.send(work).is_ok() => Ok(()),
            _ => {
                if counted {
                    self.starting.fetch_sub(1, Ordering::SeqCst);
                }
                Err("the session is shutting down".to_string())
            }
        }
    }

    /// Carries out one operation. `op_id` is `None` for calls from host
    /// services, which get the result directly instead of an event.
    fn handle(self: &Arc<Self>, op_id: Option<&str>, op: Op) -> Result<Reply, String> {
        match op {
            Op::UserMessage {
                text,
                images,
                delivery,
            } => self.user_message(Queued {
                text,
                images,
                delivery,
            }),
            Op::Interrupt => {
                self.interrupt();
                Ok(Reply::Done(None))
            }
            Op::Approval {
                call_id,
                decision,
                allow,
                guidance,
            } => self.approval(&call_id, decision, allow, guidance),
            Op::RunCommand { name, args } => self.run_command(op_id, &name, &args),
            Op::SetModel { model, effort } => self
                .set_model(model.as_deref(), effort)
                .and_then(|model| Reply::answer(&ModelSet { model })),
            Op::NewSession { title } => self.switch(
                op_id,
                Start::New {
                    title,
                    parent: None,
                },
            ),
            Op::ResumeSession { session_id } => self.switch(op_id, Start::Resume(session_id)),
            Op::ListSessions { all } => {
                let sessions = self.sessions.list(all);
                Reply::answer(&SessionList { sessions })
            }
            Op::DeleteSession { session_id } => self.delete_session(&session_id),
            Op::ListModels => {
                self.reload_keys();
                let models = self.sessions.providers.entries();
                Reply::answer(&ModelList { models })
            }
            Op::ListProviders => {
                self.reload_keys();
                let providers = self.sessions.providers.login_entries();
                Reply::answer(&ProviderList { providers })
            }
            Op::Login { provider, key } => self.login(op_id, &provider, &key),
            Op::Logout { provider } => self.logout(&provider),
            Op::Shell { command } => self.shell(op_id, command),
            Op::SetMode { mode } => self
                .set_mode(mode)
                .and_then(|mode| Reply::answer(&ModeSet { mode })),
            Op::Compact => {
                let op_id = op_id.unwrap_or_default().to_string();
                self.send_work(Work::Compact(op_id))?;
                Ok(Reply::Later)
            }
            Op::Unqueue => Reply::answer(&Unqueued {
                text: self.queue.pop_newest().map(|queued| queued.text),
            }),
            Op::Rewind {
                to_seq,
                conversation,
                code,
            } => {
                let op_id = op_id.unwrap_or_default().to_string();
                let rewind = restore::Rewind {
                    to: to_seq,
                    conversation,
                    code,
                };
                self.send_work(Work::Rewind(op_id, rewind))?;
                Ok(Reply::Later)
            }
            Op::SetTitle { title } => {
                self.control.set_title(title);
                self.apply_when_idle();
                Ok(Reply::Done(None))
            }
            Op::Shutdown => {
                self.shutdown();
                Ok(Reply::Done(None))
            }
            Op::ListJobs => self.list_jobs(),
            Op::StopJob { job_id } => self.stop_job(op_id, job_id),
            Op::Background => self.background(),
            Op::Hello { dialogs } => {
                self.dialogs.set_shown(dialogs);
                Ok(Reply::Done(None))
            }
            Op::AnswerDialog { dialog_id, answer } => {
                let resolved = self.dialogs.answer(&dialog_id, answer)?;
                self.emit(resolved);
                Ok(Reply::Done(None))
            }
            Op::RefuseDialog { dialog_id, reason } => {
                let resolved = self.dialogs.refuse(&dialog_id, reason)?;
                self.emit(resolved);
                Ok(Reply::Done(None))
            }
            Op::Unknown => Err(format!(
                "unknown operation type; this uji speaks frontend protocol {} (docs/frontends.md)",
                uji_protocol::frontend::PROTOCOL_VERSION
            )),
        }
    }

    fn user_message(&self, message: Queued) -> Result<Reply, String> {
        if message.text.trim().is_empty() && message.images.is_empty() {
            return Err("the message is empty".to_string());
        }
        // Checked and queued under the lock the worker clears when it goes
        // idle, so a message is never left behind in the queue.
        let current = self.current.lock();
        if current.is_some() {
            self.queue.push(message);
        } else {
            drop(current);
            self.send_work(Work::Turn(message))?;
        }
        Ok(Reply::Done(None))
    }

    fn interrupt(&self) {
        match self.current.lock().as_ref() {
            Some(interrupter) => interrupter.interrupt(),
            None if self.starting.load(Ordering::SeqCst) > 0 || !self.queue.is_empty() => {
                self.pending_interrupt.store(true, Ordering::SeqCst)
            }
            None => {}
        }
        // After the interrupt is set, so the gate reports "interrupted".
        if let Some(approver) = &self.approver {
            approver.withdraw_all();
        }
        self.shells.stop_all();
    }

    fn approval(
        &self,
        call_id: &str,
        decision: Option<ApprovalDecision>,
        allow: Option<bool>,
        guidance: Option<String>,
    ) -> Result<Reply, String> {
        let decision = match (decision, allow) {
            (Some(decision), _) => decision,
            (None, Some(true)) => ApprovalDecision::AllowOnce,
            (None, Some(false)) => ApprovalDecision::Deny,
            (None, None) => {
                return Err(
                    "an approval needs a decision: allow_once, allow_session, deny or stop"
                        .to_string(),
                );
            }
        };
        let Some(approver) = &self.approver else {
            return Err("this session asks nobody: approvals are automatic".to_string());
        };
        approver.answer(call_id, decision, guidance)?;
        Ok(Reply::Done(None))
    }

    /// Switches the model and/or effort the next request uses (the running
    /// turn's next request already uses it); what is not given stays.
    fn set_model(&self, model: Option<&str>, effort: Option<String>) -> Result<ModelState, String> {
        if let Some(effort) = &effort
            && !EFFORTS.contains(&effort.as_str())
        {
            return Err(format!(
                "unknown effort {effort:?}; use one of {}",
                EFFORTS.join(", ")
            ));
        }
        let model = model
            .map(|choice| self.sessions.providers.choose(choice))
            .transpose()?;
        let state = self.control.switch_model(|chosen| {
            if let Some(model) = model {
                chosen.model = Ok(model);
            }
            // An effort alone needs a model to apply to.
            let resolved = chosen.model.as_ref().map_err(Clone::clone)?;
            if effort.is_some() {
                chosen.effort = effort;
            }
            Ok::<_, String>(ModelState {
                provider: resolved.provider.id.clone(),
                model: resolved.model.id.clone(),
                effort: chosen.effort.clone(),
                context_window: resolved.model.context_window,
            })
        })?;
        self.apply_when_idle();
        self.emit(Event::ModelChanged {
            model: state.clone(),
        });
        Ok(state)
    }

    fn apply_when_idle(&self) {
        if !self.busy() {
            let _ = self.send_work(Work::Apply);
        }
    }

    fn switch(&self, op_id: Option<&str>, start: Start) -> Result<Reply, String> {
        if self.busy() {
            return Err("a turn is running: interrupt it first, then switch sessions".to_string());
        }
        let op_id = op_id.unwrap_or_default().to_string();
        self.send_work(Work::Switch(op_id, start))?;
        Ok(Reply::Later)
    }

    fn delete_session(&self, id: &str) -> Result<Reply, String> {
        if id == self.snapshot.borrow().id {
            return Err(
                "this session is running: switch to another session before deleting it".to_string(),
            );
        }
        match self.sessions.delete(id) {
            Ok(true) => Ok(Reply::Done(None)),
            Ok(false) => Err(format!(
                "no session with id {id}; list_sessions shows the saved sessions"
            )),
            Err(e) => Err(e.to_string()),
        }
    }

    fn shutdown(&self) {
        // `before_quit` once, whoever ends the session (a frontend's quit,
        // `uji.quit()`, a frontend that went away).
        if !self.closing.swap(true, Ordering::SeqCst) {
            self.sessions
                .registry
                .emit("before_quit", serde_json::json!({}));
        }
        if let Some(interrupter) = self.current.lock().as_ref() {
            interrupter.interrupt();
        }
        if let Some(approver) = &self.approver {
            approver.withdraw_all();
        }
        for resolved in self.dialogs.withdraw_all() {
            self.emit(resolved);
        }
        self.shells.stop_all();
        self.queue.clear();
        // Dropping the work sender ends the worker once its work is done.
        self.work.lock().take();
    }
}

/// The reasoning efforts a session accepts.
pub const EFFORTS: [&str; 7] = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];

/// Starts serving `agent` on the current tokio runtime. The returned join
/// handle yields the outcome of the last turn when the session shuts down.
pub fn serve(sessions: Sessions, agent: Agent, resumed: bool) -> (Arc<ServerPort>, Worker) {
    let (port, worker, _) = serve_shared(sessions, agent, resumed);
    (port, worker)
}

/// The worker's task: yields the outcome of the last turn.
pub type Worker = tokio::task::JoinHandle<Option<TurnOutcome>>;

/// [`serve`], also giving what the router and the worker share (for the
/// tests).
fn serve_shared(
    sessions: Sessions,
    mut agent: Agent,
    resumed: bool,
) -> (Arc<ServerPort>, Worker, Arc<Shared>) {
    let (ops_tx, ops_rx) = tmpsc::unbounded_channel::<Submission>();
    let (events_tx, events_rx) = outbox::queue();
    let (work_tx, work_rx) = tmpsc::unbounded_channel::<Work>();
    let (published, snapshot) = watch::channel(agent.snapshot());
    let shared = Arc::new_cyclic(|weak: &std::sync::Weak<Shared>| {
        let weak = weak.clone();
        let sink: EventSink = Arc::new(move |event| {
            if let Some(shared) = weak.upgrade() {
                shared.emit(event);
            }
        });
        let approvals = sessions.options().approvals;
        Shared {
            events: events_tx,
            current: Mutex::new(None),
            pending_interrupt: AtomicBool::new(false),
            starting: AtomicUsize::new(0),
            closing: AtomicBool::new(false),
            approver: (approvals == Approvals::Frontend).then(|| FrontendApprover::new(sink)),
            dialogs: dialogs::Dialogs::default(),
            runtime: tokio::runtime::Handle::current(),
            queue: MessageQueue::default(),
            control: SessionControl::new(agent.chosen_model()),
            snapshot,
            work: Mutex::new(Some(work_tx)),
            shells: shell::Shells::default(),
            checkpointing: parking_lot::Mutex::new(None),
            status: Mutex::new(BTreeMap::new()),
            commands: Mutex::new(Vec::new()),
            http: http::Http::new(
                tokio::runtime::Handle::current(),
                HTTP_MAX_OPEN,
                sessions.providers.clone(),
            ),
            sessions,
        }
    });
    // The session's configuration comes first, always: before any notice
    // kept while plugins loaded.
    configured(&shared, &agent, resumed);
    connect(&shared, &mut agent, published.clone());
    install_notices(&shared);
    install_commands(&shared);
    install_services(&shared);
    jobs::install(&shared);
    live::mirror_session_rules(&shared.sessions);
    let port = Arc::new(ServerPort {
        ops: ops_tx,
        events: events_rx,
        next_id: AtomicU64::new(1),
    });
    tokio::spawn(route(Arc::clone(&shared), ops_rx));
    let worker = tokio::spawn(work(
        Arc::clone(&shared),
        agent,
        work_rx,
        resumed,
        published,
    ));
    (port, worker, shared)
}

/// Tells the frontend which session runs, then (as warnings) what opening
/// its file found damaged and, when there is no model yet, how to set one
/// up.
fn configured(shared: &Shared, agent: &Agent, resumed: bool) {
    shared.emit(shared.configured_event(agent, resumed));
    for text in agent.damage() {
        shared.emit(Event::notice(NoticeLevel::Warn, text.clone()));
    }
    if let Err(missing) = agent.model() {
        shared.emit(Event::notice(NoticeLevel::Warn, missing));
    }
}

/// Points the agent's events, approvals, queue, side door and snapshot at
/// this connection; the model choice starts from the agent's model.
fn connect(shared: &Arc<Shared>, agent: &mut Agent, snapshot: watch::Sender<SessionSnapshot>) {
    // The session is idle once its turn says it finished: a frontend that
    // switches sessions right after `turn_finished` must not be told a
    // turn is running.
    let sink = shared.sink();
    let idle = Arc::clone(shared);
    let events: EventSink = Arc::new(move |event| {
        if matches!(event, Event::TurnFinished { .. }) {
            end(&idle);
        }
        sink(event);
    });
    shared.queue.set_sink(shared.sink());
    shared.control.restart_on(agent.chosen_model());
    let approver = shared
        .approver
        .clone()
        .map(|approver| Arc::new(approver) as Arc<dyn Approver>);
    *shared.checkpointing.lock() = Some(agent.checkpointing());
    agent.connect(Connection {
        events,
        queue: shared.queue.clone(),
        control: shared.control.clone(),
        approver,
        snapshot,
    });
}

/// Notices from plugins and hooks (and those kept while plugins loaded)
/// reach the frontend as events.
fn install_notices(shared: &Arc<Shared>) {
    let sink = shared.sink();
    shared
        .sessions
        .registry
        .set_notice_sink(Arc::new(move |notice| {
            let source = (notice.source != "uji").then(|| notice.source.clone());
            sink(Event::Notice {
                text: notice.text.clone(),
                level: notice.level,
                source,
            });
        }));
}

/// Commands added while the session runs (a Lua `uji.command.add` from a
/// hook or a command) reach the frontend as `commands_changed`.
fn install_commands(shared: &Arc<Shared>) {
    let weak = Arc::downgrade(shared);
    shared
        .sessions
        .registry
        .set_commands_sink(Arc::new(move || {
            if let Some(shared) = weak.upgrade() {
                shared.commands_changed();
            }
        }));
}

/// Reads operations until the frontend shuts the session down or goes.
async fn route(shared: Arc<Shared>, mut ops: tmpsc::UnboundedReceiver<Submission>) {
    while let Some(Submission { id, op }) = ops.recv().await {
        let shutdown = matches!(op, Op::Shutdown);
        match shared.handle(id.as_deref(), op) {
            Ok(Reply::Done(result)) => shared.reply(id.as_deref(), Ok(result)),
            Ok(Reply::Later) => {}
            Err(message) => shared.reply(id.as_deref(), Err(message)),
        }
        if shutdown {
            break;
        }
    }
    // A frontend that went away without a shutdown still ends the session.
    shared.shutdown();
}

/// Runs the work one piece after another; ends when the router is gone.
/// The agent publishes its snapshot to `published` (and so does the next
/// one, after a switch).
async fn work(
    shared: Arc<Shared>,
    mut agent: Agent,
    mut work_rx: tmpsc::UnboundedReceiver<Work>,
    resumed: bool,
    published: watch::Sender<SessionSnapshot>,
) -> Option<TurnOutcome> {
    // Whatever happens to this task (even a panic), the frontend hears that
    // the session ended and stops waiting.
    let _closed = ClosedOnDrop(Arc::clone(&shared));
    emit_session_event(&agent, resumed);
    let mut last = None;
    while let Some(work) = work_rx.recv().await {
        if shared.closing.load(Ordering::SeqCst) {
            break;
        }
        match work {
            Work::Turn(message) => {
                last = Some(run_turns(&shared, &mut agent, First::Message(message)).await);
            }
            Work::Wake if shared.control.has_messages() => {
                last = Some(run_turns(&shared, &mut agent, First::Wake).await);
            }
            // What woke it was taken by a turn meanwhile.
            Work::Wake => {
                let _current = shared.current.lock();
                if shared.starting.fetch_sub(1, Ordering::SeqCst) == 1 && shared.queue.is_empty() {
                    shared.pending_interrupt.store(false, Ordering::SeqCst);
                }
            }
            Work::Compact(op_id) => compact(&shared, &mut agent, &op_id).await,
            Work::Rewind(op_id, to) => restore::rewind(&shared, &mut agent, &op_id, to).await,
            Work::Restore(op_id, request) => restore::run(&shared, &agent, &op_id, request).await,
            Work::Switch(op_id, start) => {
                let to = Switch {
                    op_id: &op_id,
                    start: &start,
                    published: &published,
                };
                switch(&shared, &mut agent, to);
            }
            Work::Apply => agent.apply_changes(),
        }
    }
    live::remove(&shared.sessions, agent.id());
    last
}

fn emit_session_event(agent: &Agent, resumed: bool) {
    let event = if resumed {
        "session_resumed"
    } else {
        "session_created"
    };
    agent.notify_plugins(event, json!({"id": agent.id()}));
}

/// Marks the worker busy with a fresh interrupter (set at once if an
/// interrupt came while it was idle).
fn begin(shared: &Shared, sent: Begins) -> crate::turn::interrupt::Interrupt {
    let (interrupter, interrupt) = interrupt_pair();
    let mut current = shared.current.lock();
    if sent == Begins::SentWork {
        shared.starting.fetch_sub(1, Ordering::SeqCst);
    }
    if shared.pending_interrupt.swap(false, Ordering::SeqCst) {
        interrupter.interrupt();
    }
    *current = Some(interrupter);
    interrupt
}

/// What a [`begin`] begins: the work that was sent (counted in
/// `starting`), or a message that waited in the queue behind a turn.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Begins {
    SentWork,
    Queued,
}

fn end(shared: &Shared) {
    *shared.current.lock() = None;
    crate::memory::release_free_pages();
}

/// What starts a run of turns.
enum First {
    Message(Queued),
    /// A background job's report (waiting in the session control).
    Wake,
}

/// Runs a turn, then one for each message that waited for it.
async fn run_turns(shared: &Shared, agent: &mut Agent, first: First) -> TurnOutcome {
    let mut next = first;
    let mut begins = Begins::SentWork;
    loop {
        let mut interrupt = begin(shared, begins);
        begins = Begins::Queued;
        let outcome = match next {
            First::Message(message) => {
                agent
                    .turn(message.text, message.images, &mut interrupt)
                    .await
            }
            First::Wake => agent.wake(&mut interrupt).await,
        };
        end(shared);
        // Popped after going idle: a message queued meanwhile is either in
        // the queue now or was sent as work of its own.
        match shared.queue.pop() {
            Some(message) if !shared.closing.load(Ordering::SeqCst) => {
                next = First::Message(message)
            }
            _ => return outcome,
        }
    }
}

async fn compact(shared: &Shared, agent: &mut Agent, op_id: &str) {
    let mut interrupt = begin(shared, Begins::SentWork);
    // Asked for: fold everything before the latest exchange.
    let result = crate::turn::compaction::compact(agent, 0, &mut interrupt).await;
    end(shared);
    let result = match result {
        Ok(count) => answered(&CompactDone {
            messages: count as u64,
        }),
        Err(e) => Err(format!("could not compact: {e}")),
    };
    shared.reply(Some(op_id), result);
}

/// Takes the conversation back to before message `to`; the frontend gets
/// the shortened history in a new `session_configured`, then the answer.
/// A switch to another session, as the worker runs it.
struct Switch<'a> {
    op_id: &'a str,
    start: &'a Start,
    /// Where the next agent publishes its snapshot.
    published: &'a watch::Sender<SessionSnapshot>,
}

/// Replaces the agent with one for another session.
fn switch(shared: &Arc<Shared>, agent: &mut Agent, to: Switch<'_>) {
    let Switch { op_id, start, .. } = to;
    // This process holds the running session's lock: opening it again
    // would be refused, and it is already open.
    if let Start::Resume(id) = start
        && id == agent.id()
    {
        configured(shared, agent, true);
        shared.reply(Some(op_id), answered(&SessionSwitched { id: id.clone() }));
        return;
    }
    match shared.sessions.start(start) {
        Ok((mut next, resumed)) => {
            // Jobs belong to the session that started them.
            jobs::stop_all(&shared.sessions.registry);
            live::remove(&shared.sessions, agent.id());
            shared.queue.clear();
            connect(shared, &mut next, to.published.clone());
            *agent = next;
            configured(shared, agent, resumed);
            emit_session_event(agent, resumed);
            let id = agent.id().to_string();
            shared.reply(Some(op_id), answered(&SessionSwitched { id }));
        }
        Err(e) => shared.reply(Some(op_id), Err(e.to_string())),
    }
}

/// Sends `Closed` when dropped: at the end of the worker, or while a panic
/// unwinds it.
struct ClosedOnDrop(Arc<Shared>);

impl Drop for ClosedOnDrop {
    fn drop(&mut self) {
        self.0.emit(Event::Closed);
    }
}

/// `provider/model`, or nothing while there is no model.
fn label_of(model: &Result<Resolved, String>) -> String {
    model.as_ref().map(Resolved::label).unwrap_or_default()
}

/// What `uji.session.info()` returns: the agent's last snapshot, the
/// model the next request uses, and whether a turn runs now.
fn session_info(shared: &Shared) -> SessionInfo {
    let snapshot = shared.snapshot.borrow().clone();
    let chosen = shared.control.model();
    let mut info = SessionInfo {
        id: snapshot.id,
        title: snapshot.title,
        cwd: snapshot.cwd,
        model: label_of(&chosen.model),
        effort: chosen.effort,
        messages: snapshot.messages,
        usage: snapshot.usage,
        extra: Default::default(),
    };
    info.extra
        .insert("busy".to_string(), Value::Bool(shared.busy()));
    info
}

/// Host services that act on the running session: `session.*`, `quit`,
/// `model.use` (so a model switched from a hook or a command is the one
/// the next request uses), and `http.*` (run on the session's runtime).
fn install_services(shared: &Arc<Shared>) {
    serve_typed(shared, |shared, _: SessionInfoRequest| {
        Ok(session_info(shared))
    });
    serve_typed(shared, facts::facts);
    serve_typed(shared, facts::messages);
    serve_typed(shared, |shared, request: HttpOpen| {
        shared.http.open(request)
    });
    serve_typed(shared, |shared, request: HttpRead| {
        shared.http.read(request)
    });
    serve_typed(shared, |shared, request: HttpClose| {
        shared.http.close(request);
        Ok(())
    });
    serve_typed(shared, |shared, request: SessionSubmit| {
        let op = Op::UserMessage {
            text: request.text,
            images: Vec::new(),
            delivery: Delivery::Queue,
        };
        shared.handle(None, op).map(drop)
    });
    serve_typed(shared, |shared, request: SessionSetTitle| {
        let op = Op::SetTitle {
            title: request.title,
        };
        shared.handle(None, op).map(drop)
    });
    serve_typed(shared, |shared, request: SessionMode| match request.mode {
        Some(mode) => shared.set_mode(mode),
        None => Ok(shared.sessions.gate.mode()),
    });
    serve_typed(shared, |shared, _: SessionCompact| {
        shared.handle(None, Op::Compact).map(drop)
    });
    serve_typed(shared, |shared, _: SessionInterrupt| {
        shared.handle(None, Op::Interrupt).map(drop)
    });
    serve_typed(shared, |shared, item: StatusSet| {
        shared.set_status(item);
        Ok(())
    });
    serve_typed(shared, ask::ask);
    serve_typed(shared, restore::list);
    serve_typed(shared, restore::service);
    serve_typed(shared, |shared, _: SessionReload| {
        if shared.busy() {
            return Err(
                "a turn is running; /reload when it has ended (or interrupt it first)".to_string(),
            );
        }
        shared.emit(Event::Reload);
        Ok(())
    });
    serve_typed(shared, dialogs::ask);
    serve_typed(shared, |shared, _: Quit| {
        shared.handle(None, Op::Shutdown).map(drop)
    });
    serve_typed(shared, |shared, request: ModelUse| {
        let model = request.choice();
        if model.is_none() && request.effort.is_none() {
            return Err(MODEL_USE_NEEDS.to_string());
        }
        let state = shared.set_model(model.as_deref(), request.effort)?;
        let choice = ModelChoice {
            provider: state.provider,
            model: state.model,
        };
        let payload = serde_json::to_value(&choice).map_err(|e| format!("model.use: {e}"))?;
        shared.sessions.registry.emit("model_changed", payload);
        Ok(choice)
    });
}

/// Serves the typed service `S` for as long as the session lives.
fn serve_typed<S: Service + 'static>(
    shared: &Arc<Shared>,
    handler: fn(&Arc<Shared>, S) -> Result<S::Answer, String>,
) {
    let weak = Arc::downgrade(shared);
    shared
        .sessions
        .registry
        .serve(move |request: S| match weak.upgrade() {
            Some(shared) => handler(&shared, request),
            None => Err("the session has ended".to_string()),
        });
}
