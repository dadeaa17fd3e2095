//! Writes back to the editor (`fs/write_text_file`) after a successful
//! edit_file or write_file, when editor_fs is on and the editor reads and
//! writes files: the editor's buffer gets the change (Zed applies it, saves
//! it and tracks it for review). uji's tool has already written the file on
//! disk, after the policy gate allowed it; this only tells the editor.
//!
//! The one danger is a buffer with unsaved changes: writing the disk's text
//! into it would drop them. So the buffer is read first and compared with
//! the file's text just before the call (kept by a `before_tool` handler):
//!
//! - the buffer is that text, or already the new one: the new text is sent;
//! - edit_file, the buffer differs: the same replacement is made in the
//!   buffer's text (old_string found exactly once, or every time with
//!   replace_all), and that is sent to the editor and, once it took it,
//!   written to disk too, so both hold the unsaved changes and the edit;
//! - otherwise (the edit does not apply to the buffer, or write_file over a
//!   buffer with unsaved changes): the editor is left alone, the log says
//!   so, and the file on disk keeps the tool's result.
//!
//! A file that did not exist before a write_file is sent as written. When
//! the editor fails or does not answer in 10 s, the disk write stands and
//! the log says so.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use parking_lot::Mutex;
use serde::Deserialize;
use serde_json::Value;

use crate::editor_fs::{Asked, Editor, EditorLink, PathArgs, ToolHook, resolve};

/// Files larger than this are not sent to the editor: the whole text goes
/// over the pipe twice.
const MAX_BYTES: u64 = 1 << 20;

/// The file's text just before an edit or a write, by call id.
enum Before {
    /// The file did not exist (a write_file creating it).
    Missing,
    Text(String),
}

/// The files' text kept by `before_tool` for the `after_tool` of the same
/// call, by session and call id (subagents' calls run beside the
/// session's, and their ids are unique only in their own session).
#[derive(Default)]
pub struct Befores(Mutex<HashMap<(Option<String>, String), Before>>);

impl Befores {
    fn keep(&self, hook: &ToolHook, before: Before) {
        let key = (hook.session.clone(), hook.call_id.clone());
        self.0.lock().insert(key, before);
    }

    fn take(&self, hook: &ToolHook) -> Option<Before> {
        let key = (hook.session.clone(), hook.call_id.clone());
        self.0.lock().remove(&key)
    }

    /// Forgets the text of the calls named `call_id` (a call refused after
    /// `before_tool` never reaches `after_tool`). A subagent's call of the
    /// same id loses its text too: its edit then stays on disk only.
    pub fn forget(&self, call_id: &str) {
        self.0.lock().retain(|(_, id), _| id != call_id);
    }
}

/// The `before_tool` handler: keeps the file's text for an edit or write
/// that may go to the editor. It never decides anything.
pub fn before_tool(link: &EditorLink, payload: Value) {
    let Some(editor) = link.editor().filter(|e| e.writes) else {
        return;
    };
    let Some(hook) = ToolHook::read(payload) else {
        return;
    };
    if !matches!(hook.tool.as_str(), "edit_file" | "write_file") {
        return;
    }
    let Some(args) = PathArgs::of(&hook.args) else {
        return;
    };
    if let Some(before) = read_before(&resolve(&editor.cwd, args.path)) {
        link.befores.keep(&hook, before);
    }
}

/// The text of a regular file not over [`MAX_BYTES`]; `Missing` when there
/// is none; `None` when it is not one uji sends to the editor.
fn read_before(path: &Path) -> Option<Before> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(Before::Missing),
        Ok(meta) if meta.is_file() && meta.len() <= MAX_BYTES => {
            std::fs::read_to_string(path).ok().map(Before::Text)
        }
        _ => None,
    }
}

/// After a successful edit_file or write_file: the editor's buffer gets
/// the change, as the module's rule says.
pub fn after_write(editor: &Editor, befores: &Befores, hook: &ToolHook) {
    let before = befores.take(hook);
    if !editor.writes || hook.is_error {
        return;
    }
    let (Some(before), Some(args)) = (before, PathArgs::of(&hook.args)) else {
        return;
    };
    let shown = args.path;
    let path = resolve(&editor.cwd, shown);
    let Ok(after) = std::fs::read_to_string(&path) else {
        return;
    };
    let sent = match before {
        Before::Missing => Some((after, false)),
        Before::Text(before) => match editor.ask(Asked::Read {
            path: path.clone(),
            line: None,
            limit: None,
        }) {
            Ok(buffer) => choose(hook, shown, &before, &after, buffer),
            Err(e) => {
                crate::log_warn(&format!(
                    "the editor did not read {shown} ({e}), so it was not sent the change; the file on disk has it"
                ));
                None
            }
        },
    };
    if let Some((text, to_disk)) = sent {
        send(editor, shown, path, text, to_disk);
    }
}

/// What the editor gets (and whether the disk gets it too), or `None` to
/// leave a buffer with unsaved changes alone.
fn choose(
    hook: &ToolHook,
    shown: &str,
    before: &str,
    after: &str,
    buffer: String,
) -> Option<(String, bool)> {
    if buffer == before || buffer == after {
        return Some((after.to_string(), false));
    }
    let is_edit = hook.tool == "edit_file";
    let edited = is_edit.then(|| apply(&buffer, &hook.args)).flatten();
    match edited {
        Some(text) => {
            let to_disk = text != after;
            Some((text, to_disk))
        }
        None => {
            let why = if is_edit {
                " that the edit does not apply to"
            } else {
                ""
            };
            crate::log_warn(&format!(
                "{shown} has unsaved changes in the editor{why}; the editor was left alone and the file on disk has the change"
            ));
            None
        }
    }
}

