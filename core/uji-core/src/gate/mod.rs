//! The gate: the one place every tool call passes through, whatever its
//! origin (built-in, Lua, native plugin). Tools never decide for themselves.
//!
//! Order for one call: unknown tool → subject → disabled → confinement (file
//! tools) → `before_tool` hooks (the first that decides overrides the policy)
//! → policy rules → approval when the answer is ask → a checkpoint when the
//! call may change files (docs/checkpoints.md) → run → `after_tool` hooks
//! (each may replace the text the model reads).
//!
//! Confinement and `disable` are absolute: a hook cannot allow what they
//! refuse. They are switched off explicitly (`confine(false)`, `enable`).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;
use std::time::Duration;

use parking_lot::RwLock;
use serde_json::{Value, json};
use tokio::sync::oneshot;
use uji_host::{ProgressSink, Registry};
use uji_policy::{Decision, Policy, RuleProblem, ToolFacts, Verdict};
use uji_protocol::frontend::GateDecision;
use uji_protocol::services::{
    CommandSandbox, PolicyCheck, PolicyChecked, PolicyDecision, PolicyProblems, SandboxSettings,
    ToolConfine, ToolDisable, ToolEnable, ToolList, ToolPolicy, ToolReadRoots, ToolRemove,
    ToolRoots, ToolSandbox,
};
use uji_protocol::{
    ApprovalMode, DeclaredPolicy, FileDiff, SubjectKind, ToolCall, ToolErrorKind, ToolOutput,
};

use crate::turn::interrupt::Interrupt;

/// How long an interrupted tool may take to wind down before the call is
/// reported as interrupted anyway (a late result is ignored).
const CANCEL_GRACE: Duration = Duration::from_secs(5);

/// One tool call as the model made it, with arguments already decoded.
#[derive(Debug, Clone)]
pub struct ToolRequest {
    pub call_id: String,
    pub name: String,
    pub args: Value,
    pub cwd: PathBuf,
    /// The session whose model made the call (tools such as `subagent`
    /// act for it); `None` for calls no session made (`uji tool run`).
    pub session: Option<String>,
}

/// What the user is asked.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRequest {
    pub call_id: String,
    pub tool: String,
    /// Transcript verb (`Update`, `Shell`...).
    pub verb: String,
    pub subject: String,
    /// The question's title.
    pub question: String,
    /// For edits and writes: the change the call would make.
    pub diff: Option<FileDiff>,
    pub args: Value,
    /// What each decision means, for a question that is not a tool call
    /// (`session.ask`); empty for tool calls.
    pub labels: std::collections::BTreeMap<String, String>,
    /// The subagent whose call this is; `None` for the session's own.
    pub agent: Option<String>,
}

impl ApprovalRequest {
    /// A question that is not a tool call, answered yes (`allow_once`) or
    /// no (`deny`) with the given labels; `details` are listed under it.
    pub fn yes_or_no(
        tool: &str,
        question: String,
        details: Value,
        yes: String,
        no: String,
    ) -> ApprovalRequest {
        use uji_protocol::frontend::ApprovalDecision;
        ApprovalRequest::choice(
            tool,
            question,
            details,
            [
                (ApprovalDecision::AllowOnce, yes),
                (ApprovalDecision::Deny, no),
            ],
        )
    }

    /// A question that is not a tool call, answered by one of `answers`
    /// (each decision with what it means here); `details` are listed
    /// under it.
    pub fn choice(
        tool: &str,
        question: String,
        details: Value,
        answers: impl IntoIterator<Item = (uji_protocol::frontend::ApprovalDecision, String)>,
    ) -> ApprovalRequest {
        let labels = answers
            .into_iter()
            .map(|(decision, label)| (decision.as_str().to_string(), label))
            .collect();
        let mut verb = tool.to_string();
        if let Some(first) = verb.get_mut(..1) {
            first.make_ascii_uppercase();
        }
        ApprovalRequest {
            call_id: crate::session::store::new_call_id(),
            tool: tool.to_string(),
            verb,
            // No subject: the screen lists the details instead.
            subject: String::new(),
            question,
            diff: None,
            args: details,
            labels,
            agent: None,
        }
    }
}

/// The answer to an approval request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    Allow,
    /// Allow, and allow identical calls (same tool and subject) for the
    /// rest of the session without asking.
    AllowSession,
    /// The user said no, optionally telling the model what to do instead.
    Deny {
        guidance: Option<String>,
    },
    /// The user said no, and to end the turn here.
    Stop,
    /// Nobody can answer (a headless run without `--yes`).
    Unavailable,
}

/// Asks the user through the frontend.
pub trait Approver: Send + Sync {
    fn ask(&self, request: ApprovalRequest) -> oneshot::Receiver<Approval>;

    /// Whether questions should carry the diff preview (computing it reads
    /// the file and diffs it, wasted work when nobody looks).
    fn wants_preview(&self) -> bool {
        true
    }

    /// Whether answers come without a person (`--yes`, headless). Such an
    /// approver is never asked about an unresolved command when the tool
    /// has deny rules: the call is denied instead (fail closed).
    fn automatic(&self) -> bool {
        false
    }
}

/// The approver of headless runs: `--yes` allows every ask, otherwise nobody
/// can answer and the call is denied with a message saying how to allow it.
pub struct HeadlessApprover {
    pub yes: bool,
}

impl Approver for HeadlessApprover {
    fn ask(&self, _request: ApprovalRequest) -> oneshot::Receiver<Approval> {
        let (tx, rx) = oneshot::channel();
        let _ = tx.send(if self.yes {
            Approval::Allow
        } else {
            Approval::Unavailable
        });
        rx
    }

    fn wants_preview(&self) -> bool {
        false
    }

    fn automatic(&self) -> bool {
        true
    }
}

/// Directories as the strings a service answers with.
fn path_strings(paths: &[PathBuf]) -> Vec<String> {
    paths
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect()
}

