//! `edit_file`: exact literal replacement, written atomically.

use std::io::{self, Read};
use std::path::PathBuf;

use serde_json::{Value, json};
use uji_sdk::{FileDiff, SubjectKind, Tool, ToolCall, ToolContext, ToolOutput, ToolSpec};

use crate::args::{self, os_error};
use crate::atomic::{self, Keep};
use crate::beneath::Beneath;
use crate::diff;

const NAME: &str = "edit_file";
/// Larger files are refused: the whole file is held in memory.
pub(crate) const MAX_EDIT_BYTES: u64 = 64 * 1024 * 1024;

const DESCRIPTION: &str = "Edit an existing file by replacing an exact piece of text. \
`old_string` must match the file exactly, character for character, including whitespace and \
indentation, and without the line-number prefixes read_file shows; read the file first. It \
must occur exactly once unless `replace_all` is true: when it matches several places, add a \
few surrounding lines to make it unique. `new_string` replaces it (an empty `new_string` \
deletes it). The file keeps its line endings (LF or CRLF), its permissions and its final \
newline or lack of one. The result names the line of the change. To create a file or \
rewrite most of one, use write_file instead.";

/// The `edit_file` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct EditFile;

impl Tool for EditFile {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(NAME, DESCRIPTION)
            .subject_kind(SubjectKind::Path)
            .edits_files()
            .verb("Update")
            .question("Edit this file?")
            .parameters(json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "The file to edit: absolute, relative to the working directory, or starting with ~/"
                    },
                    "old_string": {
                        "type": "string",
                        "description": "The exact text to replace, copied from the file without line-number prefixes"
                    },
                    "new_string": {
                        "type": "string",
                        "description": "The replacement text (empty to delete old_string)"
                    },
                    "replace_all": {
                        "type": "boolean",
                        "description": "Replace every occurrence instead of requiring exactly one (default false)"
                    }
                },
                "required": ["path", "old_string", "new_string"]
            }))
    }

    fn subject(&self, args: &Value) -> String {
        args::subject(args, "path", NAME)
    }

    fn preview(&self, call: &ToolCall) -> Option<FileDiff> {
        plan(call).ok().map(|plan| plan.diff())
    }

    fn run(&self, call: ToolCall, _ctx: &ToolContext) -> ToolOutput {
        let plan = match plan(&call) {
            Ok(plan) => plan,
            Err(message) => return ToolOutput::error(message),
        };
        let beneath = Beneath::of(&call);
        if let Err(e) = atomic::write(&beneath, &plan.target, &plan.new, Some(&plan.keep), false) {
            return ToolOutput::error(format!("write {}: {}", plan.shown, os_error(&e)));
        }
        let diff = plan.diff();
        ToolOutput {
            summary: Some(diff::summary(&diff)),
            text: plan.message,
            diff: Some(diff),
            ..Default::default()
        }
    }
}

/// Everything an edit would do, computed without touching the disk.
struct Plan {
    shown: String,
    target: PathBuf,
    keep: Keep,
    old: Vec<u8>,
    new: Vec<u8>,
    /// What was replaced with what (in the file's line endings).
    needle: String,
    replacement: String,
    /// How many places.
    count: usize,
    message: String,
}

impl Plan {
    /// The diff of the replacements themselves: no line table of either
    /// file, however many places changed.
    fn diff(&self) -> FileDiff {
        let (needle, replacement) = (self.needle.len(), self.replacement.len());
        let step = replacement as isize - needle as isize;
        // keep_final_newline may have changed the last bytes: the last
        // change then runs to both ends.
        let expected = self
            .old
            .len()
            .saturating_add_signed(step.saturating_mul(self.count as isize));
        let to_the_end = expected != self.new.len();
        let mut shift = 0isize;
        let mut sites = memchr::memmem::find_iter(&self.old, self.needle.as_bytes()).peekable();
        let changes = std::iter::from_fn(|| {
            let pos = sites.next()?;
            let at = pos.saturating_add_signed(shift);
            shift += step;
            let mut change = diff::Change {
                old: pos..pos + needle,
                new: at..at + replacement,
            };
            if to_the_end && sites.peek().is_none() {
                // A popped newline may reach before the replacement.
                let back = at.saturating_sub(self.new.len());
                change = diff::Change {
                    old: pos.saturating_sub(back)..self.old.len(),
                    new: at - back..self.new.len(),
                };
            }
            Some(change)
        });
        diff::changes_diff(&self.shown, &self.old, &self.new, false, changes)
    }
}

