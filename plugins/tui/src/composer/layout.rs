//! Soft wrapping of the draft into visual rows, one logical line at a time
//! and lazily, so a keystroke in a huge draft only lays out what is shown.

use std::borrow::Cow;

use ratatui::buffer::CellWidth;
use unicode_segmentation::UnicodeSegmentation;

/// Columns a tab takes; tabs are kept in the text but drawn as spaces.
pub(super) const TAB_WIDTH: usize = 4;

/// How one grapheme is drawn.
pub(super) enum Glyph<'a> {
    /// `TAB_WIDTH` blank cells.
    Tab,
    /// A symbol for one cell, and the columns it covers.
    Symbol(Cow<'a, str>, usize),
}

impl Glyph<'_> {
    pub(super) fn width(&self) -> usize {
        match self {
            Glyph::Tab => TAB_WIDTH,
            Glyph::Symbol(_, width) => *width,
        }
    }
}

/// The glyph for a grapheme of the draft. Control characters must never
/// reach the terminal, and a mark with nothing to combine with is shown on a
/// dotted circle (the Unicode convention) so it still takes a cell.
pub(super) fn glyph(grapheme: &str) -> Glyph<'_> {
    if let [byte] = grapheme.as_bytes()
        && (b' '..=b'~').contains(byte)
    {
        return Glyph::Symbol(Cow::Borrowed(grapheme), 1);
    }
    if grapheme == "\t" {
        return Glyph::Tab;
    }
    if grapheme.chars().any(char::is_control) {
        return Glyph::Symbol(Cow::Borrowed("\u{FFFD}"), 1);
    }
    match usize::from(grapheme.cell_width()) {
        0 => Glyph::Symbol(Cow::Owned(format!("\u{25CC}{grapheme}")), 1),
        width => Glyph::Symbol(Cow::Borrowed(grapheme), width),
    }
}

/// Columns a grapheme takes, as [`glyph`] draws it.
pub(super) fn grapheme_width(grapheme: &str) -> usize {
    glyph(grapheme).width()
}

/// The grapheme clusters of `s` with their byte offsets. Printable ASCII
/// followed by ASCII is a cluster of its own, which skips the full
/// segmentation rules for most text (wrapping is the hot path of a keystroke).
pub(super) fn clusters(s: &str) -> impl Iterator<Item = (usize, &str)> {
    let bytes = s.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        let rest = s.get(at..)?;
        let first = *bytes.get(at)?;
        let next_is_ascii = bytes.get(at + 1).is_none_or(u8::is_ascii);
        let len = if first.is_ascii() && first != b'\r' && next_is_ascii {
            1
        } else {
            rest.graphemes(true).next().map_or(rest.len(), str::len)
        };
        let cluster = (at, rest.get(..len)?);
        at += len;
        Some(cluster)
    })
}

/// One visual row: a byte range of the draft within one logical line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Row {
    pub start: usize,
    pub end: usize,
    /// The last row of its logical line (the cursor may sit at its end).
    pub last: bool,
}

impl Row {
    /// Whether the cursor at byte `pos` is drawn on this row. A position on
    /// a wrap point belongs to the row that starts there.
    pub(super) fn holds(&self, pos: usize) -> bool {
        self.start <= pos && (pos < self.end || (self.last && pos == self.end))
    }
}

/// Start of the logical line holding byte `pos`.
pub(super) fn line_start(text: &str, pos: usize) -> usize {
    text.get(..pos)
        .and_then(|before| before.rfind('\n'))
        .map_or(0, |newline| newline + 1)
}

/// End (the newline or the end of text) of the logical line holding `pos`.
pub(super) fn line_end(text: &str, pos: usize) -> usize {
    text.get(pos..)
        .and_then(|after| after.find('\n'))
        .map_or(text.len(), |newline| pos + newline)
}

enum State {
    More,
    TrailingEmpty,
    Done,
}

/// The visual rows of one logical line, produced on demand.
pub(super) struct Rows<'a> {
    text: &'a str,
    pos: usize,
    end: usize,
    cols: usize,
    state: State,
}

/// Rows of the logical line `start..end` of `text` at `cols` columns.
pub(super) fn rows(text: &str, start: usize, end: usize, cols: usize) -> Rows<'_> {
    Rows {
        text,
        pos: start,
        end,
        cols: cols.max(1),
        state: State::More,
    }
}

/// Where a row ends, relative to where it starts.
enum Break {
    Wrap(usize),
    /// The rest of the line fits; `full` when it fills every column, so the
    /// cursor after it needs a row of its own.
    LineEnd {
        full: bool,
    },
}

/// Breaks after the last whitespace that fits (word wrap), or before the
/// first grapheme that does not when a word is wider than the row.
fn find_break(rest: &str, cols: usize) -> Break {
    let mut col = 0;
    let mut after_space = None;
    for (at, grapheme) in clusters(rest) {
        let width = grapheme_width(grapheme);
        if col + width > cols && col > 0 {
            return Break::Wrap(after_space.unwrap_or(at));
        }
        col += width;
        if grapheme.chars().all(char::is_whitespace) {
            after_space = Some(at + grapheme.len());
        }
    }
    Break::LineEnd { full: col >= cols }
}

impl Iterator for Rows<'_> {
    type Item = Row;

    fn next(&mut self) -> Option<Row> {
        match self.state {
            State::Done => None,
            State::TrailingEmpty => {
                self.state = State::Done;
                Some(Row {
                    start: self.end,
                    end: self.end,
                    last: true,
                })
            }
            State::More => Some(self.next_row()),
        }
    }
}

impl Rows<'_> {
    fn next_row(&mut self) -> Row {
        let start = self.pos;
        let rest = self.text.get(start..self.end).unwrap_or("");
        match find_break(rest, self.cols) {
            Break::Wrap(len) => {
                self.pos = start + len;
                Row {
                    start,
                    end: self.pos,
                    last: false,
                }
            }
            Break::LineEnd { full } => {
                self.pos = self.end;
                self.state = if full {
                    State::TrailingEmpty
                } else {
                    State::Done
                };
                Row {
                    start,
                    end: self.end,
                    last: !full,
                }
            }
        }
    }
}

/// Display column of byte `pos` within `row`.
pub(super) fn column_of(text: &str, row: Row, pos: usize) -> usize {
    let before = text.get(row.start..pos.clamp(row.start, row.end));
    clusters(before.unwrap_or(""))
        .map(|(_, grapheme)| grapheme_width(grapheme))
        .sum()
}

/// The byte in `row` nearest to display column `col` (never past the wrap
/// point of a row that continues, which belongs to the next row).
pub(super) fn position_at_column(text: &str, row: Row, col: usize) -> usize {
    let content = text.get(row.start..row.end).unwrap_or("");
    let mut x = 0;
    let mut last_start = row.start;
    for (at, grapheme) in clusters(content) {
        let width = grapheme_width(grapheme);
        if x + width > col {
            return row.start + at;
        }
        x += width;
        last_start = row.start + at;
    }
    if row.last { row.end } else { last_start }
}
