//! Background jobs on the screen: the footer lines with each running job's
//! latest output, `/jobs` (a picker of the jobs, running first, whose
//! choice stops a running one) and Ctrl+Z (the running command goes to the
//! background and the turn goes on).

use std::collections::BTreeMap;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use uji_protocol::frontend::answers::{Backgrounded, JobList};
use uji_protocol::frontend::{Event, Op};
use uji_protocol::jobs::JobInfo;

use super::state::{App, Pending, PickerKind};
use crate::picker::{Picker, PickerItem};
use crate::theme::Theme;
use crate::transcript::Level;

/// Footer lines at most; more running jobs are counted on the last one.
const MAX_LINES: usize = 3;

/// The running jobs, by id, with their latest line.
#[derive(Debug, Default)]
pub struct Jobs {
    running: BTreeMap<u64, Running>,
}

#[derive(Debug)]
struct Running {
    command: String,
    last_line: String,
}

impl Jobs {
    /// Rows the footer needs.
    pub fn height(&self) -> u16 {
        self.running.len().min(MAX_LINES) as u16
    }

    pub fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let rows = usize::from(area.height);
        let hidden = self.running.len().saturating_sub(rows);
        for (i, (id, job)) in self.running.iter().take(rows).enumerate() {
            let more = if hidden > 0 && i + 1 == rows {
                format!("  (+{hidden} more: /jobs)")
            } else {
                String::new()
            };
            let line = Line::from(vec![
                Span::styled(format!("  ⚙ job {id} "), theme.accent),
                Span::styled(short(&job.command, 30), theme.dim),
                Span::raw("  "),
                Span::raw(job.last_line.clone()),
                Span::styled(more, theme.dim),
            ]);
            let y = area.y + i as u16;
            buf.set_line(area.x, y, &line, area.width);
        }
    }

    fn update(&mut self, job: &JobInfo) {
        if job.state.is_running() {
            self.running.insert(
                job.id,
                Running {
                    command: job.command.clone(),
                    last_line: job.last_line.clone(),
                },
            );
        } else {
            self.running.remove(&job.id);
        }
    }
}

/// The first line of `text`, at most `max` characters.
fn short(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or("");
    if line.chars().count() > max {
        format!("{}…", line.chars().take(max - 1).collect::<String>())
    } else {
        line.to_string()
    }
}

impl App {
    pub(super) fn on_job_event(&mut self, event: Event) {
        match event {
            Event::JobStarted { job } => self.jobs.update(&job),
            Event::JobOutput { id, line } => {
                if let Some(job) = self.jobs.running.get_mut(&id) {
                    job.last_line = line;
                }
            }
            // The notice that comes with it tells the user.
            Event::JobFinished { job } => self.jobs.update(&job),
            _ => {}
        }
    }

    /// Ctrl+Z.
    pub(super) fn send_to_background(&mut self) {
        self.submit(Op::Background, Pending::Background);
    }

    pub(super) fn list_jobs(&mut self) {
        self.submit(Op::ListJobs, Pending::ListJobs);
    }

    pub(super) fn on_background_ack(&mut self, answer: Backgrounded) {
        if answer.running == 0 {
            self.notice(
                Level::Info,
                "no command is running to send to the background",
            );
        }
    }

    pub(super) fn open_job_picker(&mut self, list: JobList) {
        let jobs = list.jobs;
        if jobs.is_empty() {
            self.notice(Level::Info, "no background jobs in this session");
            return;
        }
        let items = jobs.iter().map(job_item).collect();
        let title = "Jobs · Enter stops a running job";
        self.picker = Some((PickerKind::Job, Picker::new(title, items, false)));
    }

    /// The picker's choice: stops a running job.
    pub(super) fn job_chosen(&mut self, value: &str) {
        let Some((id, running)) = value.split_once(':') else {
            return;
        };
        let Ok(id) = id.parse::<u64>() else { return };
        if running == "running" {
            self.submit(Op::StopJob { job_id: id }, Pending::Other);
        } else {
            self.notice(Level::Info, format!("job {id} has already ended"));
        }
    }
}

/// "job 2 · npm run dev" / "running 12s · ready on :5173".
fn job_item(job: &JobInfo) -> PickerItem {
    let seconds = job.elapsed_ms / 1000;
    let state = if job.state.is_running() {
        format!("running {seconds}s")
    } else {
        format!("{} after {seconds}s", job.state.describe())
    };
    let preview = short(&job.last_line, 60);
    PickerItem {
        label: format!("job {} · {}", job.id, short(&job.command, 40)),
        detail: if preview.is_empty() {
            state
        } else {
            format!("{state} · {preview}")
        },
        value: format!(
            "{}:{}",
            job.id,
            if job.state.is_running() {
                "running"
            } else {
                "ended"
            }
        ),
    }
}
