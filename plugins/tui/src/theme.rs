//! Colours and text styles of the screen, in one place so `NO_COLOR`
//! (https://no-color.org) swaps them all for plain modifiers.

use ratatui::style::{Color, Modifier, Style};

/// Every style the screen draws with. Widgets take a `&Theme` and never
/// build colours of their own.
#[derive(Debug, Clone)]
pub struct Theme {
    pub text: Style,
    pub dim: Style,
    pub accent: Style,
    pub user: Style,
    pub heading: [Style; 6],
    pub emphasis: Style,
    pub strong: Style,
    pub strikethrough: Style,
    pub code_inline: Style,
    pub code_block: Style,
    pub link: Style,
    pub quote: Style,
    pub list_marker: Style,
    pub rule: Style,
    pub table_border: Style,
    pub reasoning: Style,
    pub diff_added: Style,
    pub diff_removed: Style,
    pub diff_hunk: Style,
    pub tool_running: Style,
    pub tool_done: Style,
    pub tool_failed: Style,
    pub error: Style,
    pub warn: Style,
    pub status: Style,
    pub selected: Style,
    pub border: Style,
    /// False under NO_COLOR: code is not highlighted either.
    pub colors: bool,
    /// Patched onto `diff_added`/`diff_removed` for the words that changed
    /// within a changed line.
    pub diff_word: Style,
}

impl Theme {
    /// The theme for this process: plain when `NO_COLOR` is set to anything
    /// non-empty, coloured otherwise.
    pub fn from_env() -> Theme {
        match std::env::var_os("NO_COLOR") {
            Some(v) if !v.is_empty() => Theme::plain(),
            _ => Theme::colored(),
        }
    }

    pub fn colored() -> Theme {
        let bold = Style::new().add_modifier(Modifier::BOLD);
        Theme {
            text: Style::new(),
            dim: Style::new().add_modifier(Modifier::DIM),
            accent: Style::new().fg(Color::Cyan),
            user: Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            heading: [
                bold.fg(Color::Magenta).add_modifier(Modifier::UNDERLINED),
                bold.fg(Color::Magenta),
                bold.fg(Color::Blue),
                bold,
                bold,
                bold.add_modifier(Modifier::ITALIC),
            ],
            emphasis: Style::new().add_modifier(Modifier::ITALIC),
            strong: bold,
            strikethrough: Style::new().add_modifier(Modifier::CROSSED_OUT),
            code_inline: Style::new().fg(Color::Yellow),
            code_block: Style::new(),
            link: Style::new()
                .fg(Color::Blue)
                .add_modifier(Modifier::UNDERLINED),
            quote: Style::new().fg(Color::Green),
            list_marker: Style::new().fg(Color::Cyan),
            rule: Style::new().add_modifier(Modifier::DIM),
            table_border: Style::new().add_modifier(Modifier::DIM),
            reasoning: Style::new().add_modifier(Modifier::DIM | Modifier::ITALIC),
            diff_added: Style::new().fg(Color::Green),
            diff_removed: Style::new().fg(Color::Red),
            diff_hunk: Style::new().fg(Color::Cyan).add_modifier(Modifier::DIM),
            tool_running: Style::new().fg(Color::Yellow),
            tool_done: Style::new().fg(Color::Green),
            tool_failed: Style::new().fg(Color::Red),
            error: Style::new().fg(Color::Red),
            warn: Style::new().fg(Color::Yellow),
            status: Style::new().add_modifier(Modifier::DIM),
            selected: Style::new().add_modifier(Modifier::REVERSED),
            border: Style::new().add_modifier(Modifier::DIM),
            colors: true,
            diff_word: Style::new().add_modifier(Modifier::REVERSED),
        }
    }

    /// No colours, only bold, italic, underline, dim and reverse video.
    pub fn plain() -> Theme {
        let none = Style::new();
        let bold = none.add_modifier(Modifier::BOLD);
        Theme {
            text: none,
            dim: none.add_modifier(Modifier::DIM),
            accent: bold,
            user: bold,
            heading: [
                bold.add_modifier(Modifier::UNDERLINED),
                bold,
                bold,
                bold,
                bold,
                bold.add_modifier(Modifier::ITALIC),
            ],
            emphasis: none.add_modifier(Modifier::ITALIC),
            strong: bold,
            strikethrough: none.add_modifier(Modifier::CROSSED_OUT),
            code_inline: none,
            code_block: none,
            link: none.add_modifier(Modifier::UNDERLINED),
            quote: none.add_modifier(Modifier::ITALIC),
            list_marker: none,
            rule: none,
            table_border: none,
            reasoning: none.add_modifier(Modifier::DIM | Modifier::ITALIC),
            diff_added: none,
            diff_removed: none,
            diff_hunk: none.add_modifier(Modifier::DIM),
            tool_running: none,
            tool_done: none,
            tool_failed: bold,
            error: bold,
            warn: bold,
            status: none,
            selected: none.add_modifier(Modifier::REVERSED),
            border: none,
            colors: false,
            diff_word: bold.add_modifier(Modifier::REVERSED),
        }
    }
}
