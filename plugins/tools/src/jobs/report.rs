//! What the model reads about a job: its status in one line, and the
//! report of its end (status and last lines) that reaches the next request.

use uji_sdk::protocol::jobs::{JobInfo, REPORT_LINES};
use uji_sdk::protocol::spill::cut_at_char_boundary;

use super::Job;

/// A report line longer than this is cut.
const LINE_BYTES: usize = 1000;

fn seconds(ms: u64) -> String {
    format!("{:.1}s", ms as f64 / 1000.0)
}

/// "job 2 is running (12.3s so far)", "job 2 exited with code 1 after 4.0s".
pub fn status_line(info: &JobInfo) -> String {
    if info.state.is_running() {
        format!(
            "job {} is running ({} so far)",
            info.id,
            seconds(info.elapsed_ms)
        )
    } else {
        format!(
            "job {} {} after {}",
            info.id,
            info.state.describe(),
            seconds(info.elapsed_ms)
        )
    }
}

/// The report of a job that ended: what ran, how it ended, its last
/// [`REPORT_LINES`] lines and where the full output is.
pub fn finished_report(job: &Job) -> String {
    let info = job.info();
    let rendered = job.output().log.render();
    let lines: Vec<&str> = rendered.output.lines().collect();
    let tail = &lines[lines.len().saturating_sub(REPORT_LINES)..];
    let mut text = format!(
        "[Background job {} (`{}`) {} after {}.",
        info.id,
        one_line(&info.command),
        info.state.describe(),
        seconds(info.elapsed_ms)
    );
    if tail.is_empty() {
        text.push_str(" It printed nothing.]");
        return text;
    }
    text.push_str(&format!(
        " Its last {} of {}:]\n",
        plural(tail.len(), "line"),
        info.lines.max(tail.len() as u64)
    ));
    for line in tail {
        let cut = cut_at_char_boundary(line.as_bytes(), LINE_BYTES);
        text.push_str(&String::from_utf8_lossy(cut));
        text.push('\n');
    }
    if let Some(log) = &info.log {
        text.push_str(&format!("[Full output: {log}]\n"));
    }
    text.truncate(text.trim_end().len());
    text
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// The command on one line, shortened for a heading.
pub fn one_line(command: &str) -> String {
    let flat = command.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() > 80 {
        let cut: String = flat.chars().take(79).collect();
        format!("{cut}…")
    } else {
        flat
    }
}
