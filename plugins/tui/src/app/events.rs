//! uji's events, applied to what the screen shows.

use serde_json::Value;
use uji_protocol::frontend::answers::{self, Answer, CommandOutput, ModelSet};
use uji_protocol::frontend::{
    CommandInfo, Event, GateDecision, NoticeLevel, Resolution, SessionConfigured,
};
use uji_protocol::session::{MessageBody, StoredMessage};

use super::state::{App, Pending};
use crate::approval::Approval;
use crate::composer::suggest::CommandEntry;
use crate::keys::{Keymap, Mode};
use crate::transcript::tool::{Refusal, ShellBlock, ToolBlock, ToolState};
use crate::transcript::welcome::{self, Welcome};
use crate::transcript::{Block, Level};

/// The fields of a saved tool message the screen draws.
struct ToolResult<'a> {
    call_id: &'a str,
    name: &'a str,
    content: &'a str,
    is_error: bool,
    summary: Option<&'a str>,
    diff: Option<&'a uji_protocol::FileDiff>,
    subject: &'a str,
    error_kind: Option<uji_protocol::ToolErrorKind>,
}

/// A denied call in a session file written before tool results carried
/// their `error_kind`: the gate's refusals were the only results starting
/// with "denied".
fn written_before_kinds_denied(result: &ToolResult<'_>) -> bool {
    result.is_error && result.content.starts_with("denied")
}

impl App {
    pub(super) fn on_uji(&mut self, event: Event) {
        // An event this screen does not know (or could not read) is
        // skipped; the session goes on.
        if matches!(event, Event::Unknown) {
            return;
        }
        self.dirty = true;
        match event {
            Event::ToolStarted { .. }
            | Event::Progress { .. }
            | Event::Subagent { .. }
            | Event::ToolFinished { .. }
            | Event::ApprovalRequest { .. }
            | Event::ApprovalResolved { .. } => self.on_tool_event(event),
            Event::TurnStarted { .. }
            | Event::Message { .. }
            | Event::Delta { .. }
            | Event::Reasoning { .. }
            | Event::StreamRetry { .. }
            | Event::TurnFinished { .. } => self.on_turn_event(event),
            Event::JobStarted { .. } | Event::JobOutput { .. } | Event::JobFinished { .. } => {
                self.on_job_event(event)
            }
            other => self.on_session_event(other),
        }
    }

    /// Events of the running turn: what streams and what is saved.
    fn on_turn_event(&mut self, event: Event) {
        match event {
            Event::TurnStarted { .. } => {
                self.status.busy_since = Some(std::time::Instant::now());
            }
            Event::Message { message } => self.on_message(message, true),
            Event::Delta { text } => self.transcript.push_delta(&text),
            Event::Reasoning { text } => self.transcript.push_reasoning(&text),
            Event::StreamRetry {
                attempt,
                reason,
                message,
                ..
            } => {
                let line = if message.is_empty() {
                    format!("retrying (attempt {attempt}): {reason}")
                } else {
                    message
                };
                self.transcript.show_retry(line);
            }
            Event::TurnFinished {
                error, interrupted, ..
            } => self.on_turn_finished(error, interrupted),
            _ => {}
        }
    }

    /// Tool calls and their approval questions.
    fn on_tool_event(&mut self, event: Event) {
        match event {
            Event::ToolStarted {
                call_id,
                name,
                subject,
                verb,
                decision,
                because,
            } => self.on_tool_started(&call_id, &name, &subject, verb, decision, because),
            Event::Progress { call_id, line, .. } => self.on_progress(&call_id, &line),
            Event::Subagent {
                call_id,
                session,
                agent,
                line,
            } => {
                if let Some(tool) = self.transcript.tool_mut(&call_id) {
                    tool.subagent_line(&session, &agent, &line);
                }
            }
            Event::ToolFinished {
                call_id,
                summary,
                diff,
                is_error,
                ..
            } => {
                if let Some(tool) = self.transcript.tool_mut(&call_id) {
                    tool.finish(is_error, summary.as_deref(), diff.as_ref());
                }
                self.transcript.regroup();
            }
            Event::ApprovalRequest {
                call_id,
                tool,
                subject,
                question,
                diff,
                args,
                answers,
                labels,
                agent,
                ..
            } => {
                let answers: Vec<String> = answers.iter().map(|a| a.as_str().to_string()).collect();
                // A subagent's question says which agent asks.
                let question = match agent {
                    Some(agent) => format!("[subagent {agent}] {question}"),
                    None => question,
                };
                let approval = Approval::new(
                    &call_id,
                    &tool,
                    &question,
                    &subject,
                    &args,
                    diff.as_ref(),
                    &answers,
                )
                .with_labels(labels);
                self.approvals.push(approval);
                self.call_attention("uji is waiting for your answer");
                if let Some(block) = self.transcript.tool_mut(&call_id) {
                    block.set_state(ToolState::Asking);
                }
            }
            Event::ApprovalResolved {
                call_id,
                resolution,
                decision,
            } => self.on_approval_resolved(&call_id, resolution, decision),
            _ => {}
        }
    }

