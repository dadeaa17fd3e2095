//! Behaviour of the composer: every editing action, pastes, history and
//! what the box draws.

#![allow(clippy::unwrap_used)]

use ratatui::buffer::{Buffer, CellWidth};
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};

use super::{Composer, EditAction::*};
use crate::theme::Theme;

const PLACEHOLDER: &str = "Ask uji anything";

/// A composer holding `text` with the cursor where `|` is.
fn composer(marked: &str) -> Composer {
    let mut composer = Composer::new();
    let at = marked.find('|').unwrap_or(marked.len());
    composer.set_text(&marked.replacen('|', "", 1));
    composer.cursor = at;
    composer
}

/// The draft with `|` at the cursor.
fn marked(composer: &Composer) -> String {
    let mut text = composer.text().to_owned();
    text.insert(composer.cursor(), '|');
    text
}

fn after(start: &str, actions: &[super::EditAction]) -> String {
    let mut composer = composer(start);
    for action in actions {
        composer.apply(*action);
    }
    marked(&composer)
}

/// The rows of a buffer as text, the cells hidden by wide glyphs left out.
fn screen(buf: &Buffer) -> Vec<String> {
    let area = buf.area;
    (area.top()..area.bottom())
        .map(|y| {
            let mut row = String::new();
            let mut x = area.left();
            while x < area.right() {
                let symbol = buf[(x, y)].symbol();
                row.push_str(symbol);
                x += symbol.cell_width().max(1);
            }
            row.trim_end().to_owned()
        })
        .collect()
}

/// Whether the cell at `at` has the colour and modifiers of `style`.
fn drawn_with(buf: &Buffer, at: (u16, u16), style: Style) -> bool {
    let cell = &buf[at];
    cell.fg == style.fg.unwrap_or(Color::Reset) && cell.modifier == style.add_modifier
}

/// Draws the composer into a `width`×`height` buffer.
fn draw(composer: &Composer, width: u16, height: u16) -> (Vec<String>, Option<(u16, u16)>) {
    let area = Rect::new(0, 0, width, height);
    let mut buf = Buffer::empty(area);
    let cursor = composer.render(area, &mut buf, &Theme::plain(), PLACEHOLDER);
    (screen(&buf), cursor)
}

#[test]
fn typing_inserts_at_the_cursor() {
    let mut c = composer("ac|");
    c.apply(CursorLeft);
    c.insert_char('b');
    c.insert_char('\r');
    c.insert_str("x\r\ny");
    assert_eq!(marked(&c), "ab\nx\ny|c");
    assert!(!c.is_empty());
}

#[test]
fn left_and_right_step_over_whole_graphemes() {
    // e + combining acute, a wide CJK char, a family emoji (ZWJ sequence).
    let text = "e\u{301}日👨\u{200d}👩\u{200d}👧";
    let mut c = composer(&format!("|{text}"));
    let mut stops = vec![c.cursor()];
    for _ in 0..4 {
        c.apply(CursorRight);
        stops.push(c.cursor());
    }
    assert_eq!(stops, vec![0, 3, 6, text.len(), text.len()]);
    for _ in 0..4 {
        c.apply(CursorLeft);
    }
    assert_eq!(c.cursor(), 0);
}

#[test]
fn every_action_on_an_empty_box_is_harmless() {
    for (_, action) in super::EditAction::ALL {
        let mut c = Composer::new();
        c.apply(action);
        let expected = if action == InsertNewline { "\n|" } else { "|" };
        assert_eq!(marked(&c), expected, "{action:?}");
    }
}

#[test]
fn start_and_end_go_to_the_line_then_the_whole_text() {
    assert_eq!(after("ab\nc|d\nef", &[CursorStart]), "ab\n|cd\nef");
    assert_eq!(
        after("ab\nc|d\nef", &[CursorStart, CursorStart]),
        "|ab\ncd\nef"
    );
    assert_eq!(after("ab\nc|d\nef", &[CursorEnd]), "ab\ncd|\nef");
    assert_eq!(after("ab\nc|d\nef", &[CursorEnd, CursorEnd]), "ab\ncd\nef|");
}

