//! `/login` and `/logout`: a provider picked from uji's catalogue (each
//! shown with where its key comes from), then a masked prompt for the key
//! ([`KeyPrompt`]); uji checks and saves it (the `login` operation, the
//! same code as `uji login`) and the session uses it at once.
//!
//! The key goes from the prompt straight into the operation: it is never in
//! the composer, its history, the transcript or anything this screen logs.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use uji_protocol::frontend::answers::{LoggedOut, ProviderList};
use uji_protocol::frontend::{DialogAnswer, KeyOrigin, LoginResult, Op, ProviderEntry, Secret};

use super::state::{App, Pending, PickerKind};
use crate::approval_guard::Route;
use crate::key_prompt::{KeyPrompt, KeyPromptKey, KeyPromptOutcome};
use crate::picker::{Picker, PickerItem};
use crate::transcript::Level;

/// What the provider list was asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProvidersFor {
    /// `/login`, or `/login ID` (straight to the key prompt).
    Login(Option<String>),
    /// `/logout` without a provider: a picker of the saved keys.
    Logout,
}

/// The login flow's state: the providers last listed and the open prompt.
#[derive(Default)]
pub struct LoginFlow {
    providers: Vec<ProviderEntry>,
    pub(super) prompt: Option<KeyPrompt>,
}

impl App {
    /// `/login [provider]`.
    pub(super) fn start_login(&mut self, args: &str) {
        let id = (!args.is_empty()).then(|| args.to_string());
        self.submit(
            Op::ListProviders,
            Pending::Providers(ProvidersFor::Login(id)),
        );
    }

    /// `/logout [provider]`.
    pub(super) fn start_logout(&mut self, args: &str) {
        if args.is_empty() {
            self.submit(Op::ListProviders, Pending::Providers(ProvidersFor::Logout));
        } else {
            self.logout(args);
        }
    }

    fn logout(&mut self, id: &str) {
        let op = Op::Logout {
            provider: id.to_string(),
        };
        self.submit(op, Pending::Logout(id.to_string()));
    }

    /// The answer to `list_providers`.
    pub(super) fn on_providers(&mut self, list: ProviderList, wanted: ProvidersFor) {
        self.login.providers = list.providers;
        match wanted {
            ProvidersFor::Login(Some(id)) => self.open_key_prompt(&id),
            ProvidersFor::Login(None) => self.open_login_picker(),
            ProvidersFor::Logout => self.open_logout_picker(),
        }
    }

    fn open_login_picker(&mut self) {
        let items: Vec<PickerItem> = self
            .login
            .providers
            .iter()
            // Local servers take no key; `custom` may.
            .filter(|p| p.key != KeyOrigin::NotNeeded || p.checks_key)
            .map(|p| PickerItem {
                label: p.id.clone(),
                detail: format!("{} · {}", p.name, key_detail(p)),
                value: p.id.clone(),
            })
            .collect();
        let mut picker = Picker::new("Log in to", items, false);
        if let Some(model) = &self.status.model {
            picker.select(&model.provider);
        }
        self.picker = Some((PickerKind::Login, picker));
    }

    fn open_logout_picker(&mut self) {
        let items: Vec<PickerItem> = self
            .login
            .providers
            .iter()
            .filter(|p| p.key == KeyOrigin::Stored)
            .map(|p| PickerItem {
                label: p.id.clone(),
                detail: p.name.clone(),
                value: p.id.clone(),
            })
            .collect();
        if items.is_empty() {
            self.notice(Level::Info, "no key is saved; /login saves one");
            return;
        }
        self.picker = Some((
            PickerKind::Logout,
            Picker::new("Forget the key of", items, false),
        ));
    }

    /// A provider was picked in a login or logout picker.
    pub(super) fn provider_chosen(&mut self, kind: PickerKind, id: &str) {
        match kind {
            PickerKind::Logout => self.logout(id),
            _ => self.open_key_prompt(id),
        }
    }

    fn open_key_prompt(&mut self, id: &str) {
        let Some(entry) = self.login.providers.iter().find(|p| p.id == id).cloned() else {
            let known: Vec<&str> = self.login.providers.iter().map(|p| p.id.as_str()).collect();
            self.notice(
                Level::Error,
                format!(
                    "unknown provider {id:?}; known providers: {}",
                    known.join(", ")
                ),
            );
            return;
        };
        let name = if entry.name.is_empty() {
            &entry.id
        } else {
            &entry.name
        };
        let title = match &entry.key_env {
            Some(var) => format!("Key for {name} ({var})"),
            None => format!("Key for {name}"),
        };
        let note = match (&entry.key, &entry.key_env) {
            (KeyOrigin::Env, Some(var)) => {
                format!("{var} is set: it wins over a saved key while it is")
            }
            _ if entry.checks_key => {
                format!("checked with {name}, then saved for you only (auth.json)")
            }
            _ => "saved for you only (auth.json)".to_string(),
        };
        self.login.prompt = Some(KeyPrompt::new(&entry.id, &title, &note));
    }

