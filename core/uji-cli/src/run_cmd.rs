//! `uji run` (one prompt to completion, no screen), and the session
//! commands `uji list`, `uji delete` and `uji resume`.

use std::path::PathBuf;
use std::process::ExitCode;

use uji_core::server::launch::{EXIT_INTERRUPTED, Launch, LaunchError, run_frontend};
use uji_core::session::service::{Approvals, SessionOptions, Sessions, Start};
use uji_core::session::store::{SessionSummary, Store};
use uji_core::{BootOptions, Load};
use uji_host::paths::{Dirs, ProcessEnv};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use crate::out::say;

pub struct RunOptions {
    pub prompt: Vec<String>,
    pub json: bool,
    pub model: Option<String>,
    pub tools: Option<String>,
    pub append_prompt: Option<String>,
    pub effort: Option<String>,
    pub title: Option<String>,
    pub yes: bool,
    pub sandbox: Option<String>,
    /// `--network`: all, none or hosts.
    pub network: Option<String>,
    pub resume: Option<String>,
    pub parent: Option<String>,
    pub frontend: Option<String>,
    /// `--image FILE`, each attached to the prompt.
    pub images: Vec<PathBuf>,
    /// `--max-turns`, `--max-tokens`, `--max-tool-calls`, `--max-cost`,
    /// `--max-wall`.
    pub budget: BudgetFlags,
    /// `--mode`: the approval mode (`ask`, `accept_edits`, `plan`).
    pub mode: Option<String>,
}

/// The budget limits `uji run` was given; each wins over init.lua's
/// `uji.budget` for its own limit.
#[derive(Debug, Default, Clone, Copy)]
pub struct BudgetFlags {
    pub turns: Option<u64>,
    pub tokens: Option<u64>,
    pub tool_calls: Option<u64>,
    /// Dollars.
    pub cost: Option<f64>,
    /// Seconds.
    pub wall: Option<u64>,
}

impl BudgetFlags {
    /// init.lua's budget (`budget` config value) with these limits over it.
    fn over(self, configured: Option<serde_json::Value>) -> Option<serde_json::Value> {
        let flags = [
            ("turns", self.turns.map(serde_json::Value::from)),
            ("tokens", self.tokens.map(serde_json::Value::from)),
            ("tool_calls", self.tool_calls.map(serde_json::Value::from)),
            ("cost", self.cost.map(serde_json::Value::from)),
            ("wall", self.wall.map(serde_json::Value::from)),
        ];
        if flags.iter().all(|(_, value)| value.is_none()) {
            return None;
        }
        let mut budget = match configured {
            Some(serde_json::Value::Object(map)) => map,
            _ => serde_json::Map::new(),
        };
        for (name, value) in flags {
            if let Some(value) = value {
                budget.insert(name.to_string(), value);
            }
        }
        Some(serde_json::Value::Object(budget))
    }
}

/// `uji run`'s exit status when a budget stopped the turn.
const EXIT_BUDGET: u8 = 3;

/// The files of `--image`, read as images for the prompt; core fits them
/// (turns them upright, scales them) when the message arrives.
fn read_images(paths: &[PathBuf]) -> Result<Vec<uji_protocol::Image>, String> {
    use base64::Engine as _;
    paths
        .iter()
        .map(|path| {
            let bytes =
                std::fs::read(path).map_err(|e| format!("--image {}: {e}", path.display()))?;
            let fitted = uji_core::images::fit(&bytes).map_err(|e| {
                format!(
                    "--image {}: {e}; attach a PNG, JPEG, GIF or WebP file",
                    path.display()
                )
            })?;
            Ok(uji_protocol::Image {
                media_type: fitted.media_type.to_string(),
                data: base64::engine::general_purpose::STANDARD.encode(&fitted.bytes),
                name: path.file_name().map(|n| n.to_string_lossy().into_owned()),
            })
        })
        .collect()
}

pub(crate) fn dirs(config_dir: Option<PathBuf>, data_dir: Option<PathBuf>) -> Result<Dirs, String> {
    Dirs::resolve(config_dir, data_dir, &ProcessEnv).map_err(|e| e.to_string())
}

pub(crate) fn cwd() -> Result<PathBuf, String> {
    let cwd =
        std::env::current_dir().map_err(|e| format!("cannot read the working directory: {e}"))?;
    Ok(cwd.canonicalize().unwrap_or(cwd))
}

