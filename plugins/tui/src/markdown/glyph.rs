//! Graphemes and the columns they take: rows are only ever cut between
//! graphemes, and every width here is the one the screen will use.

use unicode_segmentation::{GraphemeIndices, UnicodeSegmentation};
use unicode_width::UnicodeWidthStr;

/// Columns a tab takes in code.
pub(crate) const TAB_WIDTH: usize = 4;
const TAB_SPACES: &str = "    ";
/// Drawn for a grapheme wider than a whole row (a wide character on a
/// one-column screen), so no row is ever wider than the screen.
pub(crate) const TOO_WIDE: &str = "…";
/// Control characters could drive the terminal; they are drawn as this.
const REPLACEMENT: &str = "\u{FFFD}";

/// The graphemes of a text with their byte offsets; plain ASCII skips the
/// cost of segmentation.
pub(crate) enum Glyphs<'a> {
    Ascii { text: &'a str, at: usize },
    Unicode(GraphemeIndices<'a>),
}

impl<'a> Iterator for Glyphs<'a> {
    type Item = (usize, &'a str);

    fn next(&mut self) -> Option<(usize, &'a str)> {
        match self {
            Glyphs::Ascii { text, at } => {
                let start = *at;
                let glyph = text.get(start..start + 1)?;
                *at += 1;
                Some((start, glyph))
            }
            Glyphs::Unicode(inner) => inner.next(),
        }
    }
}

pub(crate) fn glyphs(text: &str) -> Glyphs<'_> {
    if text.is_ascii() {
        Glyphs::Ascii { text, at: 0 }
    } else {
        Glyphs::Unicode(text.grapheme_indices(true))
    }
}

/// Columns `glyph` takes once drawn as [`shown`] draws it.
pub(crate) fn width(glyph: &str) -> usize {
    match glyph.as_bytes() {
        [b'\t'] => TAB_WIDTH,
        [_] => 1,
        _ if glyph.starts_with(char::is_control) => 1,
        _ => glyph.width(),
    }
}

/// What is drawn for `glyph`: tabs as spaces, control characters replaced.
pub(crate) fn shown(glyph: &str) -> &str {
    if glyph == "\t" {
        TAB_SPACES
    } else if glyph.starts_with(char::is_control) {
        REPLACEMENT
    } else {
        glyph
    }
}

/// Columns of a whole text, grapheme by grapheme (never less than the
/// screen will use for it).
pub(crate) fn text_width(text: &str) -> usize {
    if text.is_ascii() {
        let tabs = text.bytes().filter(|&b| b == b'\t').count();
        return text.len() + tabs * (TAB_WIDTH - 1);
    }
    glyphs(text).map(|(_, g)| width(g)).sum()
}

/// True when every byte is printable ASCII: such text is its own drawing,
/// one column per byte.
pub(crate) fn is_printable_ascii(text: &str) -> bool {
    text.bytes().all(|b| (0x20..0x7f).contains(&b))
}
