//! `/copy`: the last answer to the clipboard, by OSC 52 (the terminal's
//! own clipboard: it works over ssh and inside tmux) and, where there is
//! one, the system clipboard too.

use base64::Engine as _;

use super::state::App;
use crate::transcript::Level;

/// Most bytes an OSC 52 copy carries: terminals drop longer ones
/// (xterm's limit is about 100 kB of base64).
const MAX_OSC52_BYTES: usize = 74_994;

/// The OSC 52 sequence that sets the clipboard to `text`; None when it is
/// too long for terminals to take.
pub fn osc52(text: &str) -> Option<Vec<u8>> {
    if text.len() > MAX_OSC52_BYTES {
        return None;
    }
    let encoded = base64::engine::general_purpose::STANDARD.encode(text);
    Some(format!("\x1b]52;c;{encoded}\x07").into_bytes())
}

impl App {
    pub(super) fn copy_last_answer(&mut self) {
        let Some(text) = self.transcript.last_answer().map(str::to_string) else {
            return self.notice(
                Level::Warn,
                "nothing to copy yet: no answer in this session",
            );
        };
        let by_terminal = osc52(&text);
        let by_system = self.copy_to_system(&text);
        let chars = text.chars().count();
        match (by_terminal, by_system) {
            (Some(sequence), system) => {
                self.to_terminal.push(sequence);
                let also = if system { " and the system clipboard" } else { "" };
                self.notice(
                    Level::Info,
                    format!("copied the last answer ({chars} characters) to the terminal's clipboard{also}"),
                );
            }
            (None, true) => self.notice(
                Level::Info,
                format!("copied the last answer ({chars} characters) to the system clipboard"),
            ),
            (None, false) => self.notice(
                Level::Warn,
                format!(
                    "the last answer ({chars} characters) is too long for the terminal's clipboard, and there is no system clipboard here; /export saves it to a file"
                ),
            ),
        }
    }

    /// Copies to the system clipboard where a display has one.
    fn copy_to_system(&mut self, text: &str) -> bool {
        let has_display = ["DISPLAY", "WAYLAND_DISPLAY"]
            .iter()
            .any(|v| std::env::var_os(v).is_some_and(|d| !d.is_empty()));
        if !has_display {
            return false;
        }
        if self.clipboard.is_none() {
            self.clipboard = arboard::Clipboard::new().ok();
        }
        self.clipboard
            .as_mut()
            .is_some_and(|c| c.set_text(text.to_string()).is_ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn osc52_carries_the_text_in_base64_and_refuses_what_terminals_drop() {
        assert_eq!(osc52("hi").unwrap(), b"\x1b]52;c;aGk=\x07");
        assert!(osc52(&"x".repeat(MAX_OSC52_BYTES + 1)).is_none());
    }
}
