//! uji's core: the turn loop, sessions, the policy gate every tool call
//! passes through, and the server frontends talk to. Frontends talk to it
//! through `uji-protocol` types; plugins through `uji-host`.
//!
//! Folders by role (docs/architecture.md has one row each):
//! - [`boot`]: starting the registry, gate, services and plugins; logging.
//! - [`gate`]: the one place every tool call passes, approvals, what child
//!   processes inherit.
//! - [`turn`]: the turn loop and what reaches a running turn.
//! - [`session`]: the session service, the store, spill files.
//! - [`server`]: a session as operations in, events out, for frontends.
//! - [`auth`]: providers, keys, login, redaction.

pub mod auth;
pub mod boot;
pub mod gate;
pub mod images;
pub mod memory;
pub mod server;
pub mod session;
pub mod subagents;
pub mod turn;

pub use boot::{BootOptions, Booted, Load, boot};
pub use gate::{
    Approval, ApprovalRequest, Approver, DecidedBy, Gate, GateResult, HeadlessApprover, ToolRequest,
};
pub use turn::interrupt::{Interrupt, Interrupter, interrupt_pair};
