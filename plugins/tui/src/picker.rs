//! A list overlay to pick one item from (`/model`, `/effort`, `/sessions`):
//! a bordered box with a filter line, the items and a hint line. Typed
//! characters filter the list fuzzily (as the `/` suggestions match), over
//! the label, detail and value; Backspace, Ctrl+W and Ctrl+U edit the
//! filter.

use std::cell::Cell;

use nucleo_matcher::pattern::{Atom, AtomKind, CaseMatching, Normalization};
use nucleo_matcher::{Config, Matcher, Utf32Str};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Clear, Widget};

use crate::approval_guard::{Guard, NOT_READY};
use crate::theme::Theme;
use crate::transcript::tool::{cut, one_line, text_width};

/// The indices of the items `filter` matches fuzzily (in the label,
/// detail or value, case ignored), best match first, ties in the given
/// order; every item, in order, for an empty filter.
fn fuzzy_order(filter: &str, items: &[PickerItem]) -> Vec<usize> {
    if filter.trim().is_empty() {
        return (0..items.len()).collect();
    }
    let atom = Atom::new(
        filter.trim(),
        CaseMatching::Ignore,
        Normalization::Smart,
        AtomKind::Fuzzy,
        false,
    );
    let mut matcher = Matcher::new(Config::DEFAULT);
    let mut chars = Vec::new();
    let mut scored: Vec<(u16, usize)> = items
        .iter()
        .enumerate()
        .filter_map(|(index, item)| {
            [&item.label, &item.detail, &item.value]
                .iter()
                .filter_map(|text| atom.score(Utf32Str::new(text, &mut chars), &mut matcher))
                .max()
                .map(|score| (score, index))
        })
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    scored.into_iter().map(|(_, index)| index).collect()
}

/// Item rows shown at most, however tall the screen.
const MAX_ITEM_ROWS: usize = 12;
/// Rows PageUp/PageDown move before the box was first drawn.
const DEFAULT_PAGE: usize = 10;

/// Clears `area` and draws a rounded box titled `title` over it (the
/// pickers and the key prompt); returns the room inside.
pub fn titled_box(title: &str, area: Rect, buf: &mut Buffer, theme: &Theme) -> Rect {
    let area = area.intersection(*buf.area());
    Clear.render(area, buf);
    let title = format!(" {} ", one_line(title));
    let frame = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme.border)
        .title(Line::styled(
            cut(&title, usize::from(area.width.saturating_sub(2))),
            theme.strong,
        ));
    let inner = frame.inner(area);
    frame.render(area, buf);
    inner
}

/// One entry: `label` and a dim `detail` are shown, `value` is returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PickerItem {
    pub label: String,
    pub detail: String,
    pub value: String,
}

/// What the user did with the picker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PickerOutcome {
    Chosen(String),
    /// Asks to delete this value; the app confirms and calls
    /// [`Picker::remove`].
    Delete(String),
    Cancelled,
}

/// The keys the picker understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickerKey {
    Up,
    Down,
    PageUp,
    PageDown,
    Accept,
    Cancel,
    Delete,
    Char(char),
    Backspace,
    /// Deletes the filter's last word.
    DeleteWord,
    /// Empties the filter.
    ClearFilter,
}

/// An open picker.
#[derive(Debug)]
pub struct Picker {
    title: String,
    items: Vec<PickerItem>,
    allow_delete: bool,
    filter: String,
    /// Indices into `items` that match the filter.
    shown: Vec<usize>,
    /// Position in `shown`.
    selected: usize,
    /// First shown row and rows visible when last drawn.
    offset: Cell<usize>,
    page: Cell<usize>,
    /// Whether a key may choose yet (a picker is a question too).
    guard: Guard,
}

impl Picker {
    /// A picker on the first item.
    pub fn new(title: &str, items: Vec<PickerItem>, allow_delete: bool) -> Picker {
        let shown = (0..items.len()).collect();
        Picker {
            title: title.to_string(),
            items,
            allow_delete,
            filter: String::new(),
            shown,
            selected: 0,
            offset: Cell::new(0),
            page: Cell::new(DEFAULT_PAGE),
            guard: Guard::default(),
        }
    }

