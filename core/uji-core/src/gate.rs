//! The gate: the one place every tool call passes through, whatever its
//! origin (built-in, Lua, native plugin). Tools never decide for themselves.
//!
//! Order for one call: unknown tool → subject → disabled → confinement (file
//! tools) → `before_tool` hooks (the first that decides overrides the policy)
//! → policy rules → approval when the answer is ask → run → `after_tool`
//! hooks (each may replace the text the model reads).
//!
//! Confinement and `disable` are absolute: a hook cannot allow what they
//! refuse. They are switched off explicitly (`confine(false)`, `enable`).

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::oneshot;
use uji_host::{ProgressSink, Registry};
use uji_policy::{Decision, Policy, RuleProblem, ToolFacts, Verdict};
use uji_protocol::services::{
    PolicyProblems, ToolConfine, ToolDisable, ToolEnable, ToolList, ToolPolicy, ToolRemove,
    ToolRoots,
};
use uji_protocol::{DeclaredPolicy, FileDiff, SubjectKind, ToolCall, ToolOutput};

use crate::interrupt::Interrupt;

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
}

/// The answer to an approval request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    Allow,
    /// The user said no, optionally telling the model what to do instead.
    Deny {
        guidance: Option<String>,
    },
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

/// The policy state and the registry, behind one lock each.
#[derive(Clone)]
pub struct Gate {
    registry: Registry,
    policy: Arc<RwLock<Policy>>,
}

