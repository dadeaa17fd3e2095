//! `read_file`: numbered pages of a text file, or an image.

use std::fs::{self, File};
use std::io::{self, BufRead, BufReader, Cursor, Read};

use base64::Engine as _;
use serde_json::{Value, json};
use uji_sdk::{Image, SubjectKind, Tool, ToolCall, ToolContext, ToolOutput, ToolSpec};

use crate::args::{self, os_error, plural};
use crate::beneath::Beneath;

const NAME: &str = "read_file";
/// Most lines on one page.
const MAX_LINES: u64 = 2000;
/// Most bytes of rows on one page (always at least one row).
const MAX_PAGE_BYTES: usize = 50 * 1024;
/// Longer lines are cut.
const MAX_LINE_BYTES: usize = 2000;
const LINE_TRUNCATED: &str = " …[line truncated]";
/// How much of the start is checked for NUL bytes.
const SNIFF_BYTES: usize = 8 * 1024;
/// Larger images are left out.
const MAX_IMAGE_BYTES: u64 = 5 * 1024 * 1024;

const DESCRIPTION: &str = "Read a file from the filesystem. Text comes back as numbered lines, \
each row being the line number right-aligned to 5 columns, then `| `, then the line; the \
numbers are not part of the file, so leave them out when you copy text into edit_file. \
`offset` is the first line to show (1-based, default 1) and `limit` the most lines to show \
(default and maximum 2000). A page also stops at 50 KB, and lines longer than 2000 bytes are \
cut and end with \" …[line truncated]\". When more lines remain, the result ends with \
`[showed lines A-B of T; continue with offset B+1]`: call again with that offset to read on. \
PNG, JPEG, GIF and WebP images up to 5 MB come back as an image you can look at. Directories \
and binary files are refused. Relative paths start at the working directory; `~/` is the \
home directory.";

/// The `read_file` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadFile;

impl Tool for ReadFile {
    fn spec(&self) -> ToolSpec {
        ToolSpec::new(NAME, DESCRIPTION)
            .allow()
            .read_only()
            .subject_kind(SubjectKind::Path)
            .verb("Read")
            .question("Read this file?")
            .parameters(json!({
                "type": "object",
                "properties": {
                    "path": {
                        "type": "string",
                        "description": "The file to read: absolute, relative to the working directory, or starting with ~/"
                    },
                    "offset": {
                        "type": "integer",
                        "minimum": 1,
                        "description": "First line to show, 1-based (default 1)"
                    },
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "description": "Most lines to show (default and maximum 2000)"
                    }
                },
                "required": ["path"]
            }))
    }

    fn subject(&self, args: &Value) -> String {
        args::subject(args, "path", NAME)
    }

    fn run(&self, call: ToolCall, _ctx: &ToolContext) -> ToolOutput {
        match read(&call) {
            Ok(output) => output,
            Err(message) => ToolOutput::error(message),
        }
    }
}

struct Request<'a> {
    path: &'a str,
    offset: u64,
    limit: u64,
}

fn parse(args: &Value) -> Result<Request<'_>, String> {
    let map = args::object(args)?;
    let path = args::non_blank_str(map, "path")?;
    let offset = args::optional_positive_int(map, "offset")?.unwrap_or(1);
    let limit = args::optional_positive_int(map, "limit")?
        .unwrap_or(MAX_LINES)
        .min(MAX_LINES);
    Ok(Request {
        path,
        offset,
        limit,
    })
}