    /// The session around the turns: answers to operations, the status
    /// line's numbers, notices.
    fn on_session_event(&mut self, event: Event) {
        match event {
            Event::SessionConfigured(configured) => self.configure(*configured),
            Event::Dialog {
                dialog_id,
                kind,
                title,
                items,
                current,
                value,
                hidden,
                body,
            } => self.on_dialog(super::dialogs::DialogRequest {
                id: dialog_id,
                kind,
                title,
                items,
                current,
                value,
                hidden,
                body,
            }),
            Event::DialogResolved {
                dialog_id,
                resolution,
                ..
            } => self.on_dialog_resolved(&dialog_id, resolution),
            Event::Ack { op_id, result } => self.on_ack(&op_id, result),
            Event::Error { op_id, message } => {
                if let Some(id) = op_id {
                    self.pending.remove(&id);
                }
                self.notice(Level::Error, message);
            }
            Event::Usage {
                session,
                cost,
                context_used,
                context_window,
                ..
            } => {
                self.status.session_usage = session;
                self.status.cost = cost;
                self.status.context_used = context_used;
                self.status.context_window = context_window;
            }
            Event::QueueChanged { queued } => self.status.queued = queued,
            Event::ModelChanged { model } => {
                self.transcript.set_welcome_model(Some(model_label(&model)));
                self.status.model = Some(model);
            }
            Event::ModeChanged { mode } => self.status.mode = mode,
            Event::TitleChanged { title } => self.title = title,
            Event::Compacted { messages, .. } => {
                self.transcript.push(Block::Compacted(format!(
                    "compacted {messages} earlier messages"
                )));
            }
            Event::Notice {
                text,
                level,
                source,
            } => self.on_notice(text, level, source),
            Event::Status { name, text } => match text {
                Some(text) => {
                    self.status.items.insert(name, text);
                }
                None => {
                    self.status.items.remove(&name);
                }
            },
            Event::CommandsChanged { commands } => {
                self.set_commands(&commands);
                // An open suggestion list shows the new commands at once.
                self.draft_changed();
            }
            Event::Closed => self.closed = true,
            Event::Reload => self.reload(),
            _ => {}
        }
    }

    /// The session's slash commands and the screen's own, for `/help` and
    /// the composer's suggestions.
    fn set_commands(&mut self, commands: &[CommandInfo]) {
        self.commands = commands
            .iter()
            .map(|c| CommandEntry {
                name: c.name.clone(),
                description: c.description.clone(),
            })
            .chain(crate::app::commands::local_commands())
            .collect();
        self.commands.sort_by(|a, b| a.name.cmp(&b.name));
        self.commands.dedup_by(|a, b| a.name == b.name);
    }

    fn configure(&mut self, configured: SessionConfigured) {
        self.session_id = configured.id;
        self.title = configured.title;
        if configured.ui.mouse != self.ui.mouse {
            let mouse = if configured.ui.mouse {
                crate::terminal::MOUSE_ON
            } else {
                crate::terminal::MOUSE_OFF
            };
            self.to_terminal.push(mouse.to_vec());
        }
        self.ui = configured.ui;
        self.cwd = configured.cwd;
        self.status.model = configured.model;
        self.status.session_usage = configured.usage;
        self.status.items = configured.status;
        self.status.mode = configured.mode;
        self.status.busy_since = None;
        self.status.queued.clear();
        self.approvals.clear();
        self.picker = None;
        self.verbs = configured
            .tools
            .iter()
            .filter_map(|t| t.verb.clone().map(|v| (t.name.clone(), v)))
            .collect();
        self.set_commands(&configured.commands);
        self.keymap = Keymap::new(&configured.keymap);
        self.transcript.clear();
        self.sent.clear();
        self.viewport.to_bottom();
        if configured.history.is_empty() && !configured.resumed {
            self.transcript.push(Block::Welcome(self.welcome()));
        }
        let mut history = Vec::new();
        for message in configured.history {
            if let MessageBody::User { text, .. } = &message.body {
                history.push(text.clone());
            }
            self.on_message(message, false);
        }
        self.transcript.regroup();
        self.composer.set_history(history);
    }