/// Who decided a call, for transcripts, `--json` and `uji policy check`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecidedBy {
    UnknownTool,
    Disabled,
    Confinement,
    /// A `before_tool` hook (by its name, or its plugin).
    Hook(String),
    Policy(String),
    /// The approval mode (accept edits, plan) over the policy's verdict.
    Mode(ApprovalMode),
}

/// The outcome of one call through the gate.
#[derive(Debug, Clone)]
pub struct GateResult {
    /// What the model reads (after `after_tool` hooks), plus images, diff
    /// and summary for the transcript.
    pub output: ToolOutput,
    pub decision: Decision,
    pub decided_by: DecidedBy,
    pub subject: String,
    /// The tool actually ran.
    pub ran: bool,
    /// The user interrupted while the call waited or ran.
    pub interrupted: bool,
}

/// The one built-in tool that only reads files: it alone may reach the read
/// roots and the session's spill files outside the workspace.
pub(crate) const READ_FILE: &str = "read_file";

/// The policy state and the registry, behind one lock each.
#[derive(Clone)]
pub struct Gate {
    registry: Registry,
    policy: Arc<RwLock<Policy>>,
    session_rules: SessionRules,
    sandbox: Arc<RwLock<SandboxSettings>>,
    /// The approval mode the user chose; the gate owns it, the server and
    /// the `session.mode` service change it through [`Gate::set_mode`];
    /// subagents' gates share it, so a change holds at their next call.
    mode: Arc<tokio::sync::watch::Sender<ApprovalMode>>,
    spill: Arc<RwLock<spill::SpillPlace>>,
    /// Numbers the calls' spill files.
    spill_counter: Arc<AtomicUsize>,
    /// What the `subagent` tool needs of each session that may call it.
    subagent_links: crate::subagents::Links,
    /// The proxy of commands allowed only some hosts, once one needed it.
    net_proxy: Arc<parking_lot::Mutex<Option<Arc<proxy::NetProxy>>>>,
}

pub mod approvals;
mod call_env;
pub mod child_env;
pub mod proxy;
mod spill;

/// What a call looks like once the gate decided it: what a frontend shows
/// as the call starting (`tool_started`).
#[derive(Debug, Clone, PartialEq)]
pub struct Started<'a> {
    pub subject: &'a str,
    pub verb: Option<&'a str>,
    pub decision: Decision,
    /// The rule, hook or fallback that decided.
    pub because: String,
}

/// A call allowed to run, about to start.
#[derive(Debug, Clone, PartialEq)]
pub struct ToRun<'a> {
    pub tool: &'a str,
    pub subject: &'a str,
    /// Whether the call may change files: a tool that does not declare
    /// itself read-only, or a command line that is not plain reading
    /// (`uji_policy`'s read-only commands).
    pub may_change_files: bool,
}

/// Who hears of a call as the gate takes it through.
pub trait CallObserver: Sync {
    /// The call is decided (before any question), refused calls too.
    fn started(&self, _started: &Started<'_>) {}
    /// The call may run and starts once the returned future ends: where
    /// a checkpoint is taken first.
    fn before_run<'a>(
        &'a self,
        _call: &ToRun<'a>,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + 'a>> {
        Box::pin(std::future::ready(()))
    }
}

/// Hears nothing.
struct Unobserved;

impl CallObserver for Unobserved {}

/// Whether a call of a tool of `spec` with `subject` may change files.
pub fn may_change_files(spec: &uji_protocol::ToolSpec, subject: &str) -> bool {
    if spec.read_only {
        return false;
    }
    if spec.subject != SubjectKind::Command {
        return true;
    }
    command_may_change_files(subject)
}

/// Whether a command line may change files: unless every part of it is a
/// plain reading command (`uji_policy`'s read-only commands).
pub fn command_may_change_files(line: &str) -> bool {
    let parts = uji_policy::command_parts(line);
    parts.is_empty() || parts.iter().any(|part| part.read_paths().is_none())
}

/// The decision as frontends read it (`tool_started`'s `decision`).
pub fn reported(decision: Decision) -> GateDecision {
    match decision {
        Decision::Allow => GateDecision::Allow,
        Decision::Ask => GateDecision::Ask,
        Decision::Deny => GateDecision::Deny,
    }
}

/// Calls the user allowed "for this session": the same tool on the same
/// subject runs without asking again. They only turn an ask into an allow;
/// deny rules, confinement and `disable` still refuse.
#[derive(Clone, Default)]
pub struct SessionRules(Arc<RwLock<SessionRulesInner>>);

/// Told the running session's id and its rules.
type RulesObserver = Arc<dyn Fn(&str, &[SessionRule]) + Send + Sync>;

#[derive(Default)]
struct SessionRulesInner {
    session: String,
    rules: Vec<SessionRule>,
    /// A subagent's parent's rules, read through: what the parent's person
    /// allows for the parent's session, before or while the subagent runs,
    /// holds for it too; what is allowed for the subagent stays its own.
    parent: Option<SessionRules>,
    /// Told of every change (the session server mirrors the rules to a
    /// file `uji policy check` reads).
    observer: Option<RulesObserver>,
}

/// One "allow for this session" answer.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SessionRule {
    pub tool: String,
    pub subject: String,
    /// The session that recorded it.
    #[serde(default)]
    pub session: String,
}

impl SessionRules {
    /// The rules of subagent `session`: its own, over `parent`'s.
    pub fn of_subagent(session: &str, parent: SessionRules) -> SessionRules {
        SessionRules(Arc::new(RwLock::new(SessionRulesInner {
            session: session.to_string(),
            rules: Vec::new(),
            parent: Some(parent),
            observer: None,
        })))
    }

    /// Starts over for `session` (a new or resumed session asks again).
    pub fn reset(&self, session: &str) {
        {
            let mut inner = self.0.write();
            inner.session = session.to_string();
            inner.rules.clear();
        }
        self.notify();
    }

    pub fn set_observer(&self, observer: Option<RulesObserver>) {
        self.0.write().observer = observer;
    }

