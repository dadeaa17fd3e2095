//! Tool-call and `!command` blocks of the transcript: a header line with a
//! state mark and, under it, the live progress line, the diff, the summary
//! or the output folded to a few rows.
//!
//! Output is kept raw and cleaned (escape sequences and control characters
//! removed, tabs expanded) only for the rows drawn, so a 10 MB result costs
//! one line count and a few rows per width. Folded rows are cut with `…`
//! (one row per output line, so "+N lines" is exact); expanded rows wrap so
//! nothing is hidden, up to [`MAX_EXPANDED_ROWS`]. Rows are cached per
//! width and rebuilt only after a change.
//!
//! The text-fitting helpers at the end (`clean_line`, `cut`, `wrap_spans`,
//! `fit_line`) are shared by the diff, the approval box and the picker.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use uji_protocol::FileDiff;
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use super::diff::diff_lines;
use super::subagents::Subagents;
use crate::theme::Theme;

/// Output rows shown while a block is folded.
pub const FOLDED_ROWS: usize = 8;
/// Diff rows shown while a block is folded.
pub const DIFF_ROWS: usize = 20;
/// Rows an expanded block draws at most, so a huge result stays cheap.
pub const MAX_EXPANDED_ROWS: usize = 2000;
/// Bytes of one output line looked at; the rest is shown as `…`.
const MAX_LINE_BYTES: usize = 64 * 1024;
const TAB_STOP: usize = 4;
const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const FIRST_INDENT: &str = "  ⎿  ";
const NEXT_INDENT: &str = "     ";

/// Where a tool call stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolState {
    /// Waiting for the user's approval.
    Asking,
    /// Allowed and running (the state a block starts in).
    Running,
    /// Ran and succeeded.
    Done,
    /// Ran and failed, or was interrupted.
    Failed,
    /// Refused by policy, a hook or the user.
    Denied,
}

/// A transcript block drawn from a view `V`, its rows cached per width and
/// rebuilt only after a change.
#[derive(Debug)]
pub struct Block<V> {
    view: V,
    rows: CachedRows,
}

/// What a [`Block`] draws.
pub trait BlockView {
    /// The block's rows for `width` columns.
    fn rows(&self, width: usize, theme: &Theme, expanded: bool) -> Vec<Line<'static>>;
    /// True while the header mark should spin.
    fn is_running(&self) -> bool;
}

impl<V: BlockView> Block<V> {
    fn with_view(view: V) -> Block<V> {
        Block {
            view,
            rows: CachedRows::default(),
        }
    }

    /// Changes the view; the rows are rebuilt when next asked for.
    fn update(&mut self, change: impl FnOnce(&mut V)) {
        change(&mut self.view);
        self.rows.invalidate();
    }

    /// Drops the drawn rows (the block is far off screen); they are drawn
    /// again when next asked for.
    pub fn forget_rows(&mut self) {
        self.rows.forget();
    }

    /// Folds an expanded block, expands a folded one (ctrl+o).
    pub fn toggle_expanded(&mut self) {
        self.rows.toggle_expanded();
    }

    /// Expands (`true`) or folds the block.
    pub fn set_expanded(&mut self, on: bool) {
        self.rows.set_expanded(on);
    }

    /// True when the block shows everything.
    pub fn is_expanded(&self) -> bool {
        self.rows.expanded
    }

    /// True while the call or command runs.
    pub fn is_running(&self) -> bool {
        self.view.is_running()
    }

    /// The block's rows for `width`; `spinner_frame` animates the running
    /// mark (the app passes a frame counter).
    pub fn lines(&mut self, width: u16, theme: &Theme, spinner_frame: usize) -> &[Line<'static>] {
        let view = &self.view;
        let expanded = self.rows.expanded;
        let frame = view.is_running().then_some(spinner_frame);
        self.rows
            .get(width, theme, frame, |w| view.rows(w, theme, expanded))
    }
}

/// One tool call in the transcript.
pub type ToolBlock = Block<ToolView>;

/// What a tool block shows.
#[derive(Debug)]
pub struct ToolView {
    call_id: String,
    name: String,
    verb: String,
    subject: String,
    state: ToolState,
    progress: String,
    output: Output,
    summary: Option<String>,
    diff: Option<FileDiff>,
    /// Who refused the call, when the person did at its question (the
    /// screen knows it from the answer; the result's words are the model's).
    refused: Option<Refusal>,
    /// The subagents a `subagent` call runs: a row each while they run,
    /// their transcripts when the block is expanded.
    subagents: Subagents,
}

/// How the person refused a call at its question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// "No" (with guidance, perhaps).
    Denied,
    /// "No, and stop here".
    Stopped,
}

impl Block<ToolView> {
    /// A call that was just decided; it starts as running.
    pub fn new(call_id: &str, name: &str, verb: &str, subject: &str) -> ToolBlock {
        Block::with_view(ToolView {
            call_id: call_id.to_string(),
            name: name.to_string(),
            verb: verb.to_string(),
            subject: subject.to_string(),
            state: ToolState::Running,
            progress: String::new(),
            output: Output::default(),
            summary: None,
            diff: None,
            subagents: Subagents::default(),
            refused: None,
        })
    }

    /// The person refused the call at its question.
    pub fn refused_by_you(&mut self, how: Refusal) {
        self.update(|view| {
            view.state = ToolState::Denied;
            view.refused = Some(how);
        });
    }