#[test]
fn words_are_separated_by_whitespace_and_punctuation() {
    assert_eq!(after("foo.bar  baz|", &[WordLeft]), "foo.bar  |baz");
    assert_eq!(
        after("foo.bar  baz|", &[WordLeft, WordLeft]),
        "foo.|bar  baz"
    );
    assert_eq!(
        after("foo.bar  |baz", &[WordLeft, WordLeft]),
        "|foo.bar  baz"
    );
    assert_eq!(after("|foo.bar  baz", &[WordRight]), "foo|.bar  baz");
    assert_eq!(after("foo|.bar  baz", &[WordRight]), "foo.bar|  baz");
    assert_eq!(after("über| straße", &[WordRight]), "über straße|");
    assert_eq!(after("a\n\n|b", &[WordLeft]), "|a\n\nb");
}

#[test]
fn backspace_and_delete_remove_graphemes_and_newlines() {
    assert_eq!(after("ae\u{301}|x", &[Backspace]), "a|x");
    assert_eq!(after("a|日x", &[DeleteForward]), "a|x");
    assert_eq!(after("a\n|b", &[Backspace]), "a|b");
    assert_eq!(after("a|\nb", &[DeleteForward]), "a|b");
    assert_eq!(after("|ab", &[Backspace]), "|ab");
    assert_eq!(after("ab|", &[DeleteForward]), "ab|");
}

#[test]
fn word_kills_feed_the_kill_buffer() {
    assert_eq!(after("say hello|", &[DeleteWordBack]), "say |");
    assert_eq!(
        after("say hello|", &[DeleteWordBack, CursorStart, Yank]),
        "hello|say "
    );
    assert_eq!(after("say| hello, you", &[DeleteWordForward]), "say|, you");
    assert_eq!(
        after("say| hello, you", &[DeleteWordForward, CursorEnd, Yank]),
        "say, you hello|"
    );
}

#[test]
fn line_kills_stop_at_the_line_and_join_at_its_edge() {
    assert_eq!(after("ab\ncd|ef", &[DeleteToStart]), "ab\n|ef");
    assert_eq!(after("ab\ncd|ef", &[DeleteToStart, DeleteToStart]), "ab|ef");
    assert_eq!(after("ab|cd\nef", &[DeleteToEnd]), "ab|\nef");
    assert_eq!(after("ab|cd\nef", &[DeleteToEnd, DeleteToEnd]), "ab|ef");
    assert_eq!(after("|ab", &[DeleteToStart]), "|ab");
    assert_eq!(after("ab|", &[DeleteToEnd]), "ab|");
    assert_eq!(
        after("ab|cd", &[DeleteToEnd, CursorStart, Yank, Yank]),
        "cdcd|ab"
    );
}

#[test]
fn yank_with_nothing_killed_inserts_nothing() {
    assert_eq!(after("ab|", &[Yank]), "ab|");
}

#[test]
fn transpose_swaps_around_the_cursor_like_readline() {
    assert_eq!(after("ab|cd", &[Transpose]), "acb|d");
    assert_eq!(after("abc|", &[Transpose]), "acb|");
    assert_eq!(after("ab|\ncd", &[Transpose]), "ba|\ncd");
    assert_eq!(after("|ab", &[Transpose]), "|ab");
    assert_eq!(after("a\n|b", &[Transpose]), "a\n|b");
    assert_eq!(after("x日|e\u{301}", &[Transpose]), "xe\u{301}日|");
    assert_eq!(after("a|", &[Transpose]), "a|");
}

#[test]
fn newline_and_clear() {
    assert_eq!(after("ab|cd", &[InsertNewline]), "ab\n|cd");
    assert_eq!(after("ab|cd", &[Clear]), "|");
}

#[test]
fn history_walks_newest_first_and_restores_the_draft() {
    let mut c = Composer::new();
    c.set_history(vec!["first".into(), "second".into()]);
    c.insert_str("draft");
    c.apply(HistoryPrev);
    assert_eq!(marked(&c), "second|");
    c.apply(HistoryPrev);
    assert_eq!(marked(&c), "first|");
    c.apply(HistoryPrev);
    assert_eq!(marked(&c), "first|");
    c.apply(HistoryNext);
    assert_eq!(marked(&c), "second|");
    c.apply(HistoryNext);
    assert_eq!(marked(&c), "draft|");
    c.apply(HistoryNext);
    assert_eq!(marked(&c), "draft|");
}

#[test]
fn submitting_records_history_without_consecutive_repeats() {
    let mut c = Composer::new();
    for sent in ["one", "two", "two"] {
        c.insert_str(sent);
        assert_eq!(c.submit().as_deref(), Some(sent));
        assert!(c.is_empty());
    }
    c.apply(HistoryPrev);
    c.apply(HistoryPrev);
    assert_eq!(c.text(), "one");
}

