//! Saved sessions: one append-only JSON Lines file per session in
//! `<data>/sessions/`.
//!
//! Every message is one line written with a single append as it happens, so
//! a SIGKILL loses at most the line being written. Opening a session never
//! drops a valid line: a damaged line is skipped (and left in the file) with
//! a notice; a torn last line is moved to `<id>.torn` before it is cut off,
//! so the next append starts on a line of its own. Tool calls left without a
//! result get an error result, so the history stays valid for the model APIs.
//!
//! A session open for writing holds an advisory lock (`flock`) on its file:
//! a second process gets [`StoreError::Locked`] instead of interleaving its
//! messages with the first one's.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use uji_protocol::session::{MessageBody, SessionHeader, StoredMessage};

/// Current session file format.
pub const FORMAT_VERSION: u32 = 1;

/// The result a tool call gets when uji stopped before it finished.
pub const STOPPED_RESULT: &str = "error: uji stopped before this tool returned a result";

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum Record {
    Header(SessionHeader),
    Message(StoredMessage),
    Title {
        title: String,
    },
    /// The conversation went back to before message `to`: the messages
    /// from `to` on, written before this record, are no longer part of it.
    /// They stay in the file; later messages take new numbers.
    Rewind {
        to: u64,
    },
}

/// Why a session could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("invalid session id {0:?}; `uji list` shows the ids")]
    InvalidId(String),
    #[error("no session with id {0}; `uji list` shows the saved sessions")]
    NotFound(String),
    #[error("{} is not a readable uji session ({why}); move it away", path.display())]
    Corrupt { path: PathBuf, why: String },
    /// Another process holds the session's lock: two writers would
    /// interleave their messages.
    #[error(
        "session {id} is open in another uji process, and only one process at a time may write a session; quit uji there (or wait for its `uji run` to finish) and try again, or start a new session"
    )]
    Locked { id: String },
    #[error("{}: {error}", path.display())]
    Io { path: PathBuf, error: io::Error },
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> StoreError + '_ {
    move |error| StoreError::Io {
        path: path.to_path_buf(),
        error,
    }
}

pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// 16 random bytes from the OS, with a time-and-pid fallback.
fn random_bytes() -> [u8; 16] {
    let mut bytes = [0u8; 16];
    if File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .is_ok()
    {
        return bytes;
    }
    use std::hash::{BuildHasher, Hasher};
    for (i, chunk) in bytes.chunks_mut(8).enumerate() {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u128(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0),
        );
        hasher.write_u32(std::process::id());
        hasher.write_usize(i);
        chunk.copy_from_slice(&hasher.finish().to_le_bytes());
    }
    bytes
}

