//! Child processes a plugin starts: every one of them begins with uji's
//! environment minus what `env.child` withholds (provider keys, `UJI_*`),
//! so no key reaches a command or a server by a spawner forgetting it.
//!
//! ```no_run
//! let mut cmd = uji_sdk::child::command("/bin/echo");
//! cmd.env("GREETING", "hi"); // the spawner's own variables are kept
//! ```

use std::ffi::OsStr;
use std::process::Command;
use std::sync::OnceLock;

use uji_protocol::LogLevel;
use uji_protocol::services::{ChildEnv, ChildEnvRequest};

use crate::Host;

/// The host this plugin was initialised with (each plugin library has its
/// own copy of this static).
static HOST: OnceLock<Host> = OnceLock::new();

pub(crate) fn remember_host(host: &Host) {
    let _ = HOST.set(host.clone());
}

/// What a child inherits now. Without an answer from uji (the plugin runs
/// outside uji, or uji lacks the service) it fails closed:
/// [`ChildEnv::fallback`] keeps only `PATH`, `HOME`, the locale and the like.
pub fn env() -> ChildEnv {
    let Some(host) = HOST.get() else {
        return ChildEnv::fallback();
    };
    match host.service(&ChildEnvRequest {}) {
        Ok(answer) => answer,
        Err(e) => {
            host.log(
                LogLevel::Warn,
                &format!("child processes get a minimal environment: {e}"),
            );
            ChildEnv::fallback()
        }
    }
}

/// A `Command` for `program` whose environment is uji's minus what
/// [`env`] withholds. Turn it into a tokio command with
/// `tokio::process::Command::from`.
pub fn command(program: impl AsRef<OsStr>) -> Command {
    let mut cmd = Command::new(program);
    env().apply(&mut cmd);
    cmd
}
