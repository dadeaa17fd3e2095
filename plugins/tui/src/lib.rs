//! uji's terminal screen: an interactive frontend plugin on ratatui and
//! crossterm. It speaks only the frontend protocol (`uji_protocol::frontend`)
//! through the `FrontendSession` uji hands it; it never reaches into core.

pub mod app;
pub mod approval;
pub mod approval_guard;
pub mod composer;
pub mod key_prompt;
pub mod keys;
pub mod markdown;
pub mod picker;
pub mod status;
pub mod terminal;
#[cfg(test)]
mod testing;
pub mod theme;
pub mod transcript;

use uji_sdk::{Frontend, FrontendSession, Host, Plugin};

/// The `tui` frontend.
struct Tui;

impl Frontend for Tui {
    fn run(&self, session: FrontendSession) -> Result<(), String> {
        app::run(session)
    }
}

struct TuiPlugin;

impl Plugin for TuiPlugin {
    const NAME: &'static str = "tui";
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");

    fn init(host: &Host) -> Result<(), String> {
        host.register_frontend("tui", Tui)
    }
}

uji_sdk::export_plugin!(TuiPlugin);
