//! Everything plugins provide, keyed by name, with the plugin that
//! provided it: one table per kind, each with its own lock, and the
//! `Registry` handle over them.
//!
//! | table | holds |
//! |---|---|
//! | [`tools`] | tools, what a replacement replaced, refused clashes |
//! | [`named`] | wires, frontends (and the pending ones), slash commands |
//! | [`hooks`] | event handlers, in the order they run |
//! | [`services`] | core's host services and the ones plugins serve |
//! | [`notices`] | notices for the user, kept until a frontend takes them |
//! | [`settings`] | configuration values and key bindings |
//!
//! Every item holds its plugin's shared [`PluginState`]: once a plugin
//! panics it is marked failed, and every later call to anything it
//! registered returns an error at once. Locks are `parking_lot`'s: none can
//! be poisoned, so no table ever skips work because another thread
//! panicked.

mod hooks;
mod named;
mod notices;
mod plugin;
mod services;
mod settings;
mod tools;

use std::sync::Arc;

use serde_json::Value;
use uji_protocol::frontend::NoticeLevel;
use uji_protocol::services::{self as protocol_services, KeymapAdd};
use uji_protocol::{HookOptions, LogLevel, ToolSpec};

use crate::calls::{
    RegisteredCommand, RegisteredFrontend, RegisteredHook, RegisteredService, RegisteredTool,
    RegisteredWire,
};

pub use named::{CommandsSink, Need, Opener};
pub use notices::{Notice, NoticeSink};
pub use plugin::PluginState;
pub use services::{CORE_CALLER, Service};
pub use tools::Clash;

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

/// The registrations at one moment (see [`Registry::snapshot`]).
pub struct Snapshot {
    tools: tools::Tools,
    named: named::Named,
    hooks: hooks::Hooks,
    served: services::Served,
}

#[derive(Default)]
struct Tables {
    tools: tools::ToolTable,
    named: named::NamedTable,
    hooks: hooks::HookTable,
    services: services::ServiceTable,
    notices: notices::Notices,
    settings: settings::Settings,
}

/// The shared registry. Cheap to clone (an `Arc`).
#[derive(Clone, Default)]
pub struct Registry(Arc<Tables>);

impl Registry {
    pub fn new() -> Registry {
        Registry::default()
    }

    // ---- tools -------------------------------------------------------------

    /// Adds a plugin's tool. A name another plugin already provides is
    /// refused (and kept, see [`Registry::allow_replace`]) unless
    /// `may_replace` (the user's config) or the config allowed that name.
    pub fn register_tool(&self, tool: RegisteredTool, may_replace: bool) -> Result<(), Clash> {
        self.0.tools.register(tool, may_replace)
    }

    /// Lets plugins replace the tools `names` (the user's config says so):
    /// later registrations replace them, and registrations refused so far
    /// are put in now. Returns the names put in.
    pub fn allow_replace(&self, names: &[String]) -> Vec<String> {
        self.0.tools.allow_replace(names)
    }

    /// Registrations refused because another plugin provides the tool.
    pub fn clashes(&self) -> Vec<Clash> {
        self.0.tools.clashes()
    }

    /// The plugin whose tool `name` replaced, if it replaced one.
    pub fn replaced_from(&self, name: &str) -> Option<String> {
        self.0.tools.replaced_from(name)
    }

    /// Removes a tool; true if it existed.
    pub fn remove_tool(&self, name: &str) -> bool {
        self.0.tools.remove(name)
    }

    pub fn tool(&self, name: &str) -> Option<Arc<RegisteredTool>> {
        self.0.tools.get(name)
    }

    /// Every tool, sorted by name.
    pub fn tools(&self) -> Vec<Arc<RegisteredTool>> {
        self.0.tools.all()
    }

    pub fn tool_specs(&self) -> Vec<ToolSpec> {
        self.0.tools.specs()
    }

    // ---- wires, frontends, commands ----------------------------------------

    pub fn add_wire(&self, wire: RegisteredWire) {
        self.0.named.add_wire(wire);
    }

    /// The wire `name`, opening the plugin that provides it if it is only
    /// pending.
    pub fn wire(&self, name: &str) -> Option<Arc<RegisteredWire>> {
        self.0.named.wire(name).or_else(|| {
            self.0.named.open_pending(self, Need::Wire(name));
            self.0.named.wire(name)
        })
    }

