//! Slash commands: the screen's own (`/thinking`, `/help`, the pickers of
//! `/model`, `/effort` and `/sessions`) and everything else, which uji runs
//! (built-in, Lua and plugin commands alike).

use uji_protocol::frontend::Op;
use uji_protocol::frontend::answers::{ModelList, SHORT_ID, SessionList};

use super::state::{App, Pending, PickerKind};
use crate::composer::suggest::CommandEntry;
use crate::picker::{Picker, PickerItem, PickerKey, PickerOutcome};
use crate::transcript::{Block, Level};

/// Reasoning efforts, lowest first (uji's `/effort` takes these).
const EFFORTS: &[&str] = &["off", "minimal", "low", "medium", "high", "xhigh", "max"];

/// Commands the screen answers itself, listed with uji's in suggestions.
const LOCAL: &[(&str, &str)] = &[
    ("thinking", "Show or hide the model's reasoning"),
    ("help", "List every command and the keys"),
    ("model", "Pick the model (or /model provider/model)"),
    ("effort", "Pick the reasoning effort (or /effort high)"),
    ("sessions", "Resume or delete a session of this directory"),
    ("copy", "Copy the last answer to the clipboard"),
    (
        "rewind",
        "Go back to an earlier message: code, conversation or both (Esc Esc)",
    ),
    ("login", "Save a provider's API key (or /login provider)"),
    ("logout", "Forget a saved API key (or /logout provider)"),
    (
        "jobs",
        "List the background jobs; Enter stops the chosen one",
    ),
    ("quit", "Leave uji"),
];

pub fn local_commands() -> impl Iterator<Item = CommandEntry> {
    LOCAL.iter().map(|(name, description)| CommandEntry {
        name: (*name).to_string(),
        description: (*description).to_string(),
    })
}

impl App {
    /// Runs `/name args`.
    pub(super) fn run_slash(&mut self, name: &str, args: &str) {
        // `/models` is the public uji's name for `/model`.
        let name = if name == "models" { "model" } else { name };
        match (name, args.is_empty()) {
            ("thinking", _) => {
                let on = !self.transcript.show_thinking();
                self.transcript.set_show_thinking(on);
                let state = if on { "shown" } else { "hidden" };
                self.notice(Level::Info, format!("reasoning is {state}"));
            }
            ("help", true) => self.show_help(),
            ("quit", _) => self.quit(),
            ("model", true) => {
                self.submit(Op::ListModels, Pending::ListModels);
            }
            ("effort", true) => self.open_effort_picker(),
            ("login", _) => self.start_login(args),
            ("logout", _) => self.start_logout(args),
            ("sessions", true) | ("resume", true) => {
                self.submit(Op::ListSessions { all: false }, Pending::ListSessions);
            }
            ("copy", _) => self.copy_last_answer(),
            ("rewind", _) => self.open_rewind_picker(),
            ("diff", _) => {
                let op = Op::RunCommand {
                    name: "diff".to_string(),
                    args: String::new(),
                };
                self.submit(op, Pending::Diff);
            }
            ("jobs", _) => self.list_jobs(),
            ("new", _) | ("clear", _) => {
                self.submit(Op::NewSession { title: None }, Pending::Other);
            }
            // The rule "compacted N earlier messages" is the one word on it
            // (the activity line shows the work meanwhile).
            ("compact", true) => {
                self.submit(Op::Compact, Pending::Other);
            }
            _ => {
                let op = Op::RunCommand {
                    name: name.to_string(),
                    args: args.to_string(),
                };
                self.submit(op, Pending::Command);
            }
        }
    }

    fn show_help(&mut self) {
        let width = self
            .commands
            .iter()
            .map(|c| c.name.len())
            .max()
            .unwrap_or(0)
            + 1;
        let mut text: Vec<String> = self
            .commands
            .iter()
            .map(|c| format!("/{:<width$} {}", c.name, c.description))
            .collect();
        text.push(String::new());
        text.push(
            "Enter sends · Shift+Enter, Alt+Enter or Ctrl+J: new line · Esc stops the turn · \
             Ctrl+Z sends the running command to the background · Ctrl+C quits · \
             !cmd runs a shell command · Ctrl+O unfolds tool output · \
             PgUp/PgDn scroll · uji.keymap.list() shows every key"
                .to_string(),
        );
        self.transcript.push(Block::Info(text.join("\n")));
    }

    fn open_effort_picker(&mut self) {
        let current = self
            .status
            .model
            .as_ref()
            .and_then(|m| m.effort.clone())
            .unwrap_or_default();
        let items = EFFORTS
            .iter()
            .map(|e| PickerItem {
                label: (*e).to_string(),
                detail: String::new(),
                value: (*e).to_string(),
            })
            .collect();
        let mut picker = Picker::new("Reasoning effort", items, false);
        picker.select(&current);
        self.picker = Some((PickerKind::Effort, picker));
    }

