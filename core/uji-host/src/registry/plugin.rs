//! The health of one loaded plugin, shared by everything it registered.

use std::sync::Arc;

use parking_lot::Mutex;

/// Once a plugin panics it is marked failed, and every later call to
/// anything it registered returns an error at once instead of calling into
/// it again.
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
        self.failed.lock().clone()
    }

    /// Marks the plugin failed for the rest of the session. The first reason
    /// is kept: it is the one that explains the others.
    pub fn mark_failed(&self, reason: &str) {
        self.failed.lock().get_or_insert_with(|| reason.to_string());
    }
}