#[test]
fn blank_drafts_are_not_sent() {
    let mut c = composer(" \n\t|");
    assert_eq!(c.submit(), None);
    assert_eq!(marked(&c), " \n\t|");
    c.apply(HistoryPrev);
    assert_eq!(c.text(), " \n\t");
}

#[test]
fn up_and_down_leave_the_box_for_the_history() {
    let mut c = Composer::new();
    c.set_history(vec!["old\nentry".into()]);
    c.insert_str("new\ndraft");
    c.apply(CursorUp);
    assert_eq!(marked(&c), "new|\ndraft");
    c.apply(CursorUp);
    assert_eq!(marked(&c), "old\nentry|");
    c.apply(CursorUp);
    assert_eq!(marked(&c), "old|\nentry");
    c.apply(CursorDown);
    c.apply(CursorDown);
    assert_eq!(marked(&c), "new\ndraft|");
}

#[test]
fn up_and_down_follow_wrapped_rows_and_keep_the_column() {
    // 12 columns leave 10 for text: "hello " / "world again" wraps as
    // "hello " / "world " / "again".
    let mut c = composer("hello world again\nab\nxyz|");
    let _ = c.height(12);
    c.apply(CursorUp);
    assert_eq!(marked(&c), "hello world again\nab|\nxyz");
    c.apply(CursorUp);
    assert_eq!(marked(&c), "hello world aga|in\nab\nxyz");
    c.apply(CursorUp);
    assert_eq!(marked(&c), "hello wor|ld again\nab\nxyz");
    c.apply(CursorDown);
    c.apply(CursorDown);
    c.apply(CursorDown);
    assert_eq!(marked(&c), "hello world again\nab\nxyz|");
}

#[test]
fn moving_onto_a_wrapped_row_never_lands_on_the_next_row() {
    let mut c = composer("hello world|");
    let _ = c.height(12);
    c.apply(CursorUp);
    // "hello " ends at the wrap point; the cursor stays on its last cell.
    assert_eq!(marked(&c), "hello | world".replacen(" | ", "| ", 1));
}

#[test]
fn short_pastes_go_in_as_typed_with_line_endings_normalised() {
    let mut c = composer("a|b");
    c.paste("x\ty\r\n");
    assert_eq!(marked(&c), "ax\ty\n|b");
    c.paste(&"é".repeat(80));
    assert_eq!(c.text().chars().count(), 86);
}

#[test]
fn long_pastes_become_atomic_placeholders() {
    let mut c = composer("say |");
    c.paste("line 1\r\nline 2\rline 3");
    assert_eq!(marked(&c), "say [paste #1 +3 lines]|");
    c.apply(CursorLeft);
    assert_eq!(marked(&c), "say |[paste #1 +3 lines]");
    c.apply(CursorRight);
    c.insert_char(' ');
    c.paste(&"x".repeat(81));
    assert_eq!(c.text(), "say [paste #1 +3 lines] [paste #2 81 chars]");
    c.apply(WordLeft);
    assert_eq!(marked(&c), "say [paste #1 +3 lines] |[paste #2 81 chars]");
    c.apply(CursorLeft);
    c.apply(Backspace);
    assert_eq!(marked(&c), "say | [paste #2 81 chars]");
    c.apply(CursorRight);
    c.apply(DeleteForward);
    assert_eq!(marked(&c), "say  |");
}

#[test]
fn placeholders_expand_on_submit_and_survive_kill_and_yank() {
    let mut c = Composer::new();
    c.paste("a\nb");
    c.insert_str(" tail");
    c.apply(CursorStart);
    c.apply(DeleteToEnd);
    assert_eq!(c.text(), "");
    c.apply(Yank);
    c.apply(Yank);
    assert_eq!(c.submit().as_deref(), Some("a\nb taila\nb tail"));
    // The raw draft is in the history and still expands when sent again.
    c.apply(HistoryPrev);
    assert_eq!(c.text(), "[paste #1 +2 lines] tail[paste #1 +2 lines] tail");
    assert_eq!(c.submit().as_deref(), Some("a\nb taila\nb tail"));
}

#[test]
fn vertical_moves_never_stop_inside_a_placeholder() {
    let mut c = Composer::new();
    c.insert_str("abcdefgh\n");
    c.paste("1\n2");
    c.apply(CursorUp);
    c.apply(CursorEnd);
    c.apply(CursorDown);
    assert_eq!(marked(&c), "abcdefgh\n[paste #1 +2 lines]|");
}

