#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use serde_json::json;

fn with_modifiers(code: KeyCode) -> Vec<Key> {
    let mut keys = Vec::new();
    for bits in 0..8u8 {
        keys.push(Key {
            code,
            ctrl: bits & 1 != 0,
            alt: bits & 2 != 0,
            shift: bits & 4 != 0,
        });
    }
    keys
}

#[test]
fn every_named_key_with_every_modifier_round_trips() {
    for named in NamedKey::all() {
        for key in with_modifiers(KeyCode::Named(named)) {
            let text = key.canonical();
            assert_eq!(parse_key(&text), Ok(key), "{text}");
            assert_eq!(normalize_key(&text).as_deref(), Ok(text.as_str()));
        }
    }
}

#[test]
fn characters_with_every_modifier_have_one_canonical_string() {
    for c in ['a', 'Y', '?', '1', '-', ' ', '<', '>', 'é', 'Ж'] {
        for key in with_modifiers(KeyCode::Char(c)) {
            let text = key.canonical();
            let back = parse_key(&text).unwrap();
            assert_eq!(back.canonical(), text, "{key:?}");
            assert_eq!(back, key.normalized(), "{key:?}");
        }
    }
}

#[test]
fn spellings_of_one_key_share_its_canonical_string() {
    let cases = [
        ("<C-X>", "<C-x>"),
        ("<c-x>", "<C-x>"),
        ("<C-S-X>", "<C-S-x>"),
        ("<S-C-x>", "<C-S-x>"),
        ("<M-x>", "<A-x>"),
        ("<A-S-y>", "<A-Y>"),
        ("<S-A-C-Left>", "<C-A-S-Left>"),
        ("<S-y>", "Y"),
        ("<S-Y>", "Y"),
        ("Y", "Y"),
        ("<y>", "y"),
        ("<S-?>", "?"),
        ("<S-1>", "1"),
        ("<S-Space>", "<Space>"),
        (" ", "<Space>"),
        ("<space>", "<Space>"),
        ("<", "<lt>"),
        ("<LT>", "<lt>"),
        ("<gt>", "<gt>"),
        ("<C-->", "<C-->"),
        ("<Enter>", "<CR>"),
        ("<return>", "<CR>"),
        ("<cr>", "<CR>"),
        ("<Escape>", "<Esc>"),
        ("<Backspace>", "<BS>"),
        ("<Delete>", "<Del>"),
        ("<pageup>", "<PageUp>"),
        ("<S-Tab>", "<S-Tab>"),
        ("<f12>", "<F12>"),
    ];
    for (spec, canonical) in cases {
        assert_eq!(normalize_key(spec).as_deref(), Ok(canonical), "{spec}");
    }
}

#[test]
fn a_terminal_reporting_shift_with_a_printable_character_gives_the_plain_string() {
    let shifted = |c| Key {
        code: KeyCode::Char(c),
        ctrl: false,
        alt: false,
        shift: true,
    };
    assert_eq!(shifted('?').canonical(), "?");
    assert_eq!(shifted('Y').canonical(), "Y");
    assert_eq!(Key::plain(KeyCode::Char('Y')).canonical(), "Y");
    assert_eq!(Key::plain(KeyCode::Char('\r')).canonical(), "<CR>");
    assert_eq!(Key::plain(KeyCode::Char('\t')).canonical(), "<Tab>");
}

#[test]
fn bad_specs_say_what_is_wrong_and_show_the_syntax() {
    let cases = [
        ("", "the key is empty"),
        (
            "ab",
            "\"ab\" is not a key: write named keys and modifiers in brackets",
        ),
        (
            "CR",
            "\"CR\" is not a key: write named keys and modifiers in brackets",
        ),
        ("<C-x", "the < has no closing >"),
        ("<>", "the < has no closing >"),
        ("<X-a>", "X- is not a modifier (use C-, A- or M-, S-)"),
        ("<C-C-x>", "the modifier C- is given twice"),
        ("<A-M-x>", "the modifier M- is given twice"),
        ("<Foo>", "no key named \"Foo\""),
        ("<F13>", "no key named \"F13\""),
        ("<F0>", "no key named \"F0\""),
        ("<C-Entr>", "no key named \"Entr\""),
        ("\t", "a control character; write it by name"),
    ];
    for (spec, expected) in cases {
        let message = parse_key(spec).unwrap_err().to_string();
        assert!(message.contains(expected), "{spec:?}: {message}");
        assert!(message.ends_with(KEY_SYNTAX), "{spec:?}: {message}");
    }
}