    /// The call this block stands for.
    pub fn call_id(&self) -> &str {
        &self.view.call_id
    }

    /// The tool called.
    pub fn name(&self) -> &str {
        &self.view.name
    }

    /// What the header calls the call (`Read`); the tool's name when it
    /// has no verb.
    pub fn verb(&self) -> &str {
        if self.view.verb.is_empty() {
            &self.view.name
        } else {
            &self.view.verb
        }
    }

    /// What the call is about (the path, the command).
    pub fn subject(&self) -> &str {
        &self.view.subject
    }

    /// Sets the state from `tool_started` (a deny decision) or an
    /// approval question opening or closing.
    pub fn set_state(&mut self, state: ToolState) {
        self.update(|view| view.state = state);
    }

    /// Where the call stands.
    pub fn state(&self) -> ToolState {
        self.view.state
    }

    /// The live line under a running call; only the latest is kept.
    pub fn set_progress(&mut self, line: &str) {
        self.update(|view| view.progress = bounded(line).0.to_string());
    }

    /// One line of a subagent's stream (a `subagent` call's child): its
    /// row says which tool it runs and the tokens it used so far, and its
    /// transcript grows.
    pub fn subagent_line(&mut self, session: &str, agent: &str, line: &serde_json::Value) {
        self.update(|view| view.subagents.line(session, agent, line));
    }

    /// The call ended. A denied call stays denied (its `tool_finished`
    /// reports an error too).
    pub fn finish(&mut self, is_error: bool, summary: Option<&str>, diff: Option<&FileDiff>) {
        self.update(|view| {
            if view.state != ToolState::Denied {
                view.state = if is_error {
                    ToolState::Failed
                } else {
                    ToolState::Done
                };
            }
            view.summary = summary.filter(|s| !s.trim().is_empty()).map(str::to_string);
            view.diff = diff.cloned();
            view.progress.clear();
        });
    }

    /// The result text (from the saved `message`).
    pub fn set_output(&mut self, content: &str) {
        self.update(|view| view.output = Output::new(content));
    }
}

impl BlockView for ToolView {
    fn is_running(&self) -> bool {
        self.state == ToolState::Running
    }

    fn rows(&self, width: usize, theme: &Theme, expanded: bool) -> Vec<Line<'static>> {
        self.draw(width, theme, expanded)
    }
}

impl ToolView {
    fn draw(&self, width: usize, theme: &Theme, expanded: bool) -> Vec<Line<'static>> {
        let title = if self.verb.is_empty() {
            &self.name
        } else {
            &self.verb
        };
        let mark = match self.state {
            ToolState::Asking => Span::styled("?", theme.warn),
            ToolState::Running => Span::styled(SPINNER[0], theme.tool_running),
            ToolState::Done => Span::styled("●", theme.tool_done),
            ToolState::Failed | ToolState::Denied => Span::styled("●", theme.tool_failed),
        };
        let mut rows = vec![header(mark, title, &self.subject, theme, width)];
        let body = self.body(body_width(width), theme, expanded);
        rows.extend(indent(body, width, theme));
        rows
    }

    fn body(&self, width: usize, theme: &Theme, expanded: bool) -> Vec<Line<'static>> {
        // Expanded, a `subagent` call shows what each subagent did, then
        // (once it ended) what it returned.
        if expanded && !self.subagents.is_empty() && self.state != ToolState::Asking {
            let mut rows = self.subagents.transcripts(width, theme);
            if self.state != ToolState::Running {
                rows.extend(self.ended_body(width, theme, expanded));
            }
            return rows;
        }
        match self.state {
            ToolState::Asking => vec![Line::styled("waiting for your answer", theme.dim)],
            ToolState::Running if !self.subagents.is_empty() => self.subagents.rows(width, theme),
            ToolState::Running => progress_row(&self.progress, width, theme),
            _ => self.ended_body(width, theme, expanded),
        }
    }

    fn ended_body(&self, width: usize, theme: &Theme, expanded: bool) -> Vec<Line<'static>> {
        match self.state {
            ToolState::Denied => self.denied_body(width, theme, expanded),
            ToolState::Failed => self.failed_body(width, theme, expanded),
            _ => self.done_body(width, theme, expanded),
        }
    }

    /// Denied, said once: by you (and what you said), or with the reason
    /// the gate gave.
    fn denied_body(&self, width: usize, theme: &Theme, expanded: bool) -> Vec<Line<'static>> {
        let (head, reason) = match self.refused {
            // The result's first line is the model's wording of the same
            // refusal; what follows it is what the person said.
            Some(how) => {
                let head = match how {
                    Refusal::Denied => "denied by you",
                    Refusal::Stopped => "stopped by you",
                };
                let said = self
                    .output
                    .text
                    .split_once('\n')
                    .map_or("", |(_, rest)| rest);
                (head, Output::new(said))
            }
            None => ("denied", self.output.without_prefix("denied")),
        };
        let mut rows = vec![Line::styled(head, theme.error)];
        rows.extend(reason.rows(width, theme.dim, theme, expanded, Fold::Head));
        rows
    }

    /// A failure shows the end of its output, where the error is, and
    /// then its summary ("12 lines, exit code 1, 0.4s").
    fn failed_body(&self, width: usize, theme: &Theme, expanded: bool) -> Vec<Line<'static>> {
        let summary = self.summary.as_deref().map(one_line);
        if self.output.is_empty() {
            let text = summary.unwrap_or_else(|| "failed".to_string());
            return vec![Line::styled(cut(&text, width), theme.error)];
        }
        let mut rows = self
            .output
            .rows(width, theme.error, theme, expanded, Fold::Tail);
        if let Some(summary) = summary.filter(|_| self.name == "run_command") {
            rows.push(Line::styled(cut(&summary, width), theme.dim));
        }
        rows
    }

    fn done_body(&self, width: usize, theme: &Theme, expanded: bool) -> Vec<Line<'static>> {
        if let Some(diff) = &self.diff {
            let max = if expanded {
                MAX_EXPANDED_ROWS
            } else {
                DIFF_ROWS
            };
            return diff_lines(diff, clamp_u16(width), theme, Some(max));
        }
        // A command's output is what the user wants to see: its first rows,
        // then the summary ("3 lines, exit code 0, 0.2s").
        if self.name == "run_command" && !self.output.is_empty() {
            let mut rows = self
                .output
                .rows(width, theme.text, theme, expanded, Fold::Head);
            if let Some(summary) = &self.summary {
                rows.push(Line::styled(cut(&one_line(summary), width), theme.dim));
            }
            return rows;
        }
        match &self.summary {
            Some(summary) if !expanded || self.output.is_empty() => {
                vec![Line::styled(cut(&one_line(summary), width), theme.text)]
            }
            _ if self.output.is_empty() => vec![Line::styled("(no output)", theme.dim)],
            _ => self
                .output
                .rows(width, theme.text, theme, expanded, Fold::Head),
        }
    }
}

