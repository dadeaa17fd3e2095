//! A top-level fenced code block or HTML block being streamed: each line
//! is drawn once, when its '\n' arrives, so a block of any length costs the
//! same per frame; only the line still arriving is drawn each frame.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::blocks::{Fence, fence_closes, fence_info, may_close};
use super::code::{CodeLines, MAX_COLORED_LINE, code_rows};
use super::rows::Row;
use crate::theme::Theme;

/// Columns code is indented by, to set it apart from prose.
pub(crate) const CODE_INDENT: usize = 2;
/// Prose keeps at least this many columns (or the whole screen when it is
/// narrower), however deep it is nested.
pub(crate) const MIN_CONTENT: usize = 20;

pub(crate) struct VerbatimView {
    /// `Some` for code: the fence that opened it, to find the closing one.
    fence: Option<Fence>,
    lines: Option<CodeLines>,
    text_style: Style,
    /// Bytes of the chunk taken as whole lines.
    consumed: usize,
    closed: bool,
    /// Bytes of the line still arriving already drawn as final rows (only
    /// for a line too long to colour: its rows cannot change any more).
    long_done: usize,
}

impl VerbatimView {
    /// A code block opened by `fence`, or (`None`) an HTML block shown as
    /// plain text.
    pub(crate) fn new(fence: Option<Fence>, styles: &Theme) -> VerbatimView {
        VerbatimView {
            fence,
            lines: None,
            text_style: styles.text,
            consumed: 0,
            closed: false,
            long_done: 0,
        }
    }

    /// Draws the whole lines not drawn yet: they never change afterwards.
    pub(crate) fn advance(
        &mut self,
        chunk: &str,
        width: usize,
        styles: &Theme,
    ) -> Vec<Line<'static>> {
        let mut out = Vec::new();
        while !self.closed {
            let Some(rest) = chunk.get(self.consumed..) else {
                break;
            };
            let Some(n) = rest.find('\n') else { break };
            let line = rest[..n].strip_suffix('\r').unwrap_or(&rest[..n]);
            self.whole_line(line, width, styles, &mut out);
            self.consumed += n + 1;
            self.long_done = 0;
        }
        self.advance_long_line(chunk, width, &mut out);
        out
    }

    fn whole_line(
        &mut self,
        line: &str,
        width: usize,
        styles: &Theme,
        out: &mut Vec<Line<'static>>,
    ) {
        match (self.fence, &mut self.lines) {
            (Some(_), None) => {
                self.lines = Some(CodeLines::new(fence_info(line), styles));
            }
            (Some(fence), Some(_)) if fence_closes(line, fence) => self.closed = true,
            _ => {
                let pieces = self.pieces(line, styles);
                let from = self.long_done;
                let rows = rows_from(line, &pieces, from, self.content_width(width));
                out.extend(rows.into_iter().map(|(row, _)| self.line(row, width)));
            }
        }
    }

    /// A line too long to colour: its rows but the last are final.
    fn advance_long_line(&mut self, chunk: &str, width: usize, out: &mut Vec<Line<'static>>) {
        let partial = chunk.get(self.consumed..).unwrap_or("");
        if self.closed || !self.started() || partial.len() <= MAX_COLORED_LINE {
            return;
        }
        if let Some(lines) = &mut self.lines {
            lines.stop_colors();
        }
        let pieces = vec![(partial.len(), self.base())];
        let mut rows = rows_from(partial, &pieces, self.long_done, self.content_width(width));
        rows.pop();
        for (row, end) in rows {
            self.long_done = end;
            out.push(self.line(row, width));
        }
    }

    /// The line still arriving, drawn for this frame only.
    pub(crate) fn tail(&self, chunk: &str, width: usize, styles: &Theme) -> Vec<Line<'static>> {
        let partial = chunk.get(self.consumed..).unwrap_or("");
        let closing = self.fence.is_some_and(|fence| may_close(partial, fence));
        if self.closed || !self.started() || partial.is_empty() || closing {
            return Vec::new();
        }
        let pieces = match &self.lines {
            Some(lines) => lines.peek(partial),
            None => vec![(partial.len(), styles.text)],
        };
        let rows = rows_from(partial, &pieces, self.long_done, self.content_width(width));
        rows.into_iter()
            .map(|(row, _)| self.line(row, width))
            .collect()
    }

    fn started(&self) -> bool {
        self.fence.is_none() || self.lines.is_some()
    }

    fn base(&self) -> Style {
        self.lines.as_ref().map_or(self.text_style, CodeLines::base)
    }

    fn pieces(&mut self, line: &str, styles: &Theme) -> Vec<(usize, Style)> {
        match &mut self.lines {
            Some(lines) => lines.push(line),
            None => vec![(line.len(), styles.text)],
        }
    }

    fn indent(&self, width: usize) -> usize {
        match self.fence {
            Some(_) => code_indent(width),
            None => 0,
        }
    }

    fn content_width(&self, width: usize) -> usize {
        width - self.indent(width)
    }

    fn line(&self, row: Row, width: usize) -> Line<'static> {
        indented(row, self.indent(width))
    }
}

/// Columns code is indented by in `width` columns: none when that would
/// leave it too little room.
pub(crate) fn code_indent(width: usize) -> usize {
    if width >= MIN_CONTENT + CODE_INDENT {
        CODE_INDENT
    } else {
        0
    }
}

/// `row` after `indent` spaces.
pub(crate) fn indented(row: Row, indent: usize) -> Line<'static> {
    let mut spans = Vec::with_capacity(row.len() + 1);
    if indent > 0 {
        spans.push(Span::raw(" ".repeat(indent)));
    }
    spans.extend(row);
    Line::from(spans)
}

/// Rows of `line` from byte `from` (the start of a row already drawn) on.
fn rows_from(
    line: &str,
    pieces: &[(usize, Style)],
    from: usize,
    width: usize,
) -> Vec<(Row, usize)> {
    let Some(rest) = line.get(from..) else {
        return Vec::new();
    };
    let shifted: Vec<(usize, Style)> = pieces
        .iter()
        .filter(|(end, _)| *end > from)
        .map(|&(end, style)| (end - from, style))
        .collect();
    code_rows(rest, &shifted, width)
        .into_iter()
        .map(|(row, end)| (row, end + from))
        .collect()
}
