//! The host side of every call into a plugin.
//!
//! Calls go through the plugin's vtable; the SDK catches panics on the other
//! side and reports them as faults. Here a fault marked `panicked` marks the
//! plugin failed, and asynchronous completions are turned into oneshot
//! channels: a completion the plugin drops without finishing still wakes the
//! waiting side, with an error, so a call can never hang on a lost callback.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;
use serde_json::Value;
use tokio::sync::oneshot;
use uji_abi::__private::TD_Opaque;
use uji_abi::{
    CancelBox, CommandBox, Fault, FrontendBox, FrontendSessionBox, HookBox, ROption, RResult, RStr,
    RString, ToolBox, ToolCallBox, WireBox, WireReplyBox,
};
use uji_protocol::services::ServiceRequest;
use uji_protocol::wire::{Answer, Failure, WireRequest};
use uji_protocol::{FileDiff, HookOptions, ToolCall, ToolOutput, ToolSpec};

use crate::progress::{self, Paced};
use crate::registry::PluginState;

/// Why a call into a plugin produced no result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallError {
    /// The plugin panicked during this call; it is now marked failed.
    Panicked { plugin: String, message: String },
    /// The plugin panicked earlier this session and is no longer called.
    PluginFailed { plugin: String, reason: String },
    /// The plugin reported an error.
    Plugin { plugin: String, message: String },
    /// The plugin dropped the completion without finishing it.
    Dropped { plugin: String },
    /// The plugin finished with something that is not valid JSON of the
    /// expected shape.
    BadOutput { plugin: String, message: String },
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Panicked { plugin, message } => write!(
                f,
                "plugin {plugin} panicked: {message}; uji stopped using it for this session. Report the bug to the plugin's author, or remove the plugin"
            ),
            CallError::PluginFailed { plugin, reason } => write!(
                f,
                "plugin {plugin} is disabled for this session because it panicked earlier ({reason}); restart uji to try it again"
            ),
            CallError::Plugin { plugin, message } => write!(f, "plugin {plugin}: {message}"),
            CallError::Dropped { plugin } => write!(
                f,
                "plugin {plugin} dropped the call without finishing it (a bug in the plugin)"
            ),
            CallError::BadOutput { plugin, message } => {
                write!(f, "plugin {plugin} returned an invalid result: {message}")
            }
        }
    }
}

impl std::error::Error for CallError {}

/// Serialises `value` into a buffer of exactly the right size. Tool
/// arguments can be megabytes (a write_file's content), and growing the
/// buffer by doubling would briefly need well over twice that.
fn to_json_exact<T: serde::Serialize>(value: &T) -> Result<String, serde_json::Error> {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    serde_json::to_writer(&mut count, value)?;
    let mut out = Vec::with_capacity(count.0);
    serde_json::to_writer(&mut out, value)?;
    // serde_json writes only valid UTF-8.
    String::from_utf8(out).map_err(|e| serde::ser::Error::custom(e.to_string()))
}

fn check_health(plugin: &PluginState) -> Result<(), CallError> {
    match plugin.failure() {
        Some(reason) => Err(CallError::PluginFailed {
            plugin: plugin.name().to_string(),
            reason,
        }),
        None => Ok(()),
    }
}

fn fault_error(plugin: &PluginState, fault: Fault) -> CallError {
    let message = fault.message.to_string();
    if fault.panicked {
        plugin.mark_failed(&message);
        CallError::Panicked {
            plugin: plugin.name().to_string(),
            message,
        }
    } else {
        CallError::Plugin {
            plugin: plugin.name().to_string(),
            message,
        }
    }
}

fn into_call_result<T>(plugin: &PluginState, result: RResult<T, Fault>) -> Result<T, CallError> {
    result
        .into_result()
        .map_err(|fault| fault_error(plugin, fault))
}

fn bad_output(plugin: &PluginState, message: impl std::fmt::Display) -> CallError {
    CallError::BadOutput {
        plugin: plugin.name().to_string(),
        message: message.to_string(),
    }
}

/// Stops a plugin's work; harmless to call more than once.
pub struct Canceller {
    cancel: Option<CancelBox>,
    flag: Arc<AtomicBool>,
}

impl Canceller {
    pub fn cancel(&self) {
        if self.flag.swap(true, Ordering::SeqCst) {
            return;
        }
        if let Some(cancel) = &self.cancel {
            cancel.cancel();
        }
    }

