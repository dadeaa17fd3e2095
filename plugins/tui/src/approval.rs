//! The approval question, drawn in place of the input box while it is open:
//! the question, what the call would act on (its subject, or its arguments
//! as `key: value` rows, and the diff of an edit), and the answers.
//!
//! The question sits on the first rows inside the box rather than in its
//! border, so a long one wraps instead of being cut. When the box is too
//! low, the answers keep their rows and the details scroll.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Widget};
use serde_json::Value;
use uji_protocol::FileDiff;
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

use crate::approval_guard::{Guard, NOT_READY};
use crate::theme::Theme;
use crate::transcript::diff::diff_lines;
use crate::transcript::tool::{clean_bounded, cut, plural, wrapped_rows};

/// Rows of the question shown at most.
const QUESTION_ROWS: usize = 4;
/// Rows of one argument value (or of the subject) shown at most.
const VALUE_ROWS: usize = 200;
/// Rows PageUp/PageDown move before the box was first drawn.
const DEFAULT_PAGE: usize = 5;
const GUIDANCE_HINT: &str =
    "Tell uji what to do differently — Enter to send, Esc to deny without a word";

/// What the user decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalAnswer {
    /// `allow_once`.
    AllowOnce,
    /// `allow_session`: the same tool on the same subject is not asked
    /// again in this session.
    AllowSession,
    /// `guidance` is told to the model; None when the user gave none.
    Deny { guidance: Option<String> },
    /// Deny, and end the turn here.
    Stop,
}

/// The keys the question understands; the app maps terminal keys to them
/// (`y`, `a`, `n`, Esc to Allow, AllowSession, Deny, Stop unless
/// [`Approval::is_typing`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApprovalKey {
    Up,
    Down,
    Accept,
    Allow,
    AllowSession,
    Deny,
    Stop,
    Cancel,
    PageUp,
    PageDown,
    Char(char),
    Backspace,
    Paste(String),
}

/// One answer row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Choice {
    Once,
    Session,
    Deny,
    Stop,
}

impl Choice {
    const ALL: [Choice; 4] = [Choice::Once, Choice::Session, Choice::Deny, Choice::Stop];
    /// What a question offers when it names nothing: what every uji accepts.
    const DEFAULT: [Choice; 3] = [Choice::Once, Choice::Session, Choice::Deny];

    fn from_name(name: &str) -> Option<Choice> {
        match name {
            "allow_once" => Some(Choice::Once),
            "allow_session" => Some(Choice::Session),
            "deny" => Some(Choice::Deny),
            "stop" => Some(Choice::Stop),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Choice::Once => "allow_once",
            Choice::Session => "allow_session",
            Choice::Deny => "deny",
            Choice::Stop => "stop",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Choice::Once => "Yes, proceed (y)",
            Choice::Session => "Yes, and don't ask again for this session (a)",
            Choice::Deny => "No, and tell uji what to do differently (n)",
            Choice::Stop => "No, and stop here (esc)",
        }
    }

    /// The answer in a word, for the one-row answers of a low box.
    fn short(self) -> &'static str {
        match self {
            Choice::Once => "y yes",
            Choice::Session => "a always",
            Choice::Deny => "n no",
            Choice::Stop => "esc stop",
        }
    }
}

/// An open approval question.
#[derive(Debug)]
pub struct Approval {
    call_id: String,
    question: String,
    subject: String,
    /// The arguments as sorted `key: value` texts.
    args: Vec<String>,
    diff: Option<FileDiff>,
    choices: Vec<Choice>,
    /// A question that is not about a tool call names its answers itself
    /// (by decision name); a denial then needs no guidance.
    labels: BTreeMap<String, String>,
    selected: usize,
    /// Some while the user types guidance after denying.
    guidance: Option<String>,
    scroll: usize,
    /// Body rows and how many of them were visible when last drawn, for
    /// paging and for keeping the scroll in range.
    seen: Cell<(usize, usize)>,
    body: RefCell<BodyRows>,
    /// Whether a key may answer yet; until it may, the answers are dim.
    guard: Guard,
}

/// The body's rows for one width and theme.
#[derive(Debug, Default)]
struct BodyRows {
    key: Option<(u16, bool)>,
    lines: Vec<Line<'static>>,
}

