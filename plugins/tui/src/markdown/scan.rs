//! Cuts the text into chunks of whole top-level blocks, reading it once,
//! line by line, as it streams in.
//!
//! A chunk boundary is decided from the text before it plus at most the
//! first [`LOOK`] bytes of the line after it, and never moves once decided.
//! So cutting a text in one go and cutting it while it streams in give the
//! same chunks, and a finished chunk is drawn once and kept.
//!
//! Boundaries (a line "at the margin" starts at column 0 with a visible
//! character, outside any fenced code):
//! - before a margin line that follows a blank line, an ATX heading or a
//!   `***`/`___` rule (such a line can continue no earlier block: lists,
//!   quotes and paragraphs all end there; link reference definitions are
//!   only seen within their own chunk);
//! - before a margin fence, ATX heading, `***` rule or HTML block start, and
//!   after the fence's closing line or the HTML block's end: fenced code and
//!   HTML blocks are chunks of their own, drawn line by line;
//! - around a table whose header is at the margin: from its header line to
//!   the first line without a pipe (GFM would take that line as a row too);
//! - to bound the work per frame, "joined" cuts (no blank line drawn
//!   between): before a margin list item or quote line once a chunk holds
//!   [`SOFT`] bytes, before any line once it holds [`HARD`] bytes, and
//!   every [`LONG`] bytes of a longer line, after its first space past
//!   that (or between graphemes past twice that when it has no space).
//!   A chunk cut before an indented line loses that indentation (else it
//!   would start as indented code).

use unicode_segmentation::UnicodeSegmentation;

use super::blocks::{self, Fence, HtmlEnd, floor_boundary};

/// Bytes of a line read to judge what it starts; a longer line is judged
/// from its start (it is no fence, table row or delimiter row).
pub(crate) const LOOK: usize = 4096;
/// Chunk size after which a list item or quote at the margin starts a new
/// chunk.
pub(crate) const SOFT: usize = 4096;
/// Chunk size after which any line starts a new chunk.
pub(crate) const HARD: usize = 16 * 1024;
/// Chunk size after which a line is cut within.
pub(crate) const LONG: usize = 16 * 1024;
/// How far past the cut point a grapheme boundary is looked for before
/// cutting at a char boundary (a grapheme of a thousand combining marks).
const GLYPH_SEARCH: usize = 1024;

/// What a chunk holds and so how it is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Any Markdown, parsed as a whole.
    Markdown,
    /// A top-level fenced code block, from its opening line.
    Code(Fence),
    /// A top-level HTML block, shown as text.
    Html(HtmlEnd),
    /// A top-level table, from its header line.
    Table,
}

/// A byte range of the text and how to draw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Chunk {
    pub start: usize,
    pub end: usize,
    pub kind: Kind,
    /// Cut only to bound the work: drawn right under the previous chunk,
    /// without a blank line between.
    pub joined: bool,
}

#[derive(Clone, Debug)]
pub(crate) struct Scanner {
    closed: Vec<Chunk>,
    open: Chunk,
    /// Start of the line being read.
    line_start: usize,
    /// Bytes of that line already searched for its '\n'.
    searched: usize,
    /// The line's start has been judged.
    head_done: bool,
    prev_blank: bool,
    /// The previous line was a heading or rule: the next margin line starts
    /// a new chunk.
    after_block: bool,
    /// The previous line could head a table: its start and cell count.
    header: Option<(usize, usize)>,
    /// A fence opened inside a list or quote (not a chunk of its own).
    inner_fence: Option<Fence>,
}

impl Default for Scanner {
    fn default() -> Scanner {
        Scanner {
            closed: Vec::new(),
            open: Chunk {
                start: 0,
                end: 0,
                kind: Kind::Markdown,
                joined: false,
            },
            line_start: 0,
            searched: 0,
            head_done: false,
            prev_blank: false,
            after_block: false,
            header: None,
            inner_fence: None,
        }
    }
}

impl Scanner {
    /// The chunks that are finished.
    pub(crate) fn closed(&self) -> &[Chunk] {
        &self.closed
    }

