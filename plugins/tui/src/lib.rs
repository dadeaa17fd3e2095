//! uji's terminal screen: an interactive frontend plugin on ratatui and
//! crossterm. It speaks only the frontend protocol (`uji_protocol::frontend`)
//! through the `FrontendSession` uji hands it; it never reaches into core.

pub mod approval;
pub mod composer;
pub mod markdown;
pub mod picker;
pub mod theme;
pub mod transcript;
