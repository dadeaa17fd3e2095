//! What a call carries besides its arguments: the confinement roots the
//! file tools open paths beneath, and the OS sandbox `run_command` runs in.

use std::path::{Path, PathBuf};

use uji_policy::{Decision, canonicalize_lenient, expand_home};
use uji_protocol::services::{SandboxSettings, ToolSandbox};
use uji_protocol::{CallSandbox, SandboxMode, SubjectKind};

use super::Gate;

impl Gate {
    /// The canonical working directory and extra roots.
    fn workspace_roots(&self, cwd: &Path) -> Vec<PathBuf> {
        let extra = self.roots(None);
        std::iter::once(cwd.to_path_buf())
            .chain(extra.into_iter().map(|r| cwd.join(r)))
            .filter_map(|dir| canonicalize_lenient(&dir).ok())
            .collect()
    }

    /// The canonical directories a confined file tool may reach (`cwd`
    /// first), handed to the tool in its call; `None` when not confined.
    /// A `read_file` of the session's spill file also reaches the spill
    /// directory, where that file is.
    pub(super) fn confinement_roots(
        &self,
        cwd: &Path,
        tool: &str,
        subject: &str,
    ) -> Option<Vec<String>> {
        if !self.confine(None) {
            return None;
        }
        let mut roots = self.workspace_roots(cwd);
        if let Some(spill) = self.own_spill_file(tool, subject, cwd)
            && let Some(dir) = spill.parent()
        {
            roots.push(dir.to_path_buf());
        }
        Some(
            roots
                .iter()
                .map(|dir| dir.to_string_lossy().into_owned())
                .collect(),
        )
    }

    /// `uji.tool.sandbox{…}` and `--sandbox`: changes what `change` sets
    /// and answers the settings.
    pub fn sandbox(&self, change: ToolSandbox) -> SandboxSettings {
        let Ok(mut settings) = self.sandbox.write() else {
            return SandboxSettings::default();
        };
        if let Some(mode) = change.mode {
            settings.mode = Some(mode);
        }
        if let Some(network) = change.network {
            settings.network = network;
        }
        if let Some(writable) = change.writable {
            settings.writable = writable;
        }
        settings.clone()
    }

    /// The sandbox a command call gets: the configured mode; with none
    /// configured, an ask that runs because nobody can answer (`--yes`)
    /// gets `workspace-write`, anything else none. Only tools whose subject
    /// is a command run in one.
    pub fn call_sandbox(
        &self,
        kind: SubjectKind,
        decision: Decision,
        unattended: bool,
        cwd: &Path,
    ) -> Option<CallSandbox> {
        if kind != SubjectKind::Command {
            return None;
        }
        let settings = self.sandbox.read().ok()?.clone();
        let mode = match settings.mode {
            Some(mode) => mode,
            None if decision == Decision::Ask && unattended => SandboxMode::WorkspaceWrite,
            None => return None,
        };
        let mut writable = self.workspace_roots(cwd);
        writable.extend(canonicalize_lenient(&std::env::temp_dir()).ok());
        writable.extend(
            settings
                .writable
                .iter()
                .filter_map(|dir| canonicalize_lenient(&cwd.join(expand_home(dir))).ok()),
        );
        Some(CallSandbox {
            mode,
            network: settings.network,
            writable: writable
                .iter()
                .map(|dir| dir.to_string_lossy().into_owned())
                .collect(),
        })
    }
}

/// The approval question, with the sandbox the call would run in.
pub(super) fn with_sandbox(question: String, sandbox: Option<&CallSandbox>) -> String {
    match sandbox {
        Some(sandbox) => format!("{question} (sandbox: {})", sandbox.describe()),
        None => question,
    }
}
