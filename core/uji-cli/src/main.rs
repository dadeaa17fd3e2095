//! `uji`: a coding agent for the terminal.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod plugins_cmd;
mod policy_cmd;

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
    /// Inspect the tool policy.
    Policy {
        #[command(subcommand)]
        command: PolicyCommand,
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Some(Command::Plugins { json }) => plugins_cmd::run(cli.config_dir, cli.data_dir, json),
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
