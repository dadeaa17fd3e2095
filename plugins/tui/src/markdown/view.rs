//! The drawing of a text at one width: finished chunks are drawn once and
//! kept; the open chunk draws its final lines once and the rest each frame.

use std::borrow::Cow;

use ratatui::style::Style;
use ratatui::text::Line;

use super::memo::CodeMemo;
use super::render::{Ctx, render_markdown};
use super::scan::{Chunk, Kind, Scanner};
use super::table_view::TableView;
use super::verbatim::VerbatimView;
use crate::theme::Theme;

pub(crate) struct View {
    width: u16,
    styles: Theme,
    lines: Vec<Line<'static>>,
    /// `lines[..stable]` do not change while the text grows.
    stable: usize,
    /// The number of lines after each finished chunk.
    ends: Vec<usize>,
    open: Option<Open>,
    memo: CodeMemo,
    /// The text length last drawn.
    drawn: Option<usize>,
}

/// The chunk being streamed and how far it is drawn.
struct Open {
    start: usize,
    kind: Kind,
    joined: bool,
    body: Body,
    /// Lines before this chunk.
    base: usize,
    /// Its first final lines (and the blank line before them) are placed.
    shown: bool,
}

enum Body {
    Markdown,
    Verbatim(VerbatimView),
    Table(TableView),
}

impl View {
    pub(crate) fn new(width: u16, styles: Theme) -> View {
        View {
            width,
            styles,
            lines: Vec::new(),
            stable: 0,
            ends: Vec::new(),
            open: None,
            memo: CodeMemo::default(),
            drawn: None,
        }
    }

    pub(crate) fn fits(&self, width: u16, theme: &Theme) -> bool {
        self.width == width && looks(&self.styles) == looks(theme)
    }

    pub(crate) fn lines(&self) -> &[Line<'static>] {
        &self.lines
    }

    /// Draws what changed since the last call.
    pub(crate) fn update(&mut self, text: &str, scanner: &Scanner) {
        if self.drawn == Some(text.len()) {
            return;
        }
        self.lines.truncate(self.stable);
        for &chunk in scanner.closed().get(self.ends.len()..).unwrap_or_default() {
            let mut open = self.take_open(&chunk);
            let source = &text[chunk.start..chunk.end];
            let mut lines = self.advance(&mut open, source);
            lines.extend(self.tail(&open, source));
            self.place(&mut open, lines, chunk.joined, true);
            self.stable = self.lines.len();
            self.ends.push(self.stable);
        }
        let chunk = scanner.open(text.len());
        let mut open = self.take_open(&chunk);
        let source = &text[chunk.start..];
        let fixed = self.advance(&mut open, source);
        self.place(&mut open, fixed, chunk.joined, true);
        self.stable = self.lines.len();
        let tail = self.tail(&open, source);
        self.place(&mut open, tail, chunk.joined, false);
        self.open = Some(open);
        self.drawn = Some(text.len());
    }

    /// Forgets everything after the first `chunks` finished chunks (the
    /// text was truncated).
    pub(crate) fn keep(&mut self, chunks: usize) {
        self.ends.truncate(chunks);
        self.stable = self.ends.last().copied().unwrap_or(0);
        self.lines.truncate(self.stable);
        self.open = None;
        self.drawn = None;
    }

    /// The drawing state of `chunk`: the one kept from the last frame when
    /// it is the same chunk.
    fn take_open(&mut self, chunk: &Chunk) -> Open {
        match self.open.take() {
            Some(open) if open.start == chunk.start && open.kind == chunk.kind => return open,
            Some(stale) => {
                self.lines.truncate(stale.base);
                self.stable = stale.base;
            }
            None => {}
        }
        let body = match chunk.kind {
            Kind::Markdown => Body::Markdown,
            Kind::Code(fence) => Body::Verbatim(VerbatimView::new(Some(fence), &self.styles)),
            Kind::Html(_) => Body::Verbatim(VerbatimView::new(None, &self.styles)),
            Kind::Table => Body::Table(TableView::default()),
        };
        Open {
            start: chunk.start,
            kind: chunk.kind,
            joined: chunk.joined,
            body,
            base: self.lines.len(),
            shown: false,
        }
    }

    fn advance(&mut self, open: &mut Open, source: &str) -> Vec<Line<'static>> {
        let width = usize::from(self.width);
        match &mut open.body {
            Body::Markdown => Vec::new(),
            Body::Verbatim(view) => view.advance(source, width, &self.styles),
            Body::Table(view) => view.advance(source, width, &self.styles),
        }
    }

    fn tail(&mut self, open: &Open, source: &str) -> Vec<Line<'static>> {
        let mut ctx = Ctx {
            width: usize::from(self.width),
            styles: &self.styles,
            memo: &mut self.memo,
        };
        match &open.body {
            Body::Markdown if open.joined => render_markdown(&dedent(source), &mut ctx),
            Body::Markdown => render_markdown(source, &mut ctx),
            Body::Verbatim(view) => view.tail(source, ctx.width, ctx.styles),
            Body::Table(view) => view.tail(source, &mut ctx),
        }
    }

    /// Appends a chunk's lines, after a blank line when something is above
    /// and the chunk is not joined to it.
    fn place(&mut self, open: &mut Open, lines: Vec<Line<'static>>, joined: bool, fixed: bool) {
        if lines.is_empty() {
            return;
        }
        if !open.shown && open.base > 0 && !joined {
            self.lines.push(Line::default());
        }
        open.shown |= fixed;
        self.lines.extend(lines);
    }
}

/// A chunk cut off the middle of an indented block (a deep list) would
/// start as indented code: it loses the indentation of its first line.
fn dedent(source: &str) -> Cow<'_, str> {
    let indent = source.bytes().take_while(|&b| b == b' ').count();
    if indent < 4 {
        return Cow::Borrowed(source);
    }
    let lines = source.split_inclusive('\n');
    let trimmed = lines.map(|line| {
        let spaces = line.bytes().take(indent).take_while(|&b| b == b' ').count();
        &line[spaces..]
    });
    Cow::Owned(trimmed.collect())
}

/// What of a theme the drawing depends on.
fn looks(theme: &Theme) -> ([Style; 18], bool) {
    let [h1, h2, h3, h4, h5, h6] = theme.heading;
    let styles = [
        theme.text,
        theme.dim,
        theme.emphasis,
        theme.strong,
        theme.strikethrough,
        theme.code_inline,
        theme.code_block,
        theme.link,
        theme.quote,
        theme.list_marker,
        theme.rule,
        theme.table_border,
        h1,
        h2,
        h3,
        h4,
        h5,
        h6,
    ];
    (styles, theme.colors)
}
