//! Vi keys for the composer (`uji.ui.configure({ vim = true })`): insert
//! mode types as usual; Esc goes to normal mode, where letters move and
//! edit. Each command is made of the composer's own editing actions, so
//! paste placeholders stay whole and the kill buffer is the one Ctrl+Y
//! yanks from.

use super::{Composer, EditAction};

/// Which vi mode the composer is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VimMode {
    #[default]
    Insert,
    Normal,
}

/// What a key did in normal mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VimOutcome {
    /// The key was a command (or the first key of one): the draft may have
    /// changed.
    Handled,
    /// Not a vi command: the key goes on to the keymap.
    NotMine,
}

/// The vi state: the mode and an operator waiting for its motion (`d`,
/// `c`, `y`).
#[derive(Debug, Default)]
pub struct Vim {
    mode: VimMode,
    operator: Option<char>,
}

impl Composer {
    /// The vi mode the box is in.
    pub fn vim_mode(&self) -> VimMode {
        self.vim.mode
    }

    /// Esc in insert mode: to normal mode, the cursor stepping back onto
    /// the character it followed, as vi does.
    pub fn vim_to_normal(&mut self) {
        self.vim.mode = VimMode::Normal;
        self.vim.operator = None;
        if !self.at_line_start() {
            self.apply(EditAction::CursorLeft);
        }
    }

    /// Back to insert mode (a fresh draft starts there).
    pub fn vim_to_insert(&mut self) {
        self.vim.mode = VimMode::Insert;
        self.vim.operator = None;
    }

    /// A character typed in normal mode.
    pub fn vim_key(&mut self, c: char) -> VimOutcome {
        if let Some(operator) = self.vim.operator.take() {
            self.vim_operator(operator, c);
            return VimOutcome::Handled;
        }
        if self.vim_motion(c) || self.vim_edit(c) {
            return VimOutcome::Handled;
        }
        match c {
            'd' | 'c' | 'y' => self.vim.operator = Some(c),
            _ => return VimOutcome::NotMine,
        }
        VimOutcome::Handled
    }

    /// Cursor motions; true when `c` is one.
    fn vim_motion(&mut self, c: char) -> bool {
        let action = match c {
            'h' => EditAction::CursorLeft,
            'l' => EditAction::CursorRight,
            'j' => EditAction::CursorDown,
            'k' => EditAction::CursorUp,
            'b' => EditAction::WordLeft,
            'e' => EditAction::WordRight,
            '0' | '^' => EditAction::CursorStart,
            '$' => EditAction::CursorEnd,
            'w' => {
                self.cursor = self.next_word_start(self.cursor);
                return true;
            }
            _ => return false,
        };
        self.apply(action);
        true
    }

    /// Edits and the ways into insert mode; true when `c` is one.
    fn vim_edit(&mut self, c: char) -> bool {
        let (actions, insert): (&[EditAction], bool) = match c {
            'x' => (&[EditAction::DeleteForward], false),
            'X' => (&[EditAction::Backspace], false),
            'D' => (&[EditAction::DeleteToEnd], false),
            'C' => (&[EditAction::DeleteToEnd], true),
            'p' => (&[EditAction::CursorRight, EditAction::Yank], false),
            'P' => (&[EditAction::Yank], false),
            'i' => (&[], true),
            'a' => (&[EditAction::CursorRight], true),
            'I' => (&[EditAction::CursorStart], true),
            'A' => (&[EditAction::CursorEnd], true),
            'o' => (&[EditAction::CursorEnd, EditAction::InsertNewline], true),
            'O' => (
                &[
                    EditAction::CursorStart,
                    EditAction::InsertNewline,
                    EditAction::CursorUp,
                ],
                true,
            ),
            _ => return false,
        };
        for action in actions {
            self.apply(*action);
        }
        if insert {
            self.vim.mode = VimMode::Insert;
        }
        true
    }

    /// `d`, `c` or `y` with its motion: `dd`/`cc` the line, `dw`, `db`,
    /// `d$`, `d0`; `y` copies to the kill buffer and leaves the text.
    fn vim_operator(&mut self, operator: char, motion: char) {
        let range = match motion {
            m if m == operator => self.line_range(),
            'w' | 'e' => self.cursor..self.next_word_start(self.cursor),
            'b' => self.word_start_before(self.cursor)..self.cursor,
            '$' => self.cursor..self.end_target(),
            '0' | '^' => self.start_target()..self.cursor,
            _ => return,
        };
        if operator == 'y' {
            if let Some(text) = self.text.get(range) {
                self.kill_buffer = text.to_string();
            }
            return;
        }
        self.kill(range);
        if operator == 'c' {
            self.vim.mode = VimMode::Insert;
        }
    }