fn read(call: &ToolCall) -> Result<ToolOutput, String> {
    let req = parse(&call.args)?;
    let shown = req.path;
    let full = args::resolve(&call.cwd, shown);
    let read_error = |e: &io::Error| format!("read {shown}: {}", os_error(e));

    // Opened without blocking (a FIFO would block), then its type checked.
    let mut file = Beneath::of(call)
        .open_read(&full)
        .map_err(|e| read_error(&e))?;
    let meta = file.metadata().map_err(|e| read_error(&e))?;
    if meta.is_dir() {
        return Err(format!("{shown} is a directory, not a file"));
    }
    if !meta.is_file() {
        return Err(format!("{shown} is not a regular file"));
    }

    let mut head = Vec::with_capacity(SNIFF_BYTES);
    (&mut file)
        .take(SNIFF_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(|e| read_error(&e))?;

    if let Some(kind) = image_kind(&head) {
        return read_image(shown, kind, &meta, head, file).map_err(|e| read_error(&e));
    }
    if head.is_empty() {
        return Ok(ToolOutput {
            text: format!("{shown} is empty"),
            summary: Some("Read 0 lines".to_string()),
            ..Default::default()
        });
    }
    if head.contains(&0) {
        return Err(format!("{shown} looks like a binary file"));
    }

    let reader = BufReader::with_capacity(64 * 1024, Cursor::new(head).chain(file));
    page(&req, reader).map_err(|e| match e {
        PageError::Io(e) => read_error(&e),
        PageError::Message(m) => m,
    })
}

enum PageError {
    Io(io::Error),
    Message(String),
}

impl From<io::Error> for PageError {
    fn from(e: io::Error) -> Self {
        PageError::Io(e)
    }
}

/// Streams lines with bounded memory and counts every newline it passes.
struct LineReader<R> {
    inner: R,
    newlines: u64,
    last_byte: Option<u8>,
}

/// One line as read: its first bytes, full length and how it ended.
struct RawLine {
    full_len: usize,
    newline: bool,
    last: Option<u8>,
}

impl<R: BufRead> LineReader<R> {
    fn new(inner: R) -> Self {
        LineReader {
            inner,
            newlines: 0,
            last_byte: None,
        }
    }

    /// The buffered bytes, retrying reads interrupted by a signal.
    fn fill(&mut self) -> io::Result<&[u8]> {
        // Probe first: returning the buffer from inside the retry loop is
        // something the borrow checker cannot yet accept. The second call
        // returns the bytes already buffered without reading again.
        loop {
            match self.inner.fill_buf() {
                Ok(_) => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
        self.inner.fill_buf()
    }

    /// Reads one line, keeping at most `keep` of its bytes in `out` (which
    /// is cleared first). `None` at the end of the input.
    fn next_line(&mut self, keep: usize, out: &mut Vec<u8>) -> io::Result<Option<RawLine>> {
        out.clear();
        let mut full_len = 0;
        let mut last = None;
        loop {
            let buf = self.fill()?;
            if buf.is_empty() {
                return Ok((full_len > 0).then_some(RawLine {
                    full_len,
                    newline: false,
                    last,
                }));
            }
            let (part, newline) = match memchr::memchr(b'\n', buf) {
                Some(i) => (&buf[..i], true),
                None => (buf, false),
            };
            let room = keep.saturating_sub(out.len());
            out.extend_from_slice(&part[..part.len().min(room)]);
            full_len += part.len();
            if let Some(&b) = part.last() {
                last = Some(b);
            }
            let used = part.len() + usize::from(newline);
            if let Some(&b) = buf[..used].last() {
                self.last_byte = Some(b);
            }
            self.inner.consume(used);
            if newline {
                self.newlines += 1;
                return Ok(Some(RawLine {
                    full_len,
                    newline,
                    last,
                }));
            }
        }
    }

    /// Reads to the end and returns the total number of lines.
    fn count_to_end(&mut self) -> io::Result<u64> {
        loop {
            let buf = self.fill()?;
            if buf.is_empty() {
                break;
            }
            let n = memchr::memchr_iter(b'\n', buf).count() as u64;
            let len = buf.len();
            let last = buf.last().copied();
            self.newlines += n;
            if last.is_some() {
                self.last_byte = last;
            }
            self.inner.consume(len);
        }
        let partial = self.last_byte.is_some_and(|b| b != b'\n');
        Ok(self.newlines + u64::from(partial))
    }
}

fn page<R: BufRead>(req: &Request<'_>, reader: R) -> Result<ToolOutput, PageError> {
    let mut lines = LineReader::new(reader);
    let mut buf = Vec::with_capacity(MAX_LINE_BYTES + 1);

    // Skip to the offset.
    let mut number: u64 = 1;
    while number < req.offset {
        if lines.next_line(0, &mut buf)?.is_none() {
            break;
        }
        number += 1;
    }

    let mut text = String::new();
    let mut rows: u64 = 0;
    let mut more_after_page = false;
    while rows < req.limit {
        let Some(line) = lines.next_line(MAX_LINE_BYTES + 1, &mut buf)? else {
            break;
        };
        let row = format_row(number, &line, &buf);
        if rows > 0 && text.len() + row.len() > MAX_PAGE_BYTES {
            // This line was read but is not shown: it starts the next page.
            more_after_page = true;
            break;
        }
        text.push_str(&row);
        rows += 1;
        number += 1;
    }

    let total = lines.count_to_end()?;
    if rows == 0 {
        return Err(PageError::Message(format!(
            "offset {} is past the end of {} ({})",
            req.offset,
            req.path,
            plural(total as usize, "line")
        )));
    }
    let first = req.offset;
    let last = first.saturating_add(rows - 1);
    if more_after_page || total > last {
        text.push_str(&format!(
            "\n[showed lines {first}-{last} of {total}; continue with offset {}]",
            last.saturating_add(1)
        ));
    }
    Ok(ToolOutput {
        text,
        summary: Some(format!("Read {}", plural(rows as usize, "line"))),
        ..Default::default()
    })
}

fn format_row(number: u64, line: &RawLine, kept: &[u8]) -> String {
    // The CR of a CRLF ending is not part of the line.
    let crlf = line.newline && line.last == Some(b'\r');
    let len = line.full_len - usize::from(crlf);
    let (body, cut) = if len > MAX_LINE_BYTES {
        (args::cut_at_char_boundary(kept, MAX_LINE_BYTES), true)
    } else {
        (&kept[..len.min(kept.len())], false)
    };
    let body = String::from_utf8_lossy(body);
    let suffix = if cut { LINE_TRUNCATED } else { "" };
    format!("{number:>5}| {body}{suffix}\n")
}

#[derive(Clone, Copy)]
enum ImageKind {
    Png,
    Jpeg,
    Gif,
    Webp,
}

impl ImageKind {
    fn media_type(self) -> &'static str {
        match self {
            ImageKind::Png => "image/png",
            ImageKind::Jpeg => "image/jpeg",
            ImageKind::Gif => "image/gif",
            ImageKind::Webp => "image/webp",
        }
    }
}

/// The image format from its magic bytes.
fn image_kind(head: &[u8]) -> Option<ImageKind> {
    if head.starts_with(b"\x89PNG\r\n\x1a\n") {
        Some(ImageKind::Png)
    } else if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        Some(ImageKind::Jpeg)
    } else if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        Some(ImageKind::Gif)
    } else if head.len() >= 12 && head.starts_with(b"RIFF") && &head[8..12] == b"WEBP" {
        Some(ImageKind::Webp)
    } else {
        None
    }
}