    pub fn guard(&self) -> &Guard {
        &self.guard
    }

    pub fn guard_mut(&mut self) -> &mut Guard {
        &mut self.guard
    }

    /// Moves the selection to the item with `value` (clearing a filter that
    /// hides it); no change when there is none.
    pub fn select(&mut self, value: &str) {
        let Some(index) = self.items.iter().position(|i| i.value == value) else {
            return;
        };
        if !self.shown.contains(&index) {
            self.filter.clear();
            self.refilter();
        }
        if let Some(at) = self.shown.iter().position(|&i| i == index) {
            self.selected = at;
        }
    }

    /// Drops the item with `value` (after the app deleted it).
    pub fn remove(&mut self, value: &str) {
        let kept = self.selected_item().map(|i| i.value.clone());
        self.items.retain(|i| i.value != value);
        self.refilter();
        match kept.filter(|v| v != value) {
            Some(kept) => self.select(&kept),
            None => self.selected = self.selected.min(self.shown.len().saturating_sub(1)),
        }
    }

    /// Feeds a key; Some(outcome) when the picker is done or asks to delete.
    pub fn handle(&mut self, key: PickerKey) -> Option<PickerOutcome> {
        let last = self.shown.len().saturating_sub(1);
        let page = self.page.get().max(1);
        match key {
            PickerKey::Up => self.selected = self.selected.saturating_sub(1),
            PickerKey::Down => self.selected = (self.selected + 1).min(last),
            PickerKey::PageUp => self.selected = self.selected.saturating_sub(page),
            PickerKey::PageDown => self.selected = (self.selected + page).min(last),
            PickerKey::Accept => {
                return self
                    .selected_item()
                    .map(|i| PickerOutcome::Chosen(i.value.clone()));
            }
            PickerKey::Cancel => return Some(PickerOutcome::Cancelled),
            PickerKey::Delete if self.allow_delete => {
                return self
                    .selected_item()
                    .map(|i| PickerOutcome::Delete(i.value.clone()));
            }
            PickerKey::Delete => {}
            PickerKey::Char(ch) if !ch.is_control() => {
                self.filter.push(ch);
                self.refilter();
            }
            PickerKey::Char(_) => {}
            PickerKey::Backspace => {
                if self.filter.pop().is_some() {
                    self.refilter();
                }
            }
            PickerKey::DeleteWord => {
                let kept = self.filter.trim_end().len();
                let start = self.filter[..kept]
                    .rfind(char::is_whitespace)
                    .map_or(0, |i| i + 1);
                self.filter.truncate(start);
                self.refilter();
            }
            PickerKey::ClearFilter => {
                self.filter.clear();
                self.refilter();
            }
        }
        None
    }

    fn selected_item(&self) -> Option<&PickerItem> {
        self.shown.get(self.selected).map(|&i| &self.items[i])
    }

    /// Recomputes the matching items, best first (the given order with no
    /// filter), keeping the selected one when it still matches, else
    /// selecting the first.
    fn refilter(&mut self) {
        let kept = self.shown.get(self.selected).copied();
        self.shown = fuzzy_order(&self.filter, &self.items);
        self.selected = kept
            .and_then(|k| self.shown.iter().position(|&i| i == k))
            .unwrap_or(0);
    }

    /// Rows the box wants, at most `max`: borders, filter line, items (one
    /// row when there are none) and hint line.
    pub fn height(&self, max: u16) -> u16 {
        let items = self.items.len().clamp(1, MAX_ITEM_ROWS);
        u16::try_from(items + 4).unwrap_or(u16::MAX).min(max)
    }