    /// Records that `tool` may act on `subject` for the rest of the session.
    pub fn allow(&self, tool: &str, subject: &str) {
        {
            let mut inner = self.0.write();
            if !inner
                .rules
                .iter()
                .any(|r| r.tool == tool && r.subject == subject)
            {
                let session = inner.session.clone();
                inner.rules.push(SessionRule {
                    tool: tool.to_string(),
                    subject: subject.to_string(),
                    session,
                });
            }
        }
        self.notify();
    }

    /// Adds rules recorded elsewhere (another process's running session,
    /// a subagent's parent); they keep the session that recorded them.
    pub fn extend(&self, rules: Vec<SessionRule>) {
        self.0.write().rules.extend(rules);
    }

    /// The rule allowing `tool` on `subject`, if any (a subagent's own,
    /// then its parent's).
    pub fn find(&self, tool: &str, subject: &str) -> Option<SessionRule> {
        let inner = self.0.read();
        let own = inner
            .rules
            .iter()
            .find(|r| r.tool == tool && r.subject == subject)
            .cloned();
        own.or_else(|| inner.parent.as_ref()?.find(tool, subject))
    }

    fn notify(&self) {
        let (observer, session, rules) = {
            let inner = self.0.read();
            (
                inner.observer.clone(),
                inner.session.clone(),
                inner.rules.clone(),
            )
        };
        if let Some(observer) = observer {
            observer(&session, &rules);
        }
    }
}

/// The `because` of a call a session rule allowed.
fn session_because(rule: &SessionRule) -> String {
    format!("session rule: allowed for session {}", rule.session)
}

/// What the model reads of a call the user stopped the turn at.
const STOPPED: &str = "the user stopped here, and will say what to do next";

fn denied(text: impl AsRef<str>) -> ToolOutput {
    ToolOutput {
        text: format!("denied: {}", text.as_ref()),
        is_error: true,
        error_kind: Some(ToolErrorKind::Denied),
        ..Default::default()
    }
}

fn policy_kind(kind: SubjectKind) -> uji_policy::SubjectKind {
    match kind {
        SubjectKind::Path => uji_policy::SubjectKind::Path,
        SubjectKind::Command => uji_policy::SubjectKind::Command,
        SubjectKind::Other => uji_policy::SubjectKind::Other,
    }
}

fn declared(policy: DeclaredPolicy) -> Decision {
    match policy {
        DeclaredPolicy::Allow => Decision::Allow,
        DeclaredPolicy::Ask => Decision::Ask,
        DeclaredPolicy::Deny => Decision::Deny,
    }
}

/// A `before_tool` hook's answer.
enum HookVerdict {
    Allow,
    Ask(Option<String>),
    Deny(String),
}

fn parse_hook_verdict(answer: &Value) -> Option<HookVerdict> {
    let object = answer.as_object()?;
    if let Some(reason) = object
        .get("deny")
        .filter(|v| !v.is_null() && *v != &json!(false))
    {
        let reason = reason
            .as_str()
            .unwrap_or("denied by a before_tool hook")
            .to_string();
        return Some(HookVerdict::Deny(reason));
    }
    if object.get("allow").is_some_and(|v| v == &json!(true)) {
        return Some(HookVerdict::Allow);
    }
    match object.get("ask") {
        Some(Value::String(question)) => Some(HookVerdict::Ask(Some(question.clone()))),
        Some(Value::Bool(true)) => Some(HookVerdict::Ask(None)),
        _ => None,
    }
}

impl Gate {
    pub fn new(registry: Registry) -> Gate {
        Gate {
            registry,
            policy: Arc::new(RwLock::new(Policy::default())),
            session_rules: SessionRules::default(),
            sandbox: Arc::default(),
            mode: Arc::new(tokio::sync::watch::Sender::new(ApprovalMode::default())),
            spill: Arc::default(),
            spill_counter: Arc::default(),
            subagent_links: crate::subagents::Links::default(),
            net_proxy: Arc::default(),
        }
    }

    /// The sessions' links for the `subagent` tool.
    pub fn subagent_links(&self) -> &crate::subagents::Links {
        &self.subagent_links
    }

    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The approval mode in force.
    pub fn mode(&self) -> ApprovalMode {
        *self.mode.borrow()
    }

    /// Switches the approval mode; `Err` for a mode this uji does not know.
    pub fn set_mode(&self, mode: ApprovalMode) -> Result<ApprovalMode, String> {
        if mode == ApprovalMode::Unknown {
            let names: Vec<&str> = ApprovalMode::ALL.iter().map(|m| m.as_str()).collect();
            return Err(format!(
                "unknown approval mode; use one of {}",
                names.join(", ")
            ));
        }
        self.mode.send_replace(mode);
        Ok(mode)
    }

    /// The "allow for this session" answers of the running session.
    pub fn session_rules(&self) -> &SessionRules {
        &self.session_rules
    }

    /// The gate of subagent session `session`, whose parent's "allow for
    /// this session" answers are `parent`: everything else (policy, hooks,
    /// sandbox, roots, the approval mode, spill files) is this gate's own,
    /// shared, so a change to any of them holds for the subagent at once.
    pub fn for_subagent(&self, session: &str, parent: SessionRules) -> Gate {
        Gate {
            session_rules: SessionRules::of_subagent(session, parent),
            ..self.clone()
        }
    }

    fn with_policy<R>(&self, f: impl FnOnce(&Policy) -> R) -> R {
        f(&self.policy.read())
    }

    fn with_policy_mut<R>(&self, f: impl FnOnce(&mut Policy) -> R) -> R {
        f(&mut self.policy.write())
    }

    // ---- the Rust API of uji.tool.* ---------------------------------------------

    /// `uji.tool.policy(rules, {name})`: returns the invalid rules (each also
    /// becomes a notice).
    pub fn set_policy(&self, rules: &Value, set: Option<&str>) -> Vec<RuleProblem> {
        let problems = self.with_policy_mut(|p| p.set_rules(rules, set));
        for problem in &problems {
            self.registry.notify("uji", &problem.to_string());
        }
        problems
    }

    pub fn disable(&self, names: &[String]) {
        self.with_policy_mut(|p| p.disable(names));
    }

    pub fn enable(&self, names: &[String]) {
        self.with_policy_mut(|p| p.enable(names));
    }

