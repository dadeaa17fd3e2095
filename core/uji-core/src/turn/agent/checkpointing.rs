//! The session's checkpoints (docs/checkpoints.md): one before each call
//! that may change files (the gate says which, after any question), the
//! turn's change set when it ends, the plans and restores of `/undo`,
//! `/redo`, `/rewind` and `uji undo`, and around each `!cmd`. The agent
//! owns them; the session server holds a [`Checkpointing`] handle for
//! `!cmd`, which runs beside the turn (the checkpoints' lock orders the
//! two). Files are read on a blocking thread so the runtime keeps going.
//! Every checkpoint taken, whatever took it, is told once it is done
//! ([`announce`]): a notice for each file it could not keep, and
//! `checkpoint_created` for plugins.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;
use serde_json::json;
use uji_checkpoint::{
    Applied, ChangeSetKind, Checkpoints, Created, FileAction, Limits, Plan, RestoreError, ScanError,
};
use uji_host::Registry;
use uji_protocol::frontend::{Event, NoticeLevel};
use uji_protocol::session::MessageBody;

use super::Agent;
use crate::turn::control::EventSink;

/// A session's checkpoints, opened at their first use; clones share them.
#[derive(Clone)]
pub struct Checkpointing {
    data_dir: Option<PathBuf>,
    session: String,
    root: PathBuf,
    limits: Limits,
    opened: Arc<OnceLock<Result<Arc<Mutex<Checkpoints>>, String>>>,
    /// The turn now running or last run, for checkpoints taken outside
    /// the agent (`!cmd`).
    turn: Arc<AtomicU64>,
    /// Set when the workspace turned out too large to checkpoint: said
    /// once, then not walked again for every call.
    off: Arc<AtomicBool>,
    /// init.lua turned checkpoints off (`enabled = false`): none is taken,
    /// and there is nothing to list or restore.
    disabled: bool,
    /// Whose `checkpoint_created` handlers hear of each checkpoint.
    registry: Registry,
    /// Where notices go: the session's events, once the agent is
    /// connected.
    events: Arc<Mutex<Option<EventSink>>>,
}

/// `uji.checkpoint.configure`'s settings (the `checkpoints` config value;
/// the Lua side checks each field).
#[derive(Debug, Default, serde::Deserialize)]
pub struct Settings {
    enabled: Option<bool>,
    max_file_mb: Option<u64>,
    max_session_mb: Option<u64>,
    max_files: Option<usize>,
}

impl Settings {
    /// What `registry`'s configuration says (init.lua's
    /// `uji.checkpoint.configure`); the defaults without it.
    pub fn configured(registry: &Registry) -> Settings {
        registry
            .config(CONFIG_KEY)
            .and_then(|value| serde_json::from_value(value).ok())
            .unwrap_or_default()
    }

    /// Whether checkpoints are taken at all (`enabled = false` says not).
    pub fn enabled(&self) -> bool {
        self.enabled != Some(false)
    }

    pub fn limits(&self) -> Limits {
        let default = Limits::default();
        Limits {
            max_file: self.max_file_mb.map_or(default.max_file, |mb| mb << 20),
            max_session: self
                .max_session_mb
                .map_or(default.max_session, |mb| mb << 20),
            max_files: self.max_files.unwrap_or(default.max_files),
        }
    }
}

/// The config value `uji.checkpoint.configure` sets.
const CONFIG_KEY: &str = "checkpoints";

/// Why there are no checkpoints to list or restore when init.lua turned
/// them off.
pub const DISABLED: &str = "checkpoints are off: init.lua calls uji.checkpoint.configure({ enabled = false }); remove that to take checkpoints and undo again (docs/checkpoints.md)";

impl Checkpointing {
    /// The checkpoints of `session` in `root`, as `registry`'s
    /// configuration says.
    pub(crate) fn new(
        data_dir: Option<PathBuf>,
        session: &str,
        root: &Path,
        registry: &Registry,
    ) -> Checkpointing {
        let settings = Settings::configured(registry);
        Checkpointing {
            data_dir,
            session: session.to_string(),
            root: root.to_path_buf(),
            limits: settings.limits(),
            opened: Arc::new(OnceLock::new()),
            turn: Arc::new(AtomicU64::new(0)),
            off: Arc::new(AtomicBool::new(!settings.enabled())),
            disabled: !settings.enabled(),
            registry: registry.clone(),
            events: Arc::new(Mutex::new(None)),
        }
    }

    /// Sends notices to `events` from now on (the agent connected).
    pub(crate) fn connect(&self, events: EventSink) {
        *self.events.lock() = Some(events);
    }

    /// Tells what checkpoints were taken (see [`announce`]).
    pub(crate) fn announce(&self, created: &[Created]) {
        let events = self.events.lock().clone();
        announce(&self.registry, &self.session, created, &|text| {
            if let Some(events) = &events {
                events(Event::notice(NoticeLevel::Warn, text));
            }
        });
    }