    /// Every wire a session can use: registered or pending.
    pub fn wire_names(&self) -> Vec<String> {
        self.0.named.wire_names()
    }

    /// Removes a wire; true if it existed (registered or pending).
    pub fn remove_wire(&self, name: &str) -> bool {
        self.0.named.remove_wire(name)
    }

    pub fn add_frontend(&self, frontend: RegisteredFrontend) {
        self.0.named.add_frontend(frontend);
    }

    /// The frontend `name`, opening the plugin that provides it if it is
    /// only pending.
    pub fn frontend(&self, name: &str) -> Option<Arc<RegisteredFrontend>> {
        self.0.named.frontend(name).or_else(|| {
            self.0.named.open_pending(self, Need::Frontend(name));
            self.0.named.frontend(name)
        })
    }

    /// Every frontend a session can run: registered or pending.
    pub fn frontend_names(&self) -> Vec<String> {
        self.0.named.frontend_names()
    }

    /// Lists `needs` as available before their plugins are opened:
    /// `opener` opens the one providing a need the first time a lookup
    /// misses it. Listing (`wire.list`) shows them; removing one
    /// (`wire.remove`) means it is never opened.
    pub fn defer(&self, needs: &[Need<'_>], opener: Opener) {
        self.0.named.defer(needs, opener);
    }

    /// Takes a need off the pending list (its plugin is shadowed by one
    /// that already loaded).
    pub fn undefer(&self, need: Need<'_>) {
        self.0.named.undefer(need);
    }

    pub fn add_command(&self, command: RegisteredCommand) {
        self.0.named.add_command(command);
    }

    /// Calls `sink` after every command added from now on, so a running
    /// session can tell its frontend (`commands_changed`).
    pub fn set_commands_sink(&self, sink: CommandsSink) {
        self.0.named.set_commands_sink(sink);
    }

    /// Command `name`; a pending plugin providing `/name` (with its
    /// `name.*` services) is opened on the first lookup that misses it.
    pub fn command(&self, name: &str) -> Option<Arc<RegisteredCommand>> {
        self.0.named.command(name).or_else(|| {
            if !self.0.named.services_pending(name) {
                return None;
            }
            self.0.named.open_pending(self, Need::Services(name));
            self.0.named.command(name)
        })
    }

    pub fn remove_command(&self, name: &str) -> bool {
        self.0.named.remove_command(name)
    }

    pub fn commands(&self) -> Vec<Arc<RegisteredCommand>> {
        self.0.named.commands()
    }

    // ---- hooks -------------------------------------------------------------

    /// Adds a handler. Handlers run lowest priority first; a handler with the
    /// same name on the same event replaces the old one.
    pub fn add_hook(&self, hook: RegisteredHook) {
        self.0.hooks.add(hook);
    }

    /// Removes the named handler of `event`; true if it existed.
    pub fn remove_hook(&self, event: &str, name: &str) -> bool {
        self.0.hooks.remove(event, name)
    }

    /// The handlers of `event`, in the order they run.
    pub fn hooks(&self, event: &str) -> Vec<Arc<RegisteredHook>> {
        self.0.hooks.of_event(event)
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

    // ---- per plugin --------------------------------------------------------

    /// What `plugin` currently provides.
    pub fn provided_by(&self, plugin: &str) -> Provided {
        let [wires, frontends, commands] = self.0.named.of_plugin(plugin);
        Provided {
            tools: self.0.tools.of_plugin(plugin),
            wires,
            frontends,
            hooks: self.0.hooks.of_plugin(plugin),
            commands,
            services: self.0.services.of_plugin(plugin),
        }
    }

    /// Removes everything `plugin` registered (its init failed during a
    /// session: other threads may have registered meanwhile, so the
    /// registry is not rolled back as a whole).
    pub fn forget_plugin(&self, plugin: &str) {
        self.0.tools.forget_plugin(plugin);
        self.0.named.forget_plugin(plugin);
        self.0.hooks.forget_plugin(plugin);
        self.0.services.forget_plugin(plugin);
    }

    /// What is registered now, to go back to if a plugin's init fails.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            tools: self.0.tools.snapshot(),
            named: self.0.named.snapshot(),
            hooks: self.0.hooks.snapshot(),
            served: self.0.services.snapshot(),
        }
    }