    pub fn is_cancelled(&self) -> bool {
        self.flag.load(Ordering::SeqCst)
    }
}

// ---- tools -------------------------------------------------------------------

/// Receives a tool's progress lines.
pub type ProgressSink = Arc<dyn Fn(&str) + Send + Sync>;

/// A tool some plugin registered.
pub struct RegisteredTool {
    spec: ToolSpec,
    plugin: Arc<PluginState>,
    tool: ToolBox,
}

impl RegisteredTool {
    /// Reads the tool's spec. A plugin that cannot describe its tool cannot
    /// register it.
    pub(crate) fn new(
        tool: ToolBox,
        plugin: Arc<PluginState>,
    ) -> Result<RegisteredTool, CallError> {
        let json = into_call_result(&plugin, tool.spec())?;
        let mut spec: ToolSpec = serde_json::from_str(json.as_str())
            .map_err(|e| bad_output(&plugin, format!("tool spec: {e}")))?;
        // The schema goes into every model request: one key order, whatever
        // order the plugin built it in, keeps those requests byte-identical.
        spec.parameters = uji_protocol::canonical::sort_keys(std::mem::take(&mut spec.parameters));
        if spec.name.trim().is_empty() {
            return Err(bad_output(&plugin, "tool spec has an empty name"));
        }
        Ok(RegisteredTool { spec, plugin, tool })
    }

    pub fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    pub fn plugin(&self) -> &str {
        self.plugin.name()
    }

    /// The string policy rules match for these arguments.
    pub fn subject(&self, args: &Value) -> Result<String, CallError> {
        check_health(&self.plugin)?;
        let args = to_json_exact(args).map_err(|e| bad_output(&self.plugin, e))?;
        into_call_result(&self.plugin, self.tool.subject(RStr::from(args.as_str())))
            .map(String::from)
    }

    /// The change a call would make, for the approval question.
    pub fn preview(&self, call: &ToolCall) -> Result<Option<FileDiff>, CallError> {
        check_health(&self.plugin)?;
        let call = to_json_exact(call).map_err(|e| bad_output(&self.plugin, e))?;
        let json = into_call_result(&self.plugin, self.tool.preview(RStr::from(call.as_str())))?;
        serde_json::from_str(json.as_str())
            .map_err(|e| bad_output(&self.plugin, format!("preview: {e}")))
    }

    /// Starts a call. The result arrives through the returned [`RunningCall`];
    /// progress lines reach `progress` paced ([`progress::Paced`]) while
    /// [`RunningCall::finished`] is awaited.
    pub fn start(&self, call: &ToolCall, progress: ProgressSink) -> Result<RunningCall, CallError> {
        check_health(&self.plugin)?;
        let call_json = to_json_exact(call).map_err(|e| bad_output(&self.plugin, e))?;
        let (tx, rx) = oneshot::channel();
        let flag = Arc::new(AtomicBool::new(false));
        let paced = Arc::new(Paced::new(progress));
        let handle = ToolCallSlot {
            progress: Arc::clone(&paced),
            cancelled: Arc::clone(&flag),
            done: Mutex::new(Some(tx)),
            plugin: Arc::clone(&self.plugin),
        };
        let handle = ToolCallBox::from_value(handle, TD_Opaque);
        let cancel = into_call_result(
            &self.plugin,
            self.tool.run(RString::from(call_json), handle),
        )?;
        Ok(RunningCall {
            rx,
            canceller: Canceller {
                cancel: cancel.into_option(),
                flag,
            },
            plugin: Arc::clone(&self.plugin),
            progress: paced,
        })
    }
}

/// A tool call in progress.
pub struct RunningCall {
    rx: oneshot::Receiver<Result<ToolOutput, CallError>>,
    canceller: Canceller,
    plugin: Arc<PluginState>,
    progress: Arc<Paced>,
}

impl RunningCall {
    /// Asks the tool to stop (the user interrupted).
    pub fn cancel(&self) {
        self.canceller.cancel();
    }

    /// Waits for the result, meanwhile sending the latest progress line
    /// that waited for its interval.
    pub async fn finished(&mut self) -> Result<ToolOutput, CallError> {
        let mut tick = tokio::time::interval(progress::INTERVAL);
        let received = loop {
            tokio::select! {
                received = &mut self.rx => break received,
                _ = tick.tick() => self.progress.flush(false),
            }
        };
        self.progress.flush(true);
        received.unwrap_or_else(|_| {
            Err(CallError::Dropped {
                plugin: self.plugin.name().to_string(),
            })
        })
    }

