//! Everything plugins provide, keyed by name, with the plugin that provided it.
//!
//! Items hold a shared [`PluginState`]: once a plugin panics it is marked
//! failed, and every later call to anything it registered returns an error at
//! once instead of calling into it again.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, RwLock};

use serde_json::Value;
use uji_protocol::frontend::NoticeLevel;
use uji_protocol::services::{
    self, ConfigSet, Emit, HookRemove, KeymapAdd, KeymapList, PluginsAllowReplace, Service as _,
    WireList, WireRemove,
};
use uji_protocol::{HookOptions, LogLevel, ToolSpec, keymap};

use crate::calls::{
    RegisteredCommand, RegisteredFrontend, RegisteredHook, RegisteredService, RegisteredTool,
    RegisteredWire,
};
use crate::loader::CONFIG_PLUGIN;

/// Health of one loaded plugin, shared by everything it registered.
#[derive(Debug)]
pub struct PluginState {
    name: String,
    failed: Mutex<Option<String>>,
}

impl PluginState {
    pub fn new(name: impl Into<String>) -> Arc<PluginState> {
        Arc::new(PluginState {
            name: name.into(),
            failed: Mutex::new(None),
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Why the plugin was marked failed, if it was.
    pub fn failure(&self) -> Option<String> {
        self.failed.lock().ok().and_then(|f| f.clone())
    }

    /// Marks the plugin failed for the rest of the session. The first reason
    /// is kept: it is the one that explains the others.
    pub fn mark_failed(&self, reason: &str) {
        if let Ok(mut failed) = self.failed.lock()
            && failed.is_none()
        {
            *failed = Some(reason.to_string());
        }
    }
}

/// A notice for the user, from a plugin or from the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// The plugin that sent it, or `uji`.
    pub source: String,
    pub text: String,
    /// Plugins' notices are `Info`; uji raises others itself (a config
    /// that failed to load is an `Error`).
    pub level: NoticeLevel,
}

/// The caller's name when core itself calls a host service.
pub const CORE_CALLER: &str = "uji";

/// A host service a plugin can call by name with JSON (`Host::call`).
pub type Service = Arc<dyn Fn(&str, Value) -> Result<Value, String> + Send + Sync>;

type NoticeSink = Arc<dyn Fn(&Notice) + Send + Sync>;

/// Told that the slash commands changed (see [`Registry::set_commands_sink`]).
pub type CommandsSink = Arc<dyn Fn() + Send + Sync>;

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
struct Items {
    tools: BTreeMap<String, Arc<RegisteredTool>>,
    /// Tool name → the plugin whose tool it replaced.
    replaced: BTreeMap<String, String>,
    /// Refused registrations, kept so the config can still allow them.
    refused: Vec<(Clash, Arc<RegisteredTool>)>,
    wires: BTreeMap<String, Arc<RegisteredWire>>,
    frontends: BTreeMap<String, Arc<RegisteredFrontend>>,
    hooks: BTreeMap<String, Vec<Arc<RegisteredHook>>>,
    commands: BTreeMap<String, Arc<RegisteredCommand>>,
    /// Host services plugins serve, by method.
    services: BTreeMap<String, Arc<RegisteredService>>,
}

/// The registrations at one moment (see [`Registry::snapshot`]).
pub struct Snapshot(Items);

/// What one plugin currently provides.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Provided {
    pub tools: Vec<String>,
    pub wires: Vec<String>,
    pub frontends: Vec<String>,
    pub hooks: Vec<String>,
    pub commands: Vec<String>,
    pub services: Vec<String>,
}

impl Provided {
    /// The kinds of thing provided, e.g. `["tool", "wire"]`.
    pub fn kinds(&self) -> Vec<&'static str> {
        let mut kinds = Vec::new();
        for (list, kind) in [
            (&self.tools, "tool"),
            (&self.wires, "wire"),
            (&self.frontends, "frontend"),
            (&self.hooks, "hook"),
            (&self.commands, "command"),
            (&self.services, "service"),
        ] {
            if !list.is_empty() {
                kinds.push(kind);
            }
        }
        kinds
    }
}

