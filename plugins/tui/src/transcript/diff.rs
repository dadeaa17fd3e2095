//! A file change drawn from its unified diff: an "Added N lines, removed M
//! lines" header, then the changed lines with a line-number gutter,
//! coloured by kind, and the words that changed within a replaced line
//! marked.
//!
//! The text comes from a tool and is parsed leniently: file headers are
//! skipped, lines before any hunk header count from line 1, a line that is
//! no diff line is shown dim without a number, and `\ No newline at end of
//! file` is dropped.

use std::time::Duration;

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use similar::{ChangeTag, TextDiff};
use uji_protocol::FileDiff;

use super::tool::{clean_bounded, fit_line, plural, wrap_spans};
use crate::theme::Theme;

/// Rows drawn at most when the caller sets no limit.
const MAX_ROWS: usize = 2000;
/// Longer lines are not diffed word by word.
const MAX_WORD_DIFF_BYTES: usize = 2000;
const WORD_DIFF_TIMEOUT: Duration = Duration::from_millis(20);
/// Below this similarity a pair of lines is a rewrite: marking nearly every
/// word would only add noise.
const MIN_SIMILARITY: f32 = 0.5;

/// `diff` drawn for `width`, with at most `max_rows` rows of changed lines
/// (then a `… +N lines` row); `None` draws everything up to a safety cap.
pub fn diff_lines(
    diff: &FileDiff,
    width: u16,
    theme: &Theme,
    max_rows: Option<usize>,
) -> Vec<Line<'static>> {
    let width = usize::from(width);
    let max_rows = max_rows.unwrap_or(MAX_ROWS).min(MAX_ROWS);
    let header = Line::styled(change_summary(diff.added, diff.removed), theme.text);
    let mut out = vec![fit_line(header, width)];

    let mut parser = Parser::new(&diff.unified);
    // Each parsed row draws at least one row, so no more are needed.
    let rows: Vec<Row<'_>> = parser.by_ref().take(max_rows.saturating_add(1)).collect();
    let styled = style_rows(&rows, theme);
    let gutter = rows
        .iter()
        .filter_map(|row| match row {
            Row::Change { number, .. } => Some(number.to_string().len()),
            _ => None,
        })
        .max()
        .unwrap_or(1);

    let mut body = Vec::new();
    let mut drawn = 0;
    for (row, spans) in rows.iter().zip(styled) {
        let drawn_rows = draw_row(row, spans, gutter, width, theme);
        let room = max_rows - body.len();
        if drawn_rows.len() > room {
            if body.is_empty() {
                body.extend(drawn_rows.into_iter().take(room));
                drawn += 1;
            }
            break;
        }
        body.extend(drawn_rows);
        drawn += 1;
    }
    let hidden = rows[drawn..].iter().filter(|row| row.is_line()).count()
        + parser.filter(Row::is_line).count();
    out.extend(body);
    if hidden > 0 {
        let note = Line::styled(format!("… +{}", plural(hidden, "line")), theme.dim);
        out.push(fit_line(note, width));
    }
    out
}

/// "Added 2 lines, removed 1 line", leaving out a zero part.
pub fn change_summary(added: usize, removed: usize) -> String {
    match (added, removed) {
        (0, 0) => "No changes".to_string(),
        (a, 0) => format!("Added {}", plural(a, "line")),
        (0, r) => format!("Removed {}", plural(r, "line")),
        (a, r) => format!("Added {}, removed {}", plural(a, "line"), plural(r, "line")),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Added,
    Removed,
    Context,
}

/// One parsed line of a unified diff.
#[derive(Debug, Clone, Copy)]
enum Row<'a> {
    /// The start of a hunk after the first: lines were skipped.
    Gap,
    Change {
        kind: Kind,
        number: usize,
        text: &'a str,
    },
    /// A line that is not part of a diff.
    Other(&'a str),
}

impl Row<'_> {
    /// True for rows that stand for a line of the text (not a gap).
    fn is_line(&self) -> bool {
        !matches!(self, Row::Gap)
    }
}

struct Parser<'a> {
    lines: std::str::Lines<'a>,
    old: usize,
    new: usize,
    /// Lines the current hunk header announced and that have not come yet.
    old_left: usize,
    new_left: usize,
    hunks: usize,
}