pub(crate) fn fail(message: impl std::fmt::Display) -> ExitCode {
    say!("uji: error: {message}");
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
        say!(
            "uji: error: no prompt: pass what uji should do, e.g. uji run \"fix the failing test\""
        );
        return ExitCode::from(2);
    }
    let (dirs, cwd) = match (dirs(config_dir, data_dir), cwd()) {
        (Ok(dirs), Ok(cwd)) => (dirs, cwd),
        (Err(e), _) | (_, Err(e)) => return fail(e),
    };
    let images = match read_images(&options.images) {
        Ok(images) => images,
        Err(e) => {
            say!("uji: error: {e}");
            return ExitCode::from(2);
        }
    };
    let builtins = crate::headless::builtins();
    let booted = uji_core::boot(
        BootOptions::new(dirs, &cwd)
            .load(Load::Session)
            .builtins(&builtins),
    );
    booted.registry.set_config(
        crate::headless::JSON_KEY,
        serde_json::Value::Bool(options.json),
    );
    report_failed_plugins(&booted);
    let budget_key = uji_core::turn::budget::CONFIG_KEY;
    if let Some(budget) = options.budget.over(booted.registry.config(budget_key)) {
        booted.registry.set_config(budget_key, budget);
    }
    crate::set_sandbox(&booted.gate, options.sandbox.as_deref());
    if let Some(network) = options.network.as_deref() {
        match crate::parse_network(network) {
            Ok(network) => {
                booted.gate.sandbox(uji_protocol::services::ToolSandbox {
                    network: Some(network),
                    ..Default::default()
                });
            }
            Err(e) => {
                say!("uji: error: {e}");
                return ExitCode::from(2);
            }
        }
    }
    if let Some(mode) = options.mode.as_deref() {
        let mode = serde_json::from_value(serde_json::Value::from(mode))
            .map_err(|e| e.to_string())
            .and_then(|mode| booted.gate.set_mode(mode));
        if let Err(e) = mode {
            return fail(format!("--mode: {e}"));
        }
    }
    booted.registry.set_config(
        crate::headless::CHILD_KEY,
        serde_json::Value::Bool(options.parent.is_some()),
    );
    let frontend = options.frontend.unwrap_or_else(|| "headless".to_string());
    let approvals = if frontend == "headless" || options.yes {
        Approvals::Automatic { yes: options.yes }
    } else {
        Approvals::Frontend
    };
    let session_options = SessionOptions {
        model: options.model,
        effort: options.effort,
        tools: options.tools.map(|list| {
            list.split(',')
                .map(|t| t.trim().to_string())
                .filter(|t| !t.is_empty())
                .collect()
        }),
        append_prompt: options.append_prompt,
        approvals,
        open_without_model: false,
    };
    let start = match options.resume {
        Some(id) => Start::Resume(id),
        None => Start::New {
            title: Some(options.title.unwrap_or_else(|| {
                let first = prompt.lines().next().unwrap_or_default();
                first.chars().take(80).collect()
            })),
            parent: options.parent,
        },
    };
    let launch = Launch {
        frontend,
        start,
        first_message: Some(prompt),
        first_images: images,
        interrupt_on_sigint: Some(say_quitting),
    };
    let outcome = Sessions::new(&booted, session_options)
        .map_err(LaunchError::from)
        .and_then(|sessions| run_frontend(&sessions, launch));
    if crate::out::stdout_closed() {
        // The reader has gone; the turn was stopped for want of one.
        return ExitCode::from(crate::out::EXIT_CLOSED_PIPE);
    }
    match outcome {
        Ok(Some(outcome)) if outcome.interrupted => {
            say!("uji: interrupted");
            ExitCode::from(EXIT_INTERRUPTED)
        }
        Ok(Some(outcome)) => match (outcome.error, outcome.budget) {
            (Some(error), Some(_)) => {
                say!("uji: {error}");
                ExitCode::from(EXIT_BUDGET)
            }
            (Some(error), None) => fail(error),
            (None, _) => ExitCode::SUCCESS,
        },
        Ok(None) => fail("the session ended before the turn finished"),
        Err(e) => {
            crate::print_notices(&booted.registry);
            fail(e)
        }
    }
}

fn say_quitting() {
    say!("uji: interrupted again; quitting now");
}

fn report_failed_plugins(booted: &uji_core::Booted) {
    for failure in &booted.plugins.failed {
        say!(
            "uji: plugin {} failed to load: {}",
            failure.path.display(),
            failure.reason
        );
    }
}

