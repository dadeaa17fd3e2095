//! The host as a plugin sees it, and frontends.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::Value;
use uji_abi::__private::TD_Opaque;
use uji_abi::{
    CommandBox, Fault, FrontendBox, FrontendSessionBox, HookBox, HostBox, ROption, RResult, RStr,
    RString, ToolBox, WireBox,
};
use uji_protocol::frontend::{Event, Op};
use uji_protocol::{HookOptions, LogLevel};

use crate::guard::guard_result;
use crate::services::{
    ModelChoice, ModelUse, Provider, ProviderAdd, ServeOptions, Service, ServiceError,
    ServiceRequest, SessionInfo, SessionInfoRequest, ToolDisable, ToolEnable, ToolPolicy,
};
use crate::tool::{Tool, ToolAdapter};
use crate::wire::{Wire, WireAdapter};

/// What uji offers a plugin. Cheap to clone; keep it to call back later
/// (notices, logs, host services) from any thread.
#[derive(Clone)]
pub struct Host {
    inner: Arc<HostBox>,
}

fn into_result(result: RResult<(), RString>) -> Result<(), String> {
    result.into_result().map_err(String::from)
}

impl Host {
    pub(crate) fn new(inner: HostBox) -> Self {
        Host {
            inner: Arc::new(inner),
        }
    }

    /// Registers a tool. Fails when another plugin already registered the name.
    pub fn register_tool<T: Tool>(&self, tool: T) -> Result<(), String> {
        let boxed = ToolBox::from_value(ToolAdapter(Arc::new(tool)), TD_Opaque);
        into_result(self.inner.register_tool(boxed))
    }

    /// Registers a model-API adapter under `name`.
    pub fn register_wire<W: Wire>(&self, name: &str, wire: W) -> Result<(), String> {
        let boxed = WireBox::from_value(WireAdapter(Arc::new(wire)), TD_Opaque);
        into_result(self.inner.register_wire(RString::from(name), boxed))
    }

    /// Registers a user interface under `name` (`uji --frontend NAME`).
    pub fn register_frontend<F: Frontend>(&self, name: &str, frontend: F) -> Result<(), String> {
        let boxed = FrontendBox::from_value(FrontendAdapter(frontend), TD_Opaque);
        into_result(self.inner.register_frontend(RString::from(name), boxed))
    }

    /// Adds a handler for `event`. It receives the payload and returns a
    /// value (`Value::Null` passes to the next handler).
    pub fn on<F>(&self, event: &str, options: HookOptions, handler: F) -> Result<(), String>
    where
        F: Fn(Value) -> Result<Value, String> + Send + Sync + 'static,
    {
        let options = serde_json::to_string(&options).map_err(|e| e.to_string())?;
        let boxed = HookBox::from_value(HookAdapter(Box::new(handler)), TD_Opaque);
        into_result(
            self.inner
                .register_hook(RString::from(event), RString::from(options), boxed),
        )
    }

    /// Adds a slash command. The handler gets the text after the name.
    pub fn register_command<F>(
        &self,
        name: &str,
        description: &str,
        handler: F,
    ) -> Result<(), String>
    where
        F: Fn(&str) -> Result<String, String> + Send + Sync + 'static,
    {
        let boxed = CommandBox::from_value(CommandAdapter(Box::new(handler)), TD_Opaque);
        into_result(self.inner.register_command(
            RString::from(name),
            RString::from(description),
            boxed,
        ))
    }

    /// Shows a notice to the user.
    pub fn notify(&self, text: &str) {
        self.inner.notify(RStr::from(text));
    }

    /// Writes to uji's log.
    pub fn log(&self, level: LogLevel, message: &str) {
        self.inner.log(level.to_u8(), RStr::from(message));
    }

    /// Reads a configuration value.
    pub fn config(&self, key: &str) -> Option<Value> {
        match self.inner.config(RStr::from(key)) {
            ROption::RSome(json) => serde_json::from_str(json.as_str()).ok(),
            ROption::RNone => None,
        }
    }

    /// Calls a host service by name with JSON parameters. Prefer
    /// [`Host::service`], which checks the shapes at compile time.
    pub fn call(&self, method: &str, params: &Value) -> Result<Value, String> {
        let params = serde_json::to_string(params).map_err(|e| e.to_string())?;
        let answer = self
            .inner
            .call(RStr::from(method), RStr::from(params.as_str()))
            .into_result()
            .map_err(String::from)?;
        serde_json::from_str(answer.as_str()).map_err(|e| format!("{method}: bad answer: {e}"))
    }
}

