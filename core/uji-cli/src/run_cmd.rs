//! `uji run` (one prompt to completion, no screen), and the session
//! commands `uji list`, `uji delete` and `uji resume`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use uji_core::agent::{Agent, TurnSettings};
use uji_core::gate::HeadlessApprover;
use uji_core::store::{SessionSummary, Store};
use uji_host::SessionPort;
use uji_host::paths::{Dirs, ProcessEnv};
use uji_protocol::session::Op;

/// Exit status of a run the user interrupted (128 + SIGINT).
pub const EXIT_INTERRUPTED: u8 = 130;

pub struct RunOptions {
    pub prompt: Vec<String>,
    pub json: bool,
    pub model: Option<String>,
    pub tools: Option<String>,
    pub append_prompt: Option<String>,
    pub effort: Option<String>,
    pub title: Option<String>,
    pub yes: bool,
    pub resume: Option<String>,
    pub frontend: Option<String>,
}

fn dirs(config_dir: Option<PathBuf>, data_dir: Option<PathBuf>) -> Result<Dirs, String> {
    Dirs::resolve(config_dir, data_dir, &ProcessEnv).map_err(|e| e.to_string())
}

fn cwd() -> Result<PathBuf, String> {
    let cwd =
        std::env::current_dir().map_err(|e| format!("cannot read the working directory: {e}"))?;
    Ok(cwd.canonicalize().unwrap_or(cwd))
}

/// Notices kept while plugins loaded (an init.lua error, say) explain many
/// failures; show them before giving up.
fn flush_notices(registry: &uji_host::Registry) {
    for notice in registry.take_notices() {
        eprintln!("uji: {}: {}", notice.source, notice.text);
    }
}

fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("uji: error: {message}");
    ExitCode::FAILURE
}

/// Runs one prompt to completion.
pub fn run(
    config_dir: Option<PathBuf>,
    data_dir: Option<PathBuf>,
    options: RunOptions,
) -> ExitCode {
    let prompt = options.prompt.join(" ");
    if prompt.trim().is_empty() {
        eprintln!(
            "uji: error: no prompt: pass what uji should do, e.g. uji run \"fix the failing test\""
        );
        return ExitCode::from(2);
    }
    let (dirs, cwd) = match (dirs(config_dir, data_dir), cwd()) {
        (Ok(dirs), Ok(cwd)) => (dirs, cwd),
        (Err(e), _) | (_, Err(e)) => return fail(e),
    };
    let store = Store::new(&dirs.data);
    let booted = uji_core::boot_process(dirs, &cwd, &crate::headless::builtins());
    booted.registry.set_config(
        crate::headless::JSON_KEY,
        serde_json::Value::Bool(options.json),
    );
    for failure in &booted.plugins.failed {
        eprintln!(
            "uji: plugin {} failed to load: {}",
            failure.path.display(),
            failure.reason
        );
    }
    let model = match booted.providers.resolve(options.model.as_deref()) {
        Ok(model) => model,
        Err(e) => {
            flush_notices(&booted.registry);
            return fail(e);
        }
    };
    let model_idle_timeout = model.provider.idle_timeout;
    let frontend_name = options.frontend.as_deref().unwrap_or("headless");
    let Some(frontend) = booted.registry.frontend(frontend_name) else {
        let names: Vec<String> = booted
            .registry
            .frontends()
            .iter()
            .map(|f| f.name().to_string())
            .collect();
        flush_notices(&booted.registry);
        return fail(format!(
            "no frontend named {frontend_name:?} is loaded (loaded: {})",
            names.join(", ")
        ));
    };
    let tools = options.tools.map(|list| {
        list.split(',')
            .map(|t| t.trim().to_string())
            .filter(|t| !t.is_empty())
            .collect::<Vec<_>>()
    });
    if let Some(only) = &tools {
        for name in only {
            if booted.registry.tool(name).is_none() {
                flush_notices(&booted.registry);
                return fail(format!(
                    "--tools names {name:?}, which no loaded plugin provides; `uji tool list` shows the tools"
                ));
            }
        }
    }

    let (session, resumed) = match &options.resume {
        Some(id) => match store.open(id) {
            Ok(session) => (session, true),
            Err(e) => {
                flush_notices(&booted.registry);
                return fail(e);
            }
        },
        None => {
            let title = options.title.clone().unwrap_or_else(|| {
                let first = prompt.lines().next().unwrap_or_default();
                first.chars().take(80).collect()
            });
            match store.create(&cwd, &title) {
                Ok(session) => (session, false),
                Err(e) => return fail(format!("cannot save the session: {e}")),
            }
        }
    };
    // Usage is tracked per session: a resumed one starts from what its
    // saved answers used.
    let usage = uji_core::agent::saved_usage(&session.messages);
    let agent = Agent {
        gate: booted.gate.clone(),
        registry: booted.registry.clone(),
        session,
        settings: TurnSettings {
            model,
            tools,
            append_prompt: options.append_prompt,
            effort: options.effort,
            idle_timeout: model_idle_timeout,
            cwd: cwd.clone(),
            secrets: booted.providers.secret_values(),
        },
        approver: Arc::new(HeadlessApprover { yes: options.yes }),
        events: Arc::new(|_| {}),
        usage,
        steering: Default::default(),
    };

    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => return fail(format!("cannot start the async runtime: {e}")),
    };
    let (port, handle) = {
        let _guard = runtime.enter();
        uji_core::server::serve(agent, None, resumed)
    };
    if let Err(e) = port.submit_op(Op::UserMessage {
        text: prompt,
        images: Vec::new(),
    }) {
        return fail(e);
    }
    let signal_port = Arc::clone(&port);
    runtime.spawn(async move {
        let mut count = 0;
        while tokio::signal::ctrl_c().await.is_ok() {
            count += 1;
            if count > 1 {
                eprintln!("uji: interrupted again; quitting now");
                std::process::exit(i32::from(EXIT_INTERRUPTED));
            }
            let _ = signal_port.submit_op(Op::Interrupt);
        }
    });

    let port_for_frontend: Arc<dyn SessionPort> = port.clone();
    let ran = frontend.run(port_for_frontend);
    // A frontend that returns without saying so still ends the session.
    let _ = port.submit_op(Op::Shutdown);
    if let Err(e) = ran {
        return fail(e);
    }
    let outcome = runtime.block_on(handle).ok().flatten();
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    match outcome {
        Some(outcome) if outcome.interrupted => {
            eprintln!("uji: interrupted");
            ExitCode::from(EXIT_INTERRUPTED)
        }
        Some(outcome) => match outcome.error {
            Some(error) => fail(error),
            None => ExitCode::SUCCESS,
        },
        None => fail("the session ended before the turn finished"),
    }
}

