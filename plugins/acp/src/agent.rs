//! The ACP agent: editor requests become frontend operations, frontend
//! events become `session/update` notifications and answers. One uji
//! session is served at a time (the frontend contract's rule), so ACP's
//! sessionId is always uji's current session id.

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::prompt;
use crate::rpc::{INVALID_PARAMS, Incoming, METHOD_NOT_FOUND, RpcError, Writer};
use crate::updates;

/// ACP protocol version this agent speaks.
pub const PROTOCOL_VERSION: u64 = 1;

/// The requests uji answers; anything else is "method not found".
const METHODS: [&str; 9] = [
    "initialize",
    "authenticate",
    "session/new",
    "session/load",
    "session/list",
    "session/prompt",
    "session/set_mode",
    "session/set_config_option",
    "session/cancel",
];

/// A file larger than this is not shown whole in an edit's diff.
const DIFF_LIMIT: u64 = 1 << 20;

/// Operations waiting for uji's answer, by operation id.
enum Pending {
    Prompt(Value),
    Command(Value),
    NewSession(Value),
    Load(Value),
    List(Value, Option<String>),
    SetMode(Value, String),
    Models,
    SetModel(Value),
}

struct Call {
    tool: String,
    path: Option<String>,
    before: Option<String>,
}

/// What the agent sends to uji.
pub trait Ops {
    fn submit(&self, op: &Value) -> Result<(), String>;
    /// Hands the editor's MCP servers to the MCP plugin, if one is loaded.
    fn add_mcp_servers(&self, session_id: &str, servers: &Value);
}

pub struct Agent<'a> {
    out: &'a Writer,
    ops: &'a dyn Ops,
    configured: Option<Value>,
    waiting_initialize: Option<Value>,
    fresh: bool,
    plan: bool,
    next_op: u64,
    next_request: u64,
    pending: HashMap<String, Pending>,
    questions: HashMap<u64, String>,
    calls: HashMap<String, Call>,
    prompt_op: Option<String>,
    mcp_after_switch: Option<Value>,
    /// Updates for a session the editor learns of by the answer being sent.
    after_answer: Vec<Value>,
    /// The models of `list_models`, once uji has answered it.
    models: Option<Vec<Value>>,
}

type Answer = Result<Option<Value>, RpcError>;

