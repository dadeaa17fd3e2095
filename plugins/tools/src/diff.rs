//! Unified diffs for the transcript and approval previews (the model never
//! sees them).

use std::time::Duration;

use similar::{ChangeTag, TextDiff};
use uji_sdk::FileDiff;

/// Diffing gives up on finding the smallest diff after this long and
/// returns a correct but coarser one.
const DIFF_TIMEOUT: Duration = Duration::from_millis(500);

/// A unified diff (3 context lines, line numbers in the hunk headers) from
/// `old` to `new`. `created` marks a new file (`--- /dev/null`). CRLF line
/// endings are shown as LF.
pub fn file_diff(path: &str, old: &[u8], new: &[u8], created: bool) -> FileDiff {
    let old = normalise(old);
    let new = normalise(new);
    let diff = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old.as_str(), new.as_str());
    let mut added = 0;
    let mut removed = 0;
    for change in diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Insert => added += 1,
            ChangeTag::Delete => removed += 1,
            ChangeTag::Equal => {}
        }
    }
    let unified = if added == 0 && removed == 0 {
        String::new()
    } else {
        let from = if created { "/dev/null" } else { path };
        diff.unified_diff()
            .context_radius(3)
            .header(from, path)
            .to_string()
    };
    FileDiff {
        path: path.to_string(),
        unified,
        added,
        removed,
    }
}

fn normalise(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).replace("\r\n", "\n")
}

/// "Added 2 lines, removed 1 line".
pub fn summary(diff: &FileDiff) -> String {
    format!(
        "Added {}, removed {}",
        crate::args::plural(diff.added, "line"),
        crate::args::plural(diff.removed, "line")
    )
}
