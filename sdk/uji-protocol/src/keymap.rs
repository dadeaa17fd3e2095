//! Key bindings as data: the modes, the actions, the default keymap, the
//! key syntax and the effective keymap (defaults overlaid by the user's
//! bindings). Shared by the Lua plugin (`uji.keymap.*`), the host and the
//! TUI, so every side reads keys the same way. No terminal crate here: a
//! frontend turns its key events into a [`Key`] and compares
//! [`Key::canonical`] strings.
//!
//! # Key syntax
//!
//! A key is one character (`y`, `?`, `Y`) or `<MODIFIERS-KEY>`: the
//! modifiers `C-` (Ctrl), `A-` or `M-` (Alt, the same thing) and `S-`
//! (Shift), in any order and any case, then one character or a named key
//! (any case): `CR` (also `Enter`, `Return`), `Esc` (`Escape`), `BS`
//! (`Backspace`), `Del` (`Delete`), `Tab`, `Up`, `Down`, `Left`, `Right`,
//! `Home`, `End`, `PageUp`, `PageDown`, `Insert`, `Space`, `lt` (`<`),
//! `gt` (`>`), `F1`–`F12`.
//!
//! # Canonical form
//!
//! Every key has exactly one canonical string ([`normalize_key`],
//! [`Key::canonical`]):
//! - modifiers are written in the order `C-`, `A-`, `S-` (`<C-A-S-Left>`);
//!   `M-` becomes `A-`;
//! - named keys are written `CR`, `Esc`, `BS`, `Del`, `Tab`, `Up`, `Down`,
//!   `Left`, `Right`, `Home`, `End`, `PageUp`, `PageDown`, `Insert`,
//!   `Space`, `lt`, `gt`, `F1`…`F12`, and keep every modifier (`<S-Tab>`);
//! - a printable character ignores Shift: the terminal already applied it
//!   to the character (some report `?` with Shift, some without). So
//!   `<S-?>` is `?`, `<S-1>` is `1`, `<S-Space>` is `<Space>`;
//! - a letter without Ctrl carries Shift in its case: `<S-y>`, `<S-Y>` and
//!   `Y` are all `Y`; `<A-S-y>` is `<A-Y>`;
//! - a letter with Ctrl is lower case, whatever case it was written in
//!   (`<C-X>` is `<C-x>`); only an explicit `S-` adds Shift (`<C-S-x>`);
//! - a character alone is written alone (`y`); with a modifier, or for
//!   space, `<` and `>`, it is written in brackets (`<A-x>`, `<Space>`,
//!   `<lt>`, `<gt>`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::services::KeymapAdd;

/// The modes a binding belongs to: `normal` (the input box), `suggest`
/// (the slash-command list is open), `select` (a picker is open) and
/// `confirm` (an approval question is open).
pub const MODES: &[&str] = &["normal", "suggest", "select", "confirm"];

/// The mode older configs called `insert`: the same as `normal`.
pub const INSERT_ALIAS: &str = "insert";

/// The mode `name` stands for: itself when it is one of [`MODES`],
/// `normal` for `insert`.
pub fn canonical_mode(name: &str) -> Option<&'static str> {
    if name == INSERT_ALIAS {
        return Some("normal");
    }
    MODES.iter().copied().find(|m| *m == name)
}

