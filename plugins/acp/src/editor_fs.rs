//! Reads through the editor (`fs/read_text_file`), when `uji.config.set("acp",
//! { editor_fs = true })` is on and the editor offers it: a read_file page
//! is taken from the editor, so a file open there is read with its unsaved
//! changes. It is an `after_tool` handler, so the policy gate has already
//! decided (and confined) the read exactly as without an editor; only the
//! text the model reads changes. Writes back to the editor after edits are
//! in `editor_write`, on the same requests.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{Sender, channel};
use std::time::Duration;

use agent_client_protocol::v1::schema::{ReadTextFileRequest, WriteTextFileRequest};
use parking_lot::Mutex;
use serde::Deserialize;
use serde_json::{Number, Value};

use crate::connection::{Input, Inputs};
use crate::editor_write::Befores;

/// The agent loop while `uji acp` runs with editor_fs on and the editor
/// reads files, and what else it offers.
#[derive(Clone)]
pub struct Editor {
    tx: Inputs,
    /// The editor offers `fs/write_text_file` too.
    pub writes: bool,
    /// The session's directory, which relative paths are under.
    pub cwd: String,
}

/// What the file hooks share with the agent loop, owned by the running
/// frontend: the editor, once it has said it reads files, and the files'
/// text kept before edits.
#[derive(Default)]
pub struct EditorLink {
    editor: Mutex<Option<Editor>>,
    pub befores: Befores,
}

impl EditorLink {
    pub fn start(&self, tx: Inputs, writes: bool) {
        *self.editor.lock() = Some(Editor {
            tx,
            writes,
            cwd: String::new(),
        });
    }

    /// The session's directory, once uji has said which it is.
    pub fn set_cwd(&self, cwd: &str) {
        if let Some(editor) = self.editor.lock().as_mut() {
            editor.cwd = cwd.to_string();
        }
    }

    pub fn stop(&self) {
        *self.editor.lock() = None;
    }

    pub fn editor(&self) -> Option<Editor> {
        self.editor.lock().clone()
    }
}

/// How long a request waits for the editor before the file on disk is used.
pub const EDITOR_TIMEOUT: Duration = Duration::from_secs(10);

/// read_file's page size and line cut, which the editor's page follows.
const PAGE_LINES: u32 = 2000;
const MAX_LINE_BYTES: usize = 2000;

/// What these handlers read of a `before_tool` or `after_tool` payload
/// (docs/hooks.md); `args` are the tool's, as the model sent them.
#[derive(Deserialize)]
pub struct ToolHook {
    pub tool: String,
    pub call_id: String,
    /// The session whose model made the call: the editor's own, or one of
    /// its subagents' (whose call ids are unique only in their session).
    #[serde(default)]
    pub session: Option<String>,
    #[serde(default)]
    pub args: Value,
    /// The result (after_tool only).
    #[serde(default)]
    pub text: String,
    #[serde(default)]
    pub is_error: bool,
}

impl ToolHook {
    /// A payload these handlers can read, or `None` to leave the call alone.
    pub fn read(payload: Value) -> Option<ToolHook> {
        serde_json::from_value(payload).ok()
    }
}

/// The arguments of read_file, edit_file and write_file that name the file.
#[derive(Deserialize)]
pub struct PathArgs<'a> {
    pub path: &'a str,
    /// read_file's first line (an integer ≥ 1; read_file checked it).
    #[serde(default)]
    offset: Option<Number>,
}

impl<'a> PathArgs<'a> {
    pub fn of(args: &'a Value) -> Option<PathArgs<'a>> {
        PathArgs::deserialize(args).ok()
    }
}

/// A path as uji's file tools resolve it: `~/` under home, else under cwd.
pub fn resolve(cwd: &str, path: &str) -> PathBuf {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty());
    match (path.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest.trim_start_matches('/')),
        _ => Path::new(cwd).join(path),
    }
}

/// What the editor is asked.
pub enum Asked {
    /// A file's text: lines from `line`, `limit` of them (none: all).
    Read {
        path: PathBuf,
        line: Option<u32>,
        limit: Option<u32>,
    },
    /// Replace the file's text (the editor's buffer, which it saves).
    Write { path: PathBuf, content: String },
}

/// One request for the editor, and where its answer goes (the text read,
/// or empty for a write).
pub struct Ask {
    pub asked: Asked,
    reply: Sender<Result<String, String>>,
}

