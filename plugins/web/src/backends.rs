//! Each search API's request and answer (docs/web.md): pure, so every
//! backend's format is tested without a network.
//!
//! - SearXNG: `GET {url}/search?q=…&format=json` → `results[{title,url,content}]`
//! - Brave: `GET {url}/res/v1/web/search?q=…&count=N` → `web.results[{title,url,description}]`
//! - Tavily: `POST {url}/search` `{query, max_results}` → `results[{title,url,content}]`
//! - Exa: `POST {url}/search` `{query, numResults, contents}` → `results[{title,url,text}]`
//!
//! The key is not here: core adds it (`HttpOpen::auth`).

use serde::Deserialize;
use uji_sdk::protocol::web::{SearchBackend, WebSearch};
use uji_sdk::serde_json::json;
use uji_sdk::services::HttpOpen;
use url::Url;

/// Characters of page text Exa is asked for per result.
const EXA_TEXT_CHARS: u64 = 1000;

/// One result as the model reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hit {
    pub title: String,
    pub url: String,
    pub snippet: String,
}

/// The request that asks `search`'s backend for `count` results.
pub(crate) fn request(search: &WebSearch, query: &str, count: u64) -> Result<HttpOpen, String> {
    let base = search.base_url().ok_or_else(|| {
        format!(
            "the {} backend has no URL; give it in init.lua: uji.web.search({{ backend = \"{}\", url = \"…\" }})",
            search.backend.name(),
            search.backend.id()
        )
    })?;
    let endpoint = |path: &str| {
        Url::parse(&format!("{base}{path}"))
            .map_err(|e| format!("the search URL {base}{path} is not a URL ({e})"))
    };
    let mut open = match search.backend {
        SearchBackend::Searxng => {
            let mut url = endpoint("/search")?;
            url.query_pairs_mut()
                .append_pair("q", query)
                .append_pair("format", "json");
            HttpOpen::get(url.as_str())
        }
        SearchBackend::Brave => {
            let mut url = endpoint("/res/v1/web/search")?;
            url.query_pairs_mut()
                .append_pair("q", query)
                .append_pair("count", &count.to_string());
            HttpOpen::get(url.as_str())
        }
        SearchBackend::Tavily => post(
            endpoint("/search")?,
            json!({"query": query, "max_results": count}),
        ),
        SearchBackend::Exa => post(
            endpoint("/search")?,
            json!({"query": query, "numResults": count,
                   "contents": {"text": {"maxCharacters": EXA_TEXT_CHARS}}}),
        ),
    };
    open.headers
        .insert("accept".to_string(), "application/json".to_string());
    open.auth = Some(search.backend);
    Ok(open)
}

fn post(url: Url, body: uji_sdk::serde_json::Value) -> HttpOpen {
    HttpOpen {
        method: "POST".to_string(),
        headers: [("content-type".to_string(), "application/json".to_string())].into(),
        body: Some(body.to_string()),
        ..HttpOpen::get(url.as_str())
    }
}

#[derive(Deserialize)]
#[serde(bound(deserialize = "T: Deserialize<'de>"))]
struct Listed<T> {
    #[serde(default)]
    results: Vec<T>,
}

#[derive(Deserialize)]
struct BraveAnswer {
    #[serde(default)]
    web: Option<Listed<BraveItem>>,
}

#[derive(Deserialize)]
struct BraveItem {
    #[serde(default)]
    title: String,
    #[serde(default)]
    url: String,
    #[serde(default)]
    description: Option<String>,
}

/// SearXNG's and Tavily's results.
#[derive(Deserialize)]
struct ContentItem {
    #[serde(default)]
    title: String,
    #[serde(default)]
    url: String,
    #[serde(default)]
    content: Option<String>,
}

#[derive(Deserialize)]
struct ExaItem {
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    url: String,
    #[serde(default)]
    text: Option<String>,
}

