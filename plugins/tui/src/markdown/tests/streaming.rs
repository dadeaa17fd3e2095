//! The key invariant: however the text arrives, the lines are those of
//! drawing the text so far in one go.

use super::corpus::{Rng, SHORT, typical};
use super::*;
use crate::markdown::{Markdown, render};

/// Streams `text` in random pieces, checking the lines against a one-shot
/// drawing every `every` pieces (0: only at the end).
pub(super) fn stream_matches(text: &str, width: u16, seed: u64, max_piece: usize, every: usize) {
    let theme = colored();
    let mut rng = Rng::new(seed);
    let mut md = Markdown::new();
    let mut at = 0;
    let mut pieces = 0;
    while at < text.len() {
        let mut end = (at + 1 + rng.below(max_piece)).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        md.push_str(&text[at..end]);
        at = end;
        pieces += 1;
        if rng.below(3) > 0 {
            let _ = md.lines(width, &theme);
        }
        if every > 0 && pieces % every == 0 {
            let streamed = md.lines(width, &theme).to_vec();
            let whole = render(&text[..at], width, &theme);
            assert_eq!(
                streamed,
                whole,
                "after {at} bytes (seed {seed}, width {width}):\n{:?}",
                &text[..at]
            );
        }
    }
    let streamed = md.lines(width, &theme).to_vec();
    assert_eq!(
        streamed,
        render(text, width, &theme),
        "at the end (seed {seed}, width {width})"
    );
}

#[test]
fn short_texts_stream_like_one_shot_at_every_step() {
    for (i, text) in SHORT.iter().enumerate() {
        for seed in 0..4 {
            let width = [80, 40, 23, 7][seed as usize];
            stream_matches(text, width, seed + 10 * i as u64, 1 + seed as usize * 3, 1);
        }
    }
}

#[test]
fn all_short_texts_together_stream_like_one_shot() {
    let text = SHORT.concat();
    for seed in 0..3 {
        stream_matches(&text, 60, seed, 12, 5);
    }
}

#[test]
fn a_long_typical_answer_streams_like_one_shot() {
    let text = typical(60);
    stream_matches(&text, 100, 1, 40, 97);
    stream_matches(&text, 33, 2, 300, 0);
}

#[test]
fn chunks_cut_to_bound_work_stream_like_one_shot() {
    let mut text = String::new();
    for i in 0..900 {
        text.push_str(&format!("- item {i} with some words\n  continued\n"));
    }
    text.push_str(&"word ".repeat(9000));
    text.push('\n');
    text.push_str(&"x".repeat(40_000));
    text.push_str("\n\n");
    for i in 0..700 {
        text.push_str(&format!("> quote line {i} of a long quote\n"));
    }
    stream_matches(&text, 50, 3, 500, 0);
    stream_matches(&text, 50, 4, 3000, 0);
}

#[test]
fn width_changes_redraw_like_one_shot() {
    let theme = colored();
    let text = typical(3);
    let mut md = Markdown::from_text(&text[..text.len() / 2]);
    let _ = md.lines(80, &theme);
    md.push_str(&text[text.len() / 2..]);
    for width in [30, 120, 1, 80] {
        assert_eq!(
            md.lines(width, &theme).to_vec(),
            render(&text, width, &theme)
        );
    }
}

#[test]
fn truncation_keeps_the_drawing_right() {
    let theme = colored();
    let text = SHORT.concat();
    let mut rng = Rng::new(7);
    let mut md = Markdown::from_text(&text);
    for _ in 0..40 {
        let _ = md.lines(50, &theme);
        let cut = rng.below(md.text().len() + 1);
        md.truncate(cut);
        let mut kept = cut.min(text.len());
        while !text.is_char_boundary(kept) {
            kept -= 1;
        }
        assert_eq!(md.text(), &text[..kept]);
        assert_eq!(md.lines(50, &theme).to_vec(), render(md.text(), 50, &theme));
        let grow = (kept + rng.below(400)).min(text.len());
        let mut grow_to = grow;
        while !text.is_char_boundary(grow_to) {
            grow_to += 1;
        }
        md.push_str(&text[kept..grow_to]);
        assert_eq!(md.lines(50, &theme).to_vec(), render(md.text(), 50, &theme));
    }
}

#[test]
fn truncate_inside_a_character_rounds_down() {
    let mut md = Markdown::from_text("aé");
    md.truncate(2);
    assert_eq!(md.text(), "a");
}

#[test]
fn markdown_can_move_to_another_thread() {
    fn send<T: Send>(_: &T) {}
    let mut md =
        Markdown::from_text("```rust\nfn main() {}\n```\n- a\n  ```python\n  x = 1\n  ```");
    let _ = md.lines(40, &colored());
    send(&md);
    let lines = std::thread::spawn(move || md.lines(40, &colored()).len())
        .join()
        .unwrap();
    assert_eq!(lines, 4);
}
