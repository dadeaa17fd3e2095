//! Lines of code: coloured line by line (the state carries from one line
//! to the next, so nothing is coloured twice) and cut into rows anywhere
//! between graphemes.

use ratatui::style::Style;

use super::highlight::{self, LineHighlighter};
use super::rows::{Row, Rows};
use crate::theme::Theme;

/// Blocks longer than this are coloured only this far: beyond it each line
/// would cost more than it helps.
pub(crate) const MAX_COLORED_LINES: usize = 2000;
/// A line longer than this turns colouring off for the rest of its block
/// (minified code; grammars are slow on such lines).
pub(crate) const MAX_COLORED_LINE: usize = 2000;

/// Styled pieces of one line: `(end byte, style)`, in order.
pub(crate) type Pieces = Vec<(usize, Style)>;

/// The lines of a block of code, without their line ends; a last line
/// without '\n' (still streaming) is included.
pub(crate) fn code_lines(code: &str) -> impl Iterator<Item = &str> {
    code.split_inclusive('\n').map(|line| {
        let line = line.strip_suffix('\n').unwrap_or(line);
        line.strip_suffix('\r').unwrap_or(line)
    })
}

/// Colours the lines of one block in order.
#[derive(Clone)]
pub(crate) struct CodeLines {
    colors: Option<LineHighlighter>,
    base: Style,
    count: usize,
}

impl CodeLines {
    /// Plain when the theme has no colours or the language is unknown.
    pub(crate) fn new(lang: &str, styles: &Theme) -> CodeLines {
        let colors = match styles.colors {
            true => highlight::find(lang).map(LineHighlighter::new),
            false => None,
        };
        CodeLines {
            colors,
            base: styles.code_block,
            count: 0,
        }
    }

    /// The pieces of the next whole line.
    pub(crate) fn push(&mut self, line: &str) -> Pieces {
        self.count += 1;
        if self.count > MAX_COLORED_LINES || line.len() > MAX_COLORED_LINE {
            self.colors = None;
        }
        let pieces = self
            .colors
            .as_mut()
            .and_then(|colors| colors.line(&with_newline(line), self.base));
        if pieces.is_none() {
            self.colors = None;
        }
        pieces.unwrap_or_else(|| self.plain(line))
    }

    /// The pieces of a line still arriving, leaving the state as it is.
    pub(crate) fn peek(&self, line: &str) -> Pieces {
        let colored = self.count < MAX_COLORED_LINES && line.len() <= MAX_COLORED_LINE;
        let pieces = match (&self.colors, colored) {
            (Some(colors), true) => colors.clone().line(&with_newline(line), self.base),
            _ => None,
        };
        pieces.unwrap_or_else(|| self.plain(line))
    }

    /// Stops colouring (a line too long to colour is arriving).
    pub(crate) fn stop_colors(&mut self) {
        self.colors = None;
    }

    pub(crate) fn base(&self) -> Style {
        self.base
    }

    fn plain(&self, line: &str) -> Pieces {
        vec![(line.len(), self.base)]
    }
}

fn with_newline(line: &str) -> String {
    let mut owned = String::with_capacity(line.len() + 1);
    owned.push_str(line);
    owned.push('\n');
    owned
}

/// Rows of one line of code, `width` columns each, with the source byte
/// each row ends at.
pub(crate) fn code_rows(line: &str, pieces: &[(usize, Style)], width: usize) -> Vec<(Row, usize)> {
    let mut rows = Rows::new(width);
    let mut start = 0;
    let mut last = Style::new();
    for &(end, style) in pieces {
        let end = end.min(line.len());
        if let Some(text) = line.get(start..end) {
            rows.put_glyphs(text, style);
            start = end;
        }
        last = style;
    }
    if let Some(rest) = line.get(start..) {
        rows.put_glyphs(rest, last);
    }
    rows.finish_with_ends()
}

/// Highlighted lines of code for other widgets, not wrapped.
pub(crate) fn highlight_lines(code: &str, lang: &str, styles: &Theme) -> Vec<Row> {
    let mut lines = CodeLines::new(lang, styles);
    code_lines(code)
        .map(|line| {
            let pieces = lines.push(line);
            code_rows(line, &pieces, usize::MAX)
                .into_iter()
                .flat_map(|(row, _)| row)
                .collect()
        })
        .collect()
}
