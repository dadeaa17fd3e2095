//! Keys: terminal key events as canonical key names (`<C-x>`, `<S-CR>`,
//! `y`), and the keymap that turns them into actions per mode.

use std::collections::HashMap;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde_json::Value;
use uji_protocol::keymap::{self, Key, NamedKey};

/// Where the keys go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    Normal,
    Suggest,
    Select,
    Confirm,
}

impl Mode {
    fn from_name(name: &str) -> Option<Mode> {
        match name {
            "normal" | "insert" => Some(Mode::Normal),
            "suggest" => Some(Mode::Suggest),
            "select" => Some(Mode::Select),
            "confirm" => Some(Mode::Confirm),
            _ => None,
        }
    }
}

/// What a key does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Binding {
    Action(String),
    /// A slash command (a Lua function bound to a key is one too).
    Command(String),
}

/// The effective keymap: uji's defaults with the config's bindings on top.
#[derive(Debug, Default)]
pub struct Keymap {
    map: HashMap<(Mode, String), Binding>,
}

impl Keymap {
    /// `user` is `session_configured.keymap` (from `uji.keymap.add`).
    pub fn new(user: &[Value]) -> Keymap {
        let user: Vec<uji_protocol::services::KeymapAdd> = user
            .iter()
            .filter_map(|v| serde_json::from_value(v.clone()).ok())
            .collect();
        let mut map = HashMap::new();
        for binding in keymap::effective(&user) {
            let (Some(mode), Ok(key)) = (
                Mode::from_name(&binding.mode),
                keymap::normalize_key(&binding.key),
            ) else {
                continue;
            };
            let bound = match &binding.binding {
                Value::String(action) if action == "nothing" => continue,
                Value::String(action) => Binding::Action(action.clone()),
                other => match other["command"].as_str() {
                    Some(command) => Binding::Command(command.to_string()),
                    None => continue,
                },
            };
            map.insert((mode, key), bound);
        }
        Keymap { map }
    }

    pub fn lookup(&self, mode: Mode, key: &str) -> Option<&Binding> {
        self.map.get(&(mode, key.to_string()))
    }

    /// A key bound to `action` in `mode`, written for people
    /// (`Shift+Tab`); the shortest when several are, none when unbound.
    pub fn key_for(&self, mode: Mode, action: &str) -> Option<String> {
        self.map
            .iter()
            .filter(|((m, _), b)| *m == mode && **b == Binding::Action(action.to_string()))
            .map(|((_, key), _)| key)
            .min_by_key(|key| (key.len(), key.as_str()))
            .map(|key| display(key))
    }
}

/// A canonical key name as people write it: `<S-Tab>` is `Shift+Tab`,
/// `<C-g>` is `Ctrl+G`.
pub fn display(canonical: &str) -> String {
    let Some(inner) = canonical
        .strip_prefix('<')
        .and_then(|k| k.strip_suffix('>'))
    else {
        return canonical.to_string();
    };
    let mut rest = inner;
    let mut out = String::new();
    for (prefix, name) in [("C-", "Ctrl+"), ("A-", "Alt+"), ("S-", "Shift+")] {
        if let Some(after) = rest.strip_prefix(prefix) {
            out.push_str(name);
            rest = after;
        }
    }
    let key = match rest {
        "CR" => "Enter".to_string(),
        "BS" => "Backspace".to_string(),
        "lt" => "<".to_string(),
        "gt" => ">".to_string(),
        one if one.chars().count() == 1 => one.to_uppercase(),
        other => other.to_string(),
    };
    out.push_str(&key);
    out
}

/// The canonical name of a key event, as `uji.keymap.add` spells it; none
/// for keys uji has no name for.
pub fn canonical(event: &KeyEvent) -> Option<String> {
    let mods = event.modifiers;
    let code = match event.code {
        KeyCode::Char(c) => keymap::KeyCode::Char(c),
        KeyCode::Enter => named(NamedKey::Enter),
        KeyCode::Esc => named(NamedKey::Esc),
        KeyCode::Backspace => named(NamedKey::Backspace),
        KeyCode::Delete => named(NamedKey::Delete),
        KeyCode::Tab => named(NamedKey::Tab),
        KeyCode::BackTab => {
            let key = Key {
                shift: true,
                ..Key::plain(named(NamedKey::Tab))
            };
            return Some(key.canonical());
        }
        KeyCode::Up => named(NamedKey::Up),
        KeyCode::Down => named(NamedKey::Down),
        KeyCode::Left => named(NamedKey::Left),
        KeyCode::Right => named(NamedKey::Right),
        KeyCode::Home => named(NamedKey::Home),
        KeyCode::End => named(NamedKey::End),
        KeyCode::PageUp => named(NamedKey::PageUp),
        KeyCode::PageDown => named(NamedKey::PageDown),
        KeyCode::Insert => named(NamedKey::Insert),
        KeyCode::F(n) => named(NamedKey::F(n)),
        _ => return None,
    };
    Some(
        Key {
            code,
            ctrl: mods.contains(KeyModifiers::CONTROL),
            alt: mods.contains(KeyModifiers::ALT),
            shift: mods.contains(KeyModifiers::SHIFT),
        }
        .canonical(),
    )
}

fn named(key: NamedKey) -> keymap::KeyCode {
    keymap::KeyCode::Named(key)
}

/// The text a key types, when it types one (no Ctrl or Alt held).
pub fn typed_char(event: &KeyEvent) -> Option<char> {
    let mods = event.modifiers;
    if mods.contains(KeyModifiers::CONTROL) || mods.contains(KeyModifiers::ALT) {
        return None;
    }
    match event.code {
        KeyCode::Char(c) => Some(c),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_key_names_are_shown_as_people_write_them() {
        assert_eq!(display("<S-Tab>"), "Shift+Tab");
        assert_eq!(display("<C-g>"), "Ctrl+G");
        assert_eq!(display("<C-A-CR>"), "Ctrl+Alt+Enter");
        assert_eq!(display("<Esc>"), "Esc");
        assert_eq!(display("y"), "y");
    }

    #[test]
    fn the_key_for_an_action_follows_the_config() {
        let defaults = Keymap::new(&[]);
        assert_eq!(
            defaults.key_for(Mode::Normal, "cycle_mode").as_deref(),
            Some("Shift+Tab")
        );
        let user = [serde_json::json!({"mode": "normal", "key": "<C-t>", "binding": "cycle_mode"})];
        let mut keys = Keymap::new(&user);
        keys.map.remove(&(Mode::Normal, "<S-Tab>".to_string()));
        assert_eq!(
            keys.key_for(Mode::Normal, "cycle_mode").as_deref(),
            Some("Ctrl+T")
        );
        assert_eq!(keys.key_for(Mode::Normal, "no_such_action"), None);
    }
}
