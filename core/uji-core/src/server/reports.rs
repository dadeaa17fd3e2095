//! What `/status`, `/diff` and `/export` report: read from the session's
//! snapshot, the gate's settings and the saved messages, never from the
//! agent itself (it may be busy with a turn).

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use uji_protocol::services::{ChildEnv, ToolSandbox};
use uji_protocol::session::{MessageBody, StoredMessage};

use super::{Shared, label_of};
use crate::session::service::SHORT_ID;

/// Most bytes of `git diff` `/diff` shows.
const MAX_DIFF_BYTES: usize = 256 * 1024;

impl Shared {
    /// `/status`: model, directory, session, context, tokens, sandbox,
    /// approval mode and MCP servers, one per line.
    pub(super) fn status_report(&self) -> String {
        let snapshot = self.snapshot.borrow().clone();
        let chosen = self.control.model();
        let mut model = label_of(&chosen.model);
        if model.is_empty() {
            model = "none set up (/login, then /model)".to_string();
        }
        if let Some(effort) = &chosen.effort {
            let _ = write!(model, " · effort {effort}");
        }
        let window = chosen.model.as_ref().map_or(0, |m| m.model.context_window);
        let context = match (snapshot.context_used * 100).checked_div(window) {
            Some(percent) => format!(
                "{percent}% of {}k ({} tokens in the last request)",
                window / 1000,
                snapshot.context_used
            ),
            None => format!("{} tokens in the last request", snapshot.context_used),
        };
        let usage = snapshot.usage;
        let title = if snapshot.title.is_empty() {
            "untitled"
        } else {
            &snapshot.title
        };
        let sandbox = self.sessions.gate.sandbox(ToolSandbox::default());
        let sandbox = match sandbox.mode {
            Some(mode) => format!("{} for every command", mode.as_str()),
            None => "workspace-write (a command you allow once in its question runs without)"
                .to_string(),
        } + &format!(", network {}", sandbox.network.describe());
        let rows = [
            ("model", model),
            ("directory", snapshot.cwd.clone()),
            ("session", format!("{} ({title})", snapshot.id)),
            ("context", context),
            (
                "tokens",
                format!(
                    "{} in, {} out, {} read from cache, {} written to cache",
                    usage.input, usage.output, usage.cache_read, usage.cache_write
                ),
            ),
            (
                "cost",
                match snapshot.cost {
                    Some(micros) => format!(
                        "${:.4} so far in this run, at the models' prices",
                        micros as f64 / 1e6
                    ),
                    None => {
                        "not known: a model this run used has no price (docs/providers.md#prices)"
                            .to_string()
                    }
                },
            ),
            ("sandbox", sandbox),
            ("mode", self.sessions.gate.mode().as_str().to_string()),
            ("mcp", self.mcp_servers()),
        ];
        rows.iter()
            .map(|(name, value)| format!("{name:<10} {value}"))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// What the MCP plugin's `/mcp` says, or why there is nothing.
    fn mcp_servers(&self) -> String {
        let Some(command) = self.sessions.registry.command("mcp") else {
            return "none (the mcp plugin is not loaded)".to_string();
        };
        match command.run("") {
            Ok(text) if text.trim().is_empty() => "none configured".to_string(),
            Ok(text) => text.trim().replace('\n', "\n           "),
            Err(e) => format!("unknown: {e}"),
        }
    }

    /// `/diff`: `git diff` of the workspace (and its untracked files) when
    /// it is a repository, else the diffs of this session's edits and
    /// writes.
    pub(super) fn diff_report(&self) -> Result<String, String> {
        let cwd = self.sessions.cwd().to_path_buf();
        let env =
            crate::gate::child_env::child_env(&self.sessions.registry, &self.sessions.providers);
        if let Some(diff) = git_diff(&cwd, &env) {
            return Ok(diff);
        }
        let id = self.snapshot.borrow().id.clone();
        let messages = self
            .sessions
            .messages(&id)
            .map_err(|e| format!("cannot read this session: {e}"))?;
        let diffs: Vec<&str> = messages
            .iter()
            .filter_map(|m| match &m.body {
                MessageBody::Tool {
                    diff: Some(diff), ..
                } => Some(diff.unified.as_str()),
                _ => None,
            })
            .collect();
        if diffs.is_empty() {
            return Ok(
                "this session changed no file (and this directory is no git repository)"
                    .to_string(),
            );
        }
        Ok(diffs.join("\n"))
    }

    /// `/export [file]`: the conversation as Markdown, into `file` (relative
    /// to the session's directory) or `uji-<short id>.md`; never over an
    /// existing file. Answers where it went.
    pub(super) fn export(&self, file: &str) -> Result<String, String> {
        let snapshot = self.snapshot.borrow().clone();
        let messages = self
            .sessions
            .messages(&snapshot.id)
            .map_err(|e| format!("cannot read this session: {e}"))?;
        let short: String = snapshot.id.chars().take(SHORT_ID).collect();
        let name = if file.is_empty() {
            format!("uji-{short}.md")
        } else {
            file.to_string()
        };
        let path = self.sessions.cwd().join(uji_policy::expand_home(&name));
        let title = if snapshot.title.is_empty() {
            "uji session".to_string()
        } else {
            snapshot.title.clone()
        };
        write_new(&path, &markdown(&title, &snapshot.id, &messages))?;
        Ok(format!("saved the conversation to {}", path.display()))
    }
}

/// Writes `text` to `path`, which must not exist yet (nothing of the
/// user's is overwritten).
fn write_new(path: &Path, text: &str) -> Result<(), String> {
    use std::io::Write as _;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => format!(
                "{} exists already; give another name: /export FILE",
                path.display()
            ),
            _ => format!("cannot write {}: {e}", path.display()),
        })?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The conversation as Markdown: the user's and the model's words, each
