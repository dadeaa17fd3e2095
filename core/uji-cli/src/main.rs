//! `uji`: a coding agent for the terminal.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::out::say;

mod checkpoint_cmd;
mod doctor_cmd;
mod headless;
mod login_cmd;
mod logs;
mod mcp_cmd;
mod models_cmd;
mod out;
mod packaging_cmd;
mod plugins_cmd;
mod policy_cmd;
mod run_cmd;
mod secrecy;
mod tool_cmd;

#[derive(Parser, Debug)]
#[command(
    name = "uji",
    version = uji_host::version_line(),
    about = "A coding agent for the terminal, built from plugins and shaped with Lua.",
    after_help = "Configuration lives in $UJI_CONFIG_DIR, $XDG_CONFIG_HOME/uji or ~/.config/uji; sessions in $UJI_DATA_DIR, $XDG_DATA_HOME/uji or ~/.local/share/uji."
)]
struct Cli {
    /// Configuration directory (default: $UJI_CONFIG_DIR, $XDG_CONFIG_HOME/uji, ~/.config/uji).
    #[arg(long, global = true, value_name = "DIR")]
    config_dir: Option<PathBuf>,
    /// Data directory for sessions (default: $UJI_DATA_DIR, $XDG_DATA_HOME/uji, ~/.local/share/uji).
    #[arg(long, global = true, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// The frontend to use (a loaded plugin's, e.g. tui; `uji run` uses headless).
    #[arg(long, global = true, value_name = "NAME")]
    frontend: Option<String>,
    /// Also write log lines to stderr (commands without a screen only; the log file is <data>/logs/uji.log).
    #[arg(long, global = true)]
    log_stderr: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

/// `--max-wall`: seconds, or a time like `90s`, `30m`, `1h30m` (as
/// `uji.budget{ wall = … }` takes it), above 0.
fn wall_seconds(text: &str) -> Result<u64, String> {
    let fail =
        || format!("{text:?} is not a time above 0: give seconds or a time like 90s, 30m, 1h30m");
    if let Ok(seconds) = text.parse::<u64>() {
        return (seconds > 0).then_some(seconds).ok_or_else(fail);
    }
    let mut total: u64 = 0;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).ok_or_else(fail)?;
        let number: u64 = rest[..digits].parse().map_err(|_| fail())?;
        let unit = match rest[digits..].chars().next() {
            Some('s') => 1,
            Some('m') => 60,
            Some('h') => 3600,
            _ => return Err(fail()),
        };
        total = number
            .checked_mul(unit)
            .and_then(|n| total.checked_add(n))
            .ok_or_else(fail)?;
        rest = &rest[digits + 1..];
    }
    (total > 0).then_some(total).ok_or_else(fail)
}

/// `--max-cost`: dollars above 0.
fn positive_dollars(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(dollars) if dollars.is_finite() && dollars > 0.0 => Ok(dollars),
        _ => Err(format!(
            "{text:?} is not an amount of dollars above 0, e.g. 0.50"
        )),
    }
}

