//! Tool-call and shell blocks. (Placeholder until the widgets land.)

use ratatui::text::Line;
use uji_protocol::FileDiff;

use crate::theme::Theme;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolState {
    Asking,
    Running,
    Done,
    Failed,
    Denied,
}

pub struct ToolBlock {
    call_id: String,
    verb: String,
    subject: String,
    state: ToolState,
    progress: String,
    output: String,
    summary: Option<String>,
    expanded: bool,
}

impl ToolBlock {
    pub fn new(call_id: &str, _name: &str, verb: &str, subject: &str) -> ToolBlock {
        ToolBlock {
            call_id: call_id.into(),
            verb: verb.into(),
            subject: subject.into(),
            state: ToolState::Running,
            progress: String::new(),
            output: String::new(),
            summary: None,
            expanded: false,
        }
    }
    pub fn call_id(&self) -> &str {
        &self.call_id
    }
    pub fn set_state(&mut self, state: ToolState) {
        self.state = state;
    }
    pub fn state(&self) -> ToolState {
        self.state
    }
    pub fn set_progress(&mut self, line: &str) {
        self.progress = line.to_string();
    }
    pub fn finish(&mut self, is_error: bool, summary: Option<&str>, _diff: Option<&FileDiff>) {
        if self.state != ToolState::Denied {
            self.state = if is_error {
                ToolState::Failed
            } else {
                ToolState::Done
            };
        }
        self.summary = summary.map(str::to_string);
    }
    pub fn set_output(&mut self, content: &str) {
        self.output = content.to_string();
    }
    pub fn toggle_expanded(&mut self) {
        self.expanded = !self.expanded;
    }
    pub fn set_expanded(&mut self, on: bool) {
        self.expanded = on;
    }
    pub fn is_expanded(&self) -> bool {
        self.expanded
    }
    pub fn lines(
        &mut self,
        _width: u16,
        theme: &Theme,
        _spinner_frame: usize,
    ) -> Vec<Line<'static>> {
        let mark = match self.state {
            ToolState::Running | ToolState::Asking => "○",
            _ => "●",
        };
        let mut out = vec![Line::from(format!(
            "{mark} {} ({})",
            self.verb, self.subject
        ))];
        if self.state == ToolState::Running && !self.progress.is_empty() {
            out.push(Line::styled(format!("  ⎿ {}", self.progress), theme.dim));
        }
        if let Some(summary) = &self.summary {
            out.push(Line::styled(format!("  ⎿ {summary}"), theme.dim));
        }
        out
    }
}

pub struct ShellBlock {
    command: String,
    output: String,
    exit_code: Option<i32>,
    done: bool,
    expanded: bool,
}

impl ShellBlock {
    pub fn new(command: &str) -> ShellBlock {
        ShellBlock {
            command: command.into(),
            output: String::new(),
            exit_code: None,
            done: false,
            expanded: false,
        }
    }
    pub fn set_progress(&mut self, line: &str) {
        self.output.push_str(line);
        self.output.push('\n');
    }
    pub fn is_finished(&self) -> bool {
        self.done
    }
    pub fn finish(&mut self, output: &str, exit_code: Option<i32>) {
        self.output = output.into();
        self.exit_code = exit_code;
        self.done = true;
    }
    pub fn toggle_expanded(&mut self) {
        self.expanded = !self.expanded;
    }
    pub fn set_expanded(&mut self, on: bool) {
        self.expanded = on;
    }
    pub fn lines(
        &mut self,
        _width: u16,
        _theme: &Theme,
        _spinner_frame: usize,
    ) -> Vec<Line<'static>> {
        let mut out = vec![Line::from(format!("! {}", self.command))];
        out.extend(
            self.output
                .lines()
                .take(8)
                .map(|l| Line::from(format!("  {l}"))),
        );
        out
    }
}