/// The shared registry. Cheap to clone (an `Arc`).
#[derive(Clone, Default)]
pub struct Registry {
    items: Arc<RwLock<Items>>,
    services: Arc<RwLock<HashMap<String, Service>>>,
    config: Arc<RwLock<serde_json::Map<String, Value>>>,
    notices: Arc<Mutex<Vec<Notice>>>,
    notice_sink: Arc<RwLock<Option<NoticeSink>>>,
    commands_sink: Arc<RwLock<Option<CommandsSink>>>,
    /// Tools the config lets any plugin replace (`plugins.allow_replace`).
    replaceable: Arc<RwLock<BTreeSet<String>>>,
    /// Wires and frontends of shipped plugins not opened yet.
    pending: Arc<RwLock<Pending>>,
    /// Held while a pending plugin opens, so a second caller waits for it.
    opening: Arc<Mutex<()>>,
}

/// What a session asks the registry for that a plugin not yet opened may
/// provide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need<'a> {
    Wire(&'a str),
    Frontend(&'a str),
}

impl std::fmt::Display for Need<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Need::Wire(name) => write!(f, "the {name} wire"),
            Need::Frontend(name) => write!(f, "the {name} frontend"),
        }
    }
}

/// Opens the plugin that provides a need, registering into the registry.
pub type Opener = Arc<dyn Fn(&Registry, Need<'_>) + Send + Sync>;

/// Needs listed before their plugin is opened (see [`Registry::defer`]).
#[derive(Default)]
struct Pending {
    opener: Option<Opener>,
    wires: BTreeSet<String>,
    frontends: BTreeSet<String>,
}

impl Pending {
    /// The list `need` belongs in, and its name.
    fn list<'a>(&mut self, need: Need<'a>) -> (&mut BTreeSet<String>, &'a str) {
        match need {
            Need::Wire(name) => (&mut self.wires, name),
            Need::Frontend(name) => (&mut self.frontends, name),
        }
    }

    /// Takes `need` off its list; true if it was there.
    fn take(&mut self, need: Need<'_>) -> bool {
        let (list, name) = self.list(need);
        list.remove(name)
    }
}

impl Registry {
    pub fn new() -> Registry {
        Registry::default()
    }

    // ---- tools -------------------------------------------------------------

    /// Adds a tool, replacing one with the same name (last registration wins,
    /// as `uji.tool.add` does).
    pub fn add_tool(&self, tool: RegisteredTool) {
        if let Ok(mut items) = self.items.write() {
            install(&mut items, Arc::new(tool));
        }
    }

    /// Adds a plugin's tool. A name another plugin already provides is
    /// refused (and kept, see [`Registry::allow_replace`]) unless
    /// `may_replace` (the user's config) or the config allowed that name.
    pub fn register_tool(&self, tool: RegisteredTool, may_replace: bool) -> Result<(), Clash> {
        let name = tool.spec().name.clone();
        let allowed = may_replace || self.replace_allowed(&name);
        let Ok(mut items) = self.items.write() else {
            return Ok(());
        };
        if let Some(old) = items.tools.get(&name)
            && old.plugin() != tool.plugin()
            && !allowed
        {
            let clash = Clash {
                tool: name,
                plugin: tool.plugin().to_string(),
                provider: old.plugin().to_string(),
            };
            tracing::warn!("{clash}");
            items.refused.push((clash.clone(), Arc::new(tool)));
            return Err(clash);
        }
        install(&mut items, Arc::new(tool));
        Ok(())
    }

    fn replace_allowed(&self, name: &str) -> bool {
        self.replaceable
            .read()
            .map(|names| names.contains(name))
            .unwrap_or(false)
    }