impl Approval {
    /// From the approval_request event's fields. `answers` holds
    /// `allow_once`, `allow_session`, `deny` and `stop`; none known offers
    /// the first three (what every uji accepts).
    pub fn new(
        call_id: &str,
        tool: &str,
        question: &str,
        subject: &str,
        args: &Value,
        diff: Option<&FileDiff>,
        answers: &[String],
    ) -> Approval {
        let mut choices: Vec<Choice> = Choice::ALL
            .into_iter()
            .filter(|c| answers.iter().any(|a| Choice::from_name(a) == Some(*c)))
            .collect();
        if choices.is_empty() {
            choices = Choice::DEFAULT.to_vec();
        }
        let question = if question.trim().is_empty() {
            format!("Would you like to run `{tool}`?")
        } else {
            question.to_string()
        };
        Approval {
            call_id: call_id.to_string(),
            question,
            subject: subject.to_string(),
            args: arg_texts(args),
            diff: diff.cloned(),
            choices,
            labels: BTreeMap::new(),
            selected: 0,
            guidance: None,
            scroll: 0,
            seen: Cell::new((0, DEFAULT_PAGE)),
            body: RefCell::new(BodyRows::default()),
            guard: Guard::default(),
        }
    }

    /// Shows `labels` (by decision name) instead of the usual answers, and
    /// offers only the decisions they name.
    pub fn with_labels(mut self, labels: BTreeMap<String, String>) -> Approval {
        if !labels.is_empty() {
            self.choices.retain(|c| labels.contains_key(c.name()));
            if self.choices.is_empty() {
                self.choices = Choice::DEFAULT.to_vec();
            }
        }
        self.labels = labels;
        self
    }

    fn label_of(&self, choice: Choice) -> &str {
        self.labels
            .get(choice.name())
            .map_or(choice.label(), String::as_str)
    }

    /// The call the question is about (for the `approval` operation).
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    pub fn guard(&self) -> &Guard {
        &self.guard
    }

    pub fn guard_mut(&mut self) -> &mut Guard {
        &mut self.guard
    }

    /// Whether the question has a use for `c` typed as a character (the
    /// y/a/n shortcuts are the keymap's): guidance text, or a row's digit.
    /// Anything else typed at it goes to the draft.
    pub fn takes_char(&self, c: char) -> bool {
        self.guidance.is_some() || digit_row(c).is_some_and(|row| row < self.choices.len())
    }

    /// True while the user is typing guidance after a denial (the app then
    /// routes plain characters here instead of the y/a/n shortcuts).
    pub fn is_typing(&self) -> bool {
        self.guidance.is_some()
    }

    /// Feeds a key; Some(answer) when the user has decided.
    pub fn handle(&mut self, key: ApprovalKey) -> Option<ApprovalAnswer> {
        if self.guidance.is_some() {
            return self.handle_typing(key);
        }
        match key {
            ApprovalKey::Up => self.selected = self.selected.saturating_sub(1),
            ApprovalKey::Down => self.selected = (self.selected + 1).min(self.choices.len() - 1),
            ApprovalKey::PageUp | ApprovalKey::PageDown => self.page(&key),
            ApprovalKey::Accept => return self.choose(self.choices.get(self.selected).copied()),
            ApprovalKey::Allow | ApprovalKey::Char('y') => {
                return self.choose_offered(Choice::Once);
            }
            ApprovalKey::AllowSession | ApprovalKey::Char('a') => {
                return self.choose_offered(Choice::Session);
            }
            ApprovalKey::Deny | ApprovalKey::Char('n') => return self.choose(Some(Choice::Deny)),
            // Where stopping is not offered, Esc denies without a word.
            ApprovalKey::Stop if self.choices.contains(&Choice::Stop) => {
                return Some(ApprovalAnswer::Stop);
            }
            ApprovalKey::Stop | ApprovalKey::Cancel => {
                return Some(ApprovalAnswer::Deny { guidance: None });
            }
            // A digit only moves to its row: Enter takes it. (A digit in a
            // sentence typed at the question must not answer it.)
            ApprovalKey::Char(c) if digit_row(c).is_some_and(|row| row < self.choices.len()) => {
                self.selected = digit_row(c).unwrap_or(self.selected);
            }
            ApprovalKey::Char(_) | ApprovalKey::Backspace | ApprovalKey::Paste(_) => {}
        }
        None
    }

