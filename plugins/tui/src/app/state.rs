//! What the screen knows: the transcript, the input, the open question or
//! picker, and the session's status.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use uji_protocol::frontend::{ModelState, Op};
use uji_protocol::wire::Usage;
use uji_sdk::FrontendError;

use super::Msg;
use crate::approval::Approval;
use crate::approval_guard::{Clock, SystemClock};
use crate::composer::Composer;
use crate::composer::files::FilePicker;
use crate::composer::suggest::{CommandEntry, Suggestions};
use crate::keys::Keymap;
use crate::picker::Picker;
use crate::theme::Theme;
use crate::transcript::{Block, Level, Transcript, Viewport};

/// Where operations go: the session in uji, or a recorder in tests and
/// benchmarks. The screen names each operation itself (`tui-1`, `tui-2`…),
/// so it knows which answer is which before the operation leaves.
pub trait Outbox: Send + Sync {
    fn submit(&self, id: &str, op: &Op) -> Result<(), FrontendError>;
}

impl Outbox for uji_sdk::FrontendSession {
    fn submit(&self, id: &str, op: &Op) -> Result<(), FrontendError> {
        self.submit_with_id(id, op)
    }
}

/// How often the spinner and the elapsed seconds move while working.
const TICK: Duration = Duration::from_millis(100);

/// What an open picker picks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickerKind {
    Model,
    Effort,
    Session,
    /// `/login`: the provider to log in to.
    Login,
    /// `/logout`: the provider whose saved key goes.
    Logout,
    Job,
    /// Esc Esc: one of the user's earlier messages, to edit and send again.
    Rewind,
    /// After that message: what goes back (code, conversation or both).
    RewindScope,
    /// Ctrl+R: a message sent before, back into the draft.
    History,
    /// After a plan-mode turn: run the plan, or keep planning.
    RunPlan,
    /// A plugin's select dialog: the item's index.
    Dialog,
}

/// An operation waiting for its answer, for the answers that need handling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pending {
    ListSessions,
    ListModels,
    Providers(super::login::ProvidersFor),
    Login(String),
    Logout(String),
    /// A slash command uji runs: its output is shown.
    Command,
    /// `/diff`: its output is shown as a diff.
    Diff,
    ListJobs,
    Background,
    /// A model or effort chosen in a picker: the ack says what it is now.
    ModelSet,
    /// Back to before an earlier message: the ack brings its text.
    Rewind,
    /// The newest queued message taken back into the draft.
    Unqueue,
    Other,
}

/// The session's status line.
#[derive(Debug, Default)]
pub struct Status {
    pub model: Option<ModelState>,
    pub session_usage: Usage,
    /// What this run's requests cost, in dollars, where prices are known.
    pub cost: Option<f64>,
    pub context_used: u64,
    pub context_window: u64,
    pub queued: Vec<String>,
    pub busy_since: Option<Instant>,
    /// Items plugins put in the status line (`uji.status.add`), by name.
    pub items: std::collections::BTreeMap<String, String>,
    /// The approval mode core reported.
    pub mode: uji_protocol::ApprovalMode,
    /// The composer's vi mode, when vi keys are on.
    pub vim: Option<crate::composer::VimMode>,
    /// A short-lived hint in place of the counters ("press Ctrl+C again
    /// to quit"), and when it goes.
    pub hint: Option<(String, Instant)>,
}