impl Host {
    /// Calls the host service `S` (see [`crate::services`]) and decodes its
    /// answer. The request travels as JSON through [`Host::call`].
    pub fn service<S: Service>(&self, request: &S) -> Result<S::Answer, ServiceError> {
        let encoding = |e: serde_json::Error| ServiceError::Encoding {
            method: S::METHOD,
            message: e.to_string(),
        };
        let params = serde_json::to_string(request).map_err(encoding)?;
        let answer = self
            .inner
            .call(RStr::from(S::METHOD), RStr::from(params.as_str()))
            .into_result()
            .map_err(|e| ServiceError::from_host(S::METHOD, e.into()))?;
        serde_json::from_str(answer.as_str()).map_err(encoding)
    }

    /// `provider.add`: registers a provider and its models, so `--model
    /// PROVIDER/MODEL` selects it.
    pub fn add_provider(&self, provider: Provider) -> Result<(), ServiceError> {
        self.service(&ProviderAdd(provider))
    }

    /// `model.use`: chooses `"provider/model"` (or `"provider"`, its default
    /// model) for the next requests.
    pub fn use_model(&self, choice: &str) -> Result<ModelChoice, ServiceError> {
        self.service(&ModelUse::new(choice))
    }

    /// `tool.policy`: adds rules (`{tool: {allow, ask, deny, default}}`) to
    /// the rule set `set` (`default` when `None`); answers the rules that
    /// were not applied.
    pub fn set_policy(&self, rules: Value, set: Option<&str>) -> Result<Vec<String>, ServiceError> {
        let request = ToolPolicy {
            rules,
            name: set.map(str::to_string),
        };
        Ok(self.service(&request)?.problems)
    }

    /// `tool.disable`: no call to these tools runs, whatever the rules say.
    pub fn disable_tools(&self, names: &[&str]) -> Result<(), ServiceError> {
        self.service(&ToolDisable {
            names: names.iter().map(|n| n.to_string()).collect(),
        })
    }

    /// `tool.enable`: undoes [`Host::disable_tools`].
    pub fn enable_tools(&self, names: &[&str]) -> Result<(), ServiceError> {
        self.service(&ToolEnable {
            names: names.iter().map(|n| n.to_string()).collect(),
        })
    }

    /// `session.info`: facts about the running session.
    pub fn session_info(&self) -> Result<SessionInfo, ServiceError> {
        self.service(&SessionInfoRequest {})
    }

    /// Serves the host service `S` to every plugin (and core), since plugin
    /// ABI 1.1: a caller's request is decoded into `S` (a request of another
    /// shape is refused with `S::SHAPE`, naming the method) and `handler`'s
    /// answer is encoded as `S::Answer`. An `Err` reaches the caller as the
    /// service's error, so say what to do. The handler runs on the caller's
    /// thread, perhaps on several at once. Fails when core or another
    /// plugin serves `S`.
    pub fn serve<S, F>(&self, handler: F) -> Result<(), String>
    where
        S: Service,
        F: Fn(S) -> Result<S::Answer, String> + Send + Sync + 'static,
    {
        self.serve_json(S::METHOD, move |_caller, params| {
            let request = crate::services::decode_params::<S>(params).map_err(|e| e.to_string())?;
            let answer = handler(request)?;
            serde_json::to_value(answer).map_err(|e| format!("cannot encode the answer: {e}"))
        })
    }

    /// Serves `method` with JSON in and out; `handler` also learns which
    /// plugin called (`caller`). Prefer [`Host::serve`], whose request and
    /// answer types both sides share.
    pub fn serve_json<F>(&self, method: &str, handler: F) -> Result<(), String>
    where
        F: Fn(&str, Value) -> Result<Value, String> + Send + Sync + 'static,
    {
        let options = ServeOptions { serve: true };
        let options = serde_json::to_string(&options).map_err(|e| e.to_string())?;
        let boxed = HookBox::from_value(ServiceAdapter(Box::new(handler)), TD_Opaque);
        into_result(
            self.inner
                .register_hook(RString::from(method), RString::from(options), boxed),
        )
    }
}

type ServiceFn = Box<dyn Fn(&str, Value) -> Result<Value, String> + Send + Sync>;

/// A service handler as the hook the host calls with a `ServiceRequest`.
struct ServiceAdapter(ServiceFn);

impl uji_abi::Hook for ServiceAdapter {
    fn call(&self, request_json: RStr<'_>) -> RResult<RString, Fault> {
        guard_result(|| {
            let request: ServiceRequest = serde_json::from_str(request_json.as_str())
                .map_err(|e| format!("the request is not a service request: {e}"))?;
            let answer = (self.0)(&request.caller, request.params)?;
            serde_json::to_string(&answer).map_err(|e| e.to_string())
        })
        .map(RString::from)
        .into()
    }
}