    /// The start of the next word after `pos` (vi's `w`): past the rest of
    /// this word, then past the spaces.
    fn next_word_start(&self, mut pos: usize) -> usize {
        let start_is_word = self.unit_after(pos).map(|u| self.is_word(&u));
        while let Some(unit) = self.unit_after(pos) {
            if Some(self.is_word(&unit)) != start_is_word {
                break;
            }
            pos = unit.range.end;
        }
        while let Some(unit) = self.unit_after(pos) {
            let blank = self.text[unit.range.clone()]
                .chars()
                .all(char::is_whitespace);
            if !blank {
                break;
            }
            pos = unit.range.end;
        }
        pos
    }

    /// The cursor's line, with its newline when one follows.
    fn line_range(&self) -> std::ops::Range<usize> {
        let start = self.text[..self.cursor].rfind('\n').map_or(0, |at| at + 1);
        let end = self.text[self.cursor..]
            .find('\n')
            .map_or(self.text.len(), |at| self.cursor + at + 1);
        start..end
    }

    fn at_line_start(&self) -> bool {
        self.cursor == 0 || self.text[..self.cursor].ends_with('\n')
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn normal(text: &str, cursor: usize) -> Composer {
        let mut c = Composer::new();
        c.set_text(text);
        c.cursor = cursor;
        c.vim.mode = VimMode::Normal;
        c
    }

    fn keys(c: &mut Composer, keys: &str) {
        for k in keys.chars() {
            c.vim_key(k);
        }
    }

    #[test]
    fn esc_steps_back_onto_the_last_character_and_i_types_again() {
        let mut c = Composer::new();
        c.insert_str("hello");
        c.vim_to_normal();
        assert_eq!((c.vim_mode(), c.cursor()), (VimMode::Normal, 4));
        keys(&mut c, "i");
        c.insert_char('!');
        assert_eq!(c.text(), "hell!o");
    }

    #[test]
    fn motions_move_by_character_word_and_line() {
        let mut c = normal("one two  three", 0);
        keys(&mut c, "w");
        assert_eq!(c.cursor(), 4);
        keys(&mut c, "w");
        assert_eq!(c.cursor(), 9);
        keys(&mut c, "b");
        assert_eq!(c.cursor(), 4);
        keys(&mut c, "$");
        assert_eq!(c.cursor(), 14);
        keys(&mut c, "0l");
        assert_eq!(c.cursor(), 1);
    }

    #[test]
    fn operators_take_a_motion_and_fill_the_kill_buffer() {
        let mut c = normal("one two three", 4);
        keys(&mut c, "dw");
        assert_eq!(c.text(), "one three");
        keys(&mut c, "P");
        assert_eq!(c.text(), "one two three");
        let mut c = normal("first\nsecond\nthird", 8);
        keys(&mut c, "dd");
        assert_eq!(c.text(), "first\nthird");
        let mut c = normal("fix it", 4);
        keys(&mut c, "cw");
        assert_eq!(c.vim_mode(), VimMode::Insert);
        c.insert_str("this");
        assert_eq!(c.text(), "fix this");
        let mut c = normal("keep me", 0);
        keys(&mut c, "yw$p");
        assert_eq!(c.text(), "keep mekeep ");
    }

    #[test]
    fn edits_and_the_ways_into_insert_mode() {
        let mut c = normal("abc", 1);
        keys(&mut c, "x");
        assert_eq!(c.text(), "ac");
        keys(&mut c, "A");
        assert_eq!(c.vim_mode(), VimMode::Insert);
        c.insert_str("d");
        assert_eq!(c.text(), "acd");
        let mut c = normal("line", 2);
        keys(&mut c, "o");
        c.insert_str("next");
        assert_eq!(c.text(), "line\nnext");
        let mut c = normal("tail", 2);
        keys(&mut c, "D");
        assert_eq!(c.text(), "ta");
    }

    #[test]
    fn a_key_that_is_no_command_goes_on_to_the_keymap() {
        let mut c = normal("text", 0);
        assert_eq!(c.vim_key('Z'), VimOutcome::NotMine);
        assert_eq!(c.text(), "text");
    }
}