pub struct App {
    pub(super) session: Arc<dyn Outbox>,
    pub(super) theme: Theme,
    pub(super) transcript: Transcript,
    pub(super) viewport: Viewport,
    pub(super) composer: Composer,
    pub(super) suggestions: Suggestions,
    /// The `@` file picker.
    pub(super) files: FilePicker,
    pub(super) commands: Vec<CommandEntry>,
    /// Tool name → its verb (`read_file` → `Read`), for history.
    pub(super) verbs: HashMap<String, String>,
    /// Open approval questions; the first is on screen.
    pub(super) approvals: Vec<Approval>,
    pub(super) picker: Option<(PickerKind, Picker)>,
    /// Plugins' dialogs: the one on screen and those waiting.
    pub(super) dialogs: super::dialogs::Dialogs,
    /// `/login`'s providers and its key prompt.
    pub(super) login: super::login::LoginFlow,
    /// A session the user asked to delete; a second Ctrl+D confirms.
    pub(super) delete_armed: Option<String>,
    pub(super) keymap: Keymap,
    pub(super) status: Status,
    pub(super) jobs: super::jobs::Jobs,
    pub(super) pending: HashMap<String, Pending>,
    next_op: u64,
    pub(super) dirty: bool,
    /// Bytes for the terminal itself (an OSC 52 copy), written before the
    /// next frame.
    pub(super) to_terminal: Vec<Vec<u8>>,
    /// The system clipboard, once used; kept so that on X11 what was copied
    /// stays pasteable while uji runs.
    pub(super) clipboard: Option<arboard::Clipboard>,
    pub(super) frame: usize,
    last_tick: Instant,
    pub(super) quitting: bool,
    pub(super) closed: bool,
    pub(super) session_id: String,
    /// Set by [`Event::Reload`]: when the session has closed, uji starts
    /// again on it with this draft (see [`crate::app::reload`]).
    pub(super) reload: Option<Option<std::path::PathBuf>>,
    /// The session's title, for the terminal's title.
    pub(super) title: String,
    /// The terminal's title as last set (set again only when it changes).
    pub(super) shown_title: String,
    /// Whether the terminal has focus: true until it says otherwise
    /// (terminals that send no focus events are taken as focused).
    pub(super) focused: bool,
    /// `uji.ui.configure`'s settings.
    pub(super) ui: uji_protocol::frontend::UiSettings,
    pub(super) cwd: String,
    /// The time the questions' guards go by.
    pub(super) clock: Arc<dyn Clock>,
    /// The event being handled came in a burst ([`Msg::TermBurst`]).
    pub(super) in_burst: bool,
    /// When Ctrl+C last armed quitting: a second one soon after quits.
    pub(super) quit_armed: Option<Instant>,
    /// When Esc last armed the message picker (nothing ran, the draft was
    /// empty): a second one soon after opens it.
    pub(super) rewind_armed: Option<Instant>,
    /// The message the rewind picker chose, while its scope is picked.
    pub(super) rewind_to: Option<u64>,
    /// The user's messages in the conversation with their seq, oldest
    /// first, for the message picker.
    pub(super) sent: Vec<(u64, String)>,
    /// The draft to edit in `$VISUAL`/`$EDITOR`: the main loop, which owns
    /// the terminal, hands it over and takes it back.
    pub(super) editor_request: Option<String>,
    /// The cursor shape last set for vi mode (none: the terminal's own).
    pub(super) shown_cursor: Option<crate::composer::VimMode>,
}

impl App {
    pub fn new(session: Arc<dyn Outbox>, theme: Theme) -> App {
        App::with_clock(session, theme, Arc::new(SystemClock))
    }

    /// An app whose questions' guards go by `clock` (tests move it).
    pub fn with_clock(session: Arc<dyn Outbox>, theme: Theme, clock: Arc<dyn Clock>) -> App {
        App {
            session,
            theme,
            transcript: Transcript::default(),
            viewport: Viewport::default(),
            composer: Composer::new(),
            suggestions: Suggestions::new(),
            files: FilePicker::new(std::env::current_dir().unwrap_or_default()),
            commands: Vec::new(),
            verbs: HashMap::new(),
            approvals: Vec::new(),
            picker: None,
            dialogs: Default::default(),
            login: Default::default(),
            delete_armed: None,
            keymap: Keymap::new(&[]),
            status: Status::default(),
            jobs: super::jobs::Jobs::default(),
            pending: HashMap::new(),
            next_op: 0,
            dirty: true,
            to_terminal: Vec::new(),
            clipboard: None,
            frame: 0,
            last_tick: Instant::now(),
            quitting: false,
            closed: false,
            session_id: String::new(),
            reload: None,
            title: String::new(),
            shown_title: String::new(),
            focused: true,
            ui: Default::default(),
            cwd: String::new(),
            clock,
            in_burst: false,
            quit_armed: None,
            rewind_armed: None,
            rewind_to: None,
            sent: Vec::new(),
            editor_request: None,
            shown_cursor: None,
        }
    }

    pub fn handle(&mut self, msg: Msg) {
        match msg {
            Msg::Term(event) => self.on_terminal(event),
            Msg::TermBurst(event) => {
                self.in_burst = true;
                self.on_terminal(event);
                self.in_burst = false;
            }
            Msg::Uji(event) => self.on_uji(event),
            Msg::UjiGone(_) => self.closed = true,
            Msg::Signal(_) => self.quit(),
        }
        // A question that closed makes room for a waiting dialog.
        self.sync_dialogs();
    }

    /// Tells uji what this screen shows: dialogs too.
    pub fn hello(&mut self) {
        self.submit(Op::Hello { dialogs: true }, Pending::Other);
    }

    pub fn closed(&self) -> bool {
        self.closed
    }

    pub fn quitting(&self) -> bool {
        self.quitting
    }

