//! Unified diffs for the transcript and approval previews (the model never
//! sees them).
//!
//! Only what changed is diffed, and no copy of either file is made: the
//! caller names the changed byte ranges ([`Change`]: the common prefix and
//! suffix for a whole-file diff, each replacement for an edit), each is
//! widened to whole lines and diffed alone, and the hunks are rendered as
//! they come, up to the bounds of [`uji_sdk::protocol::diff`]. Past them the
//! diff is only counted, so a `replace_all` over every line of a 64 MB file
//! costs a few hundred KB of diff.

use std::ops::Range;
use std::time::{Duration, Instant};

use similar::{Algorithm, DiffTag, capture_diff_slices_deadline};
use uji_sdk::FileDiff;
use uji_sdk::protocol::diff::{cut_note, line_fits};

/// Diffing gives up on finding the smallest diff after this long (all its
/// regions together) and returns a correct but coarser one.
const DIFF_TIMEOUT: Duration = Duration::from_millis(500);

/// Unchanged lines shown around each change.
const CONTEXT: usize = 3;

/// A changed region with more lines than this (both sides together) is
/// diffed in pieces of half as many lines from each side: the line tables
/// a diff needs would grow with it.
const EXACT_LINES: usize = 20_000;

/// What a hunk header may take (`@@ -n,len +n,len @@`), held back while
/// the hunk is open.
const HEADER_ROOM: usize = 64;

/// Bytes `old[old]` became `new[new]`; between two changes (and before the
/// first and after the last) both files hold the same bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub old: Range<usize>,
    pub new: Range<usize>,
}

/// One line, compared without its line ending so CRLF and LF files diff
/// alike (CRLF is shown as LF).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Line<'a> {
    text: &'a [u8],
    newline: bool,
}

fn line_of(line: &[u8]) -> Line<'_> {
    match line.strip_suffix(b"\n") {
        Some(text) => Line {
            text: text.strip_suffix(b"\r").unwrap_or(text),
            newline: true,
        },
        None => Line {
            text: line,
            newline: false,
        },
    }
}

/// The lines of `bytes`, as compared and as they are.
fn split_lines(bytes: &[u8]) -> (Vec<Line<'_>>, Vec<&[u8]>) {
    bytes
        .split_inclusive(|&b| b == b'\n')
        .map(|line| (line_of(line), line))
        .unzip()
}

/// The length of the first `n` lines of `bytes` (all of it when shorter).
fn lines_len(bytes: &[u8], n: usize) -> usize {
    memchr::memchr_iter(b'\n', bytes)
        .nth(n - 1)
        .map_or(bytes.len(), |i| i + 1)
}

fn count_lines(bytes: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', bytes).count() + usize::from(!bytes.ends_with(b"\n"))
        - usize::from(bytes.is_empty())
}

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    const CHUNK: usize = 4096;
    let max = a.len().min(b.len());
    let mut at = 0;
    // Whole chunks compare with memcmp; the first differing chunk byte by byte.
    while at + CHUNK <= max && a[at..at + CHUNK] == b[at..at + CHUNK] {
        at += CHUNK;
    }
    at + a[at..max]
        .iter()
        .zip(&b[at..max])
        .position(|(x, y)| x != y)
        .unwrap_or(max - at)
}

fn common_suffix(a: &[u8], b: &[u8]) -> usize {
    const CHUNK: usize = 4096;
    let max = a.len().min(b.len());
    let mut n = 0;
    while n + CHUNK <= max
        && a[a.len() - n - CHUNK..a.len() - n] == b[b.len() - n - CHUNK..b.len() - n]
    {
        n += CHUNK;
    }
    n + a[..a.len() - n]
        .iter()
        .rev()
        .zip(b[..b.len() - n].iter().rev())
        .position(|(x, y)| x != y)
        .unwrap_or(max - n)
}

fn at_line_start(buf: &[u8], pos: usize) -> bool {
    pos == 0 || buf[pos - 1] == b'\n'
}

/// A unified diff (3 context lines, line numbers in the hunk headers) from
/// `old` to `new`. `created` marks a new file (`--- /dev/null`).
pub fn file_diff(path: &str, old: &[u8], new: &[u8], created: bool) -> FileDiff {
    let prefix = common_prefix(old, new);
    let suffix = common_suffix(&old[prefix..], &new[prefix..]);
    let change = Change {
        old: prefix..old.len() - suffix,
        new: prefix..new.len() - suffix,
    };
    changes_diff(path, old, new, created, [change])
}

