//! The multi-line input box. (Placeholder until the composer lands.)

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;

use crate::theme::Theme;

pub mod suggest;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EditAction {
    CursorLeft,
    CursorRight,
    CursorUp,
    CursorDown,
    CursorStart,
    CursorEnd,
    WordLeft,
    WordRight,
    Backspace,
    DeleteForward,
    DeleteWordBack,
    DeleteWordForward,
    DeleteToStart,
    DeleteToEnd,
    Yank,
    Transpose,
    InsertNewline,
    HistoryPrev,
    HistoryNext,
    Clear,
}

impl EditAction {
    pub fn from_name(name: &str) -> Option<EditAction> {
        Some(match name {
            "backspace" => EditAction::Backspace,
            "insert_newline" => EditAction::InsertNewline,
            "clear_input" => EditAction::Clear,
            "history_prev" => EditAction::HistoryPrev,
            "history_next" => EditAction::HistoryNext,
            _ => return None,
        })
    }
}

#[derive(Default)]
pub struct Composer {
    text: String,
    history: Vec<String>,
}

impl Composer {
    pub fn new() -> Composer {
        Composer::default()
    }
    pub fn set_history(&mut self, entries: Vec<String>) {
        self.history = entries;
    }
    pub fn insert_char(&mut self, c: char) {
        self.text.push(c);
    }
    pub fn insert_str(&mut self, s: &str) {
        self.text.push_str(s);
    }
    pub fn paste(&mut self, text: &str) {
        self.text.push_str(text);
    }
    pub fn apply(&mut self, action: EditAction) {
        match action {
            EditAction::Backspace => {
                self.text.pop();
            }
            EditAction::InsertNewline => self.text.push('\n'),
            EditAction::Clear => self.text.clear(),
            _ => {}
        }
    }
    pub fn text(&self) -> &str {
        &self.text
    }
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }
    pub fn set_text(&mut self, text: &str) {
        self.text = text.to_string();
    }
    pub fn submit(&mut self) -> Option<String> {
        if self.text.trim().is_empty() {
            return None;
        }
        self.history.push(self.text.clone());
        Some(std::mem::take(&mut self.text))
    }
    pub fn height(&self, _width: u16) -> u16 {
        u16::try_from(self.text.lines().count().clamp(1, 10)).unwrap_or(10)
    }
    pub fn render(
        &self,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        placeholder: &str,
    ) -> Option<(u16, u16)> {
        if self.text.is_empty() {
            buf.set_line(
                area.x,
                area.y,
                &Line::styled(format!("› {placeholder}"), theme.dim),
                area.width,
            );
            return Some((area.x + 2, area.y));
        }
        let mut y = area.y;
        let mut x = area.x;
        for (i, line) in self.text.split('\n').enumerate() {
            if y >= area.bottom() {
                break;
            }
            let shown = if i == 0 {
                format!("› {line}")
            } else {
                format!("  {line}")
            };
            buf.set_line(area.x, y, &Line::from(shown.clone()), area.width);
            x = area.x + u16::try_from(shown.chars().count()).unwrap_or(0);
            y += 1;
        }
        Some((x.min(area.right().saturating_sub(1)), y.saturating_sub(1)))
    }
}
