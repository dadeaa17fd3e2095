//! The `subagent` tool: runs child sessions for the session that calls it
//! and returns their answers, bounded, with their session ids.

use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::sync::watch;
use uji_host::{NativeCall, NativeTool};
use uji_protocol::frontend::Event;
use uji_protocol::headless::Line;
use uji_protocol::{DeclaredPolicy, Spent, ToolCall, ToolOutput, ToolSpec};

use super::args::{self, Plan, Task};
use super::child::{self, ChildOutcome, ChildStart, ChildWatcher, Core, Limits};
use super::definitions::{self, AgentDefinition};
use super::links::ParentLink;

/// The tool's name.
pub const NAME: &str = "subagent";

/// Config key: how many children of one call run at once.
pub const PARALLEL_KEY: &str = "subagents.parallel";
const DEFAULT_PARALLEL: usize = 4;

/// Each answer is cut to this many bytes when several come back.
const ANSWER_BYTES_OF_MANY: usize = 50 * 1024;

pub struct SubagentTool {
    spawner: Arc<Spawner>,
    /// Read when registered: what the model sees.
    description: String,
}

/// What starts children; shared with the calls' runners (a chain step is
/// made when the step before has answered).
struct Spawner {
    core: Core,
}

impl SubagentTool {
    pub fn new(core: Core) -> SubagentTool {
        let registry = core.registry.clone();
        let (agents, problems) = definitions::definitions(registry.config(definitions::CONFIG_KEY));
        for problem in problems {
            registry.notify_at(
                uji_protocol::frontend::NoticeLevel::Warn,
                "agents",
                &problem,
            );
        }
        let description = format!(
            "Runs a subagent: a fresh session with its own context that works on a task and \
returns only its final answer (and its session id). Use it for self-contained work whose \
details you do not need: a search across many files, a review, an investigation. Give it \
everything it needs in the task: it does not see this conversation. `tasks` runs several at \
once; `chain` runs steps in order, each seeing the previous answer as {{previous}}. The \
subagent asks the user before risky calls, as you do.\n\n{}",
            definitions::described(&agents)
        );
        SubagentTool {
            spawner: Arc::new(Spawner { core }),
            description,
        }
    }
}

impl Spawner {
    fn agent(&self, name: &str) -> Result<AgentDefinition, String> {
        let (agents, _) =
            definitions::definitions(self.core.registry.config(definitions::CONFIG_KEY));
        let known: Vec<String> = agents.iter().map(|a| a.name.clone()).collect();
        agents.into_iter().find(|a| a.name == name).ok_or_else(|| {
            format!(
                "there is no agent named {name:?}; the agents are: {}",
                known.join(", ")
            )
        })
    }

    fn parallel(&self) -> usize {
        self.core
            .registry
            .config(PARALLEL_KEY)
            .and_then(|v| v.as_u64())
            .and_then(|n| usize::try_from(n).ok())
            .filter(|n| *n > 0)
            .unwrap_or(DEFAULT_PARALLEL)
    }

    /// A child of `parent` running `task` as `agent`.
    fn start(
        &self,
        parent: &str,
        link: &ParentLink,
        agent: &AgentDefinition,
        task: &str,
        cwd: &str,
    ) -> Result<ChildStart, String> {
        let tools = definitions::child_tools(agent, &link.tools, NAME)?;
        let first_line = task.lines().next().unwrap_or_default();
        let title: String = format!("{}: {first_line}", agent.name)
            .chars()
            .take(80)
            .collect();
        Ok(ChildStart {
            parent: parent.to_string(),
            agent: agent.name.clone(),
            task: task.to_string(),
            title,
            tools,
            model: agent.model.clone().or_else(|| link.model.clone()),
            effort: agent.effort.clone().or_else(|| link.effort.clone()),
            append_prompt: Some(agent.prompt.clone()).filter(|p| !p.trim().is_empty()),
            limits: limits(agent, &link.remaining),
            wall_ends: link.remaining.wall_ends,
            cwd: PathBuf::from(cwd),
        })
    }
}

/// The child's limits: its agent file's, within what is left of the
/// parent's.
fn limits(agent: &AgentDefinition, left: &super::links::Remaining) -> Limits {
    fn least<T: PartialOrd + Copy>(a: Option<T>, b: Option<T>) -> Option<T> {
        match (a, b) {
            (Some(a), Some(b)) => Some(if b < a { b } else { a }),
            (a, b) => a.or(b),
        }
    }
    Limits {
        turns: least(agent.max_turns, left.turns),
        tokens: least(agent.max_tokens, left.tokens),
        cost: least(agent.max_cost, left.cost),
    }
}