/// Every action a key can be bound to: (name, what it does).
pub const ACTIONS: &[(&str, &str)] = &[
    ("nothing", "Do nothing (binding it unbinds the key)"),
    ("quit", "Leave uji"),
    (
        "clear_or_quit",
        "Clear the draft (kept in history) or stop what runs; pressed again within 2 s, leave uji",
    ),
    (
        "interrupt",
        "Stop the running turn; with nothing running and the draft empty, pressed twice, pick an earlier message to edit",
    ),
    (
        "background",
        "Send the running command to the background (the turn goes on)",
    ),
    ("submit", "Send the message"),
    ("clear_input", "Empty the input box"),
    ("insert_newline", "Start a new line in the input box"),
    ("backspace", "Delete the character before the cursor"),
    ("delete_forward", "Delete the character under the cursor"),
    ("delete_word_back", "Delete the word before the cursor"),
    ("delete_word_forward", "Delete the word after the cursor"),
    ("delete_to_start", "Delete to the start of the line"),
    ("delete_to_end", "Delete to the end of the line"),
    ("yank", "Insert the text deleted last"),
    ("transpose", "Swap the two characters around the cursor"),
    ("cursor_left", "Move the cursor one character left"),
    ("cursor_right", "Move the cursor one character right"),
    ("cursor_up", "Move the cursor one line up"),
    ("cursor_down", "Move the cursor one line down"),
    ("cursor_start", "Move the cursor to the start of the line"),
    ("cursor_end", "Move the cursor to the end of the line"),
    ("word_left", "Move the cursor one word left"),
    ("word_right", "Move the cursor one word right"),
    ("history_prev", "Recall the previous message sent"),
    ("history_next", "Recall the next message sent"),
    ("scroll_up", "Scroll the transcript up a line"),
    ("scroll_down", "Scroll the transcript down a line"),
    ("page_up", "Scroll up a page"),
    ("page_down", "Scroll down a page"),
    ("scroll_top", "Scroll to the start of the transcript"),
    ("scroll_bottom", "Scroll to the end of the transcript"),
    ("toggle_details", "Expand or fold tool output"),
    ("toggle_thinking", "Show or hide the model's thinking"),
    (
        "cycle_mode",
        "Switch the approval mode: ask, accept edits, plan",
    ),
    (
        "edit_in_editor",
        "Edit the draft in $VISUAL or $EDITOR and bring it back",
    ),
    ("history_search", "Search the messages sent before"),
    (
        "paste_image",
        "Attach the clipboard's image to the draft (its text when it holds no image)",
    ),
    (
        "rewind",
        "Pick an earlier message of yours to edit and send again from there (Esc Esc)",
    ),
    (
        "suggest_complete",
        "Complete the highlighted command or @ path",
    ),
    ("modal_up", "Highlight the previous item"),
    ("modal_down", "Highlight the next item"),
    ("modal_accept", "Choose the highlighted item"),
    ("modal_cancel", "Close the list or picker"),
    ("modal_delete", "Delete the highlighted item"),
    ("confirm_allow", "Allow this call once"),
    (
        "confirm_allow_session",
        "Allow such calls for the rest of the session",
    ),
    (
        "confirm_deny",
        "Deny this call and tell uji what to do instead",
    ),
    ("confirm_stop", "Deny this call and end the turn here"),
];

/// The action that unbinds a key.
pub const UNBIND: &str = "nothing";

/// Whether `name` is one of [`ACTIONS`].
pub fn is_action(name: &str) -> bool {
    ACTIONS.iter().any(|(a, _)| *a == name)
}

/// Actions whose name is close to `name` (a typo, a part of the name),
/// closest first, at most three.
pub fn similar_actions(name: &str) -> Vec<&'static str> {
    let wanted = name.to_ascii_lowercase();
    let mut close: Vec<(usize, &'static str)> = ACTIONS
        .iter()
        .filter_map(|(action, _)| {
            let distance = edit_distance(&wanted, action);
            let related =
                wanted.len() >= 3 && (action.contains(&wanted) || wanted.contains(action));
            (distance <= 2 || related).then_some((distance, *action))
        })
        .collect();
    close.sort();
    close.into_iter().take(3).map(|(_, a)| a).collect()
}

/// Levenshtein distance by characters: how close a misspelt name (an
/// action here, a spec field in the Lua plugin) is to a known one.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

/// Expands `[modes] key => action;` lines into (mode, key, action) rows.
macro_rules! keymap_table {
    ($( [$($mode:literal),+] $key:literal => $action:literal; )*) => {
        &[ $( $( ($mode, $key, $action), )+ )* ]
    };
}

