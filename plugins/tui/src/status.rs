//! The status line: model and effort, the approval mode, plugins' items,
//! queue, context meter, tokens and (where prices are known) cost.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use uji_protocol::ApprovalMode;

use crate::app::Status;
use crate::theme::Theme;

const SPINNER: &[&str] = &["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

pub fn spinner(frame: usize) -> &'static str {
    SPINNER[frame % SPINNER.len()]
}

/// `12.3k` for 12,345 tokens.
pub fn tokens(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1_000.0),
        _ => format!("{:.1}M", n as f64 / 1_000_000.0),
    }
}

/// `$0.042` (under a dollar), `$1.27`, `$113`: what the session cost.
pub fn dollars(cost: f64) -> String {
    match cost {
        c if c < 1.0 => format!("${c:.3}"),
        c if c < 100.0 => format!("${c:.2}"),
        c => format!("${c:.0}"),
    }
}

/// How the status line shows a mode other than asking.
fn mode_badge(mode: ApprovalMode) -> Option<&'static str> {
    match mode {
        ApprovalMode::AcceptEdits => Some("⏵⏵ accept edits"),
        ApprovalMode::Plan => Some("⏸ plan mode"),
        ApprovalMode::Ask | ApprovalMode::Unknown => None,
    }
}

pub fn render(status: &Status, area: Rect, buf: &mut Buffer, theme: &Theme) {
    if area.height == 0 || area.width == 0 {
        return;
    }
    let model = match &status.model {
        Some(m) => {
            let effort = m
                .effort
                .as_deref()
                .map(|e| format!(" · {e}"))
                .unwrap_or_default();
            format!("{}/{}{effort}", m.provider, m.model)
        }
        None => "no model set up".to_string(),
    };
    let mut left = Vec::new();
    match status.vim {
        Some(crate::composer::VimMode::Normal) => {
            left.push(Span::styled(" NORMAL ", theme.selected));
            left.push(Span::raw(" "));
        }
        Some(crate::composer::VimMode::Insert) => {
            left.push(Span::styled("-- INSERT -- ", theme.status));
        }
        None => {}
    }
    left.push(Span::styled(model, theme.status));
    if let Some(badge) = mode_badge(status.mode) {
        left.push(Span::raw(" "));
        left.push(Span::styled(format!(" {badge} "), theme.selected));
    }
    for text in status.items.values() {
        left.push(Span::raw(" "));
        left.push(Span::styled(format!(" {text} "), theme.selected));
    }
    let mut right = Vec::new();
    if !status.queued.is_empty() {
        right.push(format!("{} queued", status.queued.len()));
    }
    if let Some(percent) = status
        .context_used
        .saturating_mul(100)
        .checked_div(status.context_window)
    {
        right.push(format!("ctx {percent}%"));
    }
    let usage = &status.session_usage;
    right.push(format!(
        "↑{} ↓{}",
        tokens(usage.input),
        tokens(usage.output)
    ));
    if let Some(cost) = status.cost {
        right.push(dollars(cost));
    }
    let right = match &status.hint {
        Some((hint, _)) => hint.clone(),
        None => right.join(" · "),
    };
    let left_width: usize = left.iter().map(|s| s.content.width()).sum();
    let gap = usize::from(area.width).saturating_sub(left_width + right.width());
    if gap > 0 {
        left.push(Span::raw(" ".repeat(gap)));
        left.push(Span::styled(right, theme.status));
    }
    buf.set_line(area.x, area.y, &Line::from(left), area.width);
}
