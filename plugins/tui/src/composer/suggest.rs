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
            CaseMatching::Smart,
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
                area.x + 1,
                y,
                format!("/{}", command.name),
                width.saturating_sub(1),
                name_style,
            );
            let description_x = (area.x + 1)
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