// Parsed once as uji starts: the size of the largest variant costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
enum Command {
    /// Run one prompt to completion without a screen; print the answer (or JSON events with --json).
    Run {
        /// What uji should do.
        #[arg(required = true)]
        prompt: Vec<String>,
        /// One JSON object per line on stdout (schema in docs/headless.md).
        #[arg(long)]
        json: bool,
        /// PROVIDER/MODEL, e.g. anthropic/claude-sonnet-5-5 or ollama/qwen3.
        #[arg(long, value_name = "PROVIDER/MODEL")]
        model: Option<String>,
        /// Offer the model only these tools (comma-separated).
        #[arg(long, value_name = "A,B")]
        tools: Option<String>,
        /// Text added to the system prompt after a blank line.
        #[arg(long, value_name = "TEXT")]
        append_prompt: Option<String>,
        /// Reasoning effort for models that think.
        #[arg(long, value_name = "LEVEL", value_parser = ["off", "minimal", "low", "medium", "high", "xhigh", "max"])]
        effort: Option<String>,
        /// Session title (default: the prompt's first line).
        #[arg(long, value_name = "TEXT")]
        title: Option<String>,
        /// Run calls the policy would ask about; deny rules still deny.
        #[arg(long)]
        yes: bool,
        /// Run commands in this OS sandbox (Landlock): off, read-only or workspace-write.
        #[arg(long, value_name = "MODE", value_parser = ["off", "read-only", "workspace-write"])]
        sandbox: Option<String>,
        /// What sandboxed commands may reach: all, none, or only these
        /// hosts through uji's proxy (crates.io,*.npmjs.org); over
        /// init.lua's uji.tool.sandbox network.
        #[arg(long, value_name = "all|none|HOSTS")]
        network: Option<String>,
        /// Continue a saved session.
        #[arg(long, value_name = "ID")]
        resume: Option<String>,
        /// The session this run works for (a subagent's): saved with it,
        /// left out of `uji list` and the sessions picker.
        #[arg(long, value_name = "ID")]
        parent: Option<String>,
        /// Attach an image (PNG, JPEG, GIF, WebP) to the prompt; repeatable.
        #[arg(long, value_name = "FILE")]
        image: Vec<PathBuf>,
        /// Stop after this many model requests (docs/budgets.md); exit code 3.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        max_turns: Option<u64>,
        /// Stop once the model read and wrote this many tokens; exit code 3.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        max_tokens: Option<u64>,
        /// Stop after this many tool calls; exit code 3.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        max_tool_calls: Option<u64>,
        /// Stop once the requests cost this many US dollars at the model's price; exit code 3.
        #[arg(long, value_name = "DOLLARS", value_parser = positive_dollars)]
        max_cost: Option<f64>,
        /// Stop once the session has been open this long (seconds, or 90s, 30m, 1h30m); exit code 3.
        #[arg(long, value_name = "TIME", value_parser = wall_seconds)]
        max_wall: Option<u64>,
        /// Approval mode: ask (as the policy says), accept_edits (edits in
        /// the workspace run unasked) or plan (nothing changes files).
        #[arg(long, value_name = "MODE", value_parser = ["ask", "accept_edits", "plan"])]
        mode: Option<String>,
    },
    /// Continue a saved session in the interactive frontend (latest in this directory by default).
    Resume {
        #[arg(long, value_name = "ID")]
        id: Option<String>,
    },
    /// Serve the Agent Client Protocol on stdin/stdout for an editor (Zed, Neovim): docs/editors.md.
    Acp,
    /// List saved sessions of this directory.
    List {
        /// Sessions of every directory.
        #[arg(long)]
        all: bool,
    },
    /// Delete a saved session (and its checkpoints).
    Delete {
        /// The session id (`uji list` shows them).
        id: String,
    },
    /// List a session's checkpoints: turn, date and time, files changed, size (docs/checkpoints.md).
    Checkpoints {
        /// The session (default: the latest in this directory).
        #[arg(long)]
        id: Option<String>,
    },
    /// Put back the files the last turn changed (by any tool, commands included).
    Undo {
        /// The session (default: the latest in this directory).
        #[arg(long)]
        id: Option<String>,
        /// Undo this turn's changes instead of the last turn's.
        #[arg(long, conflicts_with = "redo")]
        turn: Option<u64>,
        /// Take back the last undo.
        #[arg(long)]
        redo: bool,
        /// Show what would change, change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Also overwrite files changed since the turn (by you or your editor).
        #[arg(long)]
        force: bool,
    },
    /// List the loaded plugins and what they provide, then any plugin file that failed to load.
    Plugins {
        /// Print one JSON document instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// List the tools, or run one call by hand through the policy gate.
    Tool {
        #[command(subcommand)]
        command: ToolCommand,
    },
    /// List the models of every provider with a key: `provider/model`, context window, where the key comes from.
    Models {
        /// Also providers without a key.
        #[arg(long)]
        all: bool,
    },
    /// Save a provider's API key (typed hidden, or one line on stdin) in the data directory, readable by you only.
    Login {
        /// The provider id, e.g. openai or groq (`uji models --all` lists them); asked for when left out.
        provider: Option<String>,
        /// Save the key without asking the provider whether it works.
        #[arg(long)]
        no_check: bool,
    },
    /// Forget the key `uji login` saved for a provider.
    Logout {
        /// The provider id.
        provider: String,
    },
    /// MCP servers (from the mcp plugin): state, tools, last error.
    Mcp {
        #[command(subcommand)]
        command: McpCommand,
    },
    /// Inspect the tool policy.
    Policy {
        #[command(subcommand)]
        command: PolicyCommand,
    },
    /// Check the installation and configuration; each problem comes with its fix.
    Doctor {
        /// Skip the one tiny request to the default model (and starting MCP servers).
        #[arg(long)]
        offline: bool,
        /// Print one JSON document instead of lines.
        #[arg(long)]
        json: bool,
    },
    /// Print the completion script for SHELL (bash, zsh, fish, elvish, powershell) to stdout.
    Completions {
        #[arg(value_name = "SHELL")]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) to stdout, e.g. `uji man > uji.1`.
    Man,
}

#[derive(Subcommand, Debug)]
enum ToolCommand {
    /// One line per tool: name, declared policy, plugin, description.
    List,
    /// Run one tool call as the model would (rules, confinement and hooks apply; nobody is asked).
    Run {
        /// The tool's name, e.g. read_file.
        name: String,
        /// The arguments as one JSON object, e.g. '{"path": "README.md"}'; `-` reads them from stdin.
        args: Option<String>,
        /// Run calls the policy would ask about (deny rules still deny).
        #[arg(long)]
        yes: bool,
        /// Run commands in this OS sandbox (Landlock): off, read-only or workspace-write.
        #[arg(long, value_name = "MODE", value_parser = ["off", "read-only", "workspace-write"])]
        sandbox: Option<String>,
        /// Print the tool's progress lines to stderr.
        #[arg(long)]
        progress: bool,
    },
}

#[derive(Subcommand, Debug)]
enum McpCommand {
    /// Start the servers, then one line per server: name, transport, state, tools, last error (waits for servers starting, at most their handshake timeouts).
    List {
        /// Print JSON instead of lines.
        #[arg(long)]
        json: bool,
    },
    /// Trust this directory's .mcp.json as it is now, so sessions start its servers (remembered in the data directory until the file changes).
    Trust {
        /// Forget the decision instead: the next session asks again.
        #[arg(long)]
        revoke: bool,
    },
}

#[derive(Subcommand, Debug)]
enum PolicyCommand {
    /// Print the decision (allow, ask or deny) for TOOL acting on SUBJECT, then which rule or fallback produced it.
    Check {
        /// A tool name, e.g. run_command or write_file.
        tool: String,
        /// What the call acts on: a path for file tools, a command line for run_command.
        subject: String,
    },
}

/// `--sandbox MODE`: for this run, over what the Lua config set.
/// `--network`: `all`, `none`, or hosts separated by commas.
pub(crate) fn parse_network(text: &str) -> Result<uji_protocol::Network, String> {
    match text.trim() {
        "all" | "on" => Ok(uji_protocol::Network::All),
        "none" | "off" => Ok(uji_protocol::Network::None),
        hosts => {
            let list: Vec<&str> = hosts
                .split(',')
                .map(str::trim)
                .filter(|h| !h.is_empty())
                .collect();
            serde_json::from_value(serde_json::json!({ "allow": list }))
                .map_err(|e| format!("--network: {e}"))
        }
    }
}

pub(crate) fn set_sandbox(gate: &uji_core::Gate, mode: Option<&str>) {
    if let Some(mode) = mode.and_then(uji_protocol::SandboxMode::parse) {
        gate.sandbox(uji_protocol::services::ToolSandbox {
            mode: Some(mode),
            ..Default::default()
        });
    }
}

/// Boots the core in the working directory with the directories the flags
/// and environment give, as every command without a session does.
pub(crate) fn boot_here(
    config_dir: Option<PathBuf>,
    data_dir: Option<PathBuf>,
) -> Result<uji_core::Booted, String> {
    let dirs = uji_host::paths::Dirs::resolve(config_dir, data_dir, &uji_host::paths::ProcessEnv)
        .map_err(|e| e.to_string())?;
    let cwd =
        std::env::current_dir().map_err(|e| format!("cannot read the working directory: {e}"))?;
    let builtins = headless::builtins();
    Ok(uji_core::boot(
        uji_core::BootOptions::new(dirs, &cwd).builtins(&builtins),
    ))
}

/// Prints the notices kept while plugins loaded (an init.lua error, say) to
/// stderr: commands without a screen show them there, and they explain
/// many failures.
pub(crate) fn print_notices(registry: &uji_host::Registry) {
    for notice in registry.take_notices() {
        let level = match notice.level {
            uji_protocol::frontend::NoticeLevel::Error => "error: ",
            _ => "",
        };
        say!("uji: {}: {level}{}", notice.source, notice.text);
    }
}

fn main() -> ExitCode {
    let hidden = secrecy::hide_environment();
    uji_core::memory::tune_allocator();
    let cli = Cli::parse();
    logs::start(&cli);
    if let Err(e) = hidden {
        tracing::warn!(
            "could not make uji non-dumpable (commands of your user may read its memory): {e}"
        );
    }
    let result = match cli.command {
        Some(Command::Run {
            prompt,
            json,
            model,
            tools,
            append_prompt,
            effort,
            title,
            yes,
            sandbox,
            network,
            resume,
            parent,
            image,
            max_turns,
            max_tokens,
            max_tool_calls,
            max_cost,
            max_wall,
            mode,
        }) => {
            return run_cmd::run(
                cli.config_dir,
                cli.data_dir,
                run_cmd::RunOptions {
                    prompt,
                    json,
                    model,
                    tools,
                    append_prompt,
                    effort,
                    title,
                    yes,
                    sandbox,
                    network,
                    resume,
                    parent,
                    frontend: cli.frontend,
                    images: image,
                    mode,
                    budget: run_cmd::BudgetFlags {
                        turns: max_turns,
                        tokens: max_tokens,
                        tool_calls: max_tool_calls,
                        cost: max_cost,
                        wall: max_wall,
                    },
                },
            );
        }
        Some(Command::Resume { id }) => {
            let start = match id {
                Some(id) => uji_core::session::service::Start::Resume(id),
                None => uji_core::session::service::Start::Latest,
            };
            return run_cmd::interactive(cli.config_dir, cli.data_dir, start, cli.frontend);
        }
        Some(Command::Acp) => {
            let start = uji_core::session::service::Start::New {
                title: None,
                parent: None,
            };
            let frontend = Some("acp".to_string());
            return run_cmd::interactive(cli.config_dir, cli.data_dir, start, frontend);
        }
        Some(Command::List { all }) => return run_cmd::list(cli.config_dir, cli.data_dir, all),
        Some(Command::Delete { id }) => return run_cmd::delete(cli.config_dir, cli.data_dir, &id),
        Some(Command::Checkpoints { id }) => {
            return checkpoint_cmd::list(cli.config_dir, cli.data_dir, id.as_deref());
        }
        Some(Command::Undo {
            id,
            turn,
            redo,
            dry_run,
            force,
        }) => {
            let options = checkpoint_cmd::UndoOptions {
                id,
                turn,
                redo,
                dry_run,
                force,
            };
            return checkpoint_cmd::undo(cli.config_dir, cli.data_dir, options);
        }
        Some(Command::Plugins { json }) => plugins_cmd::run(cli.config_dir, cli.data_dir, json),
        Some(Command::Tool {
            command: ToolCommand::List,
        }) => tool_cmd::list(cli.config_dir, cli.data_dir),
        Some(Command::Tool {
            command:
                ToolCommand::Run {
                    name,
                    args,
                    yes,
                    sandbox,
                    progress,
                },
        }) => match tool_cmd::run(
            cli.config_dir,
            cli.data_dir,
            tool_cmd::RunOptions {
                name,
                args,
                yes,
                sandbox,
                progress,
            },
        ) {
            Ok(true) => Ok(()),
            Ok(false) => return ExitCode::FAILURE,
            Err(e) => Err(e),
        },
        Some(Command::Models { all }) => models_cmd::run(cli.config_dir, cli.data_dir, all),
        Some(Command::Login { provider, no_check }) => {
            login_cmd::login(cli.config_dir, cli.data_dir, provider, !no_check)
        }
        Some(Command::Logout { provider }) => {
            login_cmd::logout(cli.config_dir, cli.data_dir, &provider)
        }
        Some(Command::Mcp {
            command: McpCommand::List { json },
        }) => mcp_cmd::list(cli.config_dir, cli.data_dir, json),
        Some(Command::Mcp {
            command: McpCommand::Trust { revoke },
        }) => mcp_cmd::trust(cli.config_dir, cli.data_dir, revoke),
        Some(Command::Policy {
            command: PolicyCommand::Check { tool, subject },
        }) => policy_cmd::check(cli.config_dir, cli.data_dir, &tool, &subject),
        Some(Command::Doctor { offline, json }) => {
            return doctor_cmd::run(cli.config_dir, cli.data_dir, offline, json);
        }
        Some(Command::Completions { shell }) => packaging_cmd::completions(shell),
        Some(Command::Man) => packaging_cmd::man(),
        None => {
            let start = uji_core::session::service::Start::New {
                title: None,
                parent: None,
            };
            return run_cmd::interactive(cli.config_dir, cli.data_dir, start, cli.frontend);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            say!("uji: error: {message}");
            ExitCode::FAILURE
        }
    }
}
