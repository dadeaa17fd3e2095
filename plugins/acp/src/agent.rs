//! The ACP agent's state: editor requests become frontend operations
//! (`requests`), frontend events become `session/update` notifications and
//! answers (`events`). One uji session is served at a time (the frontend
//! contract's rule), so ACP's sessionId is always uji's current session id.

mod dialogs;
mod events;
mod requests;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use agent_client_protocol::v1::schema::{
    InitializeResponse, ListSessionsResponse, LoadSessionResponse, NewSessionResponse,
    PromptResponse, SessionNotification, SessionUpdate, SetSessionConfigOptionResponse,
    SetSessionModeResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, ErrorCode, JsonRpcResponse};
use serde::de::DeserializeOwned;
use serde_json::Value;
use uji_protocol::ApprovalMode;
use uji_protocol::frontend::{ModelEntry, Op, SessionConfigured};

use crate::Settings;
use crate::connection::{Input, Inputs};
use crate::editor_fs::EditorLink;
use crate::mcp;

/// What the agent sends to uji.
pub trait Ops {
    /// Sends `op` under the agent's id for it, which its answer names.
    fn submit(&self, id: &str, op: &Op) -> Result<(), String>;
    /// Hands one editor MCP server to the MCP plugin.
    fn add_mcp_server(&self, server: &mcp::Server);
}

/// Whether the loop goes on after an input.
pub enum Flow {
    Go,
    Done(Result<(), String>),
}

/// Operations waiting for uji's answer, by operation id.
enum Pending {
    Prompt(Responder<PromptResponse>),
    Command(Responder<PromptResponse>),
    NewSession(Responder<NewSessionResponse>),
    Load(Responder<LoadSessionResponse>),
    List(Responder<ListSessionsResponse>, Option<String>),
    SetMode(Responder<SetSessionModeResponse>),
    Models,
    SetModel(Responder<SetSessionConfigOptionResponse>),
}

struct Call {
    tool: String,
    path: Option<String>,
    before: Option<String>,
}

pub struct Agent<'a> {
    cx: ConnectionTo<Client>,
    ops: &'a dyn Ops,
    tx: Inputs,
    settings: Settings,
    /// The editor as the file hooks reach it (editor_fs).
    editor: Arc<EditorLink>,
    configured: Option<Box<SessionConfigured>>,
    waiting_initialize: Option<Responder<InitializeResponse>>,
    fresh: bool,
    /// The approval mode core reported (`session_configured`, `mode_changed`).
    mode: ApprovalMode,
    closing: bool,
    next_op: u64,
    pending: HashMap<String, Pending>,
    /// Calls whose permission question is still open in the editor.
    asking: HashSet<String>,
    /// Plugins' dialogs whose permission question is open in the editor.
    dialogs: HashMap<String, uji_protocol::frontend::DialogKind>,
    calls: HashMap<String, Call>,
    prompt_op: Option<String>,
    mcp_after_switch: Vec<mcp::Server>,
    /// Updates for a session the editor learns of by the answer being sent.
    after_answer: Vec<Value>,
    /// The models of `list_models`, once uji has answered it.
    models: Option<Vec<ModelEntry>>,
    /// The answer's text so far in this turn, for plan updates.
    turn_text: String,
}

/// An error for the editor: a JSON-RPC code and uji's message.
pub fn error(code: ErrorCode, message: impl Into<String>) -> agent_client_protocol::Error {
    agent_client_protocol::Error::new(code, message)
}

pub fn invalid_params(message: impl Into<String>) -> agent_client_protocol::Error {
    error(ErrorCode::INVALID_PARAMS, message)
}

pub fn internal(message: impl Into<String>) -> agent_client_protocol::Error {
    error(ErrorCode::INTERNAL_ERROR, message)
}

/// A payload built as JSON, checked against the schema type it must be.
fn typed<T: DeserializeOwned>(value: Value) -> Result<T, agent_client_protocol::Error> {
    serde_json::from_value(value).map_err(|e| {
        crate::log_warn(&format!("uji built a message the schema refuses: {e}"));
        internal(format!(
            "uji built a malformed answer ({e}); please report it"
        ))
    })
}

