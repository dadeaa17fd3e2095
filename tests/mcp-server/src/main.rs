//! A scripted MCP server for uji's tests, over stdio.
//!
//! Tools: `echo` (text back, marked read-only), `picture` (a PNG image),
//! `fail` (an `isError` result), `crash` (the process exits), `slow` (sends
//! progress, then waits to be cancelled; on `notifications/cancelled` it
//! appends `cancelled` to `$MCP_TEST_MARKS`), `grow` (adds the tool `extra`
//! and sends `notifications/tools/list_changed`), `structured`; with
//! `--extra-tools` also `env`
//! (its environment as `NAME=VALUE` lines, then what it can read of its
//! parent's `/proc/PPID/environ`), and three that misbehave: `huge` (an
//! answer of 17 MiB on one line, over rmcp's 16 MiB limit), `silent`
//! (never answers, ignoring cancellation) and `garbage` (answers with a
//! line that is not JSON, then one that is JSON but not JSON-RPC).
//! Every start appends `started PID` to `$MCP_TEST_MARKS` when that is set.
//! `--http [--port N]` serves streamable HTTP instead.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

/// A 1×1 PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

#[derive(Clone, Default)]
struct TestServer {
    grown: Arc<AtomicBool>,
}

fn mark(word: &str) {
    if let Ok(path) = std::env::var("MCP_TEST_MARKS") {
        use std::io::Write;
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = writeln!(f, "{word}");
        }
    }
}

fn tool(name: &str, description: &str, extra: Value) -> Option<Tool> {
    let mut t = json!({
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}},
    });
    if let (Some(obj), Value::Object(more)) = (t.as_object_mut(), extra) {
        obj.extend(more);
    }
    serde_json::from_value(t).ok()
}

fn result(value: Value) -> Result<CallToolResponse, ErrorData> {
    serde_json::from_value::<CallToolResult>(value)
        .map(CallToolResponse::Complete)
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

impl TestServer {
    fn tools(&self) -> Vec<Tool> {
        let mut tools = vec![
            tool(
                "echo",
                "Echoes its text.",
                json!({"annotations": {"readOnlyHint": true}}),
            ),
            tool("picture", "Returns a picture.", json!({})),
            tool("fail", "Always fails.", json!({})),
            tool("crash", "Exits the server.", json!({})),
            tool("slow", "Reports progress, then waits.", json!({})),
            tool("grow", "Adds the tool extra.", json!({})),
            tool("structured", "Structured content.", json!({})),
        ];
        if std::env::args().any(|a| a == "--extra-tools") {
            tools.extend([
                tool("env", "Its environment and its parent's.", json!({})),
                tool("huge", "An answer over the line limit.", json!({})),
                tool("silent", "Never answers.", json!({})),
                tool("garbage", "Answers with what is not JSON-RPC.", json!({})),
            ]);
        }
        if self.grown.load(Ordering::SeqCst) {
            tools.push(tool("extra", "Added later.", json!({})));
        }
        tools.into_iter().flatten().collect()
    }

    async fn slow(&self, ctx: RequestContext<RoleServer>) -> Result<CallToolResponse, ErrorData> {
        if let Some(token) = ctx.meta.get_progress_token() {
            let _ = ctx
                .peer
                .notify_progress(
                    ProgressNotificationParam::new(token, 1.0)
                        .with_total(3.0)
                        .with_message("working"),
                )
                .await;
        }
        tokio::select! {
            _ = ctx.ct.cancelled() => {
                mark("cancelled");
                result(json!({"content": [{"type": "text", "text": "cancelled"}]}))
            }
            _ = tokio::time::sleep(std::time::Duration::from_secs(60)) => {
                result(json!({"content": [{"type": "text", "text": "slept"}]}))
            }
        }
    }
}

impl ServerHandler for TestServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = Value::Object(request.arguments.unwrap_or_default());
        let text = args["text"].as_str().unwrap_or_default().to_string();
        match request.name.as_ref() {
            "echo" | "extra" => {
                result(json!({"content": [{"type": "text", "text": format!("echo: {text}")}]}))
            }
            "picture" => result(json!({"content": [
                {"type": "text", "text": "a picture"},
                {"type": "image", "data": PNG, "mimeType": "image/png"}
            ]})),
            "fail" => {
                result(json!({"content": [{"type": "text", "text": "it broke"}], "isError": true}))
            }
            "structured" => result(json!({"content": [], "structuredContent": {"answer": 42}})),
            "env" => result(json!({"content": [{"type": "text", "text": environment()}]})),
            "huge" => {
                let text = "x".repeat(17 * 1024 * 1024);
                result(json!({"content": [{"type": "text", "text": text}]}))
            }
            "silent" => std::future::pending().await,
            "garbage" => {
                garbage(&ctx.id);
                std::future::pending().await
            }
            "crash" => std::process::exit(3),
            "slow" => self.slow(ctx).await,
            "grow" => {
                self.grown.store(true, Ordering::SeqCst);
                let _ = ctx.peer.notify_tool_list_changed().await;
                result(json!({"content": [{"type": "text", "text": "grown"}]}))
            }
            other => Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        }
    }
}

