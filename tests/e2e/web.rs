//! `web_fetch` and `web_search` (docs/web.md) through `uji run` against
//! the fake model and small HTTP servers on 127.0.0.1: pages as Markdown,
//! redirects put to the policy hop by hop, errors that say what to do,
//! and each search backend asked in its own format with the key core adds.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use uji_fake_model::FakeModel;
use uji_tests::chat::{answer, call, tool_results, uji_with_model};
use uji_tests::{Sandbox, text};

const MODEL: &str = "openrouter/test-model";

/// A request the site received.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    /// With its query.
    target: String,
    headers: Vec<(String, String)>,
    body: String,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// What the site answers.
enum Reply {
    Page {
        status: &'static str,
        headers: Vec<String>,
        body: Vec<u8>,
    },
    /// Headers, then a byte every half second, for ten seconds.
    Slow,
    /// 11 MB of text without a length, then the connection closes.
    Huge,
}

fn page(status: &'static str, content_type: &str, body: &str) -> Reply {
    Reply::Page {
        status,
        headers: vec![format!("Content-Type: {content_type}")],
        body: body.as_bytes().to_vec(),
    }
}

fn redirect(to: &str) -> Reply {
    Reply::Page {
        status: "302 Found",
        headers: vec![format!("Location: {to}")],
        body: Vec::new(),
    }
}

type Routes = Arc<dyn Fn(&Seen) -> Reply + Send + Sync>;

/// A server on 127.0.0.1 answering with `routes`, keeping what it saw.
struct Site {
    base: String,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Site {
    fn start(routes: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> Site {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let routes: Routes = Arc::new(routes);
        let kept = Arc::clone(&seen);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let routes = Arc::clone(&routes);
                let kept = Arc::clone(&kept);
                std::thread::spawn(move || serve(stream, &routes, &kept));
            }
        });
        Site { base, seen }
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

fn serve(mut stream: TcpStream, routes: &Routes, seen: &Mutex<Vec<Seen>>) {
    let Some(request) = read_request(&stream) else {
        return;
    };
    seen.lock().unwrap().push(request.clone());
    match routes(&request) {
        Reply::Page {
            status,
            headers,
            body,
        } => {
            let mut head = format!(
                "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n",
                body.len()
            );
            for header in headers {
                head.push_str(&header);
                head.push_str("\r\n");
            }
            head.push_str("\r\n");
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(&body);
        }
        Reply::Slow => {
            let head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 100\r\nConnection: close\r\n\r\n";
            let _ = stream.write_all(head.as_bytes());
            for _ in 0..20 {
                if stream.write_all(b"x").is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(500));
            }
        }
        Reply::Huge => {
            let head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n";
            let _ = stream.write_all(head.as_bytes());
            let line = [b'a'; 1024 * 1024];
            for _ in 0..11 {
                if stream.write_all(&line).is_err() {
                    return;
                }
            }
        }
    }
    let _ = stream.flush();
}