/// The diff of `old` to `new` where only `changes` (in order, not
/// overlapping) differ.
pub fn changes_diff(
    path: &str,
    old: &[u8],
    new: &[u8],
    created: bool,
    changes: impl IntoIterator<Item = Change>,
) -> FileDiff {
    let mut render = Render::new(old, path, created);
    let mut open: Option<Change> = None;
    for change in changes {
        if change.old.is_empty() && change.new.is_empty() {
            continue;
        }
        let (old_end, new_end) = widen_end(old, new, &change);
        open = match open {
            // A change on the region's last line is part of it.
            Some(region) if change.old.start < region.old.end => Some(Change {
                old: region.old.start..old_end,
                new: region.new.start..new_end,
            }),
            region => {
                if let Some(region) = region {
                    render.region(&old[region.old.clone()], &new[region.new], region.old.start);
                }
                let back = change.old.start - line_start(old, change.old.start);
                Some(Change {
                    old: change.old.start - back..old_end,
                    new: change.new.start - back..new_end,
                })
            }
        };
    }
    if let Some(region) = open {
        render.region(&old[region.old.clone()], &new[region.new], region.old.start);
    }
    render.finish(path)
}

fn line_start(buf: &[u8], pos: usize) -> usize {
    memchr::memrchr(b'\n', &buf[..pos]).map_or(0, |i| i + 1)
}

/// Where `change` ends once widened to whole lines on both sides.
fn widen_end(old: &[u8], new: &[u8], change: &Change) -> (usize, usize) {
    let (old_end, new_end) = (change.old.end, change.new.end);
    if at_line_start(old, old_end) && at_line_start(new, new_end) {
        return (old_end, new_end);
    }
    // The rest of the line after the change is the same on both sides.
    match memchr::memchr(b'\n', &old[old_end..]) {
        Some(k) => (old_end + k + 1, new_end + k + 1),
        None => (old.len(), new.len()),
    }
}

/// A hunk being rendered.
struct Hunk {
    old_start: usize,
    new_start: usize,
    old_len: usize,
    new_len: usize,
    /// None once the diff was cut: the hunk is only counted.
    body: Option<String>,
}

/// Renders a diff's lines as they come, grouping them into hunks with
/// their context, and counts what it no longer shows.
struct Render<'a> {
    old: &'a [u8],
    out: String,
    hunk: Option<Hunk>,
    /// Unchanged bytes of `old` since the last changed line, not yet placed.
    pending: Range<usize>,
    /// Line numbers (0-based) where `pending` starts.
    old_line: usize,
    new_line: usize,
    added: usize,
    removed: usize,
    /// Lines and bytes of the whole diff, shown or not.
    lines: usize,
    bytes: usize,
    /// Lines shown, and the bytes shown plus the open hunk's header room.
    shown_lines: usize,
    shown_bytes: usize,
    cut: bool,
    /// One deadline for all the regions of the diff.
    deadline: Instant,
}