/// The default keymap: (mode, canonical key, action). Plan mode's `<C-b>`
/// and `/effort`'s `<A-e>` are added by the shipped Lua defaults
/// (lua/uji/planmode.lua, lua/uji/defaults.lua), not here. No key has two
/// meanings in one mode.
pub const DEFAULTS: &[(&str, &str, &str)] = keymap_table! {
    ["normal", "suggest", "select", "confirm"] "<C-c>" => "clear_or_quit";
    ["normal"] "<CR>" => "submit";
    ["normal"] "<S-CR>" => "insert_newline";
    ["normal"] "<A-CR>" => "insert_newline";
    ["normal"] "<C-j>" => "insert_newline";
    ["normal"] "<Esc>" => "interrupt";
    ["normal"] "<C-z>" => "background";
    ["normal", "suggest"] "<Left>" => "cursor_left";
    ["normal", "suggest"] "<Right>" => "cursor_right";
    ["normal", "suggest"] "<C-f>" => "cursor_right";
    ["normal"] "<Up>" => "cursor_up";
    ["normal"] "<Down>" => "cursor_down";
    ["normal", "suggest"] "<C-a>" => "cursor_start";
    ["normal", "suggest"] "<Home>" => "cursor_start";
    ["normal", "suggest"] "<C-e>" => "cursor_end";
    ["normal", "suggest"] "<End>" => "cursor_end";
    ["normal", "suggest"] "<A-b>" => "word_left";
    ["normal", "suggest"] "<C-Left>" => "word_left";
    ["normal", "suggest"] "<A-f>" => "word_right";
    ["normal", "suggest"] "<C-Right>" => "word_right";
    ["normal", "suggest", "select"] "<BS>" => "backspace";
    ["normal", "suggest", "select"] "<C-h>" => "backspace";
    ["normal", "suggest"] "<Del>" => "delete_forward";
    ["normal", "suggest"] "<C-d>" => "delete_forward";
    ["normal", "suggest", "select"] "<C-w>" => "delete_word_back";
    ["normal", "suggest", "select"] "<A-BS>" => "delete_word_back";
    ["normal", "suggest"] "<A-d>" => "delete_word_forward";
    ["normal", "suggest", "select"] "<C-u>" => "delete_to_start";
    ["normal", "suggest"] "<C-k>" => "delete_to_end";
    ["normal", "suggest"] "<C-y>" => "yank";
    ["normal", "suggest"] "<C-t>" => "transpose";
    ["normal"] "<C-p>" => "history_prev";
    ["normal"] "<C-n>" => "history_next";
    ["normal"] "<S-Up>" => "scroll_up";
    ["normal"] "<S-Down>" => "scroll_down";
    ["normal", "select", "confirm"] "<PageUp>" => "page_up";
    ["normal", "select", "confirm"] "<PageDown>" => "page_down";
    ["normal"] "<C-Home>" => "scroll_top";
    ["normal"] "<C-End>" => "scroll_bottom";
    ["normal"] "<C-o>" => "toggle_details";
    ["normal"] "<C-l>" => "clear_input";
    ["normal"] "<S-Tab>" => "cycle_mode";
    ["normal"] "<C-g>" => "edit_in_editor";
    ["normal"] "<C-v>" => "paste_image";
    ["normal"] "<C-r>" => "history_search";
    ["suggest"] "<Tab>" => "suggest_complete";
    ["suggest", "select", "confirm"] "<Up>" => "modal_up";
    ["suggest", "select", "confirm"] "<C-p>" => "modal_up";
    ["suggest", "select", "confirm"] "<Down>" => "modal_down";
    ["suggest", "select", "confirm"] "<C-n>" => "modal_down";
    ["suggest", "select", "confirm"] "<CR>" => "modal_accept";
    ["suggest", "select"] "<Esc>" => "modal_cancel";
    ["suggest", "select"] "<C-g>" => "modal_cancel";
    ["select"] "<C-d>" => "modal_delete";
    ["confirm"] "y" => "confirm_allow";
    ["confirm"] "a" => "confirm_allow_session";
    ["confirm"] "n" => "confirm_deny";
    ["confirm"] "<Esc>" => "confirm_stop";
};

