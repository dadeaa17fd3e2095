//! The editing actions, with readline's semantics, over grapheme clusters
//! and paste placeholders (each placeholder moves and deletes as one unit).

use std::ops::Range;

use unicode_segmentation::GraphemeCursor;

use super::layout::{self, Row, line_end, line_start};
use super::view::Anchor;
use super::{Composer, EditAction};

/// The smallest piece the cursor steps over: a grapheme or a placeholder.
#[derive(Debug, Clone)]
pub(super) struct Unit {
    pub(super) range: Range<usize>,
    placeholder: bool,
}

impl Composer {
    /// Applies one editing action.
    pub fn apply(&mut self, action: EditAction) {
        if !matches!(action, EditAction::CursorUp | EditAction::CursorDown) {
            self.goal_column = None;
        }
        match action {
            EditAction::CursorLeft => {
                self.move_to(self.unit_before(self.cursor).map(|u| u.range.start))
            }
            EditAction::CursorRight => {
                self.move_to(self.unit_after(self.cursor).map(|u| u.range.end))
            }
            EditAction::CursorUp => self.move_vertically(false),
            EditAction::CursorDown => self.move_vertically(true),
            EditAction::CursorStart => self.cursor = self.start_target(),
            EditAction::CursorEnd => self.cursor = self.end_target(),
            EditAction::WordLeft => self.cursor = self.word_start_before(self.cursor),
            EditAction::WordRight => self.cursor = self.word_end_after(self.cursor),
            EditAction::Backspace => self.delete_unit(self.unit_before(self.cursor)),
            EditAction::DeleteForward => self.delete_unit(self.unit_after(self.cursor)),
            EditAction::DeleteWordBack => {
                self.kill(self.word_start_before(self.cursor)..self.cursor)
            }
            EditAction::DeleteWordForward => {
                self.kill(self.cursor..self.word_end_after(self.cursor))
            }
            EditAction::DeleteToStart => self.kill(self.kill_to_start_range()),
            EditAction::DeleteToEnd => self.kill(self.cursor..self.kill_to_end_target()),
            EditAction::Yank => self.yank(),
            EditAction::Transpose => self.transpose(),
            EditAction::InsertNewline => self.insert_char('\n'),
            EditAction::HistoryPrev => self.history_older(),
            EditAction::HistoryNext => self.history_newer(),
            EditAction::Clear => self.clear(),
        }
    }

    /// Replaces `range` of the draft with `with`, leaving the cursor after it.
    pub(super) fn replace(&mut self, range: Range<usize>, with: &str) {
        let Some(_) = self.text.get(range.clone()) else {
            return;
        };
        self.text.replace_range(range.clone(), with);
        self.cursor = range.start + with.len();
    }

    fn move_to(&mut self, target: Option<usize>) {
        if let Some(target) = target {
            self.cursor = target;
        }
    }

    fn unit_before(&self, pos: usize) -> Option<Unit> {
        if let Some(range) = self.pastes.token_ending_at(&self.text, pos) {
            return Some(Unit {
                range,
                placeholder: true,
            });
        }
        let mut graphemes = GraphemeCursor::new(pos, self.text.len(), true);
        let start = graphemes.prev_boundary(&self.text, 0).ok().flatten()?;
        Some(Unit {
            range: start..pos,
            placeholder: false,
        })
    }

    pub(super) fn unit_after(&self, pos: usize) -> Option<Unit> {
        if let Some(range) = self.pastes.token_starting_at(&self.text, pos) {
            return Some(Unit {
                range,
                placeholder: true,
            });
        }
        let mut graphemes = GraphemeCursor::new(pos, self.text.len(), true);
        let end = graphemes.next_boundary(&self.text, 0).ok().flatten()?;
        Some(Unit {
            range: pos..end,
            placeholder: false,
        })
    }

    /// Words are runs of letters and digits (a placeholder counts as one
    /// word); whitespace and punctuation separate them, as in readline.
    pub(super) fn is_word(&self, unit: &Unit) -> bool {
        unit.placeholder
            || self.text[unit.range.clone()]
                .chars()
                .next()
                .is_some_and(char::is_alphanumeric)
    }

    pub(super) fn word_start_before(&self, mut pos: usize) -> usize {
        for want_word in [false, true] {
            while let Some(unit) = self.unit_before(pos) {
                if self.is_word(&unit) != want_word {
                    break;
                }
                pos = unit.range.start;
            }
        }
        pos
    }

    fn word_end_after(&self, mut pos: usize) -> usize {
        for want_word in [false, true] {
            while let Some(unit) = self.unit_after(pos) {
                if self.is_word(&unit) != want_word {
                    break;
                }
                pos = unit.range.end;
            }
        }
        pos
    }

    /// Start of the line, or of the whole draft when already there.
    pub(super) fn start_target(&self) -> usize {
        match line_start(&self.text, self.cursor) {
            start if start == self.cursor => 0,
            start => start,
        }
    }

