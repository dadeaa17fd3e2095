//! One subagent: a session of its own, run in this process on the
//! parent's core, to one answer.
//!
//! It has its own conversation, session file (saved with its parent),
//! tools, model and budget; everything that decides what a call may do is
//! the parent's, shared: the policy, hooks, sandbox, roots and MCP servers,
//! and the approval mode (a switch to plan mode holds at the subagent's
//! next call). What the parent's person allowed for the parent's session,
//! before or while the subagent runs, holds for it too; its own "allow for
//! this session" answers stay its own. Its questions go to the parent's
//! approver, labelled with the agent. Its events become the lines of `uji
//! run --json` (uji_protocol's `headless` writer), shown to the parent's
//! frontends as they come.
//!
//! In the process, not a `uji run` child process: a child process costs
//! its start (about 5 ms of CPU: mapping the plugins, the Lua defaults,
//! a runtime), which four children at once pay four times over.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serde::Deserialize as _;
use serde_json::Value;
use tokio::sync::{oneshot, watch};
use uji_host::Registry;
use uji_protocol::Spent;
use uji_protocol::frontend::{Event, NoticeLevel};
use uji_protocol::headless::Line;

use super::links::ParentLink;
use crate::auth::providers::{Providers, Resolved};
use crate::gate::{Approval, ApprovalRequest, Approver, Gate};
use crate::session::store::{SessionFile, Store};
use crate::turn::agent::{Agent, Connection, TurnOutcome, TurnSettings};
use crate::turn::budget::Budget;
use crate::turn::control::{EventSink, MessageQueue, SessionControl};
use crate::turn::interrupt::interrupt_pair;

/// What a subagent is run on: the parent's core.
#[derive(Clone)]
pub struct Core {
    pub gate: Gate,
    pub registry: Registry,
    pub providers: Providers,
    pub store: Store,
}

/// The limits of a child's budget that its agent file and its parent's
/// budget set; the rest of its budget is the configured one.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Limits {
    pub turns: Option<u64>,
    pub tokens: Option<u64>,
    /// Dollars.
    pub cost: Option<f64>,
}

/// How to start one child.
#[derive(Debug, Clone)]
pub struct ChildStart {
    /// The calling session.
    pub parent: String,
    /// The agent's name, shown with its questions.
    pub agent: String,
    pub task: String,
    pub title: String,
    /// The tools it is offered.
    pub tools: Vec<String>,
    /// `provider/model`; the configured model when `None`.
    pub model: Option<String>,
    pub effort: Option<String>,
    /// The agent's prompt, after the system prompt.
    pub append_prompt: Option<String>,
    pub limits: Limits,
    /// When the parent's `wall` budget runs out.
    pub wall_ends: Option<Instant>,
    pub cwd: PathBuf,
}