    /// The checkpoints, opened once; the error says why there are none.
    fn handle(&self) -> Result<Arc<Mutex<Checkpoints>>, String> {
        if self.disabled {
            return Err(DISABLED.to_string());
        }
        self.opened
            .get_or_init(|| {
                let data_dir = self
                    .data_dir
                    .as_deref()
                    .ok_or_else(|| "uji has no data directory".to_string())?;
                Checkpoints::open(data_dir, &self.session, &self.root, self.limits)
                    .map(|c| Arc::new(Mutex::new(c)))
                    .map_err(|e| e.to_string())
            })
            .clone()
    }

    /// Turns checkpoints off for the session when `error` says the
    /// workspace is too large; the error as text.
    fn failed(&self, error: ScanError) -> String {
        if matches!(error, ScanError::TooManyFiles { .. }) {
            self.off.store(true, Ordering::Relaxed);
            return format!("{error}; checkpoints are off for this session");
        }
        error.to_string()
    }

    fn is_off(&self) -> bool {
        self.off.load(Ordering::Relaxed)
    }

    /// Runs `work` on the checkpoints, on a blocking thread, then tells
    /// what checkpoints it took.
    async fn with<R: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Checkpoints) -> Result<R, String> + Send + 'static,
    ) -> Result<R, String> {
        let checkpoints = self.handle()?;
        let (result, created) =
            tokio::task::spawn_blocking(move || unannounced(&checkpoints, work))
                .await
                .unwrap_or_else(|e| (Err(format!("the checkpoint stopped: {e}")), Vec::new()));
        self.announce(&created);
        result
    }

    /// Runs `work` on the checkpoints on this thread (a plugin's, calling
    /// a service), then tells what checkpoints it took.
    pub fn blocking<R>(
        &self,
        work: impl FnOnce(&mut Checkpoints) -> Result<R, String>,
    ) -> Result<R, String> {
        let (result, created) = self.blocking_unannounced(work);
        self.announce(&created);
        result
    }

    /// [`Checkpointing::blocking`] that leaves the telling to the caller
    /// ([`Checkpointing::announce`]): for one that holds a lock handlers
    /// may need.
    pub(crate) fn blocking_unannounced<R>(
        &self,
        work: impl FnOnce(&mut Checkpoints) -> Result<R, String>,
    ) -> (Result<R, String>, Vec<Created>) {
        match self.handle() {
            Ok(checkpoints) => unannounced(&checkpoints, work),
            Err(e) => (Err(e), Vec::new()),
        }
    }

    /// The turn now running or last run.
    pub fn turn(&self) -> u64 {
        self.turn.load(Ordering::Relaxed)
    }

    pub(crate) fn set_turn(&self, turn: u64) {
        self.turn.store(turn, Ordering::Relaxed);
    }

    /// Before a `!cmd` that may change files: the checkpoint's id.
    pub async fn before_shell(&self, command: &str) -> Result<Option<u64>, String> {
        if self.is_off() {
            return Ok(None);
        }
        let (turn, command) = (self.turn.load(Ordering::Relaxed), command.to_string());
        let this = self.clone();
        self.with(move |c| {
            c.before_shell(turn, &command)
                .map(Some)
                .map_err(|e| this.failed(e))
        })
        .await
    }

    /// After it: what it changed, undoable on its own.
    pub async fn after_shell(&self, command: &str, before: u64) -> Result<(), String> {
        let (turn, command) = (self.turn.load(Ordering::Relaxed), command.to_string());
        self.with(move |c| {
            c.after_shell(turn, &command, before)
                .map(drop)
                .map_err(|e| e.to_string())
        })
        .await
    }
}

/// What `/undo`, `/redo`, `/rewind` and `uji undo` ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestoreRequest {
    Undo,
    Redo,
    /// One turn's changes (`uji undo --turn N`).
    Turn(u64),
    /// The code back to before a turn (`/rewind`).
    Rewind(u64),
}

impl RestoreRequest {
    /// What it would restore.
    pub fn plan(self, checkpoints: &Checkpoints) -> Result<Plan, RestoreError> {
        match self {
            RestoreRequest::Undo => checkpoints.plan_undo(),
            RestoreRequest::Redo => checkpoints.plan_redo(),
            RestoreRequest::Turn(turn) => checkpoints.plan_turn(turn),
            RestoreRequest::Rewind(turn) => checkpoints.plan_rewind(turn),
        }
    }
}

impl Agent {
    /// Marks the turn that starts now (once its message is saved): every
    /// checkpoint until the next one belongs to it, a message the user
    /// steers it with included. Turns are numbered by the session file
    /// ([`SessionFile::turn_of`]): a number is never given twice, so a
    /// turn after a rewind is not confused with the one the rewind took
    /// out of the conversation. A turn a job's report starts continues the
    /// turn of the conversation's last message.
    ///
    /// [`SessionFile::turn_of`]: crate::session::store::SessionFile::turn_of
    pub(crate) fn mark_turn(&self) {
        self.checkpointing.set_turn(self.session.last_turn());
    }

    /// The turn the user's message `seq` in the conversation started.
    pub(crate) fn turn_of(&self, seq: u64) -> Option<u64> {
        self.user_text(seq)?;
        self.session.turn_of(seq)
    }

