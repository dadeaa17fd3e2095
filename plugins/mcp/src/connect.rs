//! Opening a connection: a child process over stdio, or streamable HTTP.
//! rmcp does the protocol; this file only builds its transports.

use std::collections::{BTreeMap, HashMap};
use std::process::Stdio;
use std::sync::Arc;

use parking_lot::Mutex;

use http::{HeaderName, HeaderValue};
use process_wrap::tokio::{CommandWrap, KillOnDrop, ProcessGroup};
use rmcp::ServiceExt;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::ChildStderr;
use uji_sdk::LogLevel;

use crate::config::Transport;
use crate::server::{Client, Handler, Server};

/// Process groups of the stdio servers started, killed when uji exits.
static GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());

pub async fn connect(server: &Arc<Server>, handler: Handler) -> Result<Client, String> {
    match &server.config.transport {
        Transport::Stdio {
            command,
            args,
            env,
            cwd,
        } => stdio(server, handler, command, args, env, cwd.as_deref()).await,
        Transport::Http { url, headers } => http(handler, url, headers).await,
    }
}

async fn stdio(
    server: &Arc<Server>,
    handler: Handler,
    command: &str,
    args: &[String],
    env: &BTreeMap<String, String>,
    cwd: Option<&str>,
) -> Result<Client, String> {
    // uji's environment without provider keys and UJI_* secrets, then the
    // spec's own `env` as given.
    let mut cmd = tokio::process::Command::from(uji_sdk::child::command(command));
    cmd.args(args).envs(env);
    if let Some(cwd) = cwd {
        cmd.current_dir(cwd);
    }
    die_with_uji(&mut cmd);
    let mut wrapped = CommandWrap::from(cmd);
    // A group of its own: killing the group takes `npx` and the node it runs.
    wrapped.wrap(ProcessGroup::leader()).wrap(KillOnDrop);
    let (child, stderr) = TokioChildProcess::builder(wrapped)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("could not start `{command}`: {e}"))?;
    if let Some(pid) = child.id() {
        remember_group(pid);
    }
    if let Some(stderr) = stderr {
        tokio::spawn(log_stderr(Arc::clone(server), stderr));
    }
    handler
        .serve(child)
        .await
        .map_err(|e| format!("handshake failed: {e}"))
}

/// The server gets SIGKILL when uji dies, even by SIGKILL (when nothing
/// at exit runs). The kernel sends it when the thread that spawned the
/// child ends: that is one of the plugin runtime's workers, which live as
/// long as uji. Its own children do not inherit this; they are killed with
/// its process group at a normal exit, and otherwise see their stdin close.
fn die_with_uji(cmd: &mut tokio::process::Command) {
    let parent = rustix::process::getpid();
    // SAFETY: prctl, getppid and _exit are async-signal-safe system calls;
    // nothing is allocated between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))?;
            // uji died before the signal was armed: nobody would send it.
            if rustix::process::getppid() != Some(parent) {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

/// A server's stderr goes to uji's log, line by line, never to the screen.
async fn log_stderr(server: Arc<Server>, stderr: ChildStderr) {
    let mut lines = BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        server.log(LogLevel::Info, &format!("stderr: {line}"));
    }
}

async fn http(
    handler: Handler,
    url: &str,
    headers: &BTreeMap<String, String>,
) -> Result<Client, String> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url);
    let mut custom = HashMap::new();
    for (name, value) in headers {
        // rmcp sends the bearer token itself; a second Authorization header
        // would conflict with it.
        if name.eq_ignore_ascii_case("authorization") {
            let token = value.strip_prefix("Bearer ").unwrap_or(value);
            config = config.auth_header(token);
            continue;
        }
        let name = HeaderName::try_from(name.as_str())
            .map_err(|e| format!("header name {name:?}: {e}"))?;
        let value =
            HeaderValue::try_from(value.as_str()).map_err(|e| format!("header {name}: {e}"))?;
        custom.insert(name, value);
    }
    let transport = StreamableHttpClientTransport::from_config(config.custom_headers(custom));
    handler
        .serve(transport)
        .await
        .map_err(|e| format!("handshake with {url} failed: {e}"))
}

fn remember_group(pid: u32) {
    let Ok(pid) = i32::try_from(pid) else {
        return;
    };
    let mut groups = GROUPS.lock();
    groups.retain(|&g| alive(g));
    groups.push(pid);
}

fn alive(group: i32) -> bool {
    // SAFETY: signal 0 only checks that the group exists.
    unsafe { libc::killpg(group, 0) == 0 }
}

/// Kills a server's whole process tree (its process group).
pub fn kill_group(pid: i32) {
    // SAFETY: killpg has no memory effects; a gone group is ESRCH.
    unsafe { libc::killpg(pid, libc::SIGKILL) };
}

extern "C" fn kill_all_at_exit() {
    // try_lock: at exit another thread may hold it forever.
    if let Some(groups) = GROUPS.try_lock() {
        groups.iter().copied().for_each(kill_group);
    }
}

/// Kills every server's process group when uji exits. The plugin is never
/// unloaded, so the function stays mapped until then.
pub fn kill_servers_at_exit() {
    // SAFETY: registers a function with no arguments that only sends signals.
    unsafe { libc::atexit(kill_all_at_exit) };
}