/// `NAME=VALUE` lines of this process's environment, then
/// `parent environ: ` and the names in its parent's `/proc/PPID/environ`
/// (or why it could not be read).
fn environment() -> String {
    let mut lines: Vec<String> = std::env::vars_os()
        .map(|(k, v)| format!("{}={}", k.to_string_lossy(), v.to_string_lossy()))
        .collect();
    lines.sort();
    let parent = std::os::unix::process::parent_id();
    let names = match std::fs::read(format!("/proc/{parent}/environ")) {
        Ok(bytes) => bytes
            .split(|&b| b == 0)
            .filter(|entry| !entry.is_empty())
            .map(|entry| {
                String::from_utf8_lossy(entry.split(|&b| b == b'=').next().unwrap_or_default())
                    .into_owned()
            })
            .collect::<Vec<_>>()
            .join(" "),
        Err(e) => format!("unreadable ({e})"),
    };
    lines.push(format!("parent environ: {names}"));
    lines.join("\n")
}

/// Writes, past rmcp, an answer to request `id` that is not JSON, then
/// one that is JSON but not a JSON-RPC message.
fn garbage(id: &rmcp::model::RequestId) {
    use std::io::Write;
    let id = serde_json::to_string(id).unwrap_or_default();
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"content\":["
    );
    let _ = writeln!(out, "{{\"id\":{id},\"answer\":\"not json-rpc\"}}");
    let _ = out.flush();
}

/// `--http`: serves streamable HTTP on 127.0.0.1 (`--port N`, else a free
/// port; printed as `listening PORT` on stdout) until killed.
async fn serve_http() {
    use hyper_util::rt::{TokioExecutor, TokioIo};
    use hyper_util::service::TowerToHyperService;
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};

    let service = StreamableHttpService::new(
        || Ok(TestServer::default()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let port: u16 = std::env::args()
        .skip_while(|a| a != "--port")
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    let Ok(listener) = tokio::net::TcpListener::bind(("127.0.0.1", port)).await else {
        std::process::exit(2);
    };
    let port = listener.local_addr().map(|a| a.port()).unwrap_or_default();
    println!("listening {port}");
    while let Ok((stream, _)) = listener.accept().await {
        let service = TowerToHyperService::new(service.clone());
        tokio::spawn(async move {
            let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
            let _ = builder
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    if std::env::args().any(|a| a == "--http") {
        return serve_http().await;
    }
    mark(&format!("started {}", std::process::id()));
    eprintln!("test server: started (this line belongs in uji's log)");
    let Ok(service) = TestServer::default().serve(rmcp::transport::stdio()).await else {
        std::process::exit(2);
    };
    let _ = service.waiting().await;
}