impl<'a> Agent<'a> {
    pub fn new(out: &'a Writer, ops: &'a dyn Ops) -> Agent<'a> {
        Agent {
            out,
            ops,
            configured: None,
            waiting_initialize: None,
            fresh: true,
            plan: false,
            next_op: 0,
            next_request: 0,
            pending: HashMap::new(),
            questions: HashMap::new(),
            calls: HashMap::new(),
            prompt_op: None,
            mcp_after_switch: None,
            after_answer: Vec::new(),
            models: None,
        }
    }

    fn session_id(&self) -> String {
        self.configured.as_ref().map_or(String::new(), |c| {
            c["id"].as_str().unwrap_or("").to_string()
        })
    }

    fn cwd(&self) -> String {
        self.configured.as_ref().map_or(String::new(), |c| {
            c["cwd"].as_str().unwrap_or("").to_string()
        })
    }

    fn op(&mut self, pending: Option<Pending>, mut op: Value) -> Result<String, RpcError> {
        self.next_op += 1;
        let id = format!("acp-{}", self.next_op);
        op["id"] = json!(id);
        self.ops.submit(&op).map_err(RpcError::internal)?;
        if let Some(pending) = pending {
            self.pending.insert(id.clone(), pending);
        }
        Ok(id)
    }

    fn update(&self, update: Value) -> std::io::Result<()> {
        self.out.notify(
            "session/update",
            json!({"sessionId": self.session_id(), "update": update}),
        )
    }

    /// Answers a request, then sends the updates that had to wait for it.
    fn answer(&mut self, id: &Value, result: Value) -> std::io::Result<()> {
        self.out.answer(id, result)?;
        for update in std::mem::take(&mut self.after_answer) {
            self.update(update)?;
        }
        Ok(())
    }

    /// Handles one line from the editor.
    pub fn incoming(&mut self, message: Incoming) -> std::io::Result<()> {
        match message {
            Incoming::Request { id, method, params } => {
                match self.request(&id, &method, &params) {
                    Ok(Some(result)) => self.answer(&id, result),
                    Ok(None) => Ok(()), // answered when uji's events come
                    Err(error) => self.out.fail(&id, &error),
                }
            }
            Incoming::Notification { method, params } => self.notification(&method, &params),
            Incoming::Response { id, result } => self.permission_answer(&id, result),
        }
    }

    fn request(&mut self, id: &Value, method: &str, params: &Value) -> Answer {
        if METHODS.contains(&method) && !params.is_object() && method != "initialize" {
            return Err(RpcError::invalid_params(format!(
                "{method} needs its params object"
            )));
        }
        match method {
            "initialize" => self.initialize(id),
            "authenticate" => Err(RpcError::invalid_params(
                "uji reads model keys from the environment or init.lua; set one (e.g. ANTHROPIC_API_KEY) and restart the agent",
            )),
            "session/new" => self.new_session(id, params),
            "session/load" => self.load(id, params),
            "session/list" => self.list(id, params),
            "session/prompt" => self.prompt(id, params),
            "session/set_mode" => self.set_mode(id, params),
            "session/set_config_option" => self.set_config_option(id, params),
            _ => Err(RpcError::new(
                METHOD_NOT_FOUND,
                format!("uji acp has no method {method}"),
            )),
        }
    }

    fn initialize(&mut self, id: &Value) -> Answer {
        if self.configured.is_none() || self.models.is_none() {
            // uji has not configured the session (or listed its models)
            // yet: answer once it has, so the auth methods reflect whether
            // a model is usable and sessions can offer the model choice.
            self.waiting_initialize = Some(id.clone());
            return Ok(None);
        }
        Ok(Some(self.capabilities()))
    }

    fn capabilities(&self) -> Value {
        let has_model = self
            .configured
            .as_ref()
            .is_some_and(|c| c.get("model").is_some());
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
                "mcpCapabilities": {"http": false, "sse": false},
                "sessionCapabilities": {"list": {}},
            },
            "authMethods": auth,
            "agentInfo": {"name": "uji", "title": "uji", "version": env!("CARGO_PKG_VERSION")},
        })
    }

    /// The answer to session/new (with its id) or session/load.
    fn session_answer(&self, with_id: bool) -> Value {
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
    fn config_options(&self) -> Option<Value> {
        let current = &self.configured.as_ref()?["model"];
        let models = self.models.as_ref()?;
        Some(updates::model_options(current, models))
    }

    fn set_config_option(&mut self, id: &Value, params: &Value) -> Answer {
        self.check_session(params)?;
        if params["configId"] != "model" {
            return Err(RpcError::invalid_params(format!(
                "no config option {}; uji has model",
                params["configId"]
            )));
        }
        let value = params["value"].as_str().unwrap_or("");
        let known = self
            .models
            .iter()
            .flatten()
            .any(|m| updates::model_id(m) == value);
        if !known {
            return Err(RpcError::invalid_params(format!(
                "no model {value:?}; session/new lists the configured ones"
            )));
        }
        self.op(
            Some(Pending::SetModel(id.clone())),
            json!({"type": "set_model", "model": value}),
        )?;
        Ok(None)
    }

    fn check_cwd(&self, params: &Value) -> Result<(), RpcError> {
        let cwd = params["cwd"]
            .as_str()
            .ok_or_else(|| RpcError::invalid_params("cwd is required"))?;
        if !same_dir(cwd, &self.cwd()) {
            return Err(RpcError::invalid_params(format!(
                "uji acp serves the directory it was started in ({}); start it in {cwd} for that directory",
                self.cwd()
            )));
        }
        Ok(())
    }

    fn new_session(&mut self, id: &Value, params: &Value) -> Answer {
        self.check_cwd(params)?;
        if self.fresh {
            // The session uji opened at start has not been used: it is the new one.
            self.fresh = false;
            self.after_switch(params);
            return Ok(Some(self.session_answer(true)));
        }
        self.op(
            Some(Pending::NewSession(id.clone())),
            json!({"type": "new_session"}),
        )?;
        self.mcp_after_switch = Some(params["mcpServers"].clone());
        Ok(None)
    }

    fn load(&mut self, id: &Value, params: &Value) -> Answer {
        self.check_cwd(params)?;
        let wanted = params["sessionId"]
            .as_str()
            .ok_or_else(|| RpcError::invalid_params("sessionId is required"))?;
        self.fresh = false;
        if wanted == self.session_id() {
            self.replay()?;
            self.after_switch(params);
            return Ok(Some(self.session_answer(false)));
        }
        self.mcp_after_switch = Some(params["mcpServers"].clone());
        self.op(
            Some(Pending::Load(id.clone())),
            json!({"type": "resume_session", "session_id": wanted}),
        )?;
        Ok(None)
    }

    fn after_switch(&mut self, params: &Value) {
        let servers = &params["mcpServers"];
        if servers.as_array().is_some_and(|s| !s.is_empty()) {
            self.ops.add_mcp_servers(&self.session_id(), servers);
        }
        if let Some(configured) = &self.configured {
            self.after_answer
                .push(updates::commands(&configured["commands"]));
        }
    }

    fn replay(&self) -> Result<(), RpcError> {
        let history = self
            .configured
            .as_ref()
            .map(|c| c["history"].clone())
            .unwrap_or_default();
        for message in history.as_array().into_iter().flatten() {
            for update in updates::replay(message) {
                self.update(update)
                    .map_err(|e| RpcError::internal(e.to_string()))?;
            }
        }
        Ok(())
    }

    fn list(&mut self, id: &Value, params: &Value) -> Answer {
        let cwd = params["cwd"].as_str().map(str::to_string);
        self.op(
            Some(Pending::List(id.clone(), cwd.clone())),
            json!({"type": "list_sessions", "all": cwd.is_some()}),
        )?;
        Ok(None)
    }

    fn check_session(&self, params: &Value) -> Result<(), RpcError> {
        match params["sessionId"].as_str() {
            Some(id) if id == self.session_id() => Ok(()),
            Some(id) => Err(RpcError::invalid_params(format!(
                "no open session {id}; uji serves one session at a time ({}): session/load switches",
                self.session_id()
            ))),
            None => Err(RpcError::invalid_params("sessionId is required")),
        }
    }

    fn prompt(&mut self, id: &Value, params: &Value) -> Answer {
        self.check_session(params)?;
        if self.prompt_op.is_some() {
            return Err(RpcError::invalid_params(
                "a prompt is already running in this session; session/cancel stops it",
            ));
        }
        let message = prompt::from_blocks(&params["prompt"])
            .map_err(|e| RpcError::invalid_params(e.to_string()))?;
        self.fresh = false;
        let op = match self.command_of(&message.text) {
            Some((name, args)) => {
                let op = json!({"type": "run_command", "name": name, "args": args});
                self.op(Some(Pending::Command(id.clone())), op)?
            }
            None => {
                let op =
                    json!({"type": "user_message", "text": message.text, "images": message.images});
                self.op(Some(Pending::Prompt(id.clone())), op)?
            }
        };
        self.prompt_op = Some(op);
        Ok(None)
    }

    /// `/name args` when `name` is one of the session's slash commands.
    fn command_of(&self, text: &str) -> Option<(String, String)> {
        let rest = text.strip_prefix('/')?;
        let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        let commands = &self.configured.as_ref()?["commands"];
        commands
            .as_array()?
            .iter()
            .any(|c| c["name"] == name)
            .then(|| (name.to_string(), args.trim().to_string()))
    }

    fn mode(&self) -> &'static str {
        if self.plan { "plan" } else { "default" }
    }

    fn set_mode(&mut self, id: &Value, params: &Value) -> Answer {
        self.check_session(params)?;
        let mode = params["modeId"].as_str().unwrap_or("");
        if mode != "plan" && mode != "default" {
            return Err(RpcError::new(
                INVALID_PARAMS,
                format!("no mode {mode:?}; uji has default and plan"),
            ));
        }
        if mode == self.mode() {
            return Ok(Some(json!({})));
        }
        if self.command_of("/plan").is_none() {
            return Err(RpcError::invalid_params(
                "plan mode is not set up: add require(\"uji.planmode\").setup() to init.lua",
            ));
        }
        let op = json!({"type": "run_command", "name": "plan", "args": ""});
        self.op(Some(Pending::SetMode(id.clone(), mode.to_string())), op)?;
        Ok(None)
    }

    fn notification(&mut self, method: &str, params: &Value) -> std::io::Result<()> {
        if method == "session/cancel" && self.check_session(params).is_ok() {
            if let Err(e) = self.op(None, json!({"type": "interrupt"})) {
                crate::log_warn(&format!("cancel: {e}"));
            }
        } else if method != "session/cancel" {
            crate::log_warn(&format!("ignored notification {method}"));
        }
        Ok(())
    }

    fn permission_answer(
        &mut self,
        id: &Value,
        result: Result<Value, Value>,
    ) -> std::io::Result<()> {
        let Some(call_id) = id.as_u64().and_then(|n| self.questions.remove(&n)) else {
            crate::log_warn(&format!("answer to an unknown request {id}"));
            return Ok(());
        };
        let decision = match &result {
            Ok(r) if r["outcome"]["outcome"] == "selected" => r["outcome"]["optionId"]
                .as_str()
                .filter(|d| matches!(*d, "allow_once" | "allow_session"))
                .unwrap_or("deny"),
            // Cancelled or an error: the question is denied.
            _ => "deny",
        };
        let op = json!({"type": "approval", "call_id": call_id, "decision": decision});
        if let Err(e) = self.op(None, op) {
            crate::log_warn(&format!("approval for {call_id}: {e}"));
        }
        Ok(())
    }
}

