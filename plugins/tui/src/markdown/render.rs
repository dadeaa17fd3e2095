//! Draws a chunk of Markdown: walks pulldown-cmark's events and lays out
//! blocks inside their containers (quotes, list items).

use pulldown_cmark::{Alignment, CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::code::{code_lines, code_rows};
use super::inline::Inline;
use super::memo::CodeMemo;
use super::rows::Row;
use super::table::{self, TableParts};
use super::verbatim::{MIN_CONTENT, code_indent, indented};
use crate::theme::Theme;

/// What drawing needs besides the text.
pub(crate) struct Ctx<'a> {
    pub width: usize,
    pub styles: &'a Theme,
    pub memo: &'a mut CodeMemo,
}

fn options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS
}

/// The lines of a chunk of Markdown at `ctx.width` (at least 1) columns.
pub(crate) fn render_markdown(text: &str, ctx: &mut Ctx) -> Vec<Line<'static>> {
    let mut walker = Walker::new(ctx, false);
    for event in Parser::new_ext(text, options()) {
        walker.event(event);
    }
    let lines = walker.finish();
    ctx.memo.finish_drawing();
    lines
}

/// The cells of the first table in `text`, not drawn.
pub(crate) fn parse_table(text: &str, styles: &Theme) -> Option<TableParts> {
    let mut memo = CodeMemo::default();
    let mut ctx = Ctx {
        width: 1,
        styles,
        memo: &mut memo,
    };
    let mut walker = Walker::new(&mut ctx, true);
    for event in Parser::new_ext(text, options()) {
        walker.event(event);
        if walker.captured.is_some() {
            break;
        }
    }
    walker.captured
}

/// A container that puts something before each of its lines.
enum Frame {
    Quote,
    Item {
        marker: String,
        width: usize,
        pending: bool,
        loose: bool,
    },
}

struct List {
    next: Option<u64>,
    items: usize,
    previous_loose: bool,
}

struct Link {
    dest: String,
    from: usize,
}

struct TableBuild {
    parts: TableParts,
    row: Vec<Inline>,
    in_head: bool,
}

struct Walker<'c, 'a> {
    ctx: &'c mut Ctx<'a>,
    out: Vec<Line<'static>>,
    frames: Vec<Frame>,
    /// Per container level: a block was drawn (the next gets a blank line).
    drawn: Vec<bool>,
    lists: Vec<List>,
    inline: Option<Inline>,
    styles: Vec<Style>,
    links: Vec<Link>,
    code: Option<(String, String)>,
    html: Option<String>,
    table: Option<TableBuild>,
    quotes: usize,
    capture: bool,
    captured: Option<TableParts>,
}

impl<'c, 'a> Walker<'c, 'a> {
    fn new(ctx: &'c mut Ctx<'a>, capture: bool) -> Walker<'c, 'a> {
        Walker {
            ctx,
            out: Vec::new(),
            frames: Vec::new(),
            drawn: vec![false],
            lists: Vec::new(),
            inline: None,
            styles: Vec::new(),
            links: Vec::new(),
            code: None,
            html: None,
            table: None,
            quotes: 0,
            capture,
            captured: None,
        }
    }

