//! Getting the user's attention without being watched: the terminal's
//! title says what uji is doing, and when a turn ends or a question waits
//! while the terminal is not focused, the bell rings or a desktop
//! notification goes out (`uji.ui.configure({ notify = … })`).

use uji_protocol::frontend::Attention;

use super::state::App;

/// What the terminal's title shows: `uji · TITLE` and what uji does.
pub fn title_text(title: &str, cwd: &str, working: bool, asking: bool) -> String {
    let name = if title.trim().is_empty() {
        cwd.rsplit('/')
            .find(|part| !part.is_empty())
            .unwrap_or("uji")
    } else {
        title.trim()
    };
    let state = if asking {
        " · waiting for your answer"
    } else if working {
        " · working"
    } else {
        ""
    };
    format!("uji · {name}{state}")
}

/// OSC 2 setting the title to `text` (control characters dropped, so the
/// title cannot end the sequence early), ended with ST.
pub fn set_title(text: &str) -> Vec<u8> {
    let clean: String = text.chars().filter(|c| !c.is_control()).take(200).collect();
    format!("\x1b]2;{clean}\x1b\\").into_bytes()
}

/// What calls the user back, as bytes for the terminal.
pub fn call_back(how: Attention, text: &str) -> Option<Vec<u8>> {
    let clean: String = text.chars().filter(|c| !c.is_control()).collect();
    match how {
        Attention::Bell => Some(b"\x07".to_vec()),
        Attention::Osc9 => Some(format!("\x1b]9;{clean}\x1b\\").into_bytes()),
        Attention::Osc777 => Some(format!("\x1b]777;notify;uji;{clean}\x1b\\").into_bytes()),
        Attention::Off | Attention::Unknown => None,
    }
}

impl App {
    /// Rings or notifies when the terminal is not focused.
    pub(super) fn call_attention(&mut self, text: &str) {
        if self.focused {
            return;
        }
        if let Some(bytes) = call_back(self.ui.notify, text) {
            self.to_terminal.push(bytes);
        }
    }

    /// Vi mode: a block cursor in normal mode, a bar in insert mode
    /// (DECSCUSR), queued when the mode changed.
    pub(super) fn update_cursor_shape(&mut self) {
        let wanted = self.ui.vim.then(|| self.composer.vim_mode());
        if wanted == self.shown_cursor {
            return;
        }
        let bytes: &[u8] = match wanted {
            Some(crate::composer::VimMode::Normal) => b"\x1b[2 q",
            Some(crate::composer::VimMode::Insert) => b"\x1b[6 q",
            None => crate::terminal::CURSOR_DEFAULT,
        };
        self.to_terminal.push(bytes.to_vec());
        self.shown_cursor = wanted;
    }

    /// Queues the terminal's title when what it should say changed.
    pub(super) fn update_title(&mut self) {
        // Until the session is configured there is nothing to name.
        if self.session_id.is_empty() {
            return;
        }
        let title = title_text(
            &self.title,
            &self.cwd,
            self.busy(),
            !self.approvals.is_empty(),
        );
        if title != self.shown_title {
            self.to_terminal.push(set_title(&title));
            self.shown_title = title;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_title_names_the_session_and_what_uji_does() {
        assert_eq!(title_text("", "/w/repo", false, false), "uji · repo");
        assert_eq!(
            title_text("fix parser", "/w", true, false),
            "uji · fix parser · working"
        );
        assert_eq!(
            title_text("fix parser", "/w", true, true),
            "uji · fix parser · waiting for your answer"
        );
        assert_eq!(set_title("a\x07b\x1bc"), b"\x1b]2;abc\x1b\\");
    }

    #[test]
    fn each_way_of_calling_back_has_its_bytes() {
        assert_eq!(call_back(Attention::Bell, "x").unwrap(), b"\x07");
        assert_eq!(
            call_back(Attention::Osc9, "done").unwrap(),
            b"\x1b]9;done\x1b\\"
        );
        assert_eq!(
            call_back(Attention::Osc777, "done").unwrap(),
            b"\x1b]777;notify;uji;done\x1b\\"
        );
        assert!(call_back(Attention::Off, "x").is_none());
    }
}
