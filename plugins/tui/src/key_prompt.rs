//! The masked input `/login` asks for a key with: a bordered box in the
//! input's place. What is typed or pasted is held here only, drawn as a
//! count of characters (never the characters), and handed over once on
//! Enter; it never reaches the composer, its history or the transcript.
//!
//! A plugin's prompt dialog (`ui.dialog` with kind `prompt`) is the same
//! box: masked when the dialog is `hidden`, else a plain one-line input,
//! prefilled with the dialog's `value`.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::approval_guard::Guard;
use crate::picker::titled_box;
use crate::theme::Theme;
use crate::transcript::tool::cut;

/// The keys the prompt understands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyPromptKey {
    Char(char),
    Paste(String),
    Backspace,
    Accept,
    Cancel,
}

/// What the user did with the prompt.
#[derive(PartialEq, Eq)]
pub enum KeyPromptOutcome {
    /// The key as typed (the app cleans and sends it).
    Submit(String),
    Cancelled,
}

impl std::fmt::Debug for KeyPromptOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KeyPromptOutcome::Submit(_) => f.write_str("Submit(<hidden>)"),
            KeyPromptOutcome::Cancelled => f.write_str("Cancelled"),
        }
    }
}

/// An open key prompt for one provider.
pub struct KeyPrompt {
    provider: String,
    title: String,
    note: String,
    key: String,
    /// Whether Enter may save yet. What is typed or pasted always goes to
    /// the prompt (a key must never land in the draft, where it is drawn),
    /// so only Enter waits for the guard.
    guard: Guard,
    /// A plugin's prompt dialog: its id, and whether the text is shown.
    dialog: Option<DialogInput>,
}

/// What makes a prompt a plugin's dialog rather than `/login`'s.
struct DialogInput {
    id: String,
    visible: bool,
}

impl KeyPrompt {
    /// A plugin's prompt dialog: masked when `hidden`, else shown as
    /// typed; starts with `value`.
    pub fn for_dialog(id: &str, title: &str, hidden: bool, value: Option<&str>) -> KeyPrompt {
        let mut prompt = KeyPrompt::new("", title, "");
        prompt.key = value.unwrap_or_default().to_string();
        prompt.dialog = Some(DialogInput {
            id: id.to_string(),
            visible: !hidden,
        });
        prompt
    }

    /// The dialog this prompt answers, if it is a plugin's.
    pub fn dialog_id(&self) -> Option<&str> {
        self.dialog.as_ref().map(|d| d.id.as_str())
    }

    fn visible(&self) -> bool {
        self.dialog.as_ref().is_some_and(|d| d.visible)
    }

    /// `title` names the provider and its variable; `note` says what
    /// happens to the key (checked, saved where, overridden by what).
    pub fn new(provider: &str, title: &str, note: &str) -> KeyPrompt {
        KeyPrompt {
            provider: provider.to_string(),
            title: title.to_string(),
            note: note.to_string(),
            key: String::new(),
            guard: Guard::default(),
            dialog: None,
        }
    }

    pub fn guard(&self) -> &Guard {
        &self.guard
    }

    pub fn guard_mut(&mut self) -> &mut Guard {
        &mut self.guard
    }

    pub fn provider(&self) -> &str {
        &self.provider
    }

    /// Feeds a key; Some(outcome) when the prompt is done.
    pub fn handle(&mut self, key: KeyPromptKey) -> Option<KeyPromptOutcome> {
        match key {
            KeyPromptKey::Char(c) if !c.is_control() => self.key.push(c),
            KeyPromptKey::Char(_) => {}
            // A pasted key often ends with a newline: blanks around it
            // are trimmed when it is sent, control characters are dropped.
            KeyPromptKey::Paste(text) => {
                self.key.extend(text.chars().filter(|c| !c.is_control()));
            }
            KeyPromptKey::Backspace => {
                self.key.pop();
            }
            // A dialog may be answered with nothing; a key may not.
            KeyPromptKey::Accept if self.key.trim().is_empty() && self.dialog.is_none() => {}
            KeyPromptKey::Accept => {
                return Some(KeyPromptOutcome::Submit(std::mem::take(&mut self.key)));
            }
            KeyPromptKey::Cancel => {
                self.key.clear();
                return Some(KeyPromptOutcome::Cancelled);
            }
        }
        None
    }

    /// Rows the box wants: borders, the note, the input, the hint.
    pub fn height(&self) -> u16 {
        5
    }

    /// What the input line shows instead of the key.
    fn masked(&self) -> String {
        if self.visible() {
            return self.key.clone();
        }
        match self.key.chars().count() {
            0 => String::new(),
            n => format!("{} characters (hidden)", n),
        }
    }

