//! How a foreground command ended, as the model reads it.

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

use uji_sdk::ToolOutput;
use uji_sdk::protocol::ToolErrorKind;
use uji_sdk::protocol::spill::Capture;

use crate::args::plural;

/// Why the foreground wait ended.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum End {
    Exited(Option<ExitStatus>),
    Timeout,
    /// Timed out, and `max` jobs ran already: killed instead of moved.
    TimeoutFull(usize),
    Interrupted,
    /// The user sent it to the background (Ctrl+Z).
    MoveAsked,
}

/// The bounded output, its note and how it ended.
pub fn render(
    capture: &Capture,
    end: End,
    status: Option<ExitStatus>,
    timeout_secs: u64,
    elapsed: f64,
) -> ToolOutput {
    let rendered = capture.render();
    let mut text = rendered.output;
    let mut push = |line: &str| {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(line);
    };
    if let Some(note) = &rendered.note {
        push("");
        push(note);
    }
    let lines = plural(capture.total_lines(), "line");
    let error_kind = matches!(end, End::Interrupted).then_some(ToolErrorKind::Interrupted);
    let (is_error, summary) = match end {
        End::Timeout | End::MoveAsked => {
            push(&format!("error: command timed out after {timeout_secs}s"));
            (true, format!("Timed out after {timeout_secs}s"))
        }
        End::TimeoutFull(max) => {
            push(&format!(
                "error: command timed out after {timeout_secs}s and was killed: {max} background \
                 jobs were running, so it could not move to the background"
            ));
            (true, format!("Timed out after {timeout_secs}s"))
        }
        End::Interrupted => {
            push("error: interrupted by the user while this tool ran");
            (true, "Interrupted".to_string())
        }
        End::Exited(_) => exited(status, rendered.blank, &lines, elapsed, &mut push),
    };
    ToolOutput {
        text,
        summary: Some(summary),
        is_error,
        error_kind,
        ..Default::default()
    }
}

fn exited(
    status: Option<ExitStatus>,
    blank: bool,
    lines: &str,
    elapsed: f64,
    push: &mut dyn FnMut(&str),
) -> (bool, String) {
    match status.map(|s| (s.code(), s.signal())) {
        Some((Some(0), _)) => {
            if blank {
                push("(no output, exit code 0)");
            }
            (false, format!("{lines}, exit code 0, {elapsed:.1}s"))
        }
        // A command that failed is a failed call, as the model, the hooks
        // and the screens read it (Claude Code's shell tool does the same).
        Some((Some(code), _)) => {
            push(&format!("(exit code {code})"));
            (true, format!("{lines}, exit code {code}, {elapsed:.1}s"))
        }
        Some((None, Some(signal))) => {
            push(&format!("(killed by signal {signal})"));
            (true, format!("Killed by signal {signal}"))
        }
        Some((None, None)) => (false, format!("{lines}, {elapsed:.1}s")),
        None => {
            push("(exit status unknown)");
            (false, format!("{lines}, {elapsed:.1}s"))
        }
    }
}
