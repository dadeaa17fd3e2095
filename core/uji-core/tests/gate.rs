//! The gate: policy fallbacks, approvals, disable, confinement, hooks and
//! interrupts, with tools and hooks registered through the real plugin ABI
//! (an SDK plugin hosted in process).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::sync::oneshot;
use uji_core::{
    Approval, ApprovalRequest, Approver, DecidedBy, Gate, HeadlessApprover, Interrupt, ToolRequest,
    interrupt_pair,
};
use uji_host::{ProgressSink, Registry, load_module};
use uji_policy::Decision;
use uji_sdk::protocol::HookOptions;
use uji_sdk::protocol::ToolErrorKind;
use uji_sdk::protocol::services::ToolSandbox;
use uji_sdk::{
    FileDiff, Host, Plugin, SandboxMode, SubjectKind, Tool, ToolCall, ToolContext, ToolOutput,
    ToolSpec,
};

// ---- an in-process test plugin ------------------------------------------------------

type Setup = Box<dyn FnOnce(&Host) -> Result<(), String> + Send>;
static NEXT_SETUP: Mutex<Option<Setup>> = Mutex::new(None);
static LOADING: Mutex<()> = Mutex::new(());

struct TestPlugin;

impl Plugin for TestPlugin {
    const NAME: &'static str = "test";
    const VERSION: &'static str = "0.0.0";

    fn init(host: &Host) -> Result<(), String> {
        host.register_tool(Probe)?;
        host.register_tool(Shell)?;
        host.register_tool(Reader)?;
        host.register_tool(Slow)?;
        let setup = NEXT_SETUP.lock().take();
        match setup {
            Some(setup) => setup(host),
            None => Ok(()),
        }
    }
}

/// A gate over the test plugin; `setup` runs inside the plugin's init with
/// its Host (to add hooks or call host services).
fn gate_with(setup: impl FnOnce(&Host) -> Result<(), String> + Send + 'static) -> Gate {
    let _serial = LOADING.lock();
    let registry = Registry::new();
    let gate = Gate::new(registry.clone());
    gate.install_services();
    *NEXT_SETUP.lock() = Some(Box::new(setup));
    load_module(
        uji_sdk::in_process_module::<TestPlugin>(),
        "test",
        &registry,
    )
    .unwrap();
    gate
}

fn gate() -> Gate {
    gate_with(|_| Ok(()))
}

struct Probe;
impl Tool for Probe {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new("probe", "Edits a path.")
            .subject_kind(SubjectKind::Path)
            .verb("Update")
            .question("Edit this file?")
    }
    fn subject(&self, args: &Value) -> String {
        args["path"].as_str().unwrap_or("probe").to_string()
    }
    fn preview(&self, call: &ToolCall) -> Option<FileDiff> {
        Some(FileDiff {
            path: call.args["path"].as_str().unwrap_or_default().to_string(),
            unified: "@@ -1 +1 @@\n-a\n+b\n".to_string(),
            added: 1,
            removed: 1,
        })
    }
    fn run(&self, call: ToolCall, _ctx: &ToolContext) -> ToolOutput {
        ToolOutput::text(format!(
            "probed {}",
            call.args["path"].as_str().unwrap_or_default()
        ))
    }
}

struct Shell;
impl Tool for Shell {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new("shell", "Runs a command.")
            .subject_kind(SubjectKind::Command)
            .verb("Shell")
    }
    fn subject(&self, args: &Value) -> String {
        args["command"].as_str().unwrap_or("shell").to_string()
    }
    fn run(&self, call: ToolCall, _ctx: &ToolContext) -> ToolOutput {
        ToolOutput::text(format!(
            "ran {}",
            call.args["command"].as_str().unwrap_or_default()
        ))
    }
}

/// A command tool that reports the sandbox its call carries.
struct SandboxEcho;
impl Tool for SandboxEcho {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new("sandbox_echo", "Reports its sandbox.").subject_kind(SubjectKind::Command)
    }
    fn subject(&self, args: &Value) -> String {
        args["command"].as_str().unwrap_or("echo").to_string()
    }
    fn run(&self, call: ToolCall, _ctx: &ToolContext) -> ToolOutput {
        ToolOutput::text(serde_json::to_string(&call.sandbox).unwrap_or_default())
    }
}