    /// Waits for the result on a thread that is not running async code
    /// (progress that waited is sent at the end).
    pub fn wait_blocking(self) -> Result<ToolOutput, CallError> {
        let plugin = self.plugin.name().to_string();
        let received = self.rx.blocking_recv();
        self.progress.flush(true);
        received.unwrap_or(Err(CallError::Dropped { plugin }))
    }
}

struct ToolCallSlot {
    progress: Arc<Paced>,
    cancelled: Arc<AtomicBool>,
    done: Mutex<Option<oneshot::Sender<Result<ToolOutput, CallError>>>>,
    plugin: Arc<PluginState>,
}

impl ToolCallSlot {
    fn complete(&self, result: Result<ToolOutput, CallError>) {
        if let Some(tx) = self.done.lock().take() {
            let _ = tx.send(result);
        }
    }
}

impl uji_abi::ToolCallHandle for ToolCallSlot {
    fn progress(&self, line: RStr<'_>) {
        self.progress.line(line.as_str());
    }

    fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    fn finish(self, result: RResult<RString, Fault>) {
        let result = match result.into_result() {
            Ok(json) => serde_json::from_str::<ToolOutput>(json.as_str())
                .map_err(|e| bad_output(&self.plugin, format!("tool output: {e}"))),
            Err(fault) => Err(fault_error(&self.plugin, fault)),
        };
        self.complete(result);
    }
}

impl Drop for ToolCallSlot {
    fn drop(&mut self) {
        let plugin = self.plugin.name().to_string();
        self.complete(Err(CallError::Dropped { plugin }));
    }
}

// ---- wires -------------------------------------------------------------------

/// Receives a model's streamed deltas.
pub trait WireEvents: Send + Sync {
    fn text(&self, delta: &str);
    fn reasoning(&self, delta: &str);
}

/// How a model request ended without an answer.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamError {
    /// The API failed (core decides whether to retry).
    Failure(Failure),
    /// The wire plugin failed.
    Plugin(CallError),
}

impl std::fmt::Display for StreamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StreamError::Failure(Failure::Http {
                status: Some(status),
                message,
                ..
            }) => write!(f, "http: {status}: {message}"),
            StreamError::Failure(Failure::Http {
                status: None,
                message,
                ..
            }) => {
                write!(f, "http: {message}")
            }
            StreamError::Failure(Failure::Auth { status, message }) => {
                write!(
                    f,
                    "authentication rejected ({status}) - check the api key for this provider"
                )?;
                match message {
                    Some(message) => write!(f, ": {message}"),
                    None => Ok(()),
                }
            }
            StreamError::Failure(Failure::Provider { message }) => write!(f, "provider: {message}"),
            StreamError::Plugin(e) => write!(f, "{e}"),
        }
    }
}

/// A wire some plugin registered.
pub struct RegisteredWire {
    name: String,
    plugin: Arc<PluginState>,
    wire: WireBox,
}

impl RegisteredWire {
    pub(crate) fn new(name: String, wire: WireBox, plugin: Arc<PluginState>) -> RegisteredWire {
        RegisteredWire { name, plugin, wire }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn plugin(&self) -> &str {
        self.plugin.name()
    }

    /// Starts a model request. The request is consumed: it is gone before
    /// the plugin builds its body from the text, so the conversation is
    /// never held here a second time meanwhile.
    pub fn stream(
        &self,
        request: WireRequest,
        events: Arc<dyn WireEvents>,
    ) -> Result<RunningStream, CallError> {
        check_health(&self.plugin)?;
        let json = serde_json::to_string(&request).map_err(|e| bad_output(&self.plugin, e))?;
        drop(request);
        let (tx, rx) = oneshot::channel();
        let flag = Arc::new(AtomicBool::new(false));
        let reply = WireReplySlot {
            events,
            done: Mutex::new(Some(tx)),
            plugin: Arc::clone(&self.plugin),
        };
        let reply = WireReplyBox::from_value(reply, TD_Opaque);
        let cancel = into_call_result(&self.plugin, self.wire.stream(RString::from(json), reply))?;
        Ok(RunningStream {
            rx,
            canceller: Canceller {
                cancel: cancel.into_option(),
                flag,
            },
            plugin: Arc::clone(&self.plugin),
        })
    }
}

/// A model request in progress.
pub struct RunningStream {
    rx: oneshot::Receiver<Result<Answer, StreamError>>,
    canceller: Canceller,
    plugin: Arc<PluginState>,
}

impl RunningStream {
    /// Drops the connection.
    pub fn cancel(&self) {
        self.canceller.cancel();
    }