    pub fn is_disabled(&self, name: &str) -> bool {
        self.with_policy(|p| p.is_disabled(name))
    }

    /// `uji.tool.confine(enabled)`: whether the file tools are confined.
    pub fn confine(&self, enabled: Option<bool>) -> bool {
        self.with_policy_mut(|p| p.confine(enabled))
    }

    /// `uji.tool.roots(paths)`: the extra directories file tools may reach.
    pub fn roots(&self, paths: Option<Vec<String>>) -> Vec<PathBuf> {
        self.with_policy_mut(|p| p.roots(paths))
    }

    /// `uji.tool.read_roots(paths)`: the directories only `read_file` may
    /// reach besides those.
    pub fn read_roots(&self, paths: Option<Vec<String>>) -> Vec<PathBuf> {
        self.with_policy_mut(|p| p.read_roots(paths))
    }

    /// Why confinement refuses `tool` on the path `subject`, if it does:
    /// `read_file` (the one tool that only reads) may also reach the read
    /// roots and the session's own spill files.
    fn confinement_error(
        &self,
        tool: &str,
        subject: &str,
        cwd: &Path,
    ) -> Option<uji_policy::ConfineError> {
        if tool != READ_FILE {
            return self.with_policy(|p| p.check_path(subject, cwd)).err();
        }
        if self.own_spill_file(tool, subject, cwd).is_some() {
            return None;
        }
        self.with_policy(|p| p.check_read_path(subject, cwd)).err()
    }

    /// Offers the policy to plugins as host services (`Host::call`), which is
    /// how the Lua plugin implements `uji.tool.*`.
    pub fn install_services(&self) {
        let gate = self.clone();
        self.registry.serve(move |request: ToolPolicy| {
            if !request.rules.is_object() {
                return Err(
                    "policy rules must be a table (an object mapping tool names to rules)"
                        .to_string(),
                );
            }
            let problems = gate.set_policy(&request.rules, request.name.as_deref());
            Ok(PolicyProblems {
                problems: problems.iter().map(ToString::to_string).collect(),
            })
        });
        let gate = self.clone();
        self.registry.serve(move |request: ToolDisable| {
            gate.disable(&request.names);
            Ok(())
        });
        let gate = self.clone();
        self.registry.serve(move |request: ToolEnable| {
            gate.enable(&request.names);
            Ok(())
        });
        let gate = self.clone();
        self.registry
            .serve(move |request: ToolConfine| Ok(gate.confine(request.enabled)));
        let gate = self.clone();
        self.registry
            .serve(move |request: ToolReadRoots| Ok(path_strings(&gate.read_roots(request.paths))));
        let gate = self.clone();
        self.registry
            .serve(move |request: ToolRoots| Ok(path_strings(&gate.roots(request.paths))));
        let gate = self.clone();
        self.registry
            .serve(move |request: ToolSandbox| Ok(gate.sandbox(request)));
        let gate = self.clone();
        // The directory uji started in, read once: a plugin's later
        // `config.set("cwd", …)` does not move the workspace of the sandbox.
        let session_dir = self
            .registry
            .config(crate::boot::CWD_KEY)
            .and_then(|v| v.as_str().map(PathBuf::from));
        let checked_in = session_dir.clone().unwrap_or_default();
        self.registry
            .serve(move |_: CommandSandbox| gate.command_sandbox(session_dir.as_deref()));
        let gate = self.clone();
        self.registry
            .serve(move |request: PolicyCheck| Ok(gate.policy_check(&request, &checked_in)));
        let gate = self.clone();
        self.registry
            .serve(move |request: ToolRemove| Ok(gate.registry.remove_tool(&request.name)));
        let gate = self.clone();
        self.registry.serve(move |_: ToolList| {
            Ok(gate
                .registry
                .tools()
                .iter()
                .map(|t| t.spec().name.clone())
                .collect())
        });
    }

    // ---- deciding ---------------------------------------------------------------

    /// `policy.check`, for a tool that must ask again before it reaches
    /// further (a redirect): the verdict a call of it would get, through
    /// the same steps as a call the model makes (disabled and confinement
    /// as [`Gate::check`] has them, then [`Gate::verdict`]: hooks, rules,
    /// session answers, mode), so a `before_tool` hook that would refuse
    /// the call refuses the hop too.
    fn policy_check(&self, request: &PolicyCheck, cwd: &Path) -> PolicyChecked {
        let (checked, decided_by) = self.check(&request.tool, &request.subject, cwd);
        let (decision, because) = match (decided_by, self.registry.tool(&request.tool)) {
            (DecidedBy::Policy(_), Some(tool)) => {
                let call = ToolRequest {
                    call_id: "policy.check".to_string(),
                    name: request.tool.clone(),
                    args: request.args.clone(),
                    cwd: cwd.to_path_buf(),
                    session: None,
                };
                let verdicted = self.verdict(&call, tool.spec(), &request.subject);
                let because = verdicted
                    .message
                    .unwrap_or_else(|| match verdicted.decided_by {
                        DecidedBy::Hook(who) => format!("before_tool hook {who}"),
                        DecidedBy::Policy(because) => because,
                        DecidedBy::Mode(mode) => format!("the {} approval mode", mode.as_str()),
                        DecidedBy::UnknownTool | DecidedBy::Disabled | DecidedBy::Confinement => {
                            "the policy".to_string()
                        }
                    });
                (verdicted.decision, because)
            }
            // Disabled, outside the allowed directories, or a tool that is
            // not registered: the rules' word is all there is.
            _ => (checked.decision, checked.message.unwrap_or(checked.because)),
        };
        let decision = match decision {
            Decision::Allow => PolicyDecision::Allow,
            Decision::Ask => PolicyDecision::Ask,
            Decision::Deny => PolicyDecision::Deny,
        };
        PolicyChecked { decision, because }
    }

