//! Plugins' dialogs (`ui.dialog`, the `dialog` event), drawn with what the
//! screen already has: a select is a picker (filtered as you type, Enter
//! picks, Esc cancels), a prompt is the key prompt's box (masked when
//! `hidden`, else a plain line, prefilled), a confirm is the question box
//! with Yes and No (`y`, `n`; Esc is no). Each keeps its guard, so keys
//! typed before it was ready never answer it. One is shown at a time; the
//! others wait in order, also behind an open approval or picker.

use std::collections::{BTreeMap, VecDeque};

use serde_json::Value;
use uji_protocol::frontend::{DialogAnswer, DialogKind, Op, Resolution};

use super::state::{App, Pending, PickerKind};
use crate::approval::Approval;
use crate::key_prompt::KeyPrompt;
use crate::picker::{Picker, PickerItem};
use crate::transcript::Level;

/// A dialog as the `dialog` event asked for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DialogRequest {
    pub id: String,
    pub kind: DialogKind,
    pub title: String,
    pub items: Vec<String>,
    pub current: Option<usize>,
    pub value: Option<String>,
    pub hidden: bool,
    pub body: Option<String>,
}

/// The dialog on screen and those waiting for it.
#[derive(Debug, Default)]
pub struct Dialogs {
    waiting: VecDeque<DialogRequest>,
    /// The one shown (or to be shown again when a session switch cleared
    /// the screen's questions).
    open: Option<DialogRequest>,
}

impl App {
    /// A `dialog` event: shown now, or when what is open has closed.
    pub(super) fn on_dialog(&mut self, request: DialogRequest) {
        self.dialogs.waiting.push_back(request);
        self.call_attention("a plugin is waiting for your answer");
        self.sync_dialogs();
    }

    /// Shows the next dialog when nothing else asks; shows the open one
    /// again when something cleared it from the screen.
    pub(super) fn sync_dialogs(&mut self) {
        let free =
            self.approvals.is_empty() && self.picker.is_none() && self.login.prompt.is_none();
        if let Some(open) = &self.dialogs.open {
            let on_screen = self.dialog_on_screen(&open.id);
            if on_screen || !free {
                return;
            }
            if let Some(open) = self.dialogs.open.take() {
                self.show_dialog(open);
            }
            return;
        }
        if !free {
            return;
        }
        if let Some(next) = self.dialogs.waiting.pop_front() {
            self.show_dialog(next);
        }
    }

    fn dialog_on_screen(&self, id: &str) -> bool {
        let picker = matches!(&self.picker, Some((PickerKind::Dialog, _)));
        let prompt = self
            .login
            .prompt
            .as_ref()
            .is_some_and(|p| p.dialog_id() == Some(id));
        let question = self.approvals.iter().any(|a| a.call_id() == id);
        picker || prompt || question
    }

    fn show_dialog(&mut self, request: DialogRequest) {
        match request.kind {
            DialogKind::Select => {
                let items = request
                    .items
                    .iter()
                    .enumerate()
                    .map(|(index, item)| PickerItem {
                        label: item.clone(),
                        detail: String::new(),
                        value: index.to_string(),
                    })
                    .collect();
                let mut picker = Picker::new(&request.title, items, false);
                if let Some(current) = request.current {
                    picker.select(&current.to_string());
                }
                self.picker = Some((PickerKind::Dialog, picker));
            }
            DialogKind::Prompt => {
                let prompt = KeyPrompt::for_dialog(
                    &request.id,
                    &request.title,
                    request.hidden,
                    request.value.as_deref(),
                );
                self.login.prompt = Some(prompt);
            }
            DialogKind::Confirm => {
                let labels = BTreeMap::from([
                    ("allow_once".to_string(), "Yes (y)".to_string()),
                    ("deny".to_string(), "No (n, esc)".to_string()),
                ]);
                let answers = ["allow_once".to_string(), "deny".to_string()];
                let body = request.body.clone().unwrap_or_default();
                let question = Approval::new(
                    &request.id,
                    "",
                    &request.title,
                    &body,
                    &Value::Null,
                    None,
                    &answers,
                )
                .with_labels(labels);
                self.approvals.insert(0, question);
            }
            DialogKind::Unknown => {
                let op = Op::RefuseDialog {
                    dialog_id: request.id,
                    reason: "this screen does not know that kind of dialog; it shows select, prompt and confirm"
                        .to_string(),
                };
                self.submit(op, Pending::Other);
                return self.sync_dialogs();
            }
        }
        self.dialogs.open = Some(request);
        self.dirty = true;
    }

    /// The open dialog's question is `id`: a confirm.
    pub(super) fn is_dialog(&self, id: &str) -> bool {
        self.dialogs.open.as_ref().is_some_and(|open| open.id == id)
    }

    /// The person answered the open dialog (already off the screen).
    pub(super) fn answer_dialog(&mut self, answer: DialogAnswer) {
        let Some(open) = self.dialogs.open.take() else {
            return;
        };
        let op = Op::AnswerDialog {
            dialog_id: open.id,
            answer,
        };
        self.submit(op, Pending::Other);
        self.sync_dialogs();
    }

    /// A select's item was picked (`value` is its index).
    pub(super) fn dialog_item_chosen(&mut self, value: &str) {
        match value.parse::<usize>() {
            Ok(index) => self.answer_dialog(DialogAnswer::Selected { index }),
            Err(_) => self.answer_dialog(DialogAnswer::Cancelled),
        }
    }

    /// `dialog_resolved`: a dialog closed in uji (answered, timed out, or
    /// withdrawn): off the screen and out of the queue.
    pub(super) fn on_dialog_resolved(&mut self, id: &str, resolution: Resolution) {
        let waiting = self.dialogs.waiting.len();
        self.dialogs.waiting.retain(|d| d.id != id);
        let was_open = self.is_dialog(id);
        if !was_open && waiting == self.dialogs.waiting.len() {
            return;
        }
        let title = match self.dialogs.open.take_if(|open| open.id == id) {
            Some(open) => {
                if matches!(&self.picker, Some((PickerKind::Dialog, _))) {
                    self.picker = None;
                }
                if self
                    .login
                    .prompt
                    .as_ref()
                    .is_some_and(|p| p.dialog_id() == Some(id))
                {
                    self.login.prompt = None;
                }
                self.approvals.retain(|a| a.call_id() != id);
                open.title
            }
            None => String::new(),
        };
        if resolution == Resolution::TimedOut && !title.is_empty() {
            self.notice(
                Level::Warn,
                format!("a plugin's question {title:?} timed out"),
            );
        }
        self.dirty = true;
        self.sync_dialogs();
    }
}
