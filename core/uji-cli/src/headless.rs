//! The headless frontend: what `uji run` shows. Compiled into the binary so
//! scripts and CI never depend on a plugin loading, yet registered through
//! the same Frontend interface as any other frontend.
//!
//! Text mode prints the final answer on stdout and what happens on stderr.
//! `--json` prints one JSON object per line on stdout: the versioned schema
//! documented in docs/headless.md.

use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::time::Duration;

use serde_json::Value;
use uji_host::PluginModuleRef;
use uji_protocol::frontend::{DialogAnswer, DialogKind, Event, GateDecision, NoticeLevel, Op};
use uji_protocol::session::{MessageBody, StoredMessage};
use uji_sdk::{Frontend, FrontendSession, Host, Plugin};

use crate::out::{WriteError, say, write_to};

/// Config key: print JSON events instead of text.
pub const JSON_KEY: &str = "headless.json";

/// Config key: this run works for another session (`--parent`): its
/// `--json` stream also says which tool runs and what was used so far
/// (`tool`, `usage`), as a subagent's lines do.
pub const CHILD_KEY: &str = "headless.child";

/// How long one wait for an event lasts before the loop looks again.
const POLL: Duration = Duration::from_millis(250);

pub struct HeadlessPlugin;

impl Plugin for HeadlessPlugin {
    const NAME: &'static str = "headless";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const DESCRIPTION: &'static str = "The frontend of `uji run`: text or JSON lines, no screen";

    fn init(host: &Host) -> Result<(), String> {
        host.register_frontend("headless", Headless { host: host.clone() })
    }
}

/// The plugins linked into the executable.
pub fn builtins() -> Vec<(PluginModuleRef, &'static str)> {
    vec![(uji_sdk::in_process_module::<HeadlessPlugin>(), "(built in)")]
}

struct Headless {
    host: Host,
}

/// `--json`: the frontend protocol's events mapped to the stable schema
/// (`child`: a subagent's run, `--parent`, with `tool` and `usage` lines).
fn json_line(out: &mut impl Write, event: &Event, child: bool) -> Result<(), WriteError> {
    // The writer keeps each line's keys in the order the schema has
    // always printed them, whichever serde_json features the build unifies.
    match uji_protocol::headless::encode(event, child) {
        Some(Ok(json)) => write_to(out, &format!("{json}\n")),
        Some(Err(e)) => Err(WriteError::Failed(format!(
            "cannot encode a --json line: {e}"
        ))),
        None => Ok(()),
    }
}

/// A tool call as `tool_started` announced it.
struct Started<'a> {
    call_id: &'a str,
    name: &'a str,
    subject: &'a str,
    verb: Option<&'a str>,
    /// The gate's reason, when it denied the call.
    denied_because: Option<&'a str>,
}

/// Text mode: the answer on stdout, what happens on stderr.
#[derive(Default)]
struct TextMode {
    /// Each call (`run_command ls`) by id, with the reason the gate gave
    /// when it denied the call, for the line saying so.
    calls: HashMap<String, (String, Option<String>)>,
}

impl TextMode {
    fn line(&mut self, out: &mut impl Write, event: &Event) -> Result<(), WriteError> {
        match event {
            Event::ToolStarted {
                call_id,
                name,
                subject,
                verb,
                decision,
                because,
            } => {
                let denied = *decision == Some(GateDecision::Deny);
                self.started(Started {
                    call_id,
                    name,
                    subject,
                    verb: verb.as_deref(),
                    denied_because: denied.then(|| because.as_deref().unwrap_or_default()),
                });
            }
            Event::Message { message } => self.denied(message),
            Event::Notice {
                text,
                level,
                source,
            } => {
                // As `uji tool list` prints them: `uji: lua: error: …`.
                let level = if *level == NoticeLevel::Error {
                    "error: "
                } else {
                    ""
                };
                let source = source
                    .as_deref()
                    .map(|s| format!("{s}: "))
                    .unwrap_or_default();
                say!("uji: {source}{level}{text}");
            }
            Event::StreamRetry { message, .. } => say!("uji: {message}"),
            Event::Compacted { messages, .. } => {
                say!("uji: {}", uji_protocol::headless::compacted_text(*messages))
            }
            Event::TurnFinished {
                text: Some(text), ..
            } => write_to(out, &format!("{}\n", text.trim_end_matches('\n')))?,
            _ => {}
        }
        Ok(())
    }

    /// A call the gate let through (or asks about) is shown as it starts;
    /// a denied one only once its result comes.
    fn started(&mut self, call: Started) {
        if call.denied_because.is_none() {
            let verb = call.verb.unwrap_or(call.name);
            say!("uji: {verb} {}", call.subject);
        }
        let shown = format!("{} {}", call.name, call.subject);
        let because = call.denied_because.map(str::to_string);
        self.calls
            .insert(call.call_id.to_string(), (shown, because));
    }

    /// A tool result the gate refused: `uji: denied run_command rm -rf /:
    /// deny rule … matched`, the rule that denied it or else the result's
    /// reason (an ask nobody could answer, a hook's denial).
    fn denied(&mut self, message: &StoredMessage) {
        let MessageBody::Tool {
            tool_call_id,
            name,
            content,
            ..
        } = &message.body
        else {
            return;
        };
        let Some(reason) = content.strip_prefix("denied: ") else {
            return;
        };
        let (call, because) = self
            .calls
            .remove(tool_call_id)
            .unwrap_or_else(|| (name.clone(), None));
        let why = because
            .filter(|b| !b.is_empty())
            .unwrap_or_else(|| reason.lines().next().unwrap_or_default().to_string());
        say!("uji: denied {call}: {why}");
    }
}

