//! The editor's requests and notifications, as frontend operations.

use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{
    CancelNotification, InitializeRequest, InitializeResponse, LoadSessionRequest,
    NewSessionRequest, PromptRequest, PromptResponse, RequestPermissionOutcome,
    RequestPermissionResponse, SessionId, SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse, SetSessionModeRequest, SetSessionModeResponse,
};
use serde_json::{Value, json};
use uji_protocol::frontend::{ApprovalDecision, Delivery, Op};

use super::{Agent, Pending, invalid_params, reply};
use crate::connection::Request;
use crate::{mcp, prompt, updates};

/// ACP protocol version this agent speaks.
pub const PROTOCOL_VERSION: u64 = 1;

/// A request answered now, or once uji's operation `op` is done.
enum Step {
    Now(Value),
    Later(String),
}

type Answer = Result<Step, agent_client_protocol::Error>;

impl Agent<'_> {
    pub(super) fn request(&mut self, request: Request) {
        match request {
            Request::Initialize(req, r) => self.initialize(&req, r),
            Request::Authenticate(req, r) => reply(
                r,
                Err(invalid_params(format!(
                    "uji has no sign-in {}: it reads model keys from the environment or init.lua; set one (e.g. ANTHROPIC_API_KEY) and restart the agent",
                    req.method_id
                ))),
            ),
            Request::NewSession(req, r) => match self.new_session(&req) {
                Ok(Step::Now(result)) => {
                    reply(r, Ok(result));
                    self.flush_after_answer();
                }
                Ok(Step::Later(op)) => {
                    self.pending.insert(op, Pending::NewSession(r));
                }
                Err(e) => reply(r, Err(e)),
            },
            Request::Load(req, r) => match self.load(&req) {
                Ok(Step::Now(result)) => {
                    reply(r, Ok(result));
                    self.flush_after_answer();
                }
                Ok(Step::Later(op)) => {
                    self.pending.insert(op, Pending::Load(r));
                }
                Err(e) => reply(r, Err(e)),
            },
            Request::List(req, r) => {
                let cwd = req.cwd.map(|c| c.to_string_lossy().into_owned());
                let op = Op::ListSessions { all: cwd.is_some() };
                if let Err(e) = self.op(Some(Pending::List(r, cwd)), &op) {
                    crate::log_warn(&format!("cannot list sessions: {e}"));
                }
            }
            Request::Prompt(req, r) => self.prompt(&req, r),
            Request::SetMode(req, r) => self.set_mode(&req, r),
            Request::SetConfig(req, r) => self.set_config_option(&req, r),
        }
    }

    fn initialize(&mut self, req: &InitializeRequest, r: Responder<InitializeResponse>) {
        let fs = &req.client_capabilities.fs;
        if self.settings.editor_fs && fs.read_text_file {
            // Writes need reads too: a buffer is read before it is written,
            // so unsaved changes are never overwritten.
            self.editor.start(self.tx.clone(), fs.write_text_file);
            self.editor.set_cwd(&self.cwd());
        }
        if self.configured.is_none() || self.models.is_none() {
            // uji has not configured the session (or listed its models)
            // yet: answer once it has, so the auth methods reflect whether
            // a model is usable and sessions can offer the model choice.
            self.waiting_initialize = Some(r);
            return;
        }
        reply(r, Ok(self.capabilities()));
    }

    pub(super) fn capabilities(&self) -> Value {
        let has_model = self.configured.as_ref().is_some_and(|c| c.model.is_some());
        let auth = if has_model {
            json!([])
        } else {
            json!([{"id": "uji-config", "name": "Configure a model",
                "description": "No model key is set: export the provider's key (e.g. ANTHROPIC_API_KEY) or add a provider in init.lua, then restart the agent"}])
        };
        json!({
            "protocolVersion": PROTOCOL_VERSION,
            "agentCapabilities": {
                "loadSession": true,
                "promptCapabilities": {"image": true, "audio": false, "embeddedContext": true},
                // The MCP plugin speaks stdio and streamable HTTP, not SSE.
                "mcpCapabilities": {"http": true, "sse": false},
                "sessionCapabilities": {"list": {}},
            },
            "authMethods": auth,
            "agentInfo": {"name": "uji", "title": "uji", "version": env!("CARGO_PKG_VERSION")},
        })
    }

    /// The answer to session/new (with its id) or session/load.
    pub(super) fn session_answer(&self, with_id: bool) -> Value {
        let mut answer = json!({"modes": updates::modes(self.mode())});
        if with_id {
            answer["sessionId"] = json!(self.session_id());
        }
        if let Some(options) = self.config_options() {
            answer["configOptions"] = options;
        }
        answer
    }

    /// The model choice as ACP session config options.
    pub(super) fn config_options(&self) -> Option<Value> {
        let current = self.configured.as_ref()?.model.as_ref();
        let models = self.models.as_ref()?;
        Some(updates::model_options(current, models))
    }

    fn set_config_option(
        &mut self,
        req: &SetSessionConfigOptionRequest,
        r: Responder<SetSessionConfigOptionResponse>,
    ) {
        let params = serde_json::to_value(req).unwrap_or_default();
        let answer = self.check_session(&req.session_id).and_then(|()| {
            if params["configId"] != "model" {
                return Err(invalid_params(format!(
                    "no config option {}; uji has model",
                    params["configId"]
                )));
            }
            let value = params["value"].as_str().unwrap_or("");
            let known = self
                .models
                .iter()
                .flatten()
                .any(|m| updates::model_id(&m.provider, &m.model) == value);
            if !known {
                return Err(invalid_params(format!(
                    "no model {value:?}; session/new lists the configured ones"
                )));
            }
            Ok(Op::SetModel {
                model: Some(value.to_string()),
                effort: None,
            })
        });
        match answer.and_then(|op| self.op(None, &op)) {
            Ok(op) => {
                self.pending.insert(op, Pending::SetModel(r));
            }
            Err(e) => reply(r, Err(e)),
        }
    }

    fn check_cwd(&self, cwd: &std::path::Path) -> Result<(), agent_client_protocol::Error> {
        if !same_dir(cwd, std::path::Path::new(&self.cwd())) {
            return Err(invalid_params(format!(
                "uji acp serves the directory it was started in ({}); start it in {} for that directory",
                self.cwd(),
                cwd.display()
            )));
        }
        Ok(())
    }

    fn new_session(&mut self, req: &NewSessionRequest) -> Answer {
        self.check_cwd(&req.cwd)?;
        let servers = mcp::specs(&req.mcp_servers, &req.cwd);
        if self.fresh {
            // The session uji opened at start has not been used: it is the new one.
            self.fresh = false;
            self.after_switch(servers);
            return Ok(Step::Now(self.session_answer(true)));
        }
        let op = self.op(None, &Op::NewSession { title: None })?;
        self.mcp_after_switch = servers;
        Ok(Step::Later(op))
    }

    fn load(&mut self, req: &LoadSessionRequest) -> Answer {
        self.check_cwd(&req.cwd)?;
        let wanted = req.session_id.to_string();
        self.fresh = false;
        let servers = mcp::specs(&req.mcp_servers, &req.cwd);
        if wanted == self.session_id() {
            self.replay();
            self.after_switch(servers);
            return Ok(Step::Now(self.session_answer(false)));
        }
        let op = self.op(None, &Op::ResumeSession { session_id: wanted })?;
        self.mcp_after_switch = servers;
        Ok(Step::Later(op))
    }

    /// After a session opens: the editor's MCP servers and its commands.
    pub(super) fn after_switch(&mut self, servers: Vec<mcp::Server>) {
        for server in &servers {
            self.ops.add_mcp_server(server);
        }
        if let Some(configured) = &self.configured {
            self.after_answer
                .push(updates::commands(&configured.commands));
        }
    }

    /// The session's history as updates, before session/load answers.
    pub(super) fn replay(&mut self) {
        let updates: Vec<Value> = self
            .configured
            .iter()
            .flat_map(|c| &c.history)
            .flat_map(updates::replay)
            .collect();
        for update in updates {
            self.update(update);
        }
    }

    /// The editor's session must be the one uji serves.
    pub(super) fn check_session(&self, id: &SessionId) -> Result<(), agent_client_protocol::Error> {
        let id = id.to_string();
        if id == self.session_id() {
            return Ok(());
        }
        Err(invalid_params(format!(
            "no open session {id}; uji serves one session at a time ({}): session/load switches",
            self.session_id()
        )))
    }

    fn prompt(&mut self, req: &PromptRequest, r: Responder<PromptResponse>) {
        if let Err(e) = self.check_session(&req.session_id) {
            return reply(r, Err(e));
        }
        if self.prompt_op.is_some() {
            return reply(
                r,
                Err(invalid_params(
                    "a prompt is already running in this session; session/cancel stops it",
                )),
            );
        }
        // The crate's blocks as the editor sent them.
        let blocks = serde_json::to_value(&req.prompt).unwrap_or_default();
        let message = match prompt::from_blocks(&blocks) {
            Ok(message) => message,
            Err(e) => return reply(r, Err(invalid_params(e.to_string()))),
        };
        self.fresh = false;
        let submitted = match self.command_of(&message.text) {
            Some((name, args)) => {
                let op = Op::RunCommand { name, args };
                self.op(None, &op).map(|id| (id, Pending::Command(r)))
            }
            None => {
                let op = Op::UserMessage {
                    text: message.text,
                    images: message.images,
                    delivery: Delivery::Steer,
                };
                self.op(None, &op).map(|id| (id, Pending::Prompt(r)))
            }
        };
        match submitted {
            Ok((id, pending)) => {
                self.pending.insert(id.clone(), pending);
                self.prompt_op = Some(id);
            }
            Err(e) => crate::log_warn(&format!("cannot start the prompt: {e}")),
        }
    }

    /// `/name args` when `name` is one of the session's slash commands.
    pub(super) fn command_of(&self, text: &str) -> Option<(String, String)> {
        let rest = text.strip_prefix('/')?;
        let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        let commands = &self.configured.as_ref()?.commands;
        commands
            .iter()
            .any(|c| c.name == name)
            .then(|| (name.to_string(), args.trim().to_string()))
    }

    /// The ACP id of the approval mode in force.
    pub(super) fn mode(&self) -> &'static str {
        updates::mode_id(self.mode)
    }

    fn set_mode(&mut self, req: &SetSessionModeRequest, r: Responder<SetSessionModeResponse>) {
        let id = req.mode_id.to_string();
        let checked = self.check_session(&req.session_id).and_then(|()| {
            updates::mode_of(&id).ok_or_else(|| {
                invalid_params(format!(
                    "no mode {id:?}; uji has default, acceptEdits and plan"
                ))
            })
        });
        let mode = match checked {
            Ok(mode) => mode,
            Err(e) => return reply(r, Err(e)),
        };
        if let Err(e) = self.op(Some(Pending::SetMode(r)), &Op::SetMode { mode }) {
            crate::log_warn(&format!("cannot switch the mode: {e}"));
        }
    }

    pub(super) fn cancel(&mut self, cancel: &CancelNotification) {
        if cancel.session_id.to_string() != self.session_id() {
            crate::log_warn(&format!("cancel for another session {}", cancel.session_id));
            return;
        }
        if let Err(e) = self.op(None, &Op::Interrupt) {
            crate::log_warn(&format!("cancel: {e}"));
        }
    }

    pub(super) fn permission_answer(
        &mut self,
        call_id: String,
        answer: Result<RequestPermissionResponse, agent_client_protocol::Error>,
    ) {
        if self.dialog_answer(&call_id, &answer) {
            return;
        }
        if !self.asking.remove(&call_id) {
            // Withdrawn or timed out in uji meanwhile.
            return;
        }
        let decision = match &answer {
            Ok(RequestPermissionResponse {
                outcome: RequestPermissionOutcome::Selected(selected),
                ..
            }) => crate::updates::chosen_decision(&selected.option_id.to_string()),
            // Cancelled or an error: the question is denied.
            _ => ApprovalDecision::Deny,
        };
        if let Err(e) = &answer {
            crate::log_warn(&format!("permission question for {call_id} failed: {e}"));
        }
        let op = Op::Approval {
            call_id: call_id.clone(),
            decision: Some(decision),
            allow: None,
            guidance: None,
        };
        if let Err(e) = self.op(None, &op) {
            crate::log_warn(&format!("approval for {call_id}: {e}"));
        }
    }
}

/// Editors may name the directory through a symlink or with a trailing slash.
fn same_dir(a: &std::path::Path, b: &std::path::Path) -> bool {
    let canonical = |p: &std::path::Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.into());
    canonical(a) == canonical(b)
}
