//! One subagent: a `uji run --json --parent ID --ask-parent` process core
//! starts, and the conversation with it. Its lines come in on stdout
//! (docs/headless.md); its questions (`approval_request` lines) are asked
//! of the parent's person through the parent's approver and answered on
//! its stdin as frontend `approval` operations; an `interrupt` operation
//! and then SIGINT stop it, and its process group is killed if it has not
//! ended a few seconds later.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde::Deserialize as _;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, watch};
use uji_protocol::ApprovalMode;
use uji_protocol::Spent;
use uji_protocol::frontend::{ApprovalDecision, Op};
use uji_protocol::headless::{Done, Line, Question};
use uji_protocol::session::MessageBody;

use super::links::ParentLink;
use crate::gate::{Approval, ApprovalRequest};

/// How long a stopped child has to end its turn before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(3);

/// The last bytes of a child's stderr kept for its error.
const STDERR_KEPT: usize = 4096;

/// How to start one child.
#[derive(Debug, Clone)]
pub struct ChildCommand {
    pub exe: PathBuf,
    /// Every argument but those that must be read when the child starts
    /// (it may wait its turn among the call's tasks): `--mode`, `--max-wall`
    /// and the task.
    pub args: Vec<OsString>,
    /// The prompt, the last argument.
    pub task: OsString,
    /// When the parent's `wall` budget runs out.
    pub wall_ends: Option<std::time::Instant>,
    pub cwd: PathBuf,
    /// The agent's name, shown with its questions.
    pub agent: String,
}

impl ChildCommand {
    /// The whole command line as the child starts now: the parent's
    /// approval mode now (later changes follow as `set_mode` operations)
    /// and the seconds left of its wall budget, rounded up.
    fn args_now(&self, mode: ApprovalMode) -> Vec<OsString> {
        let mut args = self.args.clone();
        args.extend(["--mode".into(), mode.as_str().into()]);
        if let Some(ends) = self.wall_ends {
            let left = ends.saturating_duration_since(std::time::Instant::now());
            let seconds = left.as_secs() + u64::from(left.subsec_nanos() > 0);
            args.extend(["--max-wall".into(), seconds.max(1).to_string().into()]);
        }
        args.extend(["--".into(), self.task.clone()]);
        args
    }
}

/// How a child ended.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChildOutcome {
    pub session: Option<String>,
    pub text: Option<String>,
    pub error: Option<String>,
    pub interrupted: bool,
    pub spent: Spent,
    /// The cost was unknown (a model without a price).
    pub unpriced: bool,
}

/// What the child's lines are shown as while it runs.
pub trait ChildWatcher: Send + Sync {
    /// One line of the child's `--json` stream, once its session is known:
    /// as written (frontends get it so) and as read.
    fn line(&self, session: &str, raw: &Value, line: &Line);
}

/// The child's `done` line read into the outcome.
fn read_done(done: &Done, outcome: &mut ChildOutcome) {
    outcome.spent.usage = done.usage;
    match done.cost {
        Some(dollars) => outcome.spent.cost = Some((dollars * 1_000_000.0).round() as u64),
        None => outcome.unpriced = true,
    }
    match &done.error {
        Some(_) if done.interrupted() => outcome.interrupted = true,
        Some(error) => outcome.error = Some(error.clone()),
        None => outcome.text = done.text.clone(),
    }
}

/// A child's question as the parent's approver asks it.
fn question_of(asked: &Question, agent: &str, session: &str) -> ApprovalRequest {
    ApprovalRequest {
        // The child's call ids are its model's: unique only in its session.
        call_id: format!("{session}:{}", asked.call_id),
        tool: asked.tool.clone(),
        verb: asked.verb.clone(),
        subject: asked.subject.clone(),
        question: asked.question.clone(),
        diff: asked.diff.clone(),
        args: asked.args.clone(),
        labels: asked.labels.clone(),
        agent: Some(agent.to_string()),
    }
}

/// An operation as the child reads it: one JSON line of the frontend
/// protocol.
fn op_line(op: &Op) -> String {
    match serde_json::to_string(op) {
        Ok(json) => format!("{json}\n"),
        // An `Op` is plain data; this cannot fail, but a child must never
        // get half a line.
        Err(e) => {
            tracing::warn!("cannot encode an operation for a subagent: {e}");
            String::new()
        }
    }
}

/// The `approval` operation that answers the child's question `call_id`.
fn answer_op(call_id: &str, approval: Option<Approval>) -> String {
    let (decision, guidance) = match approval {
        Some(Approval::Allow) => (ApprovalDecision::AllowOnce, None),
        Some(Approval::AllowSession) => (ApprovalDecision::AllowSession, None),
        Some(Approval::Deny { guidance }) => (ApprovalDecision::Deny, guidance),
        Some(Approval::Stop) => (ApprovalDecision::Stop, None),
        Some(Approval::Unavailable) | None => (
            ApprovalDecision::Deny,
            Some("nobody could answer this question for the subagent".to_string()),
        ),
    };
    op_line(&Op::Approval {
        call_id: call_id.to_string(),
        decision: Some(decision),
        allow: None,
        guidance,
    })
}

