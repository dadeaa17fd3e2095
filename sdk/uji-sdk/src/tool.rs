//! Tools in plain Rust, and their adapter to the ABI.

use std::sync::Arc;

use serde_json::Value;
use uji_abi::__private::TD_Opaque;
use uji_abi::{CancelBox, Fault, ROption, RResult, RStr, RString, ToolCallBox};
use uji_protocol::{FileDiff, ToolCall, ToolOutput, ToolSpec};

use crate::guard::{guard, guard_result};

/// Stops work in progress. Must be harmless to call twice or after the work
/// has finished.
pub type Canceller = Box<dyn Fn() + Send + Sync>;

/// A model-callable tool.
///
/// The simple path is [`Tool::run`]: uji calls it on a thread of its own, so
/// it may block; long work should check [`ToolContext::is_cancelled`]. A tool
/// that finishes from a callback overrides [`Tool::start`] instead.
pub trait Tool: Send + Sync + 'static {
    /// Name, description, parameter schema, declared policy, display.
    fn spec(&self) -> ToolSpec;

    /// What policy rules match and the transcript shows: a path, a command
    /// line... Defaults to the tool's name. `args` may be any JSON value.
    fn subject(&self, args: &Value) -> String {
        let _ = args;
        self.spec().name
    }

    /// The change the call would make, shown in the approval question.
    fn preview(&self, call: &ToolCall) -> Option<FileDiff> {
        let _ = call;
        None
    }

    /// Runs one call to completion. Bad arguments should come back as
    /// [`ToolOutput::error`], never as a panic.
    fn run(&self, call: ToolCall, ctx: &ToolContext) -> ToolOutput;

    /// Starts one call and returns at once; the call must be finished exactly
    /// once through `ctx`. The default runs [`Tool::run`] on a new thread.
    fn start(self: Arc<Self>, call: ToolCall, ctx: ToolContext) -> Option<Canceller>
    where
        Self: Sized,
    {
        let spawned = std::thread::Builder::new()
            // Not the call id: ids come from the model and may hold bytes a
            // thread name cannot.
            .name("uji-tool".to_string())
            .spawn(move || {
                let result = guard(|| self.run(call, &ctx));
                match result {
                    Ok(output) => ctx.finish(output),
                    Err(fault) => ctx.finish_fault(fault),
                }
            });
        // When the thread cannot start, the closure (and the context in it)
        // is dropped, which the host reports as an unfinished call.
        drop(spawned);
        None
    }
}

/// The plugin's side of one running call.
pub struct ToolContext {
    handle: Option<ToolCallBox>,
}

impl ToolContext {
    pub(crate) fn new(handle: ToolCallBox) -> Self {
        ToolContext {
            handle: Some(handle),
        }
    }

    /// Shows a line under the running tool.
    pub fn progress(&self, line: &str) {
        if let Some(handle) = &self.handle {
            handle.progress(RStr::from(line));
        }
    }

    /// True once the user interrupted this call.
    pub fn is_cancelled(&self) -> bool {
        self.handle
            .as_ref()
            .is_none_or(|handle| handle.is_cancelled())
    }

    /// Finishes the call. Later calls are impossible: this consumes the context.
    pub fn finish(mut self, output: ToolOutput) {
        let Some(handle) = self.handle.take() else {
            return;
        };
        match serde_json::to_string(&output) {
            Ok(json) => handle.finish(RResult::ROk(RString::from(json))),
            Err(e) => handle.finish(RResult::RErr(Fault::error(format!(
                "tool output could not be encoded: {e}"
            )))),
        }
    }

    pub(crate) fn finish_fault(mut self, fault: Fault) {
        if let Some(handle) = self.handle.take() {
            handle.finish(RResult::RErr(fault));
        }
    }
}

pub(crate) struct ToolAdapter<T: Tool>(pub(crate) Arc<T>);

fn parse_args(args_json: RStr<'_>) -> Value {
    serde_json::from_str(args_json.as_str()).unwrap_or(Value::Null)
}

impl<T: Tool> uji_abi::Tool for ToolAdapter<T> {
    fn spec(&self) -> RResult<RString, Fault> {
        guard_result(|| serde_json::to_string(&self.0.spec()).map_err(|e| e.to_string()))
            .map(RString::from)
            .into()
    }

    fn subject(&self, args_json: RStr<'_>) -> RResult<RString, Fault> {
        let args = parse_args(args_json);
        guard(|| self.0.subject(&args)).map(RString::from).into()
    }

    fn preview(&self, call_json: RStr<'_>) -> RResult<RString, Fault> {
        let call: ToolCall = match serde_json::from_str(call_json.as_str()) {
            Ok(call) => call,
            Err(e) => return RResult::RErr(Fault::error(format!("invalid tool call: {e}"))),
        };
        guard_result(|| serde_json::to_string(&self.0.preview(&call)).map_err(|e| e.to_string()))
            .map(RString::from)
            .into()
    }

    fn run(&self, call_json: RString, call: ToolCallBox) -> RResult<ROption<CancelBox>, Fault> {
        let ctx = ToolContext::new(call);
        let parsed: ToolCall = match serde_json::from_str(call_json.as_str()) {
            Ok(parsed) => parsed,
            Err(e) => {
                ctx.finish(ToolOutput::error(format!(
                    "uji sent an invalid tool call: {e}"
                )));
                return RResult::ROk(ROption::RNone);
            }
        };
        let tool = Arc::clone(&self.0);
        match guard(move || tool.start(parsed, ctx)) {
            Ok(Some(cancel)) => RResult::ROk(ROption::RSome(cancel_box(cancel))),
            Ok(None) => RResult::ROk(ROption::RNone),
            Err(fault) => RResult::RErr(fault),
        }
    }
}

struct CancelAdapter(Canceller);

impl uji_abi::Cancel for CancelAdapter {
    fn cancel(&self) {
        // A panicking canceller must not take uji down; the call still ends
        // through its completion or the host's interrupt handling.
        let _ = guard(|| (self.0)());
    }
}

pub(crate) fn cancel_box(cancel: Canceller) -> CancelBox {
    CancelBox::from_value(CancelAdapter(cancel), TD_Opaque)
}
