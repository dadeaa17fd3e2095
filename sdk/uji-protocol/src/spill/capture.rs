//! The bounded tail of an output read in chunks, and its spill file.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

use super::{
    MAX_BYTES, MAX_LINES, MAX_SPILL_BYTES, create_spill_file, cut_at_char_boundary, os_error, size,
    skip_partial_char, temp_spill_path,
};

/// How much of each line's start is kept for the line callback (progress).
const HEAD_BYTES: usize = 1000;

/// One output line kept for the model.
struct Line {
    /// The line without its newline; only its last MAX_BYTES when longer.
    bytes: Vec<u8>,
    full_len: usize,
    number: usize,
}

impl Line {
    /// What it costs in the byte budget: the line and its newline.
    fn cost(&self) -> usize {
        self.bytes.len() + 1
    }
}

enum Spill {
    /// Everything so far is still in memory.
    None,
    File {
        path: PathBuf,
        writer: BufWriter<File>,
        written: u64,
    },
    /// The file reached [`MAX_SPILL_BYTES`]; the rest was not kept.
    Cut(PathBuf),
    Failed(String),
    /// Another capture keeps the full output in this file: this one
    /// writes nothing (see [`Capture::window`]).
    Elsewhere(PathBuf),
}

/// The bounded tail of an output. Until the output exceeds the limits,
/// every byte is also kept in `pending`; when it first does, the spill file
/// is created with `pending` and from then on gets every chunk (up to
/// [`MAX_SPILL_BYTES`]), while memory keeps only the tail.
pub struct Capture {
    /// Where the spill file goes (`None`: a fresh name in the temporary
    /// directory).
    target: Option<PathBuf>,
    lines: VecDeque<Line>,
    /// Sum of `Line::cost` over `lines`.
    lines_cost: usize,
    /// Completed lines so far.
    total_lines: usize,
    /// The line being read: its start (for the line callback), its last
    /// bytes, its length.
    cur_head: Vec<u8>,
    cur_tail: Vec<u8>,
    cur_len: usize,
    pending: Vec<u8>,
    spill: Spill,
}

/// What the model sees of the output.
pub struct Rendered {
    pub output: String,
    /// Which part is shown and where the rest is, when not all of it is.
    pub note: Option<String>,
    /// No visible output at all.
    pub blank: bool,
}

impl Rendered {
    /// The output, then a blank line and the note if there is one.
    pub fn with_note(self) -> String {
        match self.note {
            Some(note) if self.output.is_empty() => note,
            Some(note) => format!("{}\n\n{note}", self.output),
            None => self.output,
        }
    }
}

impl Capture {
    /// A capture whose spill file, if one is needed, is created at
    /// `target` (`None`: a fresh name in the temporary directory).
    pub fn new(target: Option<PathBuf>) -> Self {
        Capture {
            target,
            lines: VecDeque::new(),
            lines_cost: 0,
            total_lines: 0,
            cur_head: Vec::new(),
            cur_tail: Vec::new(),
            cur_len: 0,
            pending: Vec::new(),
            spill: Spill::None,
        }
    }

    /// A window on part of an output whose whole is spilled by another
    /// capture to `full` (a background job's output since it was last
    /// read): it keeps the same bounded tail, writes no file, and its note
    /// names `full`.
    pub fn window(full: PathBuf) -> Self {
        Capture {
            spill: Spill::Elsewhere(full),
            ..Capture::new(None)
        }
    }

    /// The spill file, once there is one.
    pub fn spill_file(&self) -> Option<&std::path::Path> {
        match &self.spill {
            Spill::File { path, .. } | Spill::Cut(path) => Some(path),
            Spill::None | Spill::Failed(_) | Spill::Elsewhere(_) => None,
        }
    }

    /// Completed lines so far.
    pub fn total_lines(&self) -> usize {
        self.total_lines
    }

    /// Takes the next chunk; `on_line` gets the start of every line it
    /// completes (at most 1000 bytes, cut at a character boundary).
    pub fn push(&mut self, chunk: &[u8], on_line: &mut dyn FnMut(&[u8])) {
        self.write_spill(chunk);
        let mut rest = chunk;
        while let Some(i) = memchr::memchr(b'\n', rest) {
            self.extend_line(&rest[..i]);
            self.end_line(on_line);
            rest = &rest[i + 1..];
        }
        self.extend_line(rest);
    }