/// A random UUID (version 4) as text.
pub fn new_session_id() -> String {
    let mut b = random_bytes();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// A fresh `call_` + 16 hex id for a tool call that came without one.
pub fn new_call_id() -> String {
    let b = random_bytes();
    let hex: String = b[..8].iter().map(|x| format!("{x:02x}")).collect();
    format!("call_{hex}")
}

pub(crate) fn valid_id(id: &str) -> bool {
    id.len() == 36
        && id.chars().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// A session listed by `uji list` (the shape `list_sessions` answers).
pub use uji_protocol::frontend::answers::SessionSummary;

/// The sessions directory.
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
}

/// A session opened for appending, with its messages. It holds the
/// session's lock until it is dropped.
#[derive(Debug)]
pub struct SessionFile {
    pub header: SessionHeader,
    /// The conversation: the file's messages less those a rewind left out.
    pub messages: Vec<StoredMessage>,
    /// The number the next message takes: one past every message in the
    /// file, rewound ones included, so no number is used twice.
    next_seq: u64,
    /// The `seq` of every message the user sent in the session, rewound
    /// ones included, oldest first: a turn's number is its message's
    /// place here (see [`SessionFile::turn_of`]).
    user_seqs: Vec<u64>,
    /// What opening found damaged and how it was handled, for the user.
    pub notices: Vec<String>,
    path: PathBuf,
    file: File,
}

impl Store {
    pub fn new(data_dir: &Path) -> Store {
        Store {
            dir: data_dir.join("sessions"),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn path_of(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.jsonl"))
    }

    /// Starts a new session in `cwd`.
    pub fn create(&self, cwd: &Path, title: &str) -> Result<SessionFile, StoreError> {
        self.create_with(cwd, title, None)
    }

    /// Starts a new session in `cwd`, working for `parent` when given.
    pub fn create_with(
        &self,
        cwd: &Path,
        title: &str,
        parent: Option<&str>,
    ) -> Result<SessionFile, StoreError> {
        fs::create_dir_all(&self.dir).map_err(io_error(&self.dir))?;
        // Sessions hold everything the agent read: keep them private.
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = fs::set_permissions(&self.dir, fs::Permissions::from_mode(0o700));
        }
        let header = SessionHeader {
            version: FORMAT_VERSION,
            id: new_session_id(),
            cwd: cwd.to_string_lossy().into_owned(),
            title: title.to_string(),
            created: now_ms(),
            parent: parent.map(str::to_string),
        };
        let path = self.path_of(&header.id);
        let mut file = {
            use std::os::unix::fs::OpenOptionsExt;
            OpenOptions::new()
                .create_new(true)
                .append(true)
                .mode(0o600)
                .open(&path)
        }
        .map_err(io_error(&path))?;
        lock(&file, &header.id, &path)?;
        write_record(&mut file, &Record::Header(header.clone())).map_err(io_error(&path))?;
        Ok(SessionFile {
            header,
            messages: Vec::new(),
            next_seq: 1,
            user_seqs: Vec::new(),
            notices: Vec::new(),
            path,
            file,
        })
    }

    /// Opens a saved session for writing: takes its lock, skips damaged
    /// lines, moves a torn last line aside and gives orphaned tool calls an
    /// error result.
    pub fn open(&self, id: &str) -> Result<SessionFile, StoreError> {
        let (path, mut file) = self.open_locked(id)?;
        let loaded = read_records(&mut file, &path)?;
        let mut notices = Vec::new();
        notices.extend(damaged_notice(id, &path, &loaded.damaged));
        notices.extend(self.settle_tail(id, &mut file, &path, &loaded)?);
        let mut header = loaded.header;
        if let Some(title) = loaded.title {
            header.title = title;
        }
        let mut session = SessionFile {
            header,
            messages: loaded.messages,
            next_seq: loaded.next_seq,
            user_seqs: loaded.user_seqs,
            notices,
            path,
            file,
        };
        session.repair().map_err(io_error(&session.path.clone()))?;
        fill_lost_results(&mut session.messages);
        Ok(session)
    }

    /// The messages of a session as saved now, without its lock and
    /// without changing the file: for reading a session another part of
    /// uji is writing (`/export`, `/diff`). Damaged lines and a torn last
    /// line (one being written) are left out.
    pub fn read(&self, id: &str) -> Result<Vec<StoredMessage>, StoreError> {
        if !valid_id(id) {
            return Err(StoreError::InvalidId(id.to_string()));
        }
        let path = self.path_of(id);
        let mut file = match File::open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(StoreError::NotFound(id.to_string()));
            }
            Err(error) => return Err(StoreError::Io { path, error }),
        };
        Ok(read_records(&mut file, &path)?.messages)
    }

    /// The session's file, opened for reading and appending with its lock
    /// held (taken before reading, so nobody appends while it is read).
    fn open_locked(&self, id: &str) -> Result<(PathBuf, File), StoreError> {
        if !valid_id(id) {
            return Err(StoreError::InvalidId(id.to_string()));
        }
        let path = self.path_of(id);
        let file = match OpenOptions::new().read(true).append(true).open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(StoreError::NotFound(id.to_string()));
            }
            Err(error) => return Err(StoreError::Io { path, error }),
        };
        lock(&file, id, &path)?;
        Ok((path, file))
    }

    /// Where the torn last lines of session `id` are kept.
    fn torn_path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.torn"))
    }

    /// Ends the file on a complete line. A last line that only lacks its
    /// newline gets one; a torn one (uji was killed while writing it) is
    /// appended to `<id>.torn` first and then cut off. Returns a notice when
    /// something was cut.
    fn settle_tail(
        &self,
        id: &str,
        file: &mut File,
        path: &Path,
        loaded: &Loaded,
    ) -> Result<Option<String>, StoreError> {
        match &loaded.tail {
            Tail::Clean => Ok(None),
            Tail::MissingNewline => {
                file.write_all(b"\n").map_err(io_error(path))?;
                Ok(None)
            }
            Tail::Torn(bytes) => {
                let backup = self.torn_path(id);
                keep_torn(&backup, bytes).map_err(io_error(&backup))?;
                file.set_len(loaded.complete_len).map_err(io_error(path))?;
                tracing::warn!(
                    "session {id}: cut a torn last line of {} bytes",
                    bytes.len()
                );
                Ok(Some(format!(
                    "session {id}: its last line was cut off while uji wrote it ({} bytes); it was moved to {}, and every complete message was kept",
                    bytes.len(),
                    backup.display()
                )))
            }
        }
    }

    /// The newest session whose directory is `cwd`.
    pub fn latest_in(&self, cwd: &Path) -> Option<SessionSummary> {
        let cwd = cwd.to_string_lossy();
        self.list()
            .into_iter()
            .filter(|s| s.cwd == cwd && s.parent.is_none())
            .max_by_key(|s| s.updated)
    }

    /// Every session, newest first.
    pub fn list(&self) -> Vec<SessionSummary> {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut sessions: Vec<SessionSummary> = entries
            .filter_map(|e| e.ok())
            .filter_map(|entry| {
                let path = entry.path();
                if path.extension().and_then(|e| e.to_str()) != Some("jsonl") {
                    return None;
                }
                let updated = entry
                    .metadata()
                    .ok()
                    .and_then(|m| m.modified().ok())
                    .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                    .map(|d| d.as_millis() as u64)
                    .unwrap_or(0);
                summary_of(&path, updated)
            })
            .collect();
        sessions.sort_by_key(|s| std::cmp::Reverse(s.updated));
        sessions
    }

    /// Deletes a session, its spill files and its checkpoints; false if there was none
    /// with that id. A session another process has open is not deleted
    /// ([`StoreError::Locked`]).
    pub fn delete(&self, id: &str) -> Result<bool, StoreError> {
        // Held until the file is gone: nobody opens it in between.
        let (path, _locked) = match self.open_locked(id) {
            Ok(opened) => opened,
            Err(StoreError::NotFound(_)) => return Ok(false),
            Err(e) => return Err(e),
        };
        if let Some(data) = self.dir.parent() {
            if let Err(e) = crate::session::spills::remove_session(data, id) {
                tracing::warn!(session = id, error = %e, "cannot remove the session's spill files");
            }
            // Its checkpoint log; the objects only it used go at the next
            // prune (docs/checkpoints.md).
            uji_checkpoint::remove_session(data, id);
        }
        match fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(StoreError::Io { path, error: e }),
        }
        let torn = self.torn_path(id);
        if let Err(e) = fs::remove_file(&torn)
            && e.kind() != io::ErrorKind::NotFound
        {
            tracing::warn!("could not remove {}: {e}", torn.display());
        }
        Ok(true)
    }
}