    /// Lets plugins replace the tools `names` (the user's config says so):
    /// later registrations replace them, and registrations refused so far
    /// are put in now. Returns the names put in.
    pub fn allow_replace(&self, names: &[String]) -> Vec<String> {
        if let Ok(mut replaceable) = self.replaceable.write() {
            replaceable.extend(names.iter().cloned());
        }
        let Ok(mut items) = self.items.write() else {
            return Vec::new();
        };
        let (now, still): (Vec<_>, Vec<_>) = std::mem::take(&mut items.refused)
            .into_iter()
            .partition(|(clash, _)| names.contains(&clash.tool));
        items.refused = still;
        now.into_iter()
            .map(|(clash, tool)| {
                install(&mut items, tool);
                clash.tool
            })
            .collect()
    }

    /// Registrations refused because another plugin provides the tool.
    pub fn clashes(&self) -> Vec<Clash> {
        self.items
            .read()
            .map(|items| items.refused.iter().map(|(c, _)| c.clone()).collect())
            .unwrap_or_default()
    }

    /// The plugin whose tool `name` replaced, if it replaced one.
    pub fn replaced_from(&self, name: &str) -> Option<String> {
        self.items.read().ok()?.replaced.get(name).cloned()
    }

    /// Removes a tool; true if it existed.
    pub fn remove_tool(&self, name: &str) -> bool {
        self.items
            .write()
            .map(|mut items| {
                items.replaced.remove(name);
                items.tools.remove(name).is_some()
            })
            .unwrap_or(false)
    }

    pub fn tool(&self, name: &str) -> Option<Arc<RegisteredTool>> {
        self.items.read().ok()?.tools.get(name).cloned()
    }

    /// Every tool, sorted by name.
    pub fn tools(&self) -> Vec<Arc<RegisteredTool>> {
        self.items
            .read()
            .map(|items| items.tools.values().cloned().collect())
            .unwrap_or_default()
    }

    pub fn tool_specs(&self) -> Vec<ToolSpec> {
        self.tools().iter().map(|t| t.spec().clone()).collect()
    }

    // ---- wires, frontends, commands ----------------------------------------

    pub fn add_wire(&self, wire: RegisteredWire) {
        if let Ok(mut items) = self.items.write() {
            items.wires.insert(wire.name().to_string(), Arc::new(wire));
        }
    }

    /// The wire `name`, opening the plugin that provides it if it is only
    /// pending.
    pub fn wire(&self, name: &str) -> Option<Arc<RegisteredWire>> {
        let loaded = |registry: &Registry| registry.items.read().ok()?.wires.get(name).cloned();
        loaded(self).or_else(|| {
            self.open_pending(Need::Wire(name));
            loaded(self)
        })
    }

    /// The wires registered, without pending ones.
    pub fn wires(&self) -> Vec<Arc<RegisteredWire>> {
        self.items
            .read()
            .map(|items| items.wires.values().cloned().collect())
            .unwrap_or_default()
    }

    /// Every wire a session can use: registered or pending.
    pub fn wire_names(&self) -> Vec<String> {
        let mut names: BTreeSet<String> =
            self.wires().iter().map(|w| w.name().to_string()).collect();
        if let Ok(pending) = self.pending.read() {
            names.extend(pending.wires.iter().cloned());
        }
        names.into_iter().collect()
    }

    pub fn add_frontend(&self, frontend: RegisteredFrontend) {
        if let Ok(mut items) = self.items.write() {
            items
                .frontends
                .insert(frontend.name().to_string(), Arc::new(frontend));
        }
    }

    /// The frontend `name`, opening the plugin that provides it if it is
    /// only pending.
    pub fn frontend(&self, name: &str) -> Option<Arc<RegisteredFrontend>> {
        let loaded = |registry: &Registry| registry.items.read().ok()?.frontends.get(name).cloned();
        loaded(self).or_else(|| {
            self.open_pending(Need::Frontend(name));
            loaded(self)
        })
    }

    /// Every frontend a session can run: registered or pending.
    pub fn frontend_names(&self) -> Vec<String> {
        let mut names: BTreeSet<String> = self
            .frontends()
            .iter()
            .map(|f| f.name().to_string())
            .collect();
        if let Ok(pending) = self.pending.read() {
            names.extend(pending.frontends.iter().cloned());
        }
        names.into_iter().collect()
    }