    /// The header of a new session: this uji, the directory, the model,
    /// and the keys to start with (as the keymap binds them).
    fn welcome(&self) -> Welcome {
        let home = std::env::var("HOME").ok();
        let mut hints = vec![
            ("/help".to_string(), "lists commands and keys".to_string()),
            ("!cmd".to_string(), "runs a shell command".to_string()),
        ];
        if let Some(key) = self.keymap.key_for(Mode::Normal, "cycle_mode") {
            hints.push((key, "switches ask, accept edits and plan".to_string()));
        }
        Welcome {
            version: env!("CARGO_PKG_VERSION").to_string(),
            directory: welcome::tilde(&self.cwd, home.as_deref()),
            model: self.status.model.as_ref().map(model_label),
            hints,
        }
    }

    fn on_ack(&mut self, op_id: &str, result: Option<Value>) {
        let Some(pending) = self.pending.remove(op_id) else {
            return;
        };
        let result = result.as_ref();
        match pending {
            Pending::ListSessions => self.answered(result, Self::open_session_picker),
            Pending::ListModels => self.answered(result, Self::open_model_picker),
            Pending::Providers(wanted) => {
                self.answered(result, |app, list| app.on_providers(list, wanted))
            }
            Pending::Login(_) => self.answered(result, Self::on_login),
            Pending::Logout(id) => self.answered(result, |app, out| app.on_logout(&id, out)),
            Pending::Command => self.answered(result, Self::on_command_output),
            Pending::Diff => self.answered(result, |app, answer: CommandOutput| {
                app.transcript.push(Block::Diff(answer.output));
            }),
            Pending::ModelSet => self.answered(result, |app, answer: ModelSet| {
                app.notice(Level::Info, answer.model.switched_text());
            }),
            Pending::Rewind => self.answered(result, Self::on_rewound),
            Pending::Unqueue => self.answered(result, Self::on_unqueued),
            Pending::ListJobs => self.answered(result, Self::open_job_picker),
            Pending::Background => self.answered(result, Self::on_background_ack),
            Pending::Other => {}
        }
    }

    /// Decodes an ack's `result` as the answer `A` and hands it to `then`.
    /// An answer of another shape is shown as an error naming the
    /// operation; the screen goes on.
    fn answered<A: Answer>(&mut self, result: Option<&Value>, then: impl FnOnce(&mut App, A)) {
        match answers::decode::<A>(result) {
            Ok(answer) => then(self, answer),
            Err(e) => self.notice(
                Level::Error,
                format!(
                    "{e}; the screen plugin may not match this uji: install both from one build"
                ),
            ),
        }
    }

    fn on_command_output(&mut self, answer: CommandOutput) {
        let output = answer.output.trim();
        if !output.is_empty() {
            self.transcript.push(Block::Info(output.to_string()));
        }
    }

    /// A saved message: live ones settle what streamed; history builds
    /// the blocks from scratch.
    fn on_message(&mut self, message: StoredMessage, live: bool) {
        match message.body {
            MessageBody::User { text, hidden, .. } => {
                if !hidden {
                    self.sent.push((message.seq, text.clone()));
                    self.transcript.push(Block::User(text));
                }
            }
            // Live, the saved answer replaces what streamed; from history
            // nothing streamed, and the same call adds it.
            MessageBody::Assistant {
                text, reasoning, ..
            } => self.transcript.settle_answer(reasoning.as_deref(), &text),
            MessageBody::Tool {
                tool_call_id,
                name,
                content,
                is_error,
                summary,
                diff,
                subject,
                error_kind,
                ..
            } => {
                let result = ToolResult {
                    call_id: &tool_call_id,
                    name: &name,
                    content: &content,
                    is_error,
                    summary: summary.as_deref(),
                    diff: diff.as_ref(),
                    subject: subject.as_deref().unwrap_or(""),
                    error_kind,
                };
                self.on_tool_result(&result, live);
            }
            MessageBody::Error { text } => self.notice(Level::Error, text),
            // Live, the `compacted` event that follows says it, with the
            // count: one rule per compaction.
            MessageBody::Compaction { .. } if live => {}
            MessageBody::Compaction { .. } => {
                self.transcript
                    .push(Block::Compacted("earlier messages compacted".to_string()));
            }
            MessageBody::Shell {
                command,
                output,
                exit_code,
            } => self.on_shell_message(&command, &output, exit_code, live),
        }
    }

    /// A saved `!cmd`: ends the running block, or (history) adds one.
    fn on_shell_message(
        &mut self,
        command: &str,
        output: &str,
        exit_code: Option<i32>,
        live: bool,
    ) {
        if let Some(shell) = self.transcript.running_shell_mut().filter(|_| live) {
            shell.finish(output, exit_code);
            return;
        }
        let mut block = ShellBlock::new(command);
        block.finish(output, exit_code);
        self.transcript.push(Block::Shell {
            op_id: String::new(),
            block,
        });
    }

