//! Rows of styled spans being filled up to a fixed number of columns.

use ratatui::style::Style;
use ratatui::text::Span;

use super::glyph::{self, TOO_WIDE};

/// One screen row of spans.
pub(crate) type Row = Vec<Span<'static>>;

/// Fills rows left to right; callers decide where words break, or use
/// [`Rows::put_glyphs`] to break anywhere between graphemes.
pub(crate) struct Rows {
    width: usize,
    done: Vec<Row>,
    spans: Row,
    used: usize,
    /// Source bytes given to `put_glyphs` so far, and where each finished
    /// row ended among them (long code lines draw rows as they arrive).
    source: usize,
    ends: Vec<usize>,
}

impl Rows {
    /// Rows of `width` columns; a width of 0 is treated as 1.
    pub(crate) fn new(width: usize) -> Rows {
        Rows {
            width: width.max(1),
            done: Vec::new(),
            spans: Vec::new(),
            used: 0,
            source: 0,
            ends: Vec::new(),
        }
    }

    pub(crate) fn width(&self) -> usize {
        self.width
    }

    /// Columns already taken on the current row.
    pub(crate) fn used(&self) -> usize {
        self.used
    }

    /// Appends text the caller has measured (`columns`) and cleaned.
    pub(crate) fn put(&mut self, text: &str, style: Style, columns: usize) {
        self.used += columns;
        if let Some(last) = self.spans.last_mut()
            && last.style == style
        {
            last.content.to_mut().push_str(text);
            return;
        }
        self.spans.push(Span::styled(text.to_owned(), style));
    }

    pub(crate) fn newline(&mut self) {
        self.done.push(std::mem::take(&mut self.spans));
        self.ends.push(self.source);
        self.used = 0;
    }

    /// Places `text` grapheme by grapheme, starting a new row whenever the
    /// next grapheme would not fit.
    pub(crate) fn put_glyphs(&mut self, text: &str, style: Style) {
        if glyph::is_printable_ascii(text) {
            self.put_ascii(text, style);
            return;
        }
        for (_, g) in glyph::glyphs(text) {
            let mut columns = glyph::width(g);
            let mut shown = glyph::shown(g);
            if columns > self.width {
                (shown, columns) = if g == "\t" {
                    (
                        &glyph::shown(g)[..self.width.min(glyph::TAB_WIDTH)],
                        self.width,
                    )
                } else {
                    (TOO_WIDE, 1)
                };
            }
            if self.used + columns > self.width {
                self.newline();
            }
            self.put(shown, style, columns);
            self.source += g.len();
        }
    }

    fn put_ascii(&mut self, mut text: &str, style: Style) {
        while !text.is_empty() {
            if self.used == self.width {
                self.newline();
            }
            let take = (self.width - self.used).min(text.len());
            let (now, rest) = text.split_at(take);
            self.put(now, style, take);
            self.source += take;
            text = rest;
        }
    }

    /// The rows, at least one (possibly empty).
    pub(crate) fn finish(mut self) -> Vec<Row> {
        self.done.push(self.spans);
        self.done
    }

    /// The rows with the source byte each one ends at.
    pub(crate) fn finish_with_ends(mut self) -> Vec<(Row, usize)> {
        self.ends.push(self.source);
        self.done.push(self.spans);
        self.done.into_iter().zip(self.ends).collect()
    }
}

/// Columns a row takes.
pub(crate) fn row_width(row: &Row) -> usize {
    row.iter()
        .map(|span| glyph::text_width(&span.content))
        .sum()
}