/// The results in a backend's answer.
pub(crate) fn parse(backend: SearchBackend, body: &str) -> Result<Vec<Hit>, String> {
    let unreadable = |e: uji_sdk::serde_json::Error| {
        format!(
            "{} answered with JSON uji cannot read ({e}); check that the URL is its search API",
            backend.name()
        )
    };
    let hits = match backend {
        SearchBackend::Brave => {
            let answer: BraveAnswer = uji_sdk::serde_json::from_str(body).map_err(unreadable)?;
            let items = answer.web.map(|w| w.results).unwrap_or_default();
            items
                .into_iter()
                .map(|i| hit(i.title, i.url, i.description))
                .collect()
        }
        SearchBackend::Searxng | SearchBackend::Tavily => {
            let answer: Listed<ContentItem> =
                uji_sdk::serde_json::from_str(body).map_err(unreadable)?;
            answer
                .results
                .into_iter()
                .map(|i| hit(i.title, i.url, i.content))
                .collect()
        }
        SearchBackend::Exa => {
            let answer: Listed<ExaItem> =
                uji_sdk::serde_json::from_str(body).map_err(unreadable)?;
            answer
                .results
                .into_iter()
                .map(|i| hit(i.title.unwrap_or_default(), i.url, i.text))
                .collect()
        }
    };
    Ok(hits)
}

fn hit(title: String, url: String, snippet: Option<String>) -> Hit {
    Hit {
        title: one_line(&title),
        url: url.trim().to_string(),
        snippet: one_line(&snippet.unwrap_or_default()),
    }
}

/// `text` on one line, without the markup some APIs put in snippets
/// (`<strong>`).
fn one_line(text: &str) -> String {
    let mut plain = String::with_capacity(text.len());
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => plain.push(c),
            _ => {}
        }
    }
    plain.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn search(backend: SearchBackend) -> WebSearch {
        WebSearch { backend, url: None }
    }

    #[test]
    fn each_backend_is_asked_in_its_own_format() {
        let brave = request(&search(SearchBackend::Brave), "rust async", 3).unwrap();
        assert_eq!(
            brave.url,
            "https://api.search.brave.com/res/v1/web/search?q=rust+async&count=3"
        );
        assert_eq!(
            (brave.method.as_str(), brave.auth),
            ("GET", Some(SearchBackend::Brave))
        );
        let tavily = request(&search(SearchBackend::Tavily), "q", 4).unwrap();
        assert_eq!(tavily.url, "https://api.tavily.com/search");
        let body: uji_sdk::serde_json::Value =
            uji_sdk::serde_json::from_str(tavily.body.as_deref().unwrap()).unwrap();
        assert_eq!(body, json!({"query": "q", "max_results": 4}));
        let exa = request(&search(SearchBackend::Exa), "q", 2).unwrap();
        let body: uji_sdk::serde_json::Value =
            uji_sdk::serde_json::from_str(exa.body.as_deref().unwrap()).unwrap();
        assert_eq!(body["numResults"], json!(2));
        let own = WebSearch {
            backend: SearchBackend::Searxng,
            url: Some("http://127.0.0.1:8888/".into()),
        };
        let searxng = request(&own, "a&b", 5).unwrap();
        assert_eq!(
            searxng.url,
            "http://127.0.0.1:8888/search?q=a%26b&format=json"
        );
        assert!(request(&search(SearchBackend::Searxng), "q", 5).is_err());
    }

    #[test]
    fn each_backends_answer_gives_title_url_and_snippet() {
        let brave = r#"{"web": {"results": [{"title": "A <strong>b</strong>", "url": "https://a.test", "description": "d\n1"}]}}"#;
        assert_eq!(
            parse(SearchBackend::Brave, brave).unwrap(),
            [Hit {
                title: "A b".into(),
                url: "https://a.test".into(),
                snippet: "d 1".into()
            }]
        );
        assert!(parse(SearchBackend::Brave, "{}").unwrap().is_empty());
        let tavily = r#"{"query": "q", "results": [{"title": "T", "url": "https://t.test", "content": "c", "score": 0.9}]}"#;
        assert_eq!(
            parse(SearchBackend::Tavily, tavily).unwrap()[0].snippet,
            "c"
        );
        let exa = r#"{"results": [{"title": null, "url": "https://e.test", "text": "x"}]}"#;
        assert_eq!(
            parse(SearchBackend::Exa, exa).unwrap()[0].url,
            "https://e.test"
        );
        let broken = parse(SearchBackend::Searxng, "<html>").unwrap_err();
        assert!(
            broken.contains("SearXNG answered with JSON uji cannot read"),
            "{broken}"
        );
    }
}