    /// A saved tool result: completes the call's block (made here when it
    /// comes from history).
    fn on_tool_result(&mut self, result: &ToolResult<'_>, live: bool) {
        if self.transcript.tool_mut(result.call_id).is_none() {
            let verb = self
                .verbs
                .get(result.name)
                .cloned()
                .unwrap_or_else(|| result.name.to_string());
            let block = ToolBlock::new(result.call_id, result.name, &verb, result.subject);
            self.transcript.push(Block::Tool(block));
        }
        if let Some(tool) = self.transcript.tool_mut(result.call_id) {
            let denied = tool.state() == ToolState::Denied
                || result.error_kind == Some(uji_protocol::ToolErrorKind::Denied)
                || (result.error_kind.is_none() && written_before_kinds_denied(result));
            tool.set_output(result.content);
            // A live call was finished by `tool_finished` already; history
            // finishes here.
            if matches!(tool.state(), ToolState::Running | ToolState::Asking) {
                tool.finish(result.is_error, result.summary, result.diff);
            }
            if denied {
                tool.set_state(ToolState::Denied);
            }
        }
        if live {
            self.transcript.regroup();
        }
    }

    fn on_tool_started(
        &mut self,
        call_id: &str,
        name: &str,
        subject: &str,
        verb: Option<String>,
        decision: Option<GateDecision>,
        because: Option<String>,
    ) {
        let verb = verb
            .or_else(|| self.verbs.get(name).cloned())
            .unwrap_or_else(|| name.to_string());
        let mut block = ToolBlock::new(call_id, name, &verb, subject);
        match decision {
            Some(GateDecision::Deny) => {
                block.set_state(ToolState::Denied);
                if let Some(because) = because {
                    block.set_output(&format!("denied by {because}"));
                }
            }
            Some(GateDecision::Ask) => block.set_state(ToolState::Asking),
            _ => block.set_state(ToolState::Running),
        }
        self.transcript.push(Block::Tool(block));
    }

    fn on_progress(&mut self, call_id: &str, line: &str) {
        if let Some(op_id) = call_id.strip_prefix("shell-") {
            if let Some(shell) = self.transcript.shell_mut(op_id) {
                shell.set_progress(line);
            }
        } else if let Some(tool) = self.transcript.tool_mut(call_id) {
            tool.set_progress(line);
        }
    }

    fn on_approval_resolved(
        &mut self,
        call_id: &str,
        resolution: Resolution,
        decision: Option<uji_protocol::frontend::ApprovalDecision>,
    ) {
        use uji_protocol::frontend::ApprovalDecision;
        self.approvals.retain(|a| a.call_id() != call_id);
        if let Some(tool) = self.transcript.tool_mut(call_id) {
            match decision {
                Some(ApprovalDecision::AllowOnce | ApprovalDecision::AllowSession) => {
                    tool.set_state(ToolState::Running)
                }
                Some(ApprovalDecision::Deny) => tool.refused_by_you(Refusal::Denied),
                Some(ApprovalDecision::Stop) => tool.refused_by_you(Refusal::Stopped),
                _ => tool.set_state(ToolState::Denied),
            }
        }
        if resolution == Resolution::TimedOut {
            self.notice(
                Level::Warn,
                "no answer within 5 minutes: the call was denied",
            );
        }
    }

    fn on_notice(&mut self, text: String, level: NoticeLevel, source: Option<String>) {
        let level = match level {
            NoticeLevel::Info => Level::Info,
            NoticeLevel::Warn => Level::Warn,
            NoticeLevel::Error => Level::Error,
        };
        let text = match source {
            Some(source) if level != Level::Info => format!("{source}: {text}"),
            _ => text,
        };
        self.notice(level, text);
    }

    fn on_turn_finished(&mut self, error: Option<String>, interrupted: bool) {
        self.status.busy_since = None;
        self.call_attention("uji finished");
        self.transcript.withdraw_live();
        let planned = self.status.mode == uji_protocol::ApprovalMode::Plan
            && !interrupted
            && error.is_none()
            && self.transcript.ends_with_answer();
        if planned && self.picker.is_none() && self.status.queued.is_empty() {
            self.offer_to_run_the_plan();
        }
        // The failure may already be on screen as a saved error message.
        let text = if interrupted {
            Some("interrupted".to_string())
        } else {
            error
        };
        if let Some(text) = text.filter(|t| !self.transcript.ends_with_notice(t)) {
            self.notice(
                if interrupted {
                    Level::Warn
                } else {
                    Level::Error
                },
                text,
            );
        }
    }
}

/// `provider/model (effort)`, as the header shows the model.
fn model_label(model: &uji_protocol::frontend::ModelState) -> String {
    match &model.effort {
        Some(effort) => format!("{}/{} ({effort})", model.provider, model.model),
        None => format!("{}/{}", model.provider, model.model),
    }
}
