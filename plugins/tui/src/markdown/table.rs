//! Tables drawn with box lines: columns as wide as their content, shrunk
//! to fit the screen, cells wrapped.

use pulldown_cmark::Alignment;
use ratatui::text::Span;

use super::inline::Inline;
use super::rows::{Row, row_width};
use crate::theme::Theme;

/// Column widths come from the header and this many first rows, so that a
/// streaming table's rows below them are drawn once and never move.
pub(crate) const WIDTH_ROWS: usize = 40;

/// The cells of a table.
#[derive(Clone, Debug, Default)]
pub(crate) struct TableParts {
    pub aligns: Vec<Alignment>,
    pub header: Vec<Inline>,
    pub rows: Vec<Vec<Inline>>,
}

/// How a table's columns are laid out in some width.
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    widths: Vec<usize>,
    aligns: Vec<Alignment>,
    /// A space on each side of every cell.
    padded: bool,
    /// Too narrow for columns: each row is one line of text, cells
    /// separated by bars.
    stacked: Option<usize>,
}

/// Every line of a whole table.
pub(crate) fn draw(parts: &TableParts, width: usize, styles: &Theme) -> Vec<Row> {
    let layout = Layout::new(
        &parts.aligns,
        &parts.header,
        parts.rows.iter().map(Vec::as_slice),
        width,
    );
    let mut out = layout.head(&parts.header, styles);
    for row in &parts.rows {
        out.extend(layout.row(row, styles));
    }
    out.extend(layout.bottom(styles));
    out
}

impl Layout {
    /// Widths from the header and the first [`WIDTH_ROWS`] rows.
    pub(crate) fn new<'r>(
        aligns: &[Alignment],
        header: &'r [Inline],
        rows: impl Iterator<Item = &'r [Inline]>,
        width: usize,
    ) -> Layout {
        let columns = header.len().max(1);
        let mut natural = vec![1; columns];
        for row in std::iter::once(header).chain(rows.take(WIDTH_ROWS)) {
            for (column, cell) in row.iter().enumerate().take(columns) {
                natural[column] = natural[column].max(cell.natural_width());
            }
        }
        let (padded, tight) = (3 * columns + 1, columns + 1);
        let (widths, padded, stacked) = if width >= padded + columns {
            (fit(&natural, width - padded), true, None)
        } else if width >= tight + columns {
            (fit(&natural, width - tight), false, None)
        } else {
            (Vec::new(), false, Some(width))
        };
        Layout {
            widths,
            aligns: aligns.to_vec(),
            padded,
            stacked,
        }
    }

    /// Top border, header row and the line under it.
    pub(crate) fn head(&self, header: &[Inline], styles: &Theme) -> Vec<Row> {
        let mut out: Vec<Row> = self.border(['┌', '┬', '┐'], styles).into_iter().collect();
        out.extend(self.row(header, styles));
        out.extend(self.border(['├', '┼', '┤'], styles));
        out
    }

    pub(crate) fn bottom(&self, styles: &Theme) -> Option<Row> {
        self.border(['└', '┴', '┘'], styles)
    }

    fn border(&self, [left, middle, right]: [char; 3], styles: &Theme) -> Option<Row> {
        if self.stacked.is_some() {
            return None;
        }
        let pad = if self.padded { 2 } else { 0 };
        let mut line = String::new();
        line.push(left);
        for (i, width) in self.widths.iter().enumerate() {
            if i > 0 {
                line.push(middle);
            }
            line.extend(std::iter::repeat_n('─', width + pad));
        }
        line.push(right);
        Some(vec![Span::styled(line, styles.table_border)])
    }

    /// The lines of one row: cells wrapped to their columns, side by side.
    pub(crate) fn row(&self, cells: &[Inline], styles: &Theme) -> Vec<Row> {
        if let Some(width) = self.stacked {
            return stacked_row(cells, width, styles);
        }
        let wrapped: Vec<Vec<Row>> = self
            .widths
            .iter()
            .enumerate()
            .map(|(i, &width)| {
                cells
                    .get(i)
                    .map(|cell| cell.wrap(width))
                    .unwrap_or_default()
            })
            .collect();
        let height = wrapped.iter().map(Vec::len).max().unwrap_or(0).max(1);
        let bar = Span::styled("│", styles.table_border);
        let pad = if self.padded { " " } else { "" };
        (0..height)
            .map(|line| {
                let mut spans = vec![bar.clone()];
                for (column, rows) in wrapped.iter().enumerate() {
                    let content = rows.get(line).cloned().unwrap_or_default();
                    let align = self.aligns.get(column).copied().unwrap_or(Alignment::None);
                    spans.push(Span::raw(pad));
                    spans.extend(aligned(content, self.widths[column], align));
                    spans.push(Span::raw(pad));
                    spans.push(bar.clone());
                }
                spans
            })
            .collect()
    }
}

/// Shares `room` columns: a column wider than an equal share of what is
/// left gets that share, narrower ones their natural width.
fn fit(natural: &[usize], room: usize) -> Vec<usize> {
    if natural.iter().sum::<usize>() <= room {
        return natural.to_vec();
    }
    let mut order: Vec<usize> = (0..natural.len()).collect();
    order.sort_by_key(|&i| natural[i]);
    let mut widths = vec![1; natural.len()];
    let mut left = room;
    for (done, &i) in order.iter().enumerate() {
        let share = left / (natural.len() - done);
        widths[i] = natural[i].min(share).max(1);
        left = left.saturating_sub(widths[i]);
    }
    for &i in order.iter().rev() {
        let extra = left.min(natural[i] - widths[i].min(natural[i]));
        widths[i] += extra;
        left -= extra;
    }
    widths
}

fn aligned(content: Row, width: usize, align: Alignment) -> Row {
    let free = width.saturating_sub(row_width(&content));
    let before = match align {
        Alignment::Right => free,
        Alignment::Center => free / 2,
        Alignment::Left | Alignment::None => 0,
    };
    let mut spans = Vec::with_capacity(content.len() + 2);
    if before > 0 {
        spans.push(Span::raw(" ".repeat(before)));
    }
    spans.extend(content);
    if free > before {
        spans.push(Span::raw(" ".repeat(free - before)));
    }
    spans
}

/// A row as text when columns cannot fit: cells separated by bars.
fn stacked_row(cells: &[Inline], width: usize, styles: &Theme) -> Vec<Row> {
    let mut line = Inline::new();
    for (i, cell) in cells.iter().enumerate() {
        if i > 0 {
            line.push(" │ ", styles.table_border);
        }
        line.append(cell);
    }
    line.wrap(width)
}
