//! `ui.dialog`: a select, prompt or confirm a plugin asks the person
//! through the frontend (a `dialog` event, answered by `answer_dialog` or
//! `refuse_dialog`, closed by `dialog_resolved`). The plugin's thread waits
//! on a std channel, as `session.ask` does; only a frontend that said
//! `hello` with `dialogs: true` is asked, so no other one leaves a plugin
//! waiting for ever.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use parking_lot::Mutex;
use uji_protocol::frontend::{DialogAnswer, DialogKind, Event, Resolution};
use uji_protocol::services::UiDialog;

use super::Shared;

/// What the plugin waiting on a dialog is told when the session ends first.
pub(super) const SESSION_ENDED: &str = "the session ended before the dialog was answered";

/// An open dialog: what it accepts and where its answer goes.
struct Open {
    kind: DialogKind,
    items: usize,
    answer: mpsc::Sender<Result<DialogAnswer, String>>,
}

/// The session's dialogs: whether the frontend shows them, and those open.
#[derive(Default)]
pub(super) struct Dialogs {
    /// The frontend said `hello` with `dialogs: true`.
    shown: AtomicBool,
    next: AtomicU64,
    open: Mutex<HashMap<String, Open>>,
}

impl Dialogs {
    /// What the frontend's `hello` said.
    pub(super) fn set_shown(&self, shown: bool) {
        self.shown.store(shown, Ordering::SeqCst);
    }

    /// Answers the open dialog `id`; `Err` when there is none or the answer
    /// does not fit it (the dialog stays open).
    pub(super) fn answer(&self, id: &str, answer: DialogAnswer) -> Result<Event, String> {
        let mut open = self.open.lock();
        let Some(dialog) = open.get(id) else {
            return Err(not_open(id));
        };
        fits(dialog, &answer)?;
        if let Some(dialog) = open.remove(id) {
            let _ = dialog.answer.send(Ok(answer.clone()));
        }
        Ok(Event::DialogResolved {
            dialog_id: id.to_string(),
            resolution: Resolution::Answered,
            answer: Some(answer),
        })
    }

    /// The frontend cannot show dialog `id`: the plugin gets `reason`.
    pub(super) fn refuse(&self, id: &str, reason: String) -> Result<Event, String> {
        let Some(dialog) = self.open.lock().remove(id) else {
            return Err(not_open(id));
        };
        let _ = dialog.answer.send(Err(reason));
        Ok(withdrawn(id.to_string()))
    }

    /// Ends every open dialog (the session ends): their plugins get an
    /// error; the events to tell the frontend.
    pub(super) fn withdraw_all(&self) -> Vec<Event> {
        let ended: Vec<(String, Open)> = self.open.lock().drain().collect();
        ended
            .into_iter()
            .map(|(id, dialog)| {
                let _ = dialog.answer.send(Err(SESSION_ENDED.to_string()));
                withdrawn(id)
            })
            .collect()
    }
}

fn withdrawn(dialog_id: String) -> Event {
    Event::DialogResolved {
        dialog_id,
        resolution: Resolution::Withdrawn,
        answer: None,
    }
}

fn not_open(id: &str) -> String {
    format!("no dialog is open with dialog_id {id:?} (it was answered, timed out or withdrawn)")
}

/// Whether `answer` answers `dialog`.
fn fits(dialog: &Open, answer: &DialogAnswer) -> Result<(), String> {
    let kind = dialog.kind.as_str();
    match (dialog.kind, answer) {
        (_, DialogAnswer::Cancelled) => Ok(()),
        (DialogKind::Select, DialogAnswer::Selected { index }) if *index < dialog.items => Ok(()),
        (DialogKind::Select, DialogAnswer::Selected { index }) => Err(format!(
            "the select has {} items: index {index} is not one of them (they count from 0)",
            dialog.items
        )),
        (DialogKind::Prompt, DialogAnswer::Text { .. })
        | (DialogKind::Confirm, DialogAnswer::Confirmed { .. }) => Ok(()),
        (_, DialogAnswer::TimedOut) => Err(
            "timed_out is uji's answer when a dialog's time runs out; answer cancelled to dismiss it"
                .to_string(),
        ),
        _ => Err(format!(
            "a {kind} dialog is answered with {} or cancelled",
            match dialog.kind {
                DialogKind::Select => "selected {index}",
                DialogKind::Prompt => "text {text}",
                _ => "confirmed {yes}",
            }
        )),
    }
}

/// The frontend the session runs, for error messages.
fn frontend_name(shared: &Shared) -> String {
    shared
        .sessions
        .registry
        .config(crate::boot::FRONTEND_KEY)
        .and_then(|name| name.as_str().map(str::to_string))
        .unwrap_or_else(|| "this session's".to_string())
}

/// Asks and waits for the answer on the caller's thread (a plugin's own).
pub(super) fn ask(shared: &Arc<Shared>, request: UiDialog) -> Result<DialogAnswer, String> {
    check(&request)?;
    if shared.closing.load(Ordering::SeqCst) {
        return Err(SESSION_ENDED.to_string());
    }
    let dialogs = &shared.dialogs;
    if !dialogs.shown.load(Ordering::SeqCst) {
        return Err(format!(
            "this frontend cannot show dialogs: {}; a {} needs one that can, such as the terminal screen (`uji`)",
            frontend_name(shared),
            request.kind.as_str()
        ));
    }
    let id = format!(
        "dialog-{}",
        dialogs.next.fetch_add(1, Ordering::Relaxed) + 1
    );
    let (tx, rx) = mpsc::channel();
    let open = Open {
        kind: request.kind,
        items: request.items.len(),
        answer: tx,
    };
    dialogs.open.lock().insert(id.clone(), open);
    // A shutdown that began meanwhile has already withdrawn what was open.
    if shared.closing.load(Ordering::SeqCst) {
        dialogs.open.lock().remove(&id);
        return Err(SESSION_ENDED.to_string());
    }
    shared.emit(Event::Dialog {
        dialog_id: id.clone(),
        kind: request.kind,
        title: request.title,
        items: request.items,
        current: request.current,
        value: request.value,
        hidden: request.hidden,
        body: request.body,
    });
    let waited = match request.timeout_ms {
        Some(ms) => rx.recv_timeout(Duration::from_millis(ms)),
        None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
    };
    match waited {
        Ok(answer) => answer,
        Err(RecvTimeoutError::Timeout) => {
            if dialogs.open.lock().remove(&id).is_none() {
                // Answered (or withdrawn) just as the time ran out.
                return rx.recv().unwrap_or_else(|_| Err(SESSION_ENDED.to_string()));
            }
            shared.emit(Event::DialogResolved {
                dialog_id: id,
                resolution: Resolution::TimedOut,
                answer: None,
            });
            Ok(DialogAnswer::TimedOut)
        }
        Err(RecvTimeoutError::Disconnected) => Err(SESSION_ENDED.to_string()),
    }
}

/// Refuses a request no frontend could show.
fn check(request: &UiDialog) -> Result<(), String> {
    match request.kind {
        DialogKind::Unknown => Err(
            "ui.dialog shows kind \"select\", \"prompt\" or \"confirm\"; this uji knows no other"
                .to_string(),
        ),
        DialogKind::Select if request.items.is_empty() => {
            Err("a select dialog needs items: at least one to choose".to_string())
        }
        DialogKind::Select => match request.current {
            Some(current) if current >= request.items.len() => Err(format!(
                "current is {current}, but the select has {} items (they count from 0)",
                request.items.len()
            )),
            _ => Ok(()),
        },
        DialogKind::Prompt | DialogKind::Confirm => Ok(()),
    }
}