    /// The decision for `tool` acting on `subject`, without hooks (they need
    /// the call's arguments): disabled, confinement, then the rules. This is
    /// what `uji policy check` prints.
    pub fn check(&self, tool: &str, subject: &str, cwd: &Path) -> (Verdict, DecidedBy) {
        let spec = self.registry.tool(tool).map(|t| t.spec().clone());
        let kind = spec
            .as_ref()
            .map(|s| s.subject)
            .unwrap_or_else(|| guess_kind(tool));
        let declared_policy = spec.as_ref().and_then(|s| s.policy.map(declared));
        if self.is_disabled(tool) {
            let mut verdict = Verdict::new(Decision::Deny, format!("{tool} is disabled"));
            verdict.message = Some(format!("{tool} is disabled"));
            return (verdict, DecidedBy::Disabled);
        }
        if kind == SubjectKind::Path
            && let Some(e) = self.confinement_error(tool, subject, cwd)
        {
            let mut verdict = Verdict::new(
                Decision::Deny,
                "confinement: the path is outside the allowed directories",
            );
            verdict.message = Some(e.to_string());
            return (verdict, DecidedBy::Confinement);
        }
        let facts = ToolFacts {
            tool,
            subject,
            kind: policy_kind(kind),
            declared: declared_policy,
            cwd,
        };
        let verdict = self.with_policy(|p| p.decide(&facts));
        let mut verdict = self.with_session_rules(tool, subject, verdict);
        if verdict.decision != Decision::Deny && self.without_bash(kind) {
            verdict.decision = Decision::Ask;
            verdict.unresolved = true;
        }
        let because = verdict.because.clone();
        (verdict, DecidedBy::Policy(because))
    }

    /// Runs `before_tool` hooks in order; the first that decides wins. A hook
    /// that fails denies the call (fail closed) and says so in a notice.
    ///
    /// For a command the payload carries `parts`, every simple command the
    /// line runs (`text`, `program`, `resolved`). A hook's allow covers the
    /// line only if it has one resolved part, or the answer says
    /// `all_parts = true`; otherwise the allow is ignored (later hooks and
    /// the rules decide), so a hook checking `^echo ` cannot allow
    /// `echo ok; touch x` by accident.
    fn before_tool(
        &self,
        request: &ToolRequest,
        spec: &uji_protocol::ToolSpec,
        subject: &str,
    ) -> Option<(HookVerdict, String)> {
        let hooks = self.registry.hooks("before_tool");
        if hooks.is_empty() {
            return None;
        }
        // `name` and `arguments` are the public uji's names for `tool` and
        // `args`: plugins written for it read those (docs/lua.md).
        let mut payload = json!({
            "event": "before_tool",
            "tool": request.name,
            "name": request.name,
            "args": request.args,
            "arguments": request.args,
            "subject": subject,
            "call_id": request.call_id,
            "session": request.session,
        });
        let mut one_plain_part = true;
        if spec.subject == SubjectKind::Command {
            let parts = uji_policy::command_parts(subject);
            one_plain_part = parts.len() == 1 && parts.iter().all(|p| p.resolved);
            payload["parts"] = json!(parts);
        }
        for hook in hooks {
            let who = hook
                .options()
                .name
                .clone()
                .unwrap_or_else(|| hook.plugin().to_string());
            match hook.call(&payload) {
                Ok(answer) => match parse_hook_verdict(&answer) {
                    Some(HookVerdict::Allow)
                        if !one_plain_part && answer.get("all_parts") != Some(&json!(true)) => {}
                    Some(verdict) => return Some((verdict, who)),
                    None => {}
                },
                Err(e) => {
                    self.registry.notify(
                        "uji",
                        &format!(
                            "before_tool hook {who} failed, so the {} call was denied: {e}",
                            request.name
                        ),
                    );
                    return Some((
                        HookVerdict::Deny(format!("before_tool hook {who} failed")),
                        who,
                    ));
                }
            }
        }
        None
    }

    /// Folds `after_tool` hooks over the result text.
    fn after_tool(
        &self,
        request: &ToolRequest,
        args: &Value,
        subject: &str,
        output: &mut ToolOutput,
    ) {
        for hook in self.registry.hooks("after_tool") {
            // `name` and `content` as the public uji names them, beside
            // uji's own `tool` and `text`.
            let payload = json!({
                "event": "after_tool",
                "tool": request.name,
                "name": request.name,
                "args": args,
                "subject": subject,
                "call_id": request.call_id,
                "session": request.session,
                "text": output.text,
                "content": output.text,
                "is_error": output.is_error,
            });
            match hook.call(&payload) {
                Ok(Value::String(text)) => output.text = text,
                Ok(_) => {}
                Err(e) => {
                    let who = hook
                        .options()
                        .name
                        .clone()
                        .unwrap_or_else(|| hook.plugin().to_string());
                    self.registry.notify(
                        "uji",
                        &format!(
                            "after_tool hook {who} failed; the {} result was left unchanged: {e}",
                            request.name
                        ),
                    );
                }
            }
        }
    }

    /// Runs one call through the gate.
    pub async fn run(
        &self,
        request: ToolRequest,
        approver: &dyn Approver,
        progress: ProgressSink,
        interrupt: &mut Interrupt,
    ) -> GateResult {
        self.run_observed(request, approver, progress, interrupt, &Unobserved)
            .await
    }