    fn event(&mut self, event: Event) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => self.text(&text),
            Event::Code(code) => {
                let style = self.style().patch(self.ctx.styles.code_inline);
                self.inline_mut().push(&code, style);
            }
            Event::InlineMath(text) | Event::DisplayMath(text) => self.text(&text),
            Event::Html(html) | Event::InlineHtml(html) => self.html(&html),
            Event::FootnoteReference(name) => self.text(&format!("[^{name}]")),
            Event::SoftBreak => self.text(" "),
            Event::HardBreak => self.inline_mut().push_break(),
            Event::Rule => self.rule(),
            Event::TaskListMarker(done) => self.task(done),
        }
    }

    fn start(&mut self, tag: Tag) {
        match tag {
            Tag::Paragraph => {
                self.begin_block();
                if let Some(Frame::Item { loose, .. }) = self.frames.last_mut() {
                    *loose = true;
                }
                self.open_inline(self.base());
            }
            Tag::Heading { level, .. } => {
                self.begin_block();
                self.open_inline(self.ctx.styles.heading[heading_index(level)]);
            }
            Tag::BlockQuote(_) => {
                self.begin_block();
                self.frames.push(Frame::Quote);
                self.drawn.push(false);
                self.quotes += 1;
            }
            Tag::CodeBlock(kind) => {
                self.begin_block();
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => info.to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((lang, String::new()));
            }
            Tag::HtmlBlock => {
                self.begin_block();
                self.html = Some(String::new());
            }
            Tag::List(first) => {
                self.begin_block();
                self.lists.push(List {
                    next: first,
                    items: 0,
                    previous_loose: false,
                });
            }
            Tag::Item => self.begin_item(),
            Tag::Table(aligns) => self.begin_table(aligns),
            Tag::TableHead => self.table_row(true),
            Tag::TableRow => self.table_row(false),
            Tag::TableCell => {
                let head = self.table.as_ref().is_some_and(|t| t.in_head);
                let styles = self.ctx.styles;
                self.open_inline(if head { styles.strong } else { styles.text });
            }
            tag => self.start_inline(tag),
        }
    }

    fn start_inline(&mut self, tag: Tag) {
        let styles = self.ctx.styles;
        match tag {
            Tag::Emphasis => self.push_style(styles.emphasis),
            Tag::Strong => self.push_style(styles.strong),
            Tag::Strikethrough => self.push_style(styles.strikethrough),
            Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. } => {
                let from = self.inline_mut().len();
                self.links.push(Link {
                    dest: dest_url.to_string(),
                    from,
                });
                self.push_style(styles.link);
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph | TagEnd::Heading(_) => self.flush_inline(),
            TagEnd::BlockQuote(_) => {
                self.flush_inline();
                self.frames.pop();
                self.drawn.pop();
                self.quotes = self.quotes.saturating_sub(1);
            }
            TagEnd::CodeBlock => self.end_code(),
            TagEnd::HtmlBlock => self.end_html(),
            TagEnd::List(_) => {
                self.flush_inline();
                self.lists.pop();
            }
            TagEnd::Item => self.end_item(),
            TagEnd::Table => self.end_table(),
            TagEnd::TableHead | TagEnd::TableRow => self.end_table_row(),
            TagEnd::TableCell => {
                let cell = self.inline.take().unwrap_or_default();
                if let Some(table) = &mut self.table {
                    table.row.push(cell);
                }
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => {
                self.styles.pop();
            }
            TagEnd::Link | TagEnd::Image => self.end_link(),
            _ => {}
        }
    }

    fn text(&mut self, text: &str) {
        if let Some((_, code)) = &mut self.code {
            code.push_str(text);
        } else if let Some(html) = &mut self.html {
            html.push_str(text);
        } else {
            let style = self.style();
            self.inline_mut().push(text, style);
        }
    }

    /// Raw HTML is shown as text, except that `<br>` breaks the line.
    fn html(&mut self, html: &str) {
        let tag = html.trim().to_ascii_lowercase();
        if self.html.is_none() && matches!(tag.as_str(), "<br>" | "<br/>" | "<br />") {
            self.inline_mut().push_break();
        } else {
            self.text(html);
        }
    }

    /// The style of paragraphs here: quoted text takes the quote style.
    fn base(&self) -> Style {
        let styles = self.ctx.styles;
        match self.quotes {
            0 => styles.text,
            _ => styles.text.patch(styles.quote),
        }
    }

    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or_else(|| self.base())
    }

    fn push_style(&mut self, style: Style) {
        let patched = self.style().patch(style);
        self.styles.push(patched);
    }

    fn open_inline(&mut self, base: Style) {
        self.inline = Some(Inline::new());
        self.styles = vec![base];
    }

    /// The inline text being gathered; text directly in a tight list item
    /// opens one without a paragraph.
    fn inline_mut(&mut self) -> &mut Inline {
        if self.inline.is_none() {
            self.open_inline(self.base());
        }
        self.inline.get_or_insert_with(Inline::new)
    }

    fn flush_inline(&mut self) {
        if self.table.is_some() {
            return;
        }
        if let Some(inline) = self.inline.take() {
            let rows = inline.wrap(self.content_width());
            self.emit(rows);
        }
        self.styles.clear();
    }

    /// Before a block: ends the text of a tight item and puts a blank line
    /// after the previous block of the same container.
    fn begin_block(&mut self) {
        self.flush_inline();
        if self.drawn.last().copied().unwrap_or(false) {
            self.blank();
        }
        if let Some(drawn) = self.drawn.last_mut() {
            *drawn = true;
        }
    }

    fn begin_item(&mut self) {
        self.flush_inline();
        let depth = self.lists.len().saturating_sub(1);
        let Some(list) = self.lists.last_mut() else {
            return;
        };
        let gap = list.items > 0 && list.previous_loose;
        list.items += 1;
        let marker = match &mut list.next {
            Some(n) => {
                let marker = format!("{n}. ");
                *n = n.saturating_add(1);
                marker
            }
            None => format!("{} ", ["•", "◦", "▪"][depth % 3]),
        };
        if gap {
            self.blank();
        }
        let width = marker.chars().count();
        self.frames.push(Frame::Item {
            marker,
            width,
            pending: true,
            loose: false,
        });
        self.drawn.push(false);
    }

    fn end_item(&mut self) {
        self.flush_inline();
        self.drawn.pop();
        if let Some(Frame::Item { loose, .. }) = self.frames.pop()
            && let Some(list) = self.lists.last_mut()
        {
            list.previous_loose = loose;
        }
    }

    /// A task list item shows a box instead of its bullet (after its number
    /// in an ordered list).
    fn task(&mut self, done: bool) {
        let ordered = self.lists.last().is_some_and(|l| l.next.is_some());
        if let Some(Frame::Item { marker, width, .. }) = self.frames.last_mut() {
            let mark = if done { "☑ " } else { "☐ " };
            *marker = if ordered {
                format!("{marker}{mark}")
            } else {
                mark.to_owned()
            };
            *width = marker.chars().count();
        }
    }

    fn end_link(&mut self) {
        self.styles.pop();
        let Some(link) = self.links.pop() else { return };
        let dim = self.ctx.styles.dim;
        let link_style = self.style().patch(self.ctx.styles.link);
        let inline = self.inline_mut();
        let shown = inline.plain().get(link.from..).unwrap_or("").trim();
        let dest = link.dest.as_str();
        if dest.is_empty() || shown == dest || Some(shown) == dest.strip_prefix("mailto:") {
            return;
        }
        if shown.is_empty() {
            inline.push(dest, link_style);
        } else {
            inline.push(" (", dim);
            inline.push(dest, dim);
            inline.push(")", dim);
        }
    }

    fn rule(&mut self) {
        self.begin_block();
        let width = self.content_width();
        let rule = Span::styled("─".repeat(width), self.ctx.styles.rule);
        self.emit(vec![vec![rule]]);
    }

    fn end_code(&mut self) {
        let Some((lang, code)) = self.code.take() else {
            return;
        };
        let width = self.content_width();
        let indent = code_indent(width);
        let pieces = self.ctx.memo.block(&lang, &code, self.ctx.styles);
        let mut lines = Vec::new();
        for (line, pieces) in code_lines(&code).zip(pieces) {
            let rows = code_rows(line, &pieces, width - indent);
            lines.extend(rows.into_iter().map(|(row, _)| indented(row, indent)));
        }
        self.emit(lines.into_iter().map(|line| line.spans).collect());
    }

    fn end_html(&mut self) {
        let Some(html) = self.html.take() else { return };
        let width = self.content_width();
        let style = self.base();
        let rows = code_lines(&html)
            .flat_map(|line| code_rows(line, &[(line.len(), style)], width))
            .map(|(row, _)| row)
            .collect();
        self.emit(rows);
    }

    fn begin_table(&mut self, aligns: Vec<Alignment>) {
        if !self.capture {
            self.begin_block();
        }
        let parts = TableParts {
            aligns,
            header: Vec::new(),
            rows: Vec::new(),
        };
        self.table = Some(TableBuild {
            parts,
            row: Vec::new(),
            in_head: false,
        });
    }

    fn table_row(&mut self, head: bool) {
        if let Some(table) = &mut self.table {
            table.in_head = head;
            table.row.clear();
        }
    }

    fn end_table_row(&mut self) {
        let Some(table) = &mut self.table else { return };
        let row = std::mem::take(&mut table.row);
        match table.in_head {
            true => table.parts.header = row,
            false => table.parts.rows.push(row),
        }
        table.in_head = false;
    }

    fn end_table(&mut self) {
        let Some(build) = self.table.take() else {
            return;
        };
        if self.capture {
            self.captured = Some(build.parts);
            return;
        }
        let width = self.content_width();
        let rows = table::draw(&build.parts, width, self.ctx.styles);
        self.emit(rows);
    }

    /// Columns left for content inside the containers; see [`MIN_CONTENT`].
    fn content_width(&self) -> usize {
        self.ctx.width - self.prefix_width()
    }

    /// Containers take at most what leaves [`MIN_CONTENT`] columns, or a
    /// third of a narrower screen (so list markers still show).
    fn prefix_cap(&self) -> usize {
        let width = self.ctx.width;
        width.saturating_sub(MIN_CONTENT).max(width / 3)
    }

    fn prefix_width(&self) -> usize {
        let mut used = 0;
        for frame in &self.frames {
            used += match frame {
                Frame::Quote => 2,
                Frame::Item { width, .. } => *width,
            };
            if used >= self.prefix_cap() {
                return self.prefix_cap();
            }
        }
        used
    }

    /// The containers' marks for the next line; list markers show on the
    /// first line of their item only.
    fn prefix(&mut self) -> Row {
        let cap = self.prefix_cap();
        let styles = self.ctx.styles;
        let mut spans = Vec::new();
        let mut used = 0;
        for frame in &mut self.frames {
            let (text, style) = match frame {
                Frame::Quote => ("│ ".to_owned(), styles.quote),
                Frame::Item {
                    marker,
                    width,
                    pending,
                    ..
                } => match std::mem::take(pending) {
                    true => (marker.clone(), styles.list_marker),
                    false => (" ".repeat(*width), Style::new()),
                },
            };
            let fit: String = text.chars().take(cap - used).collect();
            used += fit.chars().count();
            spans.push(Span::styled(fit, style));
            if used >= cap {
                break;
            }
        }
        spans
    }

    fn emit(&mut self, rows: Vec<Row>) {
        for row in rows {
            let mut spans = self.prefix();
            spans.extend(row);
            self.out.push(Line::from(spans));
        }
    }

    /// A blank line between blocks, keeping quote bars.
    fn blank(&mut self) {
        let cap = self.prefix_cap();
        let mut spans = Vec::new();
        let mut used = 0;
        for frame in &self.frames {
            let (text, width, style) = match frame {
                Frame::Quote => ("│", 2, self.ctx.styles.quote),
                Frame::Item { width, .. } => ("", *width, Style::new()),
            };
            if used + width > cap {
                break;
            }
            let pad = used
                - spans
                    .iter()
                    .map(|s: &Span| s.content.chars().count())
                    .sum::<usize>();
            if !text.is_empty() {
                spans.push(Span::raw(" ".repeat(pad)));
                spans.push(Span::styled(text, style));
            }
            used += width;
        }
        self.out.push(Line::from(spans));
    }

    fn finish(mut self) -> Vec<Line<'static>> {
        self.flush_inline();
        while self
            .out
            .last()
            .is_some_and(|line| line.spans.iter().all(|s| s.content.trim().is_empty()))
        {
            self.out.pop();
        }
        self.out
    }
}

fn heading_index(level: HeadingLevel) -> usize {
    match level {
        HeadingLevel::H1 => 0,
        HeadingLevel::H2 => 1,
        HeadingLevel::H3 => 2,
        HeadingLevel::H4 => 3,
        HeadingLevel::H5 => 4,
        HeadingLevel::H6 => 5,
    }
}