    /// The last chunk, still growing, up to `len`.
    pub(crate) fn open(&self, len: usize) -> Chunk {
        Chunk {
            end: len,
            ..self.open
        }
    }

    /// Reads the text added since the last call (`text` only grows between
    /// calls; after a truncation, use a new scanner).
    pub(crate) fn advance(&mut self, text: &str) {
        loop {
            let from = self.searched.max(self.line_start);
            let Some(n) = text.as_bytes()[from..].iter().position(|&b| b == b'\n') else {
                self.searched = text.len();
                if !self.head_done && text.len() - self.line_start >= LOOK {
                    self.head(text, self.line_start, text.len(), false);
                }
                if self.head_done {
                    self.inline_split(text, text.len());
                }
                return;
            };
            let (start, end) = (self.line_start, from + n + 1);
            if !self.head_done {
                self.head(text, start, end, true);
            }
            self.inline_split(text, end);
            self.line_end(text, start, end);
            self.line_start = end;
            self.searched = end;
            self.head_done = false;
        }
    }

    /// Judges the line at `start` from its first bytes (all of it when it
    /// is `complete` and short).
    fn head(&mut self, text: &str, start: usize, end: usize, complete: bool) {
        let whole = complete && end - start <= LOOK;
        let cut = if whole {
            end
        } else {
            floor_boundary(text, start + LOOK)
        };
        let mut head = &text[start..cut];
        if whole {
            head = head.strip_suffix('\n').unwrap_or(head);
            head = head.strip_suffix('\r').unwrap_or(head);
        }
        self.head_done = true;
        match self.open.kind {
            Kind::Code(fence) => {
                if whole && blocks::fence_closes(head, fence) {
                    self.split(text, end, false, Kind::Markdown);
                }
            }
            Kind::Html(HtmlEnd::Blank) => {
                if blocks::is_blank(head) {
                    self.split(text, start, false, Kind::Markdown);
                    self.prev_blank = true;
                }
            }
            Kind::Html(_) => {}
            Kind::Table => {
                if !table_row(head, whole) {
                    self.split(text, start, false, Kind::Markdown);
                    self.markdown_head(text, start, head, whole);
                }
            }
            Kind::Markdown => self.markdown_head(text, start, head, whole),
        }
    }

    fn markdown_head(&mut self, text: &str, start: usize, head: &str, whole: bool) {
        let header = self.header.take();
        if let Some(fence) = self.inner_fence {
            if whole && blocks::fence_closes(blocks::strip_containers(head), fence) {
                self.inner_fence = None;
            }
            self.hard_split(text, start);
            self.prev_blank = blocks::is_blank(head);
            return;
        }
        if blocks::is_blank(head) {
            self.prev_blank = true;
            return;
        }
        if blocks::at_margin(head) && self.margin_line(text, start, head, whole) {
            return;
        }
        self.hard_split(text, start);
        let delimiter = whole.then(|| blocks::delimiter_cells(head)).flatten();
        if let Some((header_start, cells)) = header
            && header_start >= self.open.start
            && delimiter == Some(cells)
        {
            self.split(text, header_start, false, Kind::Table);
            self.end_line();
            return;
        }
        if whole && let Some(fence) = blocks::fence_open(blocks::strip_containers(head)) {
            self.inner_fence = Some(fence);
        }
        let can_head = whole && blocks::at_margin(head) && head.contains('|');
        self.header = can_head.then(|| (start, blocks::table_cells(head).len()));
        self.end_line();
    }