/// A command the user ran with `!cmd`.
pub type ShellBlock = Block<ShellView>;

/// What a `!cmd` block shows.
#[derive(Debug)]
pub struct ShellView {
    command: String,
    progress: String,
    output: Output,
    /// None while running; then the exit code (None when it was stopped or
    /// could not start).
    exit: Option<Option<i32>>,
}

impl Block<ShellView> {
    /// A command that just started.
    pub fn new(command: &str) -> ShellBlock {
        Block::with_view(ShellView {
            command: command.to_string(),
            progress: String::new(),
            output: Output::default(),
            exit: None,
        })
    }

    /// The live line under the running command; only the latest is kept.
    pub fn set_progress(&mut self, line: &str) {
        self.update(|view| view.progress = bounded(line).0.to_string());
    }

    /// The command ended with `output`; `exit_code` is None when it was
    /// stopped or could not start.
    pub fn finish(&mut self, output: &str, exit_code: Option<i32>) {
        self.update(|view| {
            view.output = Output::new(output);
            view.exit = Some(exit_code);
            view.progress.clear();
        });
    }
}

impl BlockView for ShellView {
    fn is_running(&self) -> bool {
        self.exit.is_none()
    }

    fn rows(&self, width: usize, theme: &Theme, expanded: bool) -> Vec<Line<'static>> {
        self.draw(width, theme, expanded)
    }
}

impl ShellView {
    fn draw(&self, width: usize, theme: &Theme, expanded: bool) -> Vec<Line<'static>> {
        let (mark, status) = match self.exit {
            None => (Span::styled(SPINNER[0], theme.tool_running), String::new()),
            Some(Some(0)) => (Span::styled("●", theme.tool_done), String::new()),
            Some(Some(code)) => (
                Span::styled("●", theme.tool_failed),
                format!(" exit {code}"),
            ),
            Some(None) => (Span::styled("●", theme.tool_failed), " stopped".to_string()),
        };
        let room = width.saturating_sub(4 + status.width());
        let head = Line::from(vec![
            mark,
            Span::raw(" "),
            Span::styled("!", theme.accent),
            Span::raw(" "),
            Span::styled(cut(&one_line(&self.command), room), theme.strong),
            Span::styled(status, theme.dim),
        ]);
        let content_width = body_width(width);
        let body = match self.exit {
            None => progress_row(&self.progress, content_width, theme),
            Some(_) if self.output.is_empty() => vec![Line::styled("(no output)", theme.dim)],
            Some(Some(0)) => {
                self.output
                    .rows(content_width, theme.text, theme, expanded, Fold::Head)
            }
            Some(_) => self
                .output
                .rows(content_width, theme.text, theme, expanded, Fold::Tail),
        };
        let mut rows = vec![fit_line(head, width)];
        rows.extend(indent(body, width, theme));
        rows
    }
}

/// The tool whose consecutive successful calls are shown as one block.
pub const GROUPED_TOOL: &str = "read_file";

/// A run of reads as one block: `● Read 3 files` and the paths under it.
pub fn group_lines(
    verb: &str,
    subjects: &[String],
    width: u16,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let width = usize::from(width);
    let title = format!("{verb} {}", plural(subjects.len(), "file"));
    let head = header(
        Span::styled("●", theme.tool_done),
        &title,
        "ctrl+o to expand",
        theme,
        width,
    );
    let names: Vec<String> = subjects.iter().map(|s| one_line(s)).collect();
    let body = vec![Line::styled(
        cut(&names.join(", "), body_width(width)),
        theme.text,
    )];
    let mut rows = vec![head];
    rows.extend(indent(body, width, theme));
    rows
}

/// Rows of a block for one width, plus its expanded flag.
#[derive(Debug, Default)]
struct CachedRows {
    expanded: bool,
    key: Option<(u16, bool)>,
    rows: Vec<Line<'static>>,
}

impl CachedRows {
    fn invalidate(&mut self) {
        self.key = None;
    }