    fn choose_offered(&mut self, choice: Choice) -> Option<ApprovalAnswer> {
        if self.choices.contains(&choice) {
            self.choose(Some(choice))
        } else {
            None
        }
    }

    /// Allowing answers at once; denying first asks for guidance.
    fn choose(&mut self, choice: Option<Choice>) -> Option<ApprovalAnswer> {
        match choice? {
            Choice::Once => Some(ApprovalAnswer::AllowOnce),
            Choice::Session => Some(ApprovalAnswer::AllowSession),
            Choice::Stop => Some(ApprovalAnswer::Stop),
            Choice::Deny if !self.labels.is_empty() => {
                Some(ApprovalAnswer::Deny { guidance: None })
            }
            Choice::Deny => {
                self.guidance = Some(String::new());
                None
            }
        }
    }

    fn handle_typing(&mut self, key: ApprovalKey) -> Option<ApprovalAnswer> {
        let text = self.guidance.get_or_insert_with(String::new);
        match key {
            ApprovalKey::Char(ch) if !ch.is_control() => text.push(ch),
            ApprovalKey::Paste(pasted) => {
                let joined: Vec<&str> = pasted.lines().collect();
                text.push_str(&clean_bounded(&joined.join(" ")));
            }
            ApprovalKey::Backspace => {
                let keep = text
                    .grapheme_indices(true)
                    .next_back()
                    .map_or(0, |(at, _)| at);
                text.truncate(keep);
            }
            ApprovalKey::Accept => {
                let guidance = text.trim();
                let guidance = (!guidance.is_empty()).then(|| guidance.to_string());
                return Some(ApprovalAnswer::Deny { guidance });
            }
            ApprovalKey::Cancel | ApprovalKey::Deny | ApprovalKey::Stop => {
                return Some(ApprovalAnswer::Deny { guidance: None });
            }
            ApprovalKey::Up | ApprovalKey::Down | ApprovalKey::PageUp | ApprovalKey::PageDown => {
                self.page(&key);
            }
            ApprovalKey::Allow | ApprovalKey::AllowSession | ApprovalKey::Char(_) => {}
        }
        None
    }

    /// Scrolls the body: a row for Up/Down (while typing), a page for
    /// PageUp/PageDown.
    fn page(&mut self, key: &ApprovalKey) {
        let (total, visible) = self.seen.get();
        let step = match key {
            ApprovalKey::PageUp | ApprovalKey::PageDown => visible.max(1),
            _ => 1,
        };
        let last = total.saturating_sub(visible);
        self.scroll = match key {
            ApprovalKey::Up | ApprovalKey::PageUp => self.scroll.saturating_sub(step),
            _ => (self.scroll + step).min(last),
        };
    }

    /// Rows the box wants for `width` columns, at most `max`.
    pub fn height(&self, width: u16, max: u16) -> u16 {
        let inner = width.saturating_sub(2);
        let body = self.with_body(inner, &Theme::plain(), true, |lines| lines.len());
        let question = self.question_lines(inner, &Theme::plain()).len();
        let natural = 2 + question + body + 1 + self.controls_len();
        u16::try_from(natural).unwrap_or(u16::MAX).min(max)
    }