#[test]
fn a_huge_paste_is_one_placeholder_and_one_copy() {
    let big = "0123456789abcdef\r\n".repeat(300_000);
    let mut c = Composer::new();
    c.paste(&big);
    assert_eq!(c.text(), "[paste #1 +300000 lines]");
    let sent = c.submit().unwrap_or_default();
    assert_eq!(sent.len(), 17 * 300_000);
    assert!(sent.starts_with("0123456789abcdef\n0123"));
}

#[test]
fn set_text_replaces_the_draft_with_the_cursor_at_the_end() {
    let mut c = composer("/mo|");
    c.set_text("/models ");
    assert_eq!(marked(&c), "/models |");
}

#[test]
fn an_empty_box_shows_the_prompt_and_the_dim_placeholder() {
    let c = Composer::new();
    let (rows, cursor) = draw(&c, 30, 2);
    assert_eq!(rows, vec!["› Ask uji anything", ""]);
    assert_eq!(cursor, Some((2, 0)));
    let area = Rect::new(0, 0, 30, 1);
    let mut buf = Buffer::empty(area);
    let _ = c.render(area, &mut buf, &Theme::colored(), PLACEHOLDER);
    assert!(drawn_with(&buf, (2, 0), Theme::colored().dim));
    assert!(drawn_with(&buf, (0, 0), Theme::colored().accent));
    assert_eq!(c.height(30), 1);
}

#[test]
fn text_wraps_at_words_under_the_prompt() {
    let c = composer("hello world again|");
    assert_eq!(c.height(12), 3);
    let (rows, cursor) = draw(&c, 12, 3);
    assert_eq!(rows, vec!["› hello", "  world", "  again"]);
    assert_eq!(cursor, Some((7, 2)));
}

#[test]
fn a_full_row_puts_the_cursor_on_a_row_of_its_own() {
    let c = composer("abcde|");
    assert_eq!(c.height(7), 2);
    let (rows, cursor) = draw(&c, 7, 2);
    assert_eq!(rows, vec!["› abcde", ""]);
    assert_eq!(cursor, Some((2, 1)));
}

#[test]
fn wide_characters_are_never_split() {
    let c = composer("ab日本語|");
    let (rows, cursor) = draw(&c, 7, 2);
    assert_eq!(rows, vec!["› ab日", "  本語"]);
    assert_eq!(cursor, Some((6, 1)));
}

#[test]
fn tabs_controls_and_lone_marks_are_drawn_safely() {
    let c = composer("\u{301}a\tb\u{1b}|");
    let (rows, cursor) = draw(&c, 20, 1);
    assert_eq!(rows, vec!["› \u{25CC}\u{301}a    b\u{FFFD}"]);
    assert_eq!(cursor, Some((10, 0)));
}

#[test]
fn the_box_grows_to_ten_rows_and_then_scrolls_with_the_cursor() {
    let text: Vec<String> = (0..15).map(|i| format!("l{i}")).collect();
    let mut c = composer(&text.join("\n"));
    c.cursor = c.text().len();
    assert_eq!(c.height(20), 10);
    let (rows, cursor) = draw(&c, 20, 10);
    assert_eq!(rows.first().map(String::as_str), Some("  l5"));
    assert_eq!(rows.last().map(String::as_str), Some("  l14"));
    assert_eq!(cursor, Some((5, 9)));
    for _ in 0..9 {
        c.apply(CursorUp);
    }
    let (rows, cursor) = draw(&c, 20, 10);
    assert_eq!(rows.first().map(String::as_str), Some("  l5"));
    assert_eq!(cursor, Some((4, 0)));
    c.apply(CursorUp);
    c.apply(CursorUp);
    let (rows, cursor) = draw(&c, 20, 10);
    assert_eq!(rows.first().map(String::as_str), Some("  l3"));
    assert_eq!(rows.last().map(String::as_str), Some("  l12"));
    assert_eq!(cursor, Some((4, 0)));
    c.apply(CursorStart);
    c.apply(CursorStart);
    let (rows, _) = draw(&c, 20, 10);
    assert_eq!(rows.first().map(String::as_str), Some("› l0"));
}

