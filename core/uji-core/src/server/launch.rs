//! Running a frontend on a session: the one way every command that opens a
//! session does it (`uji run`, `uji`, `uji resume`, tests). The frontend
//! runs on the calling thread; the session is served on a runtime of its
//! own.

use std::sync::Arc;
use std::time::Duration;

use uji_host::{Registry, SessionPort};
use uji_protocol::frontend::{Delivery, Op};
use uji_protocol::jobs::WAKE_DEFAULT_KEY;

use crate::server::{jobs, serve};
use crate::session::service::{SessionError, Sessions, Start};
use crate::turn::agent::TurnOutcome;

/// The frontend of `uji run`, which has no screen to give back.
const HEADLESS: &str = "headless";
/// The terminal screen, where a finished job wakes an idle session.
const TUI: &str = "tui";

/// Exit status of a run the user interrupted (128 + SIGINT).
pub const EXIT_INTERRUPTED: u8 = 130;

/// What to run.
pub struct Launch {
    /// The frontend plugin's registered name.
    pub frontend: String,
    pub start: Start,
    /// A message sent before the frontend starts (`uji run`'s prompt).
    pub first_message: Option<String>,
    /// Images that message carries (`uji run --image`).
    pub first_images: Vec<uji_protocol::Image>,
    /// SIGINT interrupts the turn; a second one calls this (the CLI says
    /// so) and exits at once. Headless runs only: an interactive frontend
    /// reads Ctrl+C as a key.
    pub interrupt_on_sigint: Option<fn()>,
}

/// Why a frontend could not run a session.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error(
        "no frontend named {name:?} is installed (loaded frontends: {loaded}); put the plugin that provides it in <config>/plugins or $UJI_PLUGIN_PATH, or choose one with --frontend NAME (`uji plugins` shows any that failed to load); `uji run \"your prompt\"` works without a screen"
    )]
    NoSuchFrontend { name: String, loaded: String },
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error("cannot start the async runtime: {0}")]
    Runtime(std::io::Error),
    #[error("the session ended before it started: {0}")]
    Closed(String),
    #[error("the {frontend} frontend failed: {message}")]
    Frontend { frontend: String, message: String },
}

/// Runs `launch` to its end; the outcome of the last turn, if any ran.
pub fn run_frontend(
    sessions: &Sessions,
    launch: Launch,
) -> Result<Option<TurnOutcome>, LaunchError> {
    let Some(frontend) = sessions.registry.frontend(&launch.frontend) else {
        let loaded = sessions.registry.frontend_names();
        return Err(LaunchError::NoSuchFrontend {
            name: launch.frontend,
            loaded: if loaded.is_empty() {
                "none".to_string()
            } else {
                loaded.join(", ")
            },
        });
    };
    // Plugins may read which frontend runs (the MCP plugin waits for its
    // servers before a headless run's first request).
    sessions.registry.set_config(
        crate::boot::FRONTEND_KEY,
        serde_json::Value::from(launch.frontend.clone()),
    );
    let (agent, resumed) = sessions.start(&launch.start)?;
    // A finished job's report starts a turn in an idle TUI session; `uji
    // run` ends with its turn instead, and an editor (ACP) or another
    // frontend asks for turns itself unless init.lua turns `wake` on.
    let wakes = launch.frontend == TUI;
    sessions
        .registry
        .set_config(WAKE_DEFAULT_KEY, serde_json::Value::Bool(wakes));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(LaunchError::Runtime)?;
    let (port, handle) = {
        let _guard = runtime.enter();
        serve(sessions.clone(), agent, resumed)
    };
    if let Some(text) = launch.first_message {
        let op = Op::UserMessage {
            text,
            images: launch.first_images,
            delivery: Delivery::Queue,
        };
        port.submit_op(op).map_err(LaunchError::Closed)?;
    }
    if let Some(on_quit) = launch.interrupt_on_sigint {
        let registry = sessions.registry.clone();
        runtime.spawn(interrupt_on_sigint(
            Arc::clone(&port),
            registry.clone(),
            on_quit,
        ));
        // A screen (`uji run --frontend tui`) handles these itself, and
        // must give the terminal back before uji exits.
        if launch.frontend == HEADLESS {
            runtime.spawn(stop_on_termination(registry));
        }
    }
    let for_frontend: Arc<dyn SessionPort> = port.clone();
    let ran = frontend.run(for_frontend);
    port.stop_reading();
    // A frontend that returns without saying so still ends the session.
    let _ = port.submit_op(Op::Shutdown);
    let outcome = runtime.block_on(handle).ok().flatten();
    // Jobs never outlive the session that started them.
    jobs::stop_all(&sessions.registry);
    runtime.shutdown_timeout(Duration::from_millis(100));
    ran.map_err(|e| LaunchError::Frontend {
        frontend: launch.frontend,
        message: e.to_string(),
    })?;
    Ok(outcome)
}

async fn interrupt_on_sigint(
    port: Arc<crate::server::ServerPort>,
    registry: Registry,
    on_quit: fn(),
) {
    let mut count = 0;
    while tokio::signal::ctrl_c().await.is_ok() {
        count += 1;
        if count > 1 {
            on_quit();
            jobs::stop_all(&registry);
            std::process::exit(i32::from(EXIT_INTERRUPTED));
        }
        let _ = port.submit_op(Op::Interrupt);
    }
}

/// SIGTERM or SIGHUP (the terminal closed) ends a headless run at once,
/// stopping every background job's process tree first. (An interactive
/// frontend handles these signals itself and returns, and the launcher
/// stops the jobs then.)
async fn stop_on_termination(registry: Registry) {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut hup)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::hangup()),
    ) else {
        tracing::warn!("cannot watch SIGTERM and SIGHUP: background jobs may outlive a killed uji");
        return;
    };
    let signal = tokio::select! {
        _ = term.recv() => libc::SIGTERM,
        _ = hup.recv() => libc::SIGHUP,
    };
    jobs::stop_all(&registry);
    std::process::exit(128 + signal);
}