    /// The text of the user's message `seq`.
    pub(crate) fn user_text(&self, seq: u64) -> Option<String> {
        self.messages().iter().find_map(|m| match &m.body {
            MessageBody::User {
                text,
                hidden: false,
                ..
            } if m.seq == seq => Some(text.clone()),
            _ => None,
        })
    }

    /// A handle on the session's checkpoints, for the session server.
    pub fn checkpointing(&self) -> Checkpointing {
        self.checkpointing.clone()
    }

    /// A checkpoint before a call that may change files (`reason` names
    /// it). A failure is a notice: the call still runs, and the user knows
    /// an undo will not cover it.
    pub(crate) async fn checkpoint_before(&self, reason: String) {
        let turn = self.checkpointing.turn();
        if self.checkpointing.is_off() {
            return;
        }
        let this = self.checkpointing.clone();
        let taken = self
            .checkpointing
            .with(move |c| c.checkpoint(turn, &reason).map_err(|e| this.failed(e)))
            .await;
        if let Err(why) = taken {
            tracing::warn!("checkpoint failed: {why}");
            self.emit(Event::notice(
                NoticeLevel::Warn,
                format!("no checkpoint was taken ({why}); /undo cannot undo this call"),
            ));
        }
    }

    /// Ends the turn's checkpoints: the change set of what it changed.
    /// Only when a checkpoint was taken in it (else nothing is read).
    pub(crate) fn end_turn_checkpoints(&self) {
        let Some(Ok(checkpoints)) = self.checkpointing.opened.get() else {
            return;
        };
        let turn = self.checkpointing.turn();
        let (ended, created) =
            unannounced(checkpoints, |c| c.end_turn(turn).map_err(|e| e.to_string()));
        self.checkpointing.announce(&created);
        if let Err(e) = ended {
            self.notice(format!(
                "the turn's last checkpoint failed ({e}); /undo may not cover its last call"
            ));
        }
    }

    /// What `request` would restore.
    pub(crate) async fn plan_restore(&self, request: RestoreRequest) -> Result<Plan, String> {
        self.checkpointing
            .with(move |checkpoints| request.plan(checkpoints).map_err(|e| e.to_string()))
            .await
    }

    /// Does `plan` (files changed since only when `overwrite`).
    pub(crate) async fn apply_restore(
        &self,
        plan: Plan,
        overwrite: bool,
    ) -> Result<Applied, String> {
        let turn = self.checkpointing.turn();
        self.checkpointing
            .with(move |c| c.apply(&plan, turn, overwrite).map_err(|e| e.to_string()))
            .await
    }
}

/// Runs `work` on `checkpoints` under their lock; its result and the
/// checkpoints it took, to be told once the lock is let go (a handler may
/// list the checkpoints).
fn unannounced<R>(
    checkpoints: &Mutex<Checkpoints>,
    work: impl FnOnce(&mut Checkpoints) -> Result<R, String>,
) -> (Result<R, String>, Vec<Created>) {
    let mut checkpoints = checkpoints.lock();
    let result = work(&mut checkpoints);
    (result, checkpoints.take_created())
}

/// Tells of each checkpoint in `created` (session `session`'s): `notice`
/// for each file it could not keep (once per file and session), and
/// `checkpoint_created` for `registry`'s plugins. Every checkpoint, not
/// only those before calls: a turn's last one, a restore's, a `!cmd`'s,
/// `uji undo`'s.
pub fn announce(registry: &Registry, session: &str, created: &[Created], notice: &dyn Fn(String)) {
    let heard = !registry.hooks("checkpoint_created").is_empty();
    for checkpoint in created {
        for skipped in &checkpoint.newly_skipped {
            notice(format!(
                "checkpoint: {} is not kept ({}); /undo cannot put it back",
                skipped.path, skipped.why
            ));
        }
        if heard {
            registry.emit(
                "checkpoint_created",
                json!({"id": checkpoint.id, "turn": checkpoint.turn, "reason": checkpoint.reason,
                       "changed": checkpoint.changed, "stored": checkpoint.stored,
                       "session": session}),
            );
        }
    }
}

/// What a restore did, as its command prints it: the plan's title, each
/// file and what happened to it, and the command that takes it back
/// (`undo` after a redo, else `redo`).
pub fn describe_restore(plan: &Plan, applied: &Applied, undo: &str, redo: &str) -> String {
    let mut out = format!("{}:", plan.title);
    for path in &applied.restored {
        let verb = match plan
            .files
            .iter()
            .find(|f| &f.path == path)
            .map(|f| &f.action)
        {
            Some(FileAction::Recreate) => "recreated",
            _ => "restored",
        };
        out.push_str(&format!("\n  {verb} {path}"));
    }
    for path in &applied.removed {
        out.push_str(&format!("\n  removed {path}"));
    }
    for (path, why) in applied.left.iter().chain(&applied.failed) {
        out.push_str(&format!("\n  left {path}: {why}"));
    }
    let back = match plan.kind() {
        ChangeSetKind::Redo { .. } => undo,
        _ => redo,
    };
    out.push_str(&format!("\n{back} takes this back"));
    out
}
