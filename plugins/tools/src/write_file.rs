//! `write_file`: create or overwrite a whole file, atomically.

use std::io::{self, Read};
use std::path::PathBuf;

use serde_json::{Value, json};
use uji_sdk::{FileDiff, SubjectKind, Tool, ToolCall, ToolContext, ToolOutput, ToolSpec};

use crate::args::{self, os_error, plural};
use crate::atomic::{self, Keep};
use crate::beneath::Beneath;
use crate::diff;

const NAME: &str = "write_file";
/// Existing files larger than this are replaced without a diff.
const MAX_DIFF_BYTES: u64 = 16 * 1024 * 1024;

const DESCRIPTION: &str = "Create a file, or replace the whole content of an existing one, \
with `content`. Missing parent directories are created. An existing file keeps its \
permissions; the content is written exactly as given (include the final newline you want). \
The result says whether the file was created or overwritten and how many lines it has. To \
change part of an existing file, prefer edit_file, which does not need the whole file \
repeated.";

/// The `write_file` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteFile;

impl Tool for WriteFile {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(NAME, DESCRIPTION)
            .subject_kind(SubjectKind::Path)
            .edits_files()
            .verb("Write")
            .question("Create or overwrite this file?")
            .parameters(json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "The file to write: absolute, relative to the working directory, or starting with ~/"
                    },
                    "content": {
                        "type": "string",
                        "description": "The complete new content of the file"
                    }
                },
                "required": ["path", "content"]
            }))
    }

    fn subject(&self, args: &Value) -> String {
        args::subject(args, "path", NAME)
    }

    fn preview(&self, call: &ToolCall) -> Option<FileDiff> {
        plan(call).ok()?.diff()
    }

    fn run(&self, call: ToolCall, _ctx: &ToolContext) -> ToolOutput {
        let plan = match plan(&call) {
            Ok(plan) => plan,
            Err(message) => return ToolOutput::error(message),
        };
        let write_error = |e: &io::Error| format!("write {}: {}", plan.shown, os_error(e));
        let keep = plan.existing.as_ref().map(|e| &e.keep);
        let beneath = Beneath::of(&call);
        if let Err(e) = atomic::write(&beneath, &plan.target, plan.content.as_bytes(), keep, true) {
            return ToolOutput::error(write_error(&e));
        }

        let lines = count_lines(plan.content);
        let verb = if plan.existing.is_some() {
            "overwrote"
        } else {
            "created"
        };
        let diff = plan.diff();
        ToolOutput {
            text: format!("{verb} {} ({})", plan.shown, plural(lines, "line")),
            diff,
            summary: Some(format!("Wrote {}", plural(lines, "line"))),
            ..Default::default()
        }
    }
}

struct Existing {
    keep: Keep,
    /// None when the file is too large to diff.
    content: Option<Vec<u8>>,
}

struct Plan<'a> {
    shown: &'a str,
    content: &'a str,
    target: PathBuf,
    existing: Option<Existing>,
}

impl Plan<'_> {
    /// What the write changes: a new file's diff is all of it, added
    /// (what the question, the transcript and /diff show); None for a file
    /// too large to diff.
    fn diff(&self) -> Option<FileDiff> {
        let old = match &self.existing {
            Some(existing) => existing.content.as_deref()?,
            None => &[],
        };
        Some(diff::file_diff(
            self.shown,
            old,
            self.content.as_bytes(),
            self.existing.is_none(),
        ))
    }
}

fn plan(call: &ToolCall) -> Result<Plan<'_>, String> {
    let map = args::object(&call.args)?;
    let shown = args::non_blank_str(map, "path")?;
    let content = args::string(map, "content")?;
    let full = args::resolve(&call.cwd, shown);
    let target = atomic::write_target(&full);
    let opened = Beneath::of(call)
        .open_read(&target)
        .and_then(|file| Ok((file.metadata()?, file)));
    let existing = match opened {
        Ok((meta, file)) => {
            if meta.is_dir() {
                return Err(format!("{shown} is a directory, not a file"));
            }
            if !meta.is_file() {
                return Err(format!("{shown} is not a regular file"));
            }
            if meta.permissions().readonly() {
                return Err(format!("{shown} is read-only"));
            }
            let content = if meta.len() <= MAX_DIFF_BYTES {
                // Sized up front: growing by doubling would briefly hold
                // half again the file.
                let mut old = Vec::with_capacity(meta.len() as usize + 1);
                file.take(MAX_DIFF_BYTES + 1)
                    .read_to_end(&mut old)
                    .map_err(|e| format!("read {shown}: {}", os_error(&e)))?;
                (old.len() as u64 <= MAX_DIFF_BYTES).then_some(old)
            } else {
                None
            };
            Some(Existing {
                keep: Keep::from_metadata(&meta),
                content,
            })
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("write {shown}: {}", os_error(&e))),
    };
    Ok(Plan {
        shown,
        content,
        target,
        existing,
    })
}

/// Newlines, plus one for a last line without one.
pub(crate) fn count_lines(content: &str) -> usize {
    let newlines = memchr::memchr_iter(b'\n', content.as_bytes()).count();
    newlines + usize::from(!content.is_empty() && !content.ends_with('\n'))
}
