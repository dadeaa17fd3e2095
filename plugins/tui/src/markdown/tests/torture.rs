//! Pathological inputs: drawn without panicking, in bounded time, every
//! line within the width, with the line counts one would expect.

use super::corpus::SHORT;
use super::streaming::stream_matches;
use super::*;
use crate::markdown::render;

fn draw(text: &str, width: u16) -> Vec<Line<'static>> {
    let lines = render(text, width, &colored());
    assert_fits(&lines, width);
    lines
}

/// Streams `text` in pieces of up to `piece` bytes and checks the end
/// result against the one-shot drawing.
fn streams_like_one_shot(text: &str, width: u16, piece: usize) {
    stream_matches(text, width, piece as u64, piece, 0);
}

fn count_containing(lines: &[Line], needle: &str) -> usize {
    let text = plain(lines);
    text.lines().filter(|line| line.contains(needle)).count()
}

#[test]
fn lists_nested_a_thousand_deep() {
    let mut text = String::new();
    for depth in 0..1000 {
        text.push_str(&format!("{}- item{depth}\n", "  ".repeat(depth)));
    }
    let lines = draw(&text, 80);
    assert_eq!(lines.len(), 1000);
    assert_eq!(count_containing(&lines, "item"), 1000);
    assert!(plain(&lines).ends_with("item999"));
    streams_like_one_shot(&text, 80, 5000);
}

#[test]
fn quotes_nested_a_thousand_deep() {
    let one_line = format!("{} deepest words here", "> ".repeat(1000));
    let lines = draw(&one_line, 80);
    assert_eq!(
        plain(&lines),
        format!(
            "{}deepest words here",
            "│ ".repeat(30).trim_end_matches(' ').to_owned() + " "
        )
    );
    let mut text = String::new();
    for depth in 1..=1000 {
        text.push_str(&format!("{} level {depth}\n", ">".repeat(depth)));
    }
    let lines = draw(&text, 40);
    assert!(
        lines.len() >= 1000 && lines.len() < 4000,
        "{} lines",
        lines.len()
    );
    assert!(plain(&lines).contains("level 1000"));
}

#[test]
fn a_table_of_twenty_thousand_rows() {
    let mut text = String::from("| n | square | word |\n|---:|---:|---|\n");
    for n in 0..20_000u64 {
        text.push_str(&format!("| {n:05} | {:09} | w{n:05} |\n", n * n));
    }
    let lines = draw(&text, 60);
    assert_eq!(lines.len(), 20_000 + 4);
    assert_eq!(count_containing(&lines, "│ 19999 │"), 1);
    streams_like_one_shot(&text, 60, 20_000);
    // Widths come from the first rows: a wider cell further down wraps.
    text.push_str("| 20000 | 400000000 | a much wider word cell than any |\n");
    let lines = draw(&text, 60);
    assert_eq!(
        plain(&lines[lines.len() - 7..lines.len() - 4]),
        "│ 20000 │ 400000000 │ a much │\n│       │           │ wider  │\n│       │           │ word   │"
    );
}

#[test]
fn a_one_megabyte_line() {
    let text = "lorem ipsum dolor sit amet ".repeat(40_000);
    let lines = draw(&text, 100);
    let words: usize = plain(&lines).split_whitespace().count();
    assert_eq!(words, 200_000);
    assert!(
        lines.len() > 10_000 && lines.len() < 12_000,
        "{} lines",
        lines.len()
    );
    streams_like_one_shot(&text, 100, 100_000);
}

#[test]
fn a_one_megabyte_line_without_spaces() {
    let text = "x".repeat(1 << 20);
    let lines = draw(&text, 128);
    assert_eq!(lines.len(), 8192);
    streams_like_one_shot(&text, 128, 100_000);
}

