//! A command becoming a background job: started as one
//! (`run_in_background`), or moved there from the foreground.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use uji_sdk::protocol::spill::Capture;
use uji_sdk::{ToolContext, ToolOutput};

use super::outcome::{End, render};
use crate::jobs::{Jobs, Refused};
use crate::process::{Pumped, Running};

/// How long a call that starts a job waits for its first line.
const FIRST_OUTPUT_WAIT: Duration = Duration::from_millis(200);

fn how_to_follow(id: u64) -> String {
    format!(
        "Read its new output with job_output {{\"id\": {id}}}; stop it with stop_job \
         {{\"id\": {id}}}. When it ends, its exit status and last lines come with your next \
         request."
    )
}

/// Reads the command's first output (its first line, or what came within
/// [`FIRST_OUTPUT_WAIT`]) on the calling thread, then makes it a job and
/// returns its number and that output. A command that ended by then is no
/// job: the result is its output and exit status, as in the foreground.
pub fn start(
    jobs: &Jobs,
    command: &str,
    lifetime: Duration,
    mut running: Running,
    spill: PathBuf,
    ctx: &ToolContext,
) -> ToolOutput {
    let mut log = Capture::new(Some(spill.clone()));
    let mut progress = |head: &[u8]| ctx.progress(&String::from_utf8_lossy(head));
    let deadline = Instant::now() + FIRST_OUTPUT_WAIT;
    let mut first_line = false;
    while !first_line && Instant::now() < deadline {
        let wait = deadline.saturating_duration_since(Instant::now());
        let mut sink = |chunk: &[u8]| {
            log.push(chunk, &mut |head| {
                first_line = true;
                progress(head);
            })
        };
        if let Pumped::Exited(status) = running.pump(wait, &mut sink) {
            running.ended();
            log.finish(&mut progress);
            let elapsed = running.started.elapsed().as_secs_f64();
            return render(&log, End::Exited(status), status, 0, elapsed);
        }
    }
    let shown = log.render().with_note();
    let job = match jobs.adopt(running, log, spill, command, lifetime) {
        Ok(job) => job,
        // The command is dropped with its guard armed: its tree is killed.
        Err(refused) => {
            return ToolOutput::error(format!(
                "cannot start a background job: {}",
                refused.full.describe()
            ));
        }
    };
    let shown = if shown.is_empty() {
        "No output yet.".to_string()
    } else {
        format!("Its output so far:\n{shown}")
    };
    let text = format!(
        "Started job {id} in the background (it lives at most {secs}s). {shown}\n\n{follow}",
        id = job.id,
        secs = lifetime.as_secs(),
        follow = how_to_follow(job.id)
    );
    done(text, format!("Started job {}", job.id))
}

/// Moves a foreground command to the background; the result shows its
/// output so far. Gives it back when no more jobs may run.
pub fn adopt(
    jobs: &Jobs,
    command: &str,
    running: Running,
    capture: Capture,
    spill: PathBuf,
    at_timeout: bool,
) -> Result<ToolOutput, Box<Refused>> {
    let elapsed = running.started.elapsed().as_secs();
    // What the model sees now: the output so far, without cutting the
    // line still being written (the job goes on with it).
    let rendered = capture.render().with_note();
    let lifetime = jobs.default_lifetime();
    let job = jobs.adopt(running, capture, spill, command, lifetime)?;
    let why = if at_timeout {
        format!("It was still running at its {elapsed}s timeout")
    } else {
        format!("The user moved it to the background after {elapsed}s")
    };
    let text = format!(
        "{rendered}\n\n[{why}: it goes on as job {id} in the background. {follow}]",
        rendered = rendered.trim_end(),
        id = job.id,
        follow = how_to_follow(job.id)
    );
    Ok(done(
        text.trim_start().to_string(),
        format!("Moved to the background as job {}", job.id),
    ))
}

fn done(text: String, summary: String) -> ToolOutput {
    ToolOutput {
        text,
        summary: Some(summary),
        ..Default::default()
    }
}
