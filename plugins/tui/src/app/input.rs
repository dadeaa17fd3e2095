//! Terminal input: keys through the keymap to actions, pastes, the mouse
//! wheel and resizes.

use crossterm::event::{Event, KeyEvent, KeyEventKind, MouseEventKind};
use uji_protocol::frontend::{ApprovalDecision, Delivery, Op};

use super::state::{App, Pending};
use crate::approval::{ApprovalAnswer, ApprovalKey};
use crate::approval_guard::Route;
use crate::composer::{EditAction, VimMode, VimOutcome};
use crate::keys::{self, Binding, Mode};
use crate::picker::PickerKey;

/// Rows one wheel step scrolls.
const WHEEL_ROWS: usize = 3;
/// A second Ctrl+C within this quits.
const QUIT_WINDOW: std::time::Duration = std::time::Duration::from_secs(2);

impl App {
    pub(super) fn on_terminal(&mut self, event: Event) {
        self.dirty = true;
        match event {
            Event::Key(key) if key.kind != KeyEventKind::Release => self.on_key(&key),
            Event::Paste(text) => self.on_paste(&text),
            Event::Mouse(mouse) => match mouse.kind {
                MouseEventKind::ScrollUp => self.viewport.scroll_up(WHEEL_ROWS),
                MouseEventKind::ScrollDown => self.viewport.scroll_down(WHEEL_ROWS),
                _ => self.dirty = false,
            },
            Event::Resize(..) => {}
            Event::FocusGained => self.focused = true,
            Event::FocusLost => self.focused = false,
            Event::Key(_) => self.dirty = false,
        }
    }

    /// Which mode the keys are in: the top of what is open gets them.
    pub(super) fn mode(&self) -> Mode {
        if !self.approvals.is_empty() {
            Mode::Confirm
        } else if self.picker.is_some() || self.login.prompt.is_some() {
            Mode::Select
        } else if self.files.is_open() || self.suggestions.is_open() {
            Mode::Suggest
        } else {
            Mode::Normal
        }
    }

    fn on_key(&mut self, key: &KeyEvent) {
        panic_for_tests(key);
        let mode = self.mode();
        if mode != Mode::Confirm && self.prompt_key(key) {
            return;
        }
        if mode == Mode::Normal && self.ui.vim && self.vim_key(key) {
            return;
        }
        let bound = self.binding(mode, key);
        // Closing a picker decides nothing: it needs no guard.
        let cancels_picker =
            mode == Mode::Select && bound == Some(Binding::Action("modal_cancel".into()));
        // A question answers only keys pressed once it is ready.
        if !cancels_picker && self.route_key() == Some(Route::Draft) {
            return self.key_to_draft(key);
        }
        // Guidance after a denial is typed text: letters are not shortcuts.
        if mode == Mode::Confirm
            && self.approvals.first().is_some_and(|a| a.is_typing())
            && let Some(c) = keys::typed_char(key)
        {
            return self.answer_approval(ApprovalKey::Char(c));
        }
        match bound {
            Some(Binding::Action(action)) => self.act(mode, &action),
            Some(Binding::Command(command)) => self.run_slash(&command, ""),
            None => {
                if let Some(c) = keys::typed_char(key) {
                    self.type_char(mode, c);
                }
            }
        }
    }

    /// Vi mode: Esc in insert mode goes to normal mode; in normal mode
    /// letters are commands (Esc there stops the turn, as without vi).
    /// True when the key was vi's.
    fn vim_key(&mut self, key: &KeyEvent) -> bool {
        let plain_esc = key.code == crossterm::event::KeyCode::Esc && key.modifiers.is_empty();
        match self.composer.vim_mode() {
            VimMode::Insert if plain_esc => {
                self.composer.vim_to_normal();
                true
            }
            VimMode::Insert => false,
            VimMode::Normal => {
                let Some(c) = keys::typed_char(key) else {
                    return false;
                };
                if self.composer.vim_key(c) == VimOutcome::NotMine {
                    // A bound key still acts; any other letter types
                    // nothing in normal mode.
                    return self.binding(Mode::Normal, key).is_none();
                }
                self.draft_changed();
                true
            }
        }
    }

    /// What `key` is bound to in `mode`.
    pub(super) fn binding(&self, mode: Mode, key: &KeyEvent) -> Option<Binding> {
        keys::canonical(key)
            .as_deref()
            .and_then(|name| self.keymap.lookup(mode, name))
            .cloned()
    }

    fn type_char(&mut self, mode: Mode, c: char) {
        match mode {
            Mode::Confirm if self.approvals.first().is_some_and(|a| a.takes_char(c)) => {
                self.answer_approval(ApprovalKey::Char(c));
            }
            // Typed at a question that has no use for it: the user is
            // writing, not answering.
            Mode::Confirm => {
                self.composer.insert_char(c);
                self.draft_changed();
                self.typed_past_question();
            }
            Mode::Select => self.picker_key(PickerKey::Char(c)),
            Mode::Normal | Mode::Suggest => {
                self.composer.insert_char(c);
                self.draft_changed();
            }
        }
    }

