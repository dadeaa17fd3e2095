//! `uji policy check TOOL SUBJECT`: the decision a real run would make.

use std::path::PathBuf;

use uji_core::DecidedBy;
use uji_host::paths::{Dirs, ProcessEnv};

pub fn check(
    config_dir: Option<PathBuf>,
    data_dir: Option<PathBuf>,
    tool: &str,
    subject: &str,
) -> Result<(), String> {
    let dirs = Dirs::resolve(config_dir, data_dir, &ProcessEnv).map_err(|e| e.to_string())?;
    let cwd =
        std::env::current_dir().map_err(|e| format!("cannot read the working directory: {e}"))?;
    // Boot exactly as a run does: plugins (and the Lua config) set the
    // policy through the gate's services while they initialise.
    let booted = uji_core::boot_process(dirs, &cwd, &crate::headless::builtins());
    let (registry, gate, set) = (booted.registry, booted.gate, booted.plugins);
    // "Allow for this session" answers of sessions running here count too.
    let here = cwd.canonicalize().unwrap_or_else(|_| cwd.clone());
    gate.session_rules()
        .extend(uji_core::live::running_rules(&booted.dirs.data, &here));
    crate::print_notices(&registry);
    for failure in &set.failed {
        eprintln!(
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
    println!("{} ({source}) {}", verdict.decision, verdict.because);
    if verdict.unresolved {
        // The gate fails closed when nobody can answer.
        println!(
            "with --yes or in a headless run: deny (uji cannot tell what it runs, and {tool} has deny rules)"
        );
    }
    if registry.tool(tool).is_none() {
        println!("note: no loaded plugin provides a tool named {tool}");
    }
    if let Some(message) = verdict.message {
        println!("the model reads: {message}");
    }
    if let Some(kind) = registry.tool(tool).map(|t| t.spec().subject) {
        print_sandbox(&gate, kind, verdict.decision, &cwd);
    }
    Ok(())
}

/// The sandbox a command would run in, attended and with `--yes`.
fn print_sandbox(
    gate: &uji_core::Gate,
    kind: uji_protocol::SubjectKind,
    decision: uji_policy::Decision,
    cwd: &std::path::Path,
) {
    let describe = |unattended| {
        gate.call_sandbox(kind, decision, unattended, cwd)
            .map_or_else(|| "none".to_string(), |s| s.describe())
    };
    if kind != uji_protocol::SubjectKind::Command {
        return;
    }
    let (attended, unattended) = (describe(false), describe(true));
    if attended == unattended {
        println!("sandbox: {attended}");
    } else {
        println!("sandbox: {attended} (with --yes: {unattended})");
    }
}
