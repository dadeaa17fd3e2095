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

    /// Draws the visible rows into `area`. Blocks below the screen are
    /// counted by their known heights; only the blocks on screen are drawn,
    /// and the others forget their lines.
    pub fn render(
        &mut self,
        transcript: &mut Transcript,
        area: Rect,
        buf: &mut Buffer,
        theme: &Theme,
        frame: usize,
    ) {
        self.height = usize::from(area.height);
        let pen = Pen {
            width: area.width,
            theme,
            frame,
        };
        if let Some(anchor) = self.anchor {
            let below = rows_from(transcript, anchor, &pen);
            self.back = below.saturating_sub(self.height);
        }
        let mut window = collect_window(transcript, &pen, self.back, self.height);
        // Scrolled past the top: the whole transcript was counted, so the
        // view stops at its first row.
        if let Some(total) = window.total
            && self.back > total.saturating_sub(self.height)
        {
            self.back = total.saturating_sub(self.height);
            window = collect_window(transcript, &pen, self.back, self.height);
        }
        let shown = window.rows;
        self.anchor = match shown.first() {
            Some((origin, _)) if self.back > 0 => Some(*origin),
            _ => None,
        };
        if let (Some(((first, _), _)), Some(((last, _), _))) = (shown.first(), shown.last()) {
            transcript.forget_lines_outside(*first..=*last);
        }
        // Short transcripts sit at the bottom, next to the input.
        let top = area.y + u16::try_from(self.height - shown.len()).unwrap_or(0);
        for (i, (_, line)) in shown.iter().enumerate() {
            let y = top + u16::try_from(i).unwrap_or(u16::MAX);
            buf.set_line(area.x, y, line, area.width);
        }
    }
}

/// What the rows are drawn with.
struct Pen<'a> {
    width: u16,
    theme: &'a Theme,
    frame: usize,
}

/// Rows from `origin` to the bottom of the transcript (counted the way
/// `collect_window` lays them out: a blank row between blocks).
fn rows_from(transcript: &mut Transcript, (block, row): Origin, pen: &Pen<'_>) -> usize {
    let mut rows = 0;
    for index in (block..transcript.len()).rev() {
        let len = transcript.block_height(index, pen.width, pen.theme, pen.frame, |_| false);
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

/// The rows on screen, oldest first, each with where it comes from, and
/// the transcript's row count when every block was counted.
struct Window {
    rows: Vec<(Origin, Line<'static>)>,
    total: Option<usize>,
}

/// The `height` rows that end `back` rows above the bottom. Counting goes
/// up from the bottom by block heights; lines are fetched only for the
/// blocks that reach into the window.
fn collect_window(
    transcript: &mut Transcript,
    pen: &Pen<'_>,
    back: usize,
    height: usize,
) -> Window {
    let end = back.saturating_add(height);
    let mut rows: Vec<(Origin, Line<'static>)> = Vec::new();
    let mut below = 0usize;
    let mut visited_all = true;
    for index in (0..transcript.len()).rev() {
        if below >= end {
            visited_all = false;
            break;
        }
        let gap = usize::from(below > 0);
        // A block reaching into the window is drawn right after: measuring
        // it keeps its lines.
        let reaches_in = |len: usize| len > 0 && below + len + gap > back;
        let len = transcript.block_height(index, pen.width, pen.theme, pen.frame, reaches_in);
        if len == 0 {
            continue;
        }
        let span = len + gap;
        if below + span > back {
            let lines = transcript.block_lines(index, pen.width, pen.theme, pen.frame);
            // From the bottom: the blank row under the block, then its
            // lines from the last up.
            for k in back.saturating_sub(below)..span.min(end - below) {
                if gap == 1 && k == 0 {
                    rows.push(((index, len), Line::default()));
                } else if let Some(line) = lines.get(len - 1 - (k - gap)) {
                    rows.push(((index, len - 1 - (k - gap)), line.clone()));
                }
            }
        }
        below += span;
    }
    rows.reverse();
    Window {
        rows,
        total: visited_all.then_some(below),
    }
}

#[cfg(test)]
mod tests {
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;

    use super::Viewport;
    use crate::testing::buffer_rows;
    use crate::theme::Theme;
    use crate::transcript::{Block, Transcript};

    fn transcript(messages: usize) -> Transcript {
        let mut transcript = Transcript::default();
        for i in 0..messages {
            transcript.push(Block::User(format!("message {i}")));
        }
        transcript
    }

    #[test]
    fn only_the_blocks_on_screen_keep_their_lines() {
        let theme = Theme::plain();
        let mut transcript = transcript(1000);
        let mut view = Viewport::default();
        let area = Rect::new(0, 0, 40, 10);
        let mut buf = Buffer::empty(area);
        view.to_top();
        view.render(&mut transcript, area, &mut buf, &theme, 0);
        assert_eq!(buffer_rows(&buf)[0], "› message 0");
        view.to_bottom();
        view.render(&mut transcript, area, &mut buf, &theme, 0);
        assert_eq!(buffer_rows(&buf)[9], "› message 999");
        // Ten rows show five messages (a blank row between each); the
        // other 995 kept their heights but not their lines.
        assert!(
            transcript.drawn() <= 6,
            "{} blocks keep lines",
            transcript.drawn()
        );
        assert!(transcript.measured() == 1000);
    }

    #[test]
    fn scrolling_by_rows_and_back_to_the_bottom() {
        let theme = Theme::plain();
        let mut transcript = transcript(100);
        let mut view = Viewport::default();
        let area = Rect::new(0, 0, 40, 5);
        let mut buf = Buffer::empty(area);
        view.render(&mut transcript, area, &mut buf, &theme, 0);
        view.scroll_up(2);
        buf = Buffer::empty(area);
        view.render(&mut transcript, area, &mut buf, &theme, 0);
        assert_eq!(buffer_rows(&buf)[4], "› message 98");
        view.scroll_up(10_000);
        buf = Buffer::empty(area);
        view.render(&mut transcript, area, &mut buf, &theme, 0);
        assert_eq!(buffer_rows(&buf)[0], "› message 0");
        view.to_bottom();
        buf = Buffer::empty(area);
        view.render(&mut transcript, area, &mut buf, &theme, 0);
        assert_eq!(buffer_rows(&buf)[4], "› message 99");
    }
}
