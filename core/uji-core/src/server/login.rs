//! `login` and `logout`: what `uji login` and `uji logout` do, for a
//! frontend (the TUI's `/login`). The key is checked and saved by
//! [`crate::auth::login`], then the running session uses it at once: the model
//! list shows the provider as available, the next request sends the key,
//! and the key joins those kept out of everything shown and saved.

use std::sync::Arc;

use uji_protocol::frontend::answers::LoggedOut;
use uji_protocol::frontend::{LoginResult, Secret};

use super::{Reply, Shared, answered};
use crate::auth::keys::KeyStore;
use crate::auth::login::{self, KeyCheck};
use crate::auth::providers::Provider;

impl Shared {
    pub(super) fn login(
        self: &Arc<Self>,
        op_id: Option<&str>,
        provider: &str,
        key: &Secret,
    ) -> Result<Reply, String> {
        let providers = &self.sessions.providers;
        let provider = login::find(providers, provider).map_err(|e| e.to_string())?;
        let key = login::clean_key(key.expose()).map_err(|e| e.to_string())?;
        // The check is a request to the provider: the router goes on
        // meanwhile.
        let shared = Arc::clone(self);
        let op_id = op_id.map(str::to_string);
        tokio::spawn(async move {
            let check = login::check_key(&shared.sessions.providers, &provider, &key).await;
            let result = shared
                .save_key(&provider, &key, &check)
                .and_then(|answer| answered(&answer));
            shared.reply(op_id.as_deref(), result);
        });
        Ok(Reply::Later)
    }

    fn save_key(
        &self,
        provider: &Provider,
        key: &str,
        check: &KeyCheck,
    ) -> Result<LoginResult, String> {
        login::refusal(provider, check).map_err(|e| e.to_string())?;
        let providers = &self.sessions.providers;
        let store = KeyStore::new(self.sessions.data_dir());
        login::save(&store, providers, provider, key).map_err(|e| e.to_string())?;
        self.control.set_secrets(providers.secret_values());
        self.use_new_key(&provider.id);
        self.apply_when_idle();
        Ok(LoginResult {
            provider: provider.id.clone(),
            check: check.word().to_string(),
            note: match check {
                KeyCheck::Unchecked(why) => Some(why.clone()),
                _ => None,
            },
            path: store.path().to_string_lossy().into_owned(),
            overridden_by: login::overriding_variable(providers, provider),
        })
    }

    /// After a login: a session without a model gets the one the new key
    /// makes available; one on this provider sends the new key from its
    /// next request on.
    fn use_new_key(&self, id: &str) {
        let choice = match self.control.model().model {
            Err(_) => match self.sessions.providers.resolve(None) {
                Ok(resolved) => resolved.label(),
                Err(_) => return,
            },
            Ok(resolved) if resolved.provider.id == id => resolved.label(),
            Ok(_) => return,
        };
        if let Err(e) = self.set_model(Some(&choice), None) {
            tracing::warn!("after a login, {choice} cannot be used: {e}");
        }
    }

    /// Keys saved by `uji login` in another terminal since this session
    /// began count from now on (a damaged file keeps what was loaded).
    pub(super) fn reload_keys(&self) {
        let providers = &self.sessions.providers;
        match KeyStore::new(self.sessions.data_dir()).load() {
            Ok(keys) => {
                providers.set_stored_keys(keys);
                self.control.set_secrets(providers.secret_values());
                self.apply_when_idle();
            }
            Err(e) => tracing::warn!("{e}"),
        }
    }

    pub(super) fn logout(&self, id: &str) -> Result<Reply, String> {
        let providers = &self.sessions.providers;
        let store = KeyStore::new(self.sessions.data_dir());
        let removed = login::forget(&store, providers, id).map_err(|e| e.to_string())?;
        self.drop_forgotten_key(id);
        Reply::answer(&LoggedOut { removed })
    }

    /// A session on this provider stops sending the removed key (an
    /// environment variable's key still works).
    fn drop_forgotten_key(&self, id: &str) {
        let providers = &self.sessions.providers;
        let switched = self.control.switch_model(|chosen| {
            let label = match &chosen.model {
                Ok(resolved) if resolved.provider.id == id => resolved.label(),
                _ => return Err(()),
            };
            // Without the key the model may be gone: requests say why.
            chosen.model = providers.resolve(Some(&label));
            Ok(())
        });
        if switched.is_ok() {
            self.apply_when_idle();
        }
    }
}