fn denied(text: impl AsRef<str>) -> ToolOutput {
    ToolOutput {
        text: format!("denied: {}", text.as_ref()),
        is_error: true,
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
        }
    }

    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    fn with_policy<R>(&self, f: impl FnOnce(&Policy) -> R) -> Option<R> {
        self.policy.read().ok().map(|p| f(&p))
    }

    fn with_policy_mut<R>(&self, f: impl FnOnce(&mut Policy) -> R) -> Option<R> {
        self.policy.write().ok().map(|mut p| f(&mut p))
    }

    // ---- the Rust API of uji.tool.* ---------------------------------------------

    /// `uji.tool.policy(rules, {name})`: returns the invalid rules (each also
    /// becomes a notice).
    pub fn set_policy(&self, rules: &Value, set: Option<&str>) -> Vec<RuleProblem> {
        let problems = self
            .with_policy_mut(|p| p.set_rules(rules, set))
            .unwrap_or_default();
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
        self.with_policy(|p| p.is_disabled(name)).unwrap_or(false)
    }

    /// `uji.tool.confine(enabled)`: whether the file tools are confined.
    pub fn confine(&self, enabled: Option<bool>) -> bool {
        self.with_policy_mut(|p| p.confine(enabled)).unwrap_or(true)
    }

    /// `uji.tool.roots(paths)`: the extra directories file tools may reach.
    pub fn roots(&self, paths: Option<Vec<String>>) -> Vec<PathBuf> {
        self.with_policy_mut(|p| p.roots(paths)).unwrap_or_default()
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
        self.registry.serve(move |request: ToolRoots| {
            let roots = gate.roots(request.paths);
            Ok(roots
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect())
        });
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
            && let Some(Err(e)) = self.with_policy(|p| p.check_path(subject, cwd))
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
        let verdict = self
            .with_policy(|p| p.decide(&facts))
            .unwrap_or_else(|| Verdict::new(Decision::Ask, "policy unavailable; fallback ask"));
        let because = verdict.because.clone();
        (verdict, DecidedBy::Policy(because))
    }

    /// Runs `before_tool` hooks in order; the first that decides wins. A hook
    /// that fails denies the call (fail closed) and says so in a notice.
    fn before_tool(&self, request: &ToolRequest, subject: &str) -> Option<(HookVerdict, String)> {
        let hooks = self.registry.hooks("before_tool");
        if hooks.is_empty() {
            return None;
        }
        let payload = json!({
            "event": "before_tool",
            "tool": request.name,
            "args": request.args,
            "subject": subject,
            "call_id": request.call_id,
        });
        for hook in hooks {
            let who = hook
                .options()
                .name
                .clone()
                .unwrap_or_else(|| hook.plugin().to_string());
            match hook.call(&payload) {
                Ok(answer) => {
                    if let Some(verdict) = parse_hook_verdict(&answer) {
                        return Some((verdict, who));
                    }
                }
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
            let payload = json!({
                "event": "after_tool",
                "tool": request.name,
                "args": args,
                "subject": subject,
                "call_id": request.call_id,
                "text": output.text,
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
        self.run_observed(request, approver, progress, interrupt, &|_, _| {})
            .await
    }

    /// Like [`Gate::run`], calling `started(subject, verb)` for a known tool
    /// as soon as its subject is known (empty if the tool could not give
    /// one), before hooks, policy and approval: what a frontend shows as the
    /// call starting, without asking the tool for its subject twice.
    pub async fn run_observed(
        &self,
        mut request: ToolRequest,
        approver: &dyn Approver,
        progress: ProgressSink,
        interrupt: &mut Interrupt,
        started: &(dyn Fn(&str, Option<&str>) + Sync),
    ) -> GateResult {
        let refuse = |output: ToolOutput, decided_by: DecidedBy, subject: String| GateResult {
            output,
            decision: Decision::Deny,
            decided_by,
            subject,
            ran: false,
            interrupted: false,
        };

        let Some(tool) = self.registry.tool(&request.name) else {
            let names: Vec<String> = self
                .registry
                .tools()
                .iter()
                .map(|t| t.spec().name.clone())
                .collect();
            let output = ToolOutput::error(format!(
                "unknown tool `{}`. Available tools: {}.",
                request.name,
                names.join(", ")
            ));
            return refuse(output, DecidedBy::UnknownTool, String::new());
        };
        let spec = tool.spec().clone();
        let subject = tool.subject(&request.args);
        started(
            subject.as_deref().unwrap_or_default(),
            spec.display.verb.as_deref(),
        );
        let subject = match subject {
            Ok(subject) => subject,
            Err(e) => {
                return refuse(
                    ToolOutput::error(e.to_string()),
                    DecidedBy::UnknownTool,
                    spec.name.clone(),
                );
            }
        };

        if self.is_disabled(&request.name) {
            let output = denied(format!("{} is disabled", request.name));
            return refuse(output, DecidedBy::Disabled, subject);
        }
        if spec.subject == SubjectKind::Path
            && let Some(Err(e)) = self.with_policy(|p| p.check_path(&subject, &request.cwd))
        {
            return refuse(denied(e.to_string()), DecidedBy::Confinement, subject);
        }

        let (decision, decided_by, message, question) = match self.before_tool(&request, &subject) {
            Some((HookVerdict::Allow, who)) => (Decision::Allow, DecidedBy::Hook(who), None, None),
            Some((HookVerdict::Deny(reason), who)) => {
                (Decision::Deny, DecidedBy::Hook(who), Some(reason), None)
            }
            Some((HookVerdict::Ask(question), who)) => {
                (Decision::Ask, DecidedBy::Hook(who), None, question)
            }
            None => {
                let facts = ToolFacts {
                    tool: &request.name,
                    subject: &subject,
                    kind: policy_kind(spec.subject),
                    declared: spec.policy.map(declared),
                    cwd: &request.cwd,
                };
                let verdict = self
                    .with_policy(|p| p.decide(&facts))
                    .unwrap_or_else(|| Verdict::new(Decision::Ask, "fallback ask"));
                (
                    verdict.decision,
                    DecidedBy::Policy(verdict.because),
                    verdict.message,
                    None,
                )
            }
        };

        // The arguments move into the call (they can be megabytes: a
        // write_file's content); later steps read them from `call`.
        let call = ToolCall {
            id: request.call_id.clone(),
            args: std::mem::take(&mut request.args),
            cwd: request.cwd.to_string_lossy().into_owned(),
        };
        match decision {
            Decision::Deny => {
                let text = message.unwrap_or_else(|| "denied by policy".to_string());
                return refuse(denied(text), decided_by, subject);
            }
            Decision::Ask => {
                let approval = ApprovalRequest {
                    call_id: request.call_id.clone(),
                    tool: request.name.clone(),
                    verb: spec
                        .display
                        .verb
                        .clone()
                        .unwrap_or_else(|| request.name.clone()),
                    subject: subject.clone(),
                    question: question
                        .or_else(|| spec.display.question.clone())
                        .unwrap_or_else(|| format!("Would you like to run `{}`?", request.name)),
                    diff: if approver.wants_preview() {
                        tool.preview(&call).ok().flatten()
                    } else {
                        None
                    },
                    args: call.args.clone(),
                };
                let answer = tokio::select! {
                    answer = approver.ask(approval) => answer.unwrap_or(Approval::Deny { guidance: None }),
                    () = interrupt.wait() => {
                        let mut result = refuse(
                            ToolOutput::error("interrupted by the user before this tool ran"),
                            decided_by,
                            subject,
                        );
                        result.interrupted = true;
                        return result;
                    }
                };
                match answer {
                    Approval::Allow => {}
                    Approval::Deny { guidance } => {
                        let mut output = denied("user denied");
                        if let Some(guidance) = guidance.filter(|g| !g.trim().is_empty()) {
                            output
                                .text
                                .push_str(&format!("\nThe user says: {guidance}"));
                        }
                        return refuse(output, decided_by, subject);
                    }
                    Approval::Unavailable => {
                        let output = denied(format!(
                            "{} needs approval, and no one can answer in a headless run. Rerun with --yes, or allow it with a policy rule, e.g. uji.tool.policy({{ {} = {{ allow = {{ {:?} }} }} }})",
                            request.name, request.name, subject
                        ));
                        return refuse(output, decided_by, subject);
                    }
                }
            }
            Decision::Allow => {}
        }

        // Hooks and the subject may have taken a while: an interrupt that
        // came meanwhile stops the call before it starts.
        if interrupt.is_set() {
            let mut result = refuse(
                ToolOutput::error("interrupted by the user before this tool ran"),
                decided_by,
                subject,
            );
            result.interrupted = true;
            return result;
        }
        let mut running = match tool.start(&call, progress) {
            Ok(running) => running,
            Err(e) => {
                return GateResult {
                    output: ToolOutput::error(e.to_string()),
                    decision: Decision::Allow,
                    decided_by,
                    subject,
                    ran: false,
                    interrupted: false,
                };
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
                    Err(_) => Ok(ToolOutput::error("interrupted by the user while this tool ran")),
                }
            }
        };
        let mut output = result.unwrap_or_else(|e| ToolOutput::error(e.to_string()));
        if interrupted && !output.text.contains("interrupted") {
            output = ToolOutput::error("interrupted by the user while this tool ran");
        }
        self.after_tool(&request, &call.args, &subject, &mut output);
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

/// For `uji policy check` on a tool that is not registered: the built-in
/// names tell how their subject reads.
fn guess_kind(tool: &str) -> SubjectKind {
    match tool {
        "read_file" | "edit_file" | "write_file" => SubjectKind::Path,
        "run_command" => SubjectKind::Command,
        _ => SubjectKind::Other,
    }
}