/// Shows the children's lines to the parent's frontend, and a progress
/// line under the call with one part per child.
struct Shown {
    call_id: String,
    agent: String,
    events: crate::turn::control::EventSink,
    board: Arc<Board>,
    slot: usize,
}

/// One row per child: its agent, what it does now, its tokens.
#[derive(Default, Clone)]
struct Row {
    agent: String,
    doing: String,
    tokens: u64,
}

/// The rows, and the call they are shown under.
struct Board {
    rows: Mutex<Vec<Row>>,
    call: Arc<Mutex<Option<NativeCall>>>,
}

impl Board {
    fn update(&self, slot: usize, change: impl FnOnce(&mut Row)) {
        let text = {
            let mut rows = self.rows.lock();
            if rows.len() <= slot {
                rows.resize(slot + 1, Row::default());
            }
            change(&mut rows[slot]);
            rows.iter()
                .filter(|r| !r.agent.is_empty())
                .map(|r| {
                    let tokens = if r.tokens > 0 {
                        format!(" · {} tokens", r.tokens)
                    } else {
                        String::new()
                    };
                    format!("{}: {}{tokens}", r.agent, r.doing)
                })
                .collect::<Vec<_>>()
                .join(" | ")
        };
        if let Some(call) = self.call.lock().as_ref() {
            call.progress(&text);
        }
    }
}

impl ChildWatcher for Shown {
    fn line(&self, session: &str, raw: &Value, line: &Line) {
        (self.events)(Event::Subagent {
            call_id: self.call_id.clone(),
            session: session.to_string(),
            agent: self.agent.clone(),
            line: raw.clone(),
        });
        match line {
            Line::Tool { name, subject, .. } => {
                let doing = format!("{name} {subject}");
                self.board.update(self.slot, |row| row.doing = doing);
            }
            Line::Usage { usage, .. } => self
                .board
                .update(self.slot, |row| row.tokens = usage.total()),
            Line::Done(done) => self.board.update(self.slot, |row| {
                row.doing = "done".to_string();
                row.tokens = done.usage.total();
            }),
            _ => {}
        }
    }
}

/// What one call's children came to.
struct Results {
    outcomes: Vec<(Task, ChildOutcome)>,
}

impl Results {
    fn spent(&self) -> Spent {
        let mut spent = Spent::default();
        let mut priced = true;
        for (_, outcome) in &self.outcomes {
            spent.usage.add(&outcome.spent.usage);
            spent.requests += outcome.spent.requests;
            spent.sessions += u64::from(outcome.session.is_some());
            match outcome.spent.cost {
                Some(cost) => {
                    spent.cost = Some(spent.cost.unwrap_or(0).saturating_add(cost));
                }
                None if outcome.session.is_some() => priced = false,
                None => {}
            }
        }
        if !priced {
            spent.cost = None;
        }
        spent
    }

    fn output(self, chain: bool) -> ToolOutput {
        let many = self.outcomes.len() > 1;
        let spent = self.spent();
        let mut text = String::new();
        let mut failed = 0;
        for (i, (task, outcome)) in self.outcomes.iter().enumerate() {
            if many {
                let step = if chain { "step" } else { "task" };
                text.push_str(&format!("## {step} {} ({})\n", i + 1, task.agent_name()));
            }
            let session = outcome.session.as_deref().unwrap_or("none");
            let body = match (&outcome.text, &outcome.error) {
                _ if outcome.interrupted => {
                    failed += 1;
                    "interrupted before it answered".to_string()
                }
                (_, Some(error)) => {
                    failed += 1;
                    format!("error: {error}")
                }
                // The child read files and pages the parent never saw: what
                // it says is data to the parent's model, not instructions.
                (Some(answer), None) => uji_protocol::untrusted::wrap(
                    "subagent",
                    &[("agent", task.agent_name()), ("session", session)],
                    &bounded(answer, many),
                ),
                (None, None) => "(no answer)".to_string(),
            };
            text.push_str(&body);
            text.push_str(&format!("\n[subagent session {session}]\n"));
            if many {
                text.push('\n');
            }
        }
        let interrupted = self.outcomes.iter().any(|(_, o)| o.interrupted);
        let mut output = if interrupted {
            ToolOutput::interrupted(text.trim_end())
        } else if failed == self.outcomes.len() {
            ToolOutput {
                text: text.trim_end().to_string(),
                is_error: true,
                ..ToolOutput::default()
            }
        } else {
            ToolOutput::text(text.trim_end())
        };
        output.summary = Some(if many {
            format!("{} subagents answered", self.outcomes.len() - failed)
        } else if failed == 0 {
            "subagent answered".to_string()
        } else {
            "subagent failed".to_string()
        });
        output.spent = Some(spent);
        output
    }
}