impl ChildStart {
    /// The child's budget as it starts now: the configured one, with its
    /// limits over it and what is left of the parent's time, rounded up to
    /// the second (a task may have waited its turn).
    fn budget(&self, configured: Budget, now: Instant) -> Budget {
        let wall = self.wall_ends.map(|ends| {
            let left = ends.saturating_duration_since(now);
            (left.as_secs() + u64::from(left.subsec_nanos() > 0)).max(1)
        });
        Budget {
            turns: self.limits.turns.map(|n| n.max(1)).or(configured.turns),
            tokens: self.limits.tokens.map(|n| n.max(1)).or(configured.tokens),
            cost: self
                .limits
                .cost
                .map(|c| c.max(0.000_001))
                .or(configured.cost),
            wall: wall.or(configured.wall),
            ..configured
        }
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

impl ChildOutcome {
    fn failed(error: String) -> ChildOutcome {
        ChildOutcome {
            error: Some(error),
            ..ChildOutcome::default()
        }
    }
}

/// What the child's lines are shown as while it runs.
pub trait ChildWatcher: Send + Sync {
    /// One line of the child's `--json` stream: as written (frontends get
    /// it so) and as read.
    fn line(&self, session: &str, raw: &Value, line: &Line);
}

/// The child's questions, asked of the parent's approver: labelled with
/// the agent, and with call ids made unique beside the parent's (the
/// child's are its model's, unique only in its session).
struct AskParent {
    parent: Arc<dyn Approver>,
    agent: String,
    session: String,
}

impl Approver for AskParent {
    fn ask(&self, mut request: ApprovalRequest) -> oneshot::Receiver<Approval> {
        request.call_id = format!("{}:{}", self.session, request.call_id);
        request.agent = Some(self.agent.clone());
        self.parent.ask(request)
    }

    fn wants_preview(&self) -> bool {
        self.parent.wants_preview()
    }

    fn automatic(&self) -> bool {
        self.parent.automatic()
    }
}

/// Hands each event the child's agent emits to the watcher as its line.
fn sink_to(session: String, watcher: Arc<dyn ChildWatcher>) -> EventSink {
    Arc::new(move |event: Event| {
        if let Some(line) = uji_protocol::headless::encode_value(&event, true) {
            show(&session, line, watcher.as_ref());
        }
    })
}

fn show(session: &str, line: Result<Value, serde_json::Error>, watcher: &dyn ChildWatcher) {
    let read = line
        .ok()
        .and_then(|raw| Some((Line::deserialize(&raw).ok()?, raw)));
    match read {
        Some((line, raw)) => watcher.line(session, &raw, &line),
        None => tracing::warn!("subagent {session}: an event could not be shown as a line"),
    }
}

/// The child's session, opened, and its agent built on `core`.
fn build(
    start: &ChildStart,
    core: &Core,
    link: &ParentLink,
    model: Resolved,
    session: SessionFile,
) -> Agent {
    let id = session.id().to_string();
    let gate = core.gate.for_subagent(&id, link.rules.clone());
    let approver = Arc::new(AskParent {
        parent: Arc::clone(&link.approver),
        agent: start.agent.clone(),
        session: id,
    });
    let configured = Budget::from_config(core.registry.config(crate::turn::budget::CONFIG_KEY));
    let settings = TurnSettings {
        idle_timeout: model.provider.idle_timeout,
        model: Ok(model),
        tools: Some(start.tools.clone()),
        append_prompt: start.append_prompt.clone(),
        effort: start.effort.clone(),
        cwd: start.cwd.clone(),
        secrets: core.providers.secret_values(),
        budget: Some(start.budget(configured, Instant::now())),
        subagent_of: Some(start.parent.clone()),
    };
    Agent::new(gate, core.registry.clone(), session, settings, approver)
}

/// Runs one child to its answer (or until `stop` turns true, then
/// interrupts it).
pub async fn run(
    start: &ChildStart,
    core: &Core,
    link: &ParentLink,
    mut stop: watch::Receiver<bool>,
    watcher: Arc<dyn ChildWatcher>,
) -> ChildOutcome {
    let model = match core.providers.resolve(start.model.as_deref()) {
        Ok(model) => model,
        Err(e) => return ChildOutcome::failed(format!("the subagent has no model: {e}")),
    };
    let session = match core
        .store
        .create_with(&start.cwd, &start.title, Some(&start.parent))
    {
        Ok(session) => session,
        Err(e) => return ChildOutcome::failed(format!("cannot save the subagent's session: {e}")),
    };
    let id = session.id().to_string();
    show(
        &id,
        uji_protocol::headless::session_line(&id),
        watcher.as_ref(),
    );
    let notice = model.notice();
    let mut agent = build(start, core, link, model, session);
    let events = sink_to(id.clone(), Arc::clone(&watcher));
    if let Some(notice) = notice {
        events(Event::notice(NoticeLevel::Warn, notice));
    }
    let (snapshot, published) = watch::channel(agent.snapshot());
    let control = SessionControl::new(agent.chosen_model());
    agent.connect(Connection {
        events,
        queue: MessageQueue::default(),
        control,
        approver: None,
        snapshot,
    });
    // Its jobs end with it, however it ends (a panic, the call dropped).
    let mut jobs = JobsEnd::armed(&core.registry, &id);
    let (interrupter, mut interrupt) = interrupt_pair();
    let stopper = tokio::spawn(async move {
        while !*stop.borrow_and_update() {
            if stop.changed().await.is_err() {
                return;
            }
        }
        interrupter.interrupt();
    });
    let turn = agent
        .turn(start.task.clone(), Vec::new(), &mut interrupt)
        .await;
    stopper.abort();
    jobs.now().await;
    let outcome = outcome_of(id, turn, &published.borrow());
    // The agent goes (and its link for subagents of its own with it) once
    // its turn is over.
    drop(agent);
    outcome
}

/// The child's background jobs end with its turn, as they would with a
/// session of its own: when its turn ends ([`JobsEnd::now`], waited for),
/// or when it is dropped unfinished (a panic, the call's task dropped).
struct JobsEnd {
    armed: Option<(Registry, String)>,
}

impl JobsEnd {
    fn armed(registry: &Registry, session: &str) -> JobsEnd {
        JobsEnd {
            armed: Some((registry.clone(), session.to_string())),
        }
    }

    async fn now(&mut self) {
        let Some((registry, session)) = self.armed.take() else {
            return;
        };
        let stopping = tokio::task::spawn_blocking(move || {
            crate::server::jobs::stop_session(&registry, &session);
        });
        if let Err(e) = stopping.await {
            tracing::warn!("stopping a subagent's jobs failed: {e}");
        }
    }
}

impl Drop for JobsEnd {
    fn drop(&mut self) {
        if let Some((registry, session)) = self.armed.take()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn_blocking(move || {
                crate::server::jobs::stop_session(&registry, &session);
            });
        }
    }
}

/// What the parent learns of the child's turn.
fn outcome_of(
    session: String,
    turn: TurnOutcome,
    snapshot: &crate::turn::agent::SessionSnapshot,
) -> ChildOutcome {
    let mut outcome = ChildOutcome {
        session: Some(session),
        spent: Spent {
            usage: turn.usage,
            requests: snapshot.requests,
            cost: snapshot.cost,
            ..Spent::default()
        },
        unpriced: snapshot.cost.is_none(),
        ..ChildOutcome::default()
    };
    match turn.error {
        Some(_) if turn.interrupted => outcome.interrupted = true,
        Some(error) => outcome.error = Some(error),
        None if turn.interrupted => outcome.interrupted = true,
        None => outcome.text = turn.text,
    }
    outcome
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::time::Duration;

    use super::*;

    fn start() -> ChildStart {
        ChildStart {
            parent: "p".into(),
            agent: "general".into(),
            task: "t".into(),
            title: "general: t".into(),
            tools: vec!["read_file".into()],
            model: None,
            effort: None,
            append_prompt: None,
            limits: Limits::default(),
            wall_ends: None,
            cwd: PathBuf::from("/w"),
        }
    }

    #[test]
    fn a_childs_limits_win_over_the_configured_ones_and_the_rest_is_kept() {
        let configured = Budget {
            turns: Some(50),
            tool_calls: Some(7),
            children: Some(2),
            ..Budget::default()
        };
        let child = ChildStart {
            limits: Limits {
                turns: Some(3),
                tokens: Some(0),
                cost: None,
            },
            ..start()
        };
        let budget = child.budget(configured, Instant::now());
        assert_eq!(budget.turns, Some(3));
        assert_eq!(budget.tokens, Some(1), "never a limit of nothing");
        assert_eq!(budget.tool_calls, Some(7));
        assert_eq!(budget.children, Some(2));
        assert_eq!(budget.cost, None);
        assert_eq!(budget.wall, None);
    }

    #[test]
    fn the_time_left_is_read_when_the_child_starts_rounded_up_to_a_second() {
        let now = Instant::now();
        let child = ChildStart {
            wall_ends: Some(now + Duration::from_millis(2500)),
            ..start()
        };
        assert_eq!(child.budget(Budget::default(), now).wall, Some(3));
        let spent = ChildStart {
            wall_ends: Some(now),
            ..start()
        };
        assert_eq!(spent.budget(Budget::default(), now).wall, Some(1));
    }

    #[derive(Default)]
    struct Recorded(parking_lot::Mutex<Vec<ApprovalRequest>>);

    impl Approver for Recorded {
        fn ask(&self, request: ApprovalRequest) -> oneshot::Receiver<Approval> {
            self.0.lock().push(request);
            let (tx, rx) = oneshot::channel();
            let _ = tx.send(Approval::Allow);
            rx
        }
    }

    #[test]
    fn a_childs_question_names_its_agent_and_a_call_id_unique_beside_the_parents() {
        let parent = Arc::new(Recorded::default());
        let asker = AskParent {
            parent: parent.clone(),
            agent: "tester".into(),
            session: "s1".into(),
        };
        let request = ApprovalRequest::yes_or_no(
            "run_command",
            "Run make?".into(),
            Value::Null,
            "yes".into(),
            "no".into(),
        );
        let call = request.call_id.clone();
        drop(asker.ask(request));
        let asked = parent.0.lock().pop().unwrap();
        assert_eq!(asked.agent.as_deref(), Some("tester"));
        assert_eq!(asked.call_id, format!("s1:{call}"));
    }

    #[test]
    fn an_interrupted_turn_is_told_as_such_and_a_failed_one_by_its_error() {
        let snapshot = crate::turn::agent::SessionSnapshot {
            requests: 2,
            cost: Some(12_500),
            ..Default::default()
        };
        let turn = |text: Option<&str>, error: Option<&str>, interrupted| TurnOutcome {
            text: text.map(str::to_string),
            error: error.map(str::to_string),
            interrupted,
            usage: Default::default(),
            budget: None,
        };
        let answered = outcome_of("s".into(), turn(Some("ok"), None, false), &snapshot);
        assert_eq!(answered.text.as_deref(), Some("ok"));
        assert_eq!(answered.spent.requests, 2);
        assert_eq!(answered.spent.cost, Some(12_500));
        assert!(!answered.unpriced);
        let stopped = outcome_of("s".into(), turn(None, Some("interrupted"), true), &snapshot);
        assert!(stopped.interrupted && stopped.error.is_none());
        let failed = outcome_of("s".into(), turn(None, Some("no key"), false), &snapshot);
        assert_eq!(failed.error.as_deref(), Some("no key"));
        let unpriced = crate::turn::agent::SessionSnapshot::default();
        assert!(outcome_of("s".into(), turn(Some("ok"), None, false), &unpriced).unpriced);
    }
}
