//! One tool of one server, registered with uji like any other tool, so the
//! gate (policy, hooks, approval, output bounds) applies unchanged.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientRequest, ServerResult,
};
use rmcp::service::{PeerRequestOptions, ServiceError};
use serde_json::Value;
use tokio::sync::Notify;
use uji_sdk::{Canceller, Tool, ToolCall, ToolContext, ToolOutput, ToolSpec};

use crate::convert;
use crate::runtime;
use crate::server::Server;

pub struct McpTool {
    server: Arc<Server>,
    /// The name the server knows the tool by.
    remote: String,
    spec: ToolSpec,
}

impl McpTool {
    /// `tool` is one entry of the server's `tools/list`, as JSON.
    pub fn new(server: Arc<Server>, tool: &Value) -> McpTool {
        let remote = tool["name"].as_str().unwrap_or_default().to_string();
        let name = convert::tool_name(server.name(), &remote);
        let hints = convert::hints(tool.get("annotations"));
        let mut description = tool["description"].as_str().unwrap_or_default().to_string();
        let mut question = format!("Run {remote} on MCP server {}?", server.name());
        if !hints.is_empty() {
            // Shown to the model and the user; the gate does not trust them.
            let said = format!("(the server says: {})", hints.join(", "));
            description = format!("{description} {said}").trim().to_string();
            question = format!("{question} {said}");
        }
        let parameters = match tool.get("inputSchema") {
            Some(schema @ Value::Object(_)) => schema.clone(),
            _ => uji_sdk::protocol::empty_object_schema(),
        };
        let spec = ToolSpec::new(&name, description)
            .parameters(parameters)
            .policy(server.config.policy)
            .verb(name.clone())
            .question(question);
        McpTool {
            server,
            remote,
            spec,
        }
    }

    pub fn name(&self) -> &str {
        &self.spec.name
    }
}

impl Tool for McpTool {
    fn spec(&self) -> ToolSpec {
        self.spec.clone()
    }

    fn subject(&self, args: &Value) -> String {
        convert::subject(args)
    }

    fn run(&self, _call: ToolCall, _ctx: &ToolContext) -> ToolOutput {
        // Never reached: `start` finishes calls on the plugin's runtime.
        ToolOutput::error("internal: MCP tools run through start")
    }

    fn start(self: Arc<Self>, call: ToolCall, ctx: ToolContext) -> Option<Canceller> {
        let cancel = Arc::new(Notify::new());
        let cancelled = Arc::clone(&cancel);
        // Without a runtime the future (and ctx) is dropped, which uji
        // reports as a call finished without an answer.
        let _ = runtime::spawn(async move {
            let output = self.call(call.args, &ctx, &cancelled).await;
            ctx.finish(output);
        });
        Some(Box::new(move || cancel.notify_one()))
    }
}

impl McpTool {
    async fn call(&self, args: Value, ctx: &ToolContext, cancel: &Notify) -> ToolOutput {
        let arguments = match args {
            Value::Object(map) => Some(map),
            Value::Null => None,
            other => {
                return ToolOutput::error(format!("arguments must be a JSON object, got {other}"));
            }
        };
        let peer = match self.server.ready_peer().await {
            Ok(peer) => peer,
            Err(message) => return ToolOutput::error(message),
        };
        let mut params = CallToolRequestParams::new(self.remote.clone());
        params.arguments = arguments;
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = match peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
        {
            Ok(handle) => handle,
            Err(e) => return self.failed(e),
        };
        let token = handle.progress_token.clone();
        let id = handle.id.clone();
        let mut progress = self.server.watch_progress(&token);
        let response = handle.await_response();
        tokio::pin!(response);
        // rmcp drops an answer it cannot read (a line over its limit, text
        // that is not JSON-RPC) and waits on: only this deadline ends such
        // a call, as it ends one the server never answers.
        let timeout = self.server.config.call_timeout;
        let deadline = tokio::time::sleep(timeout);
        tokio::pin!(deadline);
        let ended = loop {
            tokio::select! {
                result = &mut response => break Ended::Answer(Box::new(result)),
                Some(line) = progress.recv() => ctx.progress(&line),
                _ = cancel.notified() => break Ended::Interrupted,
                () = &mut deadline => break Ended::TimedOut,
            }
        };
        self.server.unwatch_progress(&token);
        let why = match ended {
            Ended::Answer(answer) => {
                return match *answer {
                    Ok(ServerResult::CallToolResult(result)) => convert::output(
                        &serde_json::to_value(&result).unwrap_or(Value::Null),
                        &self.spec.name,
                    ),
                    Ok(other) => convert::output(
                        &serde_json::to_value(&other).unwrap_or(Value::Null),
                        &self.spec.name,
                    ),
                    Err(e) => self.failed(e),
                };
            }
            Ended::Interrupted => "interrupted by the user",
            Ended::TimedOut => "no answer within the call timeout",
        };
        // Dropping the pending request would leave the server working;
        // tell it to stop (`notifications/cancelled`).
        let _ = peer
            .notify_cancelled(CancelledNotificationParam::new(Some(id), Some(why.into())))
            .await;
        match ended {
            Ended::TimedOut => ToolOutput::error(self.timed_out(timeout)),
            _ => ToolOutput::interrupted("interrupted by the user"),
        }
    }

    /// What the model is told when the server's answer did not come.
    fn timed_out(&self, timeout: std::time::Duration) -> String {
        format!(
            "{}: MCP server {} sent no answer uji could read within {} s, so the call was cancelled. \
             Either it is still working or stuck, or its answer was not valid JSON-RPC or longer \
             than {} MiB on one line, which uji cannot read. Try again with a smaller request; \
             the user can raise the limit with call_timeout in the server's uji.mcp.add.",
            self.spec.name,
            self.server.name(),
            timeout.as_secs_f64(),
            rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH / (1024 * 1024),
        )
    }

    /// A call that got no answer. When the server could not be reached
    /// (a streamable-HTTP server went away), the connection is dropped and
    /// made again with backoff, and the model is told to try again.
    fn failed(&self, e: ServiceError) -> ToolOutput {
        let ServiceError::TransportSend(_) = &e else {
            return ToolOutput::error(format!("{}: {e}", self.spec.name));
        };
        let cause = root_cause(&e);
        self.server.reconnect(&cause);
        ToolOutput::error(format!(
            "{}: MCP server {} could not be reached ({cause}); uji is reconnecting, try again in a few seconds",
            self.spec.name,
            self.server.name()
        ))
    }
}

/// How waiting for an answer ended.
enum Ended {
    Answer(Box<Result<ServerResult, ServiceError>>),
    Interrupted,
    TimedOut,
}

/// The innermost error's words (e.g. `Connection refused (os error 111)`),
/// without the transport's type names around them.
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}