/// uji's events.
impl Agent<'_> {
    /// Handles one event from uji; `false` once the session has closed.
    pub fn event(&mut self, event: &Value) -> std::io::Result<bool> {
        match event["type"].as_str().unwrap_or("") {
            "session_configured" => self.configured_event(event)?,
            "ack" => self.ack(event)?,
            "error" => self.op_error(event)?,
            "delta" => self.update(updates::message_chunk(event["text"].as_str().unwrap_or("")))?,
            "reasoning" => {
                self.update(updates::thought_chunk(event["text"].as_str().unwrap_or("")))?
            }
            "tool_started" => self.tool_started(event)?,
            "approval_request" => self.approval_request(event)?,
            "approval_resolved" => self.approval_resolved(event)?,
            "tool_finished" => self.tool_finished(event)?,
            "usage" => {
                if let Some(update) = updates::usage(event) {
                    self.update(update)?;
                }
            }
            "status" if event["name"] == "plan" => {
                self.plan = event["text"].is_string();
                self.update(updates::mode(self.mode()))?;
            }
            "notice" => crate::log_info(&format!("notice: {}", event["text"])),
            "turn_finished" => self.turn_finished(event)?,
            "model_changed" => self.model_changed(&event["model"])?,
            "closed" => return Ok(false),
            _ => {}
        }
        Ok(true)
    }

    fn configured_event(&mut self, event: &Value) -> std::io::Result<()> {
        self.configured = Some(event.clone());
        self.plan = event["status"]["plan"].is_string();
        let listing = self.pending.values().any(|p| matches!(p, Pending::Models));
        if self.models.is_none()
            && !listing
            && let Err(e) = self.op(Some(Pending::Models), json!({"type": "list_models"}))
        {
            crate::log_warn(&format!("cannot list the models: {e}"));
            self.models = Some(Vec::new());
        }
        self.answer_initialize()?;
        let params = json!({"mcpServers": self.mcp_after_switch.take()});
        let switch = self.pending.iter().find_map(|(op, p)| match p {
            Pending::NewSession(_) | Pending::Load(_) => Some(op.clone()),
            _ => None,
        });
        let Some(pending) = switch.and_then(|op| self.pending.remove(&op)) else {
            return Ok(());
        };
        match pending {
            Pending::NewSession(id) => {
                self.after_switch(&params);
                let answer = self.session_answer(true);
                self.answer(&id, answer)
            }
            Pending::Load(id) => {
                if let Err(e) = self.replay() {
                    return self.out.fail(&id, &e);
                }
                self.after_switch(&params);
                let answer = self.session_answer(false);
                self.answer(&id, answer)
            }
            _ => Ok(()),
        }
    }

    fn answer_initialize(&mut self) -> std::io::Result<()> {
        if self.models.is_none() || self.configured.is_none() {
            return Ok(());
        }
        match self.waiting_initialize.take() {
            Some(id) => self.out.answer(&id, self.capabilities()),
            None => Ok(()),
        }
    }

    fn model_changed(&mut self, model: &Value) -> std::io::Result<()> {
        if let Some(configured) = self.configured.as_mut() {
            configured["model"] = model.clone();
        }
        match self.config_options() {
            Some(options) => self
                .update(json!({"sessionUpdate": "config_option_update", "configOptions": options})),
            None => Ok(()),
        }
    }

    fn ack(&mut self, event: &Value) -> std::io::Result<()> {
        let op = event["op_id"].as_str().unwrap_or("");
        // A prompt is answered by turn_finished; new and load by session_configured.
        if let Some(Pending::Prompt(_) | Pending::NewSession(_) | Pending::Load(_)) =
            self.pending.get(op)
        {
            return Ok(());
        }
        let Some(pending) = self.pending.remove(op) else {
            return Ok(());
        };
        let result = &event["result"];
        match pending {
            Pending::Prompt(_) | Pending::NewSession(_) | Pending::Load(_) => Ok(()),
            Pending::Command(id) => {
                self.prompt_op = None;
                self.update(updates::message_chunk(
                    result["output"].as_str().unwrap_or(""),
                ))?;
                self.out.answer(&id, json!({"stopReason": "end_turn"}))
            }
            Pending::List(id, cwd) => self
                .out
                .answer(&id, crate::sessions::list(result, cwd.as_deref())),
            Pending::Models => {
                self.models = Some(result["models"].as_array().cloned().unwrap_or_default());
                self.answer_initialize()
            }
            Pending::SetModel(id) => {
                if let Some(configured) = self.configured.as_mut() {
                    configured["model"] = result["model"].clone();
                }
                let options = self.config_options().unwrap_or_default();
                self.out.answer(&id, json!({"configOptions": options}))
            }
            Pending::SetMode(id, mode) => {
                self.plan = mode == "plan";
                self.update(updates::mode(self.mode()))?;
                self.out.answer(&id, json!({}))
            }
        }
    }

    fn op_error(&mut self, event: &Value) -> std::io::Result<()> {
        let op = event["op_id"].as_str().unwrap_or("");
        let message = event["message"]
            .as_str()
            .unwrap_or("uji refused the request");
        let Some(pending) = self.pending.remove(op) else {
            crate::log_warn(&format!("uji refused {op}: {message}"));
            return Ok(());
        };
        if self.prompt_op.as_deref() == Some(op) {
            self.prompt_op = None;
        }
        let id = match pending {
            Pending::Prompt(id)
            | Pending::Command(id)
            | Pending::NewSession(id)
            | Pending::Load(id) => id,
            Pending::List(id, _) | Pending::SetMode(id, _) | Pending::SetModel(id) => id,
            Pending::Models => {
                self.models = Some(Vec::new());
                return self.answer_initialize();
            }
        };
        self.out.fail(&id, &RpcError::internal(message))
    }

    fn tool_started(&mut self, event: &Value) -> std::io::Result<()> {
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
        self.update(updates::tool_call(
            call_id,
            tool,
            verb,
            subject,
            &self.cwd(),
        ))?;
        if event["decision"] == "allow" {
            self.update(updates::status(call_id, "in_progress"))?;
        }
        Ok(())
    }

    fn approval_request(&mut self, event: &Value) -> std::io::Result<()> {
        let call_id = event["call_id"].as_str().unwrap_or("").to_string();
        let tool = event["tool"].as_str().unwrap_or("");
        let verb = event["verb"].as_str().unwrap_or("");
        let subject = event["subject"].as_str().unwrap_or("");
        let mut tool_call = updates::tool_call(&call_id, tool, verb, subject, &self.cwd());
        tool_call["rawInput"] = event["args"].clone();
        if let Some(obj) = tool_call.as_object_mut() {
            obj.remove("sessionUpdate");
        }
        self.next_request += 1;
        self.questions.insert(self.next_request, call_id);
        self.out.request(
            self.next_request,
            "session/request_permission",
            json!({
                "sessionId": self.session_id(),
                "toolCall": tool_call,
                "options": [
                    {"optionId": "allow_once", "name": "Allow once", "kind": "allow_once"},
                    {"optionId": "allow_session", "name": "Allow for this session", "kind": "allow_always"},
                    {"optionId": "deny", "name": "Reject", "kind": "reject_once"},
                ],
            }),
        )
    }

    fn approval_resolved(&mut self, event: &Value) -> std::io::Result<()> {
        let call_id = event["call_id"].as_str().unwrap_or("");
        // A withdrawn or timed-out question no longer waits for the editor.
        self.questions.retain(|_, c| c != call_id);
        let allowed = event["decision"]
            .as_str()
            .is_some_and(|d| d.starts_with("allow"));
        if allowed {
            self.update(updates::status(call_id, "in_progress"))?;
        }
        Ok(())
    }

    fn tool_finished(&mut self, event: &Value) -> std::io::Result<()> {
        let call_id = event["call_id"].as_str().unwrap_or("");
        let call = self.calls.remove(call_id);
        let is_error = event["is_error"] == true;
        let diff = call
            .filter(|c| !is_error && updates::kind(&c.tool) == "edit")
            .and_then(|c| {
                let path = c.path?;
                let after = read_small(&path)?;
                Some(updates::diff(&path, c.before.as_deref(), &after))
            });
        let summary = event["summary"].as_str().unwrap_or("");
        self.update(updates::finished(call_id, summary, is_error, diff))
    }

    fn turn_finished(&mut self, event: &Value) -> std::io::Result<()> {
        let Some(op) = self.prompt_op.take() else {
            return Ok(());
        };
        let Some(Pending::Prompt(id)) = self.pending.remove(&op) else {
            return Ok(());
        };
        if let Some(error) = event["error"].as_str() {
            return self.out.fail(&id, &RpcError::internal(error));
        }
        let reason = if event["interrupted"] == true {
            "cancelled"
        } else {
            "end_turn"
        };
        self.out.answer(&id, json!({"stopReason": reason}))
    }
}

/// Editors may name the directory through a symlink or with a trailing slash.
fn same_dir(a: &str, b: &str) -> bool {
    let canonical = |p: &str| std::fs::canonicalize(p).unwrap_or_else(|_| p.into());
    canonical(a) == canonical(b)
}

/// A file's text for a diff, when it exists, is text and is not huge.
fn read_small(path: &str) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if meta.len() > DIFF_LIMIT {
        return None;
    }
    std::fs::read_to_string(path).ok()
}
