//! Unified diffs for the transcript and approval previews (the model never
//! sees them).
//!
//! Only the region that changed is diffed: the common prefix and suffix are
//! found on the raw bytes first, so editing one line of a 20 MB file costs a
//! few lines of diff work and no copy of the file.

use std::time::{Duration, Instant};

use similar::{Algorithm, DiffOp, DiffTag, capture_diff_slices_deadline, group_diff_ops};
use uji_sdk::FileDiff;

/// Diffing gives up on finding the smallest diff after this long and
/// returns a correct but coarser one.
const DIFF_TIMEOUT: Duration = Duration::from_millis(500);

/// Unchanged lines shown around each change.
const CONTEXT: usize = 3;

/// One line, compared without its line ending so CRLF and LF files diff
/// alike (CRLF is shown as LF).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Line<'a> {
    text: &'a [u8],
    newline: bool,
}

fn split_lines(bytes: &[u8]) -> Vec<Line<'_>> {
    bytes
        .split_inclusive(|&b| b == b'\n')
        .map(|line| match line.strip_suffix(b"\n") {
            Some(text) => Line {
                text: text.strip_suffix(b"\r").unwrap_or(text),
                newline: true,
            },
            None => Line {
                text: line,
                newline: false,
            },
        })
        .collect()
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
    // The changed region, widened to whole lines.
    let prefix = common_prefix(old, new);
    let start = old[..prefix]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let suffix = common_suffix(&old[start..], &new[start..]);
    let (mut old_end, mut new_end) = (old.len() - suffix, new.len() - suffix);
    if !(at_line_start(old, old_end) && at_line_start(new, new_end)) {
        // Move the suffix to just after a newline inside it, which both
        // sides then share.
        match old[old_end..].iter().position(|&b| b == b'\n') {
            Some(k) => {
                old_end += k + 1;
                new_end += k + 1;
            }
            None => {
                old_end = old.len();
                new_end = new.len();
            }
        }
    }

    // Widen by the context lines (equal on both sides).
    let mut from = start;
    for _ in 0..CONTEXT {
        if from == 0 {
            break;
        }
        from = old[..from - 1]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
    }
    let mut old_to = old_end;
    for _ in 0..CONTEXT {
        if old_to == old.len() {
            break;
        }
        old_to = old[old_to..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(old.len(), |k| old_to + k + 1);
    }
    let new_to = new_end + (old_to - old_end);
    let first_line = memchr::memchr_iter(b'\n', &old[..from]).count();

    let old_lines = split_lines(&old[from..old_to]);
    let new_lines = split_lines(&new[from..new_to]);
    let deadline = Instant::now() + DIFF_TIMEOUT;
    let ops =
        capture_diff_slices_deadline(Algorithm::Myers, &old_lines, &new_lines, Some(deadline));

    let (mut added, mut removed) = (0, 0);
    for op in &ops {
        let (tag, old_range, new_range) = op.as_tag_tuple();
        match tag {
            DiffTag::Equal => {}
            DiffTag::Delete => removed += old_range.len(),
            DiffTag::Insert => added += new_range.len(),
            DiffTag::Replace => {
                removed += old_range.len();
                added += new_range.len();
            }
        }
    }
    let unified = if added == 0 && removed == 0 {
        String::new()
    } else {
        render(path, created, &ops, &old_lines, &new_lines, first_line)
    };
    FileDiff {
        path: path.to_string(),
        unified,
        added,
        removed,
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

fn push_line(out: &mut String, sign: char, line: &Line<'_>) {
    out.push(sign);
    out.push_str(&String::from_utf8_lossy(line.text));
    out.push('\n');
    if !line.newline {
        out.push_str("\\ No newline at end of file\n");
    }
}

fn render(
    path: &str,
    created: bool,
    ops: &[DiffOp],
    old_lines: &[Line<'_>],
    new_lines: &[Line<'_>],
    offset: usize,
) -> String {
    let from = if created { "/dev/null" } else { path };
    let mut out = format!("--- {from}\n+++ {path}\n");
    for group in group_diff_ops(ops.to_vec(), CONTEXT) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let (old_start, new_start) = (first.old_range().start, first.new_range().start);
        let (old_end, new_end) = (last.old_range().end, last.new_range().end);
        out.push_str(&format!(
            "@@ -{} +{} @@\n",
            hunk_range(old_start + offset, old_end + offset),
            hunk_range(new_start + offset, new_end + offset)
        ));
        for op in &group {
            let (tag, old_range, new_range) = op.as_tag_tuple();
            match tag {
                DiffTag::Equal => old_lines[old_range]
                    .iter()
                    .for_each(|l| push_line(&mut out, ' ', l)),
                DiffTag::Delete => old_lines[old_range]
                    .iter()
                    .for_each(|l| push_line(&mut out, '-', l)),
                DiffTag::Insert => new_lines[new_range]
                    .iter()
                    .for_each(|l| push_line(&mut out, '+', l)),
                DiffTag::Replace => {
                    old_lines[old_range]
                        .iter()
                        .for_each(|l| push_line(&mut out, '-', l));
                    new_lines[new_range]
                        .iter()
                        .for_each(|l| push_line(&mut out, '+', l));
                }
            }
        }
    }
    out
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
}
