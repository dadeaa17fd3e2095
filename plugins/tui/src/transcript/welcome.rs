//! The header a new session opens with: which uji, where, on which model,
//! and the three things worth knowing first.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use super::tool::cut;
use crate::theme::Theme;

/// What the header says. The model is kept up to date until the first
/// message (`/model` before anything was said changes it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Welcome {
    pub version: String,
    /// The working directory, with the home directory as `~`.
    pub directory: String,
    /// `provider/model (effort)`; none when no provider is set up.
    pub model: Option<String>,
    /// `(key, what it does)`, in order.
    pub hints: Vec<(String, String)>,
}

/// Narrower than this, the box is left out and the lines stand alone.
const MIN_BOX_WIDTH: usize = 24;

impl Welcome {
    pub fn lines(&self, width: u16, theme: &Theme) -> Vec<Line<'static>> {
        let width = usize::from(width);
        let boxed = width >= MIN_BOX_WIDTH;
        // "│ " and " │" around each row.
        let room = if boxed { width - 4 } else { width };
        let rows = self.rows(room, theme);
        if !boxed {
            return rows.into_iter().map(Line::from).collect();
        }
        let inner = rows
            .iter()
            .map(|r| spans_width(r))
            .max()
            .unwrap_or(0)
            .min(room);
        let border = theme.border;
        let mut lines = vec![Line::styled(format!("╭{}╮", "─".repeat(inner + 2)), border)];
        for row in rows {
            let pad = inner.saturating_sub(spans_width(&row));
            let mut spans = vec![Span::styled("│ ", border)];
            spans.extend(row);
            spans.push(Span::raw(" ".repeat(pad)));
            spans.push(Span::styled(" │", border));
            lines.push(Line::from(spans));
        }
        lines.push(Line::styled(format!("╰{}╯", "─".repeat(inner + 2)), border));
        lines
    }

    /// The rows inside the box, each cut to `room` columns.
    fn rows(&self, room: usize, theme: &Theme) -> Vec<Vec<Span<'static>>> {
        let text = |s: &str, style: Style| vec![Span::styled(cut(s, room), style)];
        let name = format!("uji {}", self.version);
        let mut first = text(&name, theme.strong);
        let left = room.saturating_sub(name.width() + 3);
        if left > 0 {
            first.push(Span::styled(" · ", theme.dim));
            first.push(Span::styled(cut(&self.directory, left), theme.text));
        }
        let mut rows = vec![first];
        rows.push(match &self.model {
            Some(model) => text(model, theme.accent),
            None => text(
                "no model is set up: /login adds a key, /model picks one",
                theme.warn,
            ),
        });
        for (key, what) in &self.hints {
            let key_width = key.width();
            let mut row = vec![Span::styled(cut(key, room), theme.accent)];
            if key_width + 1 < room {
                row.push(Span::styled(
                    format!(" {}", cut(what, room - key_width - 1)),
                    theme.dim,
                ));
            }
            rows.push(row);
        }
        rows
    }
}

fn spans_width(spans: &[Span<'_>]) -> usize {
    spans.iter().map(|s| s.content.width()).sum()
}

/// `path` with the home directory written `~`.
pub fn tilde(path: &str, home: Option<&str>) -> String {
    match home.filter(|h| !h.is_empty() && *h != "/") {
        Some(home) if path == home => "~".to_string(),
        Some(home) => match path.strip_prefix(home) {
            Some(rest) if rest.starts_with('/') => format!("~{rest}"),
            _ => path.to_string(),
        },
        None => path.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_home_directory_is_written_as_a_tilde_and_only_at_a_path_boundary() {
        let home = Some("/home/ada");
        assert_eq!(tilde("/home/ada", home), "~");
        assert_eq!(tilde("/home/ada/src/uji", home), "~/src/uji");
        assert_eq!(tilde("/home/adam/src", home), "/home/adam/src");
        assert_eq!(tilde("/srv/x", home), "/srv/x");
        assert_eq!(tilde("/srv/x", Some("/")), "/srv/x");
        assert_eq!(tilde("/srv/x", None), "/srv/x");
    }
}
