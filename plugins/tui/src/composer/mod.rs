//! The multi-line input box: editing, history, paste placeholders and the
//! slash-command suggestions.

mod action;
mod edit;
mod file_index;
pub mod files;
mod history;
mod layout;
mod paste;
pub mod suggest;
mod view;
mod vim;

#[cfg(test)]
mod tests;

use std::cell::Cell;

pub use action::EditAction;
pub use suggest::{CommandEntry, Suggestions};
pub use vim::{VimMode, VimOutcome};

use history::History;
use paste::{Pastes, Stashed, normalize_newlines};
use view::Anchor;

/// The box never grows taller than this many rows; it scrolls instead.
pub const MAX_ROWS: u16 = 10;

/// The draft being typed, with its cursor, kill buffer, history and pastes.
pub struct Composer {
    text: String,
    /// Byte offset into `text`, always on a grapheme boundary and never
    /// inside a paste placeholder.
    cursor: usize,
    kill_buffer: String,
    /// The column vertical moves aim for, kept across a run of them.
    goal_column: Option<usize>,
    pastes: Pastes,
    history: History,
    /// Text columns at the last layout; vertical moves follow that wrapping.
    columns: Cell<usize>,
    /// The first row shown, kept between frames so the view scrolls only as
    /// far as the cursor needs.
    scroll: Cell<Anchor>,
    /// Vi mode's state (used only when `uji.ui.configure` turns it on).
    vim: vim::Vim,
}

impl Default for Composer {
    fn default() -> Composer {
        Composer::new()
    }
}

impl Composer {
    /// An empty box with no history.
    pub fn new() -> Composer {
        Composer {
            text: String::new(),
            cursor: 0,
            kill_buffer: String::new(),
            goal_column: None,
            pastes: Pastes::default(),
            history: History::default(),
            columns: Cell::new(usize::MAX),
            scroll: Cell::new(Anchor::TOP),
            vim: vim::Vim::default(),
        }
    }

    /// Types one character at the cursor (a carriage return is a newline).
    pub fn insert_char(&mut self, c: char) {
        let c = if c == '\r' { '\n' } else { c };
        let mut utf8 = [0; 4];
        self.insert_str(c.encode_utf8(&mut utf8));
    }

    /// Types `s` at the cursor, line endings normalised to LF.
    pub fn insert_str(&mut self, s: &str) {
        if s.is_empty() {
            return;
        }
        let s = normalize_newlines(s);
        self.replace(self.cursor..self.cursor, &s);
    }

    /// Bracketed paste: text longer than one line or 80 chars becomes a
    /// placeholder `[paste #n +N lines]` (multi-line) or `[paste #n N chars]`,
    /// kept as one atomic token (the cursor skips it; Backspace deletes it
    /// whole); shorter text is inserted as is. CRLF/CR become LF; tabs stay.
    pub fn paste(&mut self, text: &str) {
        let text = normalize_newlines(text);
        let inserted = match self.pastes.stash(text) {
            Stashed::Placeholder(label) | Stashed::Inline(label) => label,
        };
        self.replace(self.cursor..self.cursor, &inserted);
    }

    /// The draft as shown (placeholders unexpanded).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether nothing is typed.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Byte offset of the cursor in [`Composer::text`].
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// Replaces the draft (e.g. a completed slash command); cursor at the end.
    pub fn set_text(&mut self, text: &str) {
        self.text = normalize_newlines(text);
        self.cursor = self.text.len();
        self.goal_column = None;
        self.scroll.set(Anchor::TOP);
    }

    /// Moves the cursor to byte `at` (kept on a character boundary within
    /// the draft).
    pub fn set_cursor(&mut self, at: usize) {
        let mut at = at.min(self.text.len());
        while !self.text.is_char_boundary(at) {
            at -= 1;
        }
        self.cursor = at;
        self.goal_column = None;
    }

    /// The draft with its paste placeholders expanded (what sending it
    /// would send), for editing elsewhere.
    pub fn expanded_text(&self) -> String {
        self.pastes.expand(&self.text)
    }

    /// The messages sent before, newest first, each once.
    pub fn history_newest_first(&self) -> Vec<String> {
        let mut seen = std::collections::HashSet::new();
        let entries: Vec<&str> = self.history.entries().collect();
        entries
            .into_iter()
            .rev()
            .filter(|e| !e.trim().is_empty() && seen.insert(*e))
            .map(|e| self.pastes.expand(e))
            .collect()
    }

    /// Seeds the history with past messages, oldest first.
    pub fn set_history(&mut self, entries: Vec<String>) {
        self.history.replace(entries);
    }

    /// Takes the draft for sending: placeholders expanded to their pasted
    /// text, the raw draft pushed to history (consecutive repeats once), the
    /// box cleared. `None`, and nothing changes, when the draft is blank.
    pub fn submit(&mut self) -> Option<String> {
        self.submit_with_images().map(|(text, _)| text)
    }

    /// [`Composer::submit`], with the images whose markers the draft holds.
    pub fn submit_with_images(&mut self) -> Option<(String, Vec<uji_protocol::Image>)> {
        if self.text.trim().is_empty() {
            return None;
        }
        let raw = std::mem::take(&mut self.text);
        let expanded = self.pastes.expand(&raw);
        let images = self.pastes.images_in(&raw);
        self.history.push(raw);
        self.set_text("");
        self.vim_to_insert();
        self.forget_unused_pastes();
        Some((expanded, images))
    }

    /// Attaches an image at the cursor: its marker `[image #n]` goes into
    /// the draft as one token (Backspace deletes it, and the image, whole).
    pub fn attach_image(&mut self, image: uji_protocol::Image) {
        let marker = self.pastes.attach_image(image);
        self.replace(self.cursor..self.cursor, &marker);
    }

    /// Clears the draft without sending it, keeping it in history (pastes
    /// expanded) so Up brings it back. False when there was nothing to
    /// clear.
    pub fn clear_to_history(&mut self) -> bool {
        if self.text.trim().is_empty() {
            self.set_text("");
            return false;
        }
        let raw = std::mem::take(&mut self.text);
        self.history.push(self.pastes.expand(&raw));
        self.set_text("");
        self.forget_unused_pastes();
        true
    }

    /// Rows the box needs at this width (1..=10), without borders.
    pub fn height(&self, width: u16) -> u16 {
        let columns = view::text_columns(width).1;
        self.columns.set(columns);
        let rows = self.rows_from(Anchor::TOP, columns, usize::from(MAX_ROWS));
        u16::try_from(rows.len())
            .unwrap_or(MAX_ROWS)
            .clamp(1, MAX_ROWS)
    }
}
