//! What a fetched body is, and a page as the model reads it: HTML as
//! Markdown with the main content first, text and JSON as they are.

use dom_smoothie::{Config, Readability, TextMode};

/// Elements a plain conversion leaves out: not the page's content.
const SKIP_TAGS: [&str; 10] = [
    "head", "script", "style", "nav", "footer", "noscript", "iframe", "svg", "form", "aside",
];

/// Elements removed before the reader view looks: never content, and on
/// a short page it would otherwise keep them. (Not `form`: some sites
/// wrap their whole body in one.)
const CHROME: &str = "script, style, noscript, template, nav, footer, aside, iframe, svg";

/// What a response's content type says the body is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    Html,
    /// Plain text, JSON, XML, source code: passed on as it is.
    Text,
    Pdf,
    /// Images, archives, programs: not read (the type).
    Binary(String),
    /// No content type: decided by the body.
    Unknown,
}

/// The kind of a body from its `content-type` header.
pub(crate) fn kind(content_type: Option<&str>) -> Kind {
    let mime = content_type
        .and_then(|t| t.split(';').next())
        .map(|t| t.trim().to_ascii_lowercase())
        .unwrap_or_default();
    match mime.as_str() {
        "" => Kind::Unknown,
        "text/html" | "application/xhtml+xml" => Kind::Html,
        "application/pdf" => Kind::Pdf,
        m if is_text(m) => Kind::Text,
        m => Kind::Binary(m.to_string()),
    }
}

fn is_text(mime: &str) -> bool {
    const TEXT_TYPES: [&str; 8] = [
        "application/json",
        "application/xml",
        "application/javascript",
        "application/x-ndjson",
        "application/toml",
        "application/yaml",
        "application/x-yaml",
        "application/x-sh",
    ];
    mime.starts_with("text/")
        || mime.ends_with("+json")
        || mime.ends_with("+xml")
        || TEXT_TYPES.contains(&mime)
}

/// A body without a content type: HTML when it starts like HTML.
pub(crate) fn sniff(body: &str) -> Kind {
    let start: String = body
        .trim_start()
        .chars()
        .take(256)
        .collect::<String>()
        .to_ascii_lowercase();
    if start.starts_with("<!doctype html") || start.starts_with("<html") {
        Kind::Html
    } else if start.starts_with("%pdf-") {
        Kind::Pdf
    } else {
        Kind::Text
    }
}

/// A page as the model reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Page {
    pub title: Option<String>,
    pub text: String,
}

/// HTML as Markdown: the main content as a reader view finds it, or,
/// when it finds no article, the whole body less navigation, scripts and
/// the like.
pub(crate) fn html_to_markdown(html: &str, url: &str) -> Page {
    let document = dom_query::Document::from(html);
    document.select(CHROME).remove();
    let config = Config {
        text_mode: TextMode::Markdown,
        ..Default::default()
    };
    // A URL the reader cannot use (not absolute) only loses link fixing.
    let url = url::Url::parse(url).is_ok().then_some(url);
    let article = Readability::with_document(document, url, Some(config))
        .and_then(|mut reader| reader.parse());
    match article {
        Ok(article) if !article.text_content.trim().is_empty() => Page {
            title: non_empty(&article.title),
            text: article.text_content.trim().to_string(),
        },
        _ => plain(html),
    }
}

/// The whole body as Markdown, less [`SKIP_TAGS`].
fn plain(html: &str) -> Page {
    let document = dom_query::Document::from(html);
    let title = non_empty(&document.select("title").text());
    let body = document.select("body");
    let text = match body.nodes().first() {
        Some(node) => node.md(Some(&SKIP_TAGS)),
        None => document.md(Some(&SKIP_TAGS)),
    };
    Page {
        title,
        text: text.trim().to_string(),
    }
}

fn non_empty(text: &str) -> Option<String> {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    (!text.is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ARTICLE: &str = r#"<!doctype html><html><head><title>Tea | Site</title>
<script>var tracking = "SCRIPT-TEXT";</script><style>.x{color:red}</style></head>
<body><nav><a href="/">NAV-LINK Home</a> <a href="/about">About</a></nav>
<article><h1>Brewing green tea</h1>
<p>Green tea wants water well below boiling, about 80 degrees, or it turns bitter. Steep it for two to three minutes and taste before steeping longer.</p>
<p>Use about two grams of leaves for each cup. Good leaves can be steeped several times; each steeping brings out different flavours from the same leaves.</p>
<p>Store the leaves in a dark, airtight tin away from spices, since tea takes up smells easily.</p>
</article><footer>FOOTER-TEXT copyright</footer></body></html>"#;

    #[test]
    fn an_article_becomes_markdown_without_scripts_or_navigation() {
        let page = html_to_markdown(ARTICLE, "https://tea.test/green");
        assert!(page.text.contains("Green tea wants water"), "{}", page.text);
        assert!(!page.text.contains("SCRIPT-TEXT"), "{}", page.text);
        assert!(!page.text.contains("NAV-LINK"), "{}", page.text);
        assert!(page.title.is_some_and(|t| t.contains("Tea")));
    }

    #[test]
    fn a_page_without_an_article_is_converted_whole_less_its_chrome() {
        let html = "<html><head><title>T</title></head><body><nav>NAV</nav><p>Short <b>note</b>.</p><script>S()</script></body></html>";
        let page = html_to_markdown(html, "https://x.test/");
        assert!(page.text.contains("Short **note**."), "{}", page.text);
        assert!(
            !page.text.contains("NAV") && !page.text.contains("S()"),
            "{}",
            page.text
        );
        assert_eq!(page.title.as_deref(), Some("T"));
    }

    #[test]
    fn content_types_decide_what_a_body_is() {
        assert_eq!(kind(Some("text/html; charset=utf-8")), Kind::Html);
        assert_eq!(kind(Some("application/vnd.api+json")), Kind::Text);
        assert_eq!(kind(Some("text/plain")), Kind::Text);
        assert_eq!(kind(Some("application/pdf")), Kind::Pdf);
        assert_eq!(kind(Some("image/png")), Kind::Binary("image/png".into()));
        assert_eq!(kind(None), Kind::Unknown);
        assert_eq!(sniff("  <!DOCTYPE html><p>x"), Kind::Html);
        assert_eq!(sniff("{\"a\": 1}"), Kind::Text);
    }
}
