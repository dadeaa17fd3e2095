//! What a call carries besides its arguments: the confinement roots the
//! file tools open paths beneath, and the OS sandbox `run_command` runs in
//! (with what it protects inside it).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use uji_policy::{canonicalize_lenient, expand_home};
use uji_protocol::services::{SandboxSettings, ToolSandbox};
use uji_protocol::{CallSandbox, Network, SandboxMode, SubjectKind, ToolOutput};

use super::Gate;

/// Whether the missing bash was told (once per process).
static TOLD_NO_BASH: AtomicBool = AtomicBool::new(false);

impl Gate {
    /// True for a command when this machine has no bash: what the policy
    /// read cannot be what runs, so every command is unresolved (asked, and
    /// denied where nobody can answer). Says so once, as a notice and in
    /// the log.
    pub(super) fn without_bash(&self, kind: SubjectKind) -> bool {
        if kind != SubjectKind::Command || uji_protocol::bash::path().is_some() {
            return false;
        }
        if !TOLD_NO_BASH.swap(true, Ordering::Relaxed) {
            self.registry.notify_at(
                uji_protocol::frontend::NoticeLevel::Warn,
                "uji",
                &uji_protocol::bash::missing_text(),
            );
        }
        true
    }

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
        if tool == super::READ_FILE
            && let Some(root) = self.with_policy(|p| p.read_root_of(subject, cwd))
        {
            roots.push(root);
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
        let mut settings = self.sandbox.write();
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

    /// The sandbox a command call gets unless a person lifts it: the mode
    /// the user set, else `workspace-write`. Only tools whose subject is a
    /// command run in one. Rules, defaults, "allow for this session",
    /// hooks, `--yes` and headless runs never lift it: see
    /// [`Gate::lifted_by_allow_once`].
    pub fn call_sandbox(&self, kind: SubjectKind, cwd: &Path) -> Option<CallSandbox> {
        if kind != SubjectKind::Command {
            return None;
        }
        let settings = self.sandbox.read().clone();
        let mode = settings.mode.unwrap_or(SandboxMode::WorkspaceWrite);
        let roots = self.workspace_roots(cwd);
        let mut writable = roots.clone();
        writable.extend(canonicalize_lenient(&std::env::temp_dir()).ok());
        writable.extend(
            settings
                .writable
                .iter()
                .filter_map(|dir| canonicalize_lenient(&cwd.join(expand_home(dir))).ok()),
        );
        let (read_only, hidden) = self.protected_paths(&roots);
        let (network, proxy, hosts) = match &settings.network {
            Network::All => (true, None, Vec::new()),
            Network::None => (false, None, Vec::new()),
            Network::Hosts(hosts) => (false, self.net_proxy_port(hosts), hosts.clone()),
        };
        Some(CallSandbox {
            mode,
            network,
            proxy,
            hosts,
            writable: strings(&writable),
            read_only: strings(&read_only),
            hidden: strings(&hidden),
        })
    }

    /// The port of the proxy letting `hosts` through, started on first use;
    /// `None` (no network at all) when it cannot be started, or outside a
    /// runtime (`uji policy check` only describes the sandbox).
    fn net_proxy_port(&self, hosts: &[String]) -> Option<u16> {
        let mut slot = self.net_proxy.lock();
        if let Some(proxy) = slot.as_ref() {
            proxy.set_hosts(hosts.to_vec());
            return Some(proxy.port());
        }
        tokio::runtime::Handle::try_current().ok()?;
        match super::proxy::NetProxy::start(hosts.to_vec()) {
            Ok(proxy) => {
                let port = proxy.port();
                *slot = Some(Arc::new(proxy));
                Some(port)
            }
            Err(e) => {
                tracing::warn!("the network proxy cannot start ({e}): commands get no network");
                None
            }
        }
    }

    /// Says in a call's result which hosts the proxy refused while it ran.
    pub(super) fn note_refused_hosts(&self, since: std::time::Instant, output: &mut ToolOutput) {
        let Some(proxy) = self.net_proxy.lock().clone() else {
            return;
        };
        for host in proxy.refused_since(since) {
            output.text.push_str(&format!(
                "\nnetwork: {host} is not allowed by your sandbox rules (uji.tool.sandbox network allow list, docs/web.md)"
            ));
        }
    }

    /// `tool.command_sandbox`: the sandbox a command nobody approved runs
    /// in now, with `session_dir` (else uji's current directory) as the
    /// workspace: what [`Gate::call_sandbox`] gives `run_command`'s calls.
    /// The tools plugin starts the processes other plugins ask for
    /// (`proc.start`) in it, wherever they run.
    pub fn command_sandbox(&self, session_dir: Option<&Path>) -> Result<CallSandbox, String> {
        let cwd = session_dir
            .map(Path::to_path_buf)
            .or_else(|| std::env::current_dir().ok())
            .ok_or_else(|| {
                "uji cannot tell the session's directory, so it cannot say which sandbox \
                 commands run in"
                    .to_string()
            })?;
        self.call_sandbox(SubjectKind::Command, &cwd)
            .ok_or_else(|| {
                "uji gives commands no sandbox description (this is a bug in uji)".to_string()
            })
    }

    /// Whether a person's "allow once" in a question runs that call with
    /// no sandbox: only while the user set no mode (a mode set applies to
    /// every command).
    pub fn lifted_by_allow_once(&self) -> bool {
        self.sandbox.read().mode.is_none()
    }

    /// What a sandboxed command may not change even beneath a writable
    /// directory, and what it may not read: each workspace root's
    /// `.git/config` and `.git/hooks` (a `.git` file, in a git worktree),
    /// and uji's config directory, read-only; uji's data directory (keys,
    /// sessions, logs, other sessions' spill files) hidden. Only paths that
    /// exist; a directory holding a workspace root is left alone (the user
    /// works in it).
    fn protected_paths(&self, roots: &[PathBuf]) -> (Vec<PathBuf>, Vec<PathBuf>) {
        let mut read_only = Vec::new();
        for root in roots {
            let git = root.join(".git");
            match std::fs::symlink_metadata(&git) {
                Ok(meta) if meta.is_dir() => {
                    read_only.extend(
                        [git.join("config"), git.join("hooks")]
                            .into_iter()
                            .filter(|p| p.exists()),
                    );
                }
                Ok(_) => read_only.push(git),
                Err(_) => {}
            }
        }
        let dir = |key: &str| {
            self.registry
                .config(key)
                .and_then(|v| v.as_str().map(PathBuf::from))
                .and_then(|d| d.canonicalize().ok())
                .filter(|d| !roots.iter().any(|root| root.starts_with(d)))
        };
        read_only.extend(dir(crate::boot::CONFIG_DIR_KEY));
        let hidden = dir(crate::boot::DATA_DIR_KEY).into_iter().collect();
        (read_only, hidden)
    }
}

fn strings(paths: &[PathBuf]) -> Vec<String> {
    paths
        .iter()
        .map(|dir| dir.to_string_lossy().into_owned())
        .collect()
}

/// The approval question, with the sandbox the call would run in: when a
/// person's "allow once" lifts it, both (`once: no sandbox; for the
/// session: workspace-write, network on`).
pub(super) fn with_sandbox(
    question: String,
    sandbox: Option<&CallSandbox>,
    lifted_by_allow_once: bool,
) -> String {
    match sandbox {
        Some(sandbox) if lifted_by_allow_once => format!(
            "{question} (once: no sandbox; for the session: sandbox {})",
            sandbox.describe()
        ),
        Some(sandbox) => format!("{question} (sandbox: {})", sandbox.describe()),
        None => question,
    }
}