/// An answer cut to its share when several come back.
fn bounded(answer: &str, many: bool) -> String {
    if !many || answer.len() <= ANSWER_BYTES_OF_MANY {
        return answer.to_string();
    }
    let mut end = ANSWER_BYTES_OF_MANY;
    while !answer.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n[answer cut at {} KB of {} KB; the whole answer is in the subagent's session]",
        &answer[..end],
        ANSWER_BYTES_OF_MANY / 1024,
        answer.len() / 1024
    )
}

impl NativeTool for SubagentTool {
    fn spec(&self) -> ToolSpec {
        let task = json!({
            "type": "object",
            "properties": {
                "agent": {"type": "string", "description": "The agent's name (default: general)."},
                "task": {"type": "string", "description": "What the subagent is to do, with everything it needs to know."}
            },
            "required": ["task"]
        });
        let mut spec = ToolSpec::new(NAME, self.description.clone());
        spec.parameters = json!({
            "type": "object",
            "properties": {
                "agent": {"type": "string", "description": "The agent's name (default: general)."},
                "task": {"type": "string", "description": "What the subagent is to do, with everything it needs to know."},
                "tasks": {"type": "array", "items": task, "description": "Several subagents at once."},
                "chain": {"type": "array", "items": task, "description": "Steps in order; {previous} in a task is the previous step's answer."}
            }
        });
        spec.policy = Some(DeclaredPolicy::Allow);
        spec.verb("Agent")
    }

    fn subject(&self, args: &Value) -> Result<String, String> {
        args::parse(args).map(|plan| plan.subject())
    }

    fn run(&self, call: ToolCall, handle: NativeCall) -> Option<Box<dyn Fn() + Send + Sync>> {
        let prepared = self.prepare(&call);
        let (stop_tx, stop_rx) = watch::channel(false);
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            handle.finish(ToolOutput::error(
                "the subagent tool runs only inside a session",
            ));
            return None;
        };
        let (plan, steps, link) = match prepared {
            Ok(prepared) => prepared,
            Err(message) => {
                handle.finish(ToolOutput::error(message));
                return None;
            }
        };
        let handle = Arc::new(Mutex::new(Some(handle)));
        let board = Arc::new(Board {
            rows: Mutex::new(Vec::new()),
            call: Arc::clone(&handle),
        });
        let parallel = self.spawner.parallel();
        let this = Arc::new(Runner {
            call_id: call.id.clone(),
            parent: call.session.clone().unwrap_or_default(),
            cwd: call.cwd.clone(),
            spawner: Arc::clone(&self.spawner),
            link,
            board,
            stop: stop_rx,
        });
        runtime.spawn(async move {
            let chain = matches!(plan, Plan::Chain(_));
            let outcomes = match plan {
                Plan::Chain(tasks) => this.chain(tasks, steps).await,
                Plan::One(task) => this.parallel(vec![task], steps, 1).await,
                Plan::Parallel(tasks) => this.parallel(tasks, steps, parallel).await,
            };
            let output = Results { outcomes }.output(chain);
            if let Some(handle) = handle.lock().take() {
                handle.finish(output);
            }
        });
        Some(Box::new(move || {
            let _ = stop_tx.send(true);
        }))
    }
}

/// One task ready to run: its agent, and its start as the call gave it (a
/// chain step's is made again with the previous answer put in).
struct Step {
    agent: AgentDefinition,
    start: ChildStart,
}

