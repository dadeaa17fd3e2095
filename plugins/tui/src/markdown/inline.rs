//! Styled inline text (a paragraph, heading or table cell) and its word
//! wrapping.

use ratatui::style::Style;

use super::glyph;
use super::rows::{Row, Rows};

/// Inline text with its styles, before wrapping. Whitespace is already
/// what will be drawn (line breaks and tabs are spaces) and control
/// characters are replaced.
#[derive(Clone, Debug, Default)]
pub(crate) struct Inline {
    text: String,
    runs: Vec<Run>,
}

#[derive(Clone, Copy, Debug)]
enum Run {
    /// Text up to byte `end` of `text`, in `style`.
    Text { end: usize, style: Style },
    /// A hard line break.
    Break,
}

/// A word being gathered: its pieces (byte ranges of `text` and styles)
/// and columns.
#[derive(Default)]
struct Word {
    pieces: Vec<(usize, usize, Style, usize)>,
    columns: usize,
}

impl Inline {
    pub(crate) fn new() -> Inline {
        Inline::default()
    }

    pub(crate) fn push(&mut self, text: &str, style: Style) {
        if text.chars().any(char::is_control) {
            let cleaned: String = text
                .chars()
                .map(|c| match c {
                    '\n' | '\r' | '\t' => ' ',
                    c if c.is_control() => '\u{FFFD}',
                    c => c,
                })
                .collect();
            self.push_clean(&cleaned, style);
        } else {
            self.push_clean(text, style);
        }
    }

    fn push_clean(&mut self, text: &str, style: Style) {
        if text.is_empty() {
            return;
        }
        self.text.push_str(text);
        let end = self.text.len();
        match self.runs.last_mut() {
            Some(Run::Text {
                end: last,
                style: s,
            }) if *s == style => *last = end,
            _ => self.runs.push(Run::Text { end, style }),
        }
    }

    pub(crate) fn push_break(&mut self) {
        self.runs.push(Run::Break);
    }

    /// Appends another inline's text and breaks.
    pub(crate) fn append(&mut self, other: &Inline) {
        let mut start = 0;
        for run in &other.runs {
            match *run {
                Run::Text { end, style } => {
                    self.push_clean(&other.text[start..end], style);
                    start = end;
                }
                Run::Break => self.push_break(),
            }
        }
    }

    /// The text without styles (for comparing a link's text to its URL).
    pub(crate) fn plain(&self) -> &str {
        &self.text
    }

    pub(crate) fn len(&self) -> usize {
        self.text.len()
    }

    /// Columns of the widest line when nothing is wrapped.
    pub(crate) fn natural_width(&self) -> usize {
        let mut widest = 0;
        let mut line = 0;
        let mut start = 0;
        for run in &self.runs {
            match *run {
                Run::Text { end, .. } => {
                    line += glyph::text_width(&self.text[start..end]);
                    start = end;
                }
                Run::Break => {
                    widest = widest.max(line);
                    line = 0;
                }
            }
        }
        widest.max(line)
    }

    /// Rows of at most `width` columns: words move to the next row whole
    /// unless they are longer than a row; spaces at a break are dropped.
    pub(crate) fn wrap(&self, width: usize) -> Vec<Row> {
        let mut rows = Rows::new(width);
        let mut word = Word::default();
        let mut space: Option<(Style, usize)> = None;
        let mut start = 0;
        for run in &self.runs {
            match *run {
                Run::Text { end, style } => {
                    self.split_words(start, end, style, &mut rows, &mut word, &mut space);
                    start = end;
                }
                Run::Break => {
                    self.place(&mut rows, &mut word, space.take());
                    rows.newline();
                }
            }
        }
        self.place(&mut rows, &mut word, space);
        rows.finish()
    }

    fn split_words(
        &self,
        start: usize,
        end: usize,
        style: Style,
        rows: &mut Rows,
        word: &mut Word,
        space: &mut Option<(Style, usize)>,
    ) {
        let bytes = self.text.as_bytes();
        let mut at = start;
        while at < end {
            let is_space = bytes[at] == b' ';
            let stop = bytes[at..end]
                .iter()
                .position(|&b| (b == b' ') != is_space)
                .map_or(end, |n| at + n);
            if is_space {
                let before = space.take();
                // Spaces in two styles with no word between are one gap.
                let count = match word.pieces.is_empty() {
                    true => before.map_or(0, |(_, n)| n),
                    false => 0,
                };
                self.place(rows, word, before);
                *space = Some((style, count + stop - at));
            } else {
                let columns = glyph::text_width(&self.text[at..stop]);
                word.pieces.push((at, stop, style, columns));
                word.columns += columns;
            }
            at = stop;
        }
    }

    /// Puts the gathered word on the rows, after `space` if it stays on
    /// the same row.
    fn place(&self, rows: &mut Rows, word: &mut Word, space: Option<(Style, usize)>) {
        if word.pieces.is_empty() {
            return;
        }
        let gap = match space {
            Some((_, n)) if rows.used() > 0 => n,
            _ => 0,
        };
        let fits = rows.used() + gap + word.columns <= rows.width();
        let long = word.columns > rows.width();
        if fits || (long && rows.used() + gap < rows.width()) {
            if let (Some((style, _)), true) = (space, gap > 0) {
                rows.put(&" ".repeat(gap), style, gap);
            }
        } else if rows.used() > 0 {
            rows.newline();
        }
        for &(from, to, style, columns) in &word.pieces {
            let text = &self.text[from..to];
            if long {
                rows.put_glyphs(text, style);
            } else {
                rows.put(text, style, columns);
            }
        }
        word.pieces.clear();
        word.columns = 0;
    }
}