struct Reader;
impl Tool for Reader {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new("reader", "Reads a path.")
            .subject_kind(SubjectKind::Path)
            .allow()
    }
    fn subject(&self, args: &Value) -> String {
        args["path"].as_str().unwrap_or("reader").to_string()
    }
    fn run(&self, call: ToolCall, _ctx: &ToolContext) -> ToolOutput {
        ToolOutput::text(format!(
            "read {}",
            call.args["path"].as_str().unwrap_or_default()
        ))
    }
}

struct Slow;
impl Tool for Slow {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new("slow", "Runs until cancelled.").allow()
    }
    /// With `{"kind": true}` it says it stopped for the interrupt (and the
    /// gate keeps its words); without, it only says so in its text.
    fn run(&self, call: ToolCall, ctx: &ToolContext) -> ToolOutput {
        while !ctx.is_cancelled() {
            std::thread::sleep(Duration::from_millis(5));
        }
        if call.args["kind"] == true {
            ToolOutput::interrupted("stopped after cleaning up")
        } else {
            ToolOutput::error("interrupted, it claims in its text")
        }
    }
}

// ---- helpers ----------------------------------------------------------------------------

/// Records what it was asked and answers as told.
struct Scripted {
    answer: Approval,
    asked: Mutex<Vec<ApprovalRequest>>,
}

impl Scripted {
    fn new(answer: Approval) -> Scripted {
        Scripted {
            answer,
            asked: Mutex::new(Vec::new()),
        }
    }
    fn asked(&self) -> Vec<ApprovalRequest> {
        self.asked.lock().clone()
    }
}

impl Approver for Scripted {
    fn ask(&self, request: ApprovalRequest) -> oneshot::Receiver<Approval> {
        self.asked.lock().push(request);
        let (tx, rx) = oneshot::channel();
        let _ = tx.send(self.answer.clone());
        rx
    }
}

/// Never answers (the user walked away).
struct Silent;
impl Approver for Silent {
    fn ask(&self, _request: ApprovalRequest) -> oneshot::Receiver<Approval> {
        let (tx, rx) = oneshot::channel();
        std::mem::forget(tx);
        rx
    }
}

fn request(name: &str, args: Value, cwd: &Path) -> ToolRequest {
    ToolRequest {
        call_id: "call_1".to_string(),
        name: name.to_string(),
        args,
        cwd: cwd.to_path_buf(),
        session: None,
    }
}

fn no_progress() -> ProgressSink {
    Arc::new(|_: &str| {})
}

fn work() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().canonicalize().unwrap();
    (dir, cwd)
}

fn run(gate: &Gate, req: ToolRequest, approver: &dyn Approver) -> uji_core::GateResult {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(gate.run(req, approver, no_progress(), &mut Interrupt::never()))
}

fn on(
    host: &Host,
    event: &str,
    name: &str,
    priority: i64,
    f: impl Fn(Value) -> Result<Value, String> + Send + Sync + 'static,
) {
    host.on(
        event,
        HookOptions {
            priority,
            name: Some(name.to_string()),
        },
        f,
    )
    .unwrap();
}

// ---- tests -----------------------------------------------------------------------------

#[test]
fn unknown_tool_lists_the_available_tools() {
    let (_d, cwd) = work();
    let result = run(
        &gate(),
        request("nope", json!({}), &cwd),
        &HeadlessApprover { yes: true },
    );
    assert_eq!(
        result.output.text,
        "error: unknown tool `nope`. Available tools: probe, reader, shell, slow."
    );
    assert_eq!(result.decided_by, DecidedBy::UnknownTool);
    assert!(!result.ran);
}

#[test]
fn declared_allow_runs_without_asking_and_declared_ask_asks() {
    let (_d, cwd) = work();
    let gate = gate();
    let approver = Scripted::new(Approval::Allow);
    let result = run(
        &gate,
        request("reader", json!({"path": "a.txt"}), &cwd),
        &approver,
    );
    assert_eq!(result.output.text, "read a.txt");
    assert!(approver.asked().is_empty());

    let result = run(
        &gate,
        request("probe", json!({"path": "a.txt"}), &cwd),
        &approver,
    );
    assert_eq!(result.output.text, "probed a.txt");
    let asked = approver.asked();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].verb, "Update");
    assert_eq!(asked[0].subject, "a.txt");
    assert_eq!(asked[0].question, "Edit this file?");
    assert_eq!(
        asked[0].diff.as_ref().unwrap().unified,
        "@@ -1 +1 @@\n-a\n+b\n"
    );
}

