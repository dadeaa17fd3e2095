//! uji's frontend events as ACP updates, answers and permission questions.

use agent_client_protocol::v1::schema::RequestPermissionRequest;
use serde_json::{Value, json};
use uji_protocol::ApprovalMode;
use uji_protocol::frontend::answers::{
    self, Answer, CommandOutput, ModeSet, ModelList, ModelSet, SessionList,
};
use uji_protocol::frontend::{
    ApprovalDecision, CommandInfo, Event, GateDecision, ModelState, Op, SessionConfigured,
};
use uji_protocol::session::{MessageBody, StoredMessage};

use super::{Agent, Call, Flow, Pending, internal, reply, typed};
use crate::connection::Input;
use crate::editor_fs::Request;
use crate::{plan, updates};

/// A file larger than this is not shown whole in an edit's diff.
const DIFF_LIMIT: u64 = 1 << 20;

/// An ack's `result` as the answer its operation gives; an answer of
/// another shape is the editor's internal error, naming the operation.
fn decode<A: Answer>(result: Option<&Value>) -> Result<A, agent_client_protocol::Error> {
    answers::decode(result).map_err(|e| internal(e.to_string()))
}

/// What an `approval_request` asks, as the editor is asked it.
struct Asked<'a> {
    tool: &'a str,
    verb: &'a str,
    subject: &'a str,
    question: &'a str,
    answers: &'a [ApprovalDecision],
    labels: &'a std::collections::BTreeMap<String, String>,
}

