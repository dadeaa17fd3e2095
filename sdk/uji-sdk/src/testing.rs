//! Run a plugin's tools in unit tests without uji: a stand-in for the host's
//! side of a call that records progress lines and the result.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::Value;
use uji_abi::__private::TD_Opaque;
use uji_abi::{Fault, RResult, RStr, RString, ToolCallBox};
use uji_protocol::{ToolCall, ToolOutput};

use crate::tool::{Canceller, Tool, ToolContext};

/// The outcome of [`TestCall::wait`].
#[derive(Debug)]
pub enum Finished {
    Output(ToolOutput),
    Fault(Fault),
    /// The tool dropped its context without finishing.
    Dropped,
}

impl Finished {
    /// The output, panicking (this is test code) on a fault or a drop.
    pub fn output(self) -> ToolOutput {
        match self {
            Finished::Output(output) => output,
            other => panic!("tool did not finish with an output: {other:?}"),
        }
    }
}

struct TestHandle {
    progress: Arc<Mutex<Vec<String>>>,
    cancelled: Arc<AtomicBool>,
    done: Mutex<Option<mpsc::Sender<Finished>>>,
}

impl TestHandle {
    fn send(&self, finished: Finished) {
        if let Some(tx) = self.done.lock().take() {
            let _ = tx.send(finished);
        }
    }
}

impl uji_abi::ToolCallHandle for TestHandle {
    fn progress(&self, line: RStr<'_>) {
        self.progress.lock().push(line.as_str().to_string());
    }

    fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::SeqCst)
    }

    fn finish(self, result: RResult<RString, Fault>) {
        let finished = match result.into_result() {
            Ok(json) => match serde_json::from_str(json.as_str()) {
                Ok(output) => Finished::Output(output),
                Err(e) => Finished::Fault(Fault::error(format!("bad output json: {e}"))),
            },
            Err(fault) => Finished::Fault(fault),
        };
        self.send(finished);
    }
}

impl Drop for TestHandle {
    fn drop(&mut self) {
        self.send(Finished::Dropped);
    }
}

/// One call of a tool, started through [`Tool::start`] like uji does.
pub struct TestCall {
    pub progress: Arc<Mutex<Vec<String>>>,
    cancelled: Arc<AtomicBool>,
    rx: mpsc::Receiver<Finished>,
    canceller: Option<Canceller>,
}

impl TestCall {
    /// Starts `tool` with `args` in `cwd`.
    pub fn start<T: Tool>(tool: Arc<T>, args: Value, cwd: &std::path::Path) -> TestCall {
        let progress = Arc::new(Mutex::new(Vec::new()));
        let cancelled = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel();
        let handle = TestHandle {
            progress: Arc::clone(&progress),
            cancelled: Arc::clone(&cancelled),
            done: Mutex::new(Some(tx)),
        };
        let ctx = ToolContext::new(ToolCallBox::from_value(handle, TD_Opaque));
        let call = ToolCall {
            id: "call_test".to_string(),
            args,
            cwd: cwd.to_string_lossy().into_owned(),
            roots: None,
            sandbox: None,
            spill: None,
            session: None,
        };
        let canceller = tool.start(call, ctx);
        TestCall {
            progress,
            cancelled,
            rx,
            canceller,
        }
    }

    /// Interrupts the call as a user would.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
        if let Some(cancel) = &self.canceller {
            cancel();
        }
    }

    /// Waits for the result (at most `timeout`).
    pub fn wait(&self, timeout: Duration) -> Option<Finished> {
        self.rx.recv_timeout(timeout).ok()
    }

    /// Progress lines so far.
    pub fn progress_lines(&self) -> Vec<String> {
        self.progress.lock().clone()
    }
}

/// Runs `tool` once and returns its output (waits up to 60 s).
pub fn run_tool<T: Tool>(tool: T, args: Value, cwd: &std::path::Path) -> ToolOutput {
    let call = TestCall::start(Arc::new(tool), args, cwd);
    match call.wait(Duration::from_secs(60)) {
        Some(finished) => finished.output(),
        None => panic!("tool did not finish within 60 s"),
    }
}
