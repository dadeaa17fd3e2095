//! `web_fetch` (docs/web.md): what fetching a 1 MB HTML page and turning
//! it into Markdown costs uji, as CPU time and peak memory over the same
//! `uji run --yes` turn reading a small file instead. The page comes from
//! a server on 127.0.0.1, the answers from the fake model.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;

use serde_json::json;
use uji_fake_model::FakeModel;

use crate::run::{ok, run_cmd, text_answer, tool_call};
use crate::{Row, Run, measure, median};

const RUNS: usize = 10;
const PAGE_BYTES: usize = 1 << 20;

/// An article of about 1 MB with the chrome a real page has.
fn page() -> String {
    let mut html = String::from(
        "<!doctype html><html><head><title>Bench page</title><script>var tracking = 1;</script>\
         <style>p { margin: 0 }</style></head><body><nav><a href=\"/\">Home</a> <a href=\"/a\">About</a></nav>\
         <article><h1>A long article</h1>\n",
    );
    let mut n = 0;
    while html.len() < PAGE_BYTES {
        html.push_str(&format!(
            "<p>Paragraph {n} says something worth reading, with <a href=\"/p/{n}\">a link</a>, \
             some <b>bold</b> and <i>italic</i> words, and enough plain text, commas and all, \
             for a reader view to take it as the page's content.</p>\n"
        ));
        n += 1;
    }
    html.push_str("</article><footer>footer</footer></body></html>");
    html
}

/// Serves `page` to every request; the base URL.
fn serve(page: String) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("address"));
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                page.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(page.as_bytes());
        }
    });
    base
}

/// Turns of one call each (`web_fetch` of the page, or `read_file` of a
/// small file), then an answer.
fn turns(
    home: &Path,
    work: &Path,
    model: &FakeModel,
    tool: &str,
    args: serde_json::Value,
) -> Vec<Run> {
    (0..RUNS)
        .map(|_| {
            model.push(tool_call("w1", tool, args.clone()));
            model.push(text_answer("done", 2));
            ok(measure(&mut run_cmd(home, work, model, "fetch")), "web")
        })
        .collect()
}

pub fn run() -> Vec<Row> {
    let home = tempfile::tempdir().expect("tempdir");
    let work = tempfile::tempdir().expect("tempdir");
    let (h, w) = (home.path(), work.path());
    std::fs::write(w.join("notes.txt"), "a small file\n").expect("write");
    let base = serve(page());
    let model = FakeModel::start();
    let fetches = turns(
        h,
        w,
        &model,
        "web_fetch",
        json!({"url": format!("{base}/page")}),
    );
    let reads = turns(h, w, &model, "read_file", json!({"path": "notes.txt"}));
    let cpu_ms = |runs: &[Run]| median(runs.iter().map(|r| r.cpu.as_secs_f64() * 1000.0).collect());
    let rss_mib =
        |runs: &[Run]| median(runs.iter().map(|r| r.peak_rss_kb as f64 / 1024.0).collect());
    vec![
        Row {
            area: "web",
            what: "web_fetch of a 1 MB HTML page as Markdown: uji's CPU time over a turn reading a small file".to_string(),
            value: cpu_ms(&fetches) - cpu_ms(&reads),
            unit: "ms",
            target: Some(50.0),
        },
        Row {
            area: "web",
            what: "web_fetch of a 1 MB HTML page: uji's peak RSS over a turn reading a small file".to_string(),
            value: rss_mib(&fetches) - rss_mib(&reads),
            unit: "MiB",
            target: Some(30.0),
        },
    ]
}
