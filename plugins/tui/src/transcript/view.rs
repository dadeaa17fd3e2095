//! The part of the transcript on screen: pinned to the bottom while new
//! text arrives, or scrolled back by the user and then held in place while
//! new text arrives below.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::Line;

use super::Transcript;
use crate::theme::Theme;

/// A row of the transcript: block index and row within the block's lines
/// (a block's `len()` is the blank row after it).
type Origin = (usize, usize);

/// Where the view is: `back` rows above the bottom (0 follows new text).
#[derive(Debug, Default, Clone, Copy)]
pub struct Viewport {
    back: usize,
    height: usize,
    /// The top row on screen while scrolled back, so text arriving below
    /// does not move what the user is reading.
    anchor: Option<Origin>,
}

impl Viewport {
    pub fn is_following(&self) -> bool {
        self.back == 0
    }

    pub fn scroll_up(&mut self, rows: usize) {
        // Clamped at the next draw, which finds where the top is.
        self.back = self.back.saturating_add(rows);
        self.anchor = None;
    }

    pub fn scroll_down(&mut self, rows: usize) {
        self.back = self.back.saturating_sub(rows);
        self.anchor = None;
    }

    pub fn page(&self) -> usize {
        self.height.saturating_sub(2).max(1)
    }

    pub fn to_top(&mut self) {
        self.back = usize::MAX;
        self.anchor = None;
    }

    pub fn to_bottom(&mut self) {
        self.back = 0;
        self.anchor = None;
    }

    /// Draws the visible rows into `area`. Only the blocks on screen (and,
    /// when scrolled back, those below it) are visited; they answer from
    /// their caches.
    pub fn render(
        &mut self,
        transcript: &mut Transcript,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        frame: usize,
    ) {
        self.height = usize::from(area.height);
        if let Some(anchor) = self.anchor {
            let below = rows_from(transcript, anchor, area.width, theme, frame);
            self.back = below.saturating_sub(self.height);
        }
        let wanted = self.back.saturating_add(self.height);
        let (rows, total) = collect_from_bottom(transcript, area.width, theme, frame, wanted);
        // Scrolled past the top: the whole transcript was visited, so its
        // size is known and the view stops at its first row.
        if let Some(total) = total {
            self.back = self.back.min(total.saturating_sub(self.height));
        }
        // `rows` holds the bottom `wanted` rows (newest last); show the
        // window that ends `back` rows above the bottom.
        let end = rows.len().saturating_sub(self.back);
        let start = end.saturating_sub(self.height);
        let shown = rows.get(start..end).unwrap_or(&[]);
        self.anchor = match shown.first() {
            Some((origin, _)) if self.back > 0 => Some(*origin),
            _ => None,
        };
        // Short transcripts sit at the bottom, next to the input.
        let top = area.y + u16::try_from(self.height - shown.len()).unwrap_or(0);
        for (i, (_, line)) in shown.iter().enumerate() {
            let y = top + u16::try_from(i).unwrap_or(u16::MAX);
            buf.set_line(area.x, y, line, area.width);
        }
    }
}

/// Rows from `origin` to the bottom of the transcript (counted the way
/// `collect_from_bottom` lays them out).
fn rows_from(
    transcript: &mut Transcript,
    (block, row): Origin,
    width: u16,
    theme: &Theme,
    frame: usize,
) -> usize {
    let mut rows = 0;
    for index in (block..transcript.len()).rev() {
        let len = transcript.block_lines(index, width, theme, frame).len();
        if len == 0 {
            continue;
        }
        let gap = usize::from(rows > 0);
        rows += if index == block {
            (len + gap).saturating_sub(row)
        } else {
            len + gap
        };
    }
    rows
}

/// The last `wanted` rows of the transcript (a blank row between blocks),
/// each with where it comes from, and how many rows the transcript has when
/// that is known: blocks above the screen are not visited, so a long
/// session draws as fast as a short one.
fn collect_from_bottom(
    transcript: &mut Transcript,
    width: u16,
    theme: &Theme,
    frame: usize,
    wanted: usize,
) -> (Vec<(Origin, Line<'static>)>, Option<usize>) {
    let mut chunks: Vec<Vec<(Origin, Line<'static>)>> = Vec::new();
    let mut count = 0usize;
    let mut visited_all = true;
    for index in (0..transcript.len()).rev() {
        if count >= wanted {
            visited_all = false;
            break;
        }
        let lines = transcript.block_lines(index, width, theme, frame);
        if lines.is_empty() {
            continue;
        }
        let need = wanted - count;
        let gap = usize::from(count > 0);
        let take = lines.len().min(need.saturating_sub(gap));
        let first = lines.len() - take;
        let mut chunk: Vec<(Origin, Line<'static>)> = lines[first..]
            .iter()
            .enumerate()
            .map(|(i, line)| ((index, first + i), line.clone()))
            .collect();
        if gap == 1 && need > 0 {
            chunk.push(((index, lines.len()), Line::default()));
        }
        count += chunk.len();
        chunks.push(chunk);
    }
    let rows: Vec<(Origin, Line<'static>)> = chunks.into_iter().rev().flatten().collect();
    (rows, visited_all.then_some(count))
}
