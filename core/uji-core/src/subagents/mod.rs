//! Subagents (docs/agents.md): the `subagent` tool runs child sessions for
//! the session whose model calls it. Each child is a session of its own in
//! this process, on the parent's core: the same policy, hooks, sandbox,
//! roots and MCP servers; the parent's approval mode (plan mode holds at
//! its gate); its questions come to the parent's person, labelled with the
//! agent; what it spends counts against the parent's budget; an interrupt
//! of the parent stops it. Only its final answer returns.
//!
//! - `args`: what the model asked for (one, several at once, a chain). Pure.
//! - `definitions`: agents from files and init.lua; which tools a child
//!   gets. Pure.
//! - `links`: what the tool needs of the calling session, by id.
//! - `child`: one child session run to its answer, its events shown as
//!   `uji run --json` lines.
//! - `tool`: the tool.

pub mod args;
mod child;
pub mod definitions;
mod links;
mod tool;

pub use links::{Links, ParentLink, Remaining};
pub use tool::{NAME, PARALLEL_KEY, SubagentTool};

use std::path::Path;
use std::sync::Arc;

use uji_host::{RegisteredTool, Registry};

use crate::auth::providers::Providers;
use crate::gate::Gate;
use crate::session::store::Store;

/// Registers the `subagent` tool, unless a plugin or init.lua provides a
/// tool of that name. Called once the config has run, so the tool's
/// description lists the agents it defined.
pub fn register(gate: &Gate, registry: &Registry, providers: &Providers, data_dir: &Path) {
    if registry.tool(NAME).is_some() {
        return;
    }
    let tool = SubagentTool::new(child::Core {
        gate: gate.clone(),
        registry: registry.clone(),
        providers: providers.clone(),
        store: Store::new(data_dir),
    });
    match RegisteredTool::native(Arc::new(tool)) {
        Ok(tool) => {
            if let Err(clash) = registry.register_tool(tool, false) {
                tracing::warn!("{clash}");
            }
        }
        Err(e) => tracing::warn!("the subagent tool could not be registered: {e}"),
    }
}
