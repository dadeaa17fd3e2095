//! Pick one of a list. (Placeholder until the widget lands.)

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;

use crate::theme::Theme;

#[derive(Debug, Clone)]
pub struct PickerItem {
    pub label: String,
    pub detail: String,
    pub value: String,
}
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PickerOutcome {
    Chosen(String),
    Delete(String),
    Cancelled,
}
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PickerKey {
    Up,
    Down,
    PageUp,
    PageDown,
    Accept,
    Cancel,
    Delete,
    Char(char),
    Backspace,
}

pub struct Picker {
    title: String,
    items: Vec<PickerItem>,
    selected: usize,
    allow_delete: bool,
}

impl Picker {
    pub fn new(title: &str, items: Vec<PickerItem>, allow_delete: bool) -> Picker {
        Picker {
            title: title.into(),
            items,
            selected: 0,
            allow_delete,
        }
    }
    pub fn select(&mut self, value: &str) {
        if let Some(i) = self.items.iter().position(|i| i.value == value) {
            self.selected = i;
        }
    }
    pub fn remove(&mut self, value: &str) {
        self.items.retain(|i| i.value != value);
        self.selected = 0;
    }
    pub fn handle(&mut self, key: PickerKey) -> Option<PickerOutcome> {
        match key {
            PickerKey::Up => {
                self.selected = self.selected.saturating_sub(1);
                None
            }
            PickerKey::Down => {
                if self.selected + 1 < self.items.len() {
                    self.selected += 1;
                }
                None
            }
            PickerKey::Accept => self
                .items
                .get(self.selected)
                .map(|i| PickerOutcome::Chosen(i.value.clone())),
            PickerKey::Delete if self.allow_delete => self
                .items
                .get(self.selected)
                .map(|i| PickerOutcome::Delete(i.value.clone())),
            PickerKey::Cancel => Some(PickerOutcome::Cancelled),
            _ => None,
        }
    }
    pub fn height(&self, max: u16) -> u16 {
        u16::try_from(self.items.len() + 1).unwrap_or(max).min(max)
    }
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        buf.set_line(area.x, area.y, &Line::from(self.title.clone()), area.width);
        for (i, item) in self.items.iter().enumerate() {
            let y = area.y + 1 + u16::try_from(i).unwrap_or(0);
            if y >= area.bottom() {
                break;
            }
            let style = if i == self.selected {
                theme.selected
            } else {
                theme.text
            };
            buf.set_line(
                area.x,
                y,
                &Line::styled(format!("{}  {}", item.label, item.detail), style),
                area.width,
            );
        }
    }
}
