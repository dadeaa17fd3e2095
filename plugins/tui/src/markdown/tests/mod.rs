//! Tests of the Markdown renderer: expected drawings per construct, the
//! streaming invariant, narrow widths and pathological inputs.

#![allow(clippy::unwrap_used)]

mod chunks;
mod constructs;
mod corpus;
mod streaming;
mod torture;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;
use unicode_width::UnicodeWidthStr;

use crate::theme::Theme;

/// The lines as text, one per line, trailing spaces removed.
pub(super) fn plain(lines: &[Line]) -> String {
    lines
        .iter()
        .map(|line| {
            let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
            text.trim_end().to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The lines with every styled span marked `«style:text»` (see
/// [`style_name`]).
pub(super) fn marked(lines: &[Line]) -> String {
    lines
        .iter()
        .map(|line| {
            let mut out = String::new();
            for span in &line.spans {
                let name = style_name(span.style);
                if name.is_empty() || span.content.trim().is_empty() {
                    out.push_str(&span.content);
                } else {
                    out.push_str(&format!("«{name}:{}»", span.content));
                }
            }
            out.trim_end().to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A short name of a style: its colour, then b(old) i(talic) u(nderlined)
/// s(truck) d(im).
pub(super) fn style_name(style: Style) -> String {
    let mut name = match style.fg {
        Some(Color::Indexed(n)) => format!("c{n}"),
        Some(color) => format!("{color:?}").to_lowercase(),
        None => String::new(),
    };
    for (modifier, mark) in [
        (Modifier::BOLD, 'b'),
        (Modifier::ITALIC, 'i'),
        (Modifier::UNDERLINED, 'u'),
        (Modifier::CROSSED_OUT, 's'),
        (Modifier::DIM, 'd'),
    ] {
        if style.add_modifier.contains(modifier) {
            name.push(mark);
        }
    }
    name
}

/// Asserts every line fits `width` columns.
pub(super) fn assert_fits(lines: &[Line], width: u16) {
    for (i, line) in lines.iter().enumerate() {
        let columns: usize = line.spans.iter().map(|s| s.content.width()).sum();
        assert!(
            columns <= usize::from(width),
            "line {i} is {columns} wide (> {width}): {line:?}"
        );
    }
}

pub(super) fn colored() -> Theme {
    Theme::colored()
}
