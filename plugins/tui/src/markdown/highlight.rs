//! Code colouring with syntect on Oniguruma (a grammar's compiled regexes
//! take a fraction of the memory the pure-Rust engine's do, see
//! docs/benchmarks.md) and the grammars of two-face (syntect's own set
//! lacks TypeScript, TOML, Dockerfile, Kotlin, Swift, Zig…). Grammars load on the first code block that names a
//! language, or earlier through [`preload`]; colours are the terminal's own
//! ANSI palette, so code stays readable on light and dark backgrounds.

use std::sync::OnceLock;

use ratatui::style::{Color, Modifier, Style};
use syntect::highlighting::{
    Color as SynColor, FontStyle, HighlightIterator, HighlightState, Highlighter, ScopeSelectors,
    StyleModifier, Theme as SynTheme, ThemeItem, ThemeSettings,
};
use syntect::parsing::{ParseState, ScopeStack, SyntaxReference, SyntaxSet};

static SYNTAXES: OnceLock<SyntaxSet> = OnceLock::new();
static THEME: OnceLock<SynTheme> = OnceLock::new();
static HIGHLIGHTER: OnceLock<Highlighter<'static>> = OnceLock::new();

/// Alpha 1 marks "the terminal's default colour"; alpha 0 marks an ANSI
/// palette index kept in `r`.
const DEFAULT: SynColor = SynColor {
    r: 0,
    g: 0,
    b: 0,
    a: 1,
};

const fn ansi(index: u8) -> Option<SynColor> {
    Some(SynColor {
        r: index,
        g: 0,
        b: 0,
        a: 0,
    })
}

/// Scope selectors and the colour and font they get.
const RULES: &[(&str, Option<SynColor>, Option<FontStyle>)] = &[
    ("comment, punctuation.definition.comment", ansi(8), None),
    ("string, punctuation.definition.string", ansi(2), None),
    ("constant.character.escape, string.regexp", ansi(6), None),
    (
        "constant.numeric, constant.language, constant.character, constant.other",
        ansi(3),
        None,
    ),
    (
        "keyword, storage.type, storage.modifier, keyword.operator.word",
        ansi(5),
        None,
    ),
    ("keyword.operator, punctuation", Some(DEFAULT), None),
    (
        "entity.name.function, support.function, variable.function",
        ansi(4),
        None,
    ),
    (
        "entity.name.type, entity.name.class, entity.name.struct, entity.name.enum, \
         entity.name.trait, entity.name.interface, support.type, support.class, \
         entity.other.inherited-class, storage.type.primitive",
        ansi(6),
        None,
    ),
    ("entity.name.tag, meta.tag.sgml", ansi(4), None),
    ("entity.other.attribute-name", ansi(3), None),
    ("variable.language, support.constant", ansi(1), None),
    (
        "entity.name.section, markup.heading",
        ansi(4),
        Some(FontStyle::BOLD),
    ),
    ("markup.bold", None, Some(FontStyle::BOLD)),
    ("markup.italic", None, Some(FontStyle::ITALIC)),
    ("markup.inserted", ansi(2), None),
    ("markup.deleted", ansi(1), None),
    (
        "meta.diff.range, meta.diff.header, meta.diff.index",
        ansi(6),
        None,
    ),
    ("invalid", ansi(1), None),
];

fn syntaxes() -> &'static SyntaxSet {
    SYNTAXES.get_or_init(two_face::syntax::extra_newlines)
}

fn highlighter() -> &'static Highlighter<'static> {
    HIGHLIGHTER.get_or_init(|| Highlighter::new(THEME.get_or_init(build_theme)))
}

fn build_theme() -> SynTheme {
    let scopes = RULES
        .iter()
        .filter_map(|&(selectors, foreground, font_style)| {
            Some(ThemeItem {
                scope: selectors.parse::<ScopeSelectors>().ok()?,
                style: StyleModifier {
                    foreground,
                    background: None,
                    font_style,
                },
            })
        })
        .collect();
    SynTheme {
        name: None,
        author: None,
        settings: ThemeSettings {
            foreground: Some(DEFAULT),
            ..ThemeSettings::default()
        },
        scopes,
    }
}