type HookFn = Box<dyn Fn(Value) -> Result<Value, String> + Send + Sync>;
type CommandFn = Box<dyn Fn(&str) -> Result<String, String> + Send + Sync>;

struct HookAdapter(HookFn);

impl uji_abi::Hook for HookAdapter {
    fn call(&self, payload_json: RStr<'_>) -> RResult<RString, Fault> {
        let payload: Value = serde_json::from_str(payload_json.as_str()).unwrap_or(Value::Null);
        guard_result(|| {
            let answer = (self.0)(payload)?;
            serde_json::to_string(&answer).map_err(|e| e.to_string())
        })
        .map(RString::from)
        .into()
    }
}

struct CommandAdapter(CommandFn);

impl uji_abi::Command for CommandAdapter {
    fn run(&self, args: RStr<'_>) -> RResult<RString, Fault> {
        guard_result(|| (self.0)(args.as_str()))
            .map(RString::from)
            .into()
    }
}

/// A user interface. `run` is called on a thread of its own and returns when
/// the user quits.
pub trait Frontend: Send + Sync + 'static {
    fn run(&self, session: FrontendSession) -> Result<(), String>;
}

/// Why talking to the session failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrontendError {
    /// The session has ended (after `closed`, or uji is going away): stop.
    #[error("{0}")]
    Ended(String),
    /// An operation could not be encoded.
    #[error("could not encode the operation: {0}")]
    Encoding(String),
}

/// The frontend's connection to the agent: [`Op`]s in, [`Event`]s out
/// (docs/frontends.md). The JSON crosses the plugin boundary; this type
/// encodes and decodes it.
pub struct FrontendSession {
    inner: FrontendSessionBox,
    next_id: AtomicU64,
}

impl FrontendSession {
    /// Sends an operation and returns the id its `ack` or `error` will
    /// name (`f1`, `f2`…).
    pub fn submit(&self, op: &Op) -> Result<String, FrontendError> {
        let id = format!("f{}", self.next_id.fetch_add(1, Ordering::Relaxed));
        self.submit_with_id(&id, op)?;
        Ok(id)
    }

    /// Sends an operation under an id the frontend chose (unique among its
    /// operations still waiting for an answer).
    pub fn submit_with_id(&self, id: &str, op: &Op) -> Result<(), FrontendError> {
        #[derive(serde::Serialize)]
        struct WithId<'a> {
            id: &'a str,
            #[serde(flatten)]
            op: &'a Op,
        }
        let json = serde_json::to_string(&WithId { id, op })
            .map_err(|e| FrontendError::Encoding(e.to_string()))?;
        self.submit_raw(&json)
    }

    /// Waits up to `timeout` for the next event: `Ok(None)` on timeout,
    /// [`FrontendError::Ended`] once the session has ended. An event this
    /// SDK does not know (from a newer uji), or one it cannot read, is
    /// [`Event::Unknown`]: skip it.
    pub fn next_event(&self, timeout: Duration) -> Result<Option<Event>, FrontendError> {
        Ok(self
            .next_event_json(timeout)?
            .map(|json| serde_json::from_str(&json).unwrap_or(Event::Unknown)))
    }

    /// Sends an operation as JSON, as written (for a frontend that speaks
    /// an older protocol, or relays operations it does not read).
    pub fn submit_json(&self, op: &Value) -> Result<(), FrontendError> {
        let json = serde_json::to_string(op).map_err(|e| FrontendError::Encoding(e.to_string()))?;
        self.submit_raw(&json)
    }

    /// The next event as uji sent it, undecoded.
    pub fn next_event_json(&self, timeout: Duration) -> Result<Option<String>, FrontendError> {
        let timeout_ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
        match self.inner.next_event(timeout_ms).into_result() {
            Ok(ROption::RSome(json)) => Ok(Some(json.into())),
            Ok(ROption::RNone) => Ok(None),
            Err(message) => Err(FrontendError::Ended(message.into())),
        }
    }

    fn submit_raw(&self, json: &str) -> Result<(), FrontendError> {
        self.inner
            .submit(RStr::from(json))
            .into_result()
            .map_err(|message| FrontendError::Ended(message.into()))
    }
}

struct FrontendAdapter<F: Frontend>(F);

impl<F: Frontend> uji_abi::Frontend for FrontendAdapter<F> {
    fn run(&self, session: FrontendSessionBox) -> RResult<(), Fault> {
        let session = FrontendSession {
            inner: session,
            next_id: AtomicU64::new(1),
        };
        guard_result(|| self.0.run(session)).into()
    }
}