/// `uji` and `uji resume [--id ID]`: the interactive frontend on a new or
/// saved session. The frontend is `--frontend`, else the config's
/// `frontend`, else `tui`.
pub fn interactive(
    config_dir: Option<PathBuf>,
    data_dir: Option<PathBuf>,
    start: Start,
    frontend: Option<String>,
) -> ExitCode {
    let (dirs, cwd) = match (dirs(config_dir, data_dir), cwd()) {
        (Ok(dirs), Ok(cwd)) => (dirs, cwd),
        (Err(e), _) | (_, Err(e)) => return fail(e),
    };
    let builtins = crate::headless::builtins();
    let booted = uji_core::boot(
        BootOptions::new(dirs, &cwd)
            .load(Load::Session)
            .builtins(&builtins),
    );
    let name = frontend
        .or_else(|| {
            booted
                .registry
                .config(FRONTEND_KEY)
                .and_then(|v| v.as_str().map(str::to_string))
        })
        .unwrap_or_else(|| "tui".to_string());
    if name == "headless" {
        return fail(
            "the headless frontend is not interactive: run a prompt without a screen with: uji run \"your prompt\"",
        );
    }
    // Without a key the session still opens: it says how to set one up.
    let options = SessionOptions {
        open_without_model: true,
        ..SessionOptions::default()
    };
    let sessions = match Sessions::new(&booted, options) {
        Ok(sessions) => sessions,
        Err(e) => return fail(e),
    };
    let launch = Launch {
        frontend: name,
        start,
        first_message: None,
        first_images: Vec::new(),
        interrupt_on_sigint: None,
    };
    match run_frontend(&sessions, launch) {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            crate::print_notices(&booted.registry);
            fail(e)
        }
    }
}

/// Config key naming the interactive frontend (`uji.config.set`).
pub const FRONTEND_KEY: &str = "frontend";

fn when(ms: u64) -> String {
    let now = uji_core::session::store::now_ms();
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
    // These commands load no plugins, so they clean up as a boot would.
    uji_core::session::spills::clean_old(&dirs.data, uji_core::session::spills::RETENTION);
    let cwd = cwd.to_string_lossy().into_owned();
    let sessions: Vec<SessionSummary> = Store::new(&dirs.data)
        .list()
        .into_iter()
        .filter(|s| s.parent.is_none() && (all || s.cwd == cwd))
        .collect();
    if sessions.is_empty() {
        say!(
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
        .map(|s| UnicodeWidthStr::width(clean_title(&s.title).as_str()))
        .max()
        .unwrap_or(5)
        .clamp(8, 60);
    let mut table = format!(
        "{}  {:10}  ID{}\n",
        fit_column("TITLE", width),
        "UPDATED",
        if all {
            "                                    DIRECTORY"
        } else {
            ""
        }
    );
    for s in sessions {
        let title = clean_title(&s.title);
        let title = if title.is_empty() { "untitled" } else { &title };
        let row = format!(
            "{}  {:10}  {}",
            fit_column(title, width),
            when(s.updated),
            s.id
        );
        table.push_str(&row);
        if all {
            table.push_str(&format!("  {}", s.cwd));
        }
        table.push('\n');
    }
    match crate::out::print(&table) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(e),
    }
}

/// A title on one line, without control characters.
fn clean_title(title: &str) -> String {
    title
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect::<String>()
        .trim()
        .to_string()
}

/// `text` in exactly `width` terminal columns: padded with spaces, or cut
/// with `…` (wide characters count two columns, as the terminal draws
/// them).
fn fit_column(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut used = 0;
    let fits = UnicodeWidthStr::width(text) <= width;
    let room = if fits { width } else { width.saturating_sub(1) };
    for c in text.chars() {
        let w = UnicodeWidthChar::width(c).unwrap_or(0);
        if used + w > room {
            break;
        }
        out.push(c);
        used += w;
    }
    if !fits {
        out.push('…');
        used += 1;
    }
    out.push_str(&" ".repeat(width.saturating_sub(used)));
    out
}

/// `uji delete ID`.
pub fn delete(config_dir: Option<PathBuf>, data_dir: Option<PathBuf>, id: &str) -> ExitCode {
    let dirs = match dirs(config_dir, data_dir) {
        Ok(dirs) => dirs,
        Err(e) => return fail(e),
    };
    uji_core::session::spills::clean_old(&dirs.data, uji_core::session::spills::RETENTION);
    match Store::new(&dirs.data).delete(id) {
        Ok(true) => {
            say!("uji: deleted session {id}");
            ExitCode::SUCCESS
        }
        Ok(false) => fail(format!(
            "no session with id {id}; `uji list` shows the saved sessions"
        )),
        Err(e) => fail(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_measured_as_the_terminal_draws_them() {
        assert_eq!(fit_column("abc", 5), "abc  ");
        // Two columns per character: 4 columns, padded to 6.
        assert_eq!(fit_column("修正", 6), "修正  ");
        assert_eq!(
            UnicodeWidthStr::width(fit_column("修正バグを直す", 7).as_str()),
            7
        );
        assert_eq!(fit_column("修正バグを直す", 7), "修正バ…");
        assert_eq!(fit_column("toolong", 4), "too…");
        assert_eq!(clean_title("a\nb\tc "), "a b c");
    }
}
