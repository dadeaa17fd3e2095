//! A client for `uji acp`, as an editor is: the real binary spawned with
//! pipes, JSON-RPC 2.0 lines written to its stdin, every line of its
//! stdout read and checked to be a JSON-RPC message.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use uji_fake_model::FakeModel;

use crate::Sandbox;

/// `UJI_PLUGIN_PATH` for an editor session: the ACP frontend and the
/// plugins a session needs.
pub fn plugin_path() -> String {
    crate::plugin_path(&[
        "uji_plugin_acp",
        "uji_plugin_tools",
        "uji_plugin_openai_chat",
        "uji_plugin_lua",
    ])
}

/// A sandbox whose init.lua adds the fake provider (models m1 and m2), uses m1,
/// with plan mode and a Lua slash command `/hello`.
pub fn sandbox(model: &FakeModel) -> Sandbox {
    let sandbox = Sandbox::new();
    let init = format!(
        r#"
uji.provider.add({{ id = "fake", wire = "openai-chat", base_url = "{}", models = {{ "m1", "m2" }} }})
uji.model.use("fake/m1")
require("uji.planmode").setup()
uji.command.add("hello", {{ desc = "Say hello", handler = function(args) return "hello " .. args end }})
"#,
        model.base_url()
    );
    std::fs::write(sandbox.config().join("init.lua"), init).unwrap();
    sandbox
}

pub struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: u64,
    /// Every message read so far, in order.
    pub seen: Vec<Value>,
}

impl Client {
    /// Spawns `uji acp` in the sandbox's work directory.
    pub fn spawn(sandbox: &Sandbox) -> Client {
        let mut child = sandbox
            .uji()
            .env("UJI_PLUGIN_PATH", plugin_path())
            .arg("acp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Client {
            stdin: child.stdin.take(),
            child,
            lines,
            next_id: 100,
            seen: Vec::new(),
        }
    }

    pub fn send_line(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request; returns its id.
    pub fn request(&mut self, method: &str, params: Value) -> u64 {
        self.next_id += 1;
        let id = self.next_id;
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_line(&line.to_string());
        id
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        let line = json!({"jsonrpc": "2.0", "method": method, "params": params});
        self.send_line(&line.to_string());
    }

    /// Answers a request uji sent.
    pub fn respond(&mut self, id: &Value, result: Value) {
        let line = json!({"jsonrpc": "2.0", "id": id, "result": result});
        self.send_line(&line.to_string());
    }

    /// Reads messages until one satisfies `want` (20 s at most).
    pub fn until(&mut self, what: &str, want: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(left) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => {
                    panic!("no {what} within 20 s; read: {:#?}", self.seen)
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("uji closed stdout before {what}; read: {:#?}", self.seen)
                }
            };
            let message: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
            assert_eq!(message["jsonrpc"], "2.0", "not JSON-RPC 2.0: {line}");
            self.seen.push(message.clone());
            if want(&message) {
                return message;
            }
        }
    }

    /// The answer to request `id`.
    pub fn answer(&mut self, id: u64) -> Value {
        self.until(&format!("the answer to {id}"), |m| {
            m["id"] == id && m.get("method").is_none()
        })
    }

    /// The next request uji sends of `method`.
    pub fn request_from_uji(&mut self, method: &str) -> Value {
        self.until(method, |m| m["method"] == method && m.get("id").is_some())
    }

    /// The next `session/update` whose update satisfies `want`.
    pub fn update(&mut self, what: &str, want: impl Fn(&Value) -> bool) -> Value {
        self.until(what, |m| {
            m["method"] == "session/update" && want(&m["params"]["update"])
        })["params"]["update"]
            .clone()
    }

    /// `initialize` then `session/new` in the work directory; the session id.
    pub fn start(&mut self, sandbox: &Sandbox) -> String {
        let answer = self.start_with(sandbox, json!([]));
        answer["result"]["sessionId"]
            .as_str()
            .expect("a session id")
            .to_string()
    }

    /// `initialize` then `session/new` with `mcp_servers`; its answer.
    pub fn start_with(&mut self, sandbox: &Sandbox, mcp_servers: Value) -> Value {
        let id = self.request(
            "initialize",
            json!({"protocolVersion": 1, "clientCapabilities": {}}),
        );
        let answer = self.answer(id);
        assert_eq!(answer["result"]["protocolVersion"], 1, "{answer}");
        assert_eq!(
            answer["result"]["authMethods"],
            json!([]),
            "a model is set up"
        );
        let id = self.request(
            "session/new",
            json!({"cwd": sandbox.work(), "mcpServers": mcp_servers}),
        );
        self.answer(id)
    }

    /// The updates read so far.
    pub fn updates(&self) -> Vec<&Value> {
        self.seen
            .iter()
            .filter(|m| m["method"] == "session/update")
            .map(|m| &m["params"]["update"])
            .collect()
    }

    /// Closes stdin and waits for uji to exit; its exit status.
    pub fn finish(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "uji acp did not exit after stdin closed"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
