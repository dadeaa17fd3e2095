//! The open question (an approval, the key prompt or a picker) and its
//! [`Guard`]: keys reach it only once it is ready; until then they go to
//! the draft as if no question were open, except that nothing is sent.

use std::time::{Duration, Instant};

use crossterm::event::KeyEvent;

use super::state::App;
use crate::approval_guard::{Guard, Route};
use crate::composer::EditAction;
use crate::keys::{self, Binding, Mode};

impl App {
    /// The guard of the question on screen (the same order as drawn).
    pub(super) fn question_guard(&self) -> Option<&Guard> {
        if let Some(approval) = self.approvals.first() {
            Some(approval.guard())
        } else if let Some(prompt) = &self.login.prompt {
            Some(prompt.guard())
        } else {
            self.picker.as_ref().map(|(_, picker)| picker.guard())
        }
    }

    pub(super) fn question_guard_mut(&mut self) -> Option<&mut Guard> {
        if let Some(approval) = self.approvals.first_mut() {
            Some(approval.guard_mut())
        } else if let Some(prompt) = &mut self.login.prompt {
            Some(prompt.guard_mut())
        } else {
            self.picker.as_mut().map(|(_, picker)| picker.guard_mut())
        }
    }

    /// Where a key pressed now goes; None without a question.
    pub(super) fn route_key(&mut self) -> Option<Route> {
        let now = self.clock.now();
        // Only an approval's answer is held back from a burst: guidance typed
        // after `n` is text, and a picker's letters filter it.
        let burst = self.in_burst && self.approvals.first().is_some_and(|a| !a.is_typing());
        self.question_guard_mut().map(|guard| {
            if burst {
                guard.typed(now);
                Route::Draft
            } else {
                guard.key(now)
            }
        })
    }

    /// Where a paste now goes; None without a question.
    pub(super) fn route_paste(&mut self) -> Option<Route> {
        let now = self.clock.now();
        self.question_guard_mut().map(|guard| guard.paste(now))
    }

    /// Something typed at a ready question that has no use for it went to
    /// the draft: the user is typing, so the question waits again.
    pub(super) fn typed_past_question(&mut self) {
        let now = self.clock.now();
        if let Some(guard) = self.question_guard_mut() {
            guard.typed(now);
        }
    }

    /// A key while the question is not ready: what it does in the input
    /// with no question open, as long as that only edits the draft or the
    /// view. Enter sends nothing (the draft stays), a key bound to a
    /// command does nothing; Ctrl+C quits and Esc stops the turn (which
    /// withdraws the question) as always.
    pub(super) fn key_to_draft(&mut self, key: &KeyEvent) {
        match self.binding(Mode::Normal, key) {
            Some(Binding::Action(action)) => {
                if action == "submit" || self.act_anywhere(&action) {
                    return;
                }
                if let Some(edit) = EditAction::from_name(&action) {
                    self.composer.apply(edit);
                    self.draft_changed();
                }
            }
            Some(Binding::Command(_)) => {}
            None => {
                if let Some(c) = keys::typed_char(key) {
                    self.composer.insert_char(c);
                    self.draft_changed();
                }
            }
        }
    }

    /// Marks the question as drawn in this frame (the guard's clock starts
    /// with its first frame).
    pub(super) fn question_drawn(&mut self) {
        let now = self.clock.now();
        if let Some(guard) = self.question_guard_mut() {
            guard.frame(now);
        }
    }

    /// Whether the question on screen looks otherwise than it is now.
    pub(super) fn question_stale(&self, now: Instant) -> bool {
        self.question_guard().is_some_and(|guard| guard.stale(now))
    }

    /// How long until the question on screen becomes ready (and must be
    /// drawn again); None when it is ready or there is none.
    pub(super) fn until_question_ready(&self) -> Option<Duration> {
        let guard = self.question_guard()?;
        if guard.shows_ready() {
            return None;
        }
        let at = guard.ready_at()?;
        Some(at.saturating_duration_since(self.clock.now()))
    }
}
