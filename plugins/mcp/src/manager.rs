//! The servers configured so far, the `mcp.*` host services the plugin
//! serves (ABI 1.1) and the session events it handles.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use serde_json::Value;
use uji_sdk::Host;
use uji_sdk::protocol::HookOptions;
use uji_sdk::protocol::mcp::{
    McpAdd, McpList, McpRemove, McpStart, McpTrust, McpTrustProject, ServerStatus,
};

use crate::config::ServerConfig;
use crate::project;
use crate::server::{self, Server, State};

/// The session events that start the servers.
const SESSION_EVENTS: [&str; 2] = ["session_created", "session_resumed"];

/// How long an interactive session's first turn waits at most for servers
/// still starting; slower ones join later, without holding the turn.
const INTERACTIVE_WAIT: Duration = Duration::from_secs(5);

#[derive(Clone)]
pub struct Manager {
    pub(crate) host: Host,
    servers: Arc<Mutex<BTreeMap<String, Arc<Server>>>>,
    /// Set once servers should run (a session started): servers added
    /// later start at once.
    started: Arc<AtomicBool>,
    /// The project's `.mcp.json` was dealt with (trusted by the config,
    /// the environment or the user, or found untrusted).
    project_done: Arc<AtomicBool>,
}

impl Manager {
    pub fn new(host: Host) -> Manager {
        Manager {
            host,
            servers: Arc::default(),
            started: Arc::default(),
            project_done: Arc::default(),
        }
    }

    fn servers(&self) -> Vec<Arc<Server>> {
        self.servers.lock().values().cloned().collect()
    }

    /// Serves `uji.mcp.*` (the Lua prelude), the ACP frontend's editor
    /// servers and the CLI's `uji mcp list|trust`, and starts the servers
    /// with the first session.
    pub fn install(&self, host: &Host) -> Result<(), String> {
        let manager = self.clone();
        host.serve(move |request: McpAdd| {
            let config =
                ServerConfig::parse(&request.name, &request.spec).map_err(|e| e.to_string())?;
            manager.add(config).map(|()| true)
        })?;
        let manager = self.clone();
        host.serve(move |request: McpRemove| Ok(manager.remove(&request.name)))?;
        let manager = self.clone();
        host.serve(move |request: McpList| Ok(manager.list_for(&request)))?;
        let manager = self.clone();
        host.serve(move |_: McpStart| {
            manager.start(false);
            Ok(manager.list(Some(manager.longest_handshake())))
        })?;
        let manager = self.clone();
        host.serve(move |_: McpTrustProject| manager.trust_project())?;
        let manager = self.clone();
        host.serve(move |request: McpTrust| project::remember(&manager, request.revoke))?;
        for event in SESSION_EVENTS {
            let manager = self.clone();
            let options = HookOptions {
                name: Some(format!("mcp:{event}")),
                ..HookOptions::default()
            };
            host.on(event, options, move |_| {
                manager.on_session();
                Ok(Value::Null)
            })?;
        }
        Ok(())
    }

    /// `mcp.list`: starting them first when asked, and waiting as long as
    /// their handshakes may take then, unless told how long.
    fn list_for(&self, request: &McpList) -> Vec<ServerStatus> {
        if request.start {
            self.start(false);
        }
        let wait = match request.wait_ms {
            Some(ms) => Some(Duration::from_millis(ms)),
            None => request.start.then(|| self.longest_handshake()),
        };
        self.list(wait)
    }

    /// Keeps a server's configuration; it starts now if a session already
    /// runs, else with the first one. One of the same name is replaced.
    /// Added to a running session (an editor's servers with `session/new`,
    /// a Lua command), the call returns once the server is up or has
    /// failed, at most as long as a session's first turn would wait, so
    /// the next request already offers its tools.
    pub fn add(&self, config: ServerConfig) -> Result<(), String> {
        let name = config.name.clone();
        self.remove(&name);
        let server = Server::new(config, self.host.clone());
        self.servers.lock().insert(name, Arc::clone(&server));
        if self.started.load(Ordering::SeqCst) {
            server.launch()?;
            let wait = server.config.handshake.min(INTERACTIVE_WAIT);
            wait_while_starting(std::slice::from_ref(&server), wait);
        }
        Ok(())
    }

