//! Configuration values plugins and the config set (`config.set`), and the
//! key bindings kept among them for whichever interactive frontend runs.

use parking_lot::RwLock;
use serde_json::Value;
use uji_protocol::keymap;
use uji_protocol::services::KeymapAdd;

/// The config key the key bindings are kept under.
const KEYMAP_KEY: &str = "keymap";

#[derive(Default)]
pub(super) struct Settings {
    values: RwLock<serde_json::Map<String, Value>>,
}

impl Settings {
    pub fn set(&self, key: &str, value: Value) {
        self.values.write().insert(key.to_string(), value);
    }

    pub fn get(&self, key: &str) -> Option<Value> {
        self.values.read().get(key).cloned()
    }

    /// `keymap.add`: keeps `binding` with its canonical mode and key,
    /// replacing one for the same key; a null binding removes it (so the
    /// default applies again).
    pub fn add_binding(&self, mut binding: KeymapAdd) -> Result<(), String> {
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
        self.set(KEYMAP_KEY, list);
        Ok(())
    }

    /// The key bindings plugins added (`keymap.add`).
    pub fn keymap(&self) -> Vec<KeymapAdd> {
        self.get(KEYMAP_KEY)
            .and_then(|list| serde_json::from_value(list).ok())
            .unwrap_or_default()
    }
}