    /// A paste never answers a question: it is text for the question's own
    /// input (guidance, a filter, the key), or else for the draft.
    fn on_paste(&mut self, text: &str) {
        if self.mode() != Mode::Confirm && self.prompt_paste(text) {
            return;
        }
        if self.route_paste() == Some(Route::Draft) {
            return self.paste_to_draft(text);
        }
        match self.mode() {
            Mode::Confirm if self.approvals.first().is_some_and(|a| a.is_typing()) => {
                self.answer_approval(ApprovalKey::Paste(text.to_string()));
            }
            Mode::Confirm => {
                self.paste_to_draft(text);
                self.typed_past_question();
            }
            Mode::Select => {
                for c in text.chars().filter(|c| !c.is_control()) {
                    self.picker_key(PickerKey::Char(c));
                }
            }
            Mode::Normal | Mode::Suggest => self.paste_to_draft(text),
        }
    }

    fn paste_to_draft(&mut self, text: &str) {
        match super::attach::image_file(text) {
            Some(Ok(image)) => self.composer.attach_image(image),
            Some(Err(why)) => {
                self.notice(crate::transcript::Level::Warn, why);
                self.composer.paste(text);
            }
            None => self.composer.paste(text),
        }
        self.draft_changed();
    }

    pub(super) fn draft_changed(&mut self) {
        let draft = self.composer.text().to_string();
        self.suggestions.update(&draft, &self.commands);
        self.files.update(&draft, self.composer.cursor());
    }

    /// Runs a keymap action in `mode`.
    fn act(&mut self, mode: Mode, action: &str) {
        if self.act_anywhere(action) {
            return;
        }
        match mode {
            Mode::Confirm => self.act_confirm(action),
            Mode::Select => self.act_select(action),
            Mode::Suggest if self.act_suggest(action) => {}
            Mode::Suggest | Mode::Normal => self.act_normal(action),
        }
    }

    /// Actions that mean the same in every mode.
    pub(super) fn act_anywhere(&mut self, action: &str) -> bool {
        match action {
            "quit" => self.quit(),
            "clear_or_quit" => self.clear_or_quit(),
            "interrupt" => self.escape(),
            "background" => self.send_to_background(),
            "toggle_thinking" => {
                let on = !self.transcript.show_thinking();
                self.transcript.set_show_thinking(on);
            }
            "toggle_details" => self.transcript.toggle_expanded(),
            "scroll_up" => self.viewport.scroll_up(1),
            "scroll_down" => self.viewport.scroll_down(1),
            "scroll_top" => self.viewport.to_top(),
            "scroll_bottom" => self.viewport.to_bottom(),
            "nothing" => {}
            _ => return false,
        }
        true
    }

    fn act_normal(&mut self, action: &str) {
        match action {
            "submit" => self.submit_draft(),
            "cycle_mode" => {
                let mode = self.status.mode.next();
                self.submit(Op::SetMode { mode }, Pending::Other);
            }
            "edit_in_editor" => self.editor_request = Some(self.composer.expanded_text()),
            "paste_image" => self.paste_from_clipboard(),
            "history_search" => self.open_history_search(),
            "rewind" => self.open_rewind_picker(),
            "cursor_up" | "history_prev" if self.take_back_queued() => {}
            "page_up" => {
                let page = self.viewport.page();
                self.viewport.scroll_up(page);
            }
            "page_down" => {
                let page = self.viewport.page();
                self.viewport.scroll_down(page);
            }
            other => {
                if let Some(edit) = EditAction::from_name(other) {
                    self.composer.apply(edit);
                    self.draft_changed();
                }
            }
        }
    }

    fn act_suggest(&mut self, action: &str) -> bool {
        if self.files.is_open() {
            return self.act_files(action);
        }
        match action {
            "modal_up" => self.suggestions.up(),
            "modal_down" => self.suggestions.down(),
            "modal_cancel" => self.suggestions.close(),
            "suggest_complete" => {
                if let Some(completion) = self.suggestions.completion() {
                    self.composer.set_text(&completion);
                    self.draft_changed();
                }
            }
            "modal_accept" => {
                if let Some(entry) = self.suggestions.selected() {
                    let name = entry.name.clone();
                    self.composer.set_text(&format!("/{name}"));
                    self.suggestions.close();
                    self.submit_draft();
                }
            }
            _ => return false,
        }
        true
    }

    /// Keys while the `@` list is open: Tab and Enter put the path in the
    /// draft (Enter does not send).
    fn act_files(&mut self, action: &str) -> bool {
        match action {
            "modal_up" => self.files.up(),
            "modal_down" => self.files.down(),
            "modal_cancel" => self.files.close(self.composer.text()),
            "suggest_complete" | "modal_accept" => {
                if let Some((draft, cursor)) = self.files.completion(self.composer.text()) {
                    self.composer.set_text(&draft);
                    self.composer.set_cursor(cursor);
                    self.draft_changed();
                }
            }
            _ => return false,
        }
        true
    }