    pub fn remove(&self, name: &str) -> bool {
        let removed = self.servers.lock().remove(name);
        match removed {
            Some(server) => {
                server.stop();
                true
            }
            None => false,
        }
    }

    /// Starts every configured server and deals with the project's
    /// `.mcp.json` (asking the user when the session can and it is
    /// undecided).
    /// Servers run from now on: those added later start at once.
    pub(crate) fn mark_started(&self) {
        self.started.store(true, Ordering::SeqCst);
    }

    fn start(&self, can_ask: bool) {
        if !self.started.swap(true, Ordering::SeqCst) {
            for server in self.servers() {
                if let Err(e) = server.launch() {
                    self.host.notify(&format!("mcp: {e}"));
                }
            }
        }
        if !self.project_done.swap(true, Ordering::SeqCst) {
            project::at_start(self, can_ask);
        }
    }

    /// A session started: servers start in the background. A headless run
    /// has its prompt already, so it waits for them (each at most its
    /// handshake timeout) for their tools to be in the first request; an
    /// interactive one waits at most [`INTERACTIVE_WAIT`].
    pub(crate) fn on_session(&self) {
        let headless = self
            .host
            .config("frontend")
            .as_ref()
            .and_then(Value::as_str)
            == Some("headless");
        // Headless, nobody could answer the trust question: its notice is
        // given now, before the turn, not raced against it.
        self.start(!headless);
        let longest = self.longest_handshake();
        self.list(Some(if headless {
            longest
        } else {
            longest.min(INTERACTIVE_WAIT)
        }));
    }

    /// The longest handshake timeout of the servers: how long waiting for
    /// all of them to start can take.
    fn longest_handshake(&self) -> Duration {
        self.servers()
            .iter()
            .map(|s| s.config.handshake)
            .max()
            .unwrap_or_default()
    }

    /// Every server's status. With `wait`, first waits (at most that long)
    /// for the servers still starting, so `uji mcp list` shows results.
    pub fn list(&self, wait: Option<Duration>) -> Vec<ServerStatus> {
        let servers = self.servers();
        wait_while_starting(&servers, wait.unwrap_or_default());
        server::statuses(&self.servers())
    }

    /// The `/mcp` listing.
    pub fn describe(&self) -> String {
        let servers = self.servers();
        if servers.is_empty() {
            return "no MCP servers configured (add one with uji.mcp.add in init.lua)".to_string();
        }
        servers
            .iter()
            .map(|s| describe_one(&s.status()))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// `uji.mcp.trust_project()`: the config trusts `.mcp.json` of the
    /// current directory for this process (nothing is remembered).
    fn trust_project(&self) -> Result<Vec<String>, String> {
        self.project_done.store(true, Ordering::SeqCst);
        let Some(file) = project::read(self)? else {
            return Ok(Vec::new());
        };
        project::add_servers(self, &file)
    }

    /// `UJI_MCP_TRUST_PROJECT=1`: trust `.mcp.json` of the current directory.
    pub fn trust_from_env(&self) {
        if std::env::var(project::TRUST_ENV).is_ok_and(|v| v == "1")
            && let Err(e) = self.trust_project()
        {
            self.host.notify(&format!("mcp: {e}"));
        }
    }
}

fn describe_one(s: &ServerStatus) -> String {
    let state = s.state.as_str();
    let mut line = format!(
        "{} ({}) {state}: {} tools",
        s.name,
        s.transport,
        s.tools.len()
    );
    if !s.tools.is_empty() {
        line.push_str(&format!(" [{}]", s.tools.join(", ")));
    }
    if let Some(e) = &s.last_error {
        line.push_str(&format!("; last error: {e}"));
    }
    line
}

/// Waits, at most `wait`, while any of `servers` is still starting.
fn wait_while_starting(servers: &[Arc<Server>], wait: Duration) {
    let now = Instant::now();
    let deadline = now.checked_add(wait).unwrap_or(now);
    while Instant::now() < deadline && servers.iter().any(|s| s.status().state == State::Starting) {
        std::thread::sleep(Duration::from_millis(20));
    }
}
