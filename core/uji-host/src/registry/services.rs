//! Host services: core's own (closures over core's state) and the ones
//! plugins serve (ABI 1.1). One method has one server; core's come first.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use parking_lot::RwLock;
use serde_json::Value;
use uji_protocol::services::{
    self, CommandList, CommandRemove, ConfigSet, Emit, HookRemove, KeymapAdd, KeymapList,
    PluginsAllowReplace, Service as _, WireList, WireRemove,
};

use super::Registry;
use crate::calls::RegisteredService;
use crate::loader::CONFIG_PLUGIN;

/// The caller's name when core itself calls a host service.
pub const CORE_CALLER: &str = "uji";

/// A host service a plugin can call by name with JSON (`Host::call`).
pub type Service = Arc<dyn Fn(&str, Value) -> Result<Value, String> + Send + Sync>;

pub(super) type Served = BTreeMap<String, Arc<RegisteredService>>;

#[derive(Default)]
pub(super) struct ServiceTable {
    core: RwLock<HashMap<String, Service>>,
    /// Host services plugins serve, by method.
    served: RwLock<Served>,
}

impl ServiceTable {
    pub fn add_core(&self, method: &str, service: Service) {
        self.core.write().insert(method.to_string(), service);
    }

    /// Serves a plugin's host service. Core's services and another
    /// plugin's are not replaced; a plugin may serve its own again.
    pub fn register(&self, service: RegisteredService) -> Result<(), String> {
        let method = service.method().to_string();
        if self.core.read().contains_key(&method) {
            return Err(format!(
                "uji itself serves {method:?}; a plugin cannot replace a host service of uji's"
            ));
        }
        let mut served = self.served.write();
        if let Some(server) = served.get(&method)
            && server.plugin() != service.plugin()
        {
            return Err(format!(
                "{method:?} is already served by plugin {}; one method has one server",
                server.plugin()
            ));
        }
        served.insert(method, Arc::new(service));
        Ok(())
    }

    pub fn serves(&self, method: &str) -> bool {
        self.core.read().contains_key(method) || self.served.read().contains_key(method)
    }

    /// Calls `method` for `caller`: core's, else the one a plugin serves.
    /// No lock is held while the service runs (it may call others).
    pub fn call(&self, caller: &str, method: &str, params: Value) -> Result<Value, String> {
        let core = self.core.read().get(method).cloned();
        if let Some(service) = core {
            return service(caller, params);
        }
        let served = self.served.read().get(method).cloned();
        match served {
            Some(service) => service.call(caller, &params),
            None => Err(format!("{} {method:?}", services::NO_SUCH_SERVICE)),
        }
    }

    /// The methods `plugin` serves.
    pub fn of_plugin(&self, plugin: &str) -> Vec<String> {
        let served = self.served.read();
        let mine = served.iter().filter(|(_, s)| s.plugin() == plugin);
        mine.map(|(method, _)| method.clone()).collect()
    }

    pub fn forget_plugin(&self, plugin: &str) {
        self.served.write().retain(|_, s| s.plugin() != plugin);
    }

    pub fn snapshot(&self) -> Served {
        self.served.read().clone()
    }

    pub fn restore(&self, snapshot: Served) {
        *self.served.write() = snapshot;
    }
}

impl Registry {
    /// Offers the registry itself to plugins: `wire.list`, `wire.remove`,
    /// `hook.remove` (`uji.off`), `emit` (`uji.emit`), `keymap.add`,
    /// `keymap.list`, `config.set` and `plugins.allow_replace`.
    pub fn install_services(&self) {
        let registry = self.clone();
        self.serve(move |_: WireList| Ok(registry.wire_names()));
        let registry = self.clone();
        self.serve(move |request: WireRemove| Ok(registry.remove_wire(&request.name)));
        let registry = self.clone();
        self.serve(move |request: CommandRemove| Ok(registry.remove_command(&request.name)));
        let registry = self.clone();
        self.serve(move |_: CommandList| {
            let mut names: Vec<String> = registry
                .commands()
                .iter()
                .map(|c| c.name().to_string())
                .collect();
            names.sort();
            Ok(names)
        });
        let registry = self.clone();
        self.serve(move |request: HookRemove| {
            Ok(registry.remove_hook(&request.event, &request.name))
        });
        let registry = self.clone();
        self.serve(move |request: Emit| Ok(registry.emit(&request.event, request.payload)));
        // Key bindings are kept for whichever interactive frontend runs.
        let registry = self.clone();
        self.serve(move |binding: KeymapAdd| registry.0.settings.add_binding(binding));
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
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;
    use uji_abi::__private::TD_Opaque;
    use uji_abi::{Fault, HookBox, RResult, RStr, RString};

    use super::*;
    use crate::registry::PluginState;

    /// A served handler that answers `answer` with the caller's name.
    struct Answering(&'static str);

    impl uji_abi::Hook for Answering {
        fn call(&self, request: RStr<'_>) -> RResult<RString, Fault> {
            let request: services::ServiceRequest = serde_json::from_str(request.as_str()).unwrap();
            let answer =
                json!({"from": self.0, "caller": request.caller, "params": request.params});
            RResult::ROk(RString::from(answer.to_string()))
        }
    }

    fn served_by(plugin: &'static str, method: &str) -> RegisteredService {
        let handler = HookBox::from_value(Answering(plugin), TD_Opaque);
        RegisteredService::new(method.to_string(), handler, PluginState::new(plugin))
    }

    #[test]
    fn one_method_has_one_server_until_its_plugin_is_forgotten() {
        let registry = Registry::new();
        registry.register_service(served_by("a", "x.get")).unwrap();
        let refused = registry.register_service(served_by("b", "x.get"));
        assert_eq!(
            refused.unwrap_err(),
            "\"x.get\" is already served by plugin a; one method has one server"
        );
        let answer = registry
            .call_service("c", "x.get", json!({"n": 1}))
            .unwrap();
        assert_eq!(
            answer,
            json!({"from": "a", "caller": "c", "params": {"n": 1}})
        );
        registry.forget_plugin("a");
        assert!(!registry.serves("x.get"));
        registry.register_service(served_by("b", "x.get")).unwrap();
        assert_eq!(registry.provided_by("b").services, ["x.get"]);
    }

    #[test]
    fn a_restored_snapshot_drops_the_services_of_a_plugin_whose_init_failed() {
        let registry = Registry::new();
        let before = registry.snapshot();
        registry
            .register_service(served_by("broken", "x.get"))
            .unwrap();
        registry.restore(before);
        assert!(!registry.serves("x.get"));
        let e = registry
            .call_service("c", "x.get", Value::Null)
            .unwrap_err();
        assert_eq!(e, "uji has no host service named \"x.get\"");
    }

    #[test]
    fn core_serves_first_and_its_methods_cannot_be_taken() {
        let registry = Registry::new();
        registry.install_services();
        let refused = registry.register_service(served_by("a", "wire.list"));
        assert!(
            refused
                .unwrap_err()
                .starts_with("uji itself serves \"wire.list\"")
        );
        assert_eq!(
            registry
                .call_service("a", "wire.list", Value::Null)
                .unwrap(),
            json!([])
        );
    }
}
