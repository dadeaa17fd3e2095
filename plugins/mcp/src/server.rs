//! One configured server: a supervisor task that connects, registers the
//! server's tools, refreshes them on `list_changed`, and restarts the server
//! with backoff when it dies.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use parking_lot::Mutex;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::{NotificationContext, Peer, RunningService};
use rmcp::{ClientHandler, RoleClient};
use tokio::sync::{Notify, mpsc};
use uji_sdk::services::ToolRemove;
use uji_sdk::{Host, LogLevel};

use crate::config::{ServerConfig, Transport};
use crate::connect;
use crate::tool::McpTool;

const BACKOFF_FIRST: Duration = Duration::from_millis(500);
const BACKOFF_MAX: Duration = Duration::from_secs(30);

/// Where a server is and what `uji mcp list`, `/mcp` and `uji.mcp.list()`
/// show of it: the protocol's types, so the CLI reads what the plugin wrote.
pub use uji_sdk::protocol::mcp::{ServerState as State, ServerStatus as Status};

pub type Client = RunningService<RoleClient, Handler>;

pub struct Server {
    pub config: ServerConfig,
    host: Host,
    status: Mutex<Status>,
    peer: Mutex<Option<Peer<RoleClient>>>,
    /// Progress lines of running calls, by progress token.
    progress: Mutex<HashMap<String, mpsc::UnboundedSender<String>>>,
    refresh: Notify,
    stop: Notify,
    /// A call found the connection broken (an HTTP server went away):
    /// drop it and connect again, with backoff.
    reconnect: Notify,
    /// Set once its supervisor was spawned.
    launched: AtomicBool,
}

fn token_key(token: &ProgressToken) -> String {
    serde_json::to_string(token).unwrap_or_default()
}

impl Server {
    pub fn new(config: ServerConfig, host: Host) -> Arc<Server> {
        let transport = match config.transport {
            Transport::Stdio { .. } => "stdio",
            Transport::Http { .. } => "http",
        };
        Arc::new(Server {
            status: Mutex::new(Status {
                name: config.name.clone(),
                transport: transport.to_string(),
                state: State::Configured,
                tools: Vec::new(),
                last_error: None,
                restarts: 0,
            }),
            config,
            host,
            peer: Mutex::new(None),
            progress: Mutex::new(HashMap::new()),
            refresh: Notify::new(),
            stop: Notify::new(),
            reconnect: Notify::new(),
            launched: AtomicBool::new(false),
        })
    }

    /// Starts its supervisor, once.
    pub fn launch(self: &Arc<Self>) -> Result<(), String> {
        if self.launched.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        self.set(State::Starting, None);
        crate::runtime::spawn(Arc::clone(self).supervise())
    }

