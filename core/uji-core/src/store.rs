//! Saved sessions: one append-only JSON Lines file per session in
//! `<data>/sessions/`.
//!
//! Every message is one line written with a single append as it happens, so
//! a SIGKILL loses at most the line being written. A torn last line is cut
//! off when the session is opened again; tool calls left without a result
//! get an error result, so the history stays valid for the model APIs.

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
    Title { title: String },
}

/// Why a session could not be opened.
#[derive(Debug)]
pub enum StoreError {
    InvalidId(String),
    NotFound(String),
    Corrupt { path: PathBuf, why: String },
    Io { path: PathBuf, error: io::Error },
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StoreError::InvalidId(id) => {
                write!(f, "invalid session id {id:?}; `uji list` shows the ids")
            }
            StoreError::NotFound(id) => write!(
                f,
                "no session with id {id}; `uji list` shows the saved sessions"
            ),
            StoreError::Corrupt { path, why } => write!(
                f,
                "{} is not a readable uji session ({why}); move it away or delete it",
                path.display()
            ),
            StoreError::Io { path, error } => write!(f, "{}: {error}", path.display()),
        }
    }
}

impl std::error::Error for StoreError {}

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

fn valid_id(id: &str) -> bool {
    id.len() == 36
        && id.chars().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// A session listed by `uji list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionSummary {
    pub id: String,
    pub title: String,
    pub cwd: String,
    pub created: u64,
    /// Last write, milliseconds since the epoch.
    pub updated: u64,
}

/// The sessions directory.
#[derive(Debug, Clone)]
pub struct Store {
    dir: PathBuf,
}

/// A session opened for appending, with its messages.
#[derive(Debug)]
pub struct SessionFile {
    pub header: SessionHeader,
    pub messages: Vec<StoredMessage>,
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
        write_record(&mut file, &Record::Header(header.clone())).map_err(io_error(&path))?;
        Ok(SessionFile {
            header,
            messages: Vec::new(),
            path,
            file,
        })
    }

    /// Opens a saved session: cuts a torn last line and gives orphaned tool
    /// calls an error result.
    pub fn open(&self, id: &str) -> Result<SessionFile, StoreError> {
        if !valid_id(id) {
            return Err(StoreError::InvalidId(id.to_string()));
        }
        let path = self.path_of(id);
        if !path.exists() {
            return Err(StoreError::NotFound(id.to_string()));
        }
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .open(&path)
            .map_err(io_error(&path))?;
        let (mut header, messages, good_len) = read_records(&mut file, &path)?;
        let total = file.metadata().map_err(io_error(&path))?.len();
        if good_len < total {
            // Torn write at the end (killed mid-line): drop it.
            file.set_len(good_len).map_err(io_error(&path))?;
        }
        file.seek(SeekFrom::End(0)).map_err(io_error(&path))?;
        if let Some(title) = messages.1 {
            header.title = title;
        }
        let mut session = SessionFile {
            header,
            messages: messages.0,
            path,
            file,
        };
        session.repair().map_err(io_error(&session.path.clone()))?;
        Ok(session)
    }

    /// The newest session whose directory is `cwd`.
    pub fn latest_in(&self, cwd: &Path) -> Option<SessionSummary> {
        let cwd = cwd.to_string_lossy();
        self.list()
            .into_iter()
            .filter(|s| s.cwd == cwd)
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

    /// Deletes a session, and its spill files; false if there was none
    /// with that id.
    pub fn delete(&self, id: &str) -> Result<bool, StoreError> {
        if !valid_id(id) {
            return Err(StoreError::InvalidId(id.to_string()));
        }
        if let Some(data) = self.dir.parent()
            && let Err(e) = crate::spills::remove_session(data, id)
        {
            tracing::warn!(session = id, error = %e, "cannot remove the session's spill files");
        }
        let path = self.path_of(id);
        match fs::remove_file(&path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(StoreError::Io { path, error: e }),
        }
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
    })
}

type Messages = (Vec<StoredMessage>, Option<String>);

/// Reads every complete record; returns the byte length of the good prefix.
fn read_records(
    file: &mut File,
    path: &Path,
) -> Result<(SessionHeader, Messages, u64), StoreError> {
    file.seek(SeekFrom::Start(0)).map_err(io_error(path))?;
    let mut reader = BufReader::new(&*file);
    let mut header = None;
    let mut messages = Vec::new();
    let mut title = None;
    let mut good_len = 0u64;
    let mut line = Vec::new();
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(io_error(path))?;
        if n == 0 || line.last() != Some(&b'\n') {
            break;
        }
        match serde_json::from_slice::<Record>(&line) {
            Ok(Record::Header(h)) if header.is_none() => header = Some(h),
            Ok(Record::Message(m)) if header.is_some() => messages.push(m),
            Ok(Record::Title { title: t }) => title = Some(t),
            // A line that does not parse can only be the torn last one;
            // anything after it is not trusted.
            _ if header.is_some() => break,
            _ => {
                return Err(StoreError::Corrupt {
                    path: path.to_path_buf(),
                    why: "the first line is not a session header".to_string(),
                });
            }
        }
        good_len += n as u64;
    }
    let header = header.ok_or_else(|| StoreError::Corrupt {
        path: path.to_path_buf(),
        why: "it is empty".to_string(),
    })?;
    Ok((header, (messages, title), good_len))
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
            seq: self.messages.last().map_or(1, |m| m.seq + 1),
            time: now_ms(),
            body,
        };
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

    /// Gives every tool call that has no result an error result.
    /// Gives the newest assistant message's tool calls that have no result
    /// an error result. Results are matched within that exchange only: ids
    /// repeat across turns (`call_0` from servers that send none).
    fn repair(&mut self) -> io::Result<Vec<StoredMessage>> {
        let Some(last) = self
            .messages
            .iter()
            .rposition(|m| matches!(m.body, MessageBody::Assistant { .. }))
        else {
            return Ok(Vec::new());
        };
        let answered: std::collections::HashSet<&str> = self.messages[last + 1..]
            .iter()
            .filter_map(|m| match &m.body {
                MessageBody::Tool { tool_call_id, .. } => Some(tool_call_id.as_str()),
                _ => None,
            })
            .collect();
        let missing: Vec<(String, String)> = match &self.messages[last].body {
            MessageBody::Assistant { tool_calls, .. } => tool_calls
                .iter()
                .filter(|call| !answered.contains(call.id.as_str()))
                .map(|call| (call.id.clone(), call.name.clone()))
                .collect(),
            _ => Vec::new(),
        };
        let mut added = Vec::new();
        for (id, name) in missing {
            let (message, written) = self.append(MessageBody::Tool {
                tool_call_id: id,
                name,
                content: STOPPED_RESULT.to_string(),
                is_error: true,
                images: Vec::new(),
                summary: None,
                diff: None,
                subject: None,
            });
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
        assert!(store.delete(&id).unwrap());
        assert!(!store.delete(&id).unwrap());
        assert!(matches!(store.open(&id), Err(StoreError::NotFound(_))));
        assert!(matches!(store.open("nope"), Err(StoreError::InvalidId(_))));
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