    /// Draws the box over `area`; the cursor position while typing guidance.
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) -> Option<(u16, u16)> {
        let area = area.intersection(*buf.area());
        Clear.render(area, buf);
        let mut frame = Block::bordered()
            .border_type(BorderType::Rounded)
            .border_style(theme.border);
        if !self.guard.shows_ready() {
            frame = frame.title_bottom(Line::styled(format!(" {NOT_READY} "), theme.dim));
        }
        let inner = frame.inner(area);
        frame.render(area, buf);
        if inner.is_empty() {
            return None;
        }
        let question = self.question_lines(inner.width, theme);
        let mut controls = self.control_lines(inner.width, theme);
        // Too low for a row per answer and the question: the answers share
        // one row, so the question stays in view.
        if self.guidance.is_none() && usize::from(inner.height) < controls.len() + 1 {
            controls = vec![self.compact_line(inner.width, theme)];
        }
        let rows = self.with_body(inner.width, theme, false, |body| {
            let plan = Plan::new(
                question.len(),
                body.len(),
                controls.len(),
                usize::from(inner.height),
            );
            let scroll = self.scroll.min(body.len() - plan.body);
            self.seen.set((body.len(), plan.body));
            let mut rows: Vec<Line<'static>> = question[..plan.question].to_vec();
            rows.extend_from_slice(&body[scroll..scroll + plan.body]);
            if plan.indicator {
                let (from, to) = (scroll + 1, scroll + plan.body);
                let note = format!("lines {from}–{to} of {}, PgUp/PgDn to scroll", body.len());
                rows.push(Line::styled(
                    cut(&note, usize::from(inner.width)),
                    theme.dim,
                ));
            }
            rows.extend((0..plan.gap).map(|_| Line::default()));
            rows.extend_from_slice(&controls[controls.len() - plan.controls..]);
            rows
        });
        for (y, line) in (inner.y..inner.bottom()).zip(&rows) {
            buf.set_line(inner.x, y, line, inner.width);
        }
        self.cursor(inner, &rows)
    }

    /// The end of the guidance text on the last row, while typing.
    fn cursor(&self, inner: Rect, rows: &[Line<'static>]) -> Option<(u16, u16)> {
        self.guidance.as_ref()?;
        let last = rows.last()?;
        let row = u16::try_from(rows.len() - 1).ok()?;
        let column = u16::try_from(last.width()).unwrap_or(u16::MAX);
        let x = inner.x.saturating_add(column).min(inner.right() - 1);
        Some((x, inner.y + row))
    }

    fn question_lines(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        wrapped_rows(
            &self.question,
            usize::from(width),
            theme.strong,
            QUESTION_ROWS,
        )
        .0
    }

    fn controls_len(&self) -> usize {
        if self.guidance.is_some() {
            2
        } else {
            self.choices.len()
        }
    }

    /// Every answer on one row, `❯ y yes · a always · n no · esc stop`, the
    /// selected one marked.
    fn compact_line(&self, width: u16, theme: &Theme) -> Line<'static> {
        let ready = self.guard.shows_ready();
        let mut spans = Vec::new();
        for (i, choice) in self.choices.iter().enumerate() {
            if i > 0 {
                spans.push(Span::styled(" · ", theme.dim));
            }
            let selected = ready && i == self.selected;
            let text = match self.labels.get(choice.name()) {
                Some(label) => label.clone(),
                None => choice.short().to_string(),
            };
            let style = match (ready, selected) {
                (true, true) => theme.selected,
                (true, false) => theme.text,
                (false, _) => theme.dim,
            };
            spans.push(Span::styled(if selected { "❯ " } else { "" }, style));
            spans.push(Span::styled(text, style));
        }
        let line = Line::from(spans);
        if line.width() <= usize::from(width) {
            return line;
        }
        let plain: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
        Line::styled(cut(&plain, usize::from(width)), theme.text)
    }

    /// The answer rows, or the guidance prompt and its input row.
    fn control_lines(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let width = usize::from(width);
        if let Some(text) = &self.guidance {
            let visible = tail(text, width.saturating_sub(3));
            return vec![
                Line::styled(cut(GUIDANCE_HINT, width), theme.dim),
                Line::from(vec![
                    Span::styled(cut("❯ ", width), theme.accent),
                    Span::styled(visible.to_string(), theme.text),
                ]),
            ];
        }
        // Not ready: dim rows and no selection, so nothing looks pressable.
        let ready = self.guard.shows_ready();
        self.choices
            .iter()
            .enumerate()
            .map(|(i, choice)| {
                let (marker, style) = match (ready, i == self.selected) {
                    (true, true) => ("❯", theme.selected),
                    (true, false) => (" ", theme.text),
                    (false, _) => (" ", theme.dim),
                };
                let text = format!("{marker} {}. {}", i + 1, self.label_of(*choice));
                Line::styled(cut(&text, width), style)
            })
            .collect()
    }

    /// Runs `use_rows` on the body's rows for `width`, built once per width
    /// and theme. `any_theme` accepts rows of another theme (only their
    /// number is wanted).
    fn with_body<R>(
        &self,
        width: u16,
        theme: &Theme,
        any_theme: bool,
        use_rows: impl FnOnce(&[Line<'static>]) -> R,
    ) -> R {
        let mut cache = self.body.borrow_mut();
        let fresh = match cache.key {
            Some((w, colors)) => w == width && (any_theme || colors == theme.colors),
            None => false,
        };
        if !fresh {
            cache.lines = self.body_lines(usize::from(width), theme);
            cache.key = Some((width, theme.colors));
        }
        use_rows(&cache.lines)
    }

    /// The subject (or the arguments), then the diff of an edit or write.
    fn body_lines(&self, width: usize, theme: &Theme) -> Vec<Line<'static>> {
        let mut lines = Vec::new();
        if self.subject.trim().is_empty() {
            for arg in &self.args {
                lines.extend(capped_rows(arg, width, theme));
            }
        } else {
            lines.extend(capped_rows(&self.subject, width, theme));
        }
        if let Some(diff) = &self.diff {
            if !lines.is_empty() {
                lines.push(Line::default());
            }
            lines.extend(diff_lines(
                diff,
                u16::try_from(width).unwrap_or(u16::MAX),
                theme,
                None,
            ));
        }
        lines
    }
}

