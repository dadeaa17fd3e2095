//! Each construct drawn, as text and with its styles marked.

use super::*;
use crate::markdown::{highlight, render};

fn draw(text: &str, width: u16) -> String {
    let lines = render(text, width, &colored());
    assert_fits(&lines, width);
    plain(&lines)
}

fn draw_marked(text: &str, width: u16) -> String {
    marked(&render(text, width, &colored()))
}

#[test]
fn headings_take_their_level_style_without_hashes() {
    assert_eq!(
        draw_marked("# One\n## Two\n###### Six", 40),
        "«magentabu:One»\n\n«magentab:Two»\n\n«bi:Six»"
    );
}

#[test]
fn paragraphs_wrap_at_words_and_join_soft_breaks() {
    let text = "The quick brown fox\njumps over the lazy dog and keeps running.";
    assert_eq!(
        draw(text, 20),
        "The quick brown fox\njumps over the lazy\ndog and keeps\nrunning."
    );
}

#[test]
fn a_word_longer_than_the_row_is_cut_between_graphemes() {
    assert_eq!(
        draw("ab https://example.com/a/long/path", 12),
        "ab https://e\nxample.com/a\n/long/path"
    );
}

#[test]
fn hard_breaks_end_the_line() {
    assert_eq!(draw("one  \ntwo\\\nthree", 40), "one\ntwo\nthree");
}

#[test]
fn inline_styles_nest() {
    let text = "*it **both*** ~~gone~~ `code` **`bold code`**";
    assert_eq!(
        draw_marked(text, 60),
        "«i:it »«bi:both» «s:gone» «yellow:code» «yellowb:bold code»"
    );
}

#[test]
fn links_show_their_url_dimmed_when_it_differs_from_the_text() {
    let text = "[docs](https://d.io) <https://a.io> <me@x.org> [](https://e.io) ![logo](l.png)";
    assert_eq!(
        draw_marked(text, 80),
        "«blueu:docs»«d: (https://d.io)» «blueu:https://a.io» «blueu:me@x.org» «blueu:https://e.io» «blueu:logo»«d: (l.png)»"
    );
}

#[test]
fn bullet_lists_nest_with_their_own_markers_and_hang_wrapped_text() {
    let text = "- one two three four five six\n  - nested\n    - deeper\n- last";
    assert_eq!(
        draw(text, 18),
        "• one two three\n  four five six\n  ◦ nested\n    ▪ deeper\n• last"
    );
    assert_eq!(draw_marked("- a", 10), "«cyan:• »a");
}

#[test]
fn ordered_lists_count_from_their_start() {
    assert_eq!(
        draw("7. seven\n8. eight\n9. nine\n10. ten more", 20),
        "7. seven\n8. eight\n9. nine\n10. ten more"
    );
}

#[test]
fn loose_lists_keep_blank_lines_between_items() {
    assert_eq!(draw("- a\n\n  more a\n- b", 20), "• a\n\n  more a\n\n• b");
}

#[test]
fn task_lists_show_boxes() {
    assert_eq!(
        draw("- [ ] todo\n- [x] done\n1. [x] first", 20),
        "☐ todo\n☑ done\n\n1. ☑ first"
    );
}

#[test]
fn quotes_nest_with_bars_kept_on_blank_lines() {
    let text = "> outer text\n>\n> > inner\n>\n> back";
    assert_eq!(draw(text, 30), "│ outer text\n│\n│ │ inner\n│\n│ back");
    assert_eq!(draw_marked("> q", 10), "«green:│ »«green:q»");
}

#[test]
fn fenced_code_is_indented_highlighted_and_cut_by_character() {
    let text = "```rust\nlet x = 10; // a comment that is long\n```";
    assert_eq!(
        draw(text, 24),
        "  let x = 10; // a comme\n  nt that is long"
    );
    let marked = draw_marked("```rust\nlet x = \"s\";\n```", 40);
    assert_eq!(
        marked,
        "  «magenta:let» x = «yellow:10»;"
            .replace("10", "\"s\"")
            .replace("«yellow:\"s\"»", "«green:\"s\"»")
    );
}

#[test]
fn code_in_an_unknown_language_or_without_colours_is_plain() {
    assert_eq!(
        draw_marked("```nosuchlang\nlet x = 1;\n```", 40),
        "  let x = 1;"
    );
    let plain_theme = crate::theme::Theme::plain();
    let lines = render("```rust\nlet x = 1;\n```", 40, &plain_theme);
    assert_eq!(marked(&lines), "  let x = 1;");
}

#[test]
fn tabs_in_code_are_four_spaces_and_control_characters_are_replaced() {
    assert_eq!(draw("```\n\tx\u{1b}[31m\n```", 40), "      x\u{FFFD}[31m");
    assert_eq!(draw("a\u{7}b", 40), "a\u{FFFD}b");
}