#[test]
fn a_user_refusal_reaches_the_model_with_guidance() {
    let (_d, cwd) = work();
    let approver = Scripted::new(Approval::Deny {
        guidance: Some("edit b.txt instead".to_string()),
    });
    let result = run(
        &gate(),
        request("probe", json!({"path": "a.txt"}), &cwd),
        &approver,
    );
    assert_eq!(
        result.output.text,
        "denied: user denied\nThe user says: edit b.txt instead"
    );
    assert!(!result.ran);
    let plain = Scripted::new(Approval::Deny { guidance: None });
    let result = run(
        &gate(),
        request("probe", json!({"path": "a.txt"}), &cwd),
        &plain,
    );
    assert_eq!(result.output.text, "denied: user denied");
    assert_eq!(result.output.error_kind, Some(ToolErrorKind::Denied));
}

#[test]
fn headless_asks_are_denied_with_how_to_allow_unless_yes() {
    let (_d, cwd) = work();
    let gate = gate();
    let result = run(
        &gate,
        request("shell", json!({"command": "make"}), &cwd),
        &HeadlessApprover { yes: false },
    );
    assert!(
        result
            .output
            .text
            .starts_with("denied: shell needs approval"),
        "{}",
        result.output.text
    );
    assert!(result.output.text.contains("--yes"));
    assert!(result.output.text.contains("uji.tool.policy"));
    let result = run(
        &gate,
        request("shell", json!({"command": "make"}), &cwd),
        &HeadlessApprover { yes: true },
    );
    assert_eq!(result.output.text, "ran make");
}

#[test]
fn deny_rules_stay_denied_even_with_yes_and_carry_their_message() {
    let (_d, cwd) = work();
    let gate = gate();
    let problems = gate.set_policy(
        &json!({"shell": {"deny": ["/^rm\\s+-rf/", {"pattern": "sudo *", "message": "no sudo in this repo"}]}}),
        None,
    );
    assert!(problems.is_empty());
    let yes = HeadlessApprover { yes: true };
    let result = run(
        &gate,
        request("shell", json!({"command": "rm -rf /"}), &cwd),
        &yes,
    );
    assert_eq!(result.output.text, "denied: denied by policy");
    let result = run(
        &gate,
        request("shell", json!({"command": "sudo make install"}), &cwd),
        &yes,
    );
    assert_eq!(result.output.text, "denied: no sudo in this repo");
    let result = run(
        &gate,
        request("shell", json!({"command": "git diff; rm -rf ~"}), &cwd),
        &yes,
    );
    assert_eq!(
        result.output.text, "denied: denied by policy",
        "a denied part denies the line"
    );
}

#[test]
fn an_allowed_prefix_does_not_allow_a_compound_command() {
    let (_d, cwd) = work();
    let gate = gate();
    gate.set_policy(&json!({"shell": {"allow": ["git diff*"]}}), None);
    let approver = Scripted::new(Approval::Allow);
    let result = run(
        &gate,
        request("shell", json!({"command": "git diff HEAD"}), &cwd),
        &approver,
    );
    assert_eq!(result.output.text, "ran git diff HEAD");
    assert!(approver.asked().is_empty());
    let result = run(
        &gate,
        request("shell", json!({"command": "git diff; rm -rf ~"}), &cwd),
        &approver,
    );
    assert_eq!(result.output.text, "ran git diff; rm -rf ~");
    assert_eq!(
        approver.asked().len(),
        1,
        "the compound line had to be asked about"
    );
}

#[test]
fn a_disabled_tool_stays_listed_and_is_denied_until_enabled() {
    let (_d, cwd) = work();
    let gate = gate();
    gate.disable(&["reader".to_string()]);
    assert!(
        gate.registry().tool("reader").is_some(),
        "still offered to the model"
    );
    let result = run(
        &gate,
        request("reader", json!({"path": "a"}), &cwd),
        &HeadlessApprover { yes: true },
    );
    assert_eq!(result.output.text, "denied: reader is disabled");
    assert_eq!(result.decided_by, DecidedBy::Disabled);
    gate.enable(&["reader".to_string()]);
    let result = run(
        &gate,
        request("reader", json!({"path": "a"}), &cwd),
        &HeadlessApprover { yes: true },
    );
    assert_eq!(result.output.text, "read a");
}