/// The answer row (from 0) a digit names.
fn digit_row(c: char) -> Option<usize> {
    let digit = c.to_digit(10)?;
    usize::try_from(digit).ok()?.checked_sub(1)
}

/// `text` wrapped, at most [`VALUE_ROWS`] rows and a note of the rest.
fn capped_rows(text: &str, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let (mut rows, shown) = wrapped_rows(text, width, theme.text, VALUE_ROWS);
    let hidden = text.lines().count().saturating_sub(shown);
    if hidden > 0 {
        let note = format!("… +{}", plural(hidden, "line"));
        rows.push(Line::styled(cut(&note, width), theme.dim));
    }
    rows
}

/// The arguments as `key: value` texts sorted by key; strings as they are,
/// other values as JSON.
fn arg_texts(args: &Value) -> Vec<String> {
    let mut texts: Vec<String> = match args {
        Value::Null => Vec::new(),
        Value::Object(map) => map
            .iter()
            .map(|(key, value)| match value {
                Value::String(text) => format!("{key}: {text}"),
                other => format!("{key}: {other}"),
            })
            .collect(),
        Value::String(text) => vec![text.clone()],
        other => vec![other.to_string()],
    };
    texts.sort();
    texts
}

/// The end of `text` that fits in `width` columns.
pub(crate) fn tail(text: &str, width: usize) -> &str {
    let mut used = 0;
    let mut start = text.len();
    for (at, grapheme) in text.grapheme_indices(true).rev() {
        used += grapheme.width();
        if used > width {
            break;
        }
        start = at;
    }
    &text[start..]
}

/// How the rows inside the box are shared out: the answers first, then the
/// question, then the body (scrolling, with an indicator row when it does
/// not fit).
#[derive(Debug, PartialEq, Eq)]
struct Plan {
    question: usize,
    body: usize,
    indicator: bool,
    gap: usize,
    controls: usize,
}

