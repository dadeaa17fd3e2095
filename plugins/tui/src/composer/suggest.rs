//! The slash-command list that opens above the box while a command name is
//! typed: fuzzy-matched, exact prefixes first.

use nucleo_matcher::pattern::{Atom, AtomKind, CaseMatching, Normalization};
use nucleo_matcher::{Config, Matcher, Utf32Str};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::theme::Theme;

/// Rows the list shows at most; it scrolls past that.
pub const MAX_SUGGESTIONS: usize = 5;

/// A slash command the list can offer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandEntry {
    /// The name without the slash, e.g. `models`.
    pub name: String,
    pub description: String,
}

impl CommandEntry {
    /// A command named `name` (without the slash).
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> CommandEntry {
        CommandEntry {
            name: name.into(),
            description: description.into(),
        }
    }
}

/// The open or closed list and its selection.
pub struct Suggestions {
    matcher: Matcher,
    matches: Vec<CommandEntry>,
    selected: usize,
    /// The draft the list was last computed for.
    draft: String,
    /// Closed with Esc: stays closed until the draft changes.
    dismissed: bool,
}

impl Default for Suggestions {
    fn default() -> Suggestions {
        Suggestions::new()
    }
}

/// The command name being typed, when the draft is `/` and a name so far.
fn typed_name(draft: &str) -> Option<&str> {
    let name = draft.strip_prefix('/')?;
    (!name.contains(char::is_whitespace)).then_some(name)
}

impl Suggestions {
    /// A closed list.
    pub fn new() -> Suggestions {
        Suggestions {
            matcher: Matcher::new(Config::DEFAULT),
            matches: Vec::new(),
            selected: 0,
            draft: String::new(),
            dismissed: false,
        }
    }

    /// Recomputes the matches for the draft; returns whether the list is
    /// open (the draft is `/` and a name without whitespace, with at least
    /// one match, and was not dismissed).
    pub fn update(&mut self, draft: &str, commands: &[CommandEntry]) -> bool {
        let same_draft = draft == self.draft;
        let kept = same_draft
            .then(|| self.matches.get(self.selected).map(|c| c.name.clone()))
            .flatten();
        if !same_draft {
            self.draft = draft.to_owned();
            self.dismissed = false;
        }
        self.matches = match typed_name(draft) {
            Some(name) => self.rank(name, commands),
            None => Vec::new(),
        };
        // Called every frame: the selection stays on its command.
        self.selected = kept
            .and_then(|name| self.matches.iter().position(|c| c.name == name))
            .unwrap_or(0);
        self.is_open()
    }

    /// Commands matching `name`, best first: exact prefixes (shorter names
    /// first), then fuzzy matches by score; ties keep the given order.
    fn rank(&mut self, name: &str, commands: &[CommandEntry]) -> Vec<CommandEntry> {
        if name.is_empty() {
            return commands.to_vec();
        }
        let atom = Atom::new(
            name,
            CaseMatching::Ignore,
            Normalization::Smart,
            AtomKind::Fuzzy,
            false,
        );
        let lowered = name.to_lowercase();
        let mut chars = Vec::new();
        let mut scored: Vec<(bool, u16, &CommandEntry)> = commands
            .iter()
            .filter_map(|command| {
                let score =
                    atom.score(Utf32Str::new(&command.name, &mut chars), &mut self.matcher)?;
                let prefix = command.name.to_lowercase().starts_with(&lowered);
                Some((prefix, score, command))
            })
            .collect();
        scored.sort_by(|a, b| {
            b.0.cmp(&a.0).then_with(|| match a.0 {
                true => a.2.name.len().cmp(&b.2.name.len()),
                false => b.1.cmp(&a.1),
            })
        });
        scored
            .into_iter()
            .map(|(_, _, command)| command.clone())
            .collect()
    }

    /// Whether the list is showing.
    pub fn is_open(&self) -> bool {
        !self.dismissed && !self.matches.is_empty()
    }