    pub async fn finished(&mut self) -> Result<Answer, StreamError> {
        match (&mut self.rx).await {
            Ok(result) => result,
            Err(_) => Err(StreamError::Plugin(CallError::Dropped {
                plugin: self.plugin.name().to_string(),
            })),
        }
    }

    pub fn wait_blocking(self) -> Result<Answer, StreamError> {
        let plugin = self.plugin.name().to_string();
        self.rx
            .blocking_recv()
            .unwrap_or(Err(StreamError::Plugin(CallError::Dropped { plugin })))
    }
}

struct WireReplySlot {
    events: Arc<dyn WireEvents>,
    done: Mutex<Option<oneshot::Sender<Result<Answer, StreamError>>>>,
    plugin: Arc<PluginState>,
}

impl WireReplySlot {
    fn complete(&self, result: Result<Answer, StreamError>) {
        if let Some(tx) = self.done.lock().take() {
            let _ = tx.send(result);
        }
    }

    /// Still wanted: not finished, and the caller still waiting (after an
    /// interrupt the receiver is gone and late deltas are dropped).
    fn is_open(&self) -> bool {
        self.done.lock().as_ref().is_some_and(|tx| !tx.is_closed())
    }
}

impl uji_abi::WireReply for WireReplySlot {
    fn text(&self, delta: RStr<'_>) {
        if self.is_open() {
            self.events.text(delta.as_str());
        }
    }

    fn reasoning(&self, delta: RStr<'_>) {
        if self.is_open() {
            self.events.reasoning(delta.as_str());
        }
    }

    fn done(self, answer_json: RString) {
        let result = serde_json::from_str::<Answer>(answer_json.as_str())
            .map_err(|e| StreamError::Plugin(bad_output(&self.plugin, format!("answer: {e}"))));
        self.complete(result);
    }

    fn fail(self, failure_json: RString) {
        let result = match serde_json::from_str::<Failure>(failure_json.as_str()) {
            Ok(failure) => StreamError::Failure(failure),
            Err(e) => StreamError::Plugin(bad_output(&self.plugin, format!("failure: {e}"))),
        };
        self.complete(Err(result));
    }

    fn fault(self, fault: Fault) {
        let error = fault_error(&self.plugin, fault);
        self.complete(Err(StreamError::Plugin(error)));
    }
}

impl Drop for WireReplySlot {
    fn drop(&mut self) {
        let plugin = self.plugin.name().to_string();
        self.complete(Err(StreamError::Plugin(CallError::Dropped { plugin })));
    }
}

// ---- hooks, commands, frontends -------------------------------------------------

/// An event handler some plugin registered.
pub struct RegisteredHook {
    event: String,
    options: HookOptions,
    plugin: Arc<PluginState>,
    hook: HookBox,
}

impl RegisteredHook {
    pub(crate) fn new(
        event: String,
        options: HookOptions,
        hook: HookBox,
        plugin: Arc<PluginState>,
    ) -> RegisteredHook {
        RegisteredHook {
            event,
            options,
            plugin,
            hook,
        }
    }

    pub fn event(&self) -> &str {
        &self.event
    }

    pub fn options(&self) -> &HookOptions {
        &self.options
    }

    pub fn plugin(&self) -> &str {
        self.plugin.name()
    }