    /// Like [`Gate::run`], telling `observer` once the call is decided
    /// (before any approval question), also for calls the gate refuses:
    /// what a frontend shows as the call starting, with the decision and
    /// why, without asking the tool for its subject twice; and once more
    /// right before it runs.
    pub async fn run_observed(
        &self,
        mut request: ToolRequest,
        approver: &dyn Approver,
        progress: ProgressSink,
        interrupt: &mut Interrupt,
        observer: &dyn CallObserver,
    ) -> GateResult {
        // One key order whatever order the model wrote them in (serde_json
        // keeps insertion order here): a subject built from the arguments
        // (an MCP tool's `key=value, …`) is what policy rules match, so it
        // must not change with the model's whims.
        request.args = uji_protocol::canonical::sort_keys(std::mem::take(&mut request.args));
        let decided = match self.decide_call(&request) {
            Ok(decided) => decided,
            Err(refused) => {
                observer.started(&Started {
                    subject: &refused.subject,
                    verb: refused.verb.as_deref(),
                    decision: Decision::Deny,
                    because: because_of(&refused.result.decided_by),
                });
                return refused.result;
            }
        };
        observer.started(&Started {
            subject: &decided.subject,
            verb: decided.spec.display.verb.as_deref(),
            decision: decided.decision,
            because: because_of(&decided.decided_by),
        });
        // The arguments move into the call (they can be megabytes: a
        // write_file's content); later steps read them from `call`.
        let mut call = ToolCall {
            id: request.call_id.clone(),
            args: std::mem::take(&mut request.args),
            cwd: request.cwd.to_string_lossy().into_owned(),
            roots: self.confinement_roots(&request.cwd, &request.name, &decided.subject),
            sandbox: self.call_sandbox(decided.spec.subject, &request.cwd),
            spill: Some(self.next_spill_path().to_string_lossy().into_owned()),
            session: request.session.clone(),
        };
        match self
            .approve(&request, &call, &decided, approver, interrupt)
            .await
        {
            // Only a person who saw this very call lifts the sandbox.
            Ok(AllowedBy::PersonOnce) if self.lifted_by_allow_once() => call.sandbox = None,
            Ok(_) => {}
            Err(result) => return *result,
        }
        // Hooks and the subject may have taken a while: an interrupt that
        // came meanwhile stops the call before it starts.
        if interrupt.is_set() {
            return interrupted_before(decided.decided_by, decided.subject);
        }
        // The checkpoint comes after the question: what the person did
        // while it was open is part of what an undo goes back to.
        observer
            .before_run(&ToRun {
                tool: &request.name,
                subject: &decided.subject,
                may_change_files: may_change_files(&decided.spec, &decided.subject),
            })
            .await;
        // Plugins hear of a call once it may run: after the decision and
        // any question, never for a call that is refused.
        if !self.registry.hooks("tool_started").is_empty() {
            self.registry.emit(
                "tool_started",
                json!({"name": request.name, "call_id": request.call_id, "subject": decided.subject,
                    "session": request.session}),
            );
        }
        self.execute(&request, call, decided, progress, interrupt)
            .await
    }

    /// Everything up to the decision: unknown tool, subject, disabled,
    /// confinement, `before_tool` hooks, rules, session rules. `Err` is a
    /// refusal that needs no question.
    fn decide_call(&self, request: &ToolRequest) -> Result<Decided, Box<Refused>> {
        let refused = |output: ToolOutput, decided_by: DecidedBy, subject: String, verb| {
            Box::new(Refused {
                verb,
                subject: subject.clone(),
                result: refusal(output, decided_by, subject),
            })
        };
        let Some(tool) = self.registry.tool(&request.name) else {
            let output = ToolOutput::error(format!(
                "unknown tool `{}`. Available tools: {}.",
                request.name,
                self.tool_names().join(", ")
            ));
            return Err(refused(output, DecidedBy::UnknownTool, String::new(), None));
        };
        let spec = tool.spec().clone();
        let verb = spec.display.verb.clone();
        let subject = match tool.subject(&request.args) {
            Ok(subject) => subject,
            Err(e) => {
                let output = ToolOutput::error(e.to_string());
                return Err(refused(output, DecidedBy::UnknownTool, spec.name, verb));
            }
        };
        if self.is_disabled(&request.name) {
            let output = denied(format!("{} is disabled", request.name));
            return Err(refused(output, DecidedBy::Disabled, subject, verb));
        }
        if spec.subject == SubjectKind::Path
            && let Some(e) = self.confinement_error(&request.name, &subject, &request.cwd)
        {
            let output = denied(e.to_string());
            return Err(refused(output, DecidedBy::Confinement, subject, verb));
        }
        let v = self.verdict(request, &spec, &subject);
        if v.decision == Decision::Deny {
            let text = v.message.unwrap_or_else(|| "denied by policy".to_string());
            return Err(refused(denied(text), v.decided_by, subject, verb));
        }
        Ok(Decided {
            tool,
            spec,
            subject,
            decision: v.decision,
            decided_by: v.decided_by,
            question: v.question,
            unresolved: v.unresolved,
        })
    }

    fn tool_names(&self) -> Vec<String> {
        self.registry
            .tools()
            .iter()
            .map(|t| t.spec().name.clone())
            .collect()
    }

    /// The first deciding `before_tool` hook, else the rules; an ask the
    /// user already allowed for this session becomes an allow.
    fn verdict(
        &self,
        request: &ToolRequest,
        spec: &uji_protocol::ToolSpec,
        subject: &str,
    ) -> Verdicted {
        let mut verdicted = self.verdict_of_hooks_or_rules(request, spec, subject);
        if verdicted.decision != Decision::Deny && self.without_bash(spec.subject) {
            verdicted.decision = Decision::Ask;
            verdicted.unresolved = true;
        }
        if spec.edits_files {
            verdicted = with_mode(self.mode(), &request.name, verdicted);
        }
        verdicted
    }

    fn verdict_of_hooks_or_rules(
        &self,
        request: &ToolRequest,
        spec: &uji_protocol::ToolSpec,
        subject: &str,
    ) -> Verdicted {
        let hook = |decision, who, message, question| Verdicted {
            decision,
            decided_by: DecidedBy::Hook(who),
            message,
            question,
            unresolved: false,
        };
        match self.before_tool(request, spec, subject) {
            Some((HookVerdict::Allow, who)) => hook(Decision::Allow, who, None, None),
            Some((HookVerdict::Deny(reason), who)) => hook(Decision::Deny, who, Some(reason), None),
            Some((HookVerdict::Ask(question), who)) => hook(Decision::Ask, who, None, question),
            None => {
                let facts = ToolFacts {
                    tool: &request.name,
                    subject,
                    kind: policy_kind(spec.subject),
                    declared: spec.policy.map(declared),
                    cwd: &request.cwd,
                };
                let verdict = self.with_policy(|p| p.decide(&facts));
                let verdict = self.with_session_rules(&request.name, subject, verdict);
                Verdicted {
                    decision: verdict.decision,
                    unresolved: verdict.unresolved && verdict.decision == Decision::Ask,
                    decided_by: DecidedBy::Policy(verdict.because),
                    message: verdict.message,
                    question: None,
                }
            }
        }
    }