/// Header and title of a session file, reading no further than needed.
fn summary_of(path: &Path, updated: u64) -> Option<SessionSummary> {
    let file = File::open(path).ok()?;
    let mut lines = BufReader::new(file).lines();
    let first = lines.next()?.ok()?;
    let Record::Header(header) = serde_json::from_str(&first).ok()? else {
        return None;
    };
    // A title set later is a small line; titles are rare, so scan for it
    // only in files that are not huge.
    let mut title = header.title.clone();
    if fs::metadata(path)
        .map(|m| m.len() < 4 << 20)
        .unwrap_or(false)
    {
        for line in lines.map_while(Result::ok) {
            if line.starts_with("{\"type\":\"title\"")
                && let Ok(Record::Title { title: t }) = serde_json::from_str(&line)
            {
                title = t;
            }
        }
    }
    Some(SessionSummary {
        id: header.id,
        title,
        cwd: header.cwd,
        created: header.created,
        updated,
        parent: header.parent,
    })
}

/// Takes the session's lock without waiting: a second writer is refused.
fn lock(file: &File, id: &str, path: &Path) -> Result<(), StoreError> {
    use rustix::fs::{FlockOperation, flock};
    match flock(file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(()),
        Err(e) if e == rustix::io::Errno::WOULDBLOCK => {
            Err(StoreError::Locked { id: id.to_string() })
        }
        Err(e) => Err(StoreError::Io {
            path: path.to_path_buf(),
            error: e.into(),
        }),
    }
}

