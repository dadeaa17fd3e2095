//! Markdown to styled, wrapped lines (pulldown-cmark), incrementally while
//! an answer streams.
//!
//! The text is cut into chunks of whole top-level blocks (see `scan` for
//! the rules). A chunk boundary depends only on the text before it, so the
//! chunks of a text are the same whether it arrived at once or in pieces,
//! and [`Markdown::lines`] always equals [`render`] of [`Markdown::text`].
//! Finished chunks are drawn once per width and kept; of the last chunk,
//! fenced code, HTML and tables draw each complete line once, and Markdown
//! is parsed again each frame, which the scanner keeps to a few KB.
//!
//! Code is coloured line by line with its state carried along (see
//! `highlight`); a code line still arriving is coloured each frame, on a
//! copy of the state.

mod blocks;
mod code;
mod glyph;
mod highlight;
mod inline;
mod memo;
mod render;
mod rows;
mod scan;
mod table;
mod table_view;
mod verbatim;
mod view;

#[cfg(test)]
mod tests;

use ratatui::text::Line;

use crate::theme::Theme;
use blocks::floor_boundary;
use scan::Scanner;
use view::View;

pub use highlight::preload;

/// A Markdown text that grows (an answer streaming in) and its drawing,
/// kept per width.
#[derive(Default)]
pub struct Markdown {
    text: String,
    scanner: Scanner,
    view: Option<View>,
}

impl Markdown {
    /// An empty text, as an answer starts.
    pub fn new() -> Markdown {
        Markdown::default()
    }

    /// A text known in full (drawn at the first [`Markdown::lines`]).
    pub fn from_text(text: &str) -> Markdown {
        Markdown {
            text: text.to_owned(),
            ..Markdown::default()
        }
    }

    /// Appends streamed text; it may end anywhere (mid-word, mid-fence,
    /// mid-table). Drawing waits for the next [`Markdown::lines`].
    pub fn push_str(&mut self, delta: &str) {
        self.text.push_str(delta);
    }

    /// The text so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Drops everything after byte `len` (a retried stream withdraws text);
    /// `len` inside a character rounds down. The drawing of chunks before
    /// the cut is kept.
    pub fn truncate(&mut self, len: usize) {
        if len >= self.text.len() {
            return;
        }
        let len = floor_boundary(&self.text, len);
        self.text.truncate(len);
        let mut scanner = Scanner::default();
        scanner.advance(&self.text);
        let same = self
            .scanner
            .closed()
            .iter()
            .zip(scanner.closed())
            .take_while(|(old, new)| old == new)
            .count();
        if let Some(view) = &mut self.view {
            view.keep(same);
        }
        self.scanner = scanner;
    }

    /// Drops the drawing (the answer is far off screen); the next
    /// [`Markdown::lines`] draws it again.
    pub fn forget_lines(&mut self) {
        self.view = None;
    }

    /// The drawn lines at `width` columns, each at most `width` wide. Drawn
    /// again only where the text grew since the last call; a new width or
    /// theme draws everything once.
    pub fn lines(&mut self, width: u16, theme: &Theme) -> &[Line<'static>] {
        if width == 0 {
            return &[];
        }
        self.scanner.advance(&self.text);
        let fits = self
            .view
            .as_ref()
            .is_some_and(|view| view.fits(width, theme));
        if !fits {
            self.view = Some(View::new(width, theme.clone()));
        }
        match &mut self.view {
            Some(view) => {
                view.update(&self.text, &self.scanner);
                view.lines()
            }
            None => &[],
        }
    }
}

/// One-shot drawing (for whole messages from history).
pub fn render(text: &str, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    Markdown::from_text(text).lines(width, theme).to_vec()
}

/// Code highlighting for other widgets (diffs, previews): the lines of
/// `code` in `lang` (a fence info string or a file extension), not wrapped.
/// Plain when `theme.colors` is false or the language is unknown.
pub fn highlight(code: &str, lang: &str, theme: &Theme) -> Vec<Line<'static>> {
    code::highlight_lines(code, lang, theme)
        .into_iter()
        .map(Line::from)
        .collect()
}