    /// The rules' verdict, with an ask the user already allowed for this
    /// session (same tool, same subject) turned into an allow.
    /// A command that is not plain asks every time: the same line can run
    /// something else the next time (`$X`, `PATH=…`).
    fn with_session_rules(&self, tool: &str, subject: &str, verdict: Verdict) -> Verdict {
        if verdict.decision != Decision::Ask || verdict.opaque {
            return verdict;
        }
        match self.session_rules.find(tool, subject) {
            Some(rule) => Verdict::new(Decision::Allow, session_because(&rule)),
            None => verdict,
        }
    }

    /// Asks when the decision is ask, and says who allowed the call. `Err`
    /// holds the result of a call that must not run (denied, unanswerable,
    /// interrupted).
    async fn approve(
        &self,
        request: &ToolRequest,
        call: &ToolCall,
        decided: &Decided,
        approver: &dyn Approver,
        interrupt: &mut Interrupt,
    ) -> Result<AllowedBy, Box<GateResult>> {
        if decided.decision != Decision::Ask {
            return Ok(AllowedBy::Decision);
        }
        if decided.unresolved && approver.automatic() && self.without_bash(decided.spec.subject) {
            let text = format!(
                "{} is not run: {}. No one can answer here, so no command runs.",
                request.name,
                uji_protocol::bash::missing_text()
            );
            return Err(Box::new(refusal(
                denied(text),
                decided.decided_by.clone(),
                decided.subject.clone(),
            )));
        }
        if decided.unresolved && approver.automatic() {
            // Nobody can judge what the command runs, and a deny rule might
            // have matched it: fail closed rather than run it unasked.
            let because = match &decided.decided_by {
                DecidedBy::Policy(b) => b.clone(),
                _ => String::new(),
            };
            let text = format!(
                "{because}. {} has deny rules and no one can answer here, so a command \
                 uji cannot fully read is not run. Write it plainly: literal words only (no \
                 $VAR, $(…), backticks or $((…)); no glob or brace as a program; no PATH=, \
                 LD_*=, GIT_*= or other setting that changes what runs; no git -c setting that \
                 runs commands; bash -c rather than sh -c), or ask the user to run it.",
                request.name
            );
            return Err(Box::new(refusal(
                denied(text),
                decided.decided_by.clone(),
                decided.subject.clone(),
            )));
        }
        let spec = &decided.spec;
        let question = ApprovalRequest {
            call_id: request.call_id.clone(),
            tool: request.name.clone(),
            verb: spec
                .display
                .verb
                .clone()
                .unwrap_or_else(|| request.name.clone()),
            subject: decided.subject.clone(),
            question: call_env::with_sandbox(
                decided
                    .question
                    .clone()
                    .or_else(|| spec.display.question.clone())
                    .unwrap_or_else(|| format!("Would you like to run `{}`?", request.name)),
                call.sandbox.as_ref(),
                self.lifted_by_allow_once(),
            ),
            diff: if approver.wants_preview() {
                decided.tool.preview(call).ok().flatten().map(|mut diff| {
                    diff.bound();
                    diff
                })
            } else {
                None
            },
            args: call.args.clone(),
            labels: Default::default(),
            agent: None,
        };
        let answer = tokio::select! {
            // An interrupt withdraws the question: it wins over the denial
            // the withdrawal causes.
            biased;
            () = interrupt.wait() => {
                let result = interrupted_before(decided.decided_by.clone(), decided.subject.clone());
                return Err(Box::new(result));
            }
            answer = approver.ask(question) => answer.unwrap_or(Approval::Deny { guidance: None }),
        };
        let refuse = |output| {
            Err(Box::new(refusal(
                output,
                decided.decided_by.clone(),
                decided.subject.clone(),
            )))
        };
        match answer {
            Approval::Allow if approver.automatic() => Ok(AllowedBy::Decision),
            Approval::Allow => Ok(AllowedBy::PersonOnce),
            Approval::AllowSession => {
                self.session_rules.allow(&request.name, &decided.subject);
                Ok(AllowedBy::Decision)
            }
            Approval::Deny { guidance } => {
                let mut output = denied("user denied");
                if let Some(guidance) = guidance.filter(|g| !g.trim().is_empty()) {
                    output
                        .text
                        .push_str(&format!("\nThe user says: {guidance}"));
                }
                refuse(output)
            }
            Approval::Stop => {
                let mut result = refusal(
                    denied(STOPPED),
                    decided.decided_by.clone(),
                    decided.subject.clone(),
                );
                result.interrupted = true;
                Err(Box::new(result))
            }
            Approval::Unavailable => refuse(denied(format!(
                "{} needs approval, and no one can answer in a headless run. Rerun with --yes, or allow it with a policy rule, e.g. uji.tool.policy({{ {} = {{ allow = {{ {:?} }} }} }})",
                request.name, request.name, decided.subject
            ))),
        }
    }

