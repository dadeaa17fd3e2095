//! Drawing the box: the rows around the cursor, the prompt marker, the
//! placeholder text, and the scroll position kept between frames.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;

use super::Composer;
use super::layout::{self, Glyph, Row, line_end, line_start};
use crate::theme::Theme;

/// The prompt marker drawn before the first row.
const PROMPT: &str = "› ";
/// Columns the marker takes; continuation rows are indented as much.
const PROMPT_WIDTH: u16 = 2;

/// The first row shown: a row of the logical line starting at `line`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Anchor {
    pub line: usize,
    pub row: usize,
}

impl Anchor {
    pub(super) const TOP: Anchor = Anchor { line: 0, row: 0 };
}

/// The indent before the text and the columns left for it at `width`. Boxes
/// too narrow for the marker drop it rather than show no text.
pub(super) fn text_columns(width: u16) -> (u16, usize) {
    if width > PROMPT_WIDTH {
        (PROMPT_WIDTH, usize::from(width - PROMPT_WIDTH))
    } else {
        (0, usize::from(width.max(1)))
    }
}

impl Composer {
    /// The row holding the cursor and its index within its logical line.
    pub(super) fn cursor_row(&self, columns: usize) -> (Row, usize) {
        let start = line_start(&self.text, self.cursor);
        let end = line_end(&self.text, self.cursor);
        let mut found = (
            Row {
                start,
                end,
                last: true,
            },
            0,
        );
        for (index, row) in layout::rows(&self.text, start, end, columns).enumerate() {
            found = (row, index);
            if row.holds(self.cursor) {
                break;
            }
        }
        found
    }

    /// Up to `limit` rows, starting at `anchor`.
    pub(super) fn rows_from(&self, anchor: Anchor, columns: usize, limit: usize) -> Vec<Row> {
        let mut shown = Vec::with_capacity(limit.min(64));
        let (mut line, mut skip) = (anchor.line, anchor.row);
        while shown.len() < limit {
            let end = line_end(&self.text, line);
            let rows = layout::rows(&self.text, line, end, columns).skip(skip);
            shown.extend(rows.take(limit - shown.len()));
            if end >= self.text.len() {
                break;
            }
            (line, skip) = (end + 1, 0);
        }
        shown
    }

    /// The anchor `count` rows above the row `index` of the line at `line`
    /// (or the very top).
    fn rows_back(
        &self,
        mut line: usize,
        mut index: usize,
        mut count: usize,
        columns: usize,
    ) -> Anchor {
        loop {
            if index >= count {
                return Anchor {
                    line,
                    row: index - count,
                };
            }
            count -= index + 1;
            let Some(above) = line.checked_sub(1) else {
                return Anchor::TOP;
            };
            line = line_start(&self.text, above);
            index = layout::rows(&self.text, line, above, columns)
                .count()
                .saturating_sub(1);
        }
    }

    /// The kept anchor if it still starts a line of the draft.
    fn valid_anchor(&self) -> Anchor {
        let anchor = self.scroll.get();
        let starts_line = anchor.line == 0
            || self.text.as_bytes().get(anchor.line.wrapping_sub(1)) == Some(&b'\n');
        if anchor.line <= self.text.len() && starts_line {
            anchor
        } else {
            Anchor::TOP
        }
    }

    /// The rows to show in `height` rows, scrolled as little as possible
    /// from the last frame to keep the cursor in view, and the cursor's
    /// index among them.
    fn window(&self, columns: usize, height: usize) -> (Vec<Row>, usize) {
        let (cursor_row, cursor_index) = self.cursor_row(columns);
        let cursor_line = line_start(&self.text, self.cursor);
        let mut anchor = self.valid_anchor();
        if (cursor_line, cursor_index) < (anchor.line, anchor.row) {
            anchor = Anchor {
                line: cursor_line,
                row: cursor_index,
            };
        }
        let mut rows = self.rows_from(anchor, columns, height);
        let visible = rows.contains(&cursor_row);
        if !visible || rows.len() < height {
            anchor = if visible {
                // The text shrank under the window: fill it from above.
                self.rows_back(anchor.line, anchor.row, height - rows.len(), columns)
            } else {
                // Below the window: the cursor's row becomes the last one.
                self.rows_back(cursor_line, cursor_index, height.saturating_sub(1), columns)
            };
            rows = self.rows_from(anchor, columns, height);
        }
        self.scroll.set(anchor);
        let index = rows.iter().position(|row| *row == cursor_row).unwrap_or(0);
        (rows, index)
    }

