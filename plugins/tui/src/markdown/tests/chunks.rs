//! Where the scanner cuts a text into chunks.

use crate::markdown::scan::{Kind, Scanner};

/// The chunks of `text` as `kind:text` (`+` marks a joined chunk); the open
/// chunk last.
fn chunks(text: &str) -> Vec<String> {
    let mut scanner = Scanner::default();
    scanner.advance(text);
    let open = scanner.open(text.len());
    scanner
        .closed()
        .iter()
        .chain([&open])
        .map(|chunk| {
            let kind = match chunk.kind {
                Kind::Markdown => "md",
                Kind::Code(_) => "code",
                Kind::Html(_) => "html",
                Kind::Table => "table",
            };
            let join = if chunk.joined { "+" } else { "" };
            format!("{join}{kind}:{}", &text[chunk.start..chunk.end])
        })
        .collect()
}

#[test]
fn blocks_after_a_blank_line_at_the_margin_start_chunks() {
    assert_eq!(chunks("a\nb\n\nc\n"), ["md:a\nb\n\n", "md:c\n"]);
    assert_eq!(
        chunks("- a\n\n  b\n- c\n\nd\n"),
        ["md:- a\n\n  b\n- c\n\n", "md:d\n"]
    );
}

#[test]
fn headings_fences_and_rules_cut_without_a_blank_line() {
    assert_eq!(chunks("p\n# H\nq\n"), ["md:p\n", "md:# H\n", "md:q\n"]);
    assert_eq!(
        chunks("p\n```rs\nx\n\ny\n```\nq"),
        ["md:p\n", "code:```rs\nx\n\ny\n```\n", "md:q"]
    );
    assert_eq!(chunks("p\n***\nq\n"), ["md:p\n", "md:***\n", "md:q\n"]);
}

#[test]
fn fences_inside_lists_are_not_cut() {
    assert_eq!(
        chunks("- a\n  ```\n  x\n\ny\n  ```\n"),
        ["md:- a\n  ```\n  x\n\ny\n  ```\n"]
    );
}

#[test]
fn html_blocks_are_chunks_of_their_own() {
    assert_eq!(chunks("<div>\nx\n\ny\n"), ["html:<div>\nx\n", "md:y\n"]);
    assert_eq!(chunks("<!--\n\n-->\nz\n"), ["html:<!--\n\n-->\n", "md:z\n"]);
}

#[test]
fn tables_run_from_their_header_to_a_line_without_a_pipe() {
    assert_eq!(
        chunks("intro\n| a |\n|---|\n| 1 |\nafter\n"),
        ["md:intro\n", "table:| a |\n|---|\n| 1 |\n", "md:after\n"]
    );
    assert_eq!(chunks("| a | b |\n|---|\n"), ["md:| a | b |\n|---|\n"]);
}

#[test]
fn a_line_starts_being_judged_only_when_complete_or_long() {
    assert_eq!(chunks("p\n\n```"), ["md:p\n\n```"]);
    assert_eq!(chunks("p\n\n```\n"), ["md:p\n\n", "code:```\n"]);
}

#[test]
fn long_chunks_are_cut_and_joined() {
    let item = "- item text\n";
    let text = item.repeat(400);
    let cut = chunks(&text);
    assert!(cut.len() > 1 && cut[1].starts_with("+md:- item"), "{cut:?}");
    let line = "word ".repeat(8000);
    let cut = chunks(&line);
    assert_eq!(cut.len(), 3);
    assert!(cut.iter().skip(1).all(|c| c.starts_with("+md:word")));
}