/// The request to send, as the crate types it.
pub enum Request {
    Read(ReadTextFileRequest),
    Write(WriteTextFileRequest),
}

impl Ask {
    pub fn request(&self, session_id: String) -> Request {
        match &self.asked {
            Asked::Read { path, line, limit } => {
                let mut request = ReadTextFileRequest::new(session_id, path.clone());
                request.line = *line;
                request.limit = *limit;
                Request::Read(request)
            }
            Asked::Write { path, content } => Request::Write(WriteTextFileRequest::new(
                session_id,
                path.clone(),
                content.clone(),
            )),
        }
    }

    pub fn answer(self, text: Result<String, String>) {
        let _ = self.reply.send(text);
    }
}

impl Editor {
    /// Asks the editor through the agent loop and waits for the answer (10 s
    /// at most); the error says what went wrong.
    pub fn ask(&self, asked: Asked) -> Result<String, String> {
        let (reply, answer) = channel();
        let ask = Ask { asked, reply };
        if self.tx.unbounded_send(Input::Editor(ask)).is_err() {
            return Err("the editor connection has closed".to_string());
        }
        match answer.recv_timeout(EDITOR_TIMEOUT) {
            Ok(answer) => answer,
            Err(_) => Err(format!("no answer within {} s", EDITOR_TIMEOUT.as_secs())),
        }
    }
}

/// The `after_tool` handler: `Null` leaves the text as the tool gave it.
pub fn after_tool(link: &EditorLink, payload: Value) -> Value {
    let Some(editor) = link.editor() else {
        return Value::Null;
    };
    let Some(hook) = ToolHook::read(payload) else {
        return Value::Null;
    };
    match hook.tool.as_str() {
        "read_file" => read_page(&editor, &hook),
        "edit_file" | "write_file" => {
            crate::editor_write::after_write(&editor, &link.befores, &hook);
            Value::Null
        }
        _ => Value::Null,
    }
}

/// The page of a read_file result, from the editor's buffer.
fn read_page(editor: &Editor, hook: &ToolHook) -> Value {
    if hook.is_error || !is_text_page(&hook.text) {
        return Value::Null;
    }
    let Some(args) = PathArgs::of(&hook.args) else {
        return Value::Null;
    };
    let path = args.path;
    let line = args
        .offset
        .and_then(|n| n.as_u64())
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or(1)
        .max(1);
    let asked = Asked::Read {
        path: resolve(&editor.cwd, path),
        line: Some(line),
        limit: Some(PAGE_LINES),
    };
    match editor.ask(asked) {
        Ok(content) => Value::String(page(path, line, &content)),
        Err(e) => {
            crate::log_warn(&format!(
                "the editor did not read {path} ({e}); using the file on disk"
            ));
            Value::Null
        }
    }
}

/// A page of numbered lines or an empty file (not an image or an error).
fn is_text_page(text: &str) -> bool {
    text.get(5..7) == Some("| ") || text.ends_with(" is empty")
}

/// The editor's text as read_file shows a page: `    7| text` lines.
pub fn page(path: &str, first: u32, content: &str) -> String {
    if content.is_empty() && first == 1 {
        return format!("{path} is empty");
    }
    let mut text = String::new();
    let mut rows = 0u32;
    for line in content.lines().take(PAGE_LINES as usize) {
        let number = first + rows;
        let body = cut(line);
        let suffix = if body.len() < line.len() {
            " [line cut]"
        } else {
            ""
        };
        text.push_str(&format!("{number:>5}| {body}{suffix}\n"));
        rows += 1;
    }
    if rows == PAGE_LINES {
        let last = first + rows - 1;
        text.push_str(&format!(
            "\n[showed lines {first}-{last}; continue with offset {}]",
            last + 1
        ));
    }
    text
}

fn cut(line: &str) -> &str {
    if line.len() <= MAX_LINE_BYTES {
        return line;
    }
    let mut end = MAX_LINE_BYTES;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    &line[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_numbers_lines_like_read_file() {
        assert_eq!(page("a.txt", 1, "x\ny\n"), "    1| x\n    2| y\n");
        assert_eq!(page("a.txt", 7, "z"), "    7| z\n");
        assert_eq!(page("a.txt", 1, ""), "a.txt is empty");
        assert!(is_text_page("    1| x\n"));
        assert!(!is_text_page(
            "a.png is a 2x2 image/png image, attached here."
        ));
    }
}
