//! The conversation as blocks (messages, tool calls, notices), each drawn
//! to lines once per width and cached, and the scrolled view over them.

pub mod diff;
mod subagents;
mod text;
pub mod tool;
mod view;
pub mod welcome;

use ratatui::text::Line;

use crate::markdown::Markdown;
use crate::theme::Theme;
pub use text::wrap_styled;
use tool::{ShellBlock, ToolBlock};
pub use view::Viewport;

/// How loud a notice is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Info,
    Warn,
    Error,
}

/// One thing in the transcript.
pub enum Block {
    User(String),
    Assistant(Box<Markdown>),
    /// Hidden unless the user turned thinking on (`/thinking`).
    Reasoning(String),
    Tool(ToolBlock),
    Shell {
        op_id: String,
        block: ShellBlock,
    },
    Notice {
        level: Level,
        text: String,
    },
    /// A rule where older history was summarised.
    Compacted(String),
    /// Output of a command the user ran (`/help`, `/model`...).
    Info(String),
    /// A unified diff (`/diff`), coloured line by line.
    Diff(String),
    /// The header of a new session.
    Welcome(welcome::Welcome),
    /// The model request is being retried: one line, updated in place by
    /// each further retry of the same request.
    Retry(String),
}

/// How a block stands among its neighbours: consecutive reads that
/// succeeded are shown as one ("Read 3 files") until ctrl+o unfolds them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
enum Group {
    #[default]
    Alone,
    /// The first of a run of reads; it draws the run, with these subjects.
    Leads(Vec<String>),
    /// A later read of a run: drawn by its leader.
    Member,
}

/// A block with its drawing cache.
struct Entry {
    block: Block,
    group: Group,
    /// Streamed text not saved yet: a retried request withdraws it.
    live: bool,
    cache: Option<(u16, Vec<Line<'static>>)>,
    /// Rows at a width, kept when the lines are forgotten so scrolling
    /// knows where every block is without drawing it.
    height: Option<(u16, usize)>,
}

impl Entry {
    /// The block changed: its lines and height are drawn again.
    fn changed(&mut self) {
        self.cache = None;
        self.height = None;
    }