fn read_request(stream: &TcpStream) -> Option<Seen> {
    let mut reader = BufReader::new(stream.try_clone().ok()?);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let target = parts.next()?.to_string();
    let mut headers = Vec::new();
    loop {
        let mut header = String::new();
        reader.read_line(&mut header).ok()?;
        let header = header.trim_end();
        if header.is_empty() {
            break;
        }
        let (name, value) = header.split_once(':')?;
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
    }
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Seen {
        method,
        target,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

/// One `uji run` in which the model makes `calls` (tool, arguments) in
/// turn and then answers; the output and each call's result.
fn run(sandbox: &Sandbox, calls: &[(&str, Value)], env: &[(&str, &str)]) -> (Output, Vec<String>) {
    let model = FakeModel::start();
    for (i, (tool, args)) in calls.iter().enumerate() {
        model.push(call(&format!("c{i}"), tool, args.clone()));
    }
    model.push(answer("done"));
    let output = uji_with_model(sandbox, &model, "sk-web")
        .envs(env.iter().copied())
        .args(["run", "--model", MODEL, "go"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let results = tool_results(&model);
    assert_eq!(results.len(), calls.len(), "{:?}", text(&output));
    (output, results)
}

/// An init.lua allowing `web_fetch` on `base`.
fn allowing(base: &str) -> String {
    format!("uji.tool.policy({{ web_fetch = {{ allow = {{ \"{base}/*\" }} }} }})\n")
}

const ARTICLE: &str = r#"<!doctype html><html><head><title>Green tea</title>
<script>var tracking = "SCRIPT-TEXT";</script><style>.x{color:red}</style></head>
<body><nav><a href="/">NAV-LINK Home</a> <a href="/about">About</a></nav>
<article><h1>Brewing green tea</h1>
<p>Green tea wants water well below boiling, about 80 degrees, or it turns <b>bitter</b>. Steep it for two to three minutes and taste before steeping longer.</p>
<p>Use about two grams of leaves for each cup. Good leaves can be steeped several times; each steeping brings out different flavours from the same leaves.</p>
<p>Store the leaves in a dark, airtight tin away from spices, since tea takes up smells easily.</p>
</article><footer>FOOTER-TEXT copyright</footer></body></html>"#;

fn tea_site() -> Site {
    Site::start(|seen| match seen.target.as_str() {
        "/article" => page("200 OK", "text/html; charset=utf-8", ARTICLE),
        "/r1" => redirect("/r2"),
        "/r2" => redirect("/article"),
        "/to-secret" => redirect("/secret/key"),
        "/loop" => redirect("/loop"),
        "/data.json" => page("200 OK", "application/json", "{\"a\": [1, 2]}"),
        "/paper.pdf" => page("200 OK", "application/pdf", "%PDF-1.4"),
        "/slow" => Reply::Slow,
        "/huge" => Reply::Huge,
        _ => page("404 Not Found", "text/html", "<h1>nothing here</h1>"),
    })
}

#[test]
fn an_html_page_reaches_the_model_as_markdown_of_its_main_content() {
    let site = tea_site();
    let sandbox = Sandbox::new();
    sandbox.write_init(&allowing(&site.base));
    let url = format!("{}/article", site.base);
    let (output, results) = run(&sandbox, &[("web_fetch", json!({"url": url}))], &[]);
    assert!(output.status.success(), "{:?}", text(&output));
    let result = &results[0];
    assert!(
        result.starts_with(&format!("URL: {url}\nStatus: 200 OK\nTitle: ")),
        "{result}"
    );
    assert!(
        result.contains(&format!("<untrusted source=\"web\" url=\"{url}\">")),
        "{result}"
    );
    assert!(result.contains("Green tea wants water"), "{result}");
    assert!(result.contains("**bitter**"), "Markdown: {result}");
    for dropped in ["SCRIPT-TEXT", "NAV-LINK", "color:red"] {
        assert!(!result.contains(dropped), "{dropped} in {result}");
    }
    // JSON passes through as it is.
    let json_url = format!("{}/data.json", site.base);
    let (_, results) = run(&sandbox, &[("web_fetch", json!({"url": json_url}))], &[]);
    assert!(results[0].contains("{\"a\": [1, 2]}"), "{}", results[0]);
}

#[test]
fn redirects_are_followed_and_a_hop_the_policy_denies_stops_the_fetch() {
    let site = tea_site();
    let sandbox = Sandbox::new();
    sandbox.write_init(&format!(
        "uji.tool.policy({{ web_fetch = {{ allow = {{ \"{0}/*\" }}, deny = {{ {{ \"{0}/secret/*\", \"no secrets\" }} }} }} }})\n",
        site.base
    ));
    let calls = [
        ("web_fetch", json!({"url": format!("{}/r1", site.base)})),
        (
            "web_fetch",
            json!({"url": format!("{}/to-secret", site.base)}),
        ),
        ("web_fetch", json!({"url": format!("{}/loop", site.base)})),
    ];
    let (_, results) = run(&sandbox, &calls, &[]);
    assert!(
        results[0].starts_with(&format!("URL: {}/article\n", site.base)),
        "{}",
        results[0]
    );
    assert!(
        results[0].contains("Green tea wants water"),
        "{}",
        results[0]
    );
    assert!(
        results[1].starts_with("error: ")
            && results[1].contains(&format!(
                "redirects to {}/secret/key, which the policy denies",
                site.base
            ))
            && results[1].contains("no secrets"),
        "{}",
        results[1]
    );
    assert!(
        !site.seen().iter().any(|s| s.target.starts_with("/secret")),
        "the denied hop was never requested"
    );
    assert!(
        results[2].contains("redirected more than 5 times"),
        "{}",
        results[2]
    );
}

#[test]
fn a_redirect_the_policy_would_ask_about_tells_the_model_which_url_to_fetch() {
    let other = tea_site();
    let target = format!("{}/article", other.base);
    let to_other = Site::start(move |_| redirect(&target));
    let sandbox = Sandbox::new();
    // Only the first site is allowed: the other one asks (declared ask).
    sandbox.write_init(&allowing(&to_other.base));
    let (_, results) = run(
        &sandbox,
        &[("web_fetch", json!({"url": format!("{}/go", to_other.base)}))],
        &[],
    );
    assert!(
        results[0].contains(&format!(
            "call web_fetch with url \"{}/article\" (the user is asked then)",
            other.base
        )),
        "{}",
        results[0]
    );
    assert!(other.seen().is_empty(), "the asked hop was not fetched");
}

/// A redirect is checked the way a call is: a `before_tool` hook that
/// would refuse a fetch of the hop's URL refuses the hop, though the rules
/// allow the whole site (the hook reads the hop's `args.url`).
#[test]
fn a_before_tool_hook_that_refuses_a_url_refuses_a_redirect_to_it() {
    let site = tea_site();
    let sandbox = Sandbox::new();
    sandbox.write_init(&format!(
        "{}uji.on('before_tool', function(e)\n\
           if e.tool == 'web_fetch' and e.args.url:find('/secret/', 1, true) then\n\
             return {{ deny = 'the hook keeps secrets' }}\n\
           end\n\
         end, {{ name = 'no-secrets' }})\n",
        allowing(&site.base)
    ));
    let calls = [
        (
            "web_fetch",
            json!({"url": format!("{}/to-secret", site.base)}),
        ),
        ("web_fetch", json!({"url": format!("{}/r1", site.base)})),
    ];
    let (_, results) = run(&sandbox, &calls, &[]);
    assert!(
        results[0].starts_with("error: ")
            && results[0].contains(&format!(
                "redirects to {}/secret/key, which the policy denies",
                site.base
            ))
            && results[0].contains("the hook keeps secrets"),
        "{}",
        results[0]
    );
    assert!(
        !site.seen().iter().any(|s| s.target.starts_with("/secret")),
        "the refused hop was never requested"
    );
    assert!(
        results[1].contains("Green tea wants water"),
        "hops the hook lets through are followed: {}",
        results[1]
    );
}

#[test]
fn an_allowed_prefix_runs_while_another_url_asks_and_a_headless_run_denies_it() {
    let site = tea_site();
    let sandbox = Sandbox::new();
    sandbox.write_init(&format!(
        "uji.tool.policy({{ web_fetch = {{ allow = {{ \"{}/article*\" }} }} }})\n",
        site.base
    ));
    let calls = [
        (
            "web_fetch",
            json!({"url": format!("{}/article", site.base)}),
        ),
        (
            "web_fetch",
            json!({"url": format!("{}/data.json", site.base)}),
        ),
    ];
    let (_, results) = run(&sandbox, &calls, &[]);
    assert!(
        results[0].contains("Green tea wants water"),
        "{}",
        results[0]
    );
    assert!(
        results[1].starts_with(
            "denied: web_fetch needs approval, and no one can answer in a headless run"
        ),
        "{}",
        results[1]
    );
    assert!(!site.seen().iter().any(|s| s.target == "/data.json"));
}

#[test]
fn a_404_a_pdf_a_huge_page_and_a_slow_one_are_clear_errors() {
    let site = tea_site();
    let sandbox = Sandbox::new();
    sandbox.write_init(&format!(
        "{}uji.web.fetch({{ timeout = 2 }})\n",
        allowing(&site.base)
    ));
    let calls = [
        (
            "web_fetch",
            json!({"url": format!("{}/missing", site.base)}),
        ),
        (
            "web_fetch",
            json!({"url": format!("{}/paper.pdf", site.base)}),
        ),
        ("web_fetch", json!({"url": format!("{}/huge", site.base)})),
        ("web_fetch", json!({"url": format!("{}/slow", site.base)})),
    ];
    let (_, results) = run(&sandbox, &calls, &[]);
    assert!(
        results[0].starts_with(&format!(
            "error: HTTP 404 Not Found from {}/missing: there is no page at this URL",
            site.base
        )),
        "{}",
        results[0]
    );
    assert!(
        results[1].contains("is a PDF, which web_fetch does not read"),
        "{}",
        results[1]
    );
    assert!(
        results[2].contains("is larger than 10 MB"),
        "{}",
        results[2]
    );
    assert!(
        results[3].contains("did not send its whole page within 2 seconds"),
        "{}",
        results[3]
    );
}

/// Search results of every backend's fake: three, the third never shown
/// when two are asked for.
const TITLES: [&str; 3] = ["Tea One", "Tea Two", "Tea Three"];

/// The fake results, each snippet under `field` (the backend's name for it).
fn results(field: &str) -> Vec<Value> {
    let result = |(i, title): (usize, &&str)| json!({"title": title, "url": format!("https://r{i}.test/"), field: format!("snippet {i}"), "score": 0.5});
    TITLES.iter().enumerate().map(result).collect()
}

fn searxng_answer() -> String {
    json!({"query": "tea", "number_of_results": 3, "results": results("content")}).to_string()
}

fn brave_answer() -> String {
    json!({"type": "search", "web": {"type": "search", "results": results("description")}})
        .to_string()
}

fn tavily_answer() -> String {
    json!({"query": "tea", "results": results("content"), "response_time": 0.1}).to_string()
}

fn search_sandbox(backend: &str, base: &str) -> Sandbox {
    let sandbox = Sandbox::new();
    sandbox.write_init(&format!(
        "uji.web.search({{ backend = \"{backend}\", url = \"{base}\" }})\nuji.tool.policy({{ web_search = {{ default = \"allow\" }} }})\n"
    ));
    sandbox
}

fn assert_two_results(result: &str) {
    assert!(
        result.starts_with("<untrusted source=\"web search\" query=\"green tea\">\n1. Tea One\n   https://r0.test/\n   snippet 0\n2. Tea Two"),
        "{result}"
    );
    assert!(!result.contains("Tea Three"), "{result}");
}

#[test]
fn searxng_is_asked_for_json_and_its_results_reach_the_model() {
    let site = Site::start(|_| page("200 OK", "application/json", &searxng_answer()));
    let sandbox = search_sandbox("searxng", &site.base);
    let (_, results) = run(
        &sandbox,
        &[("web_search", json!({"query": "green tea", "count": 2}))],
        &[],
    );
    assert_two_results(&results[0]);
    let seen = site.seen();
    assert_eq!(seen[0].target, "/search?q=green+tea&format=json");
}

#[test]
fn brave_gets_its_key_from_core_and_the_query_in_its_url() {
    let site = Site::start(|_| page("200 OK", "application/json", &brave_answer()));
    let sandbox = search_sandbox("brave", &site.base);
    let (_, results) = run(
        &sandbox,
        &[("web_search", json!({"query": "green tea", "count": 2}))],
        &[("BRAVE_API_KEY", "bk-secret")],
    );
    assert_two_results(&results[0]);
    let seen = &site.seen()[0];
    assert_eq!(seen.target, "/res/v1/web/search?q=green+tea&count=2");
    assert_eq!(seen.header("x-subscription-token"), Some("bk-secret"));
}

#[test]
fn tavily_gets_a_bearer_key_and_a_json_body() {
    let site = Site::start(|_| page("200 OK", "application/json", &tavily_answer()));
    let sandbox = search_sandbox("tavily", &site.base);
    let (_, results) = run(
        &sandbox,
        &[("web_search", json!({"query": "green tea", "count": 2}))],
        &[("TAVILY_API_KEY", "tk-secret")],
    );
    assert_two_results(&results[0]);
    let seen = &site.seen()[0];
    assert_eq!(
        (seen.method.as_str(), seen.target.as_str()),
        ("POST", "/search")
    );
    assert_eq!(seen.header("authorization"), Some("Bearer tk-secret"));
    let body: Value = serde_json::from_str(&seen.body).unwrap();
    assert_eq!(body, json!({"query": "green tea", "max_results": 2}));
}

#[test]
fn no_key_reaches_a_host_that_is_not_the_backends() {
    let elsewhere = Site::start(|_| page("200 OK", "text/plain", "fetched"));
    // The backend sends the search on to another host: core does not
    // follow a request that carries a key.
    let target = format!("{}/steal", elsewhere.base);
    let backend = Site::start(move |_| redirect(&target));
    let sandbox = search_sandbox("brave", &backend.base);
    let init = std::fs::read_to_string(sandbox.config().join("init.lua")).unwrap();
    sandbox.write_init(&format!("{init}{}", allowing(&elsewhere.base)));
    let calls = [
        ("web_search", json!({"query": "tea"})),
        (
            "web_fetch",
            json!({"url": format!("{}/page", elsewhere.base)}),
        ),
    ];
    let (_, results) = run(&sandbox, &calls, &[("BRAVE_API_KEY", "bk-secret")]);
    assert!(
        results[0].contains("Brave Search answered HTTP 302"),
        "{}",
        results[0]
    );
    assert_eq!(
        backend.seen()[0].header("x-subscription-token"),
        Some("bk-secret")
    );
    let seen = elsewhere.seen();
    assert_eq!(seen.len(), 1, "only web_fetch's request: {seen:?}");
    assert!(
        seen.iter()
            .all(|s| s.header("x-subscription-token").is_none()
                && s.header("authorization").is_none()),
        "{seen:?}"
    );
}

#[test]
fn web_search_is_not_offered_until_a_backend_is_set_and_tool_list_says_how() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    model.push(answer("done"));
    let output = uji_with_model(&sandbox, &model, "sk-web")
        .args(["run", "--model", MODEL, "go"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success(), "{:?}", text(&output));
    let offered: Vec<String> = model.requests()[0].json["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            t["function"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert!(offered.iter().any(|t| t == "web_fetch"), "{offered:?}");
    assert!(!offered.iter().any(|t| t == "web_search"), "{offered:?}");
    let listed = sandbox.uji().args(["tool", "list"]).output().unwrap();
    let (stdout, _) = text(&listed);
    assert!(
        stdout.contains("web_search\t-\tweb\tnot offered to the model: no search backend is set; add uji.web.search({ backend = \"brave\" })"),
        "{stdout}"
    );
    // Once set, it is offered and listed as the web plugin's.
    sandbox.write_init("uji.web.search({ backend = \"brave\" })\n");
    let listed = sandbox.uji().args(["tool", "list"]).output().unwrap();
    let (stdout, stderr) = text(&listed);
    assert!(
        stdout.contains("web_search\task\tweb\tSearch the web."),
        "{stdout}{stderr}"
    );
}

#[test]
fn a_misspelt_field_of_uji_web_search_is_an_error_at_its_line() {
    let sandbox = Sandbox::new();
    sandbox.write_init("-- web\nuji.web.search({ backend = \"brave\", ulr = \"x\" })\n");
    let listed = sandbox.uji().args(["tool", "list"]).output().unwrap();
    let (stdout, stderr) = text(&listed);
    assert!(
        stderr.contains("init.lua:2") && stderr.contains("uji.web.search: unknown field ulr"),
        "{stdout}{stderr}"
    );
}

/// `HTTP_PROXY` in uji's environment carries a fetch of a host that is not
/// loopback (docs/web.md): the proxy (the test's own server) receives the
/// request in absolute form and its answer reaches the model.
#[test]
fn the_environments_proxy_carries_the_fetch() {
    let proxy = Site::start(|seen| match seen.target.as_str() {
        "http://docs.example/article" => page("200 OK", "text/html; charset=utf-8", ARTICLE),
        _ => page("404 Not Found", "text/plain", "not through the proxy"),
    });
    let sandbox = Sandbox::new();
    sandbox.write_init(&allowing("http://docs.example"));
    let (output, results) = run(
        &sandbox,
        &[("web_fetch", json!({"url": "http://docs.example/article"}))],
        &[("HTTP_PROXY", proxy.base.as_str()), ("NO_PROXY", "")],
    );
    assert!(output.status.success(), "{:?}", text(&output));
    assert!(
        results[0].contains("Green tea wants water"),
        "{}",
        results[0]
    );
    let targets: Vec<String> = proxy.seen().iter().map(|s| s.target.clone()).collect();
    assert_eq!(targets, ["http://docs.example/article"]);
}

/// A TLS site on loopback signed by a certificate authority of the test's
/// own (`openssl`), serving `page.html`; stopped when dropped.
struct TlsSite {
    dir: tempfile::TempDir,
    server: std::process::Child,
    base: String,
}

impl Drop for TlsSite {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

fn openssl(dir: &std::path::Path, args: &[&str]) {
    let out = std::process::Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "openssl {args:?}: {:?}", text(&out));
}

fn tls_site() -> TlsSite {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    openssl(
        d,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-days",
            "2",
            "-subj",
            "/CN=uji test CA",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign",
        ],
    );
    openssl(
        d,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "srv.key",
            "-out",
            "srv.csr",
            "-subj",
            "/CN=localhost",
        ],
    );
    std::fs::write(
        d.join("ext.cnf"),
        "subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    openssl(
        d,
        &[
            "x509",
            "-req",
            "-in",
            "srv.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "srv.pem",
            "-days",
            "2",
            "-extfile",
            "ext.cnf",
        ],
    );
    std::fs::write(
        d.join("page.html"),
        ARTICLE.replace("Green tea wants water", "TLS-PAGE Green tea wants water"),
    )
    .unwrap();
    // A free port, given to openssl (which cannot say which it took).
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let server = std::process::Command::new("openssl")
        .args([
            "s_server",
            "-accept",
            &format!("127.0.0.1:{port}"),
            "-cert",
            "srv.pem",
            "-key",
            "srv.key",
            "-WWW",
            "-quiet",
        ])
        .current_dir(d)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed().as_secs() < 10,
            "openssl s_server did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    TlsSite {
        dir,
        server,
        base: format!("https://localhost:{port}"),
    }
}

/// `SSL_CERT_FILE` (docs/web.md): a site whose certificate a private
/// authority signed is refused with an error naming the variable, then
/// read once the variable names that authority's PEM file.
#[test]
fn ssl_cert_file_adds_a_private_certificate_authority() {
    if std::process::Command::new("openssl")
        .arg("version")
        .output()
        .is_err()
    {
        eprintln!("SKIPPED SSL_CERT_FILE: no openssl to make a certificate authority");
        return;
    }
    let site = tls_site();
    let sandbox = Sandbox::new();
    sandbox.write_init(&allowing(&site.base));
    let fetch = [(
        "web_fetch",
        json!({"url": format!("{}/page.html", site.base)}),
    )];
    let (_, refused) = run(&sandbox, &fetch, &[]);
    assert!(refused[0].contains("SSL_CERT_FILE"), "{}", refused[0]);
    assert!(!refused[0].contains("TLS-PAGE"), "{}", refused[0]);
    let ca = site.dir.path().join("ca.pem");
    let (_, read) = run(&sandbox, &fetch, &[("SSL_CERT_FILE", ca.to_str().unwrap())]);
    assert!(
        read[0].contains("TLS-PAGE Green tea wants water"),
        "{}",
        read[0]
    );
}
