//! Processes for plugins: the `proc.*` host services the tools plugin
//! serves (ABI 1.1), so another plugin (the Lua plugin's `uji.job.start`)
//! can run a process and talk to it: [`ProcStart`], [`ProcRead`],
//! [`ProcWrite`], [`ProcClose`] and [`ProcStop`].
//!
//! A process started this way runs like a `run_command` nobody approved:
//! in bash for a command line, in the OS sandbox core's gate gives such a
//! command ([`CommandSandbox`](crate::services::CommandSandbox)), with the
//! environment of `env.child` (no provider key), in a process group of its
//! own whose whole tree is killed when it is stopped. Its output is read in
//! lines; what nobody reads stays bounded (the process waits).
//!
//! [`ProcRead`] blocks up to its `wait_ms`: call it from a thread of your
//! own. Without the tools plugin these fail as services uji does not offer.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::services::{Service, service};

/// The most processes one tools plugin keeps at once: running, or ended
/// with output or an exit not read yet.
pub const MAX_PROCS: usize = 32;
/// The most lines one [`ProcOutput`] carries.
pub const MAX_LINES_PER_READ: usize = 1000;
/// The most bytes of lines one [`ProcOutput`] carries.
pub const MAX_BYTES_PER_READ: usize = 1024 * 1024;
/// A longer line is cut to this many bytes and marked with [`CUT_MARK`].
pub const MAX_LINE_BYTES: usize = 64 * 1024;
/// What ends a line that was cut (the rest of it, to its newline, is
/// dropped).
pub const CUT_MARK: &str = " …[cut]";
/// Output kept for a process until it is read; when it is full the plugin
/// stops reading the process's pipes, so the process waits on its writes.
pub const MAX_BUFFERED_BYTES: usize = 4 * 1024 * 1024;
/// Input queued by [`ProcWrite`] that the process has not read yet, at most.
pub const MAX_PENDING_INPUT: usize = 4 * 1024 * 1024;
/// The longest [`ProcRead::wait_ms`] honoured; a longer wait is cut to it.
pub const MAX_WAIT_MS: u64 = 60 * 60 * 1000;
/// [`ProcExit::reason`] of a process killed at its `timeout_ms`.
pub const REASON_TIMEOUT: &str = "timeout";
/// [`ProcExit::reason`] of a process killed by [`ProcStop`].
pub const REASON_STOPPED: &str = "stopped";

/// What to run: a command line (run with bash exactly as `run_command`
/// runs one) or a program and its arguments (no shell).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ProcCommand {
    /// `"make test | tail"`: `bash --noprofile --norc -c LINE`.
    Shell(String),
    /// `["make", "test"]`: the program (found on `PATH` when it has no
    /// `/`) with these arguments.
    Argv(Vec<String>),
}

/// `proc.start`: starts a process; answers its id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcStart {
    pub command: ProcCommand,
    /// Where it runs: absolute, or relative to the session's directory
    /// (the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Variables set for it on top of what children inherit. A variable
    /// uji withholds from children (a provider key, `UJI_*`) is refused.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Killed (with its whole tree) this many milliseconds after it
    /// started; its exit then says `"timeout"`. None: no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
}
service!(
    ProcStart,
    "proc.start",
    "{\"command\": \"command line\" or [\"program\", \"arg\", …], \"cwd\"?: directory, \"env\"?: {NAME: value}, \"timeout_ms\"?: milliseconds}",
    ProcStarted
);

/// The answer of `proc.start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcStarted {
    pub id: u64,
}

/// `proc.read`: waits up to `wait_ms` for at least one line, or for the
/// end; answers every line there is now (bounded), and the exit once all
/// output was delivered. After the answer with the exit, `id` is forgotten.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcRead {
    pub id: u64,
    /// 0 answers at once.
    #[serde(default)]
    pub wait_ms: u64,
}
service!(
    ProcRead,
    "proc.read",
    "{\"id\": process id, \"wait_ms\": milliseconds}",
    ProcOutput
);

/// The answer of `proc.read`: lines without their newline (nor a `\r`
/// before it), at most [`MAX_LINES_PER_READ`] and [`MAX_BYTES_PER_READ`];
/// a line longer than [`MAX_LINE_BYTES`] is cut and ends with [`CUT_MARK`].
/// A last line without a newline comes once the stream ends.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcOutput {
    #[serde(default)]
    pub stdout: Vec<String>,
    #[serde(default)]
    pub stderr: Vec<String>,
    /// Set once, in the last answer: every line came before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit: Option<ProcExit>,
}

/// How a process ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcExit {
    /// The exit code; -1 when a signal killed it (or uji did).
    pub code: i64,
    /// Why uji killed it: [`REASON_TIMEOUT`] or [`REASON_STOPPED`]; none
    /// when it ended on its own or a signal uji did not send killed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The signal that killed it, when one did and uji did not send it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
}

/// `proc.write`: queues `data` for the process's stdin, after what was
/// queued before; answers at once. An error after [`ProcClose`], or once
/// the process stopped reading its input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcWrite {
    pub id: u64,
    pub data: String,
}
service!(
    ProcWrite,
    "proc.write",
    "{\"id\": process id, \"data\": text}",
    ()
);

/// `proc.close`: closes the process's stdin once what was queued is
/// written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcClose {
    pub id: u64,
}
service!(ProcClose, "proc.close", "{\"id\": process id}", ());

/// `proc.stop`: kills the process and every process it started; the next
/// `proc.read` reports the exit with the reason [`REASON_STOPPED`] (after
/// any output read before the kill). Stopping a process that already ended
/// leaves its exit as it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcStop {
    pub id: u64,
}
service!(ProcStop, "proc.stop", "{\"id\": process id}", ());

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn a_command_is_a_line_or_an_argv_list() {
        let line: ProcStart = serde_json::from_value(json!({"command": "ls -l"})).unwrap();
        assert_eq!(line.command, ProcCommand::Shell("ls -l".into()));
        assert_eq!(line.cwd, None);
        assert!(line.env.is_empty());
        let argv: ProcStart = serde_json::from_value(json!({
            "command": ["ls", "-l"], "env": {"A": "1"}, "timeout_ms": 5, "newer": true
        }))
        .unwrap();
        assert_eq!(
            argv.command,
            ProcCommand::Argv(vec!["ls".into(), "-l".into()])
        );
        assert_eq!(argv.env.get("A").map(String::as_str), Some("1"));
        assert_eq!(argv.timeout_ms, Some(5));
        assert!(serde_json::from_value::<ProcStart>(json!({"command": 3})).is_err());
    }

    #[test]
    fn an_output_without_exit_leaves_it_out_and_reads_back() {
        let output = ProcOutput {
            stdout: vec!["a".into()],
            ..ProcOutput::default()
        };
        let value = serde_json::to_value(&output).unwrap();
        assert_eq!(value, json!({"stdout": ["a"], "stderr": []}));
        let ended = ProcOutput {
            exit: Some(ProcExit {
                code: -1,
                reason: Some(REASON_STOPPED.into()),
                signal: None,
            }),
            ..ProcOutput::default()
        };
        let value = serde_json::to_value(&ended).unwrap();
        assert_eq!(value["exit"], json!({"code": -1, "reason": "stopped"}));
        assert_eq!(serde_json::from_value::<ProcOutput>(value).unwrap(), ended);
        let read: ProcRead = serde_json::from_value(json!({"id": 2})).unwrap();
        assert_eq!(read.wait_ms, 0);
    }
}
