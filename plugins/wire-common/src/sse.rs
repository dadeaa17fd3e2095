//! A server-sent-events reader that tolerates what real servers send.
//!
//! Follows the WHATWG event-stream rules: lines end with `\n`, `\r\n` or `\r`
//! (also when split across network chunks); `data:` lines of one event are
//! joined with `\n`; `event:` names the event; a blank line dispatches it;
//! lines starting with `:` are comments; `id:`, `retry:` and unknown fields
//! are ignored, and so is a line without a colon. Nothing here can fail: bad
//! input is skipped, never fatal.

use memchr::memchr2;

/// Lines longer than this are dropped (a broken or hostile server must not
/// make uji buffer without bound).
const MAX_LINE: usize = 32 * 1024 * 1024;

/// Incremental SSE parser. Feed it bytes as they arrive; it calls back once
/// per complete event with the event name (`""` when the event had no
/// `event:` line) and the data.
#[derive(Debug, Default)]
pub struct SseReader {
    line: Vec<u8>,
    data: String,
    event: String,
    has_data: bool,
    /// The previous chunk ended with `\r`: a `\n` starting the next one
    /// belongs to the same line ending.
    skip_lf: bool,
    started: bool,
    overflow: bool,
}

impl SseReader {
    pub fn new() -> SseReader {
        SseReader::default()
    }

    /// Feeds bytes; `on_event(name, data)` runs for every event completed by
    /// them.
    pub fn push(&mut self, mut bytes: &[u8], on_event: &mut dyn FnMut(&str, &str)) {
        if self.skip_lf && !bytes.is_empty() {
            self.skip_lf = false;
            if bytes[0] == b'\n' {
                bytes = &bytes[1..];
            }
        }
        while !bytes.is_empty() {
            let Some(end) = memchr2(b'\n', b'\r', bytes) else {
                self.append(bytes);
                break;
            };
            let terminator = bytes[end];
            if self.line.is_empty() && !self.overflow {
                self.line_done(&bytes[..end], on_event);
            } else {
                self.append(&bytes[..end]);
                let line = std::mem::take(&mut self.line);
                if !self.overflow {
                    self.line_done(&line, on_event);
                }
                self.overflow = false;
                self.line = line;
                self.line.clear();
            }
            bytes = &bytes[end + 1..];
            if terminator == b'\r' {
                match bytes.first() {
                    Some(b'\n') => bytes = &bytes[1..],
                    Some(_) => {}
                    None => self.skip_lf = true,
                }
            }
        }
    }

    /// The stream ended: a last line without its ending and an event without
    /// its blank line are still delivered (servers that close right after
    /// `data: [DONE]` exist).
    pub fn finish(&mut self, on_event: &mut dyn FnMut(&str, &str)) {
        if !self.line.is_empty() && !self.overflow {
            let line = std::mem::take(&mut self.line);
            self.line_done(&line, on_event);
        }
        self.line.clear();
        self.overflow = false;
        self.line_done(b"", on_event);
    }

    fn append(&mut self, bytes: &[u8]) {
        if self.overflow {
            return;
        }
        if self.line.len() + bytes.len() > MAX_LINE {
            self.overflow = true;
            self.line = Vec::new();
            return;
        }
        self.line.extend_from_slice(bytes);
    }

    fn line_done(&mut self, mut line: &[u8], on_event: &mut dyn FnMut(&str, &str)) {
        if !self.started {
            // A byte-order mark may start the stream.
            self.started = true;
            line = line
                .strip_prefix(b"\xEF\xBB\xBF".as_slice())
                .unwrap_or(line);
        }
        if line.is_empty() {
            if self.has_data {
                on_event(&self.event, &self.data);
            }
            self.data.clear();
            self.event.clear();
            self.has_data = false;
            return;
        }
        if line[0] == b':' {
            return;
        }
        let (field, value) = match memchr::memchr(b':', line) {
            Some(colon) => {
                let value = &line[colon + 1..];
                (
                    &line[..colon],
                    value.strip_prefix(b" ".as_slice()).unwrap_or(value),
                )
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.has_data = true;
                push_lossy(&mut self.data, value);
                if self.data.len() > MAX_LINE {
                    self.data.clear();
                }
            }
            b"event" => {
                self.event.clear();
                push_lossy(&mut self.event, value);
            }
            _ => {}
        }
    }
}