    /// The connection, waiting while the server starts (at most its
    /// handshake timeout): a call made right after a session opened finds
    /// the server it names still starting.
    pub async fn ready_peer(&self) -> Result<Peer<RoleClient>, String> {
        let deadline = tokio::time::Instant::now() + self.config.handshake;
        while self.status().state == State::Starting && tokio::time::Instant::now() < deadline {
            if let Some(peer) = self.peer.lock().clone() {
                return Ok(peer);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.peer()
    }

    pub fn name(&self) -> &str {
        &self.config.name
    }

    pub fn status(&self) -> Status {
        self.status.lock().clone()
    }

    pub fn log(&self, level: LogLevel, message: &str) {
        self.host
            .log(level, &format!("mcp server {}: {message}", self.name()));
    }

    /// The connection, or why there is none, in words for the model.
    pub fn peer(&self) -> Result<Peer<RoleClient>, String> {
        if let Some(peer) = self.peer.lock().clone() {
            return Ok(peer);
        }
        let status = self.status();
        let why = status
            .last_error
            .map(|e| format!(" (last error: {e})"))
            .unwrap_or_default();
        Err(match status.state {
            State::Starting => format!(
                "MCP server {} is starting; try again shortly{why}",
                self.name()
            ),
            State::Stopped => format!("MCP server {} was removed", self.name()),
            State::Configured => format!("MCP server {} was not started", self.name()),
            _ => format!(
                "MCP server {} is not running and is being restarted{why}",
                self.name()
            ),
        })
    }

    pub fn watch_progress(&self, token: &ProgressToken) -> mpsc::UnboundedReceiver<String> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.progress.lock().insert(token_key(token), tx);
        rx
    }

    pub fn unwatch_progress(&self, token: &ProgressToken) {
        self.progress.lock().remove(&token_key(token));
    }

    fn set(&self, state: State, error: Option<String>) {
        let mut status = self.status.lock();
        status.state = state;
        if error.is_some() {
            status.last_error = error;
        }
    }

    /// Drops the connection after a call could not reach the server; the
    /// supervisor connects again with backoff.
    pub fn reconnect(&self, why: &str) {
        self.log(LogLevel::Warn, &format!("reconnecting: {why}"));
        self.status.lock().last_error = Some(why.to_string());
        self.reconnect.notify_one();
    }

    /// Stops the supervisor (and so the server) and removes the tools now,
    /// so no call reaches them once `uji.mcp.remove` has returned.
    pub fn stop(&self) {
        self.set(State::Stopped, None);
        self.stop.notify_one();
        self.forget_tools();
    }

    /// Runs until [`Server::stop`]: connect, serve, restart with backoff.
    pub async fn supervise(self: Arc<Self>) {
        let mut backoff = BACKOFF_FIRST;
        loop {
            if self.status().state == State::Stopped {
                break;
            }
            match self.connect_once().await {
                Ok(client) => {
                    backoff = BACKOFF_FIRST;
                    if self.serve(client).await {
                        break;
                    }
                }
                Err(e) => {
                    self.log(LogLevel::Warn, &e);
                    self.set(State::Failed, Some(e));
                }
            }
            self.status.lock().restarts += 1;
            tokio::select! {
                _ = tokio::time::sleep(backoff) => {}
                _ = self.stop.notified() => break,
            }
            backoff = (backoff * 2).min(BACKOFF_MAX);
        }
        self.forget_tools();
        self.set(State::Stopped, None);
    }

    async fn connect_once(self: &Arc<Self>) -> Result<Client, String> {
        self.set(State::Starting, None);
        let handler = Handler(Arc::downgrade(self));
        let timeout = self.config.handshake;
        match tokio::time::timeout(timeout, connect::connect(self, handler)).await {
            Ok(result) => result,
            Err(_) => Err(format!("no answer to the handshake within {timeout:?}")),
        }
    }

    /// Serves one connection until it ends; true when stopped on purpose.
    async fn serve(self: &Arc<Self>, client: Client) -> bool {
        let peer = client.peer().clone();
        *self.peer.lock() = Some(peer.clone());
        // Running only once its tools are registered, so a listing that
        // waited for the start sees them.
        self.refresh_tools(&peer).await;
        self.set(State::Running, None);
        let cancel = client.cancellation_token();
        let ended = client.waiting();
        tokio::pin!(ended);
        let stopped = loop {
            tokio::select! {
                _ = &mut ended => break false,
                _ = self.refresh.notified() => self.refresh_tools(&peer).await,
                _ = self.reconnect.notified() => {
                    cancel.cancel();
                    let _ = ended.await;
                    *self.peer.lock() = None;
                    self.set(State::Failed, None);
                    return false;
                }
                _ = self.stop.notified() => {
                    cancel.cancel();
                    let _ = ended.await;
                    break true;
                }
            }
        };
        *self.peer.lock() = None;
        if !stopped {
            let message = "the server closed the connection (exited?)".to_string();
            self.log(LogLevel::Warn, &message);
            self.set(State::Failed, Some(message));
        }
        stopped
    }

    /// Lists the server's tools and registers each with uji; tools it no
    /// longer has are removed.
    async fn refresh_tools(self: &Arc<Self>, peer: &Peer<RoleClient>) {
        // A server that never answers `tools/list` must not hold the
        // connection's loop (and with it stop and restart) forever.
        let timeout = self.config.handshake;
        let listed = match tokio::time::timeout(timeout, peer.list_all_tools()).await {
            Ok(Ok(tools)) => tools,
            Ok(Err(e)) => {
                let message = format!("tools/list failed: {e}");
                self.log(LogLevel::Warn, &message);
                self.status.lock().last_error = Some(message);
                return;
            }
            Err(_) => {
                let message = format!(
                    "tools/list had no answer uji could read within {} s (the handshake timeout)",
                    timeout.as_secs_f64()
                );
                self.log(LogLevel::Warn, &message);
                self.status.lock().last_error = Some(message);
                return;
            }
        };
        let mut names = Vec::new();
        for tool in listed {
            let Ok(json) = serde_json::to_value(&tool) else {
                continue;
            };
            let tool = McpTool::new(Arc::clone(self), &json);
            let name = tool.name().to_string();
            match self.host.register_tool(tool) {
                Ok(()) => names.push(name),
                Err(e) => self.log(LogLevel::Warn, &format!("tool {name} not registered: {e}")),
            }
        }
        let old = std::mem::replace(&mut self.status.lock().tools, names.clone());
        for gone in old.iter().filter(|n| !names.contains(n)) {
            let _ = self.host.service(&ToolRemove { name: gone.clone() });
        }
        self.log(
            LogLevel::Info,
            &format!("{} tools: {}", names.len(), names.join(", ")),
        );
    }

    fn forget_tools(&self) {
        let tools = std::mem::take(&mut self.status.lock().tools);
        for name in tools {
            let _ = self.host.service(&ToolRemove { name });
        }
    }
}

/// The client side of one connection: notifications the server sends.
pub struct Handler(std::sync::Weak<Server>);

impl ClientHandler for Handler {
    fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        if let Some(server) = self.0.upgrade() {
            let line = progress_line(&params);
            if let Some(tx) = server
                .progress
                .lock()
                .get(&token_key(&params.progress_token))
            {
                let _ = tx.send(line);
            }
        }
        std::future::ready(())
    }

    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        if let Some(server) = self.0.upgrade() {
            server.refresh.notify_one();
        }
        std::future::ready(())
    }
}

fn progress_line(p: &ProgressNotificationParam) -> String {
    let amount = match p.total {
        Some(total) if total > 0.0 => format!("{}/{}", p.progress, total),
        _ => p.progress.to_string(),
    };
    match &p.message {
        Some(message) => format!("{message} ({amount})"),
        None => amount,
    }
}

/// Statuses as JSON for `uji.mcp.list()` and `uji mcp list --json`.
pub fn statuses(servers: &[Arc<Server>]) -> Vec<Status> {
    servers.iter().map(|s| s.status()).collect()
}
