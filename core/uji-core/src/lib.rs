//! uji's core: the policy gate every tool call passes through (and, as they
//! land, the turn loop and sessions). Frontends talk to it through
//! `uji-protocol` types; plugins through `uji-host`.

pub mod agent;
mod answer_sink;
pub mod approvals;
pub mod boot;
pub mod child_env;
pub mod compaction;
pub mod control;
pub mod gate;
pub mod interrupt;
pub mod keys;
pub mod launch;
pub mod live;
pub mod logging;
pub mod login;
pub mod prompt;
pub mod providers;
pub mod redact;
pub mod retry;
pub mod server;
pub mod sessions;
pub mod spills;
pub mod store;

pub use boot::{BootOptions, Booted, Load, boot};
pub use gate::{
    Approval, ApprovalRequest, Approver, DecidedBy, Gate, GateResult, HeadlessApprover, ToolRequest,
};
pub use interrupt::{Interrupt, Interrupter, interrupt_pair};