/// One binding of the effective keymap.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Binding {
    pub mode: String,
    /// The canonical key.
    pub key: String,
    /// An action name (a JSON string) or `{"command": name}`.
    pub binding: Value,
    /// `"default"` (from [`DEFAULTS`]) or `"user"` (added by the config or
    /// a plugin).
    pub source: String,
}

/// The keymap in force: [`DEFAULTS`] overlaid by `user`'s bindings in
/// order. A user binding replaces the one with the same mode and canonical
/// key; binding the action `nothing` unbinds the key. Modes are read with
/// [`canonical_mode`] and keys with [`normalize_key`]; a binding whose mode
/// or key does not read is left out (`uji.keymap.add` refuses those).
/// Sorted by mode, then key (byte order).
pub fn effective(user: &[KeymapAdd]) -> Vec<Binding> {
    let mut map: Vec<Binding> = DEFAULTS
        .iter()
        .map(|(mode, key, action)| Binding {
            mode: (*mode).to_string(),
            key: (*key).to_string(),
            binding: Value::String((*action).to_string()),
            source: "default".to_string(),
        })
        .collect();
    for add in user {
        let (Some(mode), Ok(key)) = (canonical_mode(&add.mode), normalize_key(&add.key)) else {
            continue;
        };
        map.retain(|b| !(b.mode == mode && b.key == key));
        if add.binding.as_str() != Some(UNBIND) {
            map.push(Binding {
                mode: mode.to_string(),
                key,
                binding: add.binding.clone(),
                source: "user".to_string(),
            });
        }
    }
    map.sort_by(|a, b| (&a.mode, &a.key).cmp(&(&b.mode, &b.key)));
    map
}

/// A key that is not a character.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NamedKey {
    Enter,
    Esc,
    Backspace,
    Delete,
    Tab,
    Up,
    Down,
    Left,
    Right,
    Home,
    End,
    PageUp,
    PageDown,
    Insert,
    /// F1 to F12.
    F(u8),
}

/// Named keys with their canonical names (F-keys apart).
const NAMES: &[(NamedKey, &str)] = &[
    (NamedKey::Enter, "CR"),
    (NamedKey::Esc, "Esc"),
    (NamedKey::Backspace, "BS"),
    (NamedKey::Delete, "Del"),
    (NamedKey::Tab, "Tab"),
    (NamedKey::Up, "Up"),
    (NamedKey::Down, "Down"),
    (NamedKey::Left, "Left"),
    (NamedKey::Right, "Right"),
    (NamedKey::Home, "Home"),
    (NamedKey::End, "End"),
    (NamedKey::PageUp, "PageUp"),
    (NamedKey::PageDown, "PageDown"),
    (NamedKey::Insert, "Insert"),
];

/// Other spellings of named keys.
const ALIASES: &[(&str, NamedKey)] = &[
    ("Enter", NamedKey::Enter),
    ("Return", NamedKey::Enter),
    ("Escape", NamedKey::Esc),
    ("Backspace", NamedKey::Backspace),
    ("Delete", NamedKey::Delete),
];

/// Characters written by name: (character, canonical name).
const CHAR_NAMES: &[(char, &str)] = &[(' ', "Space"), ('<', "lt"), ('>', "gt")];

/// The highest function key the syntax accepts.
pub const MAX_F: u8 = 12;

impl NamedKey {
    /// The canonical name (`CR`, `PageUp`, `F5`).
    pub fn name(self) -> String {
        match self {
            NamedKey::F(n) => format!("F{n}"),
            other => NAMES
                .iter()
                .find(|(k, _)| *k == other)
                .map(|(_, n)| (*n).to_string())
                .unwrap_or_default(),
        }
    }

    /// Every named key, F-keys included.
    pub fn all() -> Vec<NamedKey> {
        let mut keys: Vec<NamedKey> = NAMES.iter().map(|(k, _)| *k).collect();
        keys.extend((1..=MAX_F).map(NamedKey::F));
        keys
    }
}

/// What was pressed, without the modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyCode {
    /// A character, as the terminal reports it (`Y`, `?`, ` `).
    Char(char),
    Named(NamedKey),
}

/// A key with its modifiers, independent of any terminal library.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    pub code: KeyCode,
    pub ctrl: bool,
    pub alt: bool,
    pub shift: bool,
}