    pub fn needs_draw(&self) -> bool {
        self.dirty
    }

    pub fn busy(&self) -> bool {
        self.status.busy_since.is_some()
    }

    /// Moves the spinner while something runs; redraws a question that
    /// became ready.
    pub fn tick(&mut self) {
        if self.files.poll() {
            self.dirty = true;
        }
        if self.question_stale(self.clock.now()) {
            self.dirty = true;
        }
        if self
            .status
            .hint
            .as_ref()
            .is_some_and(|(_, until)| self.clock.now() >= *until)
        {
            self.status.hint = None;
            self.dirty = true;
        }
        let animating = self.busy() || self.transcript.animating();
        if animating && self.last_tick.elapsed() >= TICK {
            self.last_tick = Instant::now();
            self.frame = self.frame.wrapping_add(1);
            self.dirty = true;
        }
    }

    /// How long the loop may sleep: until the next frame may be drawn when
    /// one is due, until the next spinner step while working or the open
    /// question becomes ready, else forever.
    pub fn next_wakeup(&self, last_draw: Option<Instant>, frame: Duration) -> Option<Duration> {
        if self.dirty {
            let since = last_draw.map_or(frame, |at| at.elapsed());
            return Some(frame.saturating_sub(since));
        }
        let spinner = (self.busy() || self.transcript.animating())
            .then(|| TICK.saturating_sub(self.last_tick.elapsed()));
        let closing = self.quitting.then_some(Duration::from_millis(100));
        // The `@` list fills while the walk and the matching go on.
        let files = self.files.busy().then_some(frame);
        let now = self.clock.now();
        let hint = self
            .status
            .hint
            .as_ref()
            .map(|(_, until)| until.saturating_duration_since(now));
        [spinner, closing, files, hint, self.until_question_ready()]
            .into_iter()
            .flatten()
            .min()
    }

    /// Sends an operation; its id is returned (and remembered with `pending`).
    pub(super) fn submit(&mut self, op: Op, pending: Pending) -> String {
        self.next_op += 1;
        let id = format!("tui-{}", self.next_op);
        if pending != Pending::Other {
            self.pending.insert(id.clone(), pending);
        }
        if let Err(e) = self.session.submit(&id, &op) {
            self.notice(Level::Error, format!("uji did not take that: {e}"));
        }
        id
    }

    pub(super) fn notice(&mut self, level: Level, text: impl Into<String>) {
        self.transcript.push(Block::Notice {
            level,
            text: text.into(),
        });
        self.dirty = true;
    }

    /// Shows `text` in the status line for `for_how_long`.
    pub(super) fn hint(&mut self, text: &str, for_how_long: Duration) {
        let until = self.clock.now() + for_how_long;
        self.status.hint = Some((text.to_string(), until));
        self.dirty = true;
    }

    /// What uji prints when the screen closes: how to come back to this
    /// session and what it used. None when nothing was said in it.
    pub fn farewell(&self) -> Option<String> {
        let usage = &self.status.session_usage;
        if self.session_id.is_empty() || !self.transcript.has_user_message() {
            return None;
        }
        let mut text = format!(
            "Resume this session with: uji resume --id {}\n",
            self.session_id
        );
        text.push_str(&format!(
            "Tokens used: {} in ({} cached), {} out\n",
            crate::status::tokens(usage.input),
            crate::status::tokens(usage.cache_read),
            crate::status::tokens(usage.output),
        ));
        Some(text)
    }

    /// Ends the session to start uji again on it, keeping the draft.
    pub(super) fn reload(&mut self) {
        if self.session_id.is_empty() {
            return;
        }
        let draft = self.composer.text().to_string();
        let kept = if draft.is_empty() {
            None
        } else {
            match super::reload::keep_draft(&draft) {
                Ok(path) => Some(path),
                Err(e) => {
                    self.notice(
                        Level::Error,
                        format!("not reloading: the draft could not be kept ({e})"),
                    );
                    return;
                }
            }
        };
        self.reload = Some(kept);
        self.notice(
            Level::Info,
            "reloading: uji starts again on this session".to_string(),
        );
        self.quit();
    }

    /// The session to start again on and where its draft is, once the
    /// screen is left.
    pub fn reload_target(&self) -> Option<(String, Option<std::path::PathBuf>)> {
        self.reload
            .as_ref()
            .map(|draft| (self.session_id.clone(), draft.clone()))
    }

    pub(super) fn quit(&mut self) {
        if !self.quitting {
            self.quitting = true;
            self.submit(Op::Shutdown, Pending::Other);
        }
    }
}