    /// Runs the handler; `Value::Null` means "pass".
    pub fn call(&self, payload: &Value) -> Result<Value, CallError> {
        check_health(&self.plugin)?;
        let payload = payload.to_string();
        let json = into_call_result(&self.plugin, self.hook.call(RStr::from(payload.as_str())))?;
        serde_json::from_str(json.as_str())
            .map_err(|e| bad_output(&self.plugin, format!("hook: {e}")))
    }
}

/// A slash command some plugin registered.
pub struct RegisteredCommand {
    name: String,
    description: String,
    plugin: Arc<PluginState>,
    command: CommandBox,
}

impl RegisteredCommand {
    pub(crate) fn new(
        name: String,
        description: String,
        command: CommandBox,
        plugin: Arc<PluginState>,
    ) -> RegisteredCommand {
        RegisteredCommand {
            name,
            description,
            plugin,
            command,
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn description(&self) -> &str {
        &self.description
    }

    pub fn plugin(&self) -> &str {
        self.plugin.name()
    }

    pub fn run(&self, args: &str) -> Result<String, CallError> {
        check_health(&self.plugin)?;
        into_call_result(&self.plugin, self.command.run(RStr::from(args))).map(String::from)
    }
}

/// A host service some plugin serves (ABI 1.1: a hook registered with
/// `serve` in its options, called with a `ServiceRequest`).
pub struct RegisteredService {
    method: String,
    plugin: Arc<PluginState>,
    handler: HookBox,
}

impl RegisteredService {
    pub(crate) fn new(
        method: String,
        handler: HookBox,
        plugin: Arc<PluginState>,
    ) -> RegisteredService {
        RegisteredService {
            method,
            plugin,
            handler,
        }
    }

    pub fn method(&self) -> &str {
        &self.method
    }

    pub fn plugin(&self) -> &str {
        self.plugin.name()
    }

    /// Answers a request `caller` sent. The plugin's own error is the
    /// service's error as written (the caller names the method); a panic
    /// or a broken answer says which plugin is at fault.
    pub fn call(&self, caller: &str, params: &Value) -> Result<Value, String> {
        let answer = check_health(&self.plugin).and_then(|()| {
            let request = ServiceRequest {
                caller: caller.to_string(),
                params: params.clone(),
            };
            let request = serde_json::to_string(&request)
                .map_err(|e| bad_output(&self.plugin, format!("{}: {e}", self.method)))?;
            let handled = self.handler.call(RStr::from(request.as_str()));
            let json = into_call_result(&self.plugin, handled)?;
            serde_json::from_str(json.as_str())
                .map_err(|e| bad_output(&self.plugin, format!("{}: {e}", self.method)))
        });
        answer.map_err(|error| match error {
            CallError::Plugin { message, .. } => message,
            other => other.to_string(),
        })
    }
}

/// The agent as a frontend sees it; core implements this.
pub trait SessionPort: Send + Sync {
    fn submit(&self, op: Value) -> Result<(), String>;
    /// `Ok(None)` on timeout, `Err` once the session has ended.
    fn next_event(&self, timeout_ms: u64) -> Result<Option<Value>, String>;
}

struct SessionPortSlot(Arc<dyn SessionPort>);

impl uji_abi::FrontendSession for SessionPortSlot {
    fn submit(&self, op_json: RStr<'_>) -> RResult<(), RString> {
        let result = serde_json::from_str(op_json.as_str())
            .map_err(|e| format!("invalid operation: {e}"))
            .and_then(|op| self.0.submit(op));
        result.map_err(RString::from).into()
    }

    fn next_event(&self, timeout_ms: u64) -> RResult<ROption<RString>, RString> {
        match self.0.next_event(timeout_ms) {
            Ok(Some(event)) => RResult::ROk(ROption::RSome(RString::from(event.to_string()))),
            Ok(None) => RResult::ROk(ROption::RNone),
            Err(e) => RResult::RErr(RString::from(e)),
        }
    }
}

/// A frontend some plugin registered.
pub struct RegisteredFrontend {
    name: String,
    plugin: Arc<PluginState>,
    frontend: FrontendBox,
}

impl RegisteredFrontend {
    pub(crate) fn new(
        name: String,
        frontend: FrontendBox,
        plugin: Arc<PluginState>,
    ) -> RegisteredFrontend {
        RegisteredFrontend {
            name,
            plugin,
            frontend,
        }
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn plugin(&self) -> &str {
        self.plugin.name()
    }

    /// Runs the frontend until the user quits. Blocks: call it on a thread
    /// of its own.
    pub fn run(&self, session: Arc<dyn SessionPort>) -> Result<(), CallError> {
        check_health(&self.plugin)?;
        let port = FrontendSessionBox::from_value(SessionPortSlot(session), TD_Opaque);
        into_call_result(&self.plugin, self.frontend.run(port))
    }
}