    fn toggle_expanded(&mut self) {
        self.set_expanded(!self.expanded);
    }

    fn set_expanded(&mut self, on: bool) {
        if self.expanded != on {
            self.expanded = on;
            self.invalidate();
        }
    }

    fn forget(&mut self) {
        self.rows = Vec::new();
        self.invalidate();
    }

    /// The cached rows, built by `build` (given the width) when the width
    /// or theme changed; with a spinner frame the first span of the header
    /// is swapped for that frame's mark, which costs no rebuild.
    fn get(
        &mut self,
        width: u16,
        theme: &Theme,
        spinner_frame: Option<usize>,
        build: impl FnOnce(usize) -> Vec<Line<'static>>,
    ) -> &[Line<'static>] {
        let key = Some((width, theme.colors));
        if self.key != key {
            self.rows = build(usize::from(width));
            self.key = key;
        }
        if let (Some(frame), Some(head)) = (spinner_frame, self.rows.first_mut())
            && let Some(mark) = head.spans.first_mut()
            && width > 0
        {
            mark.content = SPINNER[frame % SPINNER.len()].into();
        }
        &self.rows
    }
}

/// Tool or command output, kept raw; cleaned row by row when drawn.
#[derive(Debug, Default, Clone)]
struct Output {
    text: String,
    lines: usize,
}

impl Output {
    fn new(text: &str) -> Output {
        let text = text.trim_end();
        Output {
            text: text.to_string(),
            lines: text.lines().count(),
        }
    }

    fn is_empty(&self) -> bool {
        self.lines == 0
    }

    /// The output without a leading `prefix` and the `:` after it (a denied
    /// call's result starts with "denied: ", which the block already says).
    fn without_prefix(&self, prefix: &str) -> Output {
        match self.text.strip_prefix(prefix) {
            Some(rest) => Output::new(rest.trim_start_matches(':').trim_start()),
            None => self.clone(),
        }
    }

    fn rows(
        &self,
        width: usize,
        style: Style,
        theme: &Theme,
        expanded: bool,
        fold: Fold,
    ) -> Vec<Line<'static>> {
        if expanded {
            let (mut rows, shown) = wrapped_rows(&self.text, width, style, MAX_EXPANDED_ROWS);
            if shown < self.lines {
                let hidden = plural(self.lines - shown, "line");
                rows.push(Line::styled(format!("… +{hidden} not shown"), theme.dim));
            }
            return rows;
        }
        let row = |line: &str| Line::styled(cut(&clean_bounded(line), width), style);
        let hidden = (self.lines > FOLDED_ROWS).then(|| plural(self.lines - FOLDED_ROWS, "line"));
        match fold {
            Fold::Head => {
                let mut rows: Vec<Line<'static>> =
                    self.text.lines().take(FOLDED_ROWS).map(row).collect();
                if let Some(hidden) = hidden {
                    let note = format!("… +{hidden} (ctrl+o to expand)");
                    rows.push(Line::styled(note, theme.dim));
                }
                rows
            }
            Fold::Tail => {
                let mut rows: Vec<Line<'static>> = Vec::with_capacity(FOLDED_ROWS + 1);
                if let Some(hidden) = hidden {
                    let note = format!("… {hidden} above (ctrl+o to expand)");
                    rows.push(Line::styled(note, theme.dim));
                }
                let mut tail: Vec<&str> = self.text.lines().rev().take(FOLDED_ROWS).collect();
                tail.reverse();
                rows.extend(tail.into_iter().map(row));
                rows
            }
        }
    }
}

/// Which end of folded output is shown: the start of what a tool read,
/// the end of what failed (where the error is).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fold {
    Head,
    Tail,
}

/// `text` cleaned and wrapped to `width` in `style`, at most `max_rows`
/// rows; also how many of its lines were (at least partly) shown.
pub fn wrapped_rows(
    text: &str,
    width: usize,
    style: Style,
    max_rows: usize,
) -> (Vec<Line<'static>>, usize) {
    let mut rows = Vec::new();
    let mut shown = 0;
    for line in text.lines() {
        if rows.len() >= max_rows {
            break;
        }
        let room = max_rows - rows.len();
        let wrapped = wrap_spans(&[Span::styled(clean_bounded(line), style)], width);
        rows.extend(wrapped.into_iter().take(room).map(Line::from));
        shown += 1;
    }
    (rows, shown)
}

fn progress_row(progress: &str, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let line = clean_line(progress);
    if line.trim().is_empty() {
        return Vec::new();
    }
    vec![Line::styled(cut(&line, width), theme.dim)]
}

/// `mark title (subject)`, the subject cut to keep it on one row.
fn header(
    mark: Span<'static>,
    title: &str,
    subject: &str,
    theme: &Theme,
    width: usize,
) -> Line<'static> {
    let title = one_line(title);
    let subject = one_line(subject);
    let mut spans = vec![
        mark,
        Span::raw(" "),
        Span::styled(title.clone(), theme.strong),
    ];
    // "● " before the title, " (" and ")" around the subject.
    let room = width.saturating_sub(title.width() + 5);
    if !subject.is_empty() && room > 0 {
        spans.push(Span::raw(" ("));
        spans.push(Span::styled(cut(&subject, room), theme.text));
        spans.push(Span::raw(")"));
    }
    fit_line(Line::from(spans), width)
}