    /// Lists `needs` as available before their plugins are opened:
    /// `opener` opens the one providing a need the first time a lookup
    /// misses it. Listing (`wire.list`) shows them; removing one
    /// (`wire.remove`) means it is never opened.
    pub fn defer(&self, needs: &[Need<'_>], opener: Opener) {
        let Ok(mut pending) = self.pending.write() else {
            return;
        };
        for need in needs {
            let (list, name) = pending.list(*need);
            list.insert(name.to_string());
        }
        pending.opener = Some(opener);
    }

    /// Takes a need off the pending list (its plugin is shadowed by one
    /// that already loaded).
    pub fn undefer(&self, need: Need<'_>) {
        if let Ok(mut pending) = self.pending.write() {
            pending.take(need);
        }
    }

    /// Opens the plugin behind a pending need, once; the lookup that follows
    /// finds what it registered. The opener must not look up a pending need
    /// itself: `opening` is held while it runs (the shipped on-demand
    /// plugins only register).
    fn open_pending(&self, need: Need<'_>) {
        let _one_at_a_time = self.opening.lock().unwrap_or_else(|e| e.into_inner());
        let opener = {
            let Ok(mut pending) = self.pending.write() else {
                return;
            };
            if !pending.take(need) {
                return;
            }
            pending.opener.clone()
        };
        if let Some(open) = opener {
            open(self, need);
        }
    }

    pub fn frontends(&self) -> Vec<Arc<RegisteredFrontend>> {
        self.items
            .read()
            .map(|items| items.frontends.values().cloned().collect())
            .unwrap_or_default()
    }

    pub fn add_command(&self, command: RegisteredCommand) {
        if let Ok(mut items) = self.items.write() {
            items
                .commands
                .insert(command.name().to_string(), Arc::new(command));
        }
        // Called with the lock released: the sink reads the commands.
        let sink = self.commands_sink.read().ok().and_then(|s| s.clone());
        if let Some(sink) = sink {
            sink();
        }
    }

    /// Calls `sink` after every command added from now on, so a running
    /// session can tell its frontend (`commands_changed`).
    pub fn set_commands_sink(&self, sink: CommandsSink) {
        if let Ok(mut slot) = self.commands_sink.write() {
            *slot = Some(sink);
        }
    }

    pub fn command(&self, name: &str) -> Option<Arc<RegisteredCommand>> {
        self.items.read().ok()?.commands.get(name).cloned()
    }

    pub fn commands(&self) -> Vec<Arc<RegisteredCommand>> {
        self.items
            .read()
            .map(|items| items.commands.values().cloned().collect())
            .unwrap_or_default()
    }

    // ---- hooks -------------------------------------------------------------

    /// Adds a handler. Handlers run lowest priority first; a handler with the
    /// same name on the same event replaces the old one.
    pub fn add_hook(&self, hook: RegisteredHook) {
        if let Ok(mut items) = self.items.write() {
            let list = items.hooks.entry(hook.event().to_string()).or_default();
            if let Some(name) = hook.options().name.as_deref() {
                list.retain(|h| h.options().name.as_deref() != Some(name));
            }
            list.push(Arc::new(hook));
            // Stable: equal priorities keep registration order.
            list.sort_by_key(|h| h.options().priority);
        }
    }

    /// Removes the named handler of `event`; true if it existed.
    pub fn remove_hook(&self, event: &str, name: &str) -> bool {
        let Ok(mut items) = self.items.write() else {
            return false;
        };
        let Some(list) = items.hooks.get_mut(event) else {
            return false;
        };
        let before = list.len();
        list.retain(|h| h.options().name.as_deref() != Some(name));
        before != list.len()
    }

    /// The handlers of `event`, in the order they run.
    pub fn hooks(&self, event: &str) -> Vec<Arc<RegisteredHook>> {
        self.items
            .read()
            .ok()
            .and_then(|items| items.hooks.get(event).cloned())
            .unwrap_or_default()
    }

    // ---- per plugin --------------------------------------------------------

    /// What `plugin` currently provides.
    pub fn provided_by(&self, plugin: &str) -> Provided {
        let Ok(items) = self.items.read() else {
            return Provided::default();
        };
        let names = |it: &mut dyn Iterator<Item = (&String, &str)>| -> Vec<String> {
            it.filter(|(_, p)| *p == plugin)
                .map(|(n, _)| n.clone())
                .collect()
        };
        let mut hooks: Vec<String> = items
            .hooks
            .iter()
            .filter(|(_, list)| list.iter().any(|h| h.plugin() == plugin))
            .map(|(event, _)| event.clone())
            .collect();
        hooks.dedup();
        Provided {
            tools: names(&mut items.tools.iter().map(|(n, t)| (n, t.plugin()))),
            wires: names(&mut items.wires.iter().map(|(n, w)| (n, w.plugin()))),
            frontends: names(&mut items.frontends.iter().map(|(n, f)| (n, f.plugin()))),
            hooks,
            commands: names(&mut items.commands.iter().map(|(n, c)| (n, c.plugin()))),
            services: names(&mut items.services.iter().map(|(n, s)| (n, s.plugin()))),
        }
    }

    /// Removes everything `plugin` registered (its init failed during a
    /// session: other threads may have registered meanwhile, so the
    /// registry is not rolled back as a whole).
    pub fn forget_plugin(&self, plugin: &str) {
        let Ok(mut items) = self.items.write() else {
            return;
        };
        items.tools.retain(|_, t| t.plugin() != plugin);
        items.wires.retain(|_, w| w.plugin() != plugin);
        items.frontends.retain(|_, f| f.plugin() != plugin);
        items.commands.retain(|_, c| c.plugin() != plugin);
        items.services.retain(|_, s| s.plugin() != plugin);
        for list in items.hooks.values_mut() {
            list.retain(|h| h.plugin() != plugin);
        }
    }

    /// What is registered now, to go back to if a plugin's init fails.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot(
            self.items
                .read()
                .map(|items| items.clone())
                .unwrap_or_default(),
        )
    }

    /// Puts back what was registered at `snapshot`: a plugin whose init
    /// failed leaves no trace, and what it replaced comes back.
    pub fn restore(&self, snapshot: Snapshot) {
        if let Ok(mut items) = self.items.write() {
            *items = snapshot.0;
        }
    }

    /// Removes a wire; true if it existed.
    pub fn remove_wire(&self, name: &str) -> bool {
        // After an open in progress, so a wire removed while its plugin
        // opens is removed, not left to appear.
        let _after_opening = self.opening.lock().unwrap_or_else(|e| e.into_inner());
        let pending = self
            .pending
            .write()
            .map(|mut pending| pending.take(Need::Wire(name)))
            .unwrap_or(false);
        let registered = self
            .items
            .write()
            .map(|mut items| items.wires.remove(name).is_some())
            .unwrap_or(false);
        pending || registered
    }

    /// Runs the handlers of `event` in order with `payload` (the event name
    /// is added as `event`), returning each handler's answer. A failing
    /// handler becomes a notice and does not stop the others.
    pub fn emit(&self, event: &str, payload: Value) -> Vec<Value> {
        let mut payload = match payload {
            Value::Object(map) => map,
            Value::Null => serde_json::Map::new(),
            other => {
                let mut map = serde_json::Map::new();
                map.insert("value".to_string(), other);
                map
            }
        };
        payload.insert("event".to_string(), Value::String(event.to_string()));
        let payload = Value::Object(payload);
        let mut answers = Vec::new();
        for hook in self.hooks(event) {
            match hook.call(&payload) {
                Ok(answer) => answers.push(answer),
                Err(e) => self.notify("uji", &format!("{event} handler failed: {e}")),
            }
        }
        answers
    }

    /// Offers the registry itself to plugins: `wire.list`, `wire.remove`,
    /// `hook.remove` (`uji.off`), `emit` (`uji.emit`), `keymap.add`,
    /// `keymap.list` and `config.set`.
    pub fn install_services(&self) {
        let registry = self.clone();
        self.serve(move |_: WireList| Ok(registry.wire_names()));
        let registry = self.clone();
        self.serve(move |request: WireRemove| Ok(registry.remove_wire(&request.name)));
        let registry = self.clone();
        self.serve(move |request: HookRemove| {
            Ok(registry.remove_hook(&request.event, &request.name))
        });
        let registry = self.clone();
        self.serve(move |request: Emit| Ok(registry.emit(&request.event, request.payload)));
        // Key bindings are kept for whichever interactive frontend runs.
        let registry = self.clone();
        self.serve(move |binding: KeymapAdd| registry.add_binding(binding));
        let registry = self.clone();
        self.serve(move |_: KeymapList| Ok(registry.keymap()));
        let registry = self.clone();
        self.serve(move |request: ConfigSet| {
            registry.set_config(&request.key, request.value);
            Ok(())
        });
        self.install_allow_replace();
    }

    /// `plugins.allow_replace`, for the user's config alone: a plugin must
    /// not lift the rule that protects other plugins' tools from it.
    fn install_allow_replace(&self) {
        let registry = self.clone();
        self.add_service(
            PluginsAllowReplace::METHOD,
            Arc::new(move |plugin, params| {
                if plugin != CONFIG_PLUGIN {
                    // The caller's side names the method.
                    return Err(
                        "only the user's config (init.lua) may allow replacing tools".to_string(),
                    );
                }
                let request = services::decode_params::<PluginsAllowReplace>(params)
                    .map_err(|e| e.to_string())?;
                let replaced = registry.allow_replace(&request.names);
                serde_json::to_value(replaced).map_err(|e| e.to_string())
            }),
        );
    }

    /// `keymap.add`: keeps `binding` with its canonical mode and key,
    /// replacing one for the same key; a null binding removes it (so the
    /// default applies again).
    fn add_binding(&self, mut binding: KeymapAdd) -> Result<(), String> {
        let mode = keymap::canonical_mode(&binding.mode).ok_or_else(|| {
            format!(
                "no mode named {:?}; the modes are {}",
                binding.mode,
                keymap::MODES.join(", ")
            )
        })?;
        binding.mode = mode.to_string();
        binding.key = keymap::normalize_key(&binding.key).map_err(|e| e.to_string())?;
        let mut list = self.keymap();
        list.retain(|b| !(b.mode == binding.mode && b.key == binding.key));
        if !binding.binding.is_null() {
            list.push(binding);
        }
        let list = serde_json::to_value(list).map_err(|e| format!("keymap.add: {e}"))?;
        self.set_config("keymap", list);
        Ok(())
    }

    /// The key bindings plugins added (`keymap.add`).
    pub fn keymap(&self) -> Vec<KeymapAdd> {
        self.config("keymap")
            .and_then(|list| serde_json::from_value(list).ok())
            .unwrap_or_default()
    }

    // ---- services, config, notices, log -------------------------------------

    /// Offers the typed service `S`: its parameters are decoded into `S`
    /// (an error names the method and the expected shape) and the handler's
    /// answer is encoded as `S::Answer`, so both sides share one definition.
    pub fn serve<S, F>(&self, handler: F)
    where
        S: services::Service,
        F: Fn(S) -> Result<S::Answer, String> + Send + Sync + 'static,
    {
        self.add_service(
            S::METHOD,
            Arc::new(move |_plugin, params| {
                let request = services::decode_params::<S>(params).map_err(|e| e.to_string())?;
                let answer = handler(request)?;
                serde_json::to_value(answer).map_err(|e| format!("{}: {e}", S::METHOD))
            }),
        );
    }

    /// Calls the typed service `S` through its JSON form, exactly as a
    /// plugin's `Host::call` does (for core's own callers and tests).
    pub fn call<S: services::Service>(
        &self,
        plugin: &str,
        request: &S,
    ) -> Result<S::Answer, String> {
        let params = serde_json::to_value(request).map_err(|e| format!("{}: {e}", S::METHOD))?;
        let answer = self.call_service(plugin, S::METHOD, params)?;
        serde_json::from_value(answer).map_err(|e| format!("{}: bad answer: {e}", S::METHOD))
    }

    /// Offers a host service to plugins under `method` (e.g. `tool.disable`).
    /// Prefer [`Registry::serve`] for services with a type in
    /// `uji_protocol::services`.
    pub fn add_service(&self, method: &str, service: Service) {
        if let Ok(mut services) = self.services.write() {
            services.insert(method.to_string(), service);
        }
    }

    /// Serves a plugin's host service. Core's services and another
    /// plugin's are not replaced; a plugin may serve its own again.
    pub fn register_service(&self, service: RegisteredService) -> Result<(), String> {
        let method = service.method().to_string();
        if self.core_service(&method).is_some() {
            return Err(format!(
                "uji itself serves {method:?}; a plugin cannot replace a host service of uji's"
            ));
        }
        let mut items = self.items.write().map_err(|e| e.to_string())?;
        if let Some(served) = items.services.get(&method)
            && served.plugin() != service.plugin()
        {
            return Err(format!(
                "{method:?} is already served by plugin {}; one method has one server",
                served.plugin()
            ));
        }
        items.services.insert(method, Arc::new(service));
        Ok(())
    }

    fn core_service(&self, method: &str) -> Option<Service> {
        self.services
            .read()
            .ok()
            .and_then(|services| services.get(method).cloned())
    }

    fn plugin_service(&self, method: &str) -> Option<Arc<RegisteredService>> {
        self.items
            .read()
            .ok()
            .and_then(|items| items.services.get(method).cloned())
    }

    /// Whether core or a plugin serves `method` now.
    pub fn serves(&self, method: &str) -> bool {
        self.core_service(method).is_some() || self.plugin_service(method).is_some()
    }

    /// Calls a host service on behalf of `plugin`: core's, else the one a
    /// plugin serves.
    pub fn call_service(&self, plugin: &str, method: &str, params: Value) -> Result<Value, String> {
        if let Some(service) = self.core_service(method) {
            return service(plugin, params);
        }
        match self.plugin_service(method) {
            Some(service) => service.call(plugin, &params),
            None => Err(format!("{} {method:?}", services::NO_SUCH_SERVICE)),
        }
    }

    pub fn set_config(&self, key: &str, value: Value) {
        if let Ok(mut config) = self.config.write() {
            config.insert(key.to_string(), value);
        }
    }

    pub fn config(&self, key: &str) -> Option<Value> {
        self.config.read().ok()?.get(key).cloned()
    }

    /// Shows a notice: to the sink a frontend installed, else kept for later.
    pub fn notify(&self, source: &str, text: &str) {
        self.notify_at(NoticeLevel::Info, source, text);
    }

    /// Like [`Registry::notify`], at `level`.
    pub fn notify_at(&self, level: NoticeLevel, source: &str, text: &str) {
        // Kept in the log too: a frontend may show a notice only briefly.
        match level {
            NoticeLevel::Error => tracing::error!(source, "notice: {text}"),
            NoticeLevel::Warn => tracing::warn!(source, "notice: {text}"),
            NoticeLevel::Info => tracing::info!(source, "notice: {text}"),
        }
        let notice = Notice {
            source: source.to_string(),
            text: text.to_string(),
            level,
        };
        let sink = self.notice_sink.read().ok().and_then(|s| s.clone());
        match sink {
            Some(sink) => sink(&notice),
            None => {
                if let Ok(mut notices) = self.notices.lock() {
                    notices.push(notice);
                }
            }
        }
    }

    /// Routes notices to `sink`, first delivering the ones kept so far.
    pub fn set_notice_sink(&self, sink: Arc<dyn Fn(&Notice) + Send + Sync>) {
        let pending = self
            .notices
            .lock()
            .map(|mut n| std::mem::take(&mut *n))
            .unwrap_or_default();
        for notice in &pending {
            sink(notice);
        }
        if let Ok(mut slot) = self.notice_sink.write() {
            *slot = Some(sink);
        }
    }

    /// Notices kept because no sink was installed.
    pub fn take_notices(&self) -> Vec<Notice> {
        self.notices
            .lock()
            .map(|mut n| std::mem::take(&mut *n))
            .unwrap_or_default()
    }

    /// A plugin's log line, as a `tracing` event with target `plugin` and
    /// the plugin's name in the `plugin` field.
    pub fn log(&self, level: LogLevel, plugin: &str, message: &str) {
        match level {
            LogLevel::Debug => tracing::debug!(target: "plugin", plugin, "{message}"),
            LogLevel::Info => tracing::info!(target: "plugin", plugin, "{message}"),
            LogLevel::Warn => tracing::warn!(target: "plugin", plugin, "{message}"),
            LogLevel::Error => tracing::error!(target: "plugin", plugin, "{message}"),
        }
    }
}