/// What `uji run` does with a plugin's dialog, as nobody can answer it: a
/// confirm is answered no (the safe default), anything else is refused
/// and the plugin gets an error. The operation, and the notice saying so.
fn dialog_default(kind: DialogKind, title: &str, dialog_id: &str) -> (Op, String) {
    let dialog_id = dialog_id.to_string();
    if kind == DialogKind::Confirm {
        let op = Op::AnswerDialog {
            dialog_id,
            answer: DialogAnswer::Confirmed { yes: false },
        };
        let notice =
            format!("a plugin asked to confirm {title:?}; uji run cannot ask, so the answer is no");
        return (op, notice);
    }
    let kind = kind.as_str();
    let reason = format!(
        "uji run cannot show dialogs ({kind} {title:?}); run it in the screen (`uji`), or give the plugin what it asks for another way"
    );
    let notice =
        format!("a plugin's {kind} dialog {title:?} was refused: uji run cannot show dialogs");
    (Op::RefuseDialog { dialog_id, reason }, notice)
}

/// Answers a dialog as [`dialog_default`] says; the notice to show, and the
/// id of the operation (its error, if the dialog has gone meanwhile, is not
/// the run's).
fn answer_dialog(session: &FrontendSession, event: &Event) -> Option<(Event, Option<String>)> {
    let Event::Dialog {
        dialog_id,
        kind,
        title,
        ..
    } = event
    else {
        return None;
    };
    let (op, text) = dialog_default(*kind, title, dialog_id);
    let sent = session
        .submit(&op)
        .map_err(|e| tracing::debug!("dialog answer not sent: {e}"))
        .ok();
    Some((Event::notice(NoticeLevel::Warn, text), sent))
}

/// Asks the session to end; `closed` follows. A session that has already
/// ended needs no asking: the next read says so and the frontend returns.
fn shut_down(session: &FrontendSession) {
    if let Err(e) = session.submit(&Op::Shutdown) {
        tracing::debug!("shutdown not sent: {e}");
    }
}

impl Frontend for Headless {
    fn run(&self, session: FrontendSession) -> Result<(), String> {
        let as_json = self.host.config(JSON_KEY) == Some(Value::Bool(true));
        let child = self.host.config(CHILD_KEY) == Some(Value::Bool(true));
        let stdout = std::io::stdout();
        let mut out = stdout.lock();
        let mut text = TextMode::default();
        // Once stdout's reader has gone nothing more is printed: the
        // session shuts down (interrupting the turn) and uji exits quietly.
        let mut closed = false;
        // Dialogs get a default answer here (docs/headless.md).
        let hello = session.submit(&Op::Hello { dialogs: true });
        let mut ours: HashSet<String> = hello.into_iter().collect();
        loop {
            // An error means the session has ended: nothing more to show.
            let event = match session.next_event(POLL) {
                Ok(Some(event)) => event,
                Ok(None) => continue,
                Err(_) => return Ok(()),
            };
            match &event {
                Event::Closed => return Ok(()),
                _ if closed => continue,
                Event::Error {
                    op_id: Some(op_id), ..
                } if ours.remove(op_id) => {
                    // A dialog that ended before its answer came.
                    continue;
                }
                Event::Ack { op_id, .. } => {
                    ours.remove(op_id);
                }
                Event::Error { message, .. } => {
                    // An operation failed (the prompt could not start a
                    // turn): nothing more will come of this run.
                    say!("uji: error: {message}");
                    shut_down(&session);
                    continue;
                }
                _ => {}
            }
            let event = match answer_dialog(&session, &event) {
                Some((notice, sent)) => {
                    ours.extend(sent);
                    notice
                }
                None => event,
            };
            let written = if as_json {
                json_line(&mut out, &event, child)
            } else {
                text.line(&mut out, &event)
            };
            match written {
                Ok(()) => {}
                Err(WriteError::Closed) => closed = true,
                Err(WriteError::Failed(message)) => return Err(message),
            }
            if closed || matches!(event, Event::TurnFinished { .. }) {
                shut_down(&session);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn a_confirm_in_uji_run_is_answered_no_and_says_so() {
        let (op, notice) = dialog_default(DialogKind::Confirm, "Push?", "dialog-1");
        assert_eq!(
            op,
            Op::AnswerDialog {
                dialog_id: "dialog-1".into(),
                answer: DialogAnswer::Confirmed { yes: false }
            }
        );
        assert!(notice.contains("the answer is no"), "{notice}");
    }

    #[test]
    fn a_select_or_prompt_in_uji_run_is_refused_with_the_reason_the_plugin_reads() {
        for kind in [DialogKind::Select, DialogKind::Prompt, DialogKind::Unknown] {
            let (op, notice) = dialog_default(kind, "Branch", "dialog-2");
            let Op::RefuseDialog { dialog_id, reason } = op else {
                panic!("{kind:?} is not refused");
            };
            assert_eq!(dialog_id, "dialog-2");
            let expected = format!("uji run cannot show dialogs ({} \"Branch\")", kind.as_str());
            assert!(reason.starts_with(&expected), "{reason}");
            assert!(notice.contains("was refused"), "{notice}");
        }
    }

    #[test]
    fn the_json_stream_shows_a_refused_dialog_as_a_notice_line() {
        let (_, text) = dialog_default(DialogKind::Select, "Branch", "dialog-3");
        let event = Event::notice(NoticeLevel::Warn, text);
        let mut out = Vec::new();
        json_line(&mut out, &event, false).unwrap();
        let line: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(line["type"], "notice");
        assert!(line["text"].as_str().unwrap().contains("Branch"));
    }
}