    /// A key pressed while the prompt is open; false when it is not.
    /// Enter, Esc and Backspace keep their meaning whatever the keymap
    /// says (as in any password prompt); Ctrl+C still quits. Text always
    /// goes to the prompt (never to the draft, where it would be drawn);
    /// Enter saves only once the prompt is ready (its guard).
    pub(super) fn prompt_key(&mut self, key: &KeyEvent) -> bool {
        if self.login.prompt.is_none() {
            return false;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let pressed = match key.code {
            KeyCode::Enter if self.route_key() != Some(Route::Answer) => return true,
            KeyCode::Enter => KeyPromptKey::Accept,
            KeyCode::Esc => KeyPromptKey::Cancel,
            KeyCode::Char('g') if ctrl => KeyPromptKey::Cancel,
            KeyCode::Backspace => KeyPromptKey::Backspace,
            KeyCode::Char('c') if ctrl => return false,
            KeyCode::Char(c) if !ctrl => KeyPromptKey::Char(c),
            _ => return true,
        };
        self.feed_prompt(pressed);
        true
    }

    /// A paste while the prompt is open; false when it is not.
    pub(super) fn prompt_paste(&mut self, text: &str) -> bool {
        if self.login.prompt.is_none() {
            return false;
        }
        self.feed_prompt(KeyPromptKey::Paste(text.to_string()));
        true
    }

    fn feed_prompt(&mut self, pressed: KeyPromptKey) {
        let Some(prompt) = self.login.prompt.as_mut() else {
            return;
        };
        let provider = prompt.provider().to_string();
        let dialog = prompt.dialog_id().is_some();
        match prompt.handle(pressed) {
            None => {}
            Some(outcome) if dialog => {
                self.login.prompt = None;
                self.answer_dialog(match outcome {
                    KeyPromptOutcome::Submit(text) => DialogAnswer::Text { text },
                    KeyPromptOutcome::Cancelled => DialogAnswer::Cancelled,
                });
            }
            Some(KeyPromptOutcome::Cancelled) => {
                self.login.prompt = None;
                self.notice(Level::Info, "login cancelled; nothing was saved");
            }
            Some(KeyPromptOutcome::Submit(key)) => {
                self.login.prompt = None;
                self.send_login(&provider, key);
            }
        }
    }

    fn send_login(&mut self, provider: &str, key: String) {
        let checker = self
            .login
            .providers
            .iter()
            .find(|p| p.id == provider && p.checks_key)
            .map(|p| {
                if p.name.is_empty() {
                    p.id.clone()
                } else {
                    p.name.clone()
                }
            });
        if let Some(name) = checker {
            self.notice(Level::Info, format!("checking the key with {name}…"));
        }
        let op = Op::Login {
            provider: provider.to_string(),
            key: Secret::new(key.trim()),
        };
        self.submit(op, Pending::Login(provider.to_string()));
    }

    /// uji saved the key.
    pub(super) fn on_login(&mut self, done: LoginResult) {
        let id = &done.provider;
        let text = match (done.check.as_str(), &done.note) {
            ("accepted", _) => format!(
                "{id} accepted the key; saved in {} (readable by you only)",
                done.path
            ),
            ("unchecked", Some(why)) => format!(
                "could not check the key ({why}); saved it anyway in {} (readable by you only)",
                done.path
            ),
            _ => format!(
                "saved the key for {id} in {} (readable by you only)",
                done.path
            ),
        };
        self.notice(Level::Info, text);
        if let Some(var) = done.overridden_by {
            self.notice(
                Level::Warn,
                format!("{var} is set and is used instead of the saved key while it is"),
            );
        }
    }

    pub(super) fn on_logout(&mut self, id: &str, answer: LoggedOut) {
        let text = if answer.removed {
            format!("removed the saved key for {id}")
        } else {
            format!("no key was saved for {id}")
        };
        self.notice(Level::Info, text);
    }
}

/// Where a provider's key comes from, in a few words.
fn key_detail(entry: &ProviderEntry) -> String {
    match (&entry.key, &entry.key_env) {
        (KeyOrigin::Env, Some(var)) => format!("key from {var}"),
        (KeyOrigin::Env, None) => "key from the environment".to_string(),
        (KeyOrigin::Stored, _) => "key saved".to_string(),
        (KeyOrigin::NotNeeded, _) => "no key needed".to_string(),
        (KeyOrigin::Missing, _) => "no key".to_string(),
    }
}
