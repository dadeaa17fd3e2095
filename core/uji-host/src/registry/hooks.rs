//! Event handlers by event, in the order they run.

use std::collections::BTreeMap;
use std::sync::Arc;

use parking_lot::RwLock;

use crate::calls::RegisteredHook;

pub(super) type Hooks = BTreeMap<String, Vec<Arc<RegisteredHook>>>;

#[derive(Default)]
pub(super) struct HookTable {
    hooks: RwLock<Hooks>,
}

impl HookTable {
    /// Adds a handler. Handlers run lowest priority first; a handler with
    /// the same name on the same event replaces the old one.
    pub fn add(&self, hook: RegisteredHook) {
        let mut hooks = self.hooks.write();
        let list = hooks.entry(hook.event().to_string()).or_default();
        if let Some(name) = hook.options().name.as_deref() {
            list.retain(|h| h.options().name.as_deref() != Some(name));
        }
        list.push(Arc::new(hook));
        // Stable: equal priorities keep registration order.
        list.sort_by_key(|h| h.options().priority);
    }

    /// Removes the named handler of `event`; true if it existed.
    pub fn remove(&self, event: &str, name: &str) -> bool {
        let mut hooks = self.hooks.write();
        let Some(list) = hooks.get_mut(event) else {
            return false;
        };
        let before = list.len();
        list.retain(|h| h.options().name.as_deref() != Some(name));
        before != list.len()
    }

    /// The handlers of `event`, in the order they run.
    pub fn of_event(&self, event: &str) -> Vec<Arc<RegisteredHook>> {
        self.hooks.read().get(event).cloned().unwrap_or_default()
    }

    /// The events `plugin` handles.
    pub fn of_plugin(&self, plugin: &str) -> Vec<String> {
        let hooks = self.hooks.read();
        let handled = hooks
            .iter()
            .filter(|(_, list)| list.iter().any(|h| h.plugin() == plugin));
        handled.map(|(event, _)| event.clone()).collect()
    }

    pub fn forget_plugin(&self, plugin: &str) {
        for list in self.hooks.write().values_mut() {
            list.retain(|h| h.plugin() != plugin);
        }
    }

    pub fn snapshot(&self) -> Hooks {
        self.hooks.read().clone()
    }

    pub fn restore(&self, snapshot: Hooks) {
        *self.hooks.write() = snapshot;
    }
}
