//! An editor for `uji acp`: the real binary spawned with pipes and the
//! `agent-client-protocol` crate's client side speaking to it. The updates
//! and questions the client receives are kept (as JSON, for the tests to
//! look at), and every line uji writes to stdout is kept raw and checked to
//! be a JSON-RPC 2.0 message: nothing else may reach the editor.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, FileSystemCapabilities, InitializeRequest, InitializeResponse, McpServer,
    NewSessionRequest, NewSessionResponse, PromptRequest, PromptResponse, ReadTextFileRequest,
    ReadTextFileResponse, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SelectedPermissionOutcome, SessionNotification,
    WriteTextFileRequest, WriteTextFileResponse,
};
use agent_client_protocol::{Agent, Client as ClientRole, ErrorCode, JsonRpcRequest, Lines};
use parking_lot::Mutex;
use serde_json::Value;
use uji_fake_model::FakeModel;

use crate::Sandbox;

/// How long any answer or update may take.
const WAIT: Duration = Duration::from_secs(20);

/// `UJI_PLUGIN_PATH` for an editor session: the ACP frontend and the
/// plugins a session needs.
pub fn plugin_path(extra: &[&str]) -> String {
    let mut plugins = vec![
        "uji_plugin_acp",
        "uji_plugin_tools",
        "uji_plugin_openai_chat",
        "uji_plugin_lua",
    ];
    plugins.extend_from_slice(extra);
    crate::plugin_path(&plugins)
}

/// A sandbox whose init.lua adds the fake provider (models m1 and m2), uses m1,
/// with plan mode and a Lua slash command `/hello`; `extra` is appended.
pub fn sandbox_with(model: &FakeModel, extra: &str) -> Sandbox {
    let sandbox = Sandbox::new();
    let init = format!(
        r#"
uji.provider.add({{ id = "fake", wire = "openai-chat", base_url = "{}", models = {{ "m1", "m2" }} }})
uji.model.use("fake/m1")
require("uji.planmode").setup()
uji.command.add("hello", {{ desc = "Say hello", handler = function(args) return "hello " .. args end }})
{extra}
"#,
        model.base_url()
    );
    std::fs::write(sandbox.config().join("init.lua"), init).unwrap();
    sandbox
}

pub fn sandbox(model: &FakeModel) -> Sandbox {
    sandbox_with(model, "")
}

/// How the editor answers permission questions.
pub type Chooser = Box<dyn Fn(&RequestPermissionRequest) -> RequestPermissionOutcome + Send>;

/// What the editor side has received, shared with the connection's thread.
#[derive(Default)]
struct Seen {
    /// Every stdout line.
    lines: Vec<String>,
    /// Lines that were not a JSON-RPC 2.0 message.
    not_rpc: Vec<String>,
    updates: Vec<Value>,
    questions: Vec<Value>,
    reads: Vec<Value>,
    writes: Vec<Value>,
    /// `fs/write_text_file` is answered with an error.
    refuse_writes: bool,
    /// `fs/read_text_file` is never answered, as by a hung editor.
    ignore_reads: bool,
    /// The requests left unanswered: held, since a dropped responder
    /// answers with an error.
    held: Vec<Box<dyn std::any::Any + Send>>,
}

pub struct Client {
    child: Child,
    stdin: Arc<Mutex<Option<ChildStdin>>>,
    conn: ConnectionTo<Agent>,
    seen: Arc<Mutex<Seen>>,
    chooser: Arc<Mutex<Chooser>>,
    /// Open buffers the editor serves to `fs/read_text_file`, by absolute
    /// path; `None` for a file the editor refuses to read.
    buffers: Arc<Mutex<HashMap<String, Option<String>>>>,
}

/// A request sent and not answered yet.
pub struct Pending<T>(Receiver<Result<T, agent_client_protocol::Error>>);

impl<T> Pending<T> {
    /// Its answer (20 s at most).
    pub fn answer(self) -> Result<T, agent_client_protocol::Error> {
        self.0.recv_timeout(WAIT).expect("an answer within 20 s")
    }
}

pub fn selected(option: &str) -> RequestPermissionOutcome {
    RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(option.to_string()))
}

impl Client {
    /// Spawns `uji acp` in the sandbox's work directory and connects the
    /// crate's client to its stdin and stdout.
    pub fn spawn(sandbox: &Sandbox) -> Client {
        Client::spawn_with(sandbox, &[])
    }