/// Whom a signal goes to.
#[derive(Clone, Copy)]
enum To {
    /// The child alone (SIGINT: it stops its own commands).
    Child,
    /// The process group the child leads (it was started with
    /// `process_group(0)`), what it started included.
    Group,
}

fn signal(pid: Option<u32>, to: To, number: i32) {
    let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) else {
        return;
    };
    let target = match to {
        To::Child => pid,
        To::Group => -pid,
    };
    // SAFETY: kill(2) touches no memory; a negative pid names the group.
    unsafe {
        libc::kill(target, number);
    }
}

/// Runs one child to its end (or until `stop` turns true, then stops it).
/// Each change of the parent's approval mode (`mode`) is passed on, so a
/// switch to plan mode holds for a subagent already running.
pub async fn run(
    command: &ChildCommand,
    link: &ParentLink,
    mut stop: watch::Receiver<bool>,
    mut mode: watch::Receiver<ApprovalMode>,
    watcher: &dyn ChildWatcher,
) -> ChildOutcome {
    let mut process = tokio::process::Command::new(&command.exe);
    // Read together with marking the mode seen: a change after it reaches
    // the child as an operation, one before it is in its command line.
    let mode_now = *mode.borrow_and_update();
    process
        .args(command.args_now(mode_now))
        .current_dir(&command.cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .process_group(0);
    let mut child = match process.spawn() {
        Ok(child) => child,
        Err(e) => {
            return ChildOutcome {
                error: Some(format!(
                    "cannot start the subagent ({}): {e}",
                    command.exe.display()
                )),
                ..ChildOutcome::default()
            };
        }
    };
    let pid = child.id();
    let (Some(mut stdin), Some(stdout), Some(mut stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        signal(pid, To::Group, libc::SIGKILL);
        return ChildOutcome {
            error: Some("the subagent's pipes could not be opened".to_string()),
            ..ChildOutcome::default()
        };
    };
    let (to_child, mut lines_out) = mpsc::unbounded_channel::<String>();
    let writer = tokio::spawn(async move {
        while let Some(line) = lines_out.recv().await {
            if stdin.write_all(line.as_bytes()).await.is_err() || stdin.flush().await.is_err() {
                break;
            }
        }
    });
    let errors = tokio::spawn(async move {
        let mut all = Vec::new();
        let _ = stderr.read_to_end(&mut all).await;
        let from = all.len().saturating_sub(STDERR_KEPT);
        String::from_utf8_lossy(&all[from..]).trim().to_string()
    });
    let mut outcome = ChildOutcome::default();
    let mut lines = BufReader::new(stdout).lines();
    let mut stop_at: Option<tokio::time::Instant> = None;
    let mut done = false;
    let mut following_mode = true;
    loop {
        let kill_at = stop_at.map(|at| at + STOP_GRACE);
        tokio::select! {
            line = lines.next_line() => match line {
                Ok(Some(line)) => done |= read_line(&line, command, link, &to_child, watcher, &mut outcome),
                Ok(None) | Err(_) => break,
            },
            changed = stop.changed(), if stop_at.is_none() => {
                if changed.is_err() || *stop.borrow() {
                    outcome.interrupted = true;
                    let _ = to_child.send(op_line(&Op::Interrupt));
                    signal(pid, To::Child, libc::SIGINT);
                    stop_at = Some(tokio::time::Instant::now());
                }
            }
            changed = mode.changed(), if following_mode => match changed {
                Ok(()) => {
                    let now = *mode.borrow_and_update();
                    let _ = to_child.send(op_line(&Op::SetMode { mode: now }));
                }
                Err(_) => following_mode = false,
            },
            () = async { if let Some(at) = kill_at { tokio::time::sleep_until(at).await } }, if kill_at.is_some() => {
                signal(pid, To::Group, libc::SIGKILL);
                break;
            }
        }
    }
    drop(to_child);
    writer.abort();
    let status = child.wait().await;
    let stderr = errors.await.unwrap_or_default();
    if !done && outcome.error.is_none() && !outcome.interrupted {
        let how = match status {
            Ok(status) => format!("ended ({status})"),
            Err(e) => format!("could not be waited for: {e}"),
        };
        let said = if stderr.is_empty() {
            String::new()
        } else {
            format!(": {stderr}")
        };
        outcome.error = Some(format!("the subagent {how} before it answered{said}"));
    }
    outcome
}

/// Handles one line; true for the `done` line.
fn read_line(
    line: &str,
    command: &ChildCommand,
    link: &ParentLink,
    to_child: &mpsc::UnboundedSender<String>,
    watcher: &dyn ChildWatcher,
    outcome: &mut ChildOutcome,
) -> bool {
    let Some((raw, read)) = serde_json::from_str::<Value>(line)
        .ok()
        .and_then(|raw| Line::deserialize(&raw).ok().map(|read| (raw, read)))
    else {
        tracing::debug!("subagent {}: not a --json line: {line}", command.agent);
        return false;
    };
    match &read {
        Line::Session { id } => outcome.session = Some(id.clone()),
        Line::Message { message } if matches!(message.body, MessageBody::Assistant { .. }) => {
            outcome.spent.requests += 1
        }
        Line::ApprovalRequest(asked) => {
            let session = outcome.session.as_deref().unwrap_or_default();
            ask(asked, session, command, link, to_child);
        }
        Line::Done(done) => read_done(done, outcome),
        _ => {}
    }
    if let Some(session) = &outcome.session {
        watcher.line(session, &raw, &read);
    }
    matches!(read, Line::Done(_))
}

/// Asks the parent's person the child's question; the answer goes to the
/// child when it comes (other lines go on meanwhile).
fn ask(
    asked: &Question,
    session: &str,
    command: &ChildCommand,
    link: &ParentLink,
    to_child: &mpsc::UnboundedSender<String>,
) {
    let question = question_of(asked, &command.agent, session);
    let child_call = asked.call_id.clone();
    let approver = std::sync::Arc::clone(&link.approver);
    let to_child = to_child.clone();
    tokio::spawn(async move {
        let answer = approver.ask(question).await.ok();
        let _ = to_child.send(answer_op(&child_call, answer));
    });
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn a_done_line_gives_the_answer_usage_and_cost() {
        let done = |line: Value| match Line::deserialize(&line).unwrap() {
            Line::Done(done) => done,
            other => panic!("{other:?}"),
        };
        let mut outcome = ChildOutcome::default();
        let line = json!({"type": "done", "text": "ok", "cost": 0.0125,
            "usage": {"input": 10, "output": 5, "cache_read": 0, "cache_write": 0}});
        read_done(&done(line), &mut outcome);
        assert_eq!(outcome.text.as_deref(), Some("ok"));
        assert_eq!(outcome.spent.cost, Some(12_500));
        assert_eq!(outcome.spent.usage.input, 10);
        let mut unpriced = ChildOutcome::default();
        read_done(
            &done(json!({"type": "done", "error": "interrupted", "usage": {}})),
            &mut unpriced,
        );
        assert!(unpriced.interrupted && unpriced.unpriced);
    }

    #[test]
    fn the_mode_and_the_time_left_are_read_when_the_child_starts_and_the_task_comes_last() {
        let command = ChildCommand {
            exe: PathBuf::from("uji"),
            args: vec!["run".into(), "--json".into()],
            task: "--not-a-flag".into(),
            wall_ends: Some(std::time::Instant::now() + std::time::Duration::from_millis(2500)),
            cwd: PathBuf::from("/w"),
            agent: "general".into(),
        };
        let args: Vec<String> = command
            .args_now(ApprovalMode::Plan)
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            args,
            [
                "run",
                "--json",
                "--mode",
                "plan",
                "--max-wall",
                "3",
                "--",
                "--not-a-flag"
            ]
        );
        let spent = ChildCommand {
            wall_ends: Some(std::time::Instant::now()),
            ..command
        };
        let args = spent.args_now(ApprovalMode::Ask);
        assert!(args.iter().any(|a| a == "1"), "at least a second: {args:?}");
    }

    #[test]
    fn a_mode_change_and_an_interrupt_go_to_the_child_as_operations() {
        let set: Value = serde_json::from_str(&op_line(&Op::SetMode {
            mode: ApprovalMode::Plan,
        }))
        .unwrap();
        assert_eq!(set, json!({"type": "set_mode", "mode": "plan"}));
        let stop: Value = serde_json::from_str(&op_line(&Op::Interrupt)).unwrap();
        assert_eq!(stop, json!({"type": "interrupt"}));
    }

    #[test]
    fn a_question_names_its_agent_and_answers_go_back_as_operations() {
        let line = json!({"type": "approval_request", "call_id": "c1", "tool": "run_command",
            "verb": "Shell", "subject": "make", "question": "Run make?", "args": {"command": "make"}});
        let Line::ApprovalRequest(asked) = Line::deserialize(&line).unwrap() else {
            panic!("a question")
        };
        let question = question_of(&asked, "tester", "s1");
        assert_eq!(question.agent.as_deref(), Some("tester"));
        assert_eq!(question.call_id, "s1:c1");
        assert_eq!(question.subject, "make");
        let op: Value = serde_json::from_str(&answer_op(
            "c1",
            Some(Approval::Deny {
                guidance: Some("use cargo".into()),
            }),
        ))
        .unwrap();
        assert_eq!(
            op,
            json!({"type": "approval", "call_id": "c1", "decision": "deny", "guidance": "use cargo"})
        );
        let nobody: Value = serde_json::from_str(&answer_op("c2", None)).unwrap();
        assert_eq!(nobody["decision"], "deny");
    }
}
