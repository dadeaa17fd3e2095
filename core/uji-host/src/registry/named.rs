//! Wires, frontends and slash commands: one of each per name. Wires and
//! frontends of shipped plugins may be pending (listed, not opened yet):
//! the first lookup that misses one opens its plugin.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use super::Registry;
use crate::calls::{RegisteredCommand, RegisteredFrontend, RegisteredWire};

/// What a session asks the registry for that a plugin not yet opened may
/// provide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need<'a> {
    Wire(&'a str),
    Frontend(&'a str),
    /// The host services named `<name>.*` and the slash command `/<name>`
    /// (the MCP plugin's `mcp.add`, `mcp.list`… and `/mcp`).
    Services(&'a str),
}

impl std::fmt::Display for Need<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Need::Wire(name) => write!(f, "the {name} wire"),
            Need::Frontend(name) => write!(f, "the {name} frontend"),
            Need::Services(name) => write!(f, "the {name}.* services"),
        }
    }
}

/// Opens the plugin that provides a need, registering into the registry.
pub type Opener = Arc<dyn Fn(&Registry, Need<'_>) + Send + Sync>;

/// Told that the slash commands changed (see [`Registry::set_commands_sink`]).
pub type CommandsSink = Arc<dyn Fn() + Send + Sync>;

/// Needs listed before their plugin is opened (see [`Registry::defer`]).
#[derive(Default)]
struct Pending {
    opener: Option<Opener>,
    wires: BTreeSet<String>,
    frontends: BTreeSet<String>,
    services: BTreeSet<String>,
}

impl Pending {
    /// The list `need` belongs in, and its name.
    fn list<'a>(&mut self, need: Need<'a>) -> (&mut BTreeSet<String>, &'a str) {
        match need {
            Need::Wire(name) => (&mut self.wires, name),
            Need::Frontend(name) => (&mut self.frontends, name),
            Need::Services(name) => (&mut self.services, name),
        }
    }

    /// Takes `need` off its list; true if it was there.
    fn take(&mut self, need: Need<'_>) -> bool {
        let (list, name) = self.list(need);
        list.remove(name)
    }
}

#[derive(Default, Clone)]
pub(super) struct Named {
    wires: BTreeMap<String, Arc<RegisteredWire>>,
    frontends: BTreeMap<String, Arc<RegisteredFrontend>>,
    commands: BTreeMap<String, Arc<RegisteredCommand>>,
}

#[derive(Default)]
pub(super) struct NamedTable {
    named: RwLock<Named>,
    pending: RwLock<Pending>,
    /// Held while a pending plugin opens, so a second caller waits for it.
    opening: Mutex<()>,
    commands_sink: RwLock<Option<CommandsSink>>,
}

/// Names of the items `plugin` provides.
fn names_of<T>(items: &BTreeMap<String, Arc<T>>, plugin: &str, of: fn(&T) -> &str) -> Vec<String> {
    let mine = items.iter().filter(|(_, item)| of(item) == plugin);
    mine.map(|(name, _)| name.clone()).collect()
}

impl NamedTable {
    pub fn add_wire(&self, wire: RegisteredWire) {
        let wire = Arc::new(wire);
        self.named
            .write()
            .wires
            .insert(wire.name().to_string(), wire);
    }

    pub fn wire(&self, name: &str) -> Option<Arc<RegisteredWire>> {
        self.named.read().wires.get(name).cloned()
    }

    /// Every wire a session can use: registered or pending.
    pub fn wire_names(&self) -> Vec<String> {
        let mut names: BTreeSet<String> = self.named.read().wires.keys().cloned().collect();
        names.extend(self.pending.read().wires.iter().cloned());
        names.into_iter().collect()
    }

    pub fn add_frontend(&self, frontend: RegisteredFrontend) {
        let frontend = Arc::new(frontend);
        let name = frontend.name().to_string();
        self.named.write().frontends.insert(name, frontend);
    }

