//! Markdown to styled, wrapped lines (pulldown-cmark), incrementally while
//! an answer streams. (Placeholder until the renderer lands: plain text.)

use ratatui::text::Line;

use crate::theme::Theme;

#[derive(Default)]
pub struct Markdown {
    text: String,
    cache: Option<(u16, Vec<Line<'static>>)>,
}

impl Markdown {
    pub fn new() -> Markdown {
        Markdown::default()
    }
    pub fn from_text(text: &str) -> Markdown {
        Markdown {
            text: text.to_string(),
            cache: None,
        }
    }
    pub fn push_str(&mut self, delta: &str) {
        self.text.push_str(delta);
        self.cache = None;
    }
    pub fn text(&self) -> &str {
        &self.text
    }
    pub fn truncate(&mut self, len: usize) {
        let mut len = len.min(self.text.len());
        while !self.text.is_char_boundary(len) {
            len -= 1;
        }
        self.text.truncate(len);
        self.cache = None;
    }
    pub fn lines(&mut self, width: u16, theme: &Theme) -> &[Line<'static>] {
        if self.cache.as_ref().is_none_or(|(w, _)| *w != width) {
            self.cache = Some((width, render(&self.text, width, theme)));
        }
        self.cache
            .as_ref()
            .map(|(_, l)| l.as_slice())
            .unwrap_or(&[])
    }
}

pub fn render(text: &str, width: u16, _theme: &Theme) -> Vec<Line<'static>> {
    let width = usize::from(width.max(1));
    let mut out = Vec::new();
    for line in text.lines() {
        let chars: Vec<char> = line.chars().collect();
        if chars.is_empty() {
            out.push(Line::from(""));
        }
        for chunk in chars.chunks(width) {
            out.push(Line::from(chunk.iter().collect::<String>()));
        }
    }
    out
}