    /// End of the line, or of the whole draft when already there.
    pub(super) fn end_target(&self) -> usize {
        match line_end(&self.text, self.cursor) {
            end if end == self.cursor => self.text.len(),
            end => end,
        }
    }

    fn delete_unit(&mut self, unit: Option<Unit>) {
        if let Some(unit) = unit {
            self.replace(unit.range, "");
        }
    }

    /// Deletes `range` into the kill buffer for a later yank.
    pub(super) fn kill(&mut self, range: Range<usize>) {
        if range.is_empty() {
            return;
        }
        if let Some(killed) = self.text.get(range.clone()) {
            self.kill_buffer = killed.to_owned();
            self.replace(range, "");
        }
    }

    /// To the line start; at the line start, the newline before it (so the
    /// line joins the one above).
    fn kill_to_start_range(&self) -> Range<usize> {
        let start = line_start(&self.text, self.cursor);
        if start == self.cursor {
            self.cursor.saturating_sub(1)..self.cursor
        } else {
            start..self.cursor
        }
    }

    /// The line end; at the line end, past the newline (joining the next line).
    fn kill_to_end_target(&self) -> usize {
        let end = line_end(&self.text, self.cursor);
        if end == self.cursor && end < self.text.len() {
            end + 1
        } else {
            end
        }
    }

    fn yank(&mut self) {
        let killed = std::mem::take(&mut self.kill_buffer);
        self.replace(self.cursor..self.cursor, &killed);
        self.kill_buffer = killed;
    }

    /// Swaps the units around the cursor and steps past them; at the end of
    /// a line, swaps the two before it. Never moves a newline.
    fn transpose(&mut self) {
        let after = self
            .unit_after(self.cursor)
            .filter(|unit| &self.text[unit.range.clone()] != "\n");
        let pair = match after {
            Some(second) => self.unit_before(self.cursor).map(|first| (first, second)),
            None => self.unit_before(self.cursor).and_then(|second| {
                let first = self.unit_before(second.range.start)?;
                Some((first, second))
            }),
        };
        let Some((first, second)) = pair else {
            return;
        };
        if [&first, &second]
            .iter()
            .any(|u| &self.text[u.range.clone()] == "\n")
        {
            return;
        }
        let swapped = format!(
            "{}{}",
            &self.text[second.range.clone()],
            &self.text[first.range.clone()]
        );
        self.replace(first.range.start..second.range.end, &swapped);
    }

    fn history_older(&mut self) {
        if let Some(entry) = self.history.older(&self.text) {
            let entry = entry.to_owned();
            self.show_recalled(&entry);
        }
    }

    fn history_newer(&mut self) {
        if let Some(entry) = self.history.newer() {
            self.show_recalled(&entry);
        }
    }

    /// Drops the pastes that nothing can bring back any more: not named in
    /// the draft, the kill buffer or the history.
    pub(super) fn forget_unused_pastes(&mut self) {
        let kept = [self.text.as_str(), self.kill_buffer.as_str()];
        let named = self.history.entries().chain(kept);
        self.pastes.retain_named_in(named);
    }

    fn show_recalled(&mut self, entry: &str) {
        self.text = entry.to_owned();
        self.cursor = self.text.len();
        self.scroll.set(Anchor::TOP);
    }

    fn clear(&mut self) {
        self.set_text("");
        self.history.stop_browsing();
        self.forget_unused_pastes();
    }

    /// Moves one visual row up or down, aiming for the remembered column; off
    /// the top or bottom row it walks the history instead.
    fn move_vertically(&mut self, down: bool) {
        let columns = self.columns.get();
        let (row, index) = self.cursor_row(columns);
        let goal = *self
            .goal_column
            .get_or_insert_with(|| layout::column_of(&self.text, row, self.cursor));
        let target = if down {
            self.row_below(row, columns)
        } else {
            self.row_above(row, index, columns)
        };
        match target {
            Some(target) => {
                self.cursor = layout::position_at_column(&self.text, target, goal);
                if let Some(token) = self.pastes.token_around(&self.text, self.cursor) {
                    self.cursor = token.end;
                }
            }
            None if down => self.history_newer(),
            None => self.history_older(),
        }
    }

    fn row_above(&self, row: Row, index: usize, columns: usize) -> Option<Row> {
        let start = line_start(&self.text, row.start);
        if index > 0 {
            let end = line_end(&self.text, row.start);
            return layout::rows(&self.text, start, end, columns).nth(index - 1);
        }
        let above = start.checked_sub(1)?;
        layout::rows(&self.text, line_start(&self.text, above), above, columns).last()
    }

    fn row_below(&self, row: Row, columns: usize) -> Option<Row> {
        if !row.last {
            let end = line_end(&self.text, row.start);
            return layout::rows(&self.text, row.end, end, columns).next();
        }
        let below = row.end + 1;
        if below > self.text.len() {
            return None;
        }
        layout::rows(&self.text, below, line_end(&self.text, below), columns).next()
    }
}