impl SubagentTool {
    fn prepare(&self, call: &ToolCall) -> Result<(Plan, Vec<Step>, ParentLink), String> {
        let plan = args::parse(&call.args)?;
        let parent = call
            .session
            .clone()
            .ok_or("the subagent tool runs only for a session's model")?;
        let link = self.spawner.core.gate.subagent_links().get(&parent).ok_or(
            "this session cannot start subagents (it is not linked to a frontend); start one with uji or uji run",
        )?;
        if let Some(left) = link.remaining.children
            && (plan.tasks().len() as u64) > left
        {
            return Err(format!(
                "the session's budget allows {left} more subagents, and this call asks for {}; raise uji.budget {{ children = … }} (docs/budgets.md) or ask for fewer",
                plan.tasks().len()
            ));
        }
        // Every step is checked now, so a chain fails before it starts.
        let steps = plan
            .tasks()
            .iter()
            .map(|task| {
                let agent = self.spawner.agent(task.agent_name())?;
                let start = self
                    .spawner
                    .start(&parent, &link, &agent, &task.task, &call.cwd)?;
                Ok(Step { agent, start })
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok((plan, steps, link))
    }
}

struct Runner {
    call_id: String,
    /// The calling session and its directory, for chain steps.
    parent: String,
    cwd: String,
    spawner: Arc<Spawner>,
    link: ParentLink,
    board: Arc<Board>,
    stop: watch::Receiver<bool>,
}

impl Runner {
    fn shown(&self, slot: usize, agent: &str) -> Shown {
        Shown {
            call_id: self.call_id.clone(),
            agent: agent.to_string(),
            events: Arc::clone(&self.link.events),
            board: Arc::clone(&self.board),
            slot,
        }
    }

    async fn one(&self, slot: usize, start: ChildStart) -> ChildOutcome {
        let agent = start.agent.clone();
        self.board.update(slot, |row| {
            row.agent = agent;
            row.doing = "starting".to_string();
        });
        let shown = Arc::new(self.shown(slot, &start.agent));
        let core = &self.spawner.core;
        child::run(&start, core, &self.link, self.stop.clone(), shown).await
    }

    /// Runs the tasks at most `at_once` at a time; the outcomes in the
    /// tasks' order.
    async fn parallel(
        self: &Arc<Self>,
        tasks: Vec<Task>,
        steps: Vec<Step>,
        at_once: usize,
    ) -> Vec<(Task, ChildOutcome)> {
        let permits = Arc::new(tokio::sync::Semaphore::new(at_once));
        let mut running = Vec::new();
        for (slot, Step { start, .. }) in steps.into_iter().enumerate() {
            // Taken here, in the tasks' order, so they start in that order
            // (tasks spawned together and racing for a permit would not).
            let permit = Arc::clone(&permits).acquire_owned().await;
            // A task still waiting when the call is stopped never starts.
            if *self.stop.borrow() {
                running.push(tokio::spawn(std::future::ready(ChildOutcome {
                    interrupted: true,
                    ..ChildOutcome::default()
                })));
                continue;
            }
            let this = Arc::clone(self);
            running.push(tokio::spawn(async move {
                let _permit = permit;
                this.one(slot, start).await
            }));
        }
        let mut outcomes = Vec::new();
        for run in running {
            outcomes.push(run.await.unwrap_or_else(|e| ChildOutcome {
                error: Some(format!("the subagent's task failed: {e}")),
                ..ChildOutcome::default()
            }));
        }
        tasks.into_iter().zip(outcomes).collect()
    }

    async fn chain(&self, tasks: Vec<Task>, steps: Vec<Step>) -> Vec<(Task, ChildOutcome)> {
        let mut results = Vec::new();
        let mut previous: Option<String> = None;
        for (slot, (task, step)) in tasks.into_iter().zip(steps).enumerate() {
            // A later step is made now, with the previous answer put in.
            let start = match previous.as_deref() {
                None => Ok(step.start),
                Some(previous) => self.spawner.start(
                    &self.parent,
                    &self.link,
                    &step.agent,
                    &args::with_previous(&task.task, Some(previous)),
                    &self.cwd,
                ),
            };
            let outcome = match start {
                Ok(start) => self.one(slot, start).await,
                Err(error) => ChildOutcome {
                    error: Some(error),
                    ..ChildOutcome::default()
                },
            };
            let go_on = outcome.error.is_none() && !outcome.interrupted;
            previous = outcome.text.clone();
            results.push((task, outcome));
            if !go_on || previous.is_none() || *self.stop.borrow() {
                break;
            }
        }
        results
    }
}