/// Puts `tool` in, noting which plugin's tool it replaces.
fn install(items: &mut Items, tool: Arc<RegisteredTool>) {
    let name = tool.spec().name.clone();
    if let Some(old) = items.tools.get(&name)
        && old.plugin() != tool.plugin()
    {
        tracing::info!(
            "tool {name} from plugin {} replaced by plugin {}",
            old.plugin(),
            tool.plugin()
        );
        items
            .replaced
            .insert(name.clone(), old.plugin().to_string());
    }
    items.tools.insert(name, tool);
}

/// Options for a hook when the plugin sent none or bad ones.
pub(crate) fn parse_hook_options(json: &str) -> Result<HookOptions, String> {
    if json.trim().is_empty() {
        return Ok(HookOptions::default());
    }
    serde_json::from_str(json).map_err(|e| format!("invalid hook options: {e}"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    /// A registry with the gemini wire and the tui frontend pending, and a
    /// count of the opener's calls (it registers nothing).
    fn deferred() -> (Registry, Arc<AtomicUsize>) {
        let registry = Registry::new();
        let opened = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&opened);
        registry.defer(
            &[Need::Wire("gemini"), Need::Frontend("tui")],
            Arc::new(move |_: &Registry, _: Need<'_>| {
                count.fetch_add(1, Ordering::SeqCst);
            }),
        );
        (registry, opened)
    }

    #[test]
    fn a_pending_need_is_listed_and_opened_once_on_the_first_miss() {
        let (registry, opened) = deferred();
        assert_eq!(registry.wire_names(), ["gemini"]);
        assert_eq!(registry.frontend_names(), ["tui"]);
        assert!(registry.wire("gemini").is_none());
        assert!(registry.wire("gemini").is_none());
        assert_eq!(opened.load(Ordering::SeqCst), 1, "opened once");
        assert!(registry.wire("other").is_none());
        assert_eq!(opened.load(Ordering::SeqCst), 1, "only pending needs open");
        assert!(registry.frontend("tui").is_none());
        assert_eq!(opened.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn an_undeferred_need_is_neither_listed_nor_opened() {
        let (registry, opened) = deferred();
        registry.undefer(Need::Wire("gemini"));
        assert!(registry.wire_names().is_empty());
        assert!(registry.wire("gemini").is_none());
        assert_eq!(opened.load(Ordering::SeqCst), 0);
        assert_eq!(registry.frontend_names(), ["tui"], "the others stay");
    }

    #[test]
    fn a_removed_pending_wire_is_never_opened() {
        let (registry, opened) = deferred();
        assert!(registry.remove_wire("gemini"));
        assert!(registry.wire_names().is_empty());
        assert!(registry.wire("gemini").is_none());
        assert_eq!(opened.load(Ordering::SeqCst), 0);
        assert!(!registry.remove_wire("gemini"));
    }
}