    pub fn frontend(&self, name: &str) -> Option<Arc<RegisteredFrontend>> {
        self.named.read().frontends.get(name).cloned()
    }

    /// Every frontend a session can run: registered or pending.
    pub fn frontend_names(&self) -> Vec<String> {
        let mut names: BTreeSet<String> = self.named.read().frontends.keys().cloned().collect();
        names.extend(self.pending.read().frontends.iter().cloned());
        names.into_iter().collect()
    }

    /// Adds a command, then (with the lock released: the sink reads the
    /// commands) tells the sink.
    pub fn add_command(&self, command: RegisteredCommand) {
        let command = Arc::new(command);
        let name = command.name().to_string();
        self.named.write().commands.insert(name, command);
        let sink = self.commands_sink.read().clone();
        if let Some(sink) = sink {
            sink();
        }
    }

    pub fn set_commands_sink(&self, sink: CommandsSink) {
        *self.commands_sink.write() = Some(sink);
    }

    pub fn command(&self, name: &str) -> Option<Arc<RegisteredCommand>> {
        self.named.read().commands.get(name).cloned()
    }

    /// Removes command `name`, then tells the sink; whether it was there.
    pub fn remove_command(&self, name: &str) -> bool {
        let removed = self.named.write().commands.remove(name).is_some();
        if removed {
            let sink = self.commands_sink.read().clone();
            if let Some(sink) = sink {
                sink();
            }
        }
        removed
    }

    pub fn commands(&self) -> Vec<Arc<RegisteredCommand>> {
        self.named.read().commands.values().cloned().collect()
    }

    pub fn defer(&self, needs: &[Need<'_>], opener: Opener) {
        let mut pending = self.pending.write();
        for need in needs {
            let (list, name) = pending.list(*need);
            list.insert(name.to_string());
        }
        pending.opener = Some(opener);
    }

    pub fn undefer(&self, need: Need<'_>) {
        self.pending.write().take(need);
    }

    /// Opens the plugin behind a pending need, once; the lookup that
    /// follows finds what it registered. The opener must not look up a
    /// pending need itself: `opening` is held while it runs (the shipped
    /// on-demand plugins only register).
    /// Whether the services named `<name>.*` wait for their plugin.
    pub fn services_pending(&self, name: &str) -> bool {
        self.pending.read().services.contains(name)
    }

    pub fn open_pending(&self, registry: &Registry, need: Need<'_>) {
        let _one_at_a_time = self.opening.lock();
        let opener = {
            let mut pending = self.pending.write();
            if !pending.take(need) {
                return;
            }
            pending.opener.clone()
        };
        if let Some(open) = opener {
            open(registry, need);
        }
    }

    /// Removes a wire, registered or pending; true if it existed.
    pub fn remove_wire(&self, name: &str) -> bool {
        // After an open in progress, so a wire removed while its plugin
        // opens is removed, not left to appear.
        let _after_opening = self.opening.lock();
        let pending = self.pending.write().take(Need::Wire(name));
        let registered = self.named.write().wires.remove(name).is_some();
        pending || registered
    }

    /// The wires, frontends and commands `plugin` provides.
    pub fn of_plugin(&self, plugin: &str) -> [Vec<String>; 3] {
        let named = self.named.read();
        [
            names_of(&named.wires, plugin, RegisteredWire::plugin),
            names_of(&named.frontends, plugin, RegisteredFrontend::plugin),
            names_of(&named.commands, plugin, RegisteredCommand::plugin),
        ]
    }

    pub fn forget_plugin(&self, plugin: &str) {
        let mut named = self.named.write();
        named.wires.retain(|_, w| w.plugin() != plugin);
        named.frontends.retain(|_, f| f.plugin() != plugin);
        named.commands.retain(|_, c| c.plugin() != plugin);
    }

    pub fn snapshot(&self) -> Named {
        self.named.read().clone()
    }

    pub fn restore(&self, snapshot: Named) {
        *self.named.write() = snapshot;
    }
}