/// edit_file's arguments that say what it replaces.
#[derive(Deserialize)]
struct EditArgs<'a> {
    old_string: &'a str,
    new_string: &'a str,
    #[serde(default)]
    replace_all: Option<bool>,
}

/// edit_file's replacement on `text`: `old_string` found exactly once (or
/// at least once with `replace_all`), literally.
pub fn apply(text: &str, args: &Value) -> Option<String> {
    let args = EditArgs::deserialize(args).ok()?;
    let (old, new) = (args.old_string, args.new_string);
    if old.is_empty() {
        return None;
    }
    let all = args.replace_all == Some(true);
    match text.matches(old).count() {
        0 => None,
        1 => Some(text.replacen(old, new, 1)),
        _ if all => Some(text.replace(old, new)),
        _ => None,
    }
}

fn send(editor: &Editor, shown: &str, path: PathBuf, text: String, to_disk: bool) {
    let asked = Asked::Write {
        path: path.clone(),
        content: text.clone(),
    };
    if let Err(e) = editor.ask(asked) {
        crate::log_warn(&format!(
            "the editor did not take the change to {shown} ({e}); the file on disk has it"
        ));
        return;
    }
    if !to_disk {
        return;
    }
    // In place (not a rename), so the file keeps its mode and owner and a
    // symlink stays one, as the tool left them.
    if let Err(e) = std::fs::write(&path, text) {
        crate::log_warn(&format!(
            "the editor has {shown} with its unsaved changes and the edit, but writing that to disk failed ({e}); save it from the editor"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_edit_applies_once_or_everywhere_with_replace_all() {
        let args = json!({"old_string": "a", "new_string": "b"});
        assert_eq!(apply("xay", &args).as_deref(), Some("xby"));
        assert_eq!(apply("xyz", &args), None);
        assert_eq!(apply("aa", &args), None, "two places without replace_all");
        let all = json!({"old_string": "a", "new_string": "b", "replace_all": true});
        assert_eq!(apply("aa", &all).as_deref(), Some("bb"));
        assert_eq!(
            apply("x", &json!({"old_string": "", "new_string": "b"})),
            None
        );
    }

    #[test]
    fn the_text_before_is_kept_for_files_up_to_a_megabyte() {
        let dir = std::env::temp_dir().join(format!("uji-acp-before-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let small = dir.join("small.txt");
        std::fs::write(&small, "x\n").unwrap();
        let big = dir.join("big.txt");
        std::fs::write(&big, vec![b'x'; (MAX_BYTES + 1) as usize]).unwrap();
        assert!(matches!(read_before(&small), Some(Before::Text(t)) if t == "x\n"));
        assert!(read_before(&big).is_none(), "too large to send");
        assert!(matches!(
            read_before(&dir.join("none")),
            Some(Before::Missing)
        ));
        assert!(read_before(&dir).is_none(), "not a file");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_text_before_an_edit_is_kept_by_the_link_of_the_running_frontend() {
        let dir = std::env::temp_dir().join(format!("uji-acp-link-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.txt"), "x\n").unwrap();
        let (tx, _loop) = futures::channel::mpsc::unbounded();
        let link = EditorLink::default();
        link.start(tx, true);
        link.set_cwd(&dir.to_string_lossy());
        // Another frontend's link, whose editor never said it reads files.
        let other = EditorLink::default();
        let payload = |session: &str| {
            json!({"event": "before_tool", "tool": "edit_file",
            "args": {"path": "a.txt", "old_string": "x", "new_string": "y"},
            "subject": "a.txt", "call_id": "c1", "session": session})
        };
        before_tool(&link, payload("parent"));
        before_tool(&other, payload("parent"));
        // A subagent's call of the same id, on a file that changed since.
        std::fs::write(dir.join("a.txt"), "z\n").unwrap();
        before_tool(&link, payload("child"));
        let hook = |session: &str| ToolHook::read(payload(session)).unwrap();
        assert!(matches!(link.befores.take(&hook("parent")), Some(Before::Text(t)) if t == "x\n"));
        assert!(matches!(link.befores.take(&hook("child")), Some(Before::Text(t)) if t == "z\n"));
        assert!(other.befores.take(&hook("parent")).is_none());
        link.stop();
        assert!(link.editor().is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn unsaved_changes_are_kept_or_the_buffer_is_left_alone() {
        let hook = |tool: &str, args| ToolHook {
            tool: tool.into(),
            call_id: "c1".into(),
            session: None,
            args,
            text: String::new(),
            is_error: false,
        };
        let edit = hook(
            "edit_file",
            json!({"old_string": "one", "new_string": "ONE"}),
        );
        // No unsaved changes: the disk's new text.
        assert_eq!(
            choose(&edit, "f", "one\n", "ONE\n", "one\n".into()),
            Some(("ONE\n".into(), false))
        );
        // Unsaved changes: the edit made in the buffer, to disk too.
        assert_eq!(
            choose(&edit, "f", "one\n", "ONE\n", "one\nmine\n".into()),
            Some(("ONE\nmine\n".into(), true))
        );
        // The edit does not apply to the buffer: left alone.
        assert_eq!(choose(&edit, "f", "one\n", "ONE\n", "mine\n".into()), None);
        let write = hook("write_file", json!({"content": "new\n"}));
        assert_eq!(choose(&write, "f", "old\n", "new\n", "mine\n".into()), None);
    }
}
