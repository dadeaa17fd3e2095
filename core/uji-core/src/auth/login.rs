//! Logging in to a provider: the key checked with the provider when it
//! offers a cheap check, then saved owner-only ([`crate::auth::keys`]) and used at
//! once. `uji login` and the frontends' `login` operation both come here.
//!
//! A key is never printed or logged from here: messages name the provider,
//! the URL and the file, never the key, and reqwest's errors are stripped
//! of their URL before they are shown (they never carry headers).

use std::time::Duration;

use crate::auth::keys::{KeyError, KeyStore};
use crate::auth::providers::{KeySource, Provider, Providers};

/// How long a key check may take.
const CHECK_TIMEOUT: Duration = Duration::from_secs(15);

/// What asking the provider with the key found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyCheck {
    /// The provider answered 2xx.
    Accepted,
    /// HTTP 401 or 403: the key is wrong.
    Refused { status: u16, url: String },
    /// The check could not be made (no network, another status): why.
    Unchecked(String),
    /// The provider offers no cheap check.
    NoCheck,
}

impl KeyCheck {
    /// The word the `login` operation answers with.
    pub fn word(&self) -> &'static str {
        match self {
            KeyCheck::Accepted => "accepted",
            KeyCheck::Refused { .. } => "refused",
            KeyCheck::Unchecked(_) => "unchecked",
            KeyCheck::NoCheck => "no_check",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    #[error("unknown provider {id:?}; known providers: {known}")]
    UnknownProvider { id: String, known: String },
    #[error("no key given; nothing was saved")]
    Empty,
    #[error("the key holds spaces or control characters; nothing was saved")]
    Malformed,
    #[error(
        "{name} refused the key (HTTP {status} from {url}); nothing was saved. Check the key, or save it unchecked with `uji login --no-check {id}`"
    )]
    Refused {
        id: String,
        name: String,
        status: u16,
        url: String,
    },
    #[error(transparent)]
    Store(#[from] KeyError),
}

/// The provider's name for messages (its id when it has none).
pub fn display_name(provider: &Provider) -> &str {
    if provider.name.is_empty() {
        &provider.id
    } else {
        &provider.name
    }
}

/// The provider with `id`, or an error listing the known ones.
pub fn find(providers: &Providers, id: &str) -> Result<Provider, LoginError> {
    // Web search backends take keys the same way (docs/web.md).
    providers
        .get(id)
        .or_else(|| crate::auth::search::login_entry_named(id))
        .ok_or_else(|| LoginError::UnknownProvider {
            id: id.to_string(),
            known: providers
                .list()
                .into_iter()
                .map(|p| p.id)
                .chain(search_ids())
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// The web search backends that take a key, for the list of known ids.
fn search_ids() -> impl Iterator<Item = String> {
    uji_protocol::web::SearchBackend::ALL
        .into_iter()
        .filter(|b| b.key_env().is_some())
        .map(|b| b.id().to_string())
}

/// The key as typed or pasted: surrounding blanks go; inner spaces or
/// control characters mean it is not one key.
pub fn clean_key(text: &str) -> Result<String, LoginError> {
    let key = text.trim();
    if key.is_empty() {
        return Err(LoginError::Empty);
    }
    if key.chars().any(char::is_control) || key.contains(' ') {
        return Err(LoginError::Malformed);
    }
    Ok(key.to_string())
}

/// Asks the provider's check URL (its model list, mostly) with the key.
pub async fn check_key(providers: &Providers, provider: &Provider, key: &str) -> KeyCheck {
    let Some(path) = &provider.key_check else {
        return KeyCheck::NoCheck;
    };
    let base = match providers.base_url_of(provider) {
        Ok(base) => base,
        Err(e) => return KeyCheck::Unchecked(e),
    };
    let url = format!("{base}/{}", path.trim_start_matches('/'));
    match fetch_status(&url, &provider.wire, key).await {
        Ok(status) if (200..300).contains(&status) => KeyCheck::Accepted,
        Ok(status @ (401 | 403)) => KeyCheck::Refused { status, url },
        Ok(status) => KeyCheck::Unchecked(format!("HTTP {status} from {url}")),
        Err(e) => KeyCheck::Unchecked(e),
    }
}

/// A refused key is an error; anything else may be saved.
pub fn refusal(provider: &Provider, check: &KeyCheck) -> Result<(), LoginError> {
    match check {
        KeyCheck::Refused { status, url } => Err(LoginError::Refused {
            id: provider.id.clone(),
            name: display_name(provider).to_string(),
            status: *status,
            url: url.clone(),
        }),
        _ => Ok(()),
    }
}

/// Saves the key in `store` and makes `providers` use it from now on.
pub fn save(
    store: &KeyStore,
    providers: &Providers,
    provider: &Provider,
    key: &str,
) -> Result<(), LoginError> {
    store.save(&provider.id, key)?;
    providers.remember_key(&provider.id, key);
    tracing::info!(provider = %provider.id, "saved a key");
    Ok(())
}

/// Forgets the saved key of `id`; whether there was one.
pub fn forget(store: &KeyStore, providers: &Providers, id: &str) -> Result<bool, LoginError> {
    let had = store.remove(id)?;
    providers.forget_key(id);
    if had {
        tracing::info!(provider = id, "removed a saved key");
    }
    Ok(had)
}

/// The variable that wins over a saved key of `provider` while it is set.
pub fn overriding_variable(providers: &Providers, provider: &Provider) -> Option<String> {
    match providers.key_source(provider) {
        KeySource::Env(var) => Some(var),
        _ => None,
    }
}

async fn fetch_status(url: &str, wire: &str, key: &str) -> Result<u16, String> {
    let loopback =
        url.contains("://127.") || url.contains("://localhost") || url.contains("://[::1]");
    let mut builder = reqwest::Client::builder()
        .timeout(CHECK_TIMEOUT)
        .user_agent(concat!("uji/", env!("CARGO_PKG_VERSION")));
    if loopback {
        builder = builder.no_proxy();
    }
    let client = builder.build().map_err(|e| describe(&e.without_url()))?;
    let request = match wire {
        "anthropic" => client
            .get(url)
            .header("x-api-key", key)
            .header("anthropic-version", "2023-06-01"),
        "gemini" => client.get(url).header("x-goog-api-key", key),
        _ => client.get(url).bearer_auth(key),
    };
    request
        .send()
        .await
        .map(|r| r.status().as_u16())
        .map_err(|e| describe(&e.without_url()))
}

/// An error with its causes ("error sending request" alone says little).
fn describe(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pasted_key_loses_its_blanks_and_a_sentence_is_refused() {
        assert_eq!(clean_key("  gsk-abc\n").unwrap(), "gsk-abc");
        assert!(matches!(clean_key(" \n"), Err(LoginError::Empty)));
        assert!(matches!(
            clean_key("my key is gsk"),
            Err(LoginError::Malformed)
        ));
        assert!(matches!(
            clean_key("gsk\u{1b}[A"),
            Err(LoginError::Malformed)
        ));
    }
}