    /// Closes the list (Esc) until the draft changes again.
    pub fn close(&mut self) {
        self.dismissed = true;
    }

    /// Selects the row above, wrapping to the last.
    pub fn up(&mut self) {
        if let Some(last) = self.matches.len().checked_sub(1) {
            self.selected = self.selected.checked_sub(1).unwrap_or(last);
        }
    }

    /// Selects the row below, wrapping to the first.
    pub fn down(&mut self) {
        if !self.matches.is_empty() {
            self.selected = (self.selected + 1) % self.matches.len();
        }
    }

    /// The selected command as it should replace the draft on Tab:
    /// `/name ` (with a trailing space).
    pub fn completion(&self) -> Option<String> {
        self.selected().map(|command| format!("/{} ", command.name))
    }

    /// The selected command, while the list is open.
    pub fn selected(&self) -> Option<&CommandEntry> {
        self.is_open()
            .then(|| self.matches.get(self.selected))
            .flatten()
    }

    /// Rows the list needs (0 when closed).
    pub fn height(&self) -> u16 {
        if !self.is_open() {
            return 0;
        }
        let rows = self.matches.len().min(MAX_SUGGESTIONS);
        u16::try_from(rows).unwrap_or(0)
    }

    /// Draws the visible rows: `/name`, padded to a common column, then the
    /// dim description; the selected row in `theme.selected`.
    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let area = area.intersection(buf.area);
        if !self.is_open() || area.is_empty() {
            return;
        }
        let rows = usize::from(area.height).min(MAX_SUGGESTIONS);
        // Scrolled just enough that the selection is on screen.
        let first = (self.selected + 1).saturating_sub(rows);
        let shown = self.matches.iter().enumerate().skip(first).take(rows);
        let name_width = self.name_column(area.width);
        for ((index, command), y) in shown.zip(area.y..area.bottom()) {
            let row = Rect {
                y,
                height: 1,
                ..area
            };
            let selected = index == self.selected;
            let name_style = if selected {
                theme.selected
            } else {
                theme.accent
            };
            let description_style = if selected { theme.selected } else { theme.dim };
            if selected {
                buf.set_style(row, theme.selected);
            }
            let width = usize::from(area.width);
            let (x, _) = buf.set_stringn(
                area.x.saturating_add(1),
                y,
                format!("/{}", command.name),
                width.saturating_sub(1),
                name_style,
            );
            let description_x = (area.x.saturating_add(1))
                .saturating_add(name_width)
                .max(x.saturating_add(2));
            let room = usize::from(area.right().saturating_sub(description_x));
            buf.set_stringn(
                description_x,
                y,
                &command.description,
                room,
                description_style,
            );
        }
    }

    /// Columns for `/name` and the gap after it: the longest name shown,
    /// but never more than half the width so descriptions keep some room.
    fn name_column(&self, width: u16) -> u16 {
        let longest = self
            .matches
            .iter()
            .map(|c| c.name.chars().count() + 3)
            .max()
            .unwrap_or(0);
        u16::try_from(longest).unwrap_or(u16::MAX).min(width / 2)
    }
}

#[cfg(test)]
mod tests {
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;
    use ratatui::style::Modifier;

    use crate::testing::buffer_rows;

    use super::{CommandEntry, Suggestions};
    use crate::theme::Theme;

    fn commands() -> Vec<CommandEntry> {
        [
            ("compact", "Summarise earlier messages"),
            ("models", "Pick provider and model"),
            ("effort", "Pick reasoning effort"),
            ("thinking", "Show or hide reasoning"),
            ("mcp", "MCP servers"),
            ("new", "Fresh conversation"),
            ("quit", "Quit"),
        ]
        .into_iter()
        .map(|(name, description)| CommandEntry::new(name, description))
        .collect()
    }

    fn names(suggestions: &Suggestions) -> Vec<&str> {
        suggestions
            .matches
            .iter()
            .map(|c| c.name.as_str())
            .collect()
    }