/// Appends a torn line to the backup file, private like the session.
fn keep_torn(backup: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(backup)?;
    let mut line = bytes.to_vec();
    line.push(b'\n');
    file.write_all(&line)?;
    file.sync_data()
}

/// A line that does not hold a record, by its 1-based number.
#[derive(Debug)]
struct Damaged {
    line: usize,
    why: String,
}

/// How the file ends.
#[derive(Debug)]
enum Tail {
    Clean,
    /// The last line is a whole record without its newline.
    MissingNewline,
    /// The last line was cut off mid-write; its bytes.
    Torn(Vec<u8>),
}

/// What reading a session file found.
#[derive(Debug)]
struct Loaded {
    header: SessionHeader,
    messages: Vec<StoredMessage>,
    next_seq: u64,
    user_seqs: Vec<u64>,
    title: Option<String>,
    damaged: Vec<Damaged>,
    /// Bytes up to the end of the last complete line.
    complete_len: u64,
    tail: Tail,
}

/// Reads every record. Damaged lines anywhere are skipped and listed (the
/// lines after them are still read); only a damaged first line, which
/// leaves no header, is an error.
fn read_records(file: &mut File, path: &Path) -> Result<Loaded, StoreError> {
    file.seek(SeekFrom::Start(0)).map_err(io_error(path))?;
    let mut reader = BufReader::new(&*file);
    let mut records = Records::default();
    let mut complete_len = 0u64;
    let mut tail = Tail::Clean;
    let mut line = Vec::new();
    for number in 1.. {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(io_error(path))?;
        if n == 0 {
            break;
        }
        let complete = line.last() == Some(&b'\n');
        let parsed = serde_json::from_slice::<Record>(&line);
        if !complete {
            tail = match parsed {
                Ok(record) => {
                    records.take(record, number, path)?;
                    Tail::MissingNewline
                }
                Err(_) => Tail::Torn(line.clone()),
            };
            break;
        }
        complete_len += n as u64;
        match parsed {
            Ok(record) => records.take(record, number, path)?,
            Err(e) => records.damaged(number, e.to_string(), path)?,
        }
    }
    records.finish(path, complete_len, tail)
}

/// Records as they are read.
#[derive(Default)]
struct Records {
    header: Option<SessionHeader>,
    messages: Vec<StoredMessage>,
    /// The highest message number read, rewound messages included.
    last_seq: u64,
    /// The user's messages' numbers, rewound messages included.
    user_seqs: Vec<u64>,
    title: Option<String>,
    damaged: Vec<Damaged>,
}

impl Records {
    fn take(&mut self, record: Record, line: usize, path: &Path) -> Result<(), StoreError> {
        match record {
            Record::Header(h) if self.header.is_none() => self.header = Some(h),
            Record::Message(m) if self.header.is_some() => {
                self.last_seq = self.last_seq.max(m.seq);
                if starts_turn(&m.body) {
                    self.user_seqs.push(m.seq);
                }
                self.messages.push(m);
            }
            Record::Title { title } if self.header.is_some() => self.title = Some(title),
            Record::Rewind { to } if self.header.is_some() => {
                self.messages.retain(|m| m.seq < to);
            }
            _ => self.damaged(line, "a record out of place".to_string(), path)?,
        }
        Ok(())
    }

    fn damaged(&mut self, line: usize, why: String, path: &Path) -> Result<(), StoreError> {
        if self.header.is_none() {
            return Err(StoreError::Corrupt {
                path: path.to_path_buf(),
                why: "the first line is not a session header".to_string(),
            });
        }
        tracing::warn!("{}: skipped damaged line {line}: {why}", path.display());
        self.damaged.push(Damaged { line, why });
        Ok(())
    }