    /// Puts back what was registered at `snapshot`: a plugin whose init
    /// failed leaves no trace, and what it replaced comes back.
    pub fn restore(&self, snapshot: Snapshot) {
        self.0.tools.restore(snapshot.tools);
        self.0.named.restore(snapshot.named);
        self.0.hooks.restore(snapshot.hooks);
        self.0.services.restore(snapshot.served);
    }

    // ---- services ----------------------------------------------------------

    /// Offers the typed service `S`: its parameters are decoded into `S`
    /// (an error names the method and the expected shape) and the handler's
    /// answer is encoded as `S::Answer`, so both sides share one definition.
    pub fn serve<S, F>(&self, handler: F)
    where
        S: protocol_services::Service,
        F: Fn(S) -> Result<S::Answer, String> + Send + Sync + 'static,
    {
        self.add_service(
            S::METHOD,
            Arc::new(move |_plugin, params| {
                let request =
                    protocol_services::decode_params::<S>(params).map_err(|e| e.to_string())?;
                let answer = handler(request)?;
                serde_json::to_value(answer).map_err(|e| format!("{}: {e}", S::METHOD))
            }),
        );
    }

    /// Calls the typed service `S` through its JSON form, exactly as a
    /// plugin's `Host::call` does (for core's own callers and tests).
    pub fn call<S: protocol_services::Service>(
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
        self.0.services.add_core(method, service);
    }

    /// Serves a plugin's host service. Core's services and another
    /// plugin's are not replaced; a plugin may serve its own again.
    pub fn register_service(&self, service: RegisteredService) -> Result<(), String> {
        self.0.services.register(service)
    }

    /// Whether core or a plugin serves `method` now.
    pub fn serves(&self, method: &str) -> bool {
        self.open_services_of(method);
        self.0.services.serves(method)
    }

    /// Calls a host service on behalf of `plugin`: core's, else the one a
    /// plugin serves.
    pub fn call_service(&self, plugin: &str, method: &str, params: Value) -> Result<Value, String> {
        self.open_services_of(method);
        self.0.services.call(plugin, method, params)
    }

    /// Opens the pending plugin serving `<name>.*` when `method` is one of
    /// them and nobody serves it yet.
    fn open_services_of(&self, method: &str) {
        if let Some((name, _)) = method.split_once('.')
            && !self.0.services.serves(method)
            && self.0.named.services_pending(name)
        {
            self.0.named.open_pending(self, Need::Services(name));
        }
    }

    /// Opens pending plugins the way `workspace` asks for: a shipped
    /// plugin that a file of the workspace configures (the MCP plugin and
    /// a project's `.mcp.json`). Called as a session starts there.
    pub fn open_for_workspace(&self, workspace: &std::path::Path) {
        for (file, name) in crate::on_demand::WORKSPACE_FILES {
            if self.0.named.services_pending(name) && workspace.join(file).is_file() {
                self.0.named.open_pending(self, Need::Services(name));
            }
        }
    }

    // ---- config, notices, log ----------------------------------------------

    pub fn set_config(&self, key: &str, value: Value) {
        self.0.settings.set(key, value);
    }

    pub fn config(&self, key: &str) -> Option<Value> {
        self.0.settings.get(key)
    }

    /// The key bindings plugins added (`keymap.add`).
    pub fn keymap(&self) -> Vec<KeymapAdd> {
        self.0.settings.keymap()
    }

    /// Shows a notice: to the sink a frontend installed, else kept for later.
    pub fn notify(&self, source: &str, text: &str) {
        self.notify_at(NoticeLevel::Info, source, text);
    }

    /// Like [`Registry::notify`], at `level`.
    pub fn notify_at(&self, level: NoticeLevel, source: &str, text: &str) {
        self.0.notices.notify(level, source, text);
    }

    /// Routes notices to `sink`, first delivering the ones kept so far.
    pub fn set_notice_sink(&self, sink: NoticeSink) {
        self.0.notices.set_sink(sink);
    }

    /// Notices kept because no sink was installed.
    pub fn take_notices(&self) -> Vec<Notice> {
        self.0.notices.take()
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