    fn act_confirm(&mut self, action: &str) {
        let key = match action {
            "confirm_allow" => ApprovalKey::Allow,
            "confirm_allow_session" => ApprovalKey::AllowSession,
            "confirm_deny" => ApprovalKey::Deny,
            "confirm_stop" => ApprovalKey::Stop,
            "modal_up" => ApprovalKey::Up,
            "modal_down" => ApprovalKey::Down,
            "modal_accept" | "submit" => ApprovalKey::Accept,
            "modal_cancel" => ApprovalKey::Cancel,
            "page_up" => ApprovalKey::PageUp,
            "page_down" => ApprovalKey::PageDown,
            "backspace" => ApprovalKey::Backspace,
            _ => return,
        };
        self.answer_approval(key);
    }

    fn act_select(&mut self, action: &str) {
        let key = match action {
            "modal_up" => PickerKey::Up,
            "modal_down" => PickerKey::Down,
            "page_up" => PickerKey::PageUp,
            "page_down" => PickerKey::PageDown,
            "modal_accept" => PickerKey::Accept,
            "modal_cancel" => PickerKey::Cancel,
            "modal_delete" => PickerKey::Delete,
            "backspace" => PickerKey::Backspace,
            "delete_word_back" => PickerKey::DeleteWord,
            "delete_to_start" => PickerKey::ClearFilter,
            _ => return,
        };
        self.picker_key(key);
    }

    pub(super) fn answer_approval(&mut self, key: ApprovalKey) {
        let Some(approval) = self.approvals.first_mut() else {
            return;
        };
        let Some(answer) = approval.handle(key) else {
            return;
        };
        let call_id = approval.call_id().to_string();
        if self.is_dialog(&call_id) {
            self.approvals.remove(0);
            let yes = matches!(
                answer,
                ApprovalAnswer::AllowOnce | ApprovalAnswer::AllowSession
            );
            return self.answer_dialog(uji_protocol::frontend::DialogAnswer::Confirmed { yes });
        }
        let (decision, guidance) = match answer {
            ApprovalAnswer::AllowOnce => (ApprovalDecision::AllowOnce, None),
            ApprovalAnswer::AllowSession => (ApprovalDecision::AllowSession, None),
            ApprovalAnswer::Deny { guidance } => (ApprovalDecision::Deny, guidance),
            ApprovalAnswer::Stop => (ApprovalDecision::Stop, None),
        };
        let op = Op::Approval {
            call_id,
            decision: Some(decision),
            allow: None,
            guidance,
        };
        self.submit(op, Pending::Other);
        // The question closes now; `approval_resolved` confirms it.
        self.approvals.remove(0);
    }

    /// Ctrl+C: clears a draft (kept in history), else stops what runs;
    /// either way it says how to quit, and a second press within
    /// [`QUIT_WINDOW`] quits. One press never loses typed text or quits.
    fn clear_or_quit(&mut self) {
        let now = self.clock.now();
        if self
            .quit_armed
            .is_some_and(|at| now.saturating_duration_since(at) <= QUIT_WINDOW)
        {
            return self.quit();
        }
        let hint = if self.composer.clear_to_history() {
            self.draft_changed();
            "draft cleared (Up brings it back) · Ctrl+C again to quit"
        } else {
            self.submit_interrupt();
            "press Ctrl+C again to quit"
        };
        self.quit_armed = Some(now);
        self.hint(hint, QUIT_WINDOW);
    }

    pub(super) fn submit_interrupt(&mut self) {
        if self.busy() || self.transcript.animating() || !self.approvals.is_empty() {
            self.submit(Op::Interrupt, Pending::Other);
        }
    }

    /// Enter: a slash command, a `!` shell command or a message.
    pub(super) fn submit_draft(&mut self) {
        let Some((text, images)) = self.composer.submit_with_images() else {
            return;
        };
        self.suggestions.close();
        self.viewport.to_bottom();
        let trimmed = text.trim();
        if let Some(command) = trimmed.strip_prefix('!') {
            return self.run_shell(command.trim());
        }
        if let Some(line) = trimmed.strip_prefix('/') {
            let (name, args) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
            if !name.is_empty() && !name.contains('/') {
                return self.run_slash(name, args.trim());
            }
        }
        let op = Op::UserMessage {
            text,
            images,
            delivery: Delivery::Steer,
        };
        self.submit(op, Pending::Other);
    }

    fn run_shell(&mut self, command: &str) {
        if command.is_empty() {
            return;
        }
        let op = Op::Shell {
            command: command.to_string(),
        };
        let id = self.submit(op, Pending::Other);
        let block = crate::transcript::tool::ShellBlock::new(command);
        self.transcript
            .push(crate::transcript::Block::Shell { op_id: id, block });
    }
}

/// Debug builds only: with `UJI_TUI_TEST_PANIC` set, F12 panics, so the
/// end-to-end tests can check that a crash gives the terminal back.
#[cfg(debug_assertions)]
fn panic_for_tests(key: &KeyEvent) {
    if key.code == crossterm::event::KeyCode::F(12)
        && std::env::var_os("UJI_TUI_TEST_PANIC").is_some()
    {
        panic!("a panic asked for by UJI_TUI_TEST_PANIC");
    }
}

#[cfg(not(debug_assertions))]
fn panic_for_tests(_key: &KeyEvent) {}