    fn finish(self, path: &Path, complete_len: u64, tail: Tail) -> Result<Loaded, StoreError> {
        let header = self.header.ok_or_else(|| StoreError::Corrupt {
            path: path.to_path_buf(),
            why: "it is empty".to_string(),
        })?;
        Ok(Loaded {
            header,
            messages: self.messages,
            next_seq: self.last_seq + 1,
            user_seqs: self.user_seqs,
            title: self.title,
            damaged: self.damaged,
            complete_len,
            tail,
        })
    }
}

/// Lines listed in a notice before "…".
const DAMAGED_LISTED: usize = 5;

/// One notice for every damaged line of a session.
fn damaged_notice(id: &str, path: &Path, damaged: &[Damaged]) -> Option<String> {
    let first = damaged.first()?;
    let mut lines: Vec<String> = damaged
        .iter()
        .take(DAMAGED_LISTED)
        .map(|d| d.line.to_string())
        .collect();
    if damaged.len() > DAMAGED_LISTED {
        lines.push("…".to_string());
    }
    let (count, plural) = match damaged.len() {
        1 => ("1 damaged line".to_string(), "line"),
        n => (format!("{n} damaged lines"), "lines"),
    };
    Some(format!(
        "session {id}: skipped {count} of {} ({plural} {}; line {}: {}); they stay in the file untouched, and every other message was kept",
        path.display(),
        lines.join(", "),
        first.line,
        first.why
    ))
}

/// The result a tool call gets in memory when its saved result was on a
/// damaged line.
pub const LOST_RESULT: &str =
    "error: this tool's result was lost (its line in the session file is damaged)";

/// Gives tool calls whose result line was damaged an error result in
/// memory (the file is append-only, and the newest exchange is repaired on
/// disk by [`SessionFile::repair`]): the model APIs refuse a call without a
/// result.
fn fill_lost_results(messages: &mut Vec<StoredMessage>) {
    let mut at = 0;
    while at < messages.len() {
        let missing = unanswered_calls(messages, at);
        let seq = messages[at].seq;
        let next = at + 1 + answers_after(messages, at);
        for (offset, (id, name)) in missing.into_iter().enumerate() {
            let lost = StoredMessage {
                seq,
                time: messages[at].time,
                body: stopped_result(id, name, LOST_RESULT),
            };
            messages.insert(next + offset, lost);
        }
        at += 1;
    }
}

/// How many tool results directly follow message `at`.
fn answers_after(messages: &[StoredMessage], at: usize) -> usize {
    messages[at + 1..]
        .iter()
        .take_while(|m| matches!(m.body, MessageBody::Tool { .. }))
        .count()
}

/// The calls of the assistant message at `at` with no result before the
/// next assistant message (ids repeat across turns: `call_0` from servers
/// that send none).
fn unanswered_calls(messages: &[StoredMessage], at: usize) -> Vec<(String, String)> {
    let MessageBody::Assistant { tool_calls, .. } = &messages[at].body else {
        return Vec::new();
    };
    let end = messages[at + 1..]
        .iter()
        .position(|m| matches!(m.body, MessageBody::Assistant { .. }))
        .map_or(messages.len(), |i| at + 1 + i);
    let answers = &messages[at + 1..end];
    let answered: std::collections::HashSet<&str> = answers
        .iter()
        .filter_map(|m| match &m.body {
            MessageBody::Tool { tool_call_id, .. } => Some(tool_call_id.as_str()),
            _ => None,
        })
        .collect();
    tool_calls
        .iter()
        .filter(|call| !answered.contains(call.id.as_str()))
        .map(|call| (call.id.clone(), call.name.clone()))
        .collect()
}

/// An error result for call `id` of tool `name`.
fn stopped_result(id: String, name: String, text: &str) -> MessageBody {
    MessageBody::Tool {
        tool_call_id: id,
        name,
        content: text.to_string(),
        is_error: true,
        images: Vec::new(),
        summary: None,
        diff: None,
        subject: None,
        error_kind: None,
    }
}

/// Whether a message starts a turn: one the user sent (a hidden one, such
/// as a `before_stop` nudge, continues the turn it is in).
fn starts_turn(body: &MessageBody) -> bool {
    matches!(body, MessageBody::User { hidden: false, .. })
}