    #[test]
    fn a_slash_alone_lists_every_command_in_order() {
        let mut list = Suggestions::new();
        assert!(list.update("/", &commands()));
        assert_eq!(names(&list).len(), 7);
        assert_eq!(names(&list).first(), Some(&"compact"));
        assert_eq!(list.height(), 5);
    }

    #[test]
    fn exact_prefixes_rank_before_fuzzy_matches() {
        let mut list = Suggestions::new();
        assert!(list.update("/m", &commands()));
        let ranked = names(&list);
        assert_eq!(ranked.get(..2), Some(&["mcp", "models"][..]));
        assert!(ranked.contains(&"compact"), "{ranked:?}");
        assert!(list.update("/mdl", &commands()));
        assert_eq!(names(&list), vec!["models"]);
        assert!(list.update("/THI", &commands()));
        assert_eq!(names(&list), vec!["thinking"]);
    }

    #[test]
    fn the_list_closes_on_whitespace_no_match_or_no_slash() {
        let mut list = Suggestions::new();
        assert!(!list.update("/models gpt", &commands()));
        assert!(!list.update("/zzz", &commands()));
        assert!(!list.update("models", &commands()));
        assert!(!list.update("", &commands()));
        assert!(!list.update("/", &[]));
        assert_eq!(list.height(), 0);
        assert_eq!(list.completion(), None);
    }

    #[test]
    fn selection_wraps_and_completes_with_a_trailing_space() {
        let mut list = Suggestions::new();
        list.update("/", &commands());
        assert_eq!(list.completion().as_deref(), Some("/compact "));
        list.up();
        assert_eq!(list.selected().map(|c| c.name.as_str()), Some("quit"));
        list.down();
        list.down();
        assert_eq!(list.completion().as_deref(), Some("/models "));
        // Redrawing with the same draft keeps the selection.
        list.update("/", &commands());
        assert_eq!(list.completion().as_deref(), Some("/models "));
        list.update("/e", &commands());
        assert_eq!(list.completion().as_deref(), Some("/effort "));
    }

    #[test]
    fn escape_closes_until_the_draft_changes() {
        let mut list = Suggestions::new();
        list.update("/mo", &commands());
        list.close();
        assert!(!list.is_open());
        assert!(!list.update("/mo", &commands()));
        assert_eq!(list.selected(), None);
        assert!(list.update("/m", &commands()));
    }

    #[test]
    fn rows_show_name_and_description_with_the_selection_highlighted() {
        let mut list = Suggestions::new();
        list.update("/", &commands());
        for _ in 0..6 {
            list.down();
        }
        let area = Rect::new(0, 0, 40, 5);
        let mut buf = Buffer::empty(area);
        list.render(area, &mut buf, &Theme::plain());
        assert_eq!(
            buffer_rows(&buf),
            vec![
                " /effort    Pick reasoning effort",
                " /thinking  Show or hide reasoning",
                " /mcp       MCP servers",
                " /new       Fresh conversation",
                " /quit      Quit",
            ]
        );
        let reversed = |y| buf[(0, y)].modifier.contains(Modifier::REVERSED);
        assert!(reversed(4) && !reversed(3));
        assert!(buf[(12, 0)].modifier.contains(Modifier::DIM));
    }

    #[test]
    fn narrow_or_empty_areas_clip_without_panicking() {
        let mut list = Suggestions::new();
        list.update("/", &commands());
        let mut buf = Buffer::empty(Rect::new(0, 0, 8, 2));
        list.render(Rect::new(0, 0, 8, 2), &mut buf, &Theme::plain());
        assert_eq!(buffer_rows(&buf), vec![" /compac", " /models"]);
        list.render(Rect::new(0, 0, 0, 0), &mut buf, &Theme::plain());
        let mut one = Buffer::empty(Rect::new(0, 0, 1, 1));
        list.render(Rect::new(0, 0, 1, 1), &mut one, &Theme::plain());
        assert_eq!(buffer_rows(&one), vec![""]);
    }
}
