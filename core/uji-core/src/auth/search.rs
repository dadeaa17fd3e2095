//! Web search backends' keys (docs/web.md): which backend init.lua chose,
//! where its key comes from (its variable, else `uji login`, as for model
//! providers), and the one origin it may be sent to. Core adds the key to
//! a request (`http.open` with `auth`), so no plugin ever holds it.

use std::sync::Arc;

use reqwest::Url;
use uji_host::{CONFIG_PLUGIN, Registry};
use uji_protocol::services::{self as protocol_services, Service as _};
use uji_protocol::web::{SEARCH_CONFIGURED, SearchBackend, WebSearch, WebSearchCurrent};

use super::providers::{Provider, Providers};

/// The header carrying `backend`'s key and its value for `key`; `None` for
/// a backend that takes no key.
pub fn key_header(backend: SearchBackend, key: &str) -> Option<(&'static str, String)> {
    match backend {
        SearchBackend::Searxng => None,
        SearchBackend::Brave => Some(("x-subscription-token", key.to_string())),
        SearchBackend::Tavily => Some(("authorization", format!("Bearer {key}"))),
        SearchBackend::Exa => Some(("x-api-key", key.to_string())),
    }
}

/// `backend` as an entry `uji login` saves a key for (its id and
/// variable), like a model provider's.
pub fn login_entry(backend: SearchBackend) -> Provider {
    let mut entry = Provider::new(backend.id(), "");
    entry.name = backend.name().to_string();
    entry.key_env = backend.key_env().map(str::to_string);
    entry
}

/// The search backend `uji login ID` names, as a login entry; only those
/// that take a key.
pub fn login_entry_named(id: &str) -> Option<Provider> {
    SearchBackend::from_id(id)
        .filter(|b| b.key_env().is_some())
        .map(login_entry)
}

impl Providers {
    /// The backend init.lua chose, if any.
    pub fn search(&self) -> Option<WebSearch> {
        self.search_backend().read().clone()
    }

    fn set_search(&self, search: WebSearch) {
        *self.search_backend().write() = Some(search);
    }

    /// The header to add to a request of `backend` to `url`: refused
    /// unless `url`'s origin is the backend's (the `url` init.lua gave
    /// it, else its default), or when its key is not set.
    pub fn search_credential(
        &self,
        backend: SearchBackend,
        url: &Url,
    ) -> Result<Option<(&'static str, String)>, String> {
        let configured = self.search().filter(|s| s.backend == backend);
        let base = match &configured {
            Some(search) => search.base_url(),
            None => backend.default_url().map(str::to_string),
        };
        let allowed = base.as_deref().and_then(|b| Url::parse(b).ok());
        if allowed.map(|a| a.origin()) != Some(url.origin()) {
            return Err(format!(
                "http.open: the {} key goes only to {}, not to {}; the request was not sent",
                backend.name(),
                base.as_deref()
                    .unwrap_or("the URL init.lua gives with uji.web.search"),
                url.origin().ascii_serialization()
            ));
        }
        let Some(var) = backend.key_env() else {
            return Ok(None);
        };
        let Some(key) = self.key_of(&login_entry(backend)) else {
            return Err(format!(
                "{var} is not set: export it, or run `uji login {}`, to search with {}",
                backend.id(),
                backend.name()
            ));
        };
        Ok(key_header(backend, &key))
    }
}

/// `web.search` (init.lua alone: it decides where a key may go) and
/// `web.search_current`.
pub fn install_services(providers: &Providers, registry: &Registry) {
    let kept = providers.clone();
    let events = registry.clone();
    registry.add_service(
        WebSearch::METHOD,
        Arc::new(move |caller, params| {
            if caller != CONFIG_PLUGIN {
                return Err(
                    "only the user's config (init.lua) may choose the web search backend"
                        .to_string(),
                );
            }
            let search =
                protocol_services::decode_params::<WebSearch>(params).map_err(|e| e.to_string())?;
            check(&search)?;
            kept.set_search(search.clone());
            let payload = serde_json::to_value(&search).map_err(|e| e.to_string())?;
            events.emit(SEARCH_CONFIGURED, payload);
            Ok(serde_json::Value::Null)
        }),
    );
    let providers = providers.clone();
    registry.serve(move |_: WebSearchCurrent| Ok(providers.search()));
}

/// A backend's settings that can work: a URL that is one, and SearXNG
/// with the URL of its instance.
fn check(search: &WebSearch) -> Result<(), String> {
    let Some(base) = search.base_url() else {
        return Err(format!(
            "the {} backend needs the URL of your instance: uji.web.search({{ backend = \"{}\", url = \"http://127.0.0.1:8888\" }})",
            search.backend.name(),
            search.backend.id()
        ));
    };
    match Url::parse(&base) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.has_host() => Ok(()),
        _ => Err(format!(
            "url must be a whole http:// or https:// URL, got {base:?}"
        )),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::auth::providers::EnvLookup;

    struct Env(Vec<(&'static str, &'static str)>);

    impl EnvLookup for Env {
        fn get(&self, name: &str) -> Option<String> {
            self.0
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        }
    }

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    #[test]
    fn a_key_goes_only_to_its_backends_origin() {
        let providers = Providers::new(Arc::new(Env(vec![("BRAVE_API_KEY", "k1")])));
        let brave = url("https://api.search.brave.com/res/v1/web/search?q=x");
        assert_eq!(
            providers
                .search_credential(SearchBackend::Brave, &brave)
                .unwrap(),
            Some(("x-subscription-token", "k1".to_string()))
        );
        let elsewhere = url("https://evil.test/res/v1/web/search");
        let refused = providers
            .search_credential(SearchBackend::Brave, &elsewhere)
            .unwrap_err();
        assert!(refused.contains("https://evil.test"), "{refused}");
        // A URL init.lua gave replaces the default origin.
        providers.set_search(WebSearch {
            backend: SearchBackend::Brave,
            url: Some("http://127.0.0.1:9/".into()),
        });
        assert!(
            providers
                .search_credential(SearchBackend::Brave, &brave)
                .is_err()
        );
        let local = url("http://127.0.0.1:9/res/v1/web/search");
        assert!(
            providers
                .search_credential(SearchBackend::Brave, &local)
                .unwrap()
                .is_some()
        );
        assert!(
            providers
                .search_credential(SearchBackend::Brave, &url("http://127.0.0.1:10/"))
                .is_err()
        );
    }

    #[test]
    fn a_missing_key_says_how_to_set_it() {
        let providers = Providers::new(Arc::new(Env(vec![])));
        let tavily = url("https://api.tavily.com/search");
        let missing = providers
            .search_credential(SearchBackend::Tavily, &tavily)
            .unwrap_err();
        assert!(
            missing.contains("TAVILY_API_KEY") && missing.contains("uji login tavily"),
            "{missing}"
        );
        providers.remember_key("tavily", "t1");
        assert_eq!(
            providers
                .search_credential(SearchBackend::Tavily, &tavily)
                .unwrap(),
            Some(("authorization", "Bearer t1".to_string()))
        );
    }

    #[test]
    fn searxng_needs_its_url() {
        let bare = WebSearch {
            backend: SearchBackend::Searxng,
            url: None,
        };
        assert!(check(&bare).unwrap_err().contains("url ="));
        let bad = WebSearch {
            backend: SearchBackend::Brave,
            url: Some("ftp://x".into()),
        };
        assert!(check(&bad).is_err());
    }
}