fn write_record(file: &mut File, record: &Record) -> io::Result<()> {
    let mut line = serde_json::to_vec(record).map_err(io::Error::other)?;
    line.push(b'\n');
    // One write of the whole line: O_APPEND keeps it contiguous.
    file.write_all(&line)
}

impl SessionFile {
    pub fn id(&self) -> &str {
        &self.header.id
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Saves a message now and returns it as stored.
    /// Saves a message now. The message joins the in-memory history even
    /// when the write fails (the turn goes on, and the model must see what
    /// happened); a partly written line is cut off so later lines stay
    /// readable.
    pub fn append(&mut self, body: MessageBody) -> (StoredMessage, io::Result<()>) {
        let message = StoredMessage {
            seq: self.next_seq,
            time: now_ms(),
            body,
        };
        self.next_seq += 1;
        if starts_turn(&message.body) {
            self.user_seqs.push(message.seq);
        }
        let before = self.file.metadata().map(|m| m.len());
        let written = write_record(&mut self.file, &Record::Message(message.clone()));
        if written.is_err()
            && let Ok(len) = before
        {
            let _ = self.file.set_len(len);
        }
        self.messages.push(message.clone());
        (message, written)
    }

    /// Takes the conversation back to before message `to`: the messages
    /// from `to` on leave it (they stay in the file, after a record saying
    /// so) and are returned. Nothing changes when the record cannot be
    /// written.
    pub fn rewind(&mut self, to: u64) -> io::Result<Vec<StoredMessage>> {
        write_record(&mut self.file, &Record::Rewind { to })?;
        let keep = self.messages.partition_point(|m| m.seq < to);
        Ok(self.messages.split_off(keep))
    }

    /// The number of the turn the user's message `seq` started: its place
    /// among every message the user sent in the session, from 1. Messages
    /// a rewind took out of the conversation keep their numbers, so a
    /// number is never given to two turns (checkpoints name turns by it).
    /// `None` when `seq` is no message of the user's.
    pub fn turn_of(&self, seq: u64) -> Option<u64> {
        // Numbers grow as messages are written, so the list is sorted.
        let at = self.user_seqs.binary_search(&seq).ok()?;
        Some(at as u64 + 1)
    }

    /// The turn of the conversation's last message from the user (the
    /// turn running, or the last one); 0 before the first.
    pub fn last_turn(&self) -> u64 {
        self.messages
            .iter()
            .rev()
            .find(|m| starts_turn(&m.body))
            .and_then(|m| self.turn_of(m.seq))
            .unwrap_or(0)
    }

    /// Whether turn `turn`'s message is in the conversation (a rewind did
    /// not take it out).
    pub fn in_conversation(&self, turn: u64) -> bool {
        let Some(&seq) = usize::try_from(turn)
            .ok()
            .and_then(|turn| self.user_seqs.get(turn.checked_sub(1)?))
        else {
            return false;
        };
        self.messages.iter().any(|m| m.seq == seq)
    }

    pub fn set_title(&mut self, title: &str) -> io::Result<()> {
        write_record(
            &mut self.file,
            &Record::Title {
                title: title.to_string(),
            },
        )?;
        self.header.title = title.to_string();
        Ok(())
    }

    /// Pushes the file's data to disk (end of a turn).
    pub fn sync(&self) -> io::Result<()> {
        self.file.sync_data()
    }

    /// Gives the newest assistant message's tool calls that have no result
    /// an error result, saved.
    fn repair(&mut self) -> io::Result<Vec<StoredMessage>> {
        let Some(last) = self
            .messages
            .iter()
            .rposition(|m| matches!(m.body, MessageBody::Assistant { .. }))
        else {
            return Ok(Vec::new());
        };
        let missing = unanswered_calls(&self.messages, last);
        let mut added = Vec::new();
        for (id, name) in missing {
            let (message, written) = self.append(stopped_result(id, name, STOPPED_RESULT));
            written?;
            added.push(message);
        }
        Ok(added)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use uji_protocol::wire::ToolCallRequest;

    fn user(text: &str) -> MessageBody {
        MessageBody::User {
            text: text.to_string(),
            images: Vec::new(),
            hidden: false,
        }
    }

    #[test]
    fn ids_are_uuids_and_validated() {
        let id = new_session_id();
        assert!(valid_id(&id), "{id}");
        assert_eq!(&id[14..15], "4");
        assert!(!valid_id("not-a-uuid"));
        assert!(new_call_id().starts_with("call_") && new_call_id().len() == 21);
    }

    #[test]
    fn a_rewind_leaves_later_messages_out_of_the_conversation_but_in_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let mut session = store.create(Path::new("/repo"), "").unwrap();
        for text in ["one", "two", "three"] {
            session.append(user(text)).1.unwrap();
        }
        let dropped = session.rewind(2).unwrap();
        assert_eq!(dropped.iter().map(|m| m.seq).collect::<Vec<_>>(), [2, 3]);
        assert_eq!(session.messages.len(), 1);
        // Numbers are never used twice: the next message is 4, not 2.
        let (next, written) = session.append(user("two again"));
        written.unwrap();
        assert_eq!(next.seq, 4);
        let id = session.id().to_string();
        let path = session.path().to_path_buf();
        drop(session);
        let texts = |messages: &[StoredMessage]| -> Vec<String> {
            messages
                .iter()
                .map(|m| match &m.body {
                    MessageBody::User { text, .. } => text.clone(),
                    other => format!("{other:?}"),
                })
                .collect()
        };
        assert_eq!(texts(&store.read(&id).unwrap()), ["one", "two again"]);
        let mut reopened = store.open(&id).unwrap();
        assert_eq!(texts(&reopened.messages), ["one", "two again"]);
        assert!(reopened.notices.is_empty(), "{:?}", reopened.notices);
        assert_eq!(reopened.append(user("four")).0.seq, 5);
        drop(reopened);
        // Nothing was lost: the rewound messages are still in the file.
        let raw = std::fs::read_to_string(path).unwrap();
        assert!(
            raw.contains("\"three\"") && raw.contains("\"rewind\""),
            "{raw}"
        );
    }

    #[test]
    fn turn_numbers_only_grow_across_a_rewind_and_a_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let mut session = store.create(Path::new("/repo"), "").unwrap();
        let answer = || MessageBody::Assistant {
            text: "ok".into(),
            reasoning: None,
            tool_calls: Vec::new(),
            usage: None,
            model: None,
            effort: None,
            replay: None,
        };
        let nudge = MessageBody::User {
            text: "go on".into(),
            images: Vec::new(),
            hidden: true,
        };
        assert_eq!(session.last_turn(), 0);
        let mut seqs = Vec::new();
        for text in ["one", "two", "three"] {
            seqs.push(session.append(user(text)).0.seq);
            session.append(answer()).1.unwrap();
        }
        session.append(nudge).1.unwrap();
        assert_eq!(session.last_turn(), 3, "a hidden message is no turn");
        session.rewind(seqs[1]).unwrap();
        assert_eq!(session.last_turn(), 1, "the conversation's last turn");
        let again = session.append(user("two, edited")).0.seq;
        assert_eq!(session.turn_of(again), Some(4), "not 2 again");
        assert_eq!(
            session.turn_of(seqs[1]),
            Some(2),
            "the rewound one keeps its number"
        );
        assert_eq!(
            session.turn_of(seqs[0] + 1),
            None,
            "an answer starts no turn"
        );
        assert!(session.in_conversation(1) && session.in_conversation(4));
        assert!(!session.in_conversation(2) && !session.in_conversation(5));
        let id = session.id().to_string();
        drop(session);
        let reopened = store.open(&id).unwrap();
        assert_eq!(reopened.last_turn(), 4);
        assert_eq!(reopened.turn_of(again), Some(4));
    }