    /// Draws the box over `area`; returns where the cursor goes.
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) -> Option<(u16, u16)> {
        let inner = titled_box(&self.title, area, buf, theme);
        if inner.is_empty() {
            return None;
        }
        let width = usize::from(inner.width);
        let prompt = if self.dialog.is_some() {
            "› "
        } else {
            "key: "
        };
        let masked = self.masked();
        let empty = if self.dialog.is_some() {
            "type, then enter"
        } else {
            "paste or type the key"
        };
        let input = if masked.is_empty() {
            Line::from(vec![
                Span::styled(prompt, theme.accent),
                Span::styled(empty, theme.dim),
            ])
        } else {
            Line::from(vec![
                Span::styled(prompt, theme.accent),
                Span::styled(masked.clone(), theme.text),
            ])
        };
        let hint = match (self.dialog.as_ref(), self.guard.shows_ready()) {
            (Some(d), true) if d.visible => "enter answer · esc cancel",
            (Some(d), false) if d.visible => "enter answers in a moment · esc cancel",
            (Some(_), true) => "enter answer · esc cancel · what you type is never shown",
            (Some(_), false) => {
                "enter answers in a moment · esc cancel · what you type is never shown"
            }
            (None, true) => "enter save · esc cancel · the key is never shown",
            (None, false) => "enter saves in a moment · esc cancel · the key is never shown",
        };
        let rows = [
            Line::styled(cut(&self.note, width), theme.dim),
            input,
            Line::styled(cut(hint, width), theme.dim),
        ];
        for (y, line) in (inner.y..inner.bottom()).zip(&rows) {
            buf.set_line(inner.x, y, line, inner.width);
        }
        let row = inner.y.saturating_add(1);
        (row < inner.bottom()).then(|| {
            let used = prompt.chars().count() + masked.chars().count();
            let x = inner.x + u16::try_from(used).unwrap_or(0).min(inner.width - 1);
            (x, row)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::buffer_rows;

    fn typed(prompt: &mut KeyPrompt, text: &str) {
        for c in text.chars() {
            assert_eq!(prompt.handle(KeyPromptKey::Char(c)), None);
        }
    }

    #[test]
    fn the_key_is_never_drawn_and_enter_hands_it_over_once() {
        let mut prompt =
            KeyPrompt::new("groq", "Key for Groq (GROQ_API_KEY)", "checked, then saved");
        typed(&mut prompt, "gsk-secret");
        prompt.handle(KeyPromptKey::Paste("-tail\n".into()));
        prompt.handle(KeyPromptKey::Backspace);
        let mut buf = Buffer::empty(Rect::new(0, 0, 60, prompt.height()));
        prompt.render(buf.area, &mut buf, &Theme::plain());
        let screen = buffer_rows(&buf).join("\n");
        assert!(!screen.contains("gsk"), "{screen}");
        assert!(!screen.contains("tai"), "{screen}");
        assert!(screen.contains("14 characters (hidden)"), "{screen}");
        assert!(screen.contains("Key for Groq"), "{screen}");
        assert_eq!(
            prompt.handle(KeyPromptKey::Accept),
            Some(KeyPromptOutcome::Submit("gsk-secret-tai".into()))
        );
        assert!(prompt.masked().is_empty(), "the prompt keeps nothing");
        assert!(!format!("{:?}", KeyPromptOutcome::Submit("gsk-x".into())).contains("gsk"));
    }

    #[test]
    fn a_dialog_prompt_shows_its_prefilled_text_unless_hidden() {
        let mut shown = KeyPrompt::for_dialog("dialog-1", "Commit message", false, Some("fix: "));
        typed(&mut shown, "parser");
        let mut buf = Buffer::empty(Rect::new(0, 0, 60, shown.height()));
        shown.render(buf.area, &mut buf, &Theme::plain());
        let screen = buffer_rows(&buf).join("\n");
        assert!(screen.contains("› fix: parser"), "{screen}");
        assert!(screen.contains("Commit message"), "{screen}");
        assert_eq!(shown.dialog_id(), Some("dialog-1"));
        let mut hidden = KeyPrompt::for_dialog("dialog-2", "Token", true, None);
        typed(&mut hidden, "s3cret");
        let mut buf = Buffer::empty(Rect::new(0, 0, 60, hidden.height()));
        hidden.render(buf.area, &mut buf, &Theme::plain());
        let screen = buffer_rows(&buf).join("\n");
        assert!(!screen.contains("s3cret"), "{screen}");
        assert!(screen.contains("6 characters (hidden)"), "{screen}");
        // A dialog may be answered with nothing.
        let mut empty = KeyPrompt::for_dialog("dialog-3", "Note", false, None);
        assert_eq!(
            empty.handle(KeyPromptKey::Accept),
            Some(KeyPromptOutcome::Submit(String::new()))
        );
    }

    #[test]
    fn enter_on_nothing_waits_and_esc_forgets_what_was_typed() {
        let mut prompt = KeyPrompt::new("groq", "Key", "");
        assert_eq!(prompt.handle(KeyPromptKey::Accept), None);
        typed(&mut prompt, "abc");
        assert_eq!(
            prompt.handle(KeyPromptKey::Cancel),
            Some(KeyPromptOutcome::Cancelled)
        );
        assert!(prompt.key.is_empty());
    }
}