    /// The boundaries before a line at the margin; true when the line
    /// started a chunk of its own kind and needs nothing more.
    fn margin_line(&mut self, text: &str, start: usize, head: &str, whole: bool) -> bool {
        if whole && let Some(fence) = blocks::fence_open(head) {
            self.split(text, start, false, Kind::Code(fence));
            self.end_line();
            return true;
        }
        let after_break = self.prev_blank || self.after_block || self.open.start == start;
        if let Some(end) = blocks::html_start(head, whole, after_break) {
            self.split(text, start, false, Kind::Html(end));
            self.end_line();
            return true;
        }
        if blocks::atx_heading(head) || blocks::star_break(head) {
            self.split(text, start, false, Kind::Markdown);
            self.end_line();
            self.after_block = true;
            return true;
        }
        if self.prev_blank || self.after_block {
            self.split(text, start, false, Kind::Markdown);
        } else if start - self.open.start >= SOFT && blocks::starts_item_or_quote(head) {
            self.split(text, start, true, Kind::Markdown);
        }
        false
    }

    fn hard_split(&mut self, text: &str, start: usize) {
        if start - self.open.start >= HARD {
            self.split(text, start, true, Kind::Markdown);
        }
    }

    fn end_line(&mut self) {
        self.prev_blank = false;
        self.after_block = false;
    }

    /// What only the whole line tells: whether it ends an HTML block.
    fn line_end(&mut self, text: &str, start: usize, end: usize) {
        if let Kind::Html(html) = self.open.kind
            && html != HtmlEnd::Blank
            && blocks::html_ends(&text[start..end], html)
        {
            self.split(text, end, false, Kind::Markdown);
            self.end_line();
        }
    }

    /// Cuts a Markdown chunk within a line longer than [`LONG`].
    fn inline_split(&mut self, text: &str, upto: usize) {
        while self.open.kind == Kind::Markdown {
            // The part of this line in the chunk: whole lines are bounded
            // by HARD, this bounds the line.
            let start = self.open.start.max(self.line_start);
            if upto <= start + LONG {
                return;
            }
            let from = start + LONG;
            let to = upto.min(start + 2 * LONG);
            let space = match from < to {
                true => text.as_bytes()[from..to].iter().position(|&b| b == b' '),
                false => None,
            };
            let at = match space {
                Some(n) => from + n + 1,
                None if upto > start + 2 * LONG => {
                    match glyph_boundary(text, start, start + 2 * LONG, upto) {
                        Some(at) => at,
                        None => return,
                    }
                }
                None => return,
            };
            self.split(text, at, true, Kind::Markdown);
        }
    }

    /// Ends the open chunk at `at` and opens one of `kind` there; when the
    /// open chunk is empty it only changes kind, and when it holds only
    /// blank lines it is dropped.
    fn split(&mut self, text: &str, at: usize, joined: bool, kind: Kind) {
        let start = self.open.start;
        if at <= start {
            self.open.kind = kind;
            self.open.joined &= kind == Kind::Markdown;
            return;
        }
        if blocks::is_blank(&text[start..at]) {
            self.open = Chunk {
                start: at,
                end: at,
                kind,
                joined: false,
            };
            return;
        }
        self.closed.push(Chunk {
            end: at,
            ..self.open
        });
        self.open = Chunk {
            start: at,
            end: at,
            kind,
            joined,
        };
    }
}

/// A line that continues a table: one holding a pipe that starts nothing
/// else.
fn table_row(head: &str, whole: bool) -> bool {
    let starts_block = blocks::at_margin(head)
        && (blocks::fence_open(head).is_some() || blocks::atx_heading(head));
    whole && head.contains('|') && !blocks::is_blank(head) && !starts_block
}

/// The first grapheme boundary at or past `target` in `text[start..upto]`
/// (only a boundary whose next character has arrived, so it is final); past
/// a grapheme longer than [`GLYPH_SEARCH`] bytes, a char boundary.
fn glyph_boundary(text: &str, start: usize, target: usize, upto: usize) -> Option<usize> {
    let slice = text.get(start..upto)?;
    let found = slice
        .grapheme_indices(true)
        .map(|(i, _)| start + i)
        .find(|&i| i >= target);
    match found {
        Some(at) if at < target + GLYPH_SEARCH => Some(at),
        _ if upto > target + GLYPH_SEARCH => {
            let mut at = target + GLYPH_SEARCH;
            while !text.is_char_boundary(at) {
                at += 1;
            }
            Some(at)
        }
        _ => None,
    }
}
