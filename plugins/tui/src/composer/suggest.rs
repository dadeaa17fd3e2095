//! Slash-command suggestions. (Placeholder.)

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;

use crate::theme::Theme;

#[derive(Debug, Clone)]
pub struct CommandEntry {
    pub name: String,
    pub description: String,
}

#[derive(Default)]
pub struct Suggestions {
    matches: Vec<CommandEntry>,
    selected: usize,
}

impl Suggestions {
    pub fn new() -> Suggestions {
        Suggestions::default()
    }
    pub fn update(&mut self, draft: &str, commands: &[CommandEntry]) -> bool {
        self.matches.clear();
        if let Some(prefix) = draft.strip_prefix('/')
            && !prefix.contains(char::is_whitespace)
        {
            {
                self.matches = commands
                    .iter()
                    .filter(|c| c.name.starts_with(prefix))
                    .take(5)
                    .cloned()
                    .collect();
            }
        }
        self.selected = 0;
        self.is_open()
    }
    pub fn is_open(&self) -> bool {
        !self.matches.is_empty()
    }
    pub fn close(&mut self) {
        self.matches.clear();
    }
    pub fn up(&mut self) {
        self.selected = self.selected.saturating_sub(1);
    }
    pub fn down(&mut self) {
        if self.selected + 1 < self.matches.len() {
            self.selected += 1;
        }
    }
    pub fn completion(&self) -> Option<String> {
        self.selected().map(|c| format!("/{} ", c.name))
    }
    pub fn selected(&self) -> Option<&CommandEntry> {
        self.matches.get(self.selected)
    }
    pub fn height(&self) -> u16 {
        u16::try_from(self.matches.len()).unwrap_or(5)
    }
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        for (i, c) in self.matches.iter().enumerate() {
            let y = area.y + u16::try_from(i).unwrap_or(0);
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
                &Line::styled(format!("/{}  {}", c.name, c.description), style),
                area.width,
            );
        }
    }
}