    fn write_spill(&mut self, chunk: &[u8]) {
        match &mut self.spill {
            Spill::None => self.pending.extend_from_slice(chunk),
            Spill::File {
                path,
                writer,
                written,
            } => {
                let room = MAX_SPILL_BYTES.saturating_sub(*written);
                let take = chunk.len().min(usize::try_from(room).unwrap_or(usize::MAX));
                let result = writer.write_all(&chunk[..take]);
                *written += take as u64;
                self.spill = match result {
                    Err(e) => Spill::Failed(os_error(&e)),
                    Ok(()) if take < chunk.len() => cut_off(std::mem::take(path), writer),
                    Ok(()) => return,
                };
            }
            Spill::Cut(_) | Spill::Failed(_) | Spill::Elsewhere(_) => {}
        }
    }

    fn extend_line(&mut self, part: &[u8]) {
        if part.is_empty() {
            return;
        }
        self.cur_len += part.len();
        if self.cur_head.len() < HEAD_BYTES + 4 {
            let room = HEAD_BYTES + 4 - self.cur_head.len();
            self.cur_head
                .extend_from_slice(&part[..part.len().min(room)]);
        }
        self.cur_tail.extend_from_slice(part);
        if self.cur_len > MAX_BYTES {
            // This line alone is over the limit: it is shown cut, if at all.
            self.start_spill();
            if self.cur_tail.len() > 2 * MAX_BYTES {
                let cut = self.cur_tail.len() - MAX_BYTES;
                self.cur_tail.drain(..cut);
            }
        }
    }

    fn end_line(&mut self, on_line: &mut dyn FnMut(&[u8])) {
        let head = cut_at_char_boundary(&self.cur_head, HEAD_BYTES);
        on_line(head.strip_suffix(b"\r").unwrap_or(head));

        self.total_lines += 1;
        let mut bytes = std::mem::take(&mut self.cur_tail);
        if bytes.len() > MAX_BYTES {
            let cut = bytes.len() - MAX_BYTES;
            bytes.drain(..cut);
        }
        let line = Line {
            bytes,
            full_len: self.cur_len,
            number: self.total_lines,
        };
        self.cur_head.clear();
        self.cur_len = 0;
        self.lines_cost += line.cost();
        self.lines.push_back(line);
        while self.lines.len() > MAX_LINES || (self.lines_cost > MAX_BYTES && self.lines.len() > 1)
        {
            self.start_spill();
            if let Some(dropped) = self.lines.pop_front() {
                self.lines_cost -= dropped.cost();
            }
        }
    }

    /// Creates the spill file with everything read so far, once.
    fn start_spill(&mut self) {
        if !matches!(self.spill, Spill::None) {
            return;
        }
        let pending = std::mem::take(&mut self.pending);
        let path = self.target.take().unwrap_or_else(temp_spill_path);
        self.spill = match create_spill_file(&path) {
            Ok(file) => Spill::File {
                path,
                writer: BufWriter::with_capacity(64 * 1024, file),
                written: 0,
            },
            Err(e) => Spill::Failed(os_error(&e)),
        };
        self.write_spill(&pending);
    }

    /// Ends a last line without a newline and flushes the spill file.
    pub fn finish(&mut self, on_line: &mut dyn FnMut(&[u8])) {
        if self.cur_len > 0 {
            self.end_line(on_line);
        }
        if let Spill::File { writer, .. } = &mut self.spill
            && let Err(e) = writer.flush()
        {
            self.spill = Spill::Failed(os_error(&e));
        }
        self.pending = Vec::new();
    }

    fn spill_note(&self) -> String {
        match &self.spill {
            Spill::File { path, .. } => format!(" Full output: {}", path.display()),
            Spill::Cut(path) => format!(
                " Full output (its first {}): {}",
                size(MAX_SPILL_BYTES),
                path.display()
            ),
            Spill::Failed(e) => format!(" The full output could not be saved: {e}"),
            Spill::Elsewhere(path) => format!(" Full output: {}", path.display()),
            Spill::None => String::new(),
        }
    }