/// Loads grammars and theme now, e.g. on a background thread once the first
/// frame is drawn, so the first code block does not wait for them.
pub fn preload() {
    let _ = syntaxes();
    let _ = highlighter();
}

/// The grammar for a fence info string (`rust`, `py title="x"`,
/// `{.python}`) or a file extension; `None` for plain text and unknown
/// languages, without loading anything for an empty or plain one.
pub(crate) fn find(lang: &str) -> Option<&'static SyntaxReference> {
    let token = lang
        .split(|c: char| c.is_whitespace() || c == ',')
        .find(|t| !t.is_empty())?
        .trim_matches(|c| c == '{' || c == '}' || c == '.');
    let lower = token.to_ascii_lowercase();
    let token = match lower.as_str() {
        "" | "text" | "txt" | "plain" | "plaintext" | "output" => return None,
        "console" | "shell" | "shellsession" | "terminal" | "sh-session" => "bash",
        "jsx" | "mjs" | "cjs" | "node" => "js",
        // The TypeScript grammar's regexes take ~6 MB and 17 ms on first
        // use; JavaScript's colours TypeScript nearly as well for 1.4 MB
        // and 3 ms (as Rust's does).
        "ts" | "tsx" | "typescript" | "typescriptreact" | "mts" | "cts" => "js",
        "golang" => "go",
        "c++" => "cpp",
        "objc" | "objective-c" => "m",
        "py3" | "python3" => "py",
        "yml" => "yaml",
        other => other,
    };
    syntaxes().find_syntax_by_token(token)
}

/// The colouring state of one code block, line after line.
#[derive(Clone)]
pub(crate) struct LineHighlighter {
    parse: ParseState,
    state: HighlightState,
}

// SAFETY: with Oniguruma, syntect's `ParseState` keeps the capture regions
// of open contexts (`onig::Region`: buffers from malloc that it alone owns
// and frees), which are not `Send` only because they hold raw pointers.
// Nothing else points at them and they have no tie to a thread, so moving
// a highlighter to another thread is sound; it is never shared (`&mut`
// only), so it is not `Sync`.
unsafe impl Send for LineHighlighter {}

impl LineHighlighter {
    pub(crate) fn new(syntax: &'static SyntaxReference) -> LineHighlighter {
        LineHighlighter {
            parse: ParseState::new(syntax),
            state: HighlightState::new(highlighter(), ScopeStack::new()),
        }
    }

    /// Theme of `line` (which ends in '\n') as `(end byte, style)` pieces,
    /// each patched onto `base`; `None` when the grammar fails on it.
    pub(crate) fn line(&mut self, line: &str, base: Style) -> Option<Vec<(usize, Style)>> {
        let ops = self.parse.parse_line(line, syntaxes()).ok()?;
        let mut end = 0;
        let pieces = HighlightIterator::new(&mut self.state, &ops, line, highlighter())
            .map(|(style, piece)| {
                end += piece.len();
                (end, base.patch(terminal_style(style)))
            })
            .collect();
        Some(pieces)
    }
}

fn terminal_style(style: syntect::highlighting::Style) -> Style {
    let mut out = Style::new();
    if style.foreground.a == 0 {
        out = out.fg(ansi_color(style.foreground.r));
    }
    let font = style.font_style;
    for (flag, modifier) in [
        (FontStyle::BOLD, Modifier::BOLD),
        (FontStyle::ITALIC, Modifier::ITALIC),
        (FontStyle::UNDERLINE, Modifier::UNDERLINED),
    ] {
        if font.contains(flag) {
            out = out.add_modifier(modifier);
        }
    }
    out
}

fn ansi_color(index: u8) -> Color {
    match index {
        1 => Color::Red,
        2 => Color::Green,
        3 => Color::Yellow,
        4 => Color::Blue,
        5 => Color::Magenta,
        6 => Color::Cyan,
        8 => Color::DarkGray,
        n => Color::Indexed(n),
    }
}
