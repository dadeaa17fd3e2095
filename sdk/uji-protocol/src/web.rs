//! Web search backends and the `web.*` services core serves
//! (docs/web.md): init.lua chooses a backend, core keeps it and adds its
//! key to the backend's requests, the web plugin builds them.

use serde::{Deserialize, Serialize};

use crate::services::{Service, service};

/// A web search API `web_search` can use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchBackend {
    /// A SearXNG instance (no key; `url` names it).
    Searxng,
    /// Brave Search API.
    Brave,
    /// Tavily.
    Tavily,
    /// Exa.
    Exa,
}

impl SearchBackend {
    pub const ALL: [SearchBackend; 4] = [
        SearchBackend::Searxng,
        SearchBackend::Brave,
        SearchBackend::Tavily,
        SearchBackend::Exa,
    ];

    /// The name init.lua and `uji login` use.
    pub fn id(self) -> &'static str {
        match self {
            SearchBackend::Searxng => "searxng",
            SearchBackend::Brave => "brave",
            SearchBackend::Tavily => "tavily",
            SearchBackend::Exa => "exa",
        }
    }

    /// The name people know it by.
    pub fn name(self) -> &'static str {
        match self {
            SearchBackend::Searxng => "SearXNG",
            SearchBackend::Brave => "Brave Search",
            SearchBackend::Tavily => "Tavily",
            SearchBackend::Exa => "Exa",
        }
    }

    /// The base URL requests go to when init.lua gives none (SearXNG has
    /// none: an instance is the user's own).
    pub fn default_url(self) -> Option<&'static str> {
        match self {
            SearchBackend::Searxng => None,
            SearchBackend::Brave => Some("https://api.search.brave.com"),
            SearchBackend::Tavily => Some("https://api.tavily.com"),
            SearchBackend::Exa => Some("https://api.exa.ai"),
        }
    }

    /// The environment variable holding its key; `None`: it takes none.
    pub fn key_env(self) -> Option<&'static str> {
        match self {
            SearchBackend::Searxng => None,
            SearchBackend::Brave => Some("BRAVE_API_KEY"),
            SearchBackend::Tavily => Some("TAVILY_API_KEY"),
            SearchBackend::Exa => Some("EXA_API_KEY"),
        }
    }

    /// The backend named `id`.
    pub fn from_id(id: &str) -> Option<SearchBackend> {
        SearchBackend::ALL.into_iter().find(|b| b.id() == id)
    }
}

/// `web.search`: the search backend `web_search` uses, and the base URL
/// of its API when not the backend's own (a SearXNG instance, a proxy, a
/// test's fake). Only the user's config (init.lua) may set it. Core then
/// tells plugins with the event [`SEARCH_CONFIGURED`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebSearch {
    pub backend: SearchBackend,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}
service!(
    WebSearch,
    "web.search",
    "{\"backend\": \"searxng\" | \"brave\" | \"tavily\" | \"exa\", \"url\"?: base URL}",
    ()
);

impl WebSearch {
    /// The base URL requests go to, without a trailing `/`.
    pub fn base_url(&self) -> Option<String> {
        self.url
            .as_deref()
            .or(self.backend.default_url())
            .map(|url| url.trim_end_matches('/').to_string())
    }
}

/// `web.search_current`: the search backend init.lua set, if any.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WebSearchCurrent {}
service!(
    WebSearchCurrent,
    "web.search_current",
    "{}",
    Option<WebSearch>
);

/// The event core emits once `web.search` set a backend (payload: the
/// [`WebSearch`]): the web plugin then offers `web_search`.
pub const SEARCH_CONFIGURED: &str = "web_search_configured";

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn backends_read_by_their_ids_and_a_url_overrides_the_default() {
        let brave: WebSearch =
            serde_json::from_value(serde_json::json!({"backend": "brave"})).unwrap();
        assert_eq!(
            brave.base_url().as_deref(),
            Some("https://api.search.brave.com")
        );
        let own = WebSearch {
            backend: SearchBackend::Searxng,
            url: Some("http://127.0.0.1:8888/".into()),
        };
        assert_eq!(own.base_url().as_deref(), Some("http://127.0.0.1:8888"));
        for backend in SearchBackend::ALL {
            assert_eq!(SearchBackend::from_id(backend.id()), Some(backend));
        }
        assert!(
            serde_json::from_value::<WebSearch>(serde_json::json!({"backend": "bing"})).is_err()
        );
    }
}