impl Key {
    /// A key without modifiers.
    pub fn plain(code: KeyCode) -> Key {
        Key {
            code,
            ctrl: false,
            alt: false,
            shift: false,
        }
    }

    /// The same key in canonical shape (see the module docs): control
    /// characters become named keys, Shift folds into printable characters.
    pub fn normalized(self) -> Key {
        let mut key = self;
        if let KeyCode::Char(c) = key.code
            && let Some(named) = control_char(c)
        {
            key.code = KeyCode::Named(named);
        }
        if let KeyCode::Char(c) = key.code {
            key.code = KeyCode::Char(fold_case(c, key.ctrl, key.shift));
            // Ctrl+letter keeps an explicit Shift; everything else printable
            // carries Shift in the character.
            key.shift = key.shift && key.ctrl && has_case(c);
        }
        key
    }

    /// The one string this key is written as (`<C-x>`, `Y`, `<S-Tab>`).
    pub fn canonical(&self) -> String {
        let key = self.normalized();
        let name = match key.code {
            KeyCode::Named(named) => named.name(),
            KeyCode::Char(c) => match CHAR_NAMES.iter().find(|(ch, _)| *ch == c) {
                Some((_, name)) => (*name).to_string(),
                None if !(key.ctrl || key.alt || key.shift) => return c.to_string(),
                None => c.to_string(),
            },
        };
        let mut out = String::from("<");
        for (on, prefix) in [(key.ctrl, "C-"), (key.alt, "A-"), (key.shift, "S-")] {
            if on {
                out.push_str(prefix);
            }
        }
        out.push_str(&name);
        out.push('>');
        out
    }
}

/// The named key a control character stands for.
fn control_char(c: char) -> Option<NamedKey> {
    match c {
        '\r' | '\n' => Some(NamedKey::Enter),
        '\t' => Some(NamedKey::Tab),
        '\u{1b}' => Some(NamedKey::Esc),
        '\u{7f}' | '\u{8}' => Some(NamedKey::Backspace),
        _ => None,
    }
}

/// Whether `c` has an upper and a lower case form.
fn has_case(c: char) -> bool {
    single(c.to_lowercase()) != single(c.to_uppercase())
}

fn single(mut chars: impl Iterator<Item = char>) -> Option<char> {
    let first = chars.next()?;
    chars.next().is_none().then_some(first)
}

/// A letter's canonical case: lower with Ctrl, upper when shifted.
fn fold_case(c: char, ctrl: bool, shift: bool) -> char {
    if !has_case(c) {
        return c;
    }
    let lower = single(c.to_lowercase()).unwrap_or(c);
    let upper = single(c.to_uppercase()).unwrap_or(c);
    if ctrl {
        lower
    } else if shift || c == upper {
        upper
    } else {
        lower
    }
}

/// What [`parse_key`] accepts, quoted in every [`KeyError`].
pub const KEY_SYNTAX: &str = "a key is one character (y, ?, Y) or <MODIFIERS-KEY> with modifiers C- (Ctrl), A- or M- (Alt), S- (Shift) and KEY one character or one of CR, Esc, BS, Del, Tab, Up, Down, Left, Right, Home, End, PageUp, PageDown, Insert, Space, lt, gt, F1-F12; e.g. <C-x>, <A-CR>, <S-Tab>";

/// Why a key spec does not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    #[error("the key is empty; {KEY_SYNTAX}")]
    Empty,
    #[error(
        "{0:?} is not a key: write named keys and modifiers in brackets, e.g. <CR> or <C-x>; {KEY_SYNTAX}"
    )]
    NotOneChar(String),
    #[error("{0:?} is not a key: the < has no closing >; {KEY_SYNTAX}")]
    Unclosed(String),
    #[error(
        "{spec:?} is not a key: {modifier}- is not a modifier (use C-, A- or M-, S-); {KEY_SYNTAX}"
    )]
    UnknownModifier { spec: String, modifier: String },
    #[error("{spec:?} is not a key: the modifier {modifier}- is given twice; {KEY_SYNTAX}")]
    Repeated { spec: String, modifier: String },
    #[error("{spec:?} is not a key: no key named {name:?}; {KEY_SYNTAX}")]
    UnknownName { spec: String, name: String },
    #[error(
        "{spec:?} is not a key: a control character; write it by name, e.g. <Tab> or <CR>; {KEY_SYNTAX}"
    )]
    ControlChar { spec: String },
}

