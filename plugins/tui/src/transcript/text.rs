//! Plain text to wrapped, styled lines.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

/// Wraps `text` to `width` columns, the first row after `first`, the
/// others after `rest` (both as wide as each other). Control characters
/// are dropped so nothing a model or a command writes drives the terminal.
pub fn wrap_styled(
    text: &str,
    width: u16,
    style: Style,
    first: &'static str,
    rest: &'static str,
) -> Vec<Line<'static>> {
    let indent = first.width();
    let room = usize::from(width).saturating_sub(indent).max(1);
    let clean: String = text
        .chars()
        .filter(|c| !c.is_control() || *c == '\n')
        .collect();
    let mut out = Vec::new();
    for paragraph in clean.split('\n') {
        for row in textwrap::wrap(paragraph, textwrap::Options::new(room).break_words(true)) {
            let prefix = if out.is_empty() { first } else { rest };
            out.push(Line::from(vec![
                Span::styled(prefix, style),
                Span::styled(row.into_owned(), style),
            ]));
        }
    }
    out
}

/// A full-width rule with a label in its middle: `──── compacted ────`.
pub fn rule(label: &str, width: u16, style: Style) -> Line<'static> {
    let width = usize::from(width);
    let label = format!(" {label} ");
    let side = width.saturating_sub(label.width()) / 2;
    let mut text = "─".repeat(side);
    text.push_str(&label);
    text.push_str(&"─".repeat(width.saturating_sub(side + label.width())));
    Line::styled(text, style)
}
