//! `proc.start`: a process started exactly like a `run_command` that nobody
//! approved, so a plugin gets no more than the model does:
//!
//! - a command line runs in the same bash (`uji_protocol::bash::command`);
//! - the environment is `env.child`'s (`uji_sdk::child::env`, as
//!   `process::Running::start` applies it): no provider key, no `UJI_*`;
//!   the request's `env` may not bring one back ([`check_env`]);
//! - the OS sandbox is the one core's gate gives a command nobody
//!   approved (`tool.command_sandbox`, which calls the gate's
//!   `call_sandbox` as `run_command`'s calls get it, so the user's
//!   `uji.tool.sandbox` settings apply), set up by the same
//!   `sandbox::prepare` and entered by the same `process::start_tree`
//!   (Landlock, the mount namespace; without Landlock it runs as
//!   `run_command` does then, with the notice);
//! - the process tree, its reaping and the spawner thread are
//!   `process::start_tree`'s.

use std::collections::BTreeMap;
use std::io;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};
use uji_sdk::CallSandbox;
use uji_sdk::protocol::bash;
use uji_sdk::protocol::procs::{ProcCommand, ProcStart, ProcStarted};
use uji_sdk::protocol::services::{ChildEnv, CommandSandbox};
use uji_sdk::services::ServiceError;

use super::pump::{self, Pipes, Tree};
use super::wake::Wake;
use super::{Input, Proc, Procs, SandboxFrom, Shared};
use crate::args::os_error;
use crate::process;
use crate::sandbox;

/// The variable prefix of uji's own variables (`UJI_COMMAND_ID` marks a
/// process tree): never set by a request.
const OWN_PREFIX: &str = "UJI_";