impl Agent<'_> {
    /// Handles one event from uji.
    pub(super) fn event(&mut self, event: Event) -> Flow {
        match event {
            Event::SessionConfigured(configured) => self.configured_event(configured),
            Event::Ack { op_id, result } => self.ack(&op_id, result.as_ref()),
            Event::Error { op_id, message } => {
                self.op_error(op_id.as_deref().unwrap_or(""), &message);
            }
            Event::TurnStarted { .. } => self.turn_text.clear(),
            Event::Delta { text } => {
                self.turn_text.push_str(&text);
                self.update(updates::message_chunk(&text));
            }
            Event::Reasoning { text } => self.update(updates::thought_chunk(&text)),
            Event::ToolStarted {
                call_id,
                name,
                subject,
                verb,
                decision,
                ..
            } => self.tool_started(
                &call_id,
                &name,
                verb.as_deref().unwrap_or(""),
                &subject,
                decision == Some(GateDecision::Allow),
            ),
            Event::ApprovalRequest {
                call_id,
                tool,
                verb,
                subject,
                question,
                args,
                answers,
                labels,
                agent,
                ..
            } => {
                // A subagent's question names the agent asking.
                let verb = match agent {
                    Some(agent) => format!("{agent}: {verb}"),
                    None => verb,
                };
                let asked = Asked {
                    tool: &tool,
                    verb: &verb,
                    subject: &subject,
                    question: &question,
                    answers: &answers,
                    labels: &labels,
                };
                self.approval_request(call_id, asked, args)
            }
            Event::ApprovalResolved {
                call_id, decision, ..
            } => self.approval_resolved(&call_id, decision),
            Event::ToolFinished {
                call_id,
                summary,
                is_error,
                ..
            } => self.tool_finished(&call_id, summary.as_deref().unwrap_or(""), is_error),
            Event::Progress { call_id, line, .. } => self.progress(&call_id, &line),
            Event::Message { message } => self.message(&message),
            Event::Usage {
                context_used,
                context_window,
                ..
            } => self.update(updates::usage(context_used, context_window)),
            Event::ModeChanged { mode } => {
                self.mode = mode;
                self.update(updates::mode(self.mode()));
            }
            Event::Notice { text, .. } => crate::log_info(&format!("notice: {text:?}")),
            Event::StreamRetry { message, .. } => crate::log_info(&format!("notice: {message:?}")),
            Event::TurnFinished {
                error, interrupted, ..
            } => self.turn_finished(error.as_deref(), interrupted),
            Event::ModelChanged { model } => self.model_changed(model),
            Event::CommandsChanged { commands } => self.commands_changed(commands),
            Event::Dialog {
                dialog_id,
                kind,
                title,
                items,
                body,
                ..
            } => self.dialog(super::dialogs::Dialog {
                id: dialog_id,
                kind,
                title,
                items,
                body,
            }),
            Event::DialogResolved { dialog_id, .. } => self.dialog_resolved(&dialog_id),
            Event::Closed => return Flow::Done(Ok(())),
            // The rest is for frontends that draw more (jobs, the queue,
            // titles…); an event from a newer uji is skipped too.
            Event::Status { .. }
            | Event::QueueChanged { .. }
            | Event::TitleChanged { .. }
            | Event::Compacted { .. }
            | Event::JobStarted { .. }
            | Event::JobOutput { .. }
            | Event::JobFinished { .. }
            // A subagent's work shows as its call's progress lines.
            | Event::Subagent { .. }
            | Event::Unknown => {}
            // An editor's agent keeps running; its configuration is read
            // again when the editor starts the next `uji acp`.
            Event::Reload => {
                crate::log_info("reload asked for: uji acp reloads when the editor starts it again")
            }
        }
        Flow::Go
    }

    fn configured_event(&mut self, configured: Box<SessionConfigured>) {
        self.mode = configured.mode;
        self.configured = Some(configured);
        self.editor.set_cwd(&self.cwd());
        let listing = self.pending.values().any(|p| matches!(p, Pending::Models));
        if self.models.is_none()
            && !listing
            && let Err(e) = self.op(Some(Pending::Models), &Op::ListModels)
        {
            crate::log_warn(&format!("cannot list the models: {e}"));
            self.models = Some(Vec::new());
        }
        self.answer_initialize();
        let switch = self.pending.iter().find_map(|(op, p)| match p {
            Pending::NewSession(_) | Pending::Load(_) => Some(op.clone()),
            _ => None,
        });
        let Some(pending) = switch.and_then(|op| self.pending.remove(&op)) else {
            return;
        };
        let servers = std::mem::take(&mut self.mcp_after_switch);
        match pending {
            Pending::NewSession(r) => {
                self.after_switch(servers);
                reply(r, Ok(self.session_answer(true)));
            }
            Pending::Load(r) => {
                self.replay();
                self.after_switch(servers);
                reply(r, Ok(self.session_answer(false)));
            }
            _ => return,
        }
        self.flush_after_answer();
    }

    fn answer_initialize(&mut self) {
        if self.models.is_none() || self.configured.is_none() {
            return;
        }
        if let Some(r) = self.waiting_initialize.take() {
            reply(r, Ok(self.capabilities()));
        }
    }

    fn model_changed(&mut self, model: ModelState) {
        if let Some(configured) = self.configured.as_mut() {
            configured.model = Some(model);
        }
        if let Some(options) = self.config_options() {
            self.update(json!({"sessionUpdate": "config_option_update", "configOptions": options}));
        }
    }

    /// A command added mid-session: `/name` prompts run it from now on,
    /// and the editor's list shows it.
    fn commands_changed(&mut self, commands: Vec<CommandInfo>) {
        // Before the editor has the session (or while it switches), the
        // list goes with session/new's or session/load's answer instead.
        let switching = self
            .pending
            .values()
            .any(|p| matches!(p, Pending::NewSession(_) | Pending::Load(_)));
        let shown = !self.fresh && !switching;
        let Some(configured) = self.configured.as_mut() else {
            return;
        };
        configured.commands = commands;
        if shown {
            let update = updates::commands(&configured.commands);
            self.update(update);
        }
    }

    fn ack(&mut self, op: &str, result: Option<&Value>) {
        // A prompt is answered by turn_finished; new and load by session_configured.
        if let Some(Pending::Prompt(_) | Pending::NewSession(_) | Pending::Load(_)) =
            self.pending.get(op)
        {
            return;
        }
        let Some(pending) = self.pending.remove(op) else {
            return;
        };
        match pending {
            Pending::Prompt(_) | Pending::NewSession(_) | Pending::Load(_) => {}
            Pending::Command(r) => {
                self.prompt_op = None;
                match decode::<CommandOutput>(result) {
                    Ok(answer) => {
                        self.update(updates::message_chunk(&answer.output));
                        reply(r, Ok(json!({"stopReason": "end_turn"})));
                    }
                    Err(e) => reply(r, Err(e)),
                }
            }
            Pending::List(r, cwd) => reply(
                r,
                decode::<SessionList>(result)
                    .map(|list| crate::sessions::list(&list, cwd.as_deref())),
            ),
            Pending::Models => {
                // Without the list the session offers no model choice.
                let models = decode::<ModelList>(result).map(|l| l.models);
                self.models = Some(models.unwrap_or_else(|e| {
                    crate::log_warn(&format!("cannot list the models: {}", e.message));
                    Vec::new()
                }));
                self.answer_initialize();
            }
            Pending::SetModel(r) => match decode::<ModelSet>(result) {
                Ok(answer) => {
                    if let Some(configured) = self.configured.as_mut() {
                        configured.model = Some(answer.model);
                    }
                    let options = self.config_options().unwrap_or_default();
                    reply(r, Ok(json!({"configOptions": options})));
                }
                Err(e) => reply(r, Err(e)),
            },
            Pending::SetMode(r) => match decode::<ModeSet>(result) {
                Ok(_) => reply(r, Ok(json!({}))),
                Err(e) => reply(r, Err(e)),
            },
        }
    }

    fn op_error(&mut self, op: &str, message: &str) {
        let Some(pending) = self.pending.remove(op) else {
            crate::log_warn(&format!("uji refused {op}: {message}"));
            return;
        };
        if self.prompt_op.as_deref() == Some(op) {
            self.prompt_op = None;
        }
        let error = Err(internal(message));
        match pending {
            Pending::Prompt(r) | Pending::Command(r) => reply(r, error),
            Pending::NewSession(r) => reply(r, error),
            Pending::Load(r) => reply(r, error),
            Pending::List(r, _) => reply(r, error),
            Pending::SetMode(r) => reply(r, error),
            Pending::SetModel(r) => reply(r, error),
            Pending::Models => {
                self.models = Some(Vec::new());
                self.answer_initialize();
            }
        }
    }

    fn tool_started(
        &mut self,
        call_id: &str,
        tool: &str,
        verb: &str,
        subject: &str,
        allowed: bool,
    ) {
        let path = updates::touches_file(tool).then(|| updates::absolute(&self.cwd(), subject));
        let before = path
            .as_deref()
            .filter(|_| updates::kind(tool) == "edit")
            .and_then(read_small);
        self.calls.insert(
            call_id.to_string(),
            Call {
                tool: tool.to_string(),
                path,
                before,
            },
        );
        let cwd = self.cwd();
        self.update(updates::tool_call(call_id, tool, verb, subject, &cwd));
        if allowed {
            self.update(updates::status(call_id, "in_progress"));
        }
    }

    /// Asks the editor in a task of the connection, so the loop goes on
    /// (a cancel must still reach uji while the question is open).
    fn approval_request(&mut self, call_id: String, asked: Asked<'_>, args: Value) {
        let Asked {
            tool,
            verb,
            subject,
            question,
            answers,
            labels,
        } = asked;
        let mut tool_call = updates::tool_call(&call_id, tool, verb, subject, &self.cwd());
        tool_call["rawInput"] = args;
        // A question that is not about a call (`/undo`'s) names its answers
        // and says what it asks: the editor shows that as the title.
        if !labels.is_empty() && !question.is_empty() {
            tool_call["title"] = json!(question);
        }
        if let Some(obj) = tool_call.as_object_mut() {
            obj.remove("sessionUpdate");
        }
        let question = typed::<RequestPermissionRequest>(json!({
            "sessionId": self.session_id(),
            "toolCall": tool_call,
            "options": updates::permission_options(answers, labels),
        }));
        let question = match question {
            Ok(question) => question,
            Err(e) => return self.permission_answer(call_id, Err(e)),
        };
        self.asking.insert(call_id.clone());
        let (cx, tx) = (self.cx.clone(), self.tx.clone());
        let task = async move {
            let answer = cx.send_request(question).block_task().await;
            let _ = tx.unbounded_send(Input::Permission(call_id, answer));
            Ok(())
        };
        if let Err(e) = self.cx.spawn(task) {
            crate::log_warn(&format!("cannot ask the editor: {e}"));
        }
    }

    fn approval_resolved(&mut self, call_id: &str, decision: Option<ApprovalDecision>) {
        // A withdrawn or timed-out question no longer waits for the editor.
        self.asking.remove(call_id);
        let allowed = matches!(
            decision,
            Some(ApprovalDecision::AllowOnce | ApprovalDecision::AllowSession)
        );
        if allowed {
            self.update(updates::status(call_id, "in_progress"));
        }
    }

    fn tool_finished(&mut self, call_id: &str, summary: &str, is_error: bool) {
        let call = self.calls.remove(call_id);
        self.editor.befores.forget(call_id);
        let diff = call
            .filter(|c| !is_error && updates::kind(&c.tool) == "edit")
            .and_then(|c| {
                let path = c.path?;
                let after = read_small(&path)?;
                Some(updates::diff(&path, c.before.as_deref(), &after))
            });
        self.update(updates::finished(call_id, summary, is_error, diff));
    }

    /// A running command's latest line; other tools' progress is not shown
    /// (a `shell-…` call of the `shell` operation is not the editor's).
    fn progress(&mut self, call_id: &str, line: &str) {
        let running = self
            .calls
            .get(call_id)
            .is_some_and(|c| updates::kind(&c.tool) == "execute");
        if running {
            self.update(updates::progress(call_id, line));
        }
    }

    /// A command's saved result, which follows its `tool_finished`: its
    /// output for the editor to show under the call.
    fn message(&mut self, message: &StoredMessage) {
        let MessageBody::Tool {
            tool_call_id,
            name,
            content,
            is_error,
            summary,
            ..
        } = &message.body
        else {
            return;
        };
        if updates::kind(name) != "execute" {
            return;
        }
        let summary = summary.as_deref().unwrap_or("");
        self.update(updates::command_output(
            tool_call_id,
            summary,
            content,
            *is_error,
        ));
    }

    fn turn_finished(&mut self, error: Option<&str>, interrupted: bool) {
        if self.mode == ApprovalMode::Plan && error.is_none() {
            // Plan mode's answer is the plan: its steps go to the editor's
            // plan view too.
            let entries = plan::entries(&self.turn_text);
            if !entries.is_empty() {
                self.update(plan::update(&entries));
            }
        }
        let Some(op) = self.prompt_op.take() else {
            return;
        };
        let Some(Pending::Prompt(r)) = self.pending.remove(&op) else {
            return;
        };
        if let Some(error) = error {
            return reply(r, Err(internal(error)));
        }
        let reason = if interrupted { "cancelled" } else { "end_turn" };
        reply(r, Ok(json!({"stopReason": reason})));
    }

    /// Asks the editor for a file's text (its buffer, unsaved changes
    /// included) or to write one, in a task of the connection; the hook
    /// waiting gets the answer.
    pub(super) fn editor_ask(&mut self, ask: crate::editor_fs::Ask) {
        let request = ask.request(self.session_id());
        let cx = self.cx.clone();
        let task = async move {
            let answer = match request {
                Request::Read(read) => {
                    let answer = cx.send_request(read).block_task().await;
                    answer.map(|r| r.content)
                }
                Request::Write(write) => {
                    let answer = cx.send_request(write).block_task().await;
                    answer.map(|_| String::new())
                }
            };
            ask.answer(answer.map_err(|e| e.to_string()));
            Ok(())
        };
        if let Err(e) = self.cx.spawn(task) {
            crate::log_warn(&format!("cannot ask the editor about a file: {e}"));
        }
    }
}

/// A file's text for a diff, when it exists, is text and is not huge.
fn read_small(path: &str) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if meta.len() > DIFF_LIMIT {
        return None;
    }
    std::fs::read_to_string(path).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::ErrorCode;

    #[test]
    fn an_answer_of_another_shape_is_an_internal_error_naming_the_operation() {
        let error = decode::<SessionList>(Some(&json!({"sessions": 3}))).unwrap_err();
        assert_eq!(error.code, ErrorCode::INTERNAL_ERROR);
        assert!(error.message.contains("list_sessions"), "{error:?}");
        let output = decode::<CommandOutput>(None).unwrap();
        assert_eq!(output.output, "", "a command that printed nothing");
    }
}
