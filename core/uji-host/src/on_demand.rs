//! Shipped plugins opened when a session first needs them.
//!
//! A session talks to one model API and runs one frontend, yet uji ships
//! four wires and two frontends. Each plugin opened costs its load time
//! (dlopen, the ABI checks, init) and the memory of a library with its own
//! copy of tokio and serde: opening all of them took a 500-message TUI
//! session from 27 MiB to 34 MiB. The plugins below register exactly one
//! wire or one frontend at init and nothing else, so a session lists what
//! they provide (`uji.wire.list()` shows them) and opens one on the first
//! lookup that misses it. The MCP client is opened the same way, by what
//! asks for MCP (its services, `/mcp`, a project's `.mcp.json`): a session
//! without MCP servers never maps it. A plugin of the same name found earlier in the
//! search (`$UJI_PLUGIN_PATH`, `<config>/plugins`) still shadows it, and
//! `uji plugins` opens everything to list it.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;

use uji_protocol::frontend::NoticeLevel;

use crate::loader::{Candidate, LoadedPlugin, Origin, PluginSet, Undo, log_outcome, open_and_init};
use crate::registry::{Need, Registry};

/// Shipped plugin (`openai_chat` for `libuji_plugin_openai_chat.so`), its
/// manifest name, and the one thing it registers.
const ON_DEMAND: &[(&str, &str, Need<'static>)] = &[
    ("anthropic", "anthropic", Need::Wire("anthropic")),
    ("openai_chat", "openai-chat", Need::Wire("openai-chat")),
    (
        "openai_responses",
        "openai-responses",
        Need::Wire("openai-responses"),
    ),
    ("gemini", "gemini", Need::Wire("gemini")),
    ("tui", "tui", Need::Frontend("tui")),
    ("acp", "acp", Need::Frontend("acp")),
    // The MCP client: opened by its first `mcp.*` service call (init.lua's
    // uji.mcp.add, an editor's servers over ACP, `uji mcp`), by `/mcp`, or
    // as a session starts where a project's `.mcp.json` configures it.
    ("mcp", "mcp", Need::Services("mcp")),
];

/// Files of a workspace that configure a pending plugin: (file, the name
/// of its services), for [`crate::Registry::open_for_workspace`].
pub const WORKSPACE_FILES: &[(&str, &str)] = &[(".mcp.json", "mcp")];

/// What shipped plugin `name` provides, if it is opened on demand.
pub(crate) fn need_of(name: &str) -> Option<Need<'static>> {
    ON_DEMAND
        .iter()
        .find(|(plugin, _, _)| *plugin == name)
        .map(|(_, _, need)| *need)
}

/// The manifest name of the shipped plugin providing `need`.
fn manifest_name(need: Need<'_>) -> Option<&'static str> {
    ON_DEMAND
        .iter()
        .find(|(_, _, listed)| *listed == need)
        .map(|(_, name, _)| *name)
}

#[derive(Default)]
struct Opened {
    /// Manifest names of every plugin loaded so far, which shadow a
    /// shipped plugin of the same name.
    names: HashMap<String, PathBuf>,
    /// Plugins opened on demand, kept for the life of the process (a
    /// plugin is never unloaded).
    kept: Vec<LoadedPlugin>,
}

/// The deferred plugins of one session and what was opened so far.
pub(crate) struct OnDemand {
    plugins: Vec<(Need<'static>, PathBuf)>,
    opened: Mutex<Opened>,
}

impl OnDemand {
    /// Lists `plugins` in `registry` as pending, to be opened by the
    /// returned handle.
    pub(crate) fn defer(
        registry: &Registry,
        plugins: Vec<(Need<'static>, PathBuf)>,
    ) -> Arc<OnDemand> {
        let needs: Vec<Need<'static>> = plugins.iter().map(|(need, _)| *need).collect();
        let on_demand = Arc::new(OnDemand {
            plugins,
            opened: Mutex::new(Opened::default()),
        });
        let opener = Arc::clone(&on_demand);
        registry.defer(
            &needs,
            Arc::new(move |registry: &Registry, need: Need<'_>| opener.open(registry, need)),
        );
        on_demand
    }

    /// Notes the names the session's start claimed. A plugin found earlier
    /// in the search with a shipped plugin's name shadows it, as at start:
    /// what the shipped one provides is no longer listed.
    pub(crate) fn record(&self, registry: &Registry, claimed: HashMap<String, PathBuf>) {
        for (need, _) in &self.plugins {
            if manifest_name(*need).is_some_and(|name| claimed.contains_key(name)) {
                registry.undefer(*need);
            }
        }
        let mut opened = self.opened.lock();
        opened.names.extend(claimed);
    }

    /// Opens the first copy of the plugin providing `need` that loads (the
    /// one next to the binary, else the installed one).
    fn open(&self, registry: &Registry, need: Need<'_>) {
        let mut opened = self.opened.lock();
        let mut failed = Vec::new();
        for (_, path) in self.plugins.iter().filter(|(listed, _)| *listed == need) {
            let candidate = Candidate {
                path: path.clone(),
                origin: Origin::Bundled,
            };
            let mut set = PluginSet::default();
            let names = std::mem::take(&mut opened.names);
            opened.names = open_and_init(vec![candidate], registry, names, &mut set, Undo::Forget);
            log_outcome(&set);
            failed.extend(set.failed);
            if let Some(plugin) = set.loaded.into_iter().next() {
                tracing::info!(
                    "opened plugin {} for {need} when the session first needed it",
                    plugin.manifest.name
                );
                opened.kept.push(plugin);
                return;
            }
        }
        // The session goes on without it; the lookup that follows fails
        // with its own error, and this says why.
        for failure in &failed {
            registry.notify_at(
                NoticeLevel::Error,
                "plugins",
                &format!(
                    "plugin {} failed to load: {}; `uji plugins` lists every plugin and its state",
                    failure.path.display(),
                    failure.reason
                ),
            );
        }
    }
}