    /// Like [`Client::spawn`], with more plugins (library names).
    pub fn spawn_with(sandbox: &Sandbox, plugins: &[&str]) -> Client {
        let mut child = sandbox
            .uji()
            .env("UJI_PLUGIN_PATH", plugin_path(plugins))
            .arg("acp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = Arc::new(Mutex::new(child.stdin.take()));
        let seen = Arc::new(Mutex::new(Seen::default()));
        let incoming = read_stdout(child.stdout.take().unwrap(), Arc::clone(&seen));
        let outgoing = write_stdin(Arc::clone(&stdin));
        let chooser: Arc<Mutex<Chooser>> =
            Arc::new(Mutex::new(Box::new(|_| selected("allow_once"))));
        let buffers = Arc::new(Mutex::new(HashMap::new()));
        let conn = connect(
            Lines::new(Box::pin(outgoing), incoming),
            Arc::clone(&seen),
            Arc::clone(&chooser),
            Arc::clone(&buffers),
        );
        Client {
            child,
            stdin,
            conn,
            seen,
            chooser,
            buffers,
        }
    }

    /// Sends `request`; the answer comes through the returned handle.
    pub fn send<R>(&self, request: R) -> Pending<R::Response>
    where
        R: JsonRpcRequest,
        R::Response: Send + 'static,
    {
        let sent = self.conn.send_request(request);
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let _ = tx.send(futures::executor::block_on(sent.block_task()));
        });
        Pending(rx)
    }

    /// Sends `request` and waits for its answer.
    pub fn request<R>(&self, request: R) -> Result<R::Response, agent_client_protocol::Error>
    where
        R: JsonRpcRequest,
        R::Response: Send + 'static,
    {
        self.send(request).answer()
    }

    pub fn notify<N: agent_client_protocol::JsonRpcNotification>(&self, notification: N) {
        self.conn.send_notification(notification).unwrap();
    }

    /// Writes a raw line to uji's stdin, past the crate: for garbage.
    pub fn send_line(&self, line: &str) {
        let mut stdin = self.stdin.lock();
        let stdin = stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// Answers permission questions with `choose` from now on.
    pub fn choose(
        &self,
        choose: impl Fn(&RequestPermissionRequest) -> RequestPermissionOutcome + Send + 'static,
    ) {
        *self.chooser.lock() = Box::new(choose);
    }

    /// Serves `text` as the editor's (unsaved) buffer of `path`.
    pub fn open_buffer(&self, path: &std::path::Path, text: &str) {
        let path = path.to_string_lossy().into_owned();
        self.buffers.lock().insert(path, Some(text.to_string()));
    }

    /// Answers `fs/read_text_file` for `path` with an error.
    pub fn refuse_reads_of(&self, path: &std::path::Path) {
        let path = path.to_string_lossy().into_owned();
        self.buffers.lock().insert(path, None);
    }

    /// `initialize` with `capabilities`; its answer.
    pub fn initialize_with(&self, capabilities: ClientCapabilities) -> InitializeResponse {
        self.request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(capabilities))
            .expect("initialize answers")
    }

    /// `initialize` then `session/new` in the work directory; the session id.
    pub fn start(&self, sandbox: &Sandbox) -> String {
        let answer = self.start_with(sandbox, Vec::new());
        answer.session_id.to_string()
    }

    /// `initialize` (offering reads when `fs`) then `session/new` with
    /// `mcp_servers`; its answer.
    pub fn start_with(&self, sandbox: &Sandbox, mcp_servers: Vec<McpServer>) -> NewSessionResponse {
        let init = self.initialize_with(ClientCapabilities::new());
        assert_eq!(init.protocol_version, ProtocolVersion::V1);
        assert!(init.auth_methods.is_empty(), "a model is set up");
        self.new_session(sandbox, mcp_servers)
    }

    pub fn new_session(&self, sandbox: &Sandbox, servers: Vec<McpServer>) -> NewSessionResponse {
        self.request(NewSessionRequest::new(sandbox.work()).mcp_servers(servers))
            .expect("session/new answers")
    }

    /// Sends a text prompt.
    pub fn prompt(&self, session: &str, text: &str) -> Pending<PromptResponse> {
        let block = agent_client_protocol::v1::schema::ContentBlock::from(text.to_string());
        self.send(PromptRequest::new(session.to_string(), vec![block]))
    }

    /// The updates received so far, as JSON (`sessionUpdate`, …).
    pub fn updates(&self) -> Vec<Value> {
        self.seen.lock().updates.clone()
    }

    /// The updates of one kind received so far.
    pub fn updates_of(&self, kind: &str) -> Vec<Value> {
        let updates = self.updates();
        updates
            .into_iter()
            .filter(|u| u["sessionUpdate"] == kind)
            .collect()
    }

    /// The permission questions received so far, as JSON.
    pub fn questions(&self) -> Vec<Value> {
        self.seen.lock().questions.clone()
    }

    /// The `fs/read_text_file` requests received so far, as JSON.
    pub fn reads(&self) -> Vec<Value> {
        self.seen.lock().reads.clone()
    }

    /// The `fs/write_text_file` requests received so far, as JSON (`path`,
    /// `content`, `sessionId`).
    pub fn writes(&self) -> Vec<Value> {
        self.seen.lock().writes.clone()
    }

    /// Never answers `fs/read_text_file` from now on, as a hung editor.
    pub fn ignore_reads(&self) {
        self.seen.lock().ignore_reads = true;
    }

    /// Answers `fs/write_text_file` with an error from now on.
    pub fn refuse_writes(&self) {
        self.seen.lock().refuse_writes = true;
    }

    /// The editor's buffer of `path` now (what it was served, or given by
    /// `fs/write_text_file`).
    pub fn buffer(&self, path: &std::path::Path) -> Option<String> {
        let path = path.to_string_lossy().into_owned();
        self.buffers.lock().get(&path).cloned().flatten()
    }

    /// Waits for an update satisfying `want` (20 s at most).
    pub fn update(&self, what: &str, want: impl Fn(&Value) -> bool) -> Value {
        self.wait(what, |seen| seen.updates.iter().find(|u| want(u)).cloned())
    }

    /// Waits for a raw stdout line (as JSON) satisfying `want`.
    pub fn line(&self, what: &str, want: impl Fn(&Value) -> bool) -> Value {
        self.wait(what, |seen| {
            seen.lines
                .iter()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .find(|m| want(m))
        })
    }

    fn wait<T>(&self, what: &str, find: impl Fn(&Seen) -> Option<T>) -> T {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(found) = find(&self.seen.lock()) {
                return found;
            }
            assert!(
                Instant::now() < deadline,
                "no {what} within 20 s; stdout: {:#?}",
                self.seen.lock().lines
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Closes stdin and waits for uji to exit; its exit status. Every line
    /// uji wrote must have been a JSON-RPC message.
    pub fn finish(mut self) -> std::process::ExitStatus {
        drop(self.stdin.lock().take());
        let deadline = Instant::now() + WAIT;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "uji acp did not exit after stdin closed"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        let not_rpc = &self.seen.lock().not_rpc;
        assert!(
            not_rpc.is_empty(),
            "stdout lines that are not JSON-RPC: {not_rpc:#?}"
        );
        status
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the crate's client on a thread of its own (futures' executor);
/// returns its connection once established.
fn connect(
    transport: impl agent_client_protocol::ConnectTo<ClientRole> + 'static,
    seen: Arc<Mutex<Seen>>,
    chooser: Arc<Mutex<Chooser>>,
    buffers: Arc<Mutex<HashMap<String, Option<String>>>>,
) -> ConnectionTo<Agent> {
    let (conn_tx, conn_rx) = channel();
    std::thread::spawn(move || {
        let updates = Arc::clone(&seen);
        let questions = Arc::clone(&seen);
        let reads = Arc::clone(&seen);
        let writes = seen;
        let written = Arc::clone(&buffers);
        let client = ClientRole
            .v1()
            .name("uji-tests")
            .on_receive_notification(
                async move |n: SessionNotification, _cx| {
                    let mut update = serde_json::to_value(&n.update).unwrap();
                    update["_sessionId"] = n.session_id.to_string().into();
                    updates.lock().updates.push(update);
                    Ok(())
                },
                agent_client_protocol::on_receive_notification!(),
            )
            .on_receive_request(
                async move |q: RequestPermissionRequest, responder, _cx| {
                    let outcome = (chooser.lock())(&q);
                    questions
                        .lock()
                        .questions
                        .push(serde_json::to_value(&q).unwrap());
                    responder.respond(RequestPermissionResponse::new(outcome))
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |r: ReadTextFileRequest, responder, _cx| {
                    let mut seen = reads.lock();
                    seen.reads.push(serde_json::to_value(&r).unwrap());
                    if seen.ignore_reads {
                        seen.held.push(Box::new(responder));
                        return Ok(());
                    }
                    drop(seen);
                    let path = r.path.to_string_lossy().into_owned();
                    let buffer = buffers.lock().get(&path).cloned();
                    let text = match buffer {
                        Some(buffer) => buffer,
                        None => std::fs::read_to_string(&r.path).ok(),
                    };
                    match text {
                        Some(text) => responder
                            .respond(ReadTextFileResponse::new(page(&text, r.line, r.limit))),
                        None => responder.respond_with_error(agent_client_protocol::Error::new(
                            ErrorCode::RESOURCE_NOT_FOUND,
                            format!("no file {path}"),
                        )),
                    }
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                // As Zed does, the text becomes the buffer's (Zed also
                // saves it; this editor does not, so the tests see what uji
                // itself wrote to disk).
                async move |w: WriteTextFileRequest, responder, _cx| {
                    let mut seen = writes.lock();
                    seen.writes.push(serde_json::to_value(&w).unwrap());
                    if seen.refuse_writes {
                        return responder.respond_with_error(agent_client_protocol::Error::new(
                            ErrorCode::INTERNAL_ERROR,
                            "the buffer is read-only",
                        ));
                    }
                    drop(seen);
                    let path = w.path.to_string_lossy().into_owned();
                    written.lock().insert(path, Some(w.content));
                    responder.respond(WriteTextFileResponse::new())
                },
                agent_client_protocol::on_receive_request!(),
            );
        let run = client.connect_with(transport, async |cx| {
            let _ = conn_tx.send(cx.clone());
            cx.incoming_closed().await;
            Ok(())
        });
        let _ = futures::executor::block_on(run);
    });
    conn_rx.recv_timeout(WAIT).expect("the client connects")
}

/// Lines `line..line+limit` (1-based) of `text`, as ACP's read answers.
fn page(text: &str, line: Option<u32>, limit: Option<u32>) -> String {
    let skip = line.map_or(0, |l| l.saturating_sub(1) as usize);
    let take = limit.map_or(usize::MAX, |l| l as usize);
    let lines: Vec<&str> = text.split_inclusive('\n').skip(skip).take(take).collect();
    lines.concat()
}

fn read_stdout(
    stdout: std::process::ChildStdout,
    seen: Arc<Mutex<Seen>>,
) -> futures::channel::mpsc::UnboundedReceiver<std::io::Result<String>> {
    let (tx, rx) = futures::channel::mpsc::unbounded();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let rpc = serde_json::from_str::<Value>(&line)
                .is_ok_and(|m| m.is_object() && m["jsonrpc"] == "2.0");
            let mut seen = seen.lock();
            if !rpc {
                seen.not_rpc.push(line.clone());
            }
            seen.lines.push(line.clone());
            drop(seen);
            if tx.unbounded_send(Ok(line)).is_err() {
                break;
            }
        }
    });
    rx
}

fn write_stdin(
    stdin: Arc<Mutex<Option<ChildStdin>>>,
) -> impl futures::Sink<String, Error = std::io::Error> + Send + 'static {
    futures::sink::unfold(stdin, async |stdin, line: String| {
        {
            let mut guard = stdin.lock();
            let Some(pipe) = guard.as_mut() else {
                return Err(std::io::Error::other("stdin closed"));
            };
            writeln!(pipe, "{line}")?;
            pipe.flush()?;
        }
        Ok(stdin)
    })
}

/// Client capabilities offering file reads.
pub fn reading_editor() -> ClientCapabilities {
    ClientCapabilities::new().fs(FileSystemCapabilities::new().read_text_file(true))
}

/// Client capabilities offering file reads and writes.
pub fn writing_editor() -> ClientCapabilities {
    ClientCapabilities::new().fs(FileSystemCapabilities::new()
        .read_text_file(true)
        .write_text_file(true))
}