#[test]
fn confinement_refuses_escapes_even_when_a_hook_allows() {
    let (_d, cwd) = work();
    let gate = gate_with(|host| {
        on(host, "before_tool", "allow-all", 50, |_| {
            Ok(json!({"allow": true}))
        });
        Ok(())
    });
    let yes = HeadlessApprover { yes: true };
    let result = run(
        &gate,
        request("reader", json!({"path": "../outside.txt"}), &cwd),
        &yes,
    );
    assert_eq!(result.decided_by, DecidedBy::Confinement);
    assert!(
        result
            .output
            .text
            .starts_with("denied: ../outside.txt is outside the allowed directories"),
        "{}",
        result.output.text
    );
    assert!(
        result.output.text.contains(cwd.to_str().unwrap()),
        "names the allowed directory"
    );

    let outside = tempfile::tempdir().unwrap();
    let file = outside.path().join("x.txt");
    gate.roots(Some(vec![outside.path().to_string_lossy().into_owned()]));
    let result = run(
        &gate,
        request("reader", json!({"path": file.to_str().unwrap()}), &cwd),
        &yes,
    );
    assert_eq!(result.output.text, format!("read {}", file.display()));

    gate.roots(Some(vec![]));
    assert!(gate.confine(None));
    assert!(!gate.confine(Some(false)));
    let result = run(
        &gate,
        request("reader", json!({"path": "../outside.txt"}), &cwd),
        &yes,
    );
    assert_eq!(result.output.text, "read ../outside.txt");
    // Commands are never confined.
    gate.confine(Some(true));
    let result = run(
        &gate,
        request("shell", json!({"command": "cat ../outside.txt"}), &cwd),
        &yes,
    );
    assert_eq!(result.output.text, "ran cat ../outside.txt");
}

#[test]
fn before_tool_hooks_override_the_policy_in_priority_order() {
    let (_d, cwd) = work();
    let gate = gate_with(|host| {
        // Runs second (priority 60): allows anything touching "ok".
        on(host, "before_tool", "allow-ok", 60, |p| {
            Ok(
                if p["subject"].as_str().unwrap_or_default().contains("ok") {
                    json!({"allow": true})
                } else {
                    Value::Null
                },
            )
        });
        // Runs first (priority 10): denies "secret", asks a custom question for "maybe".
        on(host, "before_tool", "guard", 10, |p| {
            let subject = p["subject"].as_str().unwrap_or_default().to_string();
            Ok(if subject.contains("secret") {
                json!({"deny": "secrets stay closed"})
            } else if subject.contains("maybe") {
                json!({"ask": "Really touch maybe?"})
            } else {
                Value::Null
            })
        });
        Ok(())
    });
    gate.set_policy(&json!({"reader": {"deny": ["ok-but-denied.txt"]}}), None);
    let approver = Scripted::new(Approval::Allow);

    // A hook allow beats a declared ask: no question.
    let result = run(
        &gate,
        request("probe", json!({"path": "ok.txt"}), &cwd),
        &approver,
    );
    assert_eq!(result.output.text, "probed ok.txt");
    assert_eq!(result.decided_by, DecidedBy::Hook("allow-ok".to_string()));
    assert!(approver.asked().is_empty());
    // ...and a policy deny rule.
    let result = run(
        &gate,
        request("reader", json!({"path": "ok-but-denied.txt"}), &cwd),
        &approver,
    );
    assert_eq!(result.output.text, "read ok-but-denied.txt");
    // The lower priority runs first and wins.
    let result = run(
        &gate,
        request("reader", json!({"path": "secret-ok.txt"}), &cwd),
        &approver,
    );
    assert_eq!(result.output.text, "denied: secrets stay closed");
    // A custom question.
    let result = run(
        &gate,
        request("reader", json!({"path": "maybe.txt"}), &cwd),
        &approver,
    );
    assert_eq!(result.output.text, "read maybe.txt");
    assert_eq!(approver.asked()[0].question, "Really touch maybe?");
    // nil everywhere: the policy decides (reader declares allow).
    let result = run(
        &gate,
        request("reader", json!({"path": "plain.txt"}), &cwd),
        &approver,
    );
    assert!(matches!(result.decided_by, DecidedBy::Policy(_)));
    assert_eq!(approver.asked().len(), 1);
}

#[test]
fn a_hook_with_the_same_name_replaces_the_old_one() {
    let (_d, cwd) = work();
    let gate = gate_with(|host| {
        on(host, "before_tool", "gatekeeper", 50, |_| {
            Ok(json!({"deny": "old"}))
        });
        on(host, "before_tool", "gatekeeper", 50, |_| {
            Ok(json!({"deny": "new"}))
        });
        Ok(())
    });
    let result = run(
        &gate,
        request("reader", json!({"path": "a"}), &cwd),
        &HeadlessApprover { yes: true },
    );
    assert_eq!(result.output.text, "denied: new");
    assert_eq!(gate.registry().hooks("before_tool").len(), 1);
}