fn read_image(
    shown: &str,
    kind: ImageKind,
    meta: &fs::Metadata,
    head: Vec<u8>,
    mut file: File,
) -> io::Result<ToolOutput> {
    let media_type = kind.media_type();
    let too_big = |size: u64| {
        let mb = size as f64 / (1024.0 * 1024.0);
        ToolOutput {
            text: format!(
                "{shown} is a {media_type} image of {mb:.1} MB, over the 5 MB limit, so it was left out."
            ),
            summary: Some("Image over 5 MB, left out".to_string()),
            ..Default::default()
        }
    };
    if meta.len() > MAX_IMAGE_BYTES {
        return Ok(too_big(meta.len()));
    }
    let mut data = head;
    // Bounded even if the file grew since the metadata was read.
    let room = (MAX_IMAGE_BYTES + 1).saturating_sub(data.len() as u64);
    (&mut file).take(room).read_to_end(&mut data)?;
    if data.len() as u64 > MAX_IMAGE_BYTES {
        return Ok(too_big(data.len() as u64));
    }
    let (text, summary) = match image_size(kind, &data) {
        Some((w, h)) => (
            format!("{shown} is a {w}x{h} {media_type} image, attached here."),
            format!("Read a {w}x{h} image"),
        ),
        None => (
            format!("{shown} is a {media_type} image, attached here."),
            "Read an image".to_string(),
        ),
    };
    Ok(ToolOutput {
        text,
        images: vec![Image {
            media_type: media_type.to_string(),
            data: base64::engine::general_purpose::STANDARD.encode(&data),
            name: Some(shown.to_string()),
        }],
        summary: Some(summary),
        ..Default::default()
    })
}