fn when(ms: u64) -> String {
    let now = uji_core::store::now_ms();
    let ago = now.saturating_sub(ms) / 1000;
    match ago {
        0..=59 => format!("{ago}s ago"),
        60..=3599 => format!("{}m ago", ago / 60),
        3600..=86_399 => format!("{}h ago", ago / 3600),
        _ => format!("{}d ago", ago / 86_400),
    }
}

/// `uji list`: sessions of this directory (or all), newest first.
pub fn list(config_dir: Option<PathBuf>, data_dir: Option<PathBuf>, all: bool) -> ExitCode {
    let (dirs, cwd) = match (dirs(config_dir, data_dir), cwd()) {
        (Ok(dirs), Ok(cwd)) => (dirs, cwd),
        (Err(e), _) | (_, Err(e)) => return fail(e),
    };
    let cwd = cwd.to_string_lossy().into_owned();
    let sessions: Vec<SessionSummary> = Store::new(&dirs.data)
        .list()
        .into_iter()
        .filter(|s| all || s.cwd == cwd)
        .collect();
    if sessions.is_empty() {
        eprintln!(
            "uji: no saved sessions{}",
            if all {
                ""
            } else {
                " in this directory (uji list --all shows every directory)"
            }
        );
        return ExitCode::SUCCESS;
    }
    let width = sessions
        .iter()
        .map(|s| s.title.chars().count())
        .max()
        .unwrap_or(5)
        .clamp(5, 60);
    println!(
        "{:width$}  {:10}  ID{}",
        "TITLE",
        "UPDATED",
        if all {
            "                                    DIRECTORY"
        } else {
            ""
        }
    );
    for s in sessions {
        let title: String = s.title.chars().take(width).collect();
        let title = if title.is_empty() {
            "untitled".to_string()
        } else {
            title
        };
        if all {
            println!(
                "{title:width$}  {:10}  {}  {}",
                when(s.updated),
                s.id,
                s.cwd
            );
        } else {
            println!("{title:width$}  {:10}  {}", when(s.updated), s.id);
        }
    }
    ExitCode::SUCCESS
}

/// `uji delete ID`.
pub fn delete(config_dir: Option<PathBuf>, data_dir: Option<PathBuf>, id: &str) -> ExitCode {
    let dirs = match dirs(config_dir, data_dir) {
        Ok(dirs) => dirs,
        Err(e) => return fail(e),
    };
    match Store::new(&dirs.data).delete(id) {
        Ok(true) => {
            eprintln!("uji: deleted session {id}");
            ExitCode::SUCCESS
        }
        Ok(false) => fail(format!(
            "no session with id {id}; `uji list` shows the saved sessions"
        )),
        Err(e) => fail(e),
    }
}

/// `uji resume [--id ID]`: the interactive frontend on a saved session.
pub fn resume(
    config_dir: Option<PathBuf>,
    data_dir: Option<PathBuf>,
    id: Option<String>,
    frontend: Option<String>,
) -> ExitCode {
    let (dirs, cwd) = match (dirs(config_dir, data_dir), cwd()) {
        (Ok(dirs), Ok(cwd)) => (dirs, cwd),
        (Err(e), _) | (_, Err(e)) => return fail(e),
    };
    let store = Store::new(&dirs.data);
    let id = match id {
        Some(id) => match store.open(&id) {
            Ok(session) => session.id().to_string(),
            Err(e) => return fail(e),
        },
        None => match store.latest_in(&cwd) {
            Some(latest) => latest.id,
            None => {
                return fail(
                    "no saved session in this directory; `uji list --all` shows sessions elsewhere",
                );
            }
        },
    };
    let name = frontend.unwrap_or_else(|| "tui".to_string());
    let booted = uji_core::boot_process(dirs, &cwd, &crate::headless::builtins());
    if booted.registry.frontend(&name).is_none() || name == "headless" {
        return fail(format!(
            "no interactive frontend named {name:?} is installed yet; continue this session without a screen with: uji run --resume {id} \"your next prompt\""
        ));
    }
    fail(format!(
        "the {name} frontend cannot resume sessions yet; use: uji run --resume {id} \"your next prompt\""
    ))
}
