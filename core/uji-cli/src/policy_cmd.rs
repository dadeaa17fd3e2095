//! `uji policy check TOOL SUBJECT`: the decision a real run would make.

use std::path::PathBuf;

use uji_core::DecidedBy;

use crate::out::say;

pub fn check(
    config_dir: Option<PathBuf>,
    data_dir: Option<PathBuf>,
    tool: &str,
    subject: &str,
) -> Result<(), String> {
    // Boot exactly as a run does: plugins (and the Lua config) set the
    // policy through the gate's services while they initialise.
    let booted = crate::boot_here(config_dir, data_dir)?;
    let cwd = booted.cwd.clone();
    let (registry, gate, set) = (booted.registry, booted.gate, booted.plugins);
    // "Allow for this session" answers of sessions running here count too.
    let here = cwd.canonicalize().unwrap_or_else(|_| cwd.clone());
    gate.session_rules()
        .extend(uji_core::session::live::running_rules(
            &booted.dirs.data,
            &here,
        ));
    crate::print_notices(&registry);
    for failure in &set.failed {
        say!(
            "uji: plugin {} failed to load: {}",
            failure.path.display(),
            failure.reason
        );
    }
    let (verdict, decided_by) = gate.check(tool, subject, &cwd);
    let source = match decided_by {
        DecidedBy::Disabled => "disabled",
        DecidedBy::Confinement => "confinement",
        DecidedBy::Policy(because) if because.starts_with("session rule") => "session",
        _ => "policy",
    };
    let mut report = format!("{} ({source}) {}\n", verdict.decision, verdict.because);
    if verdict.unresolved {
        // The gate fails closed when nobody can answer.
        let why = match uji_protocol::bash::path() {
            Some(_) => format!("uji cannot tell what it runs, and {tool} has deny rules"),
            None => uji_protocol::bash::missing_text(),
        };
        report.push_str(&format!("with --yes or in a headless run: deny ({why})\n"));
    }
    if registry.tool(tool).is_none() {
        report.push_str(&format!(
            "note: no loaded plugin provides a tool named {tool}\n"
        ));
    }
    if let Some(message) = verdict.message {
        report.push_str(&format!("the model reads: {message}\n"));
    }
    if let Some(kind) = registry.tool(tool).map(|t| t.spec().subject) {
        report.push_str(&sandbox_line(&gate, kind, verdict.decision, &cwd));
    }
    crate::out::print(&report)
}

/// The sandbox a command would run in (a line, or nothing for tools that
/// run no command): the mode in force, and for an ask with no mode set
/// that a person's "allow once" lifts it.
fn sandbox_line(
    gate: &uji_core::Gate,
    kind: uji_protocol::SubjectKind,
    decision: uji_policy::Decision,
    cwd: &std::path::Path,
) -> String {
    let Some(sandbox) = gate.call_sandbox(kind, cwd) else {
        return String::new();
    };
    let mut line = format!("sandbox: {}", sandbox.describe());
    if decision == uji_policy::Decision::Ask && gate.lifted_by_allow_once() {
        line.push_str(" (none if a person allows it once when asked)");
    }
    line.push('\n');
    line
}
