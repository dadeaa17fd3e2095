//! The approval question. (Placeholder until the widget lands.)

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;
use uji_protocol::FileDiff;

use crate::theme::Theme;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalAnswer {
    AllowOnce,
    AllowSession,
    Deny { guidance: Option<String> },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalKey {
    Up,
    Down,
    Accept,
    Allow,
    AllowSession,
    Deny,
    Cancel,
    PageUp,
    PageDown,
    Char(char),
    Backspace,
    Paste(String),
}

pub struct Approval {
    call_id: String,
    question: String,
    subject: String,
    typing: Option<String>,
}

impl Approval {
    pub fn new(
        call_id: &str,
        _tool: &str,
        question: &str,
        subject: &str,
        _args: &serde_json::Value,
        _diff: Option<&FileDiff>,
        _answers: &[String],
    ) -> Approval {
        Approval {
            call_id: call_id.into(),
            question: question.into(),
            subject: subject.into(),
            typing: None,
        }
    }
    pub fn call_id(&self) -> &str {
        &self.call_id
    }
    pub fn is_typing(&self) -> bool {
        self.typing.is_some()
    }
    pub fn handle(&mut self, key: ApprovalKey) -> Option<ApprovalAnswer> {
        if let Some(text) = &mut self.typing {
            return match key {
                ApprovalKey::Char(c) => {
                    text.push(c);
                    None
                }
                ApprovalKey::Backspace => {
                    text.pop();
                    None
                }
                ApprovalKey::Accept => Some(ApprovalAnswer::Deny {
                    guidance: Some(text.clone()).filter(|t| !t.trim().is_empty()),
                }),
                ApprovalKey::Cancel | ApprovalKey::Deny => {
                    Some(ApprovalAnswer::Deny { guidance: None })
                }
                _ => None,
            };
        }
        match key {
            ApprovalKey::Allow | ApprovalKey::Accept => Some(ApprovalAnswer::AllowOnce),
            ApprovalKey::AllowSession => Some(ApprovalAnswer::AllowSession),
            ApprovalKey::Deny | ApprovalKey::Cancel => {
                self.typing = Some(String::new());
                None
            }
            _ => None,
        }
    }
    pub fn height(&self, _width: u16, max: u16) -> u16 {
        6.min(max)
    }
    pub fn render(&self, area: Rect, buf: &mut Buffer, _theme: &Theme) -> Option<(u16, u16)> {
        let rows = [
            self.question.clone(),
            self.subject.clone(),
            "1. Yes, proceed (y)".into(),
            "2. Yes, and don't ask again for this session (a)".into(),
            "3. No, and tell uji what to do differently (esc)".into(),
            self.typing.clone().unwrap_or_default(),
        ];
        for (i, row) in rows.iter().enumerate() {
            let y = area.y + u16::try_from(i).unwrap_or(0);
            if y < area.bottom() {
                buf.set_line(area.x, y, &Line::from(row.clone()), area.width);
            }
        }
        None
    }
}
