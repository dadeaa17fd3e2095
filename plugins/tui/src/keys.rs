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
