//! The tools table: one tool per name, which plugin's tool a replacement
//! replaced, and registrations refused because another plugin provides the
//! name (kept so the config can still allow them).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use parking_lot::RwLock;
use uji_protocol::ToolSpec;

use crate::calls::RegisteredTool;

/// A tool registration refused because another plugin provides the name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clash {
    pub tool: String,
    /// The plugin whose registration was refused.
    pub plugin: String,
    /// The plugin that provides the tool.
    pub provider: String,
}

impl std::fmt::Display for Clash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "tool {} is already provided by plugin {}, and a plugin cannot replace another plugin's tool; to let plugin {} replace it, add uji.plugins.allow_replace({{ \"{}\" }}) to init.lua",
            self.tool, self.provider, self.plugin, self.tool
        )
    }
}

#[derive(Default, Clone)]
pub(super) struct Tools {
    tools: BTreeMap<String, Arc<RegisteredTool>>,
    /// Tool name → the plugin whose tool it replaced.
    replaced: BTreeMap<String, String>,
    /// Refused registrations, kept so the config can still allow them.
    refused: Vec<(Clash, Arc<RegisteredTool>)>,
}

impl Tools {
    /// Puts `tool` in, noting which plugin's tool it replaces.
    fn install(&mut self, tool: Arc<RegisteredTool>) {
        let name = tool.spec().name.clone();
        if let Some(old) = self.tools.get(&name)
            && old.plugin() != tool.plugin()
        {
            tracing::info!(
                "tool {name} from plugin {} replaced by plugin {}",
                old.plugin(),
                tool.plugin()
            );
            self.replaced.insert(name.clone(), old.plugin().to_string());
        }
        self.tools.insert(name, tool);
    }
}

#[derive(Default)]
pub(super) struct ToolTable {
    tools: RwLock<Tools>,
    /// Tools the config lets any plugin replace (`plugins.allow_replace`).
    replaceable: RwLock<BTreeSet<String>>,
}

impl ToolTable {
    /// Adds a plugin's tool. A name another plugin already provides is
    /// refused (and kept, see [`ToolTable::allow_replace`]) unless
    /// `may_replace` (the user's config) or the config allowed that name.
    pub fn register(&self, tool: RegisteredTool, may_replace: bool) -> Result<(), Clash> {
        let name = tool.spec().name.clone();
        let allowed = may_replace || self.replaceable.read().contains(&name);
        let mut tools = self.tools.write();
        if let Some(old) = tools.tools.get(&name)
            && old.plugin() != tool.plugin()
            && !allowed
        {
            let clash = Clash {
                tool: name,
                plugin: tool.plugin().to_string(),
                provider: old.plugin().to_string(),
            };
            tracing::warn!("{clash}");
            tools.refused.push((clash.clone(), Arc::new(tool)));
            return Err(clash);
        }
        tools.install(Arc::new(tool));
        Ok(())
    }

    /// Lets plugins replace the tools `names`: later registrations replace
    /// them, and registrations refused so far are put in now. Returns the
    /// names put in.
    pub fn allow_replace(&self, names: &[String]) -> Vec<String> {
        self.replaceable.write().extend(names.iter().cloned());
        let mut tools = self.tools.write();
        let (now, still): (Vec<_>, Vec<_>) = std::mem::take(&mut tools.refused)
            .into_iter()
            .partition(|(clash, _)| names.contains(&clash.tool));
        tools.refused = still;
        now.into_iter()
            .map(|(clash, tool)| {
                tools.install(tool);
                clash.tool
            })
            .collect()
    }

    pub fn clashes(&self) -> Vec<Clash> {
        let tools = self.tools.read();
        tools.refused.iter().map(|(c, _)| c.clone()).collect()
    }

    pub fn replaced_from(&self, name: &str) -> Option<String> {
        self.tools.read().replaced.get(name).cloned()
    }

    pub fn remove(&self, name: &str) -> bool {
        let mut tools = self.tools.write();
        tools.replaced.remove(name);
        tools.tools.remove(name).is_some()
    }

    pub fn get(&self, name: &str) -> Option<Arc<RegisteredTool>> {
        self.tools.read().tools.get(name).cloned()
    }

    /// Every tool, sorted by name.
    pub fn all(&self) -> Vec<Arc<RegisteredTool>> {
        self.tools.read().tools.values().cloned().collect()
    }

    pub fn specs(&self) -> Vec<ToolSpec> {
        let tools = self.tools.read();
        tools.tools.values().map(|t| t.spec().clone()).collect()
    }

    /// The names of `plugin`'s tools.
    pub fn of_plugin(&self, plugin: &str) -> Vec<String> {
        let tools = self.tools.read();
        let of = tools.tools.iter().filter(|(_, t)| t.plugin() == plugin);
        of.map(|(name, _)| name.clone()).collect()
    }

    pub fn forget_plugin(&self, plugin: &str) {
        self.tools.write().tools.retain(|_, t| t.plugin() != plugin);
    }

    pub fn snapshot(&self) -> Tools {
        self.tools.read().clone()
    }

    pub fn restore(&self, snapshot: Tools) {
        *self.tools.write() = snapshot;
    }
}