/// Columns left for a block's body after the `  ⎿  ` indent.
fn body_width(width: usize) -> usize {
    width.saturating_sub(FIRST_INDENT.width()).max(1)
}

fn indent(body: Vec<Line<'static>>, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    body.into_iter()
        .enumerate()
        .map(|(i, row)| {
            let prefix = if i == 0 { FIRST_INDENT } else { NEXT_INDENT };
            let mut spans = vec![Span::styled(prefix, theme.dim)];
            let base = row.style;
            spans.extend(
                row.spans
                    .into_iter()
                    .map(|s| Span::styled(s.content, base.patch(s.style))),
            );
            fit_line(Line::from(spans), width)
        })
        .collect()
}

fn clamp_u16(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

/// "1 line", "2 lines".
pub fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// The first [`MAX_LINE_BYTES`] of `line` (at a character boundary) and
/// whether anything was left out.
fn bounded(line: &str) -> (&str, bool) {
    if line.len() <= MAX_LINE_BYTES {
        return (line, false);
    }
    let mut end = MAX_LINE_BYTES;
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    (&line[..end], true)
}

/// [`clean_line`] of at most [`MAX_LINE_BYTES`] of `line`, ending in `…`
/// when the line was longer.
pub fn clean_bounded(line: &str) -> String {
    let (head, more) = bounded(line);
    let mut text = clean_line(head);
    if more {
        text.push('…');
    }
    text
}

/// `text` on one line: its lines trimmed and joined with spaces, cleaned.
pub fn one_line(text: &str) -> String {
    let joined: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    clean_bounded(&joined.join(" "))
}

/// `raw` made safe for the terminal: ANSI escape sequences and control
/// characters removed (a command's colours must not reach the terminal
/// raw), tabs expanded, and of a line redrawn with `\r` only its last
/// version, as a terminal would have shown it.
pub fn clean_line(raw: &str) -> String {
    let raw = raw.strip_suffix('\r').unwrap_or(raw);
    let last = raw.rsplit('\r').next().unwrap_or(raw);
    let mut out = String::with_capacity(last.len());
    let mut column = 0;
    for piece in anstream::adapter::strip_str(last) {
        for ch in piece.chars() {
            if ch == '\t' {
                let spaces = TAB_STOP - column % TAB_STOP;
                out.extend(std::iter::repeat_n(' ', spaces));
                column += spaces;
            } else if !is_hidden(ch) {
                out.push(ch);
                column += ch.width().unwrap_or(0);
            }
        }
    }
    out
}

/// Control characters and the bidirectional overrides, which could make a
/// line display as something other than what it says.
fn is_hidden(ch: char) -> bool {
    ch.is_control() || matches!(ch, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// Display width of `text`, grapheme by grapheme as the terminal buffer
/// places it.
pub fn text_width(text: &str) -> usize {
    text.graphemes(true).map(UnicodeWidthStr::width).sum()
}

/// `text` cut to `width` columns, ending in `…` when it was longer.
pub fn cut(text: &str, width: usize) -> String {
    let mut used = 0;
    // Bytes that fit with room left for the `…`.
    let mut keep = 0;
    for (at, grapheme) in text.grapheme_indices(true) {
        used += grapheme.width();
        if used > width {
            if width == 0 {
                return String::new();
            }
            return format!("{}…", &text[..keep]);
        }
        if used < width {
            keep = at + grapheme.len();
        }
    }
    text.to_string()
}

/// `line` cut (with `…`) to at most `width` columns.
pub fn fit_line(line: Line<'static>, width: usize) -> Line<'static> {
    let total: usize = line.spans.iter().map(|s| text_width(&s.content)).sum();
    if total <= width {
        return line;
    }
    let mut left = width;
    let mut spans = Vec::new();
    for span in line.spans {
        let span_width = text_width(&span.content);
        if span_width <= left {
            left -= span_width;
            spans.push(span);
        } else {
            spans.push(Span::styled(cut(&span.content, left), span.style));
            break;
        }
    }
    Line::from(spans).style(line.style)
}

/// `spans` broken into rows of at most `width` columns (at least one row,
/// possibly empty), between words where possible; a space at a break is
/// dropped.
pub fn wrap_spans(spans: &[Span<'static>], width: usize) -> Vec<Vec<Span<'static>>> {
    let mut wrapper = Wrapper {
        width: width.max(1),
        rows: vec![Vec::new()],
        used: 0,
    };
    for span in spans {
        for token in span.content.split_word_bounds() {
            wrapper.push(token, span.style);
        }
    }
    wrapper.rows
}

struct Wrapper {
    width: usize,
    rows: Vec<Vec<Span<'static>>>,
    used: usize,
}

impl Wrapper {
    fn push(&mut self, token: &str, style: Style) {
        let token_width = text_width(token);
        if self.used + token_width <= self.width {
            self.put(token, style, token_width);
        } else if token.trim().is_empty() {
            if self.used > 0 {
                self.new_row();
            }
        } else if token_width <= self.width {
            self.new_row();
            self.put(token, style, token_width);
        } else {
            for grapheme in token.graphemes(true) {
                let grapheme_width = grapheme.width();
                if self.used + grapheme_width > self.width && self.used > 0 {
                    self.new_row();
                }
                self.put(grapheme, style, grapheme_width);
            }
        }
    }

    fn new_row(&mut self) {
        // A space that ended up before a break would only pad the row.
        if let Some(last) = self.rows.last_mut().and_then(|row| row.last_mut()) {
            let kept = last.content.trim_end().len();
            last.content.to_mut().truncate(kept);
        }
        self.rows.push(Vec::new());
        self.used = 0;
    }

    fn put(&mut self, text: &str, style: Style, width: usize) {
        self.used += width;
        let Some(row) = self.rows.last_mut() else {
            return;
        };
        match row.last_mut() {
            Some(span) if span.style == style => span.content.to_mut().push_str(text),
            _ => row.push(Span::styled(text.to_string(), style)),
        }
    }
}

/// The text of `line`, for tests.
#[cfg(test)]
pub(crate) fn line_text(line: &Line<'_>) -> String {
    line.spans.iter().map(|s| s.content.as_ref()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(line_text).collect()
    }

    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("line {i}\n")).collect()
    }

    fn done(output: &str, summary: Option<&str>) -> ToolBlock {
        let mut block = ToolBlock::new("c1", "run_command", "Shell", "make");
        block.finish(false, summary, None);
        block.set_output(output);
        block
    }

    fn assert_fits(lines: &[Line<'_>], width: u16) {
        for line in lines {
            let w = text_width(&line_text(line));
            assert!(
                w <= usize::from(width),
                "{w} > {width}: {:?}",
                line_text(line)
            );
        }
    }

    #[test]
    fn a_subagent_call_shows_a_row_per_running_subagent_with_its_tool_and_tokens() {
        let theme = Theme::colored();
        let mut block = ToolBlock::new("c1", "subagent", "Agent", "reviewer general");
        block.set_progress("summed up by core");
        let line = |json: &str| serde_json::from_str::<serde_json::Value>(json).unwrap();
        block.subagent_line("s1", "reviewer", &line(r#"{"type":"session","id":"s1"}"#));
        block.subagent_line("s2", "general", &line(r#"{"type":"session","id":"s2"}"#));
        block.subagent_line(
            "s1",
            "reviewer",
            &line(r#"{"type":"tool","name":"run_command","subject":"cargo test"}"#),
        );
        block.subagent_line(
            "s1",
            "reviewer",
            &line(r#"{"type":"usage","usage":{"input":1200,"output":30}}"#),
        );
        block.subagent_line(
            "s2",
            "general",
            &line(r#"{"type":"done","text":"ok","usage":{"input":5}}"#),
        );
        assert_eq!(
            texts(block.lines(60, &theme, 0)),
            [
                "⠋ Agent (reviewer general)",
                "  ⎿  reviewer: run_command cargo test · 1230 tokens",
                "     general: done · 5 tokens"
            ]
        );
        // Expanded while it runs: each subagent's transcript under its row.
        block.subagent_line(
            "s1",
            "reviewer",
            &line(r#"{"type":"message","message":{"seq":1,"time":0,"role":"user","text":"Review it"}}"#),
        );
        block.set_expanded(true);
        assert_eq!(
            texts(block.lines(60, &theme, 0)),
            [
                "⠋ Agent (reviewer general)",
                "  ⎿  reviewer: run_command cargo test · 1230 tokens",
                "       › Review it",
                "     general: done · 5 tokens"
            ]
        );
        block.set_expanded(false);
        block.finish(false, Some("2 subagents answered"), None);
        assert!(
            !texts(block.lines(60, &theme, 0))
                .join("\n")
                .contains("tokens")
        );
        // Expanded once it ended: the transcripts, then what it returned.
        block.set_output("## task 1 (reviewer)\nlooks fine");
        block.set_expanded(true);
        let expanded = texts(block.lines(60, &theme, 0));
        assert_eq!(expanded[2], "       › Review it");
        assert!(
            expanded.last().unwrap().contains("looks fine"),
            "{expanded:?}"
        );
    }

    #[test]
    fn a_running_call_shows_a_spinner_and_its_latest_progress_line() {
        let theme = Theme::colored();
        let mut block = ToolBlock::new("c1", "run_command", "Shell", "cargo test");
        block.set_progress("compiling");
        block.set_progress("test parser::works ... ok");
        assert_eq!(
            texts(block.lines(40, &theme, 0)),
            ["⠋ Shell (cargo test)", "  ⎿  test parser::works ... ok"]
        );
        assert_eq!(
            texts(&block.lines(40, &theme, 1)[..1]),
            ["⠙ Shell (cargo test)"]
        );
        assert_eq!(block.lines(40, &theme, 0)[1].spans[1].style, theme.dim);
        assert_eq!(block.state(), ToolState::Running);
        assert_eq!(block.call_id(), "c1");
    }

    #[test]
    fn an_asking_call_has_a_question_mark() {
        let theme = Theme::colored();
        let mut block = ToolBlock::new("c1", "edit_file", "Update", "a.rs");
        block.set_state(ToolState::Asking);
        let lines = block.lines(40, &theme, 3);
        assert_eq!(
            texts(lines),
            ["? Update (a.rs)", "  ⎿  waiting for your answer"]
        );
        assert_eq!(lines[0].spans[0].style, theme.warn);
    }

    #[test]
    fn a_summary_stands_in_for_the_output_until_expanded() {
        let theme = Theme::colored();
        let mut block = ToolBlock::new("c1", "read_file", "Read", "src/main.rs");
        block.finish(false, Some("Read 3 lines"), None);
        block.set_output("fn main() {\n}\n");
        let lines = block.lines(40, &theme, 0);
        assert_eq!(texts(lines), ["● Read (src/main.rs)", "  ⎿  Read 3 lines"]);
        assert_eq!(lines[0].spans[0].style, theme.tool_done);
        block.toggle_expanded();
        assert!(block.is_expanded());
        assert_eq!(
            texts(block.lines(40, &theme, 0)),
            ["● Read (src/main.rs)", "  ⎿  fn main() {", "     }"]
        );
    }

    #[test]
    fn a_command_shows_its_first_output_rows_then_its_summary() {
        let theme = Theme::colored();
        let mut block = ToolBlock::new("c1", "run_command", "Shell", "cargo test");
        block.finish(false, Some("12 lines, exit code 0, 0.4s"), None);
        block.set_output(&numbered(12));
        let lines = texts(block.lines(50, &theme, 0));
        assert_eq!(lines[0], "● Shell (cargo test)");
        assert_eq!(lines[1], "  ⎿  line 1");
        assert_eq!(lines[9], "     … +4 lines (ctrl+o to expand)");
        assert_eq!(lines[10], "     12 lines, exit code 0, 0.4s");
    }

    #[test]
    fn long_output_folds_to_eight_rows_and_expands_fully() {
        let theme = Theme::colored();
        let mut block = done(&numbered(20), None);
        let lines = texts(block.lines(40, &theme, 0));
        assert_eq!(lines.len(), 1 + 8 + 1);
        assert_eq!(lines[1], "  ⎿  line 1");
        assert_eq!(lines[8], "     line 8");
        assert_eq!(lines[9], "     … +12 lines (ctrl+o to expand)");
        block.set_expanded(true);
        let lines = texts(block.lines(40, &theme, 0));
        assert_eq!(lines.len(), 21);
        assert_eq!(lines[20], "     line 20");
        let one_more = texts(done(&numbered(9), None).lines(40, &theme, 0));
        assert_eq!(one_more[9], "     … +1 line (ctrl+o to expand)");
    }

    #[test]
    fn folded_rows_are_cut_and_expanded_rows_wrap() {
        let theme = Theme::plain();
        let long = "alpha beta gamma delta epsilon";
        let mut block = done(long, None);
        assert_eq!(
            texts(block.lines(21, &theme, 0))[1],
            "  ⎿  alpha beta gamm…"
        );
        block.set_expanded(true);
        assert_eq!(
            texts(block.lines(21, &theme, 0))[1..],
            ["  ⎿  alpha beta gamma", "     delta epsilon"]
        );
        assert_eq!(
            texts(block.lines(20, &theme, 0))[1..],
            ["  ⎿  alpha beta", "     gamma delta", "     epsilon"]
        );
    }

    #[test]
    fn a_failed_call_shows_its_output_as_an_error() {
        let theme = Theme::colored();
        let mut block = ToolBlock::new("c1", "read_file", "Read", "nope.rs");
        block.finish(true, None, None);
        block.set_output("error: no such file");
        let lines = block.lines(40, &theme, 0);
        assert_eq!(
            texts(lines),
            ["● Read (nope.rs)", "  ⎿  error: no such file"]
        );
        assert_eq!(lines[0].spans[0].style, theme.tool_failed);
        assert_eq!(lines[1].spans[1].style, theme.error);
        assert_eq!(block.state(), ToolState::Failed);
    }

    #[test]
    fn a_failed_command_shows_the_last_lines_of_its_output_then_its_summary() {
        let theme = Theme::colored();
        let mut block = ToolBlock::new("c1", "run_command", "Shell", "cargo test");
        let output = format!(
            "{}\nerror: 1 test failed\n(exit code 101)",
            numbered(20).trim_end()
        );
        block.finish(true, Some("22 lines, exit code 101, 2.3s"), None);
        block.set_output(&output);
        let lines = block.lines(60, &theme, 0);
        assert_eq!(
            texts(lines),
            [
                "● Shell (cargo test)",
                "  ⎿  … 14 lines above (ctrl+o to expand)",
                "     line 15",
                "     line 16",
                "     line 17",
                "     line 18",
                "     line 19",
                "     line 20",
                "     error: 1 test failed",
                "     (exit code 101)",
                "     22 lines, exit code 101, 2.3s",
            ]
        );
        assert_eq!(lines[0].spans[0].style, theme.tool_failed);
        assert_eq!(lines[8].spans[1].style, theme.error);
        block.toggle_expanded();
        let expanded = texts(block.lines(60, &theme, 0));
        assert_eq!(expanded[1], "  ⎿  line 1");
        assert_eq!(expanded.len(), 24);
    }

    #[test]
    fn a_denied_call_says_so_with_the_reason() {
        let theme = Theme::colored();
        let mut block = ToolBlock::new("c1", "run_command", "Shell", "rm -rf /");
        block.set_state(ToolState::Denied);
        block.finish(true, None, None);
        block.set_output("denied: user denied");
        let lines = block.lines(40, &theme, 0);
        assert_eq!(
            texts(lines),
            ["● Shell (rm -rf /)", "  ⎿  denied", "     user denied"]
        );
        assert_eq!(lines[1].spans[1].style, theme.error);
        assert_eq!(block.state(), ToolState::Denied);
    }

    #[test]
    fn a_diff_is_drawn_instead_of_the_output() {
        let theme = Theme::colored();
        let diff = FileDiff {
            path: "a.txt".into(),
            unified: "--- a.txt\n+++ a.txt\n@@ -1 +1 @@\n-old\n+new\n".into(),
            added: 1,
            removed: 1,
        };
        let mut block = ToolBlock::new("c1", "edit_file", "Update", "a.txt");
        block.finish(false, Some("Added 1 line, removed 1 line"), Some(&diff));
        block.set_output("edited a.txt");
        assert_eq!(
            texts(block.lines(40, &theme, 0)),
            [
                "● Update (a.txt)",
                "  ⎿  Added 1 line, removed 1 line",
                "     1 -old",
                "     1 +new"
            ]
        );
    }

    #[test]
    fn escape_sequences_and_control_characters_never_reach_the_screen() {
        let theme = Theme::colored();
        let output = "\x1b[31mred\x1b[0m\tok\x07\n\x1b]0;title\x07progress 10%\rprogress 100%\r\n";
        let mut block = done(output, None);
        let lines = texts(block.lines(40, &theme, 0));
        assert_eq!(lines[1..], ["  ⎿  red ok", "     progress 100%"]);
        let mut subject = ToolBlock::new("c1", "x", "X", "a\x1b[2Jb\u{202E}c");
        assert_eq!(texts(subject.lines(40, &theme, 0))[0], "⠋ X (abc)");
    }

    #[test]
    fn a_ten_megabyte_result_stays_bounded() {
        let theme = Theme::plain();
        let mut many = done(&numbered(1_000_000), None);
        assert_eq!(many.lines(80, &theme, 0).len(), 10);
        many.set_expanded(true);
        let lines = texts(many.lines(80, &theme, 0));
        assert_eq!(lines.len(), 1 + MAX_EXPANDED_ROWS + 1);
        assert_eq!(
            lines[MAX_EXPANDED_ROWS + 1],
            "     … +998000 lines not shown"
        );

        let mut one_line = done(&"x".repeat(10_000_000), None);
        one_line.set_expanded(true);
        let lines = one_line.lines(80, &theme, 0);
        assert!(lines.len() <= MAX_EXPANDED_ROWS + 2, "{}", lines.len());
        assert!(line_text(&lines[lines.len() - 1]).ends_with('…'));
    }

    #[test]
    fn every_row_fits_any_width() {
        let theme = Theme::colored();
        let wide = "日本語のテキスト\there ❤️ emoji ".repeat(5);
        for width in [0, 1, 2, 3, 5, 7, 12, 80] {
            let mut block = ToolBlock::new("c1", "run_command", "Shell", &wide);
            block.finish(false, None, None);
            block.set_output(&format!("{wide}\n{}", numbered(12)));
            assert_fits(block.lines(width, &theme, 0), width);
            block.set_expanded(true);
            assert_fits(block.lines(width, &theme, 0), width);
            let mut shell = ShellBlock::new(&wide);
            assert_fits(shell.lines(width, &theme, 4), width);
            shell.finish(&wide, Some(2));
            assert_fits(shell.lines(width, &theme, 0), width);
        }
    }

    #[test]
    fn a_long_subject_is_cut_to_keep_the_header_on_one_row() {
        let theme = Theme::plain();
        let mut block = ToolBlock::new("c1", "read_file", "Read", "src/a/very/long/path.rs");
        assert_eq!(
            texts(&block.lines(20, &theme, 0)[..1]),
            ["⠋ Read (src/a/very…)"]
        );
        let mut bare = ToolBlock::new("c1", "stop_job", "", "");
        assert_eq!(texts(bare.lines(20, &theme, 0)), ["⠋ stop_job"]);
    }

    #[test]
    fn rows_are_rebuilt_only_after_a_change() {
        let theme = Theme::plain();
        let mut block = done(&numbered(3), None);
        let first = block.lines(30, &theme, 0).as_ptr();
        assert_eq!(block.lines(30, &theme, 0).as_ptr(), first);
        block.set_output("other");
        assert_eq!(texts(block.lines(30, &theme, 0))[1], "  ⎿  other");
    }

    #[test]
    fn a_shell_block_shows_the_command_its_progress_and_exit_status() {
        let theme = Theme::colored();
        let mut shell = ShellBlock::new("git status");
        shell.set_progress("On branch main");
        assert_eq!(
            texts(shell.lines(40, &theme, 2)),
            ["⠹ ! git status", "  ⎿  On branch main"]
        );
        assert!(shell.is_running());
        shell.finish(&numbered(10), Some(1));
        let lines = shell.lines(40, &theme, 0);
        assert_eq!(line_text(&lines[0]), "● ! git status exit 1");
        assert_eq!(lines[0].spans[0].style, theme.tool_failed);
        // A failure shows its last lines, where the error is.
        assert_eq!(
            line_text(&lines[1]),
            "  ⎿  … 2 lines above (ctrl+o to expand)"
        );
        assert_eq!(line_text(&lines[2]), "     line 3");
        assert_eq!(line_text(&lines[9]), "     line 10");
        shell.toggle_expanded();
        assert_eq!(shell.lines(40, &theme, 0).len(), 11);
        let mut quiet = ShellBlock::new("true");
        quiet.finish("", Some(0));
        assert_eq!(
            texts(quiet.lines(40, &theme, 0)),
            ["● ! true", "  ⎿  (no output)"]
        );
        let mut killed = ShellBlock::new("sleep 9");
        killed.finish("", None);
        assert_eq!(
            line_text(&killed.lines(40, &theme, 0)[0]),
            "● ! sleep 9 stopped"
        );
    }
}
