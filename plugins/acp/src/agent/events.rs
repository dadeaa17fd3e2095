//! uji's frontend events as ACP updates, answers and permission questions.

use agent_client_protocol::v1::schema::RequestPermissionRequest;
use serde_json::{Value, json};

use super::{Agent, Call, Flow, Pending, internal, reply, typed};
use crate::connection::Input;
use crate::editor_fs::Request;
use crate::{plan, updates};

/// A file larger than this is not shown whole in an edit's diff.
const DIFF_LIMIT: u64 = 1 << 20;

impl Agent<'_> {
    /// Handles one event from uji.
    pub(super) fn event(&mut self, event: &Value) -> Flow {
        let text = || event["text"].as_str().unwrap_or("");
        match event["type"].as_str().unwrap_or("") {
            "session_configured" => self.configured_event(event),
            "ack" => self.ack(event),
            "error" => self.op_error(event),
            "turn_started" => self.turn_text.clear(),
            "delta" => {
                self.turn_text.push_str(text());
                self.update(updates::message_chunk(text()));
            }
            "reasoning" => self.update(updates::thought_chunk(text())),
            "tool_started" => self.tool_started(event),
            "approval_request" => self.approval_request(event),
            "approval_resolved" => self.approval_resolved(event),
            "tool_finished" => self.tool_finished(event),
            "progress" => self.progress(event),
            "message" => self.message(&event["message"]),
            "usage" => {
                if let Some(update) = updates::usage(event) {
                    self.update(update);
                }
            }
            "status" if event["name"] == "plan" => {
                self.plan = event["text"].is_string();
                self.update(updates::mode(self.mode()));
            }
            "notice" => crate::log_info(&format!("notice: {}", event["text"])),
            "turn_finished" => self.turn_finished(event),
            "model_changed" => self.model_changed(&event["model"]),
            "commands_changed" => self.commands_changed(&event["commands"]),
            "closed" => return Flow::Done(Ok(())),
            _ => {}
        }
        Flow::Go
    }

    fn configured_event(&mut self, event: &Value) {
        self.configured = Some(event.clone());
        crate::editor_fs::set_cwd(&self.cwd());
        self.plan = event["status"]["plan"].is_string();
        let listing = self.pending.values().any(|p| matches!(p, Pending::Models));
        if self.models.is_none()
            && !listing
            && let Err(e) = self.op(Some(Pending::Models), json!({"type": "list_models"}))
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

    fn model_changed(&mut self, model: &Value) {
        if let Some(configured) = self.configured.as_mut() {
            configured["model"] = model.clone();
        }
        if let Some(options) = self.config_options() {
            self.update(json!({"sessionUpdate": "config_option_update", "configOptions": options}));
        }
    }

    /// A command added mid-session: `/name` prompts run it from now on,
    /// and the editor's list shows it.
    fn commands_changed(&mut self, commands: &Value) {
        let Some(configured) = self.configured.as_mut() else {
            return;
        };
        configured["commands"] = commands.clone();
        // Before the editor has the session (or while it switches), the
        // list goes with session/new's or session/load's answer instead.
        let switching = self
            .pending
            .values()
            .any(|p| matches!(p, Pending::NewSession(_) | Pending::Load(_)));
        if !self.fresh && !switching {
            self.update(updates::commands(commands));
        }
    }

    fn ack(&mut self, event: &Value) {
        let op = event["op_id"].as_str().unwrap_or("");
        // A prompt is answered by turn_finished; new and load by session_configured.
        if let Some(Pending::Prompt(_) | Pending::NewSession(_) | Pending::Load(_)) =
            self.pending.get(op)
        {
            return;
        }
        let Some(pending) = self.pending.remove(op) else {
            return;
        };
        let result = &event["result"];
        match pending {
            Pending::Prompt(_) | Pending::NewSession(_) | Pending::Load(_) => {}
            Pending::Command(r) => {
                self.prompt_op = None;
                self.update(updates::message_chunk(
                    result["output"].as_str().unwrap_or(""),
                ));
                reply(r, Ok(json!({"stopReason": "end_turn"})));
            }
            Pending::List(r, cwd) => reply(r, Ok(crate::sessions::list(result, cwd.as_deref()))),
            Pending::Models => {
                self.models = Some(result["models"].as_array().cloned().unwrap_or_default());
                self.answer_initialize();
            }
            Pending::SetModel(r) => {
                if let Some(configured) = self.configured.as_mut() {
                    configured["model"] = result["model"].clone();
                }
                let options = self.config_options().unwrap_or_default();
                reply(r, Ok(json!({"configOptions": options})));
            }
            Pending::SetMode(r, mode) => {
                self.plan = mode == "plan";
                self.update(updates::mode(self.mode()));
                reply(r, Ok(json!({})));
            }
        }
    }

    fn op_error(&mut self, event: &Value) {
        let op = event["op_id"].as_str().unwrap_or("");
        let message = event["message"]
            .as_str()
            .unwrap_or("uji refused the request");
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
            Pending::SetMode(r, _) => reply(r, error),
            Pending::SetModel(r) => reply(r, error),
            Pending::Models => {
                self.models = Some(Vec::new());
                self.answer_initialize();
            }
        }
    }

    fn tool_started(&mut self, event: &Value) {
        let call_id = event["call_id"].as_str().unwrap_or("");
        let tool = event["name"].as_str().unwrap_or("");
        let subject = event["subject"].as_str().unwrap_or("");
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
        let verb = event["verb"].as_str().unwrap_or("");
        let cwd = self.cwd();
        self.update(updates::tool_call(call_id, tool, verb, subject, &cwd));
        if event["decision"] == "allow" {
            self.update(updates::status(call_id, "in_progress"));
        }
    }

    /// Asks the editor in a task of the connection, so the loop goes on
    /// (a cancel must still reach uji while the question is open).
    fn approval_request(&mut self, event: &Value) {
        let call_id = event["call_id"].as_str().unwrap_or("").to_string();
        let tool = event["tool"].as_str().unwrap_or("");
        let verb = event["verb"].as_str().unwrap_or("");
        let subject = event["subject"].as_str().unwrap_or("");
        let mut tool_call = updates::tool_call(&call_id, tool, verb, subject, &self.cwd());
        tool_call["rawInput"] = event["args"].clone();
        if let Some(obj) = tool_call.as_object_mut() {
            obj.remove("sessionUpdate");
        }
        let question = typed::<RequestPermissionRequest>(json!({
            "sessionId": self.session_id(),
            "toolCall": tool_call,
            "options": [
                {"optionId": "allow_once", "name": "Allow once", "kind": "allow_once"},
                {"optionId": "allow_session", "name": "Allow for this session", "kind": "allow_always"},
                {"optionId": "deny", "name": "Reject", "kind": "reject_once"},
            ],
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

    fn approval_resolved(&mut self, event: &Value) {
        let call_id = event["call_id"].as_str().unwrap_or("");
        // A withdrawn or timed-out question no longer waits for the editor.
        self.asking.remove(call_id);
        let allowed = event["decision"]
            .as_str()
            .is_some_and(|d| d.starts_with("allow"));
        if allowed {
            self.update(updates::status(call_id, "in_progress"));
        }
    }

    fn tool_finished(&mut self, event: &Value) {
        let call_id = event["call_id"].as_str().unwrap_or("");
        let call = self.calls.remove(call_id);
        crate::editor_write::forget(call_id);
        let is_error = event["is_error"] == true;
        let diff = call
            .filter(|c| !is_error && updates::kind(&c.tool) == "edit")
            .and_then(|c| {
                let path = c.path?;
                let after = read_small(&path)?;
                Some(updates::diff(&path, c.before.as_deref(), &after))
            });
        let summary = event["summary"].as_str().unwrap_or("");
        self.update(updates::finished(call_id, summary, is_error, diff));
    }

    /// A running command's latest line; other tools' progress is not shown
    /// (a `shell-…` call of the `shell` operation is not the editor's).
    fn progress(&mut self, event: &Value) {
        let call_id = event["call_id"].as_str().unwrap_or("");
        let running = self
            .calls
            .get(call_id)
            .is_some_and(|c| updates::kind(&c.tool) == "execute");
        if running {
            self.update(updates::progress(
                call_id,
                event["line"].as_str().unwrap_or(""),
            ));
        }
    }

    /// A command's saved result, which follows its `tool_finished`: its
    /// output for the editor to show under the call.
    fn message(&mut self, message: &Value) {
        let name = message["name"].as_str().unwrap_or("");
        if message["role"] != "tool" || updates::kind(name) != "execute" {
            return;
        }
        let call_id = message["tool_call_id"].as_str().unwrap_or("");
        let summary = message["summary"].as_str().unwrap_or("");
        let output = message["content"].as_str().unwrap_or("");
        let is_error = message["is_error"] == true;
        self.update(updates::command_output(call_id, summary, output, is_error));
    }

    fn turn_finished(&mut self, event: &Value) {
        if self.plan && event["error"].is_null() {
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
        if let Some(error) = event["error"].as_str() {
            return reply(r, Err(internal(error)));
        }
        let reason = if event["interrupted"] == true {
            "cancelled"
        } else {
            "end_turn"
        };
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
