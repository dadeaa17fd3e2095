//! How much of a diff travels: every [`FileDiff`] a tool returns, an event
//! carries or a session line saves is at most [`MAX_DIFF_LINES`] lines and
//! [`MAX_DIFF_BYTES`] bytes of unified text, then one line saying where it
//! was cut ([`cut_note`]). The built-in tools stop rendering there; the core
//! cuts whatever another plugin returns ([`FileDiff::bound`]). `added` and
//! `removed` always count the whole change.

use crate::FileDiff;

/// A diff shows at most this many lines…
pub const MAX_DIFF_LINES: usize = 2000;
/// …and at most this many bytes.
pub const MAX_DIFF_BYTES: usize = 256 * 1024;
/// Room for the cut note on top of the limits: a diff within the limits plus
/// this is left as it is, so the core never cuts again what a tool cut.
const NOTE_ROOM_BYTES: usize = 256;

/// The last line of a cut diff: `… diff cut at 2000 of 550074 lines (98304
/// of 33554432 bytes)`.
pub fn cut_note(shown_lines: usize, lines: usize, shown_bytes: usize, bytes: usize) -> String {
    format!("… diff cut at {shown_lines} of {lines} lines ({shown_bytes} of {bytes} bytes)\n")
}

/// Whether a line of `len` bytes (its newline included) still fits after
/// `lines` lines of `bytes` bytes.
pub fn line_fits(lines: usize, bytes: usize, len: usize) -> bool {
    lines < MAX_DIFF_LINES && bytes + len <= MAX_DIFF_BYTES
}

impl FileDiff {
    /// Cuts `unified` to the limits at a line boundary, with the cut note.
    /// A diff within them (and room for a note) is left as it is.
    pub fn bound(&mut self) {
        let text = &self.unified;
        let lines = memchr_count(text.as_bytes());
        if text.len() <= MAX_DIFF_BYTES + NOTE_ROOM_BYTES && lines <= MAX_DIFF_LINES + 1 {
            return;
        }
        let (mut shown_lines, mut shown_bytes) = (0, 0);
        for line in text.split_inclusive('\n') {
            if !line_fits(shown_lines, shown_bytes, line.len()) {
                break;
            }
            shown_lines += 1;
            shown_bytes += line.len();
        }
        let total = lines + usize::from(!text.is_empty() && !text.ends_with('\n'));
        let note = cut_note(shown_lines, total, shown_bytes, text.len());
        self.unified.truncate(shown_bytes);
        self.unified.push_str(&note);
    }
}

fn memchr_count(bytes: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', bytes).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diff(unified: String) -> FileDiff {
        FileDiff {
            path: "f".into(),
            unified,
            added: 1,
            removed: 1,
        }
    }

    #[test]
    fn a_small_diff_is_left_as_it_is() {
        let mut small = diff("--- f\n+++ f\n@@ -1 +1 @@\n-a\n+b\n".into());
        let before = small.clone();
        small.bound();
        assert_eq!(small, before);
    }

    #[test]
    fn a_long_diff_is_cut_at_a_line_with_the_cut_said() {
        let mut long = diff("+x\n".repeat(5000));
        long.bound();
        let lines: Vec<&str> = long.unified.lines().collect();
        assert_eq!(lines.len(), MAX_DIFF_LINES + 1);
        assert_eq!(
            lines[MAX_DIFF_LINES],
            "… diff cut at 2000 of 5000 lines (6000 of 15000 bytes)"
        );
        let before = long.clone();
        long.bound();
        assert_eq!(long, before, "a cut diff is not cut again");
    }

    #[test]
    fn a_wide_diff_is_cut_by_bytes() {
        let line = format!("+{}\n", "y".repeat(99_999));
        let mut wide = diff(line.repeat(10));
        wide.bound();
        assert!(wide.unified.len() <= MAX_DIFF_BYTES + NOTE_ROOM_BYTES);
        assert!(
            wide.unified
                .ends_with("… diff cut at 2 of 10 lines (200002 of 1000010 bytes)\n"),
            "{}",
            &wide.unified[wide.unified.len() - 80..]
        );
    }
}