/// Answers a request with `answer`, or with its error.
pub fn reply<T>(responder: Responder<T>, answer: Result<Value, agent_client_protocol::Error>)
where
    T: JsonRpcResponse + DeserializeOwned,
{
    let sent = match answer.and_then(typed::<T>) {
        Ok(result) => responder.respond(result),
        Err(e) => responder.respond_with_error(e),
    };
    if let Err(e) = sent {
        crate::log_warn(&format!("cannot answer the editor: {e}"));
    }
}

impl<'a> Agent<'a> {
    pub fn new(
        cx: ConnectionTo<Client>,
        ops: &'a dyn Ops,
        tx: Inputs,
        settings: Settings,
        editor: Arc<EditorLink>,
    ) -> Self {
        Agent {
            cx,
            ops,
            tx,
            settings,
            editor,
            configured: None,
            waiting_initialize: None,
            fresh: true,
            mode: ApprovalMode::Ask,
            closing: false,
            next_op: 0,
            pending: HashMap::new(),
            asking: HashSet::new(),
            dialogs: HashMap::new(),
            calls: HashMap::new(),
            prompt_op: None,
            mcp_after_switch: Vec::new(),
            after_answer: Vec::new(),
            models: None,
            turn_text: String::new(),
        }
    }

    /// Tells uji this frontend shows dialogs (as permission questions, or
    /// refused with a reason).
    pub fn hello(&mut self) {
        if let Err(e) = self.op(None, &Op::Hello { dialogs: true }) {
            crate::log_warn(&format!("cannot say hello: {e}"));
        }
    }

    /// Handles one input of the loop.
    pub fn input(&mut self, input: Input) -> Flow {
        match input {
            Input::Request(request) => self.request(*request),
            Input::Cancel(cancel) => self.cancel(&cancel),
            Input::Permission(call_id, answer) => self.permission_answer(call_id, answer),
            Input::Editor(ask) => self.editor_ask(ask),
            Input::Event(event) => return self.event(*event),
            Input::StdinClosed => {
                self.closing = true;
                self.shutdown();
            }
            Input::SessionEnded(e) => {
                return Flow::Done(if self.closing { Ok(()) } else { Err(e) });
            }
        }
        Flow::Go
    }

    fn shutdown(&mut self) {
        if let Err(e) = self.ops.submit("acp-shutdown", &Op::Shutdown) {
            crate::log_warn(&format!("cannot end the session: {e}"));
        }
    }

    fn session_id(&self) -> String {
        self.configured
            .as_ref()
            .map_or(String::new(), |c| c.id.clone())
    }

    fn cwd(&self) -> String {
        self.configured
            .as_ref()
            .map_or(String::new(), |c| c.cwd.clone())
    }

    fn op(
        &mut self,
        pending: Option<Pending>,
        op: &Op,
    ) -> Result<String, agent_client_protocol::Error> {
        self.next_op += 1;
        let id = format!("acp-{}", self.next_op);
        self.ops.submit(&id, op).map_err(internal)?;
        if let Some(pending) = pending {
            self.pending.insert(id.clone(), pending);
        }
        Ok(id)
    }

    /// Sends one `session/update`. A closed connection means the editor
    /// went away: the session is ended as if it had quit.
    fn update(&mut self, update: Value) {
        let notification = typed::<SessionUpdate>(update)
            .map(|update| SessionNotification::new(self.session_id(), update));
        let sent = notification.and_then(|n| self.cx.send_notification(n));
        if let Err(e) = sent
            && !self.closing
        {
            crate::log_warn(&format!("cannot send an update ({e}); ending the session"));
            self.closing = true;
            self.shutdown();
        }
    }

    /// Sends the updates that had to wait for an answer.
    fn flush_after_answer(&mut self) {
        for update in std::mem::take(&mut self.after_answer) {
            self.update(update);
        }
    }
}
