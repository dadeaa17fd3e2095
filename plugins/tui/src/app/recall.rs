//! Bringing earlier words back into the draft: Esc Esc (or /rewind) picks
//! one of the user's messages, then what goes back to before it: the code
//! (from the checkpoints, docs/checkpoints.md), the conversation (the
//! message comes back to edit and send again, what came after it is
//! dropped), or both. Ctrl+R searches the messages sent before, and Up on
//! an empty draft takes back the newest queued message.

use std::time::Duration;

use uji_protocol::frontend::Op;
use uji_protocol::frontend::answers::{Rewound, Unqueued};

use super::state::{App, Pending, PickerKind};
use crate::picker::{Picker, PickerItem};
use crate::transcript::Level;
use crate::transcript::tool::one_line;

/// A second Esc within this opens the message picker.
const REWIND_WINDOW: Duration = Duration::from_millis(800);

impl App {
    /// Esc: stops what runs; with nothing running and the draft empty, a
    /// second Esc soon after opens the picker of earlier messages.
    pub(super) fn escape(&mut self) {
        if self.busy() || self.transcript.animating() || !self.approvals.is_empty() {
            self.rewind_armed = None;
            return self.submit_interrupt();
        }
        if !self.composer.is_empty() || self.sent.is_empty() {
            return;
        }
        let now = self.clock.now();
        if self
            .rewind_armed
            .take()
            .is_some_and(|at| now.saturating_duration_since(at) <= REWIND_WINDOW)
        {
            return self.open_rewind_picker();
        }
        self.rewind_armed = Some(now);
        self.hint("Esc again to edit an earlier message", REWIND_WINDOW);
    }

    /// The user's messages, newest first; the one picked is edited and
    /// sent again from its place in the conversation.
    pub(super) fn open_rewind_picker(&mut self) {
        if self.busy() {
            return self.notice(
                Level::Warn,
                "a turn is running: stop it (Esc) before going back to an earlier message",
            );
        }
        let count = self.sent.len();
        let items = self
            .sent
            .iter()
            .rev()
            .enumerate()
            .map(|(back, (seq, text))| PickerItem {
                label: one_line(text),
                detail: match back {
                    0 => "your last message".to_string(),
                    n => format!("{n} back"),
                },
                value: seq.to_string(),
            })
            .collect();
        let title = format!("Go back to before an earlier message ({count})");
        self.picker = Some((PickerKind::Rewind, Picker::new(&title, items, false)));
    }

    /// A message was picked: what goes back to before it.
    pub(super) fn rewind_chosen(&mut self, value: &str) {
        let Ok(to_seq) = value.parse::<u64>() else {
            return;
        };
        self.rewind_to = Some(to_seq);
        let items = RewindScope::ALL
            .iter()
            .map(|scope| PickerItem {
                label: scope.label().to_string(),
                detail: scope.detail().to_string(),
                value: scope.value().to_string(),
            })
            .collect();
        let picker = Picker::new("Go back to before this message", items, false);
        self.picker = Some((PickerKind::RewindScope, picker));
    }

    pub(super) fn rewind_scope_chosen(&mut self, value: &str) {
        let (Some(to_seq), Some(scope)) = (self.rewind_to.take(), RewindScope::from_value(value))
        else {
            return;
        };
        let op = Op::Rewind {
            to_seq,
            conversation: scope != RewindScope::Code,
            code: scope != RewindScope::Conversation,
        };
        self.submit(op, Pending::Rewind);
    }

    /// The conversation went back (its shortened history came first, in
    /// `session_configured`): the message is in the draft to edit.
    pub(super) fn on_rewound(&mut self, answer: Rewound) {
        if let Some(restored) = &answer.restored {
            self.notice(Level::Info, restored.clone());
        }
        if answer.dropped == 0 && answer.restored.is_some() {
            // Code only: the conversation and the draft stay as they are.
            return;
        }
        self.composer.set_text(&answer.text);
        self.draft_changed();
        let dropped = crate::transcript::tool::plural(answer.dropped as usize, "message");
        self.hint(
            &format!("{dropped} dropped · edit and send, or Ctrl+C to clear"),
            Duration::from_secs(4),
        );
    }

    /// Ctrl+R: the messages sent before, to search and bring back.
    pub(super) fn open_history_search(&mut self) {
        let entries = self.composer.history_newest_first();
        if entries.is_empty() {
            return self.hint("no messages sent yet", Duration::from_secs(2));
        }
        let items = entries
            .into_iter()
            .map(|text| PickerItem {
                label: one_line(&text),
                detail: String::new(),
                value: text,
            })
            .collect();
        let picker = Picker::new("Messages sent before", items, false);
        self.picker = Some((PickerKind::History, picker));
    }

    pub(super) fn history_chosen(&mut self, text: &str) {
        self.composer.set_text(text);
        self.draft_changed();
    }

    /// Up on an empty draft while messages wait: the newest comes back to
    /// edit (and leaves the queue). True when it did.
    pub(super) fn take_back_queued(&mut self) -> bool {
        if !self.composer.is_empty() || self.status.queued.is_empty() {
            return false;
        }
        self.submit(Op::Unqueue, Pending::Unqueue);
        true
    }

    pub(super) fn on_unqueued(&mut self, answer: Unqueued) {
        // None: the turn took the message meanwhile, as sent.
        let Some(text) = answer.text else { return };
        if self.composer.is_empty() {
            self.composer.set_text(&text);
        } else {
            // Typed meanwhile: the message joins the draft, never lost.
            let draft = format!("{}\n{text}", self.composer.expanded_text());
            self.composer.set_text(&draft);
        }
        self.draft_changed();
    }
}

/// What a rewind takes back to before the chosen message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RewindScope {
    Both,
    Conversation,
    Code,
}

impl RewindScope {
    const ALL: [RewindScope; 3] = [
        RewindScope::Both,
        RewindScope::Conversation,
        RewindScope::Code,
    ];

    /// The picker item's value (the picker hands values back as text).
    fn value(self) -> &'static str {
        match self {
            RewindScope::Both => "both",
            RewindScope::Conversation => "conversation",
            RewindScope::Code => "code",
        }
    }

    fn from_value(value: &str) -> Option<RewindScope> {
        RewindScope::ALL.into_iter().find(|s| s.value() == value)
    }

    fn label(self) -> &'static str {
        match self {
            RewindScope::Both => "Code and conversation",
            RewindScope::Conversation => "Conversation only",
            RewindScope::Code => "Code only",
        }
    }

    fn detail(self) -> &'static str {
        match self {
            RewindScope::Both => "files back as they were, the message back to edit",
            RewindScope::Conversation => "the message back to edit; files stay as they are",
            RewindScope::Code => "files back as they were; the conversation goes on",
        }
    }
}