fn push_lossy(out: &mut String, bytes: &[u8]) {
    match std::str::from_utf8(bytes) {
        Ok(text) => out.push_str(text),
        Err(_) => out.push_str(&String::from_utf8_lossy(bytes)),
    }
}

/// Parses an event's data as JSON. When the whole data is not JSON but has
/// several lines (a server that put one JSON document per `data:` line in
/// one event), each line that parses is returned. Anything else: nothing.
pub fn json_values(data: &str) -> Vec<serde_json::Value> {
    match serde_json::from_str(data) {
        Ok(value) => vec![value],
        Err(_) if data.contains('\n') => data
            .lines()
            .filter_map(|line| serde_json::from_str(line.trim()).ok())
            .collect(),
        Err(_) => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn events_of(chunks: &[&[u8]]) -> Vec<(String, String)> {
        let mut reader = SseReader::new();
        let mut out = Vec::new();
        let mut collect = |e: &str, d: &str| out.push((e.to_string(), d.to_string()));
        for chunk in chunks {
            reader.push(chunk, &mut collect);
        }
        reader.finish(&mut collect);
        out
    }

    fn ev(e: &str, d: &str) -> (String, String) {
        (e.to_string(), d.to_string())
    }

    #[test]
    fn lf_crlf_and_cr_line_endings() {
        let lf = events_of(&[b"event: a\ndata: 1\n\ndata: 2\n\n"]);
        let crlf = events_of(&[b"event: a\r\ndata: 1\r\n\r\ndata: 2\r\n\r\n"]);
        let cr = events_of(&[b"event: a\rdata: 1\r\rdata: 2\r\r"]);
        let want = vec![ev("a", "1"), ev("", "2")];
        assert_eq!(lf, want);
        assert_eq!(crlf, want);
        assert_eq!(cr, want);
    }

    #[test]
    fn every_split_point_gives_the_same_events() {
        let text: &[u8] =
            b"\xEF\xBB\xBFevent: x\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\n: comment\r\ndata: \xC3\xA9t\xC3\xA9\r\n\r\n";
        let whole = events_of(&[text]);
        assert_eq!(whole, vec![ev("x", "{\"a\":\n1}"), ev("", "été")]);
        for split in 0..text.len() {
            let (a, b) = text.split_at(split);
            assert_eq!(events_of(&[a, b]), whole, "split at {split}");
        }
        let bytes: Vec<&[u8]> = text.chunks(1).collect();
        assert_eq!(events_of(&bytes), whole);
    }

    #[test]
    fn comments_garbage_and_unknown_fields_are_skipped() {
        let got = events_of(&[
            b": ping\n\nthis is garbage\n\nid: 7\nretry: 10\nfoo: bar\n\ndata:no-space\n\ndata\n\n",
        ]);
        assert_eq!(got, vec![ev("", "no-space"), ev("", "")]);
    }

    #[test]
    fn a_trailing_event_without_blank_line_is_delivered_at_the_end() {
        assert_eq!(events_of(&[b"data: [DONE]"]), vec![ev("", "[DONE]")]);
        assert_eq!(events_of(&[b"data: [DONE]\n"]), vec![ev("", "[DONE]")]);
    }

    #[test]
    fn event_name_does_not_leak_into_the_next_event() {
        let got = events_of(&[b"event: one\ndata: a\n\ndata: b\n\n"]);
        assert_eq!(got, vec![ev("one", "a"), ev("", "b")]);
    }

    #[test]
    fn invalid_utf8_is_replaced_not_fatal() {
        let got = events_of(&[b"data: \xFF\xFEok\n\n"]);
        assert_eq!(got.len(), 1);
        assert!(got[0].1.ends_with("ok"));
    }

    #[test]
    fn json_values_falls_back_to_one_document_per_line() {
        assert_eq!(json_values("{\"a\":\n1}").len(), 1);
        assert_eq!(json_values("{\"a\":1}\n{\"b\":2}").len(), 2);
        assert!(json_values("not json").is_empty());
    }
}
