//! Frame times while streaming, and the cost of loading the highlighter.
//! Not run by default (numbers only, no assertions on time):
//! `cargo test -p uji-plugin-tui --release -- --ignored --nocapture bench_`

use std::time::{Duration, Instant};

use super::colored;
use super::corpus::typical;
use crate::markdown::{Markdown, render};

/// Streams `text` one character per frame, drawing each frame; prints the
/// median, 99th percentile and slowest frame.
fn stream(name: &str, text: &str, width: u16) {
    let theme = colored();
    let mut md = Markdown::new();
    let mut frames: Vec<Duration> = Vec::with_capacity(text.len());
    let started = Instant::now();
    let mut buf = [0u8; 4];
    for ch in text.chars() {
        let frame = Instant::now();
        md.push_str(ch.encode_utf8(&mut buf));
        let lines = md.lines(width, &theme).len();
        frames.push(frame.elapsed());
        std::hint::black_box(lines);
    }
    let total = started.elapsed();
    frames.sort_unstable();
    let at = |q: f64| frames[((frames.len() - 1) as f64 * q) as usize];
    println!(
        "{name:<34} {:>8} frames  median {:>7.1?}  p99 {:>8.1?}  max {:>8.1?}  total {:>6.1?}  lines {}",
        frames.len(),
        at(0.5),
        at(0.99),
        at(1.0),
        total,
        md.lines(width, &theme).len()
    );
}

#[test]
#[ignore]
fn bench_stream_typical_5mb() {
    let mut text = typical(1);
    let unit = text.len();
    text = typical(5 * 1024 * 1024 / unit + 1);
    stream("typical answer, 5 MB, width 120", &text, 120);
}

#[test]
#[ignore]
fn bench_stream_torture() {
    let mut cases: Vec<(&str, String)> = Vec::new();
    cases.push((
        "lists 1,000 deep",
        (0..1000)
            .map(|d| format!("{}- item{d}\n", "  ".repeat(d)))
            .collect(),
    ));
    cases.push((
        "quotes 1,000 deep",
        (1..=1000)
            .map(|d| format!("{} level {d}\n", ">".repeat(d)))
            .collect(),
    ));
    let mut table = String::from("| n | square | word |\n|---:|---:|---|\n");
    table.extend((0..20_000u64).map(|n| format!("| {n} | {} | w{n} |\n", n * n)));
    cases.push(("table of 20,000 rows", table));
    cases.push(("1 MB line", "lorem ipsum dolor sit amet ".repeat(40_000)));
    let fence: String = (0..50_000).map(|n| format!("x{n} = {n}\n")).collect();
    cases.push((
        "unclosed fence, 50,000 lines",
        format!("```python\n{fence}"),
    ));
    cases.push(("50,000 emphasis markers", "*a **b ".repeat(50_000 / 3)));
    cases.push(("10,000 code spans", "`span` and ".repeat(10_000)));
    cases.push((
        "100 KB emoji/combining",
        "👩‍👩‍👧 e\u{301}\u{302} 日本語 🇫🇷🇩🇪 ".repeat(3_000),
    ));
    cases.push((
        "10,000 headings",
        (0..10_000).map(|n| format!("## Heading {n}\n")).collect(),
    ));
    let blocks = (0..5_000)
        .map(|n| format!("```rust\nlet n = {n};\n```\n"))
        .collect();
    cases.push(("5,000 code blocks", blocks));
    cases.push((
        "1 MB line in a python fence",
        format!(
            "```python\n{}\n```\n",
            "value = compute(1, 2); ".repeat(45_000)
        ),
    ));
    let html: String = (0..8_000)
        .map(|n| format!("<p>paragraph {n}</p>\n"))
        .collect();
    cases.push(("100 KB HTML block", format!("<div>\n{html}</div>\n")));
    for (name, text) in &cases {
        stream(name, text, 120);
    }
}

fn rss_kb() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let line = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .unwrap_or("");
    line.split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Run alone (grammars load once per process).
#[test]
#[ignore]
fn bench_highlighter_load() {
    let theme = colored();
    let prose = typical(1)
        .replace("```", "~~~~")
        .replace("~~~~python", "~~~~")
        .replace("~~~~toml", "~~~~");
    let started = Instant::now();
    let lines = render(&prose, 120, &theme).len();
    println!(
        "first drawing without code languages: {:?} ({lines} lines)",
        started.elapsed()
    );
    let before = rss_kb();
    let started = Instant::now();
    crate::markdown::preload();
    println!(
        "grammars and theme loaded: {:?}, RSS +{} KB",
        started.elapsed(),
        rss_kb() - before
    );
    let langs = std::env::var("LANGS").unwrap_or_else(|_| "rust python typescript".into());
    for lang in langs.split_whitespace() {
        let code = format!(
            "```{lang}\n{}```\n",
            "let value = compute(1, \"two\"); // note\n".repeat(50)
        );
        let started = Instant::now();
        render(&code, 120, &theme);
        let first = started.elapsed();
        let started = Instant::now();
        render(&code, 120, &theme);
        println!(
            "50 lines of {lang}: first {first:?}, again {:?}, RSS now +{} KB",
            started.elapsed(),
            rss_kb() - before
        );
    }
}
