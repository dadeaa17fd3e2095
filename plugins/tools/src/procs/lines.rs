//! One output stream cut into lines: the newline (and a `\r` before it)
//! removed, a line longer than [`MAX_LINE_BYTES`] cut and marked, and a
//! last line without a newline given at the end. At most one line's worth
//! of bytes is held, so a 10 MB line costs 64 KiB.

use memchr::memchr;
use uji_sdk::protocol::procs::{CUT_MARK, MAX_LINE_BYTES};
use uji_sdk::protocol::spill::cut_at_char_boundary;

#[derive(Default)]
pub struct Lines {
    /// The line being written, not yet ended.
    partial: Vec<u8>,
    /// The line being written was cut and given already: the rest of it,
    /// to its newline, is dropped.
    skipping: bool,
}

impl Lines {
    /// Adds `chunk`; every line it ends goes to `out`.
    pub fn push(&mut self, mut chunk: &[u8], out: &mut Vec<String>) {
        while !chunk.is_empty() {
            match memchr(b'\n', chunk) {
                Some(i) => {
                    if self.skipping {
                        self.skipping = false;
                    } else {
                        self.partial.extend_from_slice(&chunk[..i]);
                        if self.partial.last() == Some(&b'\r') {
                            self.partial.pop();
                        }
                        out.push(line(&self.partial));
                    }
                    self.partial.clear();
                    chunk = &chunk[i + 1..];
                }
                None => {
                    if !self.skipping {
                        self.partial.extend_from_slice(chunk);
                        // One byte more than the limit may be the `\r` of
                        // a line exactly at it.
                        if self.partial.len() > MAX_LINE_BYTES + 1 {
                            out.push(line(&self.partial));
                            self.partial.clear();
                            self.skipping = true;
                        }
                    }
                    chunk = &[];
                }
            }
        }
    }

    /// The stream ended: its last line, when it had no newline.
    pub fn finish(&mut self, out: &mut Vec<String>) {
        if !self.skipping && !self.partial.is_empty() {
            out.push(line(&self.partial));
        }
        self.partial = Vec::new();
        self.skipping = false;
    }
}

/// `bytes` as text, cut to [`MAX_LINE_BYTES`] with [`CUT_MARK`] when longer.
fn line(bytes: &[u8]) -> String {
    if bytes.len() <= MAX_LINE_BYTES {
        return String::from_utf8_lossy(bytes).into_owned();
    }
    let kept = cut_at_char_boundary(bytes, MAX_LINE_BYTES);
    let mut text = String::from_utf8_lossy(kept).into_owned();
    text.push_str(CUT_MARK);
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(chunks: &[&[u8]]) -> Vec<String> {
        let mut lines = Lines::default();
        let mut out = Vec::new();
        for chunk in chunks {
            lines.push(chunk, &mut out);
        }
        lines.finish(&mut out);
        out
    }

    #[test]
    fn lines_lose_their_newline_and_cr_and_the_last_comes_at_the_end() {
        assert_eq!(split(&[b"a\nb"]), ["a", "b"]);
        assert_eq!(split(&[b"a\r\nb\r\n"]), ["a", "b"]);
        assert_eq!(split(&[b"a", b"b\n", b"\n", b"c"]), ["ab", "", "c"]);
        assert_eq!(split(&[b"x\r", b"\ny\rz\n"]), ["x", "y\rz"]);
        assert!(split(&[b""]).is_empty());
        assert_eq!(split(&[b"\xff\n"]), ["\u{fffd}"]);
    }

    #[test]
    fn a_long_line_is_cut_once_and_its_rest_dropped() {
        let long = vec![b'x'; 3 * MAX_LINE_BYTES];
        let mut chunks: Vec<&[u8]> = long.chunks(5000).collect();
        chunks.push(b"\nnext\n");
        let out = split(&chunks);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].len(), MAX_LINE_BYTES + CUT_MARK.len());
        assert!(out[0].ends_with(CUT_MARK));
        assert_eq!(out[1], "next");
    }

    #[test]
    fn a_line_exactly_at_the_limit_is_whole_even_with_cr() {
        let mut exact = vec![b'y'; MAX_LINE_BYTES];
        exact.extend_from_slice(b"\r");
        let out = split(&[&exact, b"\n"]);
        assert_eq!(
            out,
            [String::from_utf8(vec![b'y'; MAX_LINE_BYTES]).unwrap_or_default()]
        );
        let over = vec![b'z'; MAX_LINE_BYTES + 1];
        let out = split(&[&over, b"\n"]);
        assert!(out[0].ends_with(CUT_MARK), "{}", out[0].len());
    }
}