    /// Starts the tool and waits for it (or for an interrupt, then a short
    /// grace), then folds `after_tool` hooks over the result.
    async fn execute(
        &self,
        request: &ToolRequest,
        call: ToolCall,
        decided: Decided,
        progress: ProgressSink,
        interrupt: &mut Interrupt,
    ) -> GateResult {
        let Decided {
            tool,
            subject,
            decision,
            decided_by,
            ..
        } = decided;
        let started = std::time::Instant::now();
        let mut running = match tool.start(&call, progress) {
            Ok(running) => running,
            Err(e) => {
                let mut result = refusal(ToolOutput::error(e.to_string()), decided_by, subject);
                result.decision = Decision::Allow;
                return result;
            }
        };
        let mut interrupted = false;
        let result = tokio::select! {
            result = running.finished() => result,
            () = interrupt.wait() => {
                interrupted = true;
                running.cancel();
                match tokio::time::timeout(CANCEL_GRACE, running.finished()).await {
                    Ok(result) => result,
                    Err(_) => Ok(ToolOutput::interrupted(INTERRUPTED_WHILE_RUNNING)),
                }
            }
        };
        let mut output = result.unwrap_or_else(|e| ToolOutput::error(e.to_string()));
        // A tool that stopped for the interrupt says so in its output's
        // kind and keeps what it wrote; any other answer is replaced.
        if interrupted && !output.is_interrupted() {
            output = ToolOutput::interrupted(INTERRUPTED_WHILE_RUNNING);
        }
        if call.sandbox.as_ref().is_some_and(|s| s.proxy.is_some()) {
            self.note_refused_hosts(started, &mut output);
        }
        self.bound_output(call.spill.as_deref(), &mut output);
        self.after_tool(request, &call.args, &subject, &mut output);
        // What a hook put there is bounded too.
        self.bound_output(None, &mut output);
        GateResult {
            output,
            decision,
            decided_by,
            subject,
            ran: true,
            interrupted,
        }
    }
}

/// Who let a call run.
enum AllowedBy {
    /// The rules, a hook, a session rule, `--yes`, or "allow for this
    /// session": the call keeps its sandbox.
    Decision,
    /// A person answered this very call's question "allow once".
    PersonOnce,
}

/// A call the gate decided to run or ask about.
struct Decided {
    tool: Arc<uji_host::RegisteredTool>,
    spec: uji_protocol::ToolSpec,
    subject: String,
    decision: Decision,
    decided_by: DecidedBy,
    /// A hook's own question.
    question: Option<String>,
    /// The rules asked because part of the command could not be accounted
    /// for while the tool has deny rules ([`Verdict::unresolved`]).
    unresolved: bool,
}

/// What the hooks or the rules decided about a call.
struct Verdicted {
    decision: Decision,
    decided_by: DecidedBy,
    message: Option<String>,
    question: Option<String>,
    unresolved: bool,
}

/// What the model reads of an edit refused in plan mode.
const PLANNING: &str = "plan mode is on, and nothing changes files until the user leaves it \
(Shift+Tab or /plan); propose the change in your answer instead";

/// The approval mode over the verdict of a tool that changes files: plan
/// denies whatever allowed it, accept edits turns the policy's ask into an
/// allow. Deny stays deny, and a hook's ask (a plugin wants a person) or an
/// unresolved one stays ask.
fn with_mode(mode: ApprovalMode, tool: &str, verdicted: Verdicted) -> Verdicted {
    match mode {
        ApprovalMode::Plan if verdicted.decision != Decision::Deny => Verdicted {
            decision: Decision::Deny,
            decided_by: DecidedBy::Mode(mode),
            message: Some(format!("{tool} is not run: {PLANNING}")),
            question: None,
            unresolved: false,
        },
        ApprovalMode::AcceptEdits
            if verdicted.decision == Decision::Ask
                && !verdicted.unresolved
                && matches!(verdicted.decided_by, DecidedBy::Policy(_)) =>
        {
            Verdicted {
                decision: Decision::Allow,
                decided_by: DecidedBy::Mode(mode),
                ..verdicted
            }
        }
        _ => verdicted,
    }
}

/// A call the gate refused before asking.
struct Refused {
    verb: Option<String>,
    subject: String,
    result: GateResult,
}

/// What the model reads of a call the interrupt stopped.
const INTERRUPTED_WHILE_RUNNING: &str = "interrupted by the user while this tool ran";

fn refusal(output: ToolOutput, decided_by: DecidedBy, subject: String) -> GateResult {
    GateResult {
        output,
        decision: Decision::Deny,
        decided_by,
        subject,
        ran: false,
        interrupted: false,
    }
}

fn interrupted_before(decided_by: DecidedBy, subject: String) -> GateResult {
    let mut result = refusal(
        ToolOutput::interrupted("interrupted by the user before this tool ran"),
        decided_by,
        subject,
    );
    result.interrupted = true;
    result
}

/// Why a call was decided as it was, in words for a transcript.
pub fn because_of(decided_by: &DecidedBy) -> String {
    match decided_by {
        DecidedBy::UnknownTool => "the call could not be decided".to_string(),
        DecidedBy::Disabled => "the tool is disabled".to_string(),
        DecidedBy::Confinement => "confinement".to_string(),
        DecidedBy::Hook(who) => format!("before_tool hook {who}"),
        DecidedBy::Policy(because) => because.clone(),
        DecidedBy::Mode(ApprovalMode::AcceptEdits) => {
            "accept-edits mode: edits inside the workspace run without asking".to_string()
        }
        DecidedBy::Mode(_) => "plan mode: nothing changes files".to_string(),
    }
}

/// For `uji policy check` on a tool that is not registered: the built-in
/// names tell how their subject reads.
fn guess_kind(tool: &str) -> SubjectKind {
    match tool {
        "read_file" | "edit_file" | "write_file" => SubjectKind::Path,
        "run_command" => SubjectKind::Command,
        _ => SubjectKind::Other,
    }
}

#[cfg(test)]
mod session_rules_tests {
    use super::*;

    #[test]
    fn a_subagent_reads_its_parents_answers_given_before_or_while_it_runs() {
        let parent = SessionRules::default();
        parent.reset("parent");
        parent.allow("run_command", "make");
        let child = SessionRules::of_subagent("child", parent.clone());
        assert!(child.find("run_command", "make").is_some());
        // Allowed in the parent while the subagent already runs.
        parent.allow("run_command", "cargo test");
        assert_eq!(
            child.find("run_command", "cargo test").map(|r| r.session),
            Some("parent".to_string())
        );
    }

    #[test]
    fn what_is_allowed_for_a_subagent_stays_its_own() {
        let parent = SessionRules::default();
        parent.reset("parent");
        let child = SessionRules::of_subagent("child", parent.clone());
        child.allow("write_file", "out.txt");
        assert_eq!(
            child.find("write_file", "out.txt").map(|r| r.session),
            Some("child".to_string())
        );
        assert!(parent.find("write_file", "out.txt").is_none());
    }
}