#[test]
fn a_failing_before_tool_hook_denies_and_a_failing_after_tool_hook_changes_nothing() {
    let (_d, cwd) = work();
    let gate = gate_with(|host| {
        on(host, "before_tool", "broken-before", 50, |p| {
            if p["tool"] == "probe" {
                Err("boom".to_string())
            } else {
                Ok(Value::Null)
            }
        });
        on(host, "after_tool", "broken-after", 50, |_| {
            Err("bang".to_string())
        });
        Ok(())
    });
    let yes = HeadlessApprover { yes: true };
    let result = run(&gate, request("probe", json!({"path": "a"}), &cwd), &yes);
    assert_eq!(
        result.output.text,
        "denied: before_tool hook broken-before failed"
    );
    let result = run(&gate, request("reader", json!({"path": "a"}), &cwd), &yes);
    assert_eq!(result.output.text, "read a");
    let notices: Vec<String> = gate
        .registry()
        .take_notices()
        .into_iter()
        .map(|n| n.text)
        .collect();
    assert!(
        notices
            .iter()
            .any(|n| n.contains("broken-before failed") && n.contains("boom")),
        "{notices:?}"
    );
    assert!(
        notices
            .iter()
            .any(|n| n.contains("broken-after failed") && n.contains("bang")),
        "{notices:?}"
    );
}

#[test]
fn after_tool_hooks_fold_over_the_text() {
    let (_d, cwd) = work();
    let gate = gate_with(|host| {
        on(host, "after_tool", "redact", 10, |p| {
            Ok(json!(
                p["text"]
                    .as_str()
                    .unwrap_or_default()
                    .replace("secret", "[redacted]")
            ))
        });
        on(host, "after_tool", "shout", 20, |p| {
            Ok(json!(p["text"].as_str().unwrap_or_default().to_uppercase()))
        });
        on(host, "after_tool", "pass", 30, |_| Ok(Value::Null));
        Ok(())
    });
    let result = run(
        &gate,
        request("reader", json!({"path": "secret.txt"}), &cwd),
        &HeadlessApprover { yes: true },
    );
    assert_eq!(result.output.text, "READ [REDACTED].TXT");
}

#[test]
fn policy_services_reach_the_gate_from_a_plugin() {
    let (_d, cwd) = work();
    let answers = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&answers);
    let gate = gate_with(move |host| {
        let mut out = seen.lock();
        out.push(host.call(
            "tool.policy",
            &json!({"rules": {"probe": {"allow": ["*.md"], "deny": ["/[/"]}}}),
        )?);
        out.push(host.call("tool.confine", &json!({}))?);
        out.push(host.call("tool.roots", &json!({"paths": ["~/reference"]}))?);
        out.push(host.call("tool.list", &json!({}))?);
        host.call("tool.disable", &json!({"names": ["slow"]}))?;
        Ok(())
    });
    let answers = answers.lock();
    let problems = answers[0]["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1);
    assert!(
        problems[0].as_str().unwrap().contains("/[/"),
        "{problems:?}"
    );
    assert_eq!(answers[1], json!(true), "confinement is on by default");
    let root = answers[2][0].as_str().unwrap();
    assert!(
        !root.starts_with('~') && root.ends_with("/reference"),
        "{root}"
    );
    assert_eq!(answers[3], json!(["probe", "reader", "shell", "slow"]));
    assert!(gate.is_disabled("slow"));
    // The bad rule made probe unable to allow: README.md asks instead.
    let approver = Scripted::new(Approval::Allow);
    run(
        &gate,
        request("probe", json!({"path": "README.md"}), &cwd),
        &approver,
    );
    assert_eq!(approver.asked().len(), 1);
    let (verdict, _) = gate.check("probe", "README.md", &cwd);
    assert_eq!(verdict.decision, Decision::Ask);
}

/// Runs `request` through the gate and interrupts it after `after_ms`.
async fn run_interrupted(
    gate: &Gate,
    request: ToolRequest,
    approver: &dyn Approver,
    after_ms: u64,
) -> uji_core::GateResult {
    let (interrupter, mut interrupt) = interrupt_pair();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(after_ms)).await;
        interrupter.interrupt();
    });
    tokio::time::timeout(
        Duration::from_secs(10),
        gate.run(request, approver, no_progress(), &mut interrupt),
    )
    .await
    .unwrap()
}