    /// The kept tail, and the note when it is not the whole output.
    pub fn render(&self) -> Rendered {
        let text_of = |bytes: &[u8]| {
            let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
            String::from_utf8_lossy(bytes).into_owned()
        };
        let (Some(first), Some(last)) = (self.lines.front(), self.lines.back()) else {
            return Rendered {
                output: String::new(),
                note: None,
                blank: true,
            };
        };
        let total = self.total_lines;
        if self.lines.len() == 1 && last.full_len > MAX_BYTES {
            let tail = skip_partial_char(&last.bytes);
            return Rendered {
                output: text_of(tail),
                note: Some(format!(
                    "[Showing last {} of line {} (line is {}).{}]",
                    size(MAX_BYTES as u64),
                    last.number,
                    size(last.full_len as u64),
                    self.spill_note()
                )),
                blank: false,
            };
        }
        let mut output = String::with_capacity(self.lines_cost);
        for (i, line) in self.lines.iter().enumerate() {
            if i > 0 {
                output.push('\n');
            }
            output.push_str(&text_of(&line.bytes));
        }
        let note = (first.number > 1).then(|| {
            let limit = if self.lines.len() < MAX_LINES {
                format!(" ({} limit)", size(MAX_BYTES as u64))
            } else {
                String::new()
            };
            format!(
                "[Showing lines {}-{} of {total}{limit}.{}]",
                first.number,
                last.number,
                self.spill_note()
            )
        });
        let blank = note.is_none() && output.trim().is_empty();
        if blank {
            output.clear();
        }
        Rendered {
            output,
            note,
            blank,
        }
    }
}

/// Ends a spill file that reached [`MAX_SPILL_BYTES`] with a line saying so.
fn cut_off(path: PathBuf, writer: &mut BufWriter<File>) -> Spill {
    let marker = format!(
        "\n[output cut: uji keeps at most the first {} of an output]\n",
        size(MAX_SPILL_BYTES)
    );
    match writer
        .write_all(marker.as_bytes())
        .and_then(|()| writer.flush())
    {
        Ok(()) => Spill::Cut(path),
        Err(e) => Spill::Failed(os_error(&e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_keeps_the_same_tail_writes_no_file_and_names_the_full_output() {
        let full = std::env::temp_dir().join(format!("uji-window-{}.log", std::process::id()));
        let mut window = Capture::window(full.clone());
        let lines: String = (1..=3000).map(|n| format!("{n}\n")).collect();
        window.push(lines.as_bytes(), &mut |_| {});
        window.finish(&mut |_| {});
        let rendered = window.render();
        assert!(rendered.output.starts_with("1001\n") && rendered.output.ends_with("3000"));
        assert_eq!(
            rendered.note.as_deref(),
            Some(
                format!(
                    "[Showing lines 1001-3000 of 3000. Full output: {}]",
                    full.display()
                )
                .as_str()
            )
        );
        assert!(!full.exists(), "a window writes nothing");
        assert_eq!(window.spill_file(), None);
    }

    #[test]
    fn the_spill_file_stops_at_its_cap_and_says_so() {
        let dir = std::env::temp_dir().join(format!("uji-cap-test-{}", std::process::id()));
        let path = dir.join("uji-output-1-0.log");
        let mut capture = Capture::new(Some(path.clone()));
        let chunk = vec![b'y'; 1024 * 1024];
        for _ in 0..(MAX_SPILL_BYTES / (1024 * 1024) + 3) {
            capture.push(&chunk, &mut |_| {});
        }
        capture.finish(&mut |_| {});
        let rendered = capture.render();
        let note = rendered.note.unwrap_or_default();
        assert!(note.contains("Full output (its first 50.0MB): "), "{note}");
        let data = std::fs::read(&path).unwrap_or_default();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(data.len() as u64 > MAX_SPILL_BYTES);
        assert!(data.len() as u64 <= MAX_SPILL_BYTES + 100);
        assert!(data.ends_with(b"of an output]\n"));
    }
}
