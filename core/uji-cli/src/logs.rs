//! Starts the log once the data directory is known, before any command.

use uji_core::boot::logging::{self, LogOptions};
use uji_host::paths::{Dirs, ProcessEnv};

use crate::out::say;
use crate::{Cli, Command};

/// Installs the log for this process; a bad `UJI_LOG` is also reported on
/// stderr when no frontend owns the terminal.
pub fn start(cli: &Cli) {
    // Printing generated text touches nothing: packagers run these in
    // build environments where the data directory is not theirs.
    if matches!(
        cli.command,
        Some(Command::Completions { .. } | Command::Man)
    ) {
        return;
    }
    // Without a HOME the command itself reports what to set.
    let Ok(dirs) = Dirs::resolve(cli.config_dir.clone(), cli.data_dir.clone(), &ProcessEnv) else {
        return;
    };
    let interactive = draws_on_terminal(cli);
    let options = LogOptions {
        level: std::env::var("UJI_LOG").ok(),
        stderr: cli.log_stderr,
        interactive,
    };
    // With --log-stderr the warning is already on stderr as a log line.
    if let Some(warning) = logging::init(&dirs, &options)
        && !interactive
        && !cli.log_stderr
    {
        say!("uji: warning: {warning}");
    }
}

/// Whether the command hands the terminal to an interactive frontend.
/// Exhaustive on purpose: a new command has to decide.
fn draws_on_terminal(cli: &Cli) -> bool {
    match &cli.command {
        None | Some(Command::Resume { .. }) => true,
        Some(Command::Run { .. }) => cli.frontend.as_deref().is_some_and(|f| f != "headless"),
        Some(
            // `uji acp`: stdout is the editor's, stderr free for log lines.
            Command::Acp
            | Command::List { .. }
            | Command::Delete { .. }
            | Command::Checkpoints { .. }
            | Command::Undo { .. }
            | Command::Plugins { .. }
            | Command::Tool { .. }
            | Command::Mcp { .. }
            | Command::Policy { .. }
            | Command::Models { .. }
            | Command::Login { .. }
            | Command::Logout { .. }
            | Command::Doctor { .. }
            | Command::Completions { .. }
            | Command::Man,
        ) => false,
    }
}