    pub(super) fn open_model_picker(&mut self, list: ModelList) {
        let items = list
            .models
            .iter()
            .map(|m| PickerItem {
                label: format!("{}/{}", m.provider, m.model),
                detail: format!(
                    "{}k context{}",
                    m.context_window / 1000,
                    if m.available { "" } else { " · no key set" }
                ),
                value: format!("{}/{}", m.provider, m.model),
            })
            .collect();
        let mut picker = Picker::new("Model", items, false);
        if let Some(model) = &self.status.model {
            picker.select(&format!("{}/{}", model.provider, model.model));
        }
        self.picker = Some((PickerKind::Model, picker));
    }

    pub(super) fn open_session_picker(&mut self, list: SessionList) {
        let now = now_ms();
        let items = list
            .sessions
            .into_iter()
            .map(|s| {
                let title = if s.title.is_empty() {
                    "untitled".to_string()
                } else {
                    s.title
                };
                let current = if s.id == self.session_id {
                    " · this session"
                } else {
                    ""
                };
                PickerItem {
                    label: title,
                    detail: format!("{} · {}{current}", short_id(&s.id), age(s.updated, now)),
                    value: s.id,
                }
            })
            .collect();
        self.delete_armed = None;
        self.picker = Some((PickerKind::Session, Picker::new("Sessions", items, true)));
    }

    pub(super) fn picker_key(&mut self, key: PickerKey) {
        let Some((kind, picker)) = self.picker.as_mut() else {
            return;
        };
        let kind = *kind;
        let deleting = key == PickerKey::Delete;
        let Some(outcome) = picker.handle(key) else {
            return;
        };
        match outcome {
            PickerOutcome::Cancelled if kind == PickerKind::Dialog => {
                self.picker = None;
                self.answer_dialog(uji_protocol::frontend::DialogAnswer::Cancelled);
            }
            PickerOutcome::Cancelled => self.picker = None,
            PickerOutcome::Chosen(value) => {
                self.picker = None;
                self.chosen(kind, &value);
            }
            PickerOutcome::Delete(id) if deleting => self.delete_session(&id),
            PickerOutcome::Delete(_) => {}
        }
    }

    fn chosen(&mut self, kind: PickerKind, value: &str) {
        let (op, pending) = match kind {
            PickerKind::Model => (
                Op::SetModel {
                    model: Some(value.to_string()),
                    effort: None,
                },
                Pending::ModelSet,
            ),
            PickerKind::Effort => (
                Op::SetModel {
                    model: None,
                    effort: Some(value.to_string()),
                },
                Pending::ModelSet,
            ),
            PickerKind::Job => return self.job_chosen(value),
            PickerKind::Session if value == self.session_id => return,
            PickerKind::Session => (
                Op::ResumeSession {
                    session_id: value.to_string(),
                },
                Pending::Other,
            ),
            PickerKind::Login | PickerKind::Logout => return self.provider_chosen(kind, value),
            PickerKind::Rewind => return self.rewind_chosen(value),
            PickerKind::RewindScope => return self.rewind_scope_chosen(value),
            PickerKind::History => return self.history_chosen(value),
            PickerKind::RunPlan => return self.run_plan_chosen(value),
            PickerKind::Dialog => return self.dialog_item_chosen(value),
        };
        self.submit(op, pending);
    }

    /// Ctrl+D twice on the same session deletes it.
    fn delete_session(&mut self, id: &str) {
        if id == self.session_id {
            self.notice(
                Level::Warn,
                "this is the session you are in; /new first to delete it",
            );
            return;
        }
        if self.delete_armed.as_deref() != Some(id) {
            self.delete_armed = Some(id.to_string());
            self.notice(
                Level::Warn,
                format!("press Ctrl+D again to delete {}", short_id(id)),
            );
            return;
        }
        self.delete_armed = None;
        let op = Op::DeleteSession {
            session_id: id.to_string(),
        };
        self.submit(op, Pending::Other);
        if let Some((_, picker)) = self.picker.as_mut() {
            picker.remove(id);
        }
    }
}

fn short_id(id: &str) -> String {
    id.chars().take(SHORT_ID).collect()
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// How long ago `then` was, in a word: `just now`, `5 min ago`, `3 h ago`,
/// `2 d ago` (milliseconds since the epoch).
pub(crate) fn age(then: u64, now: u64) -> String {
    let seconds = now.saturating_sub(then) / 1000;
    match seconds {
        0..60 => "just now".to_string(),
        60..3_600 => format!("{} min ago", seconds / 60),
        3_600..86_400 => format!("{} h ago", seconds / 3_600),
        _ => format!("{} d ago", seconds / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::age;

    #[test]
    fn ages_read_in_a_word() {
        let now = 10_000_000_000;
        assert_eq!(age(now - 5_000, now), "just now");
        assert_eq!(age(now - 5 * 60_000, now), "5 min ago");
        assert_eq!(age(now - 3 * 3_600_000, now), "3 h ago");
        assert_eq!(age(now - 2 * 86_400_000, now), "2 d ago");
        assert_eq!(age(now + 1_000, now), "just now", "a clock that went back");
    }
}