pub fn start(procs: &Procs, request: ProcStart) -> Result<ProcStarted, String> {
    let cmd_line = describe(&request.command)?;
    let cwd = working_dir(procs, request.cwd.as_deref())?;
    let env = uji_sdk::child::env();
    let shell = matches!(request.command, ProcCommand::Shell(_));
    check_env(&request.env, &env, shell)?;
    if procs.count() >= super::MAX_PROCS {
        return Err(super::too_many());
    }
    let spec = sandbox_spec(procs)?;
    let prepared = sandbox::prepare(spec.as_ref())
        .map_err(|e| format!("could not set up the sandbox: {e}"))?;
    let (mut cmd, program) = command(&request.command)?;
    cmd.envs(&request.env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let wake = Wake::new().map_err(|e| format!("could not start {cmd_line}: {}", os_error(&e)))?;
    let (child, guard) =
        process::start_tree(cmd, &cwd, &env, &prepared).map_err(|e| spawn_error(&program, &e))?;
    // From here on, returning early kills the tree and reaps it.
    let mut tree = Tree::new(child, guard);
    let (Some(stdin), Some(stdout), Some(stderr)) = (
        tree.child.stdin.take(),
        tree.child.stdout.take(),
        tree.child.stderr.take(),
    ) else {
        return Err(format!(
            "could not start {cmd_line}: its pipes were not made"
        ));
    };
    set_nonblocking(stdin.as_raw_fd())
        .map_err(|e| format!("could not start {cmd_line}: {}", os_error(&e)))?;
    let deadline = request
        .timeout_ms
        .and_then(|ms| Instant::now().checked_add(Duration::from_millis(ms)));
    let proc = procs.insert(|id| {
        Arc::new(Proc {
            id,
            shared: Mutex::new(Shared {
                lines: Default::default(),
                buffered: 0,
                input: Default::default(),
                input_state: Input::Open,
                stop: false,
                exit: None,
                delivered: false,
            }),
            changed: Condvar::new(),
            wake,
        })
    })?;
    let id = proc.id;
    let pipes = Pipes {
        stdin: Some(stdin),
        stdout: Some(stdout),
        stderr: Some(stderr),
    };
    if let Err(e) = pump::start(Arc::clone(&proc), tree, pipes, deadline) {
        // The thread's closure, with the tree in it, is gone: the tree
        // was killed and reaped.
        procs.remove(id);
        return Err(format!(
            "could not start {cmd_line}: no thread to read it: {}",
            os_error(&e)
        ));
    }
    Ok(ProcStarted { id })
}

/// The command for messages (`` `make test` ``); an error when empty.
fn describe(command: &ProcCommand) -> Result<String, String> {
    match command {
        ProcCommand::Shell(line) if line.trim().is_empty() => Err(
            "`command` is empty: give a command line or a list [program, arguments…]".to_string(),
        ),
        ProcCommand::Argv(argv) if argv.first().is_none_or(|p| p.is_empty()) => Err(
            "`command` has no program: give a list [program, arguments…] whose first item \
             names the program"
                .to_string(),
        ),
        ProcCommand::Shell(line) => Ok(format!("`{}`", short(line))),
        ProcCommand::Argv(argv) => Ok(format!("`{}`", short(&argv.join(" ")))),
    }
    .and_then(|text| {
        let has_nul = match command {
            ProcCommand::Shell(line) => line.contains('\0'),
            ProcCommand::Argv(argv) => argv.iter().any(|a| a.contains('\0')),
        };
        if has_nul {
            Err(format!(
                "{text} contains a NUL byte, which no command can hold"
            ))
        } else {
            Ok(text)
        }
    })
}

fn short(text: &str) -> String {
    const MAX: usize = 200;
    let line = text.lines().next().unwrap_or_default();
    let cut = uji_sdk::protocol::spill::cut_at_char_boundary(line.as_bytes(), MAX);
    let mut short = String::from_utf8_lossy(cut).into_owned();
    if cut.len() < text.len() {
        short.push('…');
    }
    short
}

/// The command to spawn, and the program it starts (for errors).
fn command(command: &ProcCommand) -> Result<(Command, String), String> {
    match command {
        ProcCommand::Shell(line) => Ok((
            bash::command(line),
            bash::shell_name().to_string_lossy().into_owned(),
        )),
        ProcCommand::Argv(argv) => {
            let Some((program, args)) = argv.split_first() else {
                return Err("`command` has no program".to_string());
            };
            let mut cmd = Command::new(program);
            cmd.args(args);
            Ok((cmd, program.clone()))
        }
    }
}

/// The directory the process runs in: `cwd` (relative to the session's
/// directory), else the session's directory.
fn working_dir(procs: &Procs, cwd: Option<&str>) -> Result<PathBuf, String> {
    let session = procs
        .0
        .host
        .as_ref()
        .and_then(|host| host.config("cwd"))
        .and_then(|v| v.as_str().map(PathBuf::from))
        .or_else(|| std::env::current_dir().ok())
        .ok_or_else(|| {
            "cannot tell the session's directory: give `cwd` as an absolute path".to_string()
        })?;
    let dir = match cwd {
        Some(dir) if !dir.is_empty() => session.join(dir),
        _ => session,
    };
    if !dir.is_dir() {
        return Err(format!(
            "the working directory {} does not exist (or is not a directory): give an existing \
             `cwd`",
            dir.display()
        ));
    }
    Ok(dir)
}

/// The sandbox a command nobody approved runs in now.
fn sandbox_spec(procs: &Procs) -> Result<Option<CallSandbox>, String> {
    match &procs.0.sandbox {
        SandboxFrom::Given(spec) => Ok(spec.clone()),
        SandboxFrom::Uji(host) => match host.service(&CommandSandbox {}) {
            Ok(spec) => Ok(Some(spec)),
            Err(ServiceError::Unavailable { .. }) => Err(
                "this uji does not say which sandbox commands run in (it has no \
                 tool.command_sandbox service), so no process is started: use the tools plugin \
                 built with this uji"
                    .to_string(),
            ),
            Err(e) => Err(format!(
                "could not learn the sandbox commands run in, so no process is started: {e}"
            )),
        },
    }
}

/// Refuses `env` entries that would undo what children are kept from: a
/// variable `env.child` withholds (a provider key, one init.lua withholds),
/// uji's own `UJI_*` (they mark process trees), and for a command line the
/// variables bash would read a file from or parse differently with (which
/// `bash::command` removes). When uji could not say which variables are
/// keys (the fallback keeps only a few names), a variable uji's own
/// environment has and children are kept from is refused too.
pub fn check_env(
    env: &BTreeMap<String, String>,
    child: &ChildEnv,
    shell: bool,
) -> Result<(), String> {
    for (name, value) in env {
        if name.is_empty() || name.contains('=') || name.contains('\0') {
            return Err(format!(
                "`env` has the name {name:?}: a variable's name must be non-empty, without `=` \
                 or NUL"
            ));
        }
        if value.contains('\0') {
            return Err(format!(
                "`env.{name}` contains a NUL byte, which no variable can hold"
            ));
        }
        let os_name = std::ffi::OsStr::new(name);
        let withheld = child.withholds(os_name)
            && (child.only.is_none() || std::env::var_os(os_name).is_some());
        if withheld {
            return Err(format!(
                "`env` may not set {name}: uji keeps it from every child process (a provider \
                 key, or a variable init.lua withholds); to pass it on purpose, name it in \
                 child_env.pass in init.lua"
            ));
        }
        if name.starts_with(OWN_PREFIX) {
            return Err(format!(
                "`env` may not set {name}: variables starting with {OWN_PREFIX} are uji's own"
            ));
        }
        if shell && (bash::UNSET.contains(&name.as_str()) || name.starts_with("BASH_FUNC_")) {
            return Err(format!(
                "`env` may not set {name} for a command line: it would change how bash reads \
                 the line (run the program as a list [program, arguments…] to set it)"
            ));
        }
    }
    Ok(())
}

/// A failed spawn, naming the program and why.
fn spawn_error(program: &str, e: &io::Error) -> String {
    let why = match e.kind() {
        io::ErrorKind::NotFound if !program.contains('/') => {
            "no such program on PATH (check its name, or give its full path)".to_string()
        }
        io::ErrorKind::NotFound => "no such file (check the path)".to_string(),
        io::ErrorKind::PermissionDenied => {
            "permission denied (is it executable, and may the sandbox run it?)".to_string()
        }
        _ => os_error(e),
    };
    format!("could not start `{program}`: {why}")
}

fn set_nonblocking(fd: i32) -> io::Result<()> {
    // SAFETY: fcntl on a descriptor the caller owns; only its flags change.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn env_may_not_bring_back_what_children_are_kept_from() {
        let child = ChildEnv {
            withheld: vec!["ANTHROPIC_API_KEY".into()],
            only: None,
        };
        let refused = check_env(&env(&[("ANTHROPIC_API_KEY", "x")]), &child, false);
        assert!(
            refused
                .as_ref()
                .is_err_and(|e| e.contains("child_env.pass")),
            "{refused:?}"
        );
        assert!(check_env(&env(&[("UJI_COMMAND_ID", "1")]), &child, false).is_err());
        assert!(check_env(&env(&[("BASH_ENV", "/x")]), &child, true).is_err());
        assert!(check_env(&env(&[("BASH_ENV", "/x")]), &child, false).is_ok());
        assert!(check_env(&env(&[("A=B", "x")]), &child, false).is_err());
        assert!(check_env(&env(&[("", "x")]), &child, false).is_err());
        assert!(check_env(&env(&[("A", "x\0y")]), &child, false).is_err());
        assert!(check_env(&env(&[("GREETING", "hi"), ("PATH", "/bin")]), &child, true).is_ok());
    }

    #[test]
    fn without_uji_a_set_variable_children_are_kept_from_is_refused() {
        let fallback = ChildEnv::fallback();
        // PATH is inherited; a variable nobody has set is the caller's own.
        assert!(check_env(&env(&[("PATH", "/bin")]), &fallback, false).is_ok());
        assert!(check_env(&env(&[("PROC_TEST_NEVER_SET", "1")]), &fallback, false).is_ok());
        // Any variable of this process the fallback keeps from children.
        let kept_from = std::env::vars_os()
            .filter_map(|(name, _)| name.into_string().ok())
            .find(|name| fallback.withholds(std::ffi::OsStr::new(name)));
        if let Some(name) = kept_from {
            assert!(
                check_env(&env(&[(&name, "1")]), &fallback, false).is_err(),
                "{name}"
            );
        }
    }

    #[test]
    fn an_empty_command_is_an_error() {
        for command in [
            ProcCommand::Shell("  ".into()),
            ProcCommand::Argv(vec![]),
            ProcCommand::Argv(vec![String::new()]),
        ] {
            assert!(describe(&command).is_err(), "{command:?}");
        }
        assert_eq!(
            describe(&ProcCommand::Argv(vec!["ls".into(), "-l".into()])).as_deref(),
            Ok("`ls -l`")
        );
    }
}