impl Plan {
    fn new(question: usize, body: usize, controls: usize, height: usize) -> Plan {
        let controls = controls.min(height);
        let mut left = height - controls;
        let question = question.min(left);
        left -= question;
        let gap = usize::from(left >= 2 || (body == 0 && left == 1));
        left -= gap;
        let (body, indicator) = if body <= left {
            (body, false)
        } else if left >= 2 {
            (left - 1, true)
        } else {
            (left, false)
        };
        Plan {
            question,
            body,
            indicator,
            gap,
            controls,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::buffer_rows;
    use serde_json::json;

    fn all_answers() -> Vec<String> {
        ["allow_once", "allow_session", "deny", "stop"]
            .map(String::from)
            .to_vec()
    }

    fn shell(command: &str) -> Approval {
        Approval::new(
            "call_7",
            "run_command",
            "Run this command?",
            command,
            &json!({"command": command}),
            None,
            &all_answers(),
        )
    }

    /// Draws `approval` as it looks once it takes answers.
    fn draw(approval: &mut Approval, width: u16, max: u16) -> (Vec<String>, Option<(u16, u16)>) {
        approval.guard = Guard::new(std::time::Duration::ZERO);
        approval.guard.frame(std::time::Instant::now());
        draw_as_is(approval, width, max)
    }

    fn draw_as_is(approval: &Approval, width: u16, max: u16) -> (Vec<String>, Option<(u16, u16)>) {
        let height = approval.height(width, max);
        let mut buf = Buffer::empty(Rect::new(0, 0, width, height));
        let cursor = approval.render(buf.area, &mut buf, &Theme::plain());
        (buffer_rows(&buf), cursor)
    }

    #[test]
    fn the_box_shows_question_subject_and_answers() {
        let mut approval = shell("cargo test");
        let (rows, cursor) = draw(&mut approval, 52, 30);
        assert_eq!(
            rows,
            [
                "╭──────────────────────────────────────────────────╮",
                "│Run this command?                                 │",
                "│cargo test                                        │",
                "│                                                  │",
                "│❯ 1. Yes, proceed (y)                             │",
                "│  2. Yes, and don't ask again for this session (a)│",
                "│  3. No, and tell uji what to do differently (n)  │",
                "│  4. No, and stop here (esc)                      │",
                "╰──────────────────────────────────────────────────╯",
            ]
        );
        assert_eq!(cursor, None);
        assert_eq!(approval.call_id(), "call_7");
    }

    #[test]
    fn without_a_subject_the_arguments_are_listed_by_key() {
        let args = json!({"path": "a.txt", "content": "one\ntwo", "append": true});
        let mut approval = Approval::new("c", "write_file", "", "", &args, None, &[]);
        let (rows, _) = draw(&mut approval, 40, 30);
        assert_eq!(
            rows[1..6],
            [
                "│Would you like to run `write_file`?   │",
                "│append: true                          │",
                "│content: one                          │",
                "│two                                   │",
                "│path: a.txt                           │",
            ]
        );
    }

    #[test]
    fn only_the_offered_answers_are_rows() {
        let answers = ["allow_once", "deny"].map(String::from);
        let mut approval = Approval::new("c", "t", "Q?", "s", &Value::Null, None, &answers);
        let (rows, _) = draw(&mut approval, 50, 30);
        assert_eq!(
            rows[5],
            "│  2. No, and tell uji what to do differently (n)│"
        );
        assert_eq!(approval.handle(ApprovalKey::AllowSession), None);
        assert_eq!(
            approval.handle(ApprovalKey::Allow),
            Some(ApprovalAnswer::AllowOnce)
        );
    }

    #[test]
    fn an_edit_previews_its_diff() {
        let diff = FileDiff {
            path: "a.txt".into(),
            unified: "--- a.txt\n+++ a.txt\n@@ -1 +1 @@\n-old\n+new\n".into(),
            added: 1,
            removed: 1,
        };
        let mut approval = Approval::new(
            "c",
            "edit_file",
            "Make this edit to a.txt?",
            "a.txt",
            &json!({}),
            Some(&diff),
            &all_answers(),
        );
        let (rows, _) = draw(&mut approval, 40, 30);
        assert_eq!(
            rows[1..7],
            [
                "│Make this edit to a.txt?              │",
                "│a.txt                                 │",
                "│                                      │",
                "│Added 1 line, removed 1 line          │",
                "│1 -old                                │",
                "│1 +new                                │",
            ]
        );
    }

    #[test]
    fn a_long_body_scrolls_with_an_indicator() {
        let command: String = (1..=30).map(|n| format!("echo {n}\n")).collect();
        let mut approval = shell(&command);
        assert_eq!(approval.height(40, 12), 12);
        let (rows, _) = draw(&mut approval, 40, 12);
        assert_eq!(rows[2], "│echo 1                                │");
        assert_eq!(rows[4], "│echo 3                                │");
        assert_eq!(rows[5], "│lines 1–3 of 30, PgUp/PgDn to scroll  │");
        assert_eq!(rows[7], "│❯ 1. Yes, proceed (y)                 │");
        assert_eq!(approval.handle(ApprovalKey::PageDown), None);
        let (rows, _) = draw(&mut approval, 40, 12);
        assert_eq!(rows[2], "│echo 4                                │");
        assert_eq!(rows[5], "│lines 4–6 of 30, PgUp/PgDn to scroll  │");
        for _ in 0..20 {
            approval.handle(ApprovalKey::PageDown);
        }
        let (rows, _) = draw(&mut approval, 40, 12);
        assert_eq!(rows[5], "│lines 28–30 of 30, PgUp/PgDn to scroll│");
        approval.handle(ApprovalKey::PageUp);
        let (rows, _) = draw(&mut approval, 40, 12);
        assert_eq!(rows[2], "│echo 25                               │");
    }

    #[test]
    fn shortcut_keys_answer_at_once() {
        assert_eq!(
            shell("x").handle(ApprovalKey::Allow),
            Some(ApprovalAnswer::AllowOnce)
        );
        assert_eq!(
            shell("x").handle(ApprovalKey::AllowSession),
            Some(ApprovalAnswer::AllowSession)
        );
        assert_eq!(
            shell("x").handle(ApprovalKey::Stop),
            Some(ApprovalAnswer::Stop)
        );
        assert_eq!(
            shell("x").handle(ApprovalKey::Cancel),
            Some(ApprovalAnswer::Deny { guidance: None })
        );
    }

    #[test]
    fn where_stopping_is_not_offered_esc_denies_without_a_word() {
        let answers = ["allow_once", "allow_session", "deny"].map(String::from);
        let mut approval = Approval::new("c", "t", "Q?", "s", &Value::Null, None, &answers);
        let (rows, _) = draw(&mut approval, 52, 30);
        assert!(
            !rows.iter().any(|row| row.contains("stop here")),
            "{rows:#?}"
        );
        assert_eq!(
            approval.handle(ApprovalKey::Stop),
            Some(ApprovalAnswer::Deny { guidance: None })
        );
    }

    #[test]
    fn the_stop_row_is_taken_with_enter() {
        let mut approval = shell("x");
        for _ in 0..3 {
            approval.handle(ApprovalKey::Down);
        }
        let (rows, _) = draw(&mut approval, 52, 30);
        assert_eq!(
            rows[7],
            "│❯ 4. No, and stop here (esc)                      │"
        );
        assert_eq!(
            approval.handle(ApprovalKey::Accept),
            Some(ApprovalAnswer::Stop)
        );
    }

    #[test]
    fn while_guidance_is_typed_esc_denies_rather_than_stops() {
        let mut approval = shell("x");
        assert_eq!(approval.handle(ApprovalKey::Deny), None);
        approval.handle(ApprovalKey::Char('w'));
        assert_eq!(
            approval.handle(ApprovalKey::Stop),
            Some(ApprovalAnswer::Deny { guidance: None })
        );
    }

    #[test]
    fn a_low_box_puts_the_answers_on_one_row_and_keeps_the_question() {
        let mut approval = shell("cargo test");
        let (rows, _) = draw(&mut approval, 50, 5);
        assert_eq!(
            rows,
            [
                "╭────────────────────────────────────────────────╮",
                "│Run this command?                               │",
                "│cargo test                                      │",
                "│❯ y yes · a always · n no · esc stop            │",
                "╰────────────────────────────────────────────────╯",
            ]
        );
        approval.handle(ApprovalKey::Down);
        let (rows, _) = draw(&mut approval, 50, 5);
        assert_eq!(
            rows[3],
            "│y yes · ❯ a always · n no · esc stop            │"
        );
        assert_eq!(
            approval.handle(ApprovalKey::Accept),
            Some(ApprovalAnswer::AllowSession)
        );
    }

    #[test]
    fn a_digit_moves_to_its_row_and_enter_takes_it() {
        let mut approval = shell("x");
        assert!(approval.takes_char('2'));
        assert!(approval.takes_char('4'));
        assert!(!approval.takes_char('5'), "there are four rows");
        assert!(!approval.takes_char('y'), "y is the keymap's");
        assert_eq!(approval.handle(ApprovalKey::Char('2')), None);
        assert_eq!(
            approval.handle(ApprovalKey::Accept),
            Some(ApprovalAnswer::AllowSession)
        );
    }

    #[test]
    fn a_paste_never_answers() {
        let mut approval = shell("x");
        for text in ["y", "a", "1", "\n", "yes\n", "\r"] {
            assert_eq!(approval.handle(ApprovalKey::Paste(text.into())), None);
        }
        assert_eq!(
            approval.handle(ApprovalKey::Accept),
            Some(ApprovalAnswer::AllowOnce),
            "the selection did not move either"
        );
    }

    #[test]
    fn until_it_is_ready_the_answers_are_dim_and_none_is_selected() {
        let approval = shell("cargo test");
        let (rows, _) = draw_as_is(&approval, 80, 30);
        assert_eq!(
            rows[4],
            format!("│  1. Yes, proceed (y){}│", " ".repeat(57))
        );
        assert!(rows[8].contains(NOT_READY), "{}", rows[8]);
        let mut buf = Buffer::empty(Rect::new(0, 0, 80, approval.height(80, 30)));
        let theme = Theme::colored();
        approval.render(buf.area, &mut buf, &theme);
        assert!(buf[(5, 4)].modifier.contains(ratatui::style::Modifier::DIM));
        let mut approval = approval;
        let (rows, _) = draw(&mut approval, 80, 30);
        assert!(rows[4].starts_with("│❯ 1. Yes, proceed (y)"), "{}", rows[4]);
        assert!(!rows[8].contains(NOT_READY), "{}", rows[8]);
    }

    #[test]
    fn arrows_move_the_selection_and_enter_takes_it() {
        let mut approval = shell("x");
        approval.handle(ApprovalKey::Down);
        let (rows, _) = draw(&mut approval, 52, 30);
        assert_eq!(
            rows[5],
            "│❯ 2. Yes, and don't ask again for this session (a)│"
        );
        assert_eq!(
            approval.handle(ApprovalKey::Accept),
            Some(ApprovalAnswer::AllowSession)
        );
        let mut approval = shell("x");
        approval.handle(ApprovalKey::Down);
        approval.handle(ApprovalKey::Up);
        approval.handle(ApprovalKey::Up);
        assert_eq!(
            approval.handle(ApprovalKey::Accept),
            Some(ApprovalAnswer::AllowOnce)
        );
    }

    #[test]
    fn denying_asks_for_guidance_and_sends_it() {
        let mut approval = shell("rm -rf build");
        for _ in 0..2 {
            approval.handle(ApprovalKey::Down);
        }
        assert_eq!(approval.handle(ApprovalKey::Accept), None);
        assert!(approval.is_typing());
        for ch in "use cargo cleanx".chars() {
            assert_eq!(approval.handle(ApprovalKey::Char(ch)), None);
        }
        approval.handle(ApprovalKey::Backspace);
        approval.handle(ApprovalKey::Paste(" \x1b[1minstead\nplease".into()));
        let (rows, cursor) = draw(&mut approval, 40, 30);
        assert_eq!(
            rows[4..6],
            [
                "│Tell uji what to do differently — Ent…│",
                "│❯ use cargo clean instead please      │",
            ]
        );
        assert_eq!(cursor, Some((33, 5)));
        assert_eq!(
            approval.handle(ApprovalKey::Accept),
            Some(ApprovalAnswer::Deny {
                guidance: Some("use cargo clean instead please".into())
            })
        );
    }

    #[test]
    fn guidance_can_be_left_out() {
        let mut approval = shell("x");
        assert_eq!(approval.handle(ApprovalKey::Deny), None);
        approval.handle(ApprovalKey::Char(' '));
        assert_eq!(
            approval.handle(ApprovalKey::Accept),
            Some(ApprovalAnswer::Deny { guidance: None })
        );
        let mut approval = shell("x");
        approval.handle(ApprovalKey::Char('n'));
        approval.handle(ApprovalKey::Char('y'));
        assert_eq!(
            approval.handle(ApprovalKey::Deny),
            Some(ApprovalAnswer::Deny { guidance: None })
        );
    }

    #[test]
    fn long_guidance_shows_its_end_next_to_the_cursor() {
        let mut approval = shell("x");
        approval.handle(ApprovalKey::Deny);
        approval.handle(ApprovalKey::Paste("a".repeat(50) + "END"));
        let (rows, cursor) = draw(&mut approval, 20, 30);
        assert_eq!(rows[5], "│❯ aaaaaaaaaaaaEND │");
        assert_eq!(cursor, Some((18, 5)));
    }

    #[test]
    fn tiny_areas_keep_the_answers_and_never_fail() {
        let mut approval = shell(&"word ".repeat(100));
        let (rows, _) = draw(&mut approval, 30, 5);
        assert_eq!(
            rows[1..4],
            [
                "│Run this command?           │",
                "│word word word word word    │",
                "│❯ y yes · a always · n no ·…│",
            ]
        );
        let (rows, _) = draw(&mut approval, 30, 3);
        assert_eq!(rows[1], "│❯ y yes · a always · n no ·…│");
        for (width, height) in [(0, 0), (1, 1), (2, 2), (3, 3), (4, 9), (30, 4)] {
            let mut buf = Buffer::empty(Rect::new(0, 0, width, height));
            approval.render(buf.area, &mut buf, &Theme::colored());
            approval.render(Rect::new(0, 0, 100, 100), &mut buf, &Theme::colored());
        }
    }
}
