//! A command becoming a background job: started as one
//! (`run_in_background`), or moved there from the foreground.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use uji_sdk::ToolOutput;
use uji_sdk::protocol::spill::Capture;

use crate::jobs::{self, Job, Refused, status_line};
use crate::process::Running;

/// How long a call that starts a job waits for its first line.
const FIRST_OUTPUT_WAIT: Duration = Duration::from_millis(200);

fn how_to_follow(id: u64) -> String {
    format!(
        "Read its new output with job_output {{\"id\": {id}}}; stop it with stop_job \
         {{\"id\": {id}}}. When it ends, its exit status and last lines come with your next \
         request."
    )
}

/// Starts `running` as a job and returns its number and first output.
pub fn start(command: &str, lifetime: Duration, running: Running, spill: PathBuf) -> ToolOutput {
    let log = Capture::new(Some(spill.clone()));
    let job = match jobs::adopt(running, log, spill, command, lifetime, true) {
        Ok(job) => job,
        // The command is dropped with its guard armed: its tree is killed.
        Err(refused) => {
            return ToolOutput::error(format!(
                "cannot start a background job: {}",
                refused.full.describe()
            ));
        }
    };
    let ended = wait_first_output(&job);
    let output = job.take_unread();
    let info = job.info();
    if ended {
        let mut text = output;
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&format!("({})", status_line(&info)));
        return done(text, status_line(&info));
    }
    let shown = if output.is_empty() {
        "No output yet.".to_string()
    } else {
        format!("Its output so far:\n{output}")
    };
    let text = format!(
        "Started job {id} in the background (it lives at most {secs}s). {shown}\n\n{follow}",
        id = info.id,
        secs = lifetime.as_secs(),
        follow = how_to_follow(info.id)
    );
    done(text, format!("Started job {}", info.id))
}

/// Waits for the job's first line or its end; then the job reports its end
/// itself. Whether it ended (this call tells the model so, no report).
fn wait_first_output(job: &Arc<Job>) -> bool {
    let deadline = Instant::now() + FIRST_OUTPUT_WAIT;
    let mut out = job.output();
    while out.state.is_running() && out.unread.total_lines() == 0 {
        let now = Instant::now();
        if now >= deadline {
            break;
        }
        out = match job.changed.wait_timeout(out, deadline - now) {
            Ok((guard, _)) => guard,
            Err(poisoned) => poisoned.into_inner().0,
        };
    }
    out.caller_waiting = false;
    !out.state.is_running()
}

/// Moves a foreground command to the background; the result shows its
/// output so far. Gives it back when no more jobs may run.
pub fn adopt(
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
    let job = jobs::adopt(
        running,
        capture,
        spill,
        command,
        jobs::default_lifetime(),
        false,
    )?;
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