#[test]
fn interrupting_stops_a_running_tool_and_an_open_question() {
    let (_d, cwd) = work();
    let gate = gate();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let result = run_interrupted(
            &gate,
            request("slow", json!({}), &cwd),
            &HeadlessApprover { yes: true },
            100,
        )
        .await;
        assert!(result.interrupted && result.ran);
        assert_eq!(
            result.output.text, "error: interrupted by the user while this tool ran",
            "a text that mentions the interrupt is not its kind"
        );
        assert_eq!(result.output.error_kind, Some(ToolErrorKind::Interrupted));

        let result = run_interrupted(
            &gate,
            request("slow", json!({"kind": true}), &cwd),
            &HeadlessApprover { yes: true },
            100,
        )
        .await;
        assert!(result.interrupted && result.ran);
        assert_eq!(
            result.output.text, "error: stopped after cleaning up",
            "a tool that stopped for the interrupt keeps its words"
        );

        let result = run_interrupted(
            &gate,
            request("probe", json!({"path": "a"}), &cwd),
            &Silent,
            50,
        )
        .await;
        assert!(result.interrupted && !result.ran);
        assert_eq!(
            result.output.text,
            "error: interrupted by the user before this tool ran"
        );
        assert_eq!(result.output.error_kind, Some(ToolErrorKind::Interrupted));
    });
}

#[test]
fn only_a_persons_allow_once_runs_a_command_outside_the_sandbox() {
    let (_d, cwd) = work();
    let gate = gate_with(|host| host.register_tool(SandboxEcho));
    let call = |command: &str| request("sandbox_echo", json!({"command": command}), &cwd);
    let mode = |result: &uji_core::GateResult| -> Value {
        let sandbox: Value = serde_json::from_str(&result.output.text).unwrap();
        sandbox["mode"].clone()
    };
    // Answered "allow once" by a person, nothing configured: no sandbox,
    // and the question said so.
    let person = Scripted::new(Approval::Allow);
    let result = run(&gate, call("make"), &person);
    assert_eq!(result.output.text, "null");
    assert_eq!(
        person.asked()[0].question,
        "Would you like to run `sandbox_echo`? (once: no sandbox; for the session: sandbox \
         workspace-write, network on)"
    );
    // "Allow for this session": this call and the next identical one,
    // which the session rule allows unasked, keep the sandbox.
    let session = Scripted::new(Approval::AllowSession);
    assert_eq!(
        mode(&run(&gate, call("make all"), &session)),
        "workspace-write"
    );
    assert_eq!(
        mode(&run(&gate, call("make all"), &person)),
        "workspace-write"
    );
    // An allow rule skips the question, never the sandbox.
    gate.set_policy(&json!({"sandbox_echo": {"allow": ["touch *"]}}), None);
    assert_eq!(
        mode(&run(&gate, call("touch x"), &person)),
        "workspace-write"
    );
    assert_eq!(person.asked().len(), 1, "the rule's call asked nobody");
    // Run by --yes: workspace-write over the working directory and the
    // temporary directory, network on.
    let result = run(&gate, call("make"), &HeadlessApprover { yes: true });
    let sandbox: Value = serde_json::from_str(&result.output.text).unwrap();
    assert_eq!(sandbox["mode"], "workspace-write");
    assert_eq!(sandbox["network"], true);
    let writable: Vec<&str> = sandbox["writable"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert_eq!(writable[0], cwd.to_str().unwrap());
    let tmp = std::env::temp_dir().canonicalize().unwrap();
    assert!(writable.contains(&tmp.to_str().unwrap()), "{writable:?}");
    // Configured: every command call gets it, and the question says so.
    let settings = gate.sandbox(ToolSandbox {
        mode: Some(SandboxMode::ReadOnly),
        network: Some(uji_protocol::Network::None),
        writable: None,
    });
    assert_eq!(settings.mode, Some(SandboxMode::ReadOnly));
    let approver = Scripted::new(Approval::Allow);
    let result = run(&gate, call("make"), &approver);
    assert!(
        result.output.text.contains("read-only"),
        "{}",
        result.output.text
    );
    assert_eq!(
        approver.asked()[0].question,
        "Would you like to run `sandbox_echo`? (sandbox: read-only, network off)"
    );
    // File tools never get one.
    let result = run(
        &gate,
        request("probe", json!({"path": "a.txt"}), &cwd),
        &HeadlessApprover { yes: true },
    );
    assert_eq!(result.output.text, "probed a.txt");
}