/// Reads a key spec (see the module docs for the syntax).
pub fn parse_key(spec: &str) -> Result<Key, KeyError> {
    let mut chars = spec.chars();
    match (chars.next(), chars.next()) {
        (None, _) => Err(KeyError::Empty),
        (Some(c), None) => char_key(spec, c),
        (Some('<'), Some(_)) => bracketed(spec),
        _ => Err(KeyError::NotOneChar(spec.to_string())),
    }
}

/// `spec`'s canonical string ([`Key::canonical`] of [`parse_key`]).
pub fn normalize_key(spec: &str) -> Result<String, KeyError> {
    parse_key(spec).map(|key| key.canonical())
}

fn char_key(spec: &str, c: char) -> Result<Key, KeyError> {
    if c.is_control() {
        return Err(KeyError::ControlChar {
            spec: spec.to_string(),
        });
    }
    Ok(Key::plain(KeyCode::Char(c)))
}

/// `<MODIFIERS-KEY>`.
fn bracketed(spec: &str) -> Result<Key, KeyError> {
    let inner = spec
        .strip_prefix('<')
        .and_then(|s| s.strip_suffix('>'))
        .filter(|s| !s.is_empty())
        .ok_or_else(|| KeyError::Unclosed(spec.to_string()))?;
    let mut key = Key::plain(KeyCode::Char(' '));
    let mut rest = inner;
    // A modifier is one letter and a dash with something after it, so
    // `<C-->` is Ctrl and `-`.
    while let Some((letter, tail)) = modifier_prefix(rest) {
        let slot = match letter.to_ascii_uppercase() {
            'C' => &mut key.ctrl,
            'A' | 'M' => &mut key.alt,
            'S' => &mut key.shift,
            other => {
                return Err(KeyError::UnknownModifier {
                    spec: spec.to_string(),
                    modifier: other.to_string(),
                });
            }
        };
        if *slot {
            return Err(KeyError::Repeated {
                spec: spec.to_string(),
                modifier: letter.to_ascii_uppercase().to_string(),
            });
        }
        *slot = true;
        rest = tail;
    }
    key.code = key_code(spec, rest)?;
    Ok(key)
}

/// `X-rest` with an ASCII letter X and a non-empty rest.
fn modifier_prefix(text: &str) -> Option<(char, &str)> {
    let mut chars = text.chars();
    let letter = chars.next().filter(char::is_ascii_alphabetic)?;
    let tail = chars.as_str().strip_prefix('-')?;
    (!tail.is_empty()).then_some((letter, tail))
}

fn key_code(spec: &str, name: &str) -> Result<KeyCode, KeyError> {
    let mut chars = name.chars();
    if let (Some(c), None) = (chars.next(), chars.next()) {
        return char_key(spec, c).map(|k| k.code);
    }
    let named = NAMES
        .iter()
        .map(|(k, n)| (*n, *k))
        .chain(ALIASES.iter().copied())
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, k)| KeyCode::Named(k));
    let char_named = CHAR_NAMES
        .iter()
        .find(|(_, n)| n.eq_ignore_ascii_case(name))
        .map(|(c, _)| KeyCode::Char(*c));
    let function = name
        .strip_prefix(['F', 'f'])
        .and_then(|n| n.parse::<u8>().ok())
        .filter(|n| (1..=MAX_F).contains(n) && !name[1..].starts_with('0'))
        .map(|n| KeyCode::Named(NamedKey::F(n)));
    named
        .or(char_named)
        .or(function)
        .ok_or_else(|| KeyError::UnknownName {
            spec: spec.to_string(),
            name: name.to_string(),
        })
}

#[cfg(test)]
mod tests;