impl<'a> Parser<'a> {
    fn new(unified: &'a str) -> Parser<'a> {
        Parser {
            lines: unified.lines(),
            old: 1,
            new: 1,
            old_left: 0,
            new_left: 0,
            hunks: 0,
        }
    }

    fn parse(&mut self, line: &'a str) -> Option<Row<'a>> {
        let in_hunk = self.old_left > 0 || self.new_left > 0;
        if (!in_hunk && is_file_header(line)) || line.starts_with('\\') {
            return None;
        }
        if let Some((old, old_len, new, new_len)) = hunk_header(line) {
            (self.old, self.old_left) = (old.max(1), old_len);
            (self.new, self.new_left) = (new.max(1), new_len);
            self.hunks += 1;
            return (self.hunks > 1).then_some(Row::Gap);
        }
        let (kind, text) = match line.as_bytes().first() {
            Some(b'+') => (Kind::Added, &line[1..]),
            Some(b'-') => (Kind::Removed, &line[1..]),
            Some(b' ') => (Kind::Context, &line[1..]),
            // Some tools strip the space of an empty context line.
            None => (Kind::Context, ""),
            Some(_) => return Some(Row::Other(line)),
        };
        let number = match kind {
            Kind::Removed => next_number(&mut self.old, &mut self.old_left),
            Kind::Added => next_number(&mut self.new, &mut self.new_left),
            Kind::Context => {
                next_number(&mut self.old, &mut self.old_left);
                next_number(&mut self.new, &mut self.new_left)
            }
        };
        Some(Row::Change { kind, number, text })
    }
}

impl<'a> Iterator for Parser<'a> {
    type Item = Row<'a>;

    fn next(&mut self) -> Option<Row<'a>> {
        loop {
            let line = self.lines.next()?;
            if let Some(row) = self.parse(line) {
                return Some(row);
            }
        }
    }
}

/// `--- old` or `+++ new`.
fn is_file_header(line: &str) -> bool {
    matches!(line.get(..3), Some("---" | "+++"))
        && matches!(line.as_bytes().get(3), None | Some(b' ' | b'\t'))
}

fn next_number(counter: &mut usize, left: &mut usize) -> usize {
    let number = *counter;
    *counter = counter.saturating_add(1);
    *left = left.saturating_sub(1);
    number
}

/// `@@ -old[,len] +new[,len] @@…` as (old, old_len, new, new_len).
fn hunk_header(line: &str) -> Option<(usize, usize, usize, usize)> {
    let rest = line.strip_prefix("@@ -")?;
    let (ranges, _) = rest.split_once(" @@")?;
    let (old, new) = ranges.split_once(" +")?;
    let (old, old_len) = range(old)?;
    let (new, new_len) = range(new)?;
    Some((old, old_len, new, new_len))
}

fn range(text: &str) -> Option<(usize, usize)> {
    match text.split_once(',') {
        Some((start, len)) => Some((start.parse().ok()?, len.parse().ok()?)),
        None => Some((text.parse().ok()?, 1)),
    }
}

fn kind_style(kind: Kind, theme: &Theme) -> Style {
    match kind {
        Kind::Added => theme.diff_added,
        Kind::Removed => theme.diff_removed,
        Kind::Context => theme.dim,
    }
}

/// The text spans of each row, with word marks where a run of removed
/// lines is followed by a run of added ones (paired in order).
fn style_rows(rows: &[Row<'_>], theme: &Theme) -> Vec<Vec<Span<'static>>> {
    let mut styled: Vec<Vec<Span<'static>>> = rows
        .iter()
        .map(|row| match row {
            Row::Change { kind, text, .. } => {
                vec![Span::styled(clean_bounded(text), kind_style(*kind, theme))]
            }
            Row::Other(text) => vec![Span::styled(clean_bounded(text), theme.dim)],
            Row::Gap => Vec::new(),
        })
        .collect();
    let kind_at = |i: usize| match rows.get(i) {
        Some(Row::Change { kind, .. }) => Some(*kind),
        _ => None,
    };
    let mut i = 0;
    while i < rows.len() {
        let removed = (i..)
            .take_while(|&j| kind_at(j) == Some(Kind::Removed))
            .count();
        let added = (i + removed..)
            .take_while(|&j| kind_at(j) == Some(Kind::Added))
            .count();
        for k in 0..removed.min(added) {
            let (old, new) = (i + k, i + removed + k);
            if let Some((old_spans, new_spans)) =
                word_marks(&span_text(&styled[old]), &span_text(&styled[new]), theme)
            {
                styled[old] = old_spans;
                styled[new] = new_spans;
            }
        }
        i += (removed + added).max(1);
    }
    styled
}

fn span_text(spans: &[Span<'_>]) -> String {
    spans.iter().map(|s| s.content.as_ref()).collect()
}

/// The removed and the added line with their changed words marked, unless
/// they are too long or too different for marks to help.
fn word_marks(
    old: &str,
    new: &str,
    theme: &Theme,
) -> Option<(Vec<Span<'static>>, Vec<Span<'static>>)> {
    if old.len() > MAX_WORD_DIFF_BYTES || new.len() > MAX_WORD_DIFF_BYTES {
        return None;
    }
    let diff = TextDiff::configure()
        .timeout(WORD_DIFF_TIMEOUT)
        .diff_words(old, new);
    if word_similarity(&diff) < MIN_SIMILARITY {
        return None;
    }
    let (removed, added) = (theme.diff_removed, theme.diff_added);
    let marked = |base: Style, word: &str| {
        if word.trim().is_empty() {
            base
        } else {
            base.patch(theme.diff_word)
        }
    };
    let (mut old_spans, mut new_spans) = (Vec::new(), Vec::new());
    for change in diff.iter_all_changes() {
        let word = change.value();
        match change.tag() {
            ChangeTag::Equal => {
                push_merged(&mut old_spans, word, removed);
                push_merged(&mut new_spans, word, added);
            }
            ChangeTag::Delete => push_merged(&mut old_spans, word, marked(removed, word)),
            ChangeTag::Insert => push_merged(&mut new_spans, word, marked(added, word)),
        }
    }
    Some((old_spans, new_spans))
}

/// The share of non-blank text the two lines have in common, from 0 to 1
/// (the spaces between words would make any two sentences look alike).
fn word_similarity<'a>(diff: &TextDiff<'a, 'a, '_, str>) -> f32 {
    let (mut same, mut total) = (0usize, 0usize);
    for change in diff.iter_all_changes() {
        let chars = change.value().trim().chars().count();
        total += chars;
        if change.tag() == ChangeTag::Equal {
            // Counted once per side.
            same += 2 * chars;
            total += chars;
        }
    }
    if total == 0 {
        return 1.0;
    }
    same as f32 / total as f32
}

fn push_merged(spans: &mut Vec<Span<'static>>, text: &str, style: Style) {
    match spans.last_mut() {
        Some(last) if last.style == style => last.content.to_mut().push_str(text),
        _ => spans.push(Span::styled(text.to_string(), style)),
    }
}

/// One parsed row as screen rows: `number sign text`, the text wrapped
/// under itself.
fn draw_row(
    row: &Row<'_>,
    text: Vec<Span<'static>>,
    gutter: usize,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let (number, sign, sign_style) = match row {
        Row::Gap => {
            let gap = Line::styled(format!("{:>gutter$}", "⋮"), theme.diff_hunk);
            return vec![fit_line(gap, width)];
        }
        Row::Change { kind, number, .. } => {
            let sign = match kind {
                Kind::Added => "+",
                Kind::Removed => "-",
                Kind::Context => " ",
            };
            (number.to_string(), sign, kind_style(*kind, theme))
        }
        Row::Other(_) => (String::new(), " ", theme.dim),
    };
    let text_width = width.saturating_sub(gutter + 2).max(1);
    wrap_spans(&text, text_width)
        .into_iter()
        .enumerate()
        .map(|(i, spans)| {
            let (number, sign) = if i == 0 {
                (number.as_str(), sign)
            } else {
                ("", " ")
            };
            let mut line = vec![
                Span::styled(format!("{number:>gutter$} "), theme.dim),
                Span::styled(sign, sign_style),
            ];
            line.extend(spans);
            fit_line(Line::from(line), width)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::tool::{line_text, text_width};
    use ratatui::style::Modifier;

    fn file_diff(unified: &str, added: usize, removed: usize) -> FileDiff {
        FileDiff {
            path: "src/lib.rs".into(),
            unified: unified.into(),
            added,
            removed,
        }
    }

    fn texts(diff: &FileDiff, width: u16, max_rows: Option<usize>) -> Vec<String> {
        diff_lines(diff, width, &Theme::colored(), max_rows)
            .iter()
            .map(line_text)
            .collect()
    }

    const EDIT: &str = "--- src/lib.rs\n+++ src/lib.rs\n@@ -8,4 +8,5 @@\n fn a() {\n-    let x = 1;\n+    let x = 2;\n+    let y = 3;\n }\n";

    #[test]
    fn the_header_counts_lines_in_words() {
        assert_eq!(change_summary(2, 1), "Added 2 lines, removed 1 line");
        assert_eq!(change_summary(1, 0), "Added 1 line");
        assert_eq!(change_summary(0, 3), "Removed 3 lines");
        assert_eq!(change_summary(0, 0), "No changes");
    }

    #[test]
    fn lines_carry_numbers_from_the_hunk_header() {
        assert_eq!(
            texts(&file_diff(EDIT, 2, 1), 40, None),
            [
                "Added 2 lines, removed 1 line",
                " 8  fn a() {",
                " 9 -    let x = 1;",
                " 9 +    let x = 2;",
                "10 +    let y = 3;",
                "11  }",
            ]
        );
    }

    #[test]
    fn kinds_are_coloured_and_changed_words_marked() {
        let theme = Theme::colored();
        let lines = diff_lines(&file_diff(EDIT, 2, 1), 40, &theme, None);
        let word = |line: &Line<'_>, text: &str| {
            line.spans
                .iter()
                .find(|s| s.content.contains(text))
                .map(|s| s.style)
        };
        assert_eq!(word(&lines[1], "fn a"), Some(theme.dim));
        let removed = word(&lines[2], "1").unwrap_or_default();
        assert_eq!(removed.fg, theme.diff_removed.fg);
        assert!(removed.add_modifier.contains(Modifier::REVERSED));
        let added = word(&lines[3], "2").unwrap_or_default();
        assert_eq!(added.fg, theme.diff_added.fg);
        assert!(added.add_modifier.contains(Modifier::REVERSED));
        // Unchanged words of the pair and the unpaired added line are unmarked.
        assert_eq!(word(&lines[3], "let"), Some(theme.diff_added));
        assert_eq!(word(&lines[4], "let y"), Some(theme.diff_added));
    }

    #[test]
    fn rewritten_lines_get_no_word_marks() {
        let unified = "@@ -1 +1 @@\n-alpha beta gamma\n+one two three\n";
        let lines = diff_lines(&file_diff(unified, 1, 1), 40, &Theme::colored(), None);
        let marked = lines
            .iter()
            .flat_map(|l| &l.spans)
            .any(|s| s.style.add_modifier.contains(Modifier::REVERSED));
        assert!(!marked);
    }

    #[test]
    fn a_long_diff_folds_with_a_count_of_the_rest() {
        let mut unified = String::from("--- f\n+++ f\n@@ -0,0 +1,30 @@\n");
        unified.extend((1..=30).map(|n| format!("+line {n}\n")));
        let lines = texts(&file_diff(&unified, 30, 0), 40, Some(20));
        assert_eq!(lines.len(), 1 + 20 + 1);
        assert_eq!(lines[1], " 1 +line 1");
        assert_eq!(lines[20], "20 +line 20");
        assert_eq!(lines[21], "… +10 lines");
        assert_eq!(texts(&file_diff(&unified, 30, 0), 40, None).len(), 31);
    }

    #[test]
    fn hunks_are_separated_and_long_lines_wrap_under_their_text() {
        let unified = "@@ -1 +1 @@\n-a\n+b\n@@ -20,2 +20,2 @@\n x\n-the quick brown fox\n+the quick red fox\n";
        assert_eq!(
            texts(&file_diff(unified, 2, 2), 14, None)[1..],
            [
                " 1 -a",
                " 1 +b",
                " ⋮",
                "20  x",
                "21 -the quick",
                "    brown fox",
                "21 +the quick",
                "    red fox",
            ]
        );
    }

    #[test]
    fn garbage_and_missing_headers_are_shown_without_failing() {
        let unified = "diff --git a/x b/x\nindex 123..456\n+new first\n-old\n\\ No newline at end of file\n@@ broken @@\n\x1b[31mred\n";
        assert_eq!(
            texts(&file_diff(unified, 1, 1), 40, None)[1..],
            [
                "   diff --git a/x b/x",
                "   index 123..456",
                "1 +new first",
                "1 -old",
                "   @@ broken @@",
                "   red",
            ]
        );
        let nonsense = "@@ -99999999999999999999999 +1 @@\n+x\n@@ -18446744073709551615 +18446744073709551615 @@\n x\n x\n";
        assert_eq!(
            texts(&file_diff(nonsense, 1, 0), 40, None)[3..],
            [
                "                   1 +x",
                "18446744073709551615  x",
                "18446744073709551615  x"
            ]
        );
        assert_eq!(texts(&file_diff("", 0, 0), 40, Some(20)), ["No changes"]);
    }

    #[test]
    fn a_removed_line_that_looks_like_a_file_header_stays_a_line() {
        let unified = "--- f\n+++ f\n@@ -1,2 +1 @@\n--- a rule\n keep\n";
        assert_eq!(
            texts(&file_diff(unified, 0, 1), 40, None)[1..],
            ["1 --- a rule", "1  keep"]
        );
    }

    #[test]
    fn every_row_fits_any_width() {
        for width in [0u16, 1, 2, 3, 4, 6, 9, 80] {
            for line in diff_lines(&file_diff(EDIT, 2, 1), width, &Theme::plain(), Some(20)) {
                assert!(text_width(&line_text(&line)) <= usize::from(width));
            }
        }
    }
}