    /// Draws into `area`; returns the terminal cursor position (x, y) to
    /// show, `None` when the area is empty. `placeholder` is shown dim while
    /// the box is empty.
    pub fn render(
        &self,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        placeholder: &str,
    ) -> Option<(u16, u16)> {
        let area = area.intersection(buf.area);
        if area.is_empty() {
            return None;
        }
        let (indent, columns) = text_columns(area.width);
        self.columns.set(columns);
        let left = area.x.saturating_add(indent);
        if self.text.is_empty() {
            draw_prompt(buf, area, indent, theme);
            buf.set_stringn(left, area.y, placeholder, columns, theme.dim);
            return Some((left, area.y));
        }
        let (rows, cursor_index) = self.window(columns, usize::from(area.height));
        let shown = rows.first().map_or(0, |r| r.start)..rows.last().map_or(0, |r| r.end);
        let placeholders = self.pastes.tokens_in(&self.text, shown);
        for (row, y) in rows.iter().zip(area.y..area.bottom()) {
            if row.start == 0 {
                draw_prompt(buf, Rect { y, ..area }, indent, theme);
            }
            let styled = |at: usize| {
                let placeholder = placeholders.iter().any(|token| token.contains(&at));
                if placeholder {
                    theme.accent
                } else {
                    theme.text
                }
            };
            self.draw_row(buf, *row, (left, y), area.right(), styled);
        }
        let row = rows.get(cursor_index)?;
        let column = layout::column_of(&self.text, *row, self.cursor);
        let x = usize::from(left).saturating_add(column);
        let x = u16::try_from(x).unwrap_or(u16::MAX).min(area.right() - 1);
        let y = area
            .y
            .saturating_add(u16::try_from(cursor_index).unwrap_or(u16::MAX));
        Some((x, y))
    }

    /// Draws the graphemes of `row` from `(x, y)`, clipped before `right`.
    fn draw_row(
        &self,
        buf: &mut Buffer,
        row: Row,
        (x, y): (u16, u16),
        right: u16,
        style_at: impl Fn(usize) -> Style,
    ) {
        let content = self.text.get(row.start..row.end).unwrap_or("");
        let mut x = usize::from(x);
        for (at, grapheme) in layout::clusters(content) {
            let glyph = layout::glyph(grapheme);
            let width = glyph.width();
            if x + width > usize::from(right) {
                break;
            }
            put_glyph(buf, (x, y), &glyph, style_at(row.start + at));
            x += width;
        }
    }
}

fn draw_prompt(buf: &mut Buffer, area: Rect, indent: u16, theme: &Theme) {
    if indent > 0 {
        buf.set_stringn(area.x, area.y, PROMPT, usize::from(indent), theme.accent);
    }
}

/// Writes one glyph's cells; the cells a wide glyph covers are reset, as
/// ratatui does, so the terminal diff skips them.
fn put_glyph(buf: &mut Buffer, (x, y): (usize, u16), glyph: &Glyph<'_>, style: Style) {
    let mut cells = (x..x + glyph.width()).filter_map(|x| u16::try_from(x).ok());
    match glyph {
        Glyph::Tab => {
            for x in cells {
                if let Some(cell) = buf.cell_mut((x, y)) {
                    cell.set_symbol(" ").set_style(style);
                }
            }
        }
        Glyph::Symbol(symbol, _) => {
            if let Some(cell) = cells.next().and_then(|x| buf.cell_mut((x, y))) {
                cell.set_symbol(symbol).set_style(style);
            }
            for x in cells {
                if let Some(cell) = buf.cell_mut((x, y)) {
                    cell.reset();
                }
            }
        }
    }
}