/// tool call with its subject and result, `!` commands with their output.
/// Hidden messages, reasoning and compaction summaries are left out.
pub(crate) fn markdown(title: &str, id: &str, messages: &[StoredMessage]) -> String {
    let mut out = format!("# {title}\n\nuji session `{id}`\n");
    for message in messages {
        match &message.body {
            MessageBody::User {
                text,
                hidden: false,
                ..
            } => {
                let _ = write!(out, "\n## You\n\n{}\n", text.trim_end());
            }
            MessageBody::Assistant {
                text, tool_calls, ..
            } => {
                if !text.trim().is_empty() {
                    let _ = write!(out, "\n## uji\n\n{}\n", text.trim_end());
                }
                for call in tool_calls {
                    let _ = write!(out, "\n**{}** `{}`\n", call.name, call.arguments);
                }
            }
            MessageBody::Tool {
                name,
                content,
                is_error,
                ..
            } => {
                let status = if *is_error { " (failed)" } else { "" };
                let _ = write!(out, "\n{name}{status}:\n\n{}\n", fenced(content));
            }
            MessageBody::Shell {
                command, output, ..
            } => {
                let _ = write!(out, "\n`!{command}`\n\n{}\n", fenced(output));
            }
            MessageBody::Error { text } => {
                let _ = write!(out, "\n> {}\n", text.trim_end());
            }
            MessageBody::User { .. } | MessageBody::Compaction { .. } => {}
        }
    }
    out
}

/// `text` in a code fence longer than any run of backticks inside it.
fn fenced(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}\n{}\n{fence}", text.trim_end())
}

/// `git diff` against HEAD and the untracked files of the repository at
/// `cwd`, git inheriting what `env` lets a child have (no keys); `None`
/// when `cwd` is no git work tree (or git is missing).
fn git_diff(cwd: &Path, env: &ChildEnv) -> Option<String> {
    let git = |args: &[&str]| -> Option<String> {
        let mut command = Command::new("git");
        command
            .arg("-C")
            .arg(cwd)
            .args(args)
            .stdin(Stdio::null())
            .stderr(Stdio::null());
        env.apply(&mut command);
        let output = command.output().ok()?;
        output
            .status
            .success()
            .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
    };
    let inside = git(&["rev-parse", "--is-inside-work-tree"])?;
    if inside.trim() != "true" {
        return None;
    }
    let mut diff = git(&["--no-pager", "diff", "--no-color", "--no-ext-diff", "HEAD"])
        .or_else(|| git(&["--no-pager", "diff", "--no-color", "--no-ext-diff"]))
        .unwrap_or_default();
    let untracked = git(&["ls-files", "--others", "--exclude-standard"]).unwrap_or_default();
    for file in untracked.lines().filter(|l| !l.is_empty()) {
        let _ = write!(diff, "\nnew file, not tracked yet: {file}\n");
    }
    if diff.len() > MAX_DIFF_BYTES {
        let mut end = MAX_DIFF_BYTES;
        while !diff.is_char_boundary(end) {
            end -= 1;
        }
        diff.truncate(end);
        diff.push_str("\n… (cut: run git diff for the rest)\n");
    }
    if diff.trim().is_empty() {
        return Some("no changes: the work tree matches HEAD".to_string());
    }
    Some(diff)
}

#[cfg(test)]
mod tests {
    use super::*;
    use uji_protocol::wire::ToolCallRequest;

    fn message(body: MessageBody) -> StoredMessage {
        StoredMessage {
            seq: 0,
            time: 0,
            body,
        }
    }

    #[test]
    fn the_export_keeps_words_calls_and_results_and_leaves_hidden_text_out() {
        let messages = [
            message(MessageBody::User {
                text: "fix it".into(),
                images: vec![],
                hidden: false,
            }),
            message(MessageBody::User {
                text: "a nudge".into(),
                images: vec![],
                hidden: true,
            }),
            message(MessageBody::Assistant {
                text: "Looking.".into(),
                reasoning: Some("secret thoughts".into()),
                tool_calls: vec![ToolCallRequest {
                    id: "c1".into(),
                    name: "read_file".into(),
                    arguments: "{\"path\":\"a.rs\"}".into(),
                }],
                usage: None,
                model: None,
                effort: None,
                replay: None,
            }),
            message(MessageBody::Tool {
                tool_call_id: "c1".into(),
                name: "read_file".into(),
                content: "has ``` inside".into(),
                is_error: false,
                images: vec![],
                summary: None,
                diff: None,
                subject: None,
                error_kind: None,
            }),
        ];
        let text = markdown("Fixing", "abc", &messages);
        assert!(
            text.starts_with("# Fixing\n\nuji session `abc`\n"),
            "{text}"
        );
        assert!(text.contains("## You\n\nfix it\n"), "{text}");
        assert!(text.contains("## uji\n\nLooking.\n"), "{text}");
        assert!(
            text.contains("**read_file** `{\"path\":\"a.rs\"}`"),
            "{text}"
        );
        assert!(text.contains("````\nhas ``` inside\n````"), "{text}");
        assert!(
            !text.contains("a nudge") && !text.contains("secret"),
            "{text}"
        );
    }
}