#[test]
fn an_unclosed_fence_of_fifty_thousand_lines() {
    let mut text = String::from("```python\n");
    for n in 0..50_000 {
        text.push_str(&format!("x{n} = {n}\n"));
    }
    let lines = draw(&text, 80);
    assert_eq!(lines.len(), 50_000);
    assert_eq!(plain(&lines[49_999..]), "  x49999 = 49999");
    streams_like_one_shot(&text, 80, 50_000);
}

#[test]
fn fifty_thousand_emphasis_markers() {
    let text = "*a **b ".repeat(50_000 / 3);
    let lines = draw(&text, 80);
    assert!(
        !lines.is_empty() && lines.len() < 3000,
        "{} lines",
        lines.len()
    );
    let text = "*".repeat(50_000);
    let lines = draw(&text, 80);
    assert!(lines.len() <= 50_000 / 80 + 2, "{} lines", lines.len());
}

#[test]
fn ten_thousand_code_spans() {
    let text = "`span` and ".repeat(10_000);
    let lines = draw(&text, 80);
    assert_eq!(count_containing(&lines, "span"), lines.len());
    assert_eq!(plain(&lines).matches("span").count(), 10_000);
}

#[test]
fn a_hundred_kilobytes_of_emoji_and_combining_characters() {
    let mixed = "👩‍👩‍👧 e\u{301}\u{302} 日本語 🇫🇷🇩🇪 ".repeat(3_000);
    for width in [1, 2, 3, 80] {
        draw(&mixed, width);
    }
    let no_space = "👍🏽🇫🇷e\u{301}".repeat(6_000);
    let lines = draw(&no_space, 80);
    assert!(lines.len() > 100, "{} lines", lines.len());
    let one_grapheme = format!("e{}", "\u{301}".repeat(50_000));
    draw(&one_grapheme, 80);
    streams_like_one_shot(&mixed, 41, 3_000);
}

#[test]
fn ten_thousand_headings() {
    let text: String = (0..10_000).map(|n| format!("## Heading {n}\n")).collect();
    let lines = draw(&text, 80);
    assert_eq!(lines.len(), 2 * 10_000 - 1);
    assert_eq!(count_containing(&lines, "Heading"), 10_000);
}

#[test]
fn five_thousand_code_blocks() {
    let text: String = (0..5_000)
        .map(|n| match n % 10 {
            0 => format!("```rust\nlet n = {n};\n```\n"),
            _ => format!("```\nblock {n}\n```\n"),
        })
        .collect();
    let lines = draw(&text, 80);
    assert_eq!(lines.len(), 2 * 5_000 - 1);
}

#[test]
fn a_one_megabyte_line_in_a_python_fence() {
    let text = format!(
        "```python\n{}\n```\nafter\n",
        "value = compute(1, 2); ".repeat(45_000)
    );
    let lines = draw(&text, 100);
    let rows = (45_000 * 23usize).div_ceil(98);
    assert_eq!(lines.len(), rows + 2);
    assert_eq!(plain(&lines[lines.len() - 1..]), "after");
    streams_like_one_shot(&text, 100, 70_000);
}

#[test]
fn a_hundred_kilobyte_html_block() {
    let mut text = String::from("<div>\n");
    for n in 0..8_000 {
        text.push_str(&format!("<p>paragraph {n}</p>\n"));
    }
    text.push_str("</div>\n\nafter\n");
    let lines = draw(&text, 80);
    assert_eq!(lines.len(), 8_002 + 2);
    assert_eq!(plain(&lines[1..2]), "<p>paragraph 0</p>");
    let one_line = format!("<!-- {} -->\n", "comment ".repeat(13_000));
    let lines = draw(&one_line, 80);
    assert_eq!(lines.len(), (one_line.len() - 1).div_ceil(80));
}

#[test]
fn narrow_widths_fit_everything() {
    let text = SHORT.concat();
    for width in [1, 2, 3, 5] {
        let lines = draw(&text, width);
        assert!(lines.len() > 50, "width {width}: {} lines", lines.len());
    }
    assert!(draw(&text, 0).is_empty());
}