    /// Draws the box over `area`.
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let inner = titled_box(&self.title, area, buf, theme);
        if inner.is_empty() {
            return;
        }
        let width = usize::from(inner.width);
        let list_rows = usize::from(inner.height).saturating_sub(2).max(1);
        let mut items = self.item_lines(list_rows, width, theme);
        items.resize(list_rows, Line::default());
        // Too low for the filter and hint lines: the list alone.
        let rows = if inner.height >= 3 {
            let mut rows = vec![self.filter_line(width, theme)];
            rows.extend(items);
            rows.push(Line::styled(cut(&self.hint(), width), theme.dim));
            rows
        } else {
            items
        };
        for (y, line) in (inner.y..inner.bottom()).zip(&rows) {
            buf.set_line(inner.x, y, line, inner.width);
        }
    }

    fn hint(&self) -> String {
        if !self.guard.shows_ready() {
            return NOT_READY.to_string();
        }
        let mut hint = String::from("↑↓ move · enter choose · esc cancel");
        if self.allow_delete {
            hint.push_str(" · ctrl+d delete");
        }
        hint
    }

    fn filter_line(&self, width: usize, theme: &Theme) -> Line<'static> {
        if self.filter.is_empty() {
            return Line::styled(cut("type to filter", width), theme.dim);
        }
        let label = "filter: ";
        let room = width.saturating_sub(text_width(label));
        Line::from(vec![
            Span::styled(cut(label, width), theme.dim),
            Span::styled(cut(&one_line(&self.filter), room), theme.accent),
        ])
    }

    /// The visible window of items, scrolled to keep the selection in it.
    fn item_lines(&self, rows: usize, width: usize, theme: &Theme) -> Vec<Line<'static>> {
        if self.shown.is_empty() {
            let empty = if self.items.is_empty() {
                "nothing to pick"
            } else {
                "nothing matches"
            };
            return vec![Line::styled(cut(empty, width), theme.dim)];
        }
        let rows = rows.max(1);
        self.page.set(rows);
        let mut offset = self.offset.get().min(self.selected);
        if self.selected >= offset + rows {
            offset = self.selected + 1 - rows;
        }
        offset = offset.min(self.shown.len().saturating_sub(rows));
        self.offset.set(offset);
        self.shown[offset..]
            .iter()
            .take(rows)
            .enumerate()
            .map(|(i, &index)| self.item_line(index, offset + i == self.selected, width, theme))
            .collect()
    }

    fn item_line(
        &self,
        index: usize,
        selected: bool,
        width: usize,
        theme: &Theme,
    ) -> Line<'static> {
        let item = &self.items[index];
        // Not ready: nothing looks chosen.
        let selected = selected && self.guard.shows_ready();
        let marker = if selected { "❯ " } else { "  " };
        let label = cut(&one_line(&item.label), width.saturating_sub(2));
        let room = width.saturating_sub(2 + text_width(&label) + 2);
        let detail = one_line(&item.detail);
        let label_style = if self.guard.shows_ready() {
            theme.text
        } else {
            theme.dim
        };
        let mut spans = vec![
            Span::styled(marker, theme.accent),
            Span::styled(label, label_style),
        ];
        if !detail.is_empty() && room > 0 {
            spans.push(Span::styled(format!("  {}", cut(&detail, room)), theme.dim));
        }
        let line = Line::from(spans);
        if selected {
            let pad = width.saturating_sub(line.width());
            let mut line = line;
            line.spans.push(Span::raw(" ".repeat(pad)));
            line.patch_style(theme.selected)
        } else {
            line
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::buffer_rows;

    fn item(label: &str, detail: &str) -> PickerItem {
        PickerItem {
            label: label.into(),
            detail: detail.into(),
            value: label.to_lowercase(),
        }
    }

    /// A picker as it looks once it takes keys.
    fn ready_picker(title: &str, items: Vec<PickerItem>, allow_delete: bool) -> Picker {
        let mut picker = Picker::new(title, items, allow_delete);
        picker.guard = Guard::new(std::time::Duration::ZERO);
        picker.guard.frame(std::time::Instant::now());
        picker
    }

    #[test]
    fn until_it_is_ready_nothing_is_selected_and_the_hint_says_why() {
        let picker = Picker::new("Model", models(), false);
        let rows = draw(&picker, 80, 20);
        assert!(rows[2].starts_with("│  Sonnet"), "{}", rows[2]);
        assert!(rows[5].contains(NOT_READY), "{}", rows[5]);
        assert!(!rows.join("\n").contains("enter choose"));
    }

    #[test]
    fn a_paste_never_chooses() {
        let mut picker = ready_picker("Model", models(), true);
        for c in "\n\rGPT\u{7f}".chars() {
            assert_eq!(picker.handle(PickerKey::Char(c)), None);
        }
        assert_eq!(
            picker.handle(PickerKey::Accept),
            Some(PickerOutcome::Chosen("gpt-5".into()))
        );
    }

    fn models() -> Vec<PickerItem> {
        vec![
            item("Sonnet", "anthropic · 200k"),
            item("Haiku", "anthropic · 200k"),
            item("GPT-5", "openai · 400k"),
        ]
    }

    fn draw(picker: &Picker, width: u16, max: u16) -> Vec<String> {
        let mut buf = Buffer::empty(Rect::new(0, 0, width, picker.height(max)));
        picker.render(buf.area, &mut buf, &Theme::plain());
        buffer_rows(&buf)
    }

    fn typed(picker: &mut Picker, text: &str) {
        for ch in text.chars() {
            picker.handle(PickerKey::Char(ch));
        }
    }

    fn shown(picker: &Picker) -> Vec<&str> {
        picker
            .shown
            .iter()
            .map(|&i| picker.items[i].label.as_str())
            .collect()
    }

    #[test]
    fn the_filter_matches_fuzzily_best_first() {
        let mut picker = ready_picker("Model", models(), false);
        typed(&mut picker, "hku");
        assert_eq!(shown(&picker), ["Haiku"]);
        picker.handle(PickerKey::ClearFilter);
        typed(&mut picker, "opn");
        assert_eq!(shown(&picker), ["GPT-5"], "the detail matches too");
        picker.handle(PickerKey::ClearFilter);
        typed(&mut picker, "an");
        assert_eq!(shown(&picker)[..2], ["Sonnet", "Haiku"]);
    }

    #[test]
    fn ctrl_w_deletes_the_filter_s_last_word_and_ctrl_u_all_of_it() {
        let mut picker = ready_picker("Model", models(), false);
        typed(&mut picker, "open ai  ");
        picker.handle(PickerKey::DeleteWord);
        assert_eq!(picker.filter, "open ");
        picker.handle(PickerKey::DeleteWord);
        assert_eq!(picker.filter, "");
        typed(&mut picker, "x");
        assert!(shown(&picker).is_empty());
        picker.handle(PickerKey::ClearFilter);
        assert_eq!(shown(&picker).len(), 3);
    }

    #[test]
    fn the_box_lists_items_with_a_filter_line_and_a_hint() {
        let picker = ready_picker("Model", models(), false);
        assert_eq!(
            draw(&picker, 40, 20),
            [
                "╭ Model ───────────────────────────────╮",
                "│type to filter                        │",
                "│❯ Sonnet  anthropic · 200k            │",
                "│  Haiku  anthropic · 200k             │",
                "│  GPT-5  openai · 400k                │",
                "│↑↓ move · enter choose · esc cancel   │",
                "╰──────────────────────────────────────╯",
            ]
        );
    }

    #[test]
    fn the_selection_is_highlighted_across_the_row() {
        let picker = ready_picker("Model", models(), false);
        let mut buf = Buffer::empty(Rect::new(0, 0, 40, picker.height(20)));
        let theme = Theme::colored();
        picker.render(buf.area, &mut buf, &theme);
        let reversed = theme.selected.add_modifier;
        assert!(buf[(2, 2)].modifier.contains(reversed));
        assert!(buf[(37, 2)].modifier.contains(reversed));
        assert!(!buf[(2, 3)].modifier.contains(reversed));
    }

    #[test]
    fn typing_filters_and_enter_chooses() {
        let mut picker = ready_picker("Model", models(), false);
        for ch in "AN".chars() {
            assert_eq!(picker.handle(PickerKey::Char(ch)), None);
        }
        let rows = draw(&picker, 40, 20);
        assert_eq!(rows[1], "│filter: AN                            │");
        assert_eq!(rows[2], "│❯ Sonnet  anthropic · 200k            │");
        assert_eq!(rows[3], "│  Haiku  anthropic · 200k             │");
        picker.handle(PickerKey::Down);
        picker.handle(PickerKey::Down);
        assert_eq!(
            picker.handle(PickerKey::Accept),
            Some(PickerOutcome::Chosen("haiku".into()))
        );
        picker.handle(PickerKey::Char('x'));
        assert_eq!(
            draw(&picker, 40, 20)[2],
            "│nothing matches                       │"
        );
        assert_eq!(picker.handle(PickerKey::Accept), None);
        picker.handle(PickerKey::Backspace);
        assert_eq!(
            picker.handle(PickerKey::Accept),
            Some(PickerOutcome::Chosen("sonnet".into()))
        );
        assert_eq!(
            picker.handle(PickerKey::Cancel),
            Some(PickerOutcome::Cancelled)
        );
    }

    #[test]
    fn the_list_scrolls_to_keep_the_selection_visible() {
        let items = (1..=30).map(|n| item(&format!("item {n}"), "")).collect();
        let mut picker = ready_picker("Sessions", items, false);
        assert_eq!(picker.height(100), 16);
        let rows = draw(&picker, 30, 8);
        assert_eq!(rows[2], "│❯ item 1                    │");
        assert_eq!(rows[5], "│  item 4                    │");
        for _ in 0..5 {
            picker.handle(PickerKey::Down);
        }
        let rows = draw(&picker, 30, 8);
        assert_eq!(rows[2], "│  item 3                    │");
        assert_eq!(rows[5], "│❯ item 6                    │");
        picker.handle(PickerKey::PageDown);
        assert_eq!(draw(&picker, 30, 8)[5], "│❯ item 10                   │");
        picker.handle(PickerKey::PageUp);
        picker.handle(PickerKey::PageUp);
        picker.handle(PickerKey::PageUp);
        assert_eq!(draw(&picker, 30, 8)[2], "│❯ item 1                    │");
    }

    #[test]
    fn delete_only_when_allowed() {
        let mut sessions = ready_picker("Sessions", models(), true);
        sessions.handle(PickerKey::Down);
        assert_eq!(
            sessions.handle(PickerKey::Delete),
            Some(PickerOutcome::Delete("haiku".into()))
        );
        assert!(draw(&sessions, 60, 20)[5].contains("· ctrl+d delete"));
        sessions.remove("haiku");
        assert_eq!(
            draw(&sessions, 40, 20)[3],
            "│❯ GPT-5  openai · 400k                │"
        );
        let mut models_only = ready_picker("Model", models(), false);
        assert_eq!(models_only.handle(PickerKey::Delete), None);
        assert!(!draw(&models_only, 60, 20)[5].contains("delete"));
    }

    #[test]
    fn select_and_remove_keep_a_sensible_selection() {
        let mut picker = ready_picker("Model", models(), false);
        picker.handle(PickerKey::Char('h'));
        picker.select("gpt-5");
        assert_eq!(
            picker.handle(PickerKey::Accept),
            Some(PickerOutcome::Chosen("gpt-5".into()))
        );
        picker.select("missing");
        picker.remove("sonnet");
        assert_eq!(
            picker.handle(PickerKey::Accept),
            Some(PickerOutcome::Chosen("gpt-5".into()))
        );
        picker.remove("gpt-5");
        picker.remove("haiku");
        assert_eq!(draw(&picker, 30, 20)[2], "│nothing to pick             │");
        assert_eq!(picker.handle(PickerKey::Accept), None);
        assert_eq!(picker.handle(PickerKey::Down), None);
    }

    #[test]
    fn tiny_areas_never_fail() {
        let picker = ready_picker("A very long picker title", models(), true);
        for (width, height) in [(0, 0), (1, 1), (2, 2), (3, 3), (5, 4), (12, 5)] {
            let mut buf = Buffer::empty(Rect::new(0, 0, width, height));
            picker.render(buf.area, &mut buf, &Theme::colored());
            picker.render(Rect::new(0, 0, 80, 80), &mut buf, &Theme::colored());
        }
        assert_eq!(draw(&picker, 12, 3)[1], "│❯ Sonnet  │");
    }
}