fn plan(call: &ToolCall) -> Result<Plan, String> {
    let map = args::object(&call.args)?;
    let shown = args::non_blank_str(map, "path")?;
    let old_string = args::non_empty_str(map, "old_string")?;
    let new_string = args::string(map, "new_string")?;
    let replace_all = args::optional_bool(map, "replace_all")?.unwrap_or(false);
    if old_string == new_string {
        return Err("old_string and new_string are identical".to_string());
    }

    let full = args::resolve(&call.cwd, shown);
    let target = atomic::write_target(&full);
    let mut file = Beneath::of(call).open_read(&target).map_err(|e| {
        if e.kind() == io::ErrorKind::NotFound {
            format!("{shown} does not exist; use write_file to create a new file")
        } else {
            format!("read {shown}: {}", os_error(&e))
        }
    })?;
    let meta = file
        .metadata()
        .map_err(|e| format!("read {shown}: {}", os_error(&e)))?;
    if meta.is_dir() {
        return Err(format!("{shown} is a directory, not a file"));
    }
    if !meta.is_file() {
        return Err(format!("{shown} is not a regular file"));
    }
    if meta.len() > MAX_EDIT_BYTES {
        return Err(format!(
            "{shown} is {:.1} MB; edit_file handles files up to 64 MB",
            meta.len() as f64 / (1024.0 * 1024.0)
        ));
    }
    if meta.permissions().readonly() {
        return Err(format!("{shown} is read-only"));
    }
    let mut old = Vec::with_capacity(meta.len() as usize + 1);
    file.read_to_end(&mut old)
        .map_err(|e| format!("read {shown}: {}", os_error(&e)))?;

    let crlf = uses_crlf(&old);
    let Some((needle, replacement, count, first)) = find(&old, old_string, new_string, crlf) else {
        return Err(format!(
            "old_string was not found in {shown}. Read the file again and copy the snippet exactly, without line-number prefixes."
        ));
    };
    if count > 1 && !replace_all {
        return Err(format!(
            "old_string matches {count} places in {shown}. Add surrounding lines to make it unique, or pass replace_all: true."
        ));
    }

    let grown = count.saturating_mul(replacement.len().saturating_sub(needle.len()));
    // Sized up front (plus room for a final newline): growing by doubling
    // would briefly hold half again the file.
    let mut new = Vec::with_capacity(old.len().saturating_add(grown).saturating_add(2));
    let mut at = 0;
    for pos in memchr::memmem::find_iter(&old, needle.as_bytes()) {
        new.extend_from_slice(&old[at..pos]);
        new.extend_from_slice(replacement.as_bytes());
        at = pos + needle.len();
    }
    new.extend_from_slice(&old[at..]);
    keep_final_newline(&old, &mut new, crlf);

    let message = if count == 1 {
        let line = 1 + memchr::memchr_iter(b'\n', &old[..first]).count();
        format!("edited {shown} at line {line}")
    } else {
        format!("edited {shown}: replaced {count} occurrences")
    };
    Ok(Plan {
        shown: shown.to_string(),
        target,
        keep: Keep::from_metadata(&meta),
        old,
        new,
        needle,
        replacement,
        count,
        message,
    })
}

/// True when the file's first line ends with CRLF.
fn uses_crlf(content: &[u8]) -> bool {
    match memchr::memchr(b'\n', content) {
        Some(i) => i > 0 && content[i - 1] == b'\r',
        None => false,
    }
}

fn to_lf(s: &str) -> String {
    s.replace("\r\n", "\n")
}

fn to_crlf(s: &str) -> String {
    to_lf(s).replace('\n', "\r\n")
}

/// Finds `old` in `content`, in the file's line-ending style first (a CRLF
/// file matches an `old` written with bare LF), then literally. Returns the
/// needle and replacement used, how many non-overlapping matches there are
/// and where the first starts.
fn find(
    content: &[u8],
    old: &str,
    new: &str,
    crlf: bool,
) -> Option<(String, String, usize, usize)> {
    let mut candidates: Vec<(String, String)> = Vec::with_capacity(2);
    if crlf {
        candidates.push((to_crlf(old), to_crlf(new)));
        candidates.push((old.to_string(), new.to_string()));
    } else {
        candidates.push((old.to_string(), new.to_string()));
        candidates.push((to_lf(old), to_lf(new)));
    }
    let mut tried: Vec<String> = Vec::new();
    for (needle, replacement) in candidates {
        if needle.is_empty() || tried.contains(&needle) {
            continue;
        }
        let mut matches = memchr::memmem::find_iter(content, needle.as_bytes());
        if let Some(first) = matches.next() {
            let count = 1 + matches.count();
            return Some((needle, replacement, count, first));
        }
        tried.push(needle);
    }
    None
}

/// Keeps the file's final newline, or its lack of one, when a replacement at
/// the very end would change it.
fn keep_final_newline(old: &[u8], new: &mut Vec<u8>, crlf: bool) {
    let had = old.ends_with(b"\n");
    let has = new.ends_with(b"\n");
    if had && !has && !new.is_empty() {
        if crlf {
            new.extend_from_slice(b"\r\n");
        } else {
            new.push(b'\n');
        }
    } else if !had && has {
        new.pop();
        if crlf && new.ends_with(b"\r") {
            new.pop();
        }
    }
}
