//! Reads through the editor (`fs/read_text_file`), when `uji.config.set("acp",
//! { editor_fs = true })` is on and the editor offers it: a read_file page
//! is taken from the editor, so a file open there is read with its unsaved
//! changes. It is an `after_tool` handler, so the policy gate has already
//! decided (and confined) the read exactly as without an editor; only the
//! text the model reads changes.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::mpsc::{Sender, channel};
use std::time::Duration;

use agent_client_protocol::v1::schema::ReadTextFileRequest;
use serde_json::Value;

use crate::connection::{Input, Inputs};

/// The agent loop while `uji acp` runs with editor reads on.
static EDITOR: Mutex<Option<Inputs>> = Mutex::new(None);

/// How long a read waits for the editor before the file on disk is used.
const EDITOR_TIMEOUT: Duration = Duration::from_secs(10);

/// read_file's page size and line cut, which the editor's page follows.
const PAGE_LINES: u32 = 2000;
const MAX_LINE_BYTES: usize = 2000;

pub fn start(tx: Inputs) {
    *EDITOR.lock().unwrap_or_else(|e| e.into_inner()) = Some(tx);
}

pub fn stop() {
    *EDITOR.lock().unwrap_or_else(|e| e.into_inner()) = None;
}

/// One read for the editor, and where its text goes.
pub struct ReadAsk {
    path: String,
    line: u32,
    reply: Sender<Result<String, String>>,
}

impl ReadAsk {
    pub fn request(&self, session_id: String, cwd: &str) -> ReadTextFileRequest {
        let path = PathBuf::from(crate::updates::absolute(cwd, &self.path));
        ReadTextFileRequest::new(session_id, path)
            .line(self.line)
            .limit(PAGE_LINES)
    }

    pub fn answer(self, text: Result<String, String>) {
        let _ = self.reply.send(text);
    }
}

/// The `after_tool` handler: `Null` leaves the text as the tool gave it.
pub fn after_tool(payload: Value) -> Result<Value, String> {
    let Some(tx) = EDITOR.lock().unwrap_or_else(|e| e.into_inner()).clone() else {
        return Ok(Value::Null);
    };
    let text = payload["text"].as_str().unwrap_or("");
    if payload["tool"] != "read_file" || payload["is_error"] == true || !is_text_page(text) {
        return Ok(Value::Null);
    }
    let Some(path) = payload["args"]["path"].as_str() else {
        return Ok(Value::Null);
    };
    let line = payload["args"]["offset"]
        .as_u64()
        .and_then(|n| u32::try_from(n).ok())
        .unwrap_or(1)
        .max(1);
    let (reply, answer) = channel();
    let ask = ReadAsk {
        path: path.to_string(),
        line,
        reply,
    };
    if tx.unbounded_send(Input::EditorRead(ask)).is_err() {
        return Ok(Value::Null);
    }
    match answer.recv_timeout(EDITOR_TIMEOUT) {
        Ok(Ok(content)) => Ok(Value::String(page(path, line, &content))),
        Ok(Err(e)) => {
            crate::log_warn(&format!(
                "the editor did not read {path} ({e}); using the file on disk"
            ));
            Ok(Value::Null)
        }
        Err(_) => {
            crate::log_warn(&format!(
                "the editor did not answer for {path}; using the file on disk"
            ));
            Ok(Value::Null)
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