    #[test]
    fn messages_round_trip_and_seq_grows() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let mut session = store.create(Path::new("/repo"), "first").unwrap();
        session.append(user("hello")).1.unwrap();
        let (second, written) = session.append(user("again"));
        written.unwrap();
        assert_eq!(second.seq, 2);
        session.set_title("renamed").unwrap();
        let id = session.id().to_string();
        drop(session);
        let reopened = store.open(&id).unwrap();
        assert_eq!(reopened.messages.len(), 2);
        assert_eq!(reopened.header.title, "renamed");
        assert_eq!(store.list()[0].title, "renamed");
        assert_eq!(store.latest_in(Path::new("/repo")).unwrap().id, id);
        assert!(store.latest_in(Path::new("/elsewhere")).is_none());
        // Open here: another open or a delete is refused until it is dropped.
        assert!(matches!(store.open(&id), Err(StoreError::Locked { .. })));
        assert!(matches!(store.delete(&id), Err(StoreError::Locked { .. })));
        drop(reopened);
        assert!(store.delete(&id).unwrap());
        assert!(!store.delete(&id).unwrap());
        assert!(matches!(store.open(&id), Err(StoreError::NotFound(_))));
        assert!(matches!(store.open("nope"), Err(StoreError::InvalidId(_))));
    }

    /// A closed session of user messages: its directory, store, id and file.
    fn saved(texts: &[&str]) -> (tempfile::TempDir, Store, String, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let mut session = store.create(Path::new("/repo"), "t").unwrap();
        for text in texts {
            session.append(user(text)).1.unwrap();
        }
        let (id, path) = (session.id().to_string(), session.path().to_path_buf());
        (dir, store, id, path)
    }

    #[test]
    fn damaged_lines_are_skipped_kept_on_disk_and_named_in_one_notice() {
        let (_dir, store, id, path) = saved(&["one", "two", "three"]);
        let text = fs::read_to_string(&path).unwrap();
        let damaged = text.replacen("\"seq\":2", "\"seq\":", 1);
        fs::write(&path, &damaged).unwrap();

        let reopened = store.open(&id).unwrap();
        let seqs: Vec<u64> = reopened.messages.iter().map(|m| m.seq).collect();
        assert_eq!(seqs, [1, 3]);
        assert_eq!(reopened.notices.len(), 1, "{:?}", reopened.notices);
        assert!(reopened.notices[0].contains("skipped 1 damaged line"));
        assert!(reopened.notices[0].contains("line 3"));
        drop(reopened);
        assert_eq!(fs::read_to_string(&path).unwrap(), damaged);
    }

    #[test]
    fn a_last_line_without_its_newline_is_kept_and_completed() {
        let (_dir, store, id, path) = saved(&["one"]);
        let text = fs::read_to_string(&path).unwrap();
        fs::write(&path, text.trim_end()).unwrap();
        let mut reopened = store.open(&id).unwrap();
        assert_eq!(reopened.messages.len(), 1);
        assert!(reopened.notices.is_empty());
        reopened.append(user("two")).1.unwrap();
        drop(reopened);
        assert_eq!(store.open(&id).unwrap().messages.len(), 2);
    }

    #[test]
    fn a_torn_last_line_is_cut_and_orphan_tool_calls_get_a_result() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::new(dir.path());
        let mut session = store.create(Path::new("/repo"), "t").unwrap();
        session.append(user("do it")).1.unwrap();
        session
            .append(MessageBody::Assistant {
                text: String::new(),
                reasoning: None,
                tool_calls: vec![ToolCallRequest {
                    id: "call_1".into(),
                    name: "run_command".into(),
                    arguments: "{}".into(),
                }],
                usage: None,
                model: None,
                effort: None,
                replay: None,
            })
            .1
            .unwrap();
        let id = session.id().to_string();
        let path = session.path().to_path_buf();
        drop(session);
        // Simulate SIGKILL in the middle of writing the tool result.
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(b"{\"type\":\"message\",\"seq\":3,\"ti")
            .unwrap();
        drop(file);

        let mut reopened = store.open(&id).unwrap();
        assert_eq!(reopened.messages.len(), 3);
        match &reopened.messages[2].body {
            MessageBody::Tool {
                tool_call_id,
                content,
                ..
            } => {
                assert_eq!(tool_call_id, "call_1");
                assert_eq!(content, STOPPED_RESULT);
            }
            other => panic!("{other:?}"),
        }
        reopened.append(user("next")).1.unwrap();
        drop(reopened);
        let text = fs::read_to_string(&path).unwrap();
        assert!(
            text.ends_with("\n") && !text.contains("\"ti{"),
            "torn line removed: {text}"
        );
        assert_eq!(store.open(&id).unwrap().messages.len(), 4);
    }
}
