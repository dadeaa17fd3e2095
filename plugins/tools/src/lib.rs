//! uji's built-in tools as a plugin built only on the public SDK, exactly
//! like a third-party plugin: `read_file`, `edit_file`, `write_file`,
//! `run_command`, and for background jobs `job_output` and `stop_job`; and
//! the host services `jobs.*` (background jobs) and `proc.*` (processes
//! other plugins run and talk to, [`Procs`]).
//!
//! The tool types are public so tests (and other plugins that want the same
//! behaviour) can use them directly.

mod args;
mod atomic;
mod beneath;
mod diff;
mod edit_file;
mod exit_fd;
mod jobs;
mod leftovers;
mod process;
mod procs;
mod read_file;
mod reaper;
mod run_command;
pub mod sandbox;
mod spawner;
mod write_file;

pub use edit_file::EditFile;
pub use jobs::Jobs;
pub use jobs::tools::{JobOutput, StopJob};
pub use procs::Procs;
pub use read_file::ReadFile;
pub use run_command::RunCommand;
pub use write_file::WriteFile;

use uji_sdk::{Host, Plugin};

/// The plugin that registers the built-in tools.
pub struct ToolsPlugin;

impl Plugin for ToolsPlugin {
    const NAME: &'static str = "tools";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const DESCRIPTION: &'static str =
        "uji's built-in tools: read_file, edit_file, write_file, run_command, job_output, stop_job";

    fn init(host: &Host) -> Result<(), String> {
        if let Ok(cwd) = std::env::current_dir() {
            let log = host.clone();
            leftovers::remove_under(&cwd, move |removed| {
                if removed > 0 {
                    log.log(
                        uji_sdk::LogLevel::Info,
                        &format!("removed {removed} temporary files of interrupted writes"),
                    );
                }
            });
        }
        sandbox::set_host(host);
        let jobs = Jobs::new(Some(host.clone()));
        jobs::services::install(host, &jobs)?;
        procs::services::install(host, &Procs::new(host))?;
        // `uji doctor` asks what the sandbox can enforce here.
        host.serve(|_: uji_sdk::protocol::services::SandboxSupport| {
            Ok::<_, String>(sandbox::support())
        })?;
        host.register_tool(ReadFile)?;
        host.register_tool(EditFile)?;
        host.register_tool(WriteFile)?;
        host.register_tool(RunCommand::new(&jobs))?;
        host.register_tool(JobOutput::new(&jobs))?;
        host.register_tool(StopJob::new(&jobs))?;
        Ok(())
    }
}

uji_sdk::export_plugin!(ToolsPlugin);
