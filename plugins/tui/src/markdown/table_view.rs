//! A top-level table being streamed. Until [`WIDTH_ROWS`] rows have come,
//! the whole table is drawn each frame (its widths may still change); then
//! widths are fixed and each later row is drawn once, when complete.

use ratatui::text::Line;

use super::inline::Inline;
use super::render::{Ctx, parse_table, render_markdown};
use super::table::{Layout, TableParts, WIDTH_ROWS};
use crate::theme::Theme;

#[derive(Default)]
pub(crate) struct TableView {
    /// The header and delimiter lines (rows are parsed after them, so GFM
    /// decides the cells) and the parsed header.
    head: Option<(String, TableParts)>,
    consumed: usize,
    /// Complete rows while the widths are not fixed.
    rows: Vec<Vec<Inline>>,
    layout: Option<Layout>,
}

impl TableView {
    /// Draws what can no longer change: everything up to the first
    /// [`WIDTH_ROWS`] rows once they are complete, then each later row.
    pub(crate) fn advance(
        &mut self,
        chunk: &str,
        width: usize,
        styles: &Theme,
    ) -> Vec<Line<'static>> {
        self.read_head(chunk, styles);
        let mut out = Vec::new();
        while let Some(n) = chunk.get(self.consumed..).and_then(|rest| rest.find('\n')) {
            let line = &chunk[self.consumed..self.consumed + n];
            self.consumed += n + 1;
            let cells = self.parse_row(line, styles);
            match &self.layout {
                Some(layout) => out.extend(layout.row(&cells, styles).into_iter().map(Line::from)),
                None => self.rows.push(cells),
            }
            if self.layout.is_none() && self.rows.len() >= WIDTH_ROWS {
                out.extend(self.fix_widths(width, styles));
            }
        }
        out
    }

    fn read_head(&mut self, chunk: &str, styles: &Theme) {
        if self.head.is_some() {
            return;
        }
        let Some(first) = chunk.find('\n') else {
            return;
        };
        let Some(second) = chunk[first + 1..].find('\n') else {
            return;
        };
        let source = chunk[..first + second + 2].to_owned();
        let parts = parse_table(&source, styles).unwrap_or_default();
        self.consumed = source.len();
        self.head = Some((source, parts));
    }

    fn parse_row(&self, line: &str, styles: &Theme) -> Vec<Inline> {
        let Some((source, _)) = &self.head else {
            return Vec::new();
        };
        let text = format!("{source}{line}\n");
        let parts = parse_table(&text, styles).unwrap_or_default();
        parts.rows.into_iter().next().unwrap_or_default()
    }

    fn fix_widths(&mut self, width: usize, styles: &Theme) -> Vec<Line<'static>> {
        let Some((_, head)) = &self.head else {
            return Vec::new();
        };
        let layout = Layout::new(
            &head.aligns,
            &head.header,
            self.rows.iter().map(Vec::as_slice),
            width,
        );
        let mut out = layout.head(&head.header, styles);
        for row in self.rows.drain(..) {
            out.extend(layout.row(&row, styles));
        }
        self.layout = Some(layout);
        out.into_iter().map(Line::from).collect()
    }

    /// The rest for this frame: the row still arriving and the bottom
    /// border (the whole table while widths are not fixed); a line without
    /// a pipe is not a row and is drawn as the Markdown after the table.
    pub(crate) fn tail(&self, chunk: &str, ctx: &mut Ctx) -> Vec<Line<'static>> {
        let Some((_, head)) = &self.head else {
            return Vec::new();
        };
        let partial = chunk.get(self.consumed..).unwrap_or("");
        let row = partial
            .contains('|')
            .then(|| self.parse_row(partial, ctx.styles));
        let styles = ctx.styles;
        let mut out = Vec::new();
        let computed;
        let layout = match &self.layout {
            Some(layout) => layout,
            None => {
                let rows = self.rows.iter().chain(row.iter()).map(Vec::as_slice);
                computed = Layout::new(&head.aligns, &head.header, rows, ctx.width);
                out.extend(computed.head(&head.header, styles));
                for cells in &self.rows {
                    out.extend(computed.row(cells, styles));
                }
                &computed
            }
        };
        if let Some(cells) = &row {
            out.extend(layout.row(cells, styles));
        }
        out.extend(layout.bottom(styles));
        let mut lines: Vec<Line<'static>> = out.into_iter().map(Line::from).collect();
        if row.is_none() && !partial.trim().is_empty() {
            lines.push(Line::default());
            lines.extend(render_markdown(partial, ctx));
        }
        lines
    }
}