#[test]
fn indented_code_is_drawn_like_fenced_code() {
    assert_eq!(draw("text\n\n    code line\n", 30), "text\n\n  code line");
}

#[test]
fn code_inside_a_list_item_is_indented_under_it() {
    assert_eq!(
        draw("1. run:\n   ```sh\n   make\n   ```", 30),
        "1. run:\n     make"
    );
}

#[test]
fn tables_are_box_drawn_with_aligned_columns() {
    let text = "| L | R | C |\n|:--|--:|:-:|\n| a | 1 | x |\n| bb | 22 | yyy |";
    assert_eq!(
        draw(text, 40),
        "┌────┬────┬─────┐\n│ L  │  R │  C  │\n├────┼────┼─────┤\n│ a  │  1 │  x  │\n│ bb │ 22 │ yyy │\n└────┴────┴─────┘"
    );
    assert_eq!(
        draw_marked("| H |\n|---|\n| c |", 20).lines().nth(1),
        Some("«d:│» «b:H» «d:│»")
    );
}

#[test]
fn table_columns_shrink_to_the_width_and_cells_wrap() {
    let text = "| key | description |\n|---|---|\n| a | a long description of it |";
    assert_eq!(
        draw(text, 24),
        "┌─────┬────────────────┐\n│ key │ description    │\n├─────┼────────────────┤\n│ a   │ a long         │\n│     │ description of │\n│     │ it             │\n└─────┴────────────────┘"
    );
}

#[test]
fn a_table_too_wide_for_columns_is_drawn_as_rows_of_text() {
    let text = "| a | b | c |\n|---|---|---|\n| 1 | 2 | 3 |";
    assert_eq!(draw(text, 6), "a │ b\n│ c\n1 │ 2\n│ 3");
}

#[test]
fn rules_span_the_width() {
    assert_eq!(draw_marked("a\n\n---\n\nb", 5), "a\n\n«d:─────»\n\nb");
}

#[test]
fn html_is_shown_as_text_and_br_breaks_lines() {
    assert_eq!(
        draw("<div>\n  <b>x</b>\n</div>\n\nA<br>B <i>c</i>", 30),
        "<div>\n  <b>x</b>\n</div>\n\nA\nB <i>c</i>"
    );
}

#[test]
fn nesting_keeps_at_least_twenty_columns_for_content() {
    let text = format!("{} deep text that wraps at twenty", ">".repeat(40));
    let lines = render(&text, 30, &colored());
    assert_fits(&lines, 30);
    assert_eq!(
        plain(&lines),
        "│ │ │ │ │ deep text that wraps\n│ │ │ │ │ at twenty"
    );
}

#[test]
fn wide_characters_never_overflow_and_are_not_split() {
    assert_eq!(draw("日本語", 4), "日本\n語");
    assert_eq!(draw("日本", 1), "…\n…");
    assert_eq!(
        draw("e\u{301}e\u{301}e\u{301}", 2),
        "e\u{301}e\u{301}\ne\u{301}"
    );
}

#[test]
fn widths_zero_one_and_two_are_handled() {
    let theme = colored();
    assert!(render("# hello\n\n- a\n\n```\ncode\n```", 0, &theme).is_empty());
    assert_eq!(draw("- ab\n\n> cd", 1), "a\nb\n\nc\nd");
    assert_eq!(
        draw("- abcdef\n\n> ghijkl", 6),
        "• abcd\n  ef\n\n│ ghij\n│ kl"
    );
    assert_eq!(
        draw("| a | b |\n|---|---|\n| 1 | 2 |", 2),
        "a\n│\nb\n1\n│\n2"
    );
}

#[test]
fn highlight_colours_lines_without_wrapping() {
    let theme = colored();
    let lines = highlight("fn main() {}\n// done", "rs", &theme);
    assert_eq!(
        marked(&lines),
        "«magenta:fn» «blue:main»() {}\n«darkgray:// done»"
    );
    assert_eq!(
        marked(&highlight("fn main() {}", "nosuch", &theme)),
        "fn main() {}"
    );
    let plain_theme = crate::theme::Theme::plain();
    assert_eq!(
        marked(&highlight("fn main() {}", "rust", &plain_theme)),
        "fn main() {}"
    );
}

#[test]
fn markers_and_borders_are_one_column_wide() {
    use unicode_width::UnicodeWidthStr;
    for mark in ["•", "◦", "▪", "☐", "☑", "│", "─", "┌", "┼", "…", "\u{FFFD}"] {
        assert_eq!(mark.width(), 1, "{mark}");
    }
}