    /// Drops the drawn lines, keeping the height.
    fn forget_lines(&mut self) {
        self.cache = None;
        match &mut self.block {
            Block::Assistant(md) => md.forget_lines(),
            Block::Tool(tool) => tool.forget_rows(),
            Block::Shell { block, .. } => block.forget_rows(),
            _ => {}
        }
    }
}

/// Every block of the session, oldest first.
#[derive(Default)]
pub struct Transcript {
    entries: Vec<Entry>,
    show_thinking: bool,
    expanded: bool,
}

impl Transcript {
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// The text of the newest answer that has any.
    pub fn last_answer(&self) -> Option<&str> {
        self.entries.iter().rev().find_map(|e| match &e.block {
            Block::Assistant(md) if !md.text().trim().is_empty() => Some(md.text()),
            _ => None,
        })
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether the newest block is an answer with text (a turn that ended
    /// on what the model said, not on a tool call or an error).
    pub fn ends_with_answer(&self) -> bool {
        matches!(self.entries.last(), Some(Entry { block: Block::Assistant(md), .. }) if !md.text().trim().is_empty())
    }

    pub fn push(&mut self, block: Block) {
        self.push_entry(block, false);
    }

    fn push_entry(&mut self, mut block: Block, live: bool) {
        set_expanded(&mut block, self.expanded);
        self.entries.push(Entry {
            block,
            group: Group::Alone,
            live,
            cache: None,
            height: None,
        });
    }

    /// Appends streamed answer text to the live answer, starting one.
    pub fn push_delta(&mut self, delta: &str) {
        let live = |b: &Block| matches!(b, Block::Assistant(_));
        if let Some(Block::Assistant(md)) = self.live_newest_mut(live).map(|e| &mut e.block) {
            md.push_str(delta);
            return;
        }
        let mut md = Markdown::new();
        md.push_str(delta);
        self.push_entry(Block::Assistant(Box::new(md)), true);
    }

    /// Appends streamed reasoning to the live reasoning block.
    pub fn push_reasoning(&mut self, delta: &str) {
        let live = |b: &Block| matches!(b, Block::Reasoning(_));
        if let Some(Block::Reasoning(text)) = self.live_newest_mut(live).map(|e| &mut e.block) {
            text.push_str(delta);
            return;
        }
        self.push_entry(Block::Reasoning(delta.to_string()), true);
    }

    /// The newest entry, when it still streams and is of the kind `is`
    /// accepts; marked changed, since the caller is about to change it.
    fn live_newest_mut(&mut self, is: impl Fn(&Block) -> bool) -> Option<&mut Entry> {
        let entry = self.entries.last_mut().filter(|e| e.live && is(&e.block))?;
        entry.changed();
        Some(entry)
    }

    /// The newest entry `is` accepts; marked changed, since the caller is
    /// about to change it.
    fn newest_mut(&mut self, is: impl Fn(&Block) -> bool) -> Option<&mut Entry> {
        let entry = self.entries.iter_mut().rev().find(|e| is(&e.block))?;
        entry.changed();
        Some(entry)
    }

    /// Drops the text streamed since the request began (a retry).
    pub fn withdraw_live(&mut self) {
        self.entries.retain(|e| !e.live);
    }

    /// A retry of the request: what it streamed goes, and the retry line
    /// says so, in place of the line of this request's previous retry.
    pub fn show_retry(&mut self, text: String) {
        self.withdraw_live();
        if let Some(entry) = self.entries.last_mut()
            && let Block::Retry(line) = &mut entry.block
        {
            *line = text;
            entry.changed();
            return;
        }
        self.push(Block::Retry(text));
    }

    /// Groups runs of consecutive reads that succeeded (two or more) into
    /// one block; call after a tool call finished or its result came.
    pub fn regroup(&mut self) {
        let mut index = 0;
        while index < self.entries.len() {
            let run = self.entries[index..]
                .iter()
                .take_while(|e| groupable(&e.block))
                .count();
            if run < 2 {
                self.set_group(index, Group::Alone);
                index += 1;
                continue;
            }
            let subjects = self.entries[index..index + run]
                .iter()
                .filter_map(|e| match &e.block {
                    Block::Tool(t) => Some(t.subject().to_string()),
                    _ => None,
                })
                .collect();
            self.set_group(index, Group::Leads(subjects));
            for member in index + 1..index + run {
                self.set_group(member, Group::Member);
            }
            index += run;
        }
    }

    fn set_group(&mut self, index: usize, group: Group) {
        if let Some(entry) = self.entries.get_mut(index)
            && entry.group != group
        {
            entry.group = group;
            entry.changed();
        }
    }

    /// The header shows `model`, while nothing was said yet.
    pub fn set_welcome_model(&mut self, model: Option<String>) {
        if self.has_user_message() {
            return;
        }
        if let Some(entry) = self.entries.first_mut()
            && let Block::Welcome(welcome) = &mut entry.block
        {
            welcome.model = model;
            entry.changed();
        }
    }

    /// The saved answer replaces what streamed: same text, now final.
    pub fn settle_answer(&mut self, reasoning: Option<&str>, text: &str) {
        self.withdraw_live();
        if let Some(reasoning) = reasoning.filter(|r| !r.trim().is_empty()) {
            self.push(Block::Reasoning(reasoning.to_string()));
        }
        if !text.trim().is_empty() {
            self.push(Block::Assistant(Box::new(Markdown::from_text(text))));
        }
    }

    pub fn tool_mut(&mut self, call_id: &str) -> Option<&mut ToolBlock> {
        let is = |b: &Block| matches!(b, Block::Tool(t) if t.call_id() == call_id);
        match &mut self.newest_mut(is)?.block {
            Block::Tool(tool) => Some(tool),
            _ => None,
        }
    }

    pub fn shell_mut(&mut self, op_id: &str) -> Option<&mut ShellBlock> {
        let is = |b: &Block| matches!(b, Block::Shell { op_id: id, .. } if id == op_id);
        match &mut self.newest_mut(is)?.block {
            Block::Shell { block, .. } => Some(block),
            _ => None,
        }
    }

    /// The newest running shell block (a saved `shell` message ends it).
    pub fn running_shell_mut(&mut self) -> Option<&mut ShellBlock> {
        let is = |b: &Block| matches!(b, Block::Shell { block, .. } if block.is_running());
        match &mut self.newest_mut(is)?.block {
            Block::Shell { block, .. } => Some(block),
            _ => None,
        }
    }

    /// Whether the newest block is a notice saying `text`.
    /// Whether the person said anything in this session (shown or loaded).
    pub fn has_user_message(&self) -> bool {
        self.entries
            .iter()
            .any(|e| matches!(e.block, Block::User(..)))
    }

    pub fn ends_with_notice(&self, text: &str) -> bool {
        matches!(self.entries.last(), Some(Entry { block: Block::Notice { text: t, .. }, .. }) if t == text)
    }

    pub fn show_thinking(&self) -> bool {
        self.show_thinking
    }

    pub fn set_show_thinking(&mut self, on: bool) {
        self.show_thinking = on;
        self.invalidate();
    }

    /// Unfolds (or folds) every tool and shell output.
    pub fn toggle_expanded(&mut self) {
        self.expanded = !self.expanded;
        for entry in &mut self.entries {
            set_expanded(&mut entry.block, self.expanded);
            entry.changed();
        }
    }

    /// Forgets every cached drawing (theme or visibility changed).
    pub fn invalidate(&mut self) {
        for entry in &mut self.entries {
            entry.changed();
        }
    }

    /// Whether anything is animating (a running tool's spinner).
    pub fn animating(&self) -> bool {
        self.entries.iter().any(|e| match &e.block {
            Block::Tool(t) => t.is_running(),
            Block::Shell { block, .. } => block.is_running(),
            _ => false,
        })
    }

    /// Rows of block `index` at `width` (0 for hidden blocks), drawing it
    /// only when its height is not known.
    /// `keep` says, given the rows, whether the caller draws the block now:
    /// then its lines stay, and are not drawn twice.
    fn block_height(
        &mut self,
        index: usize,
        width: u16,
        theme: &Theme,
        frame: usize,
        keep: impl FnOnce(usize) -> bool,
    ) -> usize {
        if let Some(Entry {
            height: Some((w, rows)),
            ..
        }) = self.entries.get(index)
            && *w == width
        {
            return *rows;
        }
        let rows = self.block_lines(index, width, theme, frame).len();
        let newest = index + 1 == self.entries.len();
        let shown = keep(rows);
        if let Some(entry) = self.entries.get_mut(index) {
            entry.height = Some((width, rows));
            // Measured, not shown: the lines go at once, so counting a long
            // session never holds all of it drawn. The newest block is
            // kept: it is the one that streams.
            if !newest && !shown {
                entry.forget_lines();
            }
        }
        rows
    }

    /// Forgets the drawn lines of every block outside `keep` (the blocks on
    /// screen) but the newest, so memory stays flat however long the
    /// session and however far the user scrolled.
    fn forget_lines_outside(&mut self, keep: std::ops::RangeInclusive<usize>) {
        let newest = self.entries.len().saturating_sub(1);
        for (index, entry) in self.entries.iter_mut().enumerate() {
            if !keep.contains(&index) && index != newest {
                entry.forget_lines();
            }
        }
    }

    /// Blocks holding drawn lines (plain blocks; for tests).
    #[cfg(test)]
    fn drawn(&self) -> usize {
        self.entries.iter().filter(|e| e.cache.is_some()).count()
    }

    /// Blocks whose height is known (for tests).
    #[cfg(test)]
    fn measured(&self) -> usize {
        self.entries.iter().filter(|e| e.height.is_some()).count()
    }

    /// Lines of block `index` at `width`; empty for hidden blocks.
    /// Answers, tool calls and shell commands cache their own lines; the
    /// other blocks are cached here.
    fn block_lines(
        &mut self,
        index: usize,
        width: u16,
        theme: &Theme,
        frame: usize,
    ) -> &[Line<'static>] {
        let show_thinking = self.show_thinking;
        let expanded = self.expanded;
        let Some(entry) = self.entries.get_mut(index) else {
            return &[];
        };
        let Entry {
            block,
            cache,
            group,
            ..
        } = entry;
        match (&*group, &*block) {
            (Group::Member, _) if !expanded => return &[],
            (Group::Leads(subjects), Block::Tool(tool)) if !expanded => {
                if cache.as_ref().is_none_or(|(w, _)| *w != width) {
                    let lines = tool::group_lines(tool.verb(), subjects, width, theme);
                    *cache = Some((width, lines));
                }
                return cache.as_ref().map(|(_, l)| l.as_slice()).unwrap_or(&[]);
            }
            _ => {}
        }
        match block {
            Block::Assistant(md) => md.lines(width, theme),
            Block::Tool(tool) => tool.lines(width, theme, frame),
            Block::Shell { block, .. } => block.lines(width, theme, frame),
            other => {
                if cache.as_ref().is_none_or(|(w, _)| *w != width) {
                    *cache = Some((width, draw_block(other, width, theme, show_thinking)));
                }
                cache.as_ref().map(|(_, l)| l.as_slice()).unwrap_or(&[])
            }
        }
    }
}

/// A read that succeeded, which a run of reads may take in.
fn groupable(block: &Block) -> bool {
    matches!(block, Block::Tool(t) if t.name() == tool::GROUPED_TOOL && t.state() == tool::ToolState::Done)
}

fn set_expanded(block: &mut Block, on: bool) {
    match block {
        Block::Tool(t) => t.set_expanded(on),
        Block::Shell { block, .. } => block.set_expanded(on),
        _ => {}
    }
}

/// A unified diff, each line cut to `width` and coloured by its kind.
fn diff_lines(text: &str, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    text.lines()
        .map(|line| {
            let style = if line.starts_with("+++") || line.starts_with("---") {
                theme.dim
            } else if line.starts_with('+') {
                theme.diff_added
            } else if line.starts_with('-') {
                theme.diff_removed
            } else if line.starts_with("@@") {
                theme.diff_hunk
            } else {
                theme.text
            };
            Line::styled(tool::cut(&tool::one_line(line), usize::from(width)), style)
        })
        .collect()
}

/// Draws the blocks that do not cache themselves.
fn draw_block(block: &Block, width: u16, theme: &Theme, show_thinking: bool) -> Vec<Line<'static>> {
    match block {
        Block::User(text) => wrap_styled(text, width, theme.user, "› ", "  "),
        Block::Reasoning(text) if show_thinking => {
            wrap_styled(text.trim(), width, theme.reasoning, "│ ", "│ ")
        }
        Block::Notice { level, text } => {
            let style = match level {
                Level::Info => theme.dim,
                Level::Warn => theme.warn,
                Level::Error => theme.error,
            };
            wrap_styled(text, width, style, "• ", "  ")
        }
        Block::Welcome(welcome) => welcome.lines(width, theme),
        Block::Retry(text) => wrap_styled(text, width, theme.warn, "↻ ", "  "),
        Block::Compacted(label) => vec![text::rule(label, width, theme.rule)],
        Block::Info(text) => wrap_styled(text, width, theme.dim, "  ", "  "),
        Block::Diff(text) => diff_lines(text, width, theme),
        Block::Reasoning(_) | Block::Assistant(_) | Block::Tool(_) | Block::Shell { .. } => {
            Vec::new()
        }
    }
}