impl<'a> Render<'a> {
    fn new(old: &'a [u8], path: &str, created: bool) -> Render<'a> {
        let from = if created { "/dev/null" } else { path };
        let out = format!("--- {from}\n+++ {path}\n");
        Render {
            old,
            lines: 2,
            bytes: out.len(),
            shown_lines: 2,
            shown_bytes: out.len(),
            out,
            hunk: None,
            pending: 0..0,
            old_line: 0,
            new_line: 0,
            added: 0,
            removed: 0,
            cut: false,
            deadline: Instant::now() + DIFF_TIMEOUT,
        }
    }

    /// A changed region: `old_part` (at `at` in the old file) became
    /// `new_part`, both whole lines.
    fn region(&mut self, old_part: &'a [u8], new_part: &'a [u8], at: usize) {
        self.equal(at - self.pending.end);
        if count_lines(old_part) <= 1 && count_lines(new_part) <= 1 {
            // One line for another (or one line in or out): nothing to look
            // for, and no tables to build for each of a million sites.
            if line_of(old_part) == line_of(new_part) {
                self.equal(old_part.len());
                return;
            }
            for (sign, part) in [('-', old_part), ('+', new_part)] {
                if !part.is_empty() {
                    self.change(sign, part);
                }
            }
            return;
        }
        if count_lines(old_part) + count_lines(new_part) > EXACT_LINES {
            // Diffed piece by piece, the same number of lines from each
            // side: a correct diff, the smallest within each piece.
            let (mut old_rest, mut new_rest, mut at) = (old_part, new_part, at);
            while !(old_rest.is_empty() && new_rest.is_empty()) {
                let (old_piece, old_after) =
                    old_rest.split_at(lines_len(old_rest, EXACT_LINES / 2));
                let (new_piece, new_after) =
                    new_rest.split_at(lines_len(new_rest, EXACT_LINES / 2));
                self.region(old_piece, new_piece, at);
                at += old_piece.len();
                (old_rest, new_rest) = (old_after, new_after);
            }
            return;
        }
        let (old_lines, old_raw) = split_lines(old_part);
        let (new_lines, new_raw) = split_lines(new_part);
        let ops = capture_diff_slices_deadline(
            Algorithm::Myers,
            &old_lines,
            &new_lines,
            Some(self.deadline),
        );
        for op in ops {
            let (tag, old_range, new_range) = op.as_tag_tuple();
            if tag == DiffTag::Equal {
                self.equal(old_raw[old_range].iter().map(|l| l.len()).sum());
                continue;
            }
            old_raw[old_range].iter().for_each(|l| self.change('-', l));
            new_raw[new_range].iter().for_each(|l| self.change('+', l));
        }
    }

    /// The next `len` bytes of `old` are unchanged.
    fn equal(&mut self, len: usize) {
        self.pending.end += len;
    }

    /// A removed (`-`) or added (`+`) line, as it is in its file.
    fn change(&mut self, sign: char, raw: &[u8]) {
        self.place_pending(true);
        let Some(hunk) = self.hunk.as_mut() else {
            return;
        };
        if sign == '-' {
            hunk.old_len += 1;
            self.old_line += 1;
            self.removed += 1;
            let after = self.pending.end + raw.len();
            self.pending = after..after;
        } else {
            hunk.new_len += 1;
            self.new_line += 1;
            self.added += 1;
        }
        self.push(sign, &line_of(raw));
    }

    /// Places the unchanged lines waiting: as context of the open hunk and,
    /// when a change follows, of the next one (the same hunk when they are
    /// close).
    fn place_pending(&mut self, change_follows: bool) {
        let pending = &self.old[self.pending.clone()];
        if pending.is_empty() && (self.hunk.is_some() || !change_follows) {
            return;
        }
        let n = count_lines(pending);
        let lines = pending.split_inclusive(|&b| b == b'\n');
        let joined = self.hunk.is_some() && change_follows && n <= 2 * CONTEXT;
        if self.hunk.is_some() {
            let after = if joined { n } else { n.min(CONTEXT) };
            for line in lines.clone().take(after) {
                self.context(line);
            }
            if !joined {
                self.close();
            }
        }
        if change_follows && !joined {
            let lead = n.min(CONTEXT);
            self.open(self.old_line + n - lead, self.new_line + n - lead);
            for line in lines.skip(n - lead) {
                self.context(line);
            }
        }
        self.old_line += n;
        self.new_line += n;
        self.pending = self.pending.end..self.pending.end;
    }

    fn context(&mut self, line: &[u8]) {
        if let Some(hunk) = self.hunk.as_mut() {
            hunk.old_len += 1;
            hunk.new_len += 1;
        }
        self.push(' ', &line_of(line));
    }

    fn open(&mut self, old_start: usize, new_start: usize) {
        self.lines += 1;
        let body =
            (!self.cut && line_fits(self.shown_lines, self.shown_bytes, HEADER_ROOM)).then(|| {
                self.shown_lines += 1;
                self.shown_bytes += HEADER_ROOM;
                String::new()
            });
        self.cut |= body.is_none();
        self.hunk = Some(Hunk {
            old_start,
            new_start,
            old_len: 0,
            new_len: 0,
            body,
        });
    }

    /// Writes the open hunk (header and what of its body was shown).
    fn close(&mut self) {
        let Some(hunk) = self.hunk.take() else {
            return;
        };
        let header = format!(
            "@@ -{} +{} @@\n",
            hunk_range(hunk.old_start, hunk.old_start + hunk.old_len),
            hunk_range(hunk.new_start, hunk.new_start + hunk.new_len)
        );
        self.bytes += header.len();
        if let Some(body) = hunk.body {
            self.shown_bytes = self.shown_bytes + header.len() - HEADER_ROOM;
            self.out.push_str(&header);
            self.out.push_str(&body);
        }
    }

    /// One line of the open hunk's body, shown while the diff fits.
    fn push(&mut self, sign: char, line: &Line<'_>) {
        let no_newline = "\\ No newline at end of file\n";
        let extra = if line.newline { 0 } else { no_newline.len() };
        let len = 2 + line.text.len() + extra;
        let count = 1 + usize::from(!line.newline);
        self.lines += count;
        self.bytes += len;
        let Some(hunk) = self.hunk.as_mut() else {
            return;
        };
        if self.cut || hunk.body.is_none() {
            return;
        }
        if !line_fits(self.shown_lines + count - 1, self.shown_bytes, len) {
            self.cut = true;
            // Show the hunk as far as it went; the rest is only counted.
            let old_len = hunk.old_len - usize::from(sign != '+');
            let new_len = hunk.new_len - usize::from(sign != '-');
            let header = format!(
                "@@ -{} +{} @@\n",
                hunk_range(hunk.old_start, hunk.old_start + old_len),
                hunk_range(hunk.new_start, hunk.new_start + new_len)
            );
            let body = hunk.body.take().unwrap_or_default();
            self.shown_bytes = self.shown_bytes + header.len() - HEADER_ROOM;
            self.out.push_str(&header);
            self.out.push_str(&body);
            return;
        }
        let Some(body) = hunk.body.as_mut() else {
            return;
        };
        let before = body.len();
        body.push(sign);
        body.push_str(&String::from_utf8_lossy(line.text));
        body.push('\n');
        if !line.newline {
            body.push_str(no_newline);
        }
        self.shown_lines += count;
        self.shown_bytes += body.len() - before;
    }

    fn finish(mut self, path: &str) -> FileDiff {
        self.equal(self.old.len() - self.pending.end);
        self.place_pending(false);
        self.close();
        let unified = if self.added == 0 && self.removed == 0 {
            String::new()
        } else if self.cut {
            let note = cut_note(self.shown_lines, self.lines, self.out.len(), self.bytes);
            self.out + &note
        } else {
            self.out
        };
        FileDiff {
            path: path.to_string(),
            unified,
            added: self.added,
            removed: self.removed,
        }
    }
}

/// `@@` range text: `start,len`, just `start` for one line, and the line
/// before for an empty range (the usual unified-diff convention).
fn hunk_range(start: usize, end: usize) -> String {
    let len = end.saturating_sub(start);
    match len {
        1 => format!("{}", start + 1),
        0 => format!("{start},0"),
        _ => format!("{},{len}", start + 1),
    }
}

/// "Added 2 lines, removed 1 line".
pub fn summary(diff: &FileDiff) -> String {
    format!(
        "Added {}, removed {}",
        crate::args::plural(diff.added, "line"),
        crate::args::plural(diff.removed, "line")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diff(old: &str, new: &str) -> String {
        file_diff("f", old.as_bytes(), new.as_bytes(), false).unified
    }

    #[test]
    fn a_change_in_the_middle_of_a_long_file_has_the_right_line_numbers() {
        let old: String = (1..=1000).map(|n| format!("l{n}\n")).collect();
        let new = old.replace("l500\n", "five hundred\n");
        assert_eq!(
            diff(&old, &new),
            "--- f\n+++ f\n@@ -497,7 +497,7 @@\n l497\n l498\n l499\n-l500\n+five hundred\n l501\n l502\n l503\n"
        );
    }

    #[test]
    fn changes_at_both_ends_and_missing_final_newlines() {
        assert_eq!(
            diff("a\nb\nc", "a\nb\nC"),
            "--- f\n+++ f\n@@ -1,3 +1,3 @@\n a\n b\n-c\n\\ No newline at end of file\n+C\n\\ No newline at end of file\n"
        );
        assert_eq!(
            diff("a\nb\n", "x\na\nb\n"),
            "--- f\n+++ f\n@@ -1,2 +1,3 @@\n+x\n a\n b\n"
        );
        assert_eq!(diff("", "x\n"), "--- f\n+++ f\n@@ -0,0 +1 @@\n+x\n");
        assert_eq!(diff("same\n", "same\n"), "");
        assert_eq!(
            diff("a\n", "a"),
            "--- f\n+++ f\n@@ -1 +1 @@\n-a\n+a\n\\ No newline at end of file\n"
        );
    }

    #[test]
    fn a_partial_line_match_does_not_misplace_the_suffix() {
        // "ab\n" vs "xb\n": the common suffix "b\n" starts mid-line.
        assert_eq!(
            diff("1\nab\n2\n", "1\nxb\n2\n"),
            "--- f\n+++ f\n@@ -1,3 +1,3 @@\n 1\n-ab\n+xb\n 2\n"
        );
        // Repeated lines around the change.
        assert_eq!(
            diff("x\nx\nx\n", "x\nx\n"),
            "--- f\n+++ f\n@@ -1,3 +1,2 @@\n x\n x\n-x\n"
        );
    }

    #[test]
    fn two_distant_changes_make_two_hunks() {
        let old: String = (1..=30).map(|n| format!("{n}\n")).collect();
        let new = old
            .replace("\n5\n", "\nfive\n")
            .replace("\n25\n", "\ntwenty-five\n");
        let text = diff(&old, &new);
        assert_eq!(text.matches("@@ -").count(), 2, "{text}");
        assert!(text.contains("@@ -2,7 +2,7 @@\n"), "{text}");
        assert!(text.contains("@@ -22,7 +22,7 @@\n"), "{text}");
    }

    /// The changes of replacing every `from` in `old` with `to`.
    fn sites(old: &str, from: &str, to: &str) -> Vec<Change> {
        let step = to.len() as isize - from.len() as isize;
        old.match_indices(from)
            .enumerate()
            .map(|(i, (pos, _))| {
                let at = pos.saturating_add_signed(step * i as isize);
                Change {
                    old: pos..pos + from.len(),
                    new: at..at + to.len(),
                }
            })
            .collect()
    }

    #[test]
    fn changes_named_one_by_one_diff_like_the_whole_files() {
        let old: String = (1..=60)
            .map(|n| {
                if n % 7 == 0 {
                    format!("x{n} x\n")
                } else {
                    format!("{n}\n")
                }
            })
            .collect();
        for (from, to) in [("x", "y"), ("x", "y\nz"), (" x\n", ""), ("x", "")] {
            let new = old.replace(from, to);
            let whole = file_diff("f", old.as_bytes(), new.as_bytes(), false);
            let each = changes_diff(
                "f",
                old.as_bytes(),
                new.as_bytes(),
                false,
                sites(&old, from, to),
            );
            assert_eq!(each, whole, "{from:?} -> {to:?}");
        }
    }

    #[test]
    fn a_long_diff_is_cut_with_the_cut_said_and_counted_whole() {
        let old: String = (0..100_000).map(|n| format!("quick {n}\n")).collect();
        let new = old.replace("quick", "slow");
        let d = changes_diff(
            "f",
            old.as_bytes(),
            new.as_bytes(),
            false,
            sites(&old, "quick", "slow"),
        );
        assert_eq!((d.added, d.removed), (100_000, 100_000));
        let lines: Vec<&str> = d.unified.lines().collect();
        assert_eq!(lines.len(), 2001, "{:?}", &lines[lines.len() - 3..]);
        assert_eq!(
            lines[2], "@@ -1,999 +1,998 @@",
            "the header counts what is shown"
        );
        assert_eq!((lines[3], lines[4]), ("-quick 0", "+slow 0"));
        // 2 file header lines, one hunk header, then 200,000 lines.
        assert!(
            lines[2000].starts_with("… diff cut at 2000 of 200003 lines ("),
            "{}",
            lines[2000]
        );
        // The whole-file diff (one region, diffed in pieces) is cut the
        // same way.
        let whole = file_diff("f", old.as_bytes(), new.as_bytes(), false);
        assert_eq!((whole.added, whole.removed), (100_000, 100_000));
        assert!(
            whole.unified.lines().count() == 2001,
            "{}",
            whole.unified.len()
        );
        assert!(
            whole
                .unified
                .contains("… diff cut at 2000 of 200003 lines (")
        );
    }
}
