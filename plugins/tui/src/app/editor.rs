//! Ctrl+G: the draft in `$VISUAL` (else `$EDITOR`, else `vi`), as a
//! temporary Markdown file; the screen gives the terminal to the editor
//! and takes the text back when it exits. The editor starts with uji's
//! environment less the provider keys, like every child of uji.

use std::io::Write;

use super::input_gate::InputGate;
use super::state::App;
use crate::terminal::TerminalGuard;
use crate::transcript::Level;

/// How editing ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Edited {
    /// The file as the editor left it (one trailing newline dropped).
    Text(String),
    /// Nothing changes in the draft; the reason is shown.
    Failed(String),
}

/// The editor command: `$VISUAL`, else `$EDITOR`, else `vi`.
pub fn editor_command(visual: Option<String>, editor: Option<String>) -> String {
    [visual, editor]
        .into_iter()
        .flatten()
        .find(|c| !c.trim().is_empty())
        .unwrap_or_else(|| "vi".to_string())
}

/// Runs the editor on `draft` with the terminal handed over, and takes the
/// terminal back whatever happens.
pub fn edit(draft: &str, guard: &mut TerminalGuard, input: &InputGate) -> Edited {
    let command = editor_command(std::env::var("VISUAL").ok(), std::env::var("EDITOR").ok());
    input.pause();
    guard.suspend();
    let edited = run_editor(&command, draft);
    let resumed = guard.resume();
    input.resume();
    match resumed {
        Ok(()) => edited,
        Err(e) => Edited::Failed(format!("could not take the terminal back: {e}")),
    }
}

/// Writes `draft` to a temporary file, runs `command FILE` through the
/// shell (so `code --wait` works) and reads the file back.
pub fn run_editor(command: &str, draft: &str) -> Edited {
    let file = tempfile::Builder::new()
        .prefix("uji-draft-")
        .suffix(".md")
        .tempfile();
    let mut file = match file {
        Ok(file) => file,
        Err(e) => return Edited::Failed(format!("cannot make a file for the editor: {e}")),
    };
    // A text file ends with a newline (editors add one): the draft gets
    // it here, and loses it again when read back.
    let mut text = draft.to_string();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    if let Err(e) = file.write_all(text.as_bytes()).and_then(|()| file.flush()) {
        return Edited::Failed(format!("cannot write the draft for the editor: {e}"));
    }
    let status = uji_sdk::child::command("sh")
        .arg("-c")
        .arg(format!("{command} \"$1\""))
        .arg("uji-editor")
        .arg(file.path())
        .status();
    match status {
        Ok(status) if status.success() => {}
        Ok(status) => {
            return Edited::Failed(format!(
                "the editor ({command}) exited with {status}; the draft is as it was"
            ));
        }
        Err(e) => {
            return Edited::Failed(format!(
                "cannot start the editor ({command}): {e}; set $VISUAL or $EDITOR"
            ));
        }
    }
    match std::fs::read_to_string(file.path()) {
        Ok(text) => Edited::Text(text.strip_suffix('\n').unwrap_or(&text).to_string()),
        Err(e) => Edited::Failed(format!(
            "cannot read back what the editor wrote: {e}; the draft is as it was"
        )),
    }
}

impl App {
    /// The editor exited: its text is the draft now (or why not is said),
    /// and the whole screen is drawn again.
    pub(super) fn editor_done(&mut self, edited: Edited) {
        match edited {
            Edited::Text(text) => {
                self.composer.set_text(&text);
                self.draft_changed();
            }
            Edited::Failed(why) => self.notice(Level::Warn, why),
        }
        // The terminal was given back and taken again: its title, cursor
        // shape and mouse mode are set anew.
        self.shown_title.clear();
        self.shown_cursor = None;
        if !self.ui.mouse {
            self.to_terminal.push(crate::terminal::MOUSE_OFF.to_vec());
        }
        self.dirty = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visual_wins_over_editor_and_vi_is_the_last_resort() {
        let some = |s: &str| Some(s.to_string());
        assert_eq!(
            editor_command(some("code --wait"), some("nano")),
            "code --wait"
        );
        assert_eq!(editor_command(some(" "), some("nano")), "nano");
        assert_eq!(editor_command(None, None), "vi");
    }

    #[test]
    fn the_editor_gets_the_draft_in_a_file_and_its_changes_come_back() {
        // A stand-in editor that appends a line to the file it is given.
        let edited = run_editor("printf 'and more\\n' >>", "first line");
        assert_eq!(edited, Edited::Text("first line\nand more".to_string()));
    }

    #[test]
    fn a_failing_editor_leaves_the_draft_alone_and_says_why() {
        let Edited::Failed(why) = run_editor("false", "draft") else {
            panic!("a failing editor changes nothing");
        };
        assert!(
            why.contains("exited with") && why.contains("as it was"),
            "{why}"
        );
    }
}