fn be16(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at + 2)?;
    Some(u32::from(s[0]) << 8 | u32::from(s[1]))
}

fn le16(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at + 2)?;
    Some(u32::from(s[1]) << 8 | u32::from(s[0]))
}

fn le24(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at + 3)?;
    Some(u32::from(s[2]) << 16 | u32::from(s[1]) << 8 | u32::from(s[0]))
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at + 4)?;
    Some(u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
}

/// Width and height from the header of an image.
fn image_size(kind: ImageKind, b: &[u8]) -> Option<(u32, u32)> {
    let size = match kind {
        ImageKind::Png => {
            if b.get(12..16)? != b"IHDR" {
                return None;
            }
            (be32(b, 16)?, be32(b, 20)?)
        }
        ImageKind::Gif => (le16(b, 6)?, le16(b, 8)?),
        ImageKind::Webp => match b.get(12..16)? {
            b"VP8 " => {
                // Key frame: 3-byte frame tag, start code 9d 01 2a, sizes.
                if b.get(23..26)? != [0x9d, 0x01, 0x2a] {
                    return None;
                }
                (le16(b, 26)? & 0x3fff, le16(b, 28)? & 0x3fff)
            }
            b"VP8L" => {
                if *b.get(20)? != 0x2f {
                    return None;
                }
                let s = b.get(21..25)?;
                let (b0, b1, b2, b3) = (
                    u32::from(s[0]),
                    u32::from(s[1]),
                    u32::from(s[2]),
                    u32::from(s[3]),
                );
                let w = 1 + (b0 | (b1 & 0x3f) << 8);
                let h = 1 + (b1 >> 6 | b2 << 2 | (b3 & 0x0f) << 10);
                (w, h)
            }
            b"VP8X" => (1 + le24(b, 24)?, 1 + le24(b, 27)?),
            _ => return None,
        },
        ImageKind::Jpeg => jpeg_size(b)?,
    };
    (size.0 > 0 && size.1 > 0).then_some(size)
}

/// Walks the JPEG markers to the first start-of-frame segment.
fn jpeg_size(b: &[u8]) -> Option<(u32, u32)> {
    let mut i = 2;
    loop {
        // Markers start with 0xFF, possibly padded with more 0xFF bytes.
        if *b.get(i)? != 0xFF {
            return None;
        }
        while *b.get(i)? == 0xFF {
            i += 1;
        }
        let marker = *b.get(i)?;
        i += 1;
        match marker {
            // Markers without a length.
            0x01 | 0xD0..=0xD8 => continue,
            0xD9 | 0xDA => return None,
            0xC0..=0xCF if marker != 0xC4 && marker != 0xC8 && marker != 0xCC => {
                // length(2) precision(1) height(2) width(2)
                let h = be16(b, i + 3)?;
                let w = be16(b, i + 5)?;
                return Some((w, h));
            }
            _ => {
                let len = be16(b, i)? as usize;
                if len < 2 {
                    return None;
                }
                i += len;
            }
        }
    }
}
