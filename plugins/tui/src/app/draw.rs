//! One frame: the transcript on top, then the activity line, the
//! suggestions, the input (or the open question or picker), and the status
//! line. ratatui sends only the cells that changed since the last frame.

use std::io;

use crossterm::terminal::{BeginSynchronizedUpdate, EndSynchronizedUpdate};
use crossterm::{execute, queue};

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};

use super::state::App;
use crate::keys::Mode;
use crate::status;
use crate::terminal::Screen;

const PLACEHOLDER: &str = "Ask uji anything · / for commands · ! for shell";

pub fn frame(app: &mut App, screen: &mut Screen) -> io::Result<()> {
    app.update_title();
    app.update_cursor_shape();
    for bytes in app.to_terminal.drain(..) {
        io::Write::write_all(screen.backend_mut(), &bytes)?;
    }
    // Synchronized output (DEC mode 2026): the terminal shows the frame
    // whole, never half drawn; terminals without it ignore the mode.
    queue!(screen.backend_mut(), BeginSynchronizedUpdate)?;
    screen.draw(|frame| render(app, frame))?;
    execute!(screen.backend_mut(), EndSynchronizedUpdate)?;
    app.dirty = false;
    Ok(())
}

/// Draws the whole screen into `frame` (also used by the snapshot tests).
pub fn render(app: &mut App, frame: &mut Frame<'_>) {
    let area = frame.area();
    if area.width == 0 || area.height == 0 {
        return;
    }
    app.question_drawn();
    let bottom_height = bottom_height(app, area) + draft_row(app);
    let activity =
        u16::from(app.busy() || !app.viewport.is_following() || !app.status.queued.is_empty());
    let queued = u16::try_from(app.status.queued.len().min(3)).unwrap_or(3);
    let [
        transcript,
        activity_area,
        jobs_area,
        queue_area,
        suggest_area,
        bottom,
        status_area,
    ] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(activity),
        Constraint::Length(app.jobs.height()),
        Constraint::Length(queued),
        Constraint::Length(suggestions_height(app)),
        Constraint::Length(bottom_height),
        Constraint::Length(1),
    ])
    .areas(area);
    let buf = frame.buffer_mut();
    app.viewport
        .render(&mut app.transcript, transcript, buf, &app.theme, app.frame);
    draw_activity(app, activity_area, buf);
    app.jobs.render(jobs_area, buf, &app.theme);
    draw_queue(app, queue_area, buf);
    if app.files.is_open() && suggest_area.height > 0 {
        app.files.render(suggest_area, buf, &app.theme);
    } else if app.suggestions.is_open() && suggest_area.height > 0 {
        app.suggestions.render(suggest_area, buf, &app.theme);
    }
    let cursor = draw_bottom(app, bottom, buf);
    app.status.vim = app.ui.vim.then(|| app.composer.vim_mode());
    status::render(&app.status, status_area, buf, &app.theme);
    if let Some((x, y)) = cursor {
        frame.set_cursor_position((x, y));
    }
}

fn suggestions_height(app: &App) -> u16 {
    if app.mode() == Mode::Suggest && app.files.is_open() {
        app.files.height()
    } else if app.mode() == Mode::Suggest {
        app.suggestions.height()
    } else {
        0
    }
}

/// The row under an open question that shows the draft it hides (what
/// was typed before the question was ready went there).
fn draft_row(app: &App) -> u16 {
    u16::from(app.question_guard().is_some() && !app.composer.is_empty())
}

/// Rows for the input box, or for the question or picker in its place.
fn bottom_height(app: &App, area: Rect) -> u16 {
    // A question may take three quarters of the screen: what it asks
    // about matters more than the history above it.
    let max = area.height.saturating_sub(4).max(3) * 3 / 4;
    if let Some(approval) = app.approvals.first() {
        approval.height(area.width, max.max(5))
    } else if let Some(prompt) = &app.login.prompt {
        prompt.height()
    } else if let Some((_, picker)) = &app.picker {
        picker.height(max.max(5))
    } else {
        // A rule above and below the text.
        app.composer.height(area.width.saturating_sub(2)) + 2
    }
}

fn draw_bottom(app: &mut App, area: Rect, buf: &mut Buffer) -> Option<(u16, u16)> {
    if area.height == 0 {
        return None;
    }
    let area = if draft_row(app) == 1 && area.height > 1 {
        let [question, draft] =
            Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(area);
        draw_draft(app, draft, buf);
        question
    } else {
        area
    };
    if let Some(approval) = app.approvals.first() {
        return approval.render(area, buf, &app.theme);
    }
    if let Some(prompt) = &app.login.prompt {
        return prompt.render(area, buf, &app.theme);
    }
    if let Some((_, picker)) = &app.picker {
        picker.render(area, buf, &app.theme);
        return None;
    }
    let rule = Line::styled("─".repeat(usize::from(area.width)), app.theme.border);
    buf.set_line(area.x, area.y, &rule, area.width);
    if area.height >= 2 {
        buf.set_line(area.x, area.bottom() - 1, &rule, area.width);
    }
    let inner = Rect {
        x: area.x + 1,
        y: area.y + 1,
        width: area.width.saturating_sub(2),
        height: area.height.saturating_sub(2),
    };
    app.composer.render(inner, buf, &app.theme, PLACEHOLDER)
}

/// `✎ draft: …` with the end of the draft (the latest typing) in view.
fn draw_draft(app: &App, area: Rect, buf: &mut Buffer) {
    const LABEL: &str = " ✎ draft: ";
    let text = app.composer.text().replace('\n', " ↵ ");
    let room = usize::from(area.width).saturating_sub(LABEL.chars().count());
    let line = Line::from(vec![
        Span::styled(LABEL, app.theme.dim),
        Span::styled(
            crate::approval::tail(&text, room).to_string(),
            app.theme.text,
        ),
    ]);
    buf.set_line(area.x, area.y, &line, area.width);
}

fn draw_activity(app: &App, area: Rect, buf: &mut Buffer) {
    if area.height == 0 {
        return;
    }
    let mut spans = Vec::new();
    if let Some(since) = app.status.busy_since {
        spans.push(Span::styled(
            format!(
                "{} Working ({}s · esc to interrupt)",
                status::spinner(app.frame),
                since.elapsed().as_secs()
            ),
            app.theme.accent,
        ));
    }
    if !app.viewport.is_following() {
        if !spans.is_empty() {
            spans.push(Span::raw("   "));
        }
        spans.push(Span::styled(
            "↓ more below · ctrl+end jumps to the bottom",
            app.theme.dim,
        ));
    }
    buf.set_line(area.x, area.y, &Line::from(spans), area.width);
}

fn draw_queue(app: &App, area: Rect, buf: &mut Buffer) {
    for (i, text) in app
        .status
        .queued
        .iter()
        .take(usize::from(area.height))
        .enumerate()
    {
        let first_line = text.lines().next().unwrap_or("");
        let line = Line::styled(format!("  ⏵ queued: {first_line}"), app.theme.dim);
        let y = area.y + u16::try_from(i).unwrap_or(0);
        buf.set_line(area.x, y, &line, area.width);
    }
}