#[test]
fn the_defaults_are_canonical_known_and_unambiguous() {
    let mut seen = std::collections::HashSet::new();
    for (mode, key, action) in DEFAULTS {
        assert!(MODES.contains(mode), "{mode}");
        assert_eq!(normalize_key(key).as_deref(), Ok(*key));
        assert!(is_action(action), "{action}");
        assert!(seen.insert((*mode, *key)), "{key} twice in {mode}");
    }
    for mode in MODES {
        assert!(
            DEFAULTS.contains(&(mode, "<C-c>", "clear_or_quit")),
            "{mode}"
        );
    }
    assert!(!DEFAULTS.iter().any(|(_, key, _)| *key == "<C-b>"));
}

fn add(mode: &str, key: &str, binding: serde_json::Value) -> KeymapAdd {
    KeymapAdd {
        mode: mode.to_string(),
        key: key.to_string(),
        binding,
    }
}

fn find<'a>(map: &'a [Binding], mode: &str, key: &str) -> Option<&'a Binding> {
    map.iter().find(|b| b.mode == mode && b.key == key)
}

#[test]
fn user_bindings_replace_defaults_and_nothing_unbinds() {
    let map = effective(&[
        add("insert", "<c-L>", json!("submit")),
        add("normal", "<C-o>", json!("nothing")),
        add("normal", "<C-b>", json!({"command": "plan"})),
        add("nowhere", "<C-x>", json!("quit")),
        add("normal", "<Bad>", json!("quit")),
    ]);
    let replaced = find(&map, "normal", "<C-l>").unwrap();
    assert_eq!(replaced.binding, json!("submit"));
    assert_eq!(replaced.source, "user");
    assert!(find(&map, "normal", "<C-o>").is_none());
    assert_eq!(
        find(&map, "normal", "<C-b>").unwrap().binding,
        json!({"command": "plan"})
    );
    let quit = find(&map, "select", "<C-c>").unwrap();
    assert_eq!(
        (quit.binding.clone(), quit.source.as_str()),
        (json!("clear_or_quit"), "default")
    );
    assert_eq!(
        map.len(),
        DEFAULTS.len(),
        "one replaced, one removed, one added"
    );
    let order: Vec<(String, String)> = map
        .iter()
        .map(|b| (b.mode.clone(), b.key.clone()))
        .collect();
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(order, sorted);
}

#[test]
fn close_action_names_are_suggested() {
    assert_eq!(similar_actions("sumbit"), ["submit"]);
    assert!(similar_actions("scroll").contains(&"scroll_up"));
    assert!(similar_actions("zzzzzz").is_empty());
}

const MODE_TEXT: &[(&str, &str)] = &[
    ("normal", "the input box"),
    ("suggest", "the slash-command list is open"),
    ("select", "a picker is open"),
    ("confirm", "an approval question is open"),
];

/// The default keymap as docs/lua.md shows it: a table per mode, the keys
/// of one action on one row.
fn doc_table() -> String {
    let mut out = String::new();
    for (mode, text) in MODE_TEXT {
        out.push_str(&format!(
            "**{mode}** ({text}):\n\n| Keys | Action |\n|---|---|\n"
        ));
        let mut rows: Vec<(&str, Vec<String>)> = Vec::new();
        for (_, key, action) in DEFAULTS.iter().filter(|(m, _, _)| m == mode) {
            let key = format!("`{key}`");
            match rows.iter_mut().find(|(a, _)| a == action) {
                Some((_, keys)) => keys.push(key),
                None => rows.push((action, vec![key])),
            }
        }
        for (action, keys) in rows {
            out.push_str(&format!("| {} | `{action}` |\n", keys.join(" ")));
        }
        out.push('\n');
    }
    out
}

#[test]
fn docs_lua_md_shows_the_default_keymap() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/lua.md");
    let doc = std::fs::read_to_string(path).unwrap();
    let start = "<!-- default keymap: generated from uji_protocol::keymap::DEFAULTS -->\n";
    let end = "<!-- end of the default keymap -->";
    let shown = doc
        .split_once(start)
        .and_then(|(_, rest)| rest.split_once(end))
        .map(|(table, _)| table.trim().to_string());
    let expected = doc_table();
    assert_eq!(
        shown.as_deref(),
        Some(expected.trim()),
        "docs/lua.md must show DEFAULTS between the markers; the table is:\n{start}{expected}{end}"
    );
    for (mode, _) in MODE_TEXT {
        assert!(MODES.contains(mode));
    }
    assert_eq!(MODE_TEXT.len(), MODES.len());
}
