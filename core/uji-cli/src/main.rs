//! `uji`: a coding agent for the terminal.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod plugins_cmd;
mod policy_cmd;
mod tool_cmd;

#[derive(Parser, Debug)]
#[command(
    name = "uji",
    version,
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
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
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
    /// Inspect the tool policy.
    Policy {
        #[command(subcommand)]
        command: PolicyCommand,
    },
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
        /// Print the tool's progress lines to stderr.
        #[arg(long)]
        progress: bool,
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

/// Big buffers (a tool's megabytes of arguments or output) are allocated
/// with mmap and given back to the system when freed. Without a fixed
/// threshold glibc raises it after the first large free, and later large
/// buffers stay resident for the rest of the session.
fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator tuning; called before any
    // other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 256 * 1024);
    }
}

fn main() -> ExitCode {
    tune_allocator();
    let cli = Cli::parse();
    let result = match cli.command {
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
                    progress,
                },
        }) => match tool_cmd::run(
            cli.config_dir,
            cli.data_dir,
            tool_cmd::RunOptions {
                name,
                args,
                yes,
                progress,
            },
        ) {
            Ok(true) => Ok(()),
            Ok(false) => return ExitCode::FAILURE,
            Err(e) => Err(e),
        },
        Some(Command::Policy {
            command: PolicyCommand::Check { tool, subject },
        }) => policy_cmd::check(cli.config_dir, cli.data_dir, &tool, &subject),
        None => Err(
            "the interactive interface is not built yet; try `uji plugins` or `uji --help`"
                .to_string(),
        ),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("uji: error: {message}");
            ExitCode::FAILURE
        }
    }
}
