//! Tools uji's core provides itself (the `subagent` tool), registered in
//! the same table as plugins' tools so the gate, the policy, `uji tool
//! list`, `--tools` and `uji.tool.disable` treat them alike. They cross no
//! library boundary: the adapter here gives them the host side of a call
//! ([`RegisteredTool::start`]'s progress, cancel and lost-completion
//! error) without core seeing an abi_stable type.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use serde_json::Value;
use uji_abi::__private::TD_Opaque;
use uji_abi::{CancelBox, Fault, ROption, RResult, RStr, RString, ToolBox, ToolCallBox};
use uji_protocol::{ToolCall, ToolOutput, ToolSpec};

use crate::calls::RegisteredTool;
use crate::registry::PluginState;

/// The name core's own tools are listed under (`uji tool list`, errors).
pub const CORE_TOOLS: &str = "uji";

/// A tool core implements.
pub trait NativeTool: Send + Sync + 'static {
    fn spec(&self) -> ToolSpec;
    /// The string policy rules match for these arguments; an error refuses
    /// the call with that text.
    fn subject(&self, args: &Value) -> Result<String, String>;
    /// Starts a call and returns at once; the call is finished through
    /// `call` exactly once, from any thread. The returned function stops
    /// the work (the user interrupted); it may be called more than once.
    fn run(&self, call: ToolCall, handle: NativeCall) -> Option<Box<dyn Fn() + Send + Sync>>;
}

/// The host's side of one running call of a [`NativeTool`].
pub struct NativeCall(ToolCallBox);

impl NativeCall {
    /// Shows a progress line under the running tool.
    pub fn progress(&self, line: &str) {
        self.0.progress(RStr::from(line));
    }

    pub fn is_cancelled(&self) -> bool {
        self.0.is_cancelled()
    }

    pub fn finish(self, output: ToolOutput) {
        let result = serde_json::to_string(&output)
            .map(RString::from)
            .map_err(|e| Fault::error(format!("tool output: {e}")));
        self.0.finish(result.into());
    }
}

struct Adapter(Arc<dyn NativeTool>);

struct CancelFn(Box<dyn Fn() + Send + Sync>);

impl uji_abi::Cancel for CancelFn {
    fn cancel(&self) {
        let _ = catch_unwind(AssertUnwindSafe(|| (self.0)()));
    }
}

fn contained<T>(work: impl FnOnce() -> Result<T, String>) -> RResult<T, Fault> {
    match catch_unwind(AssertUnwindSafe(work)) {
        Ok(Ok(value)) => RResult::ROk(value),
        Ok(Err(message)) => RResult::RErr(Fault::error(message)),
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a core tool panicked".to_string());
            RResult::RErr(Fault::panic(message))
        }
    }
}

impl uji_abi::Tool for Adapter {
    fn spec(&self) -> RResult<RString, Fault> {
        contained(|| {
            serde_json::to_string(&self.0.spec())
                .map(RString::from)
                .map_err(|e| e.to_string())
        })
    }

    fn subject(&self, args_json: RStr<'_>) -> RResult<RString, Fault> {
        contained(|| {
            let args: Value =
                serde_json::from_str(args_json.as_str()).map_err(|e| e.to_string())?;
            self.0.subject(&args).map(RString::from)
        })
    }

    fn preview(&self, _call_json: RStr<'_>) -> RResult<RString, Fault> {
        RResult::ROk(RString::from("null"))
    }

    fn run(&self, call_json: RString, call: ToolCallBox) -> RResult<ROption<CancelBox>, Fault> {
        contained(|| {
            let parsed: ToolCall =
                serde_json::from_str(call_json.as_str()).map_err(|e| e.to_string())?;
            let cancel = self.0.run(parsed, NativeCall(call));
            Ok(cancel
                .map(|f| CancelBox::from_value(CancelFn(f), TD_Opaque))
                .into())
        })
    }
}

impl RegisteredTool {
    /// A tool of core's, listed as provided by [`CORE_TOOLS`].
    pub fn native(tool: Arc<dyn NativeTool>) -> Result<RegisteredTool, crate::CallError> {
        let boxed = ToolBox::from_value(Adapter(tool), TD_Opaque);
        RegisteredTool::new(boxed, PluginState::new(CORE_TOOLS))
    }
}