#[test]
fn the_window_refills_from_above_when_text_below_goes() {
    let text: Vec<String> = (0..15).map(|i| format!("l{i}")).collect();
    let mut c = composer(&text.join("\n"));
    c.cursor = c.text().len();
    let _ = draw(&c, 20, 10);
    for _ in 0..5 {
        c.apply(CursorUp);
    }
    let (rows, _) = draw(&c, 20, 10);
    assert_eq!(rows.first().map(String::as_str), Some("  l5"));
    for _ in 0..10 {
        c.apply(DeleteToEnd);
    }
    assert!(c.text().ends_with("l8\nl9"), "{:?}", c.text());
    let (rows, cursor) = draw(&c, 20, 10);
    assert_eq!(rows.first().map(String::as_str), Some("› l0"));
    assert_eq!(rows.last().map(String::as_str), Some("  l9"));
    assert_eq!(cursor, Some((4, 9)));
}

#[test]
fn tiny_areas_draw_what_fits_and_never_panic() {
    let c = composer("日本|");
    assert_eq!(draw(&c, 0, 0).1, None);
    assert_eq!(draw(&c, 5, 0).1, None);
    assert_eq!(draw(&c, 1, 1), (vec!["".to_owned()], Some((0, 0))));
    let (rows, cursor) = draw(&c, 2, 3);
    assert_eq!(rows, vec!["日", "本", ""]);
    assert_eq!(cursor, Some((0, 2)));
    assert_eq!(c.height(0), 2.max(c.height(0)));
    let empty = Composer::new();
    assert_eq!(draw(&empty, 1, 1), (vec!["A".to_owned()], Some((0, 0))));
}

#[test]
fn areas_outside_the_buffer_are_clipped() {
    let c = composer("hello|");
    let mut buf = Buffer::empty(Rect::new(0, 0, 10, 2));
    let outside = Rect::new(20, 20, 10, 2);
    assert_eq!(
        c.render(outside, &mut buf, &Theme::plain(), PLACEHOLDER),
        None
    );
    let overlapping = Rect::new(5, 1, 10, 3);
    let cursor = c.render(overlapping, &mut buf, &Theme::plain(), PLACEHOLDER);
    // Clipped to 5×1: "hel" / "lo" wrap, and the cursor's row is shown.
    assert_eq!(screen(&buf), vec!["", "       lo"]);
    assert_eq!(cursor, Some((9, 1)));
}

#[test]
fn placeholders_are_drawn_in_the_accent_style() {
    let mut c = Composer::new();
    c.insert_str("x ");
    c.paste("1\n2");
    let area = Rect::new(0, 0, 40, 1);
    let mut buf = Buffer::empty(area);
    let theme = Theme::colored();
    let _ = c.render(area, &mut buf, &theme, PLACEHOLDER);
    assert_eq!(screen(&buf), vec!["› x [paste #1 +2 lines]"]);
    assert!(drawn_with(&buf, (2, 0), theme.text));
    assert!(drawn_with(&buf, (4, 0), theme.accent));
    assert!(drawn_with(&buf, (22, 0), theme.accent));
    assert!(!drawn_with(&buf, (23, 0), theme.accent));
}

#[test]
fn random_editing_keeps_the_cursor_valid_at_any_width() {
    let pieces = [
        "a",
        " ",
        "日",
        "e\u{301}",
        "\n",
        "\t",
        ".",
        "👨\u{200d}👧",
        "\u{1b}",
    ];
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move |below: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        usize::try_from(seed % below as u64).unwrap_or(0)
    };
    let mut c = Composer::new();
    c.set_history(vec!["old".into(), "older\nentry".into()]);
    for step in 0..4_000 {
        match next(4) {
            0 => c.insert_str(pieces[next(pieces.len())]),
            1 if next(20) == 0 => c.paste(&"p\n".repeat(next(3) + 1)),
            _ => c.apply(super::EditAction::ALL[next(20)].1),
        }
        let width = u16::try_from(next(14)).unwrap_or(0);
        let height = c.height(width);
        assert!((1..=10).contains(&height));
        let area = Rect::new(0, 0, width, height);
        let mut buf = Buffer::empty(area);
        let cursor = c.render(area, &mut buf, &Theme::plain(), PLACEHOLDER);
        assert!(c.text().is_char_boundary(c.cursor()), "step {step}");
        assert_eq!(
            c.pastes.token_around(c.text(), c.cursor()),
            None,
            "step {step}"
        );
        if let Some((x, y)) = cursor {
            assert!(
                x < width.max(1) && y < height,
                "step {step}: {x},{y} in {width}x{height}"
            );
        }
    }
}
