//! The machine: Landlock and what uji's sandbox can enforce with it, user
//! namespaces (the mounts that protect paths beneath a writable
//! directory), bash, git, and the MCP servers.

use std::path::{Path, PathBuf};

use uji_protocol::mcp::{McpList, ServerState};
use uji_protocol::services::{SandboxSupport, Service};

use super::Check;

pub fn check(registry: &uji_host::Registry, offline: bool) -> Vec<Check> {
    let mut checks = sandbox(registry);
    checks.extend([bash(), git()]);
    checks.extend(mcp(registry, offline));
    checks
}

/// Asked of the tools plugin, which enforces the sandbox: it knows its
/// kernel's Landlock ABI and tries a namespace the way a command's would.
fn sandbox(registry: &uji_host::Registry) -> Vec<Check> {
    match registry.call(uji_host::CORE_CALLER, &SandboxSupport {}) {
        Ok(support) => vec![
            landlock(support.landlock_abi),
            namespaces(support.namespaces),
        ],
        Err(e) => vec![Check::warn(
            "sandbox",
            format!("the tools plugin did not say what the sandbox can enforce: {e}"),
            "see the plugins above: the tools plugin runs commands and their sandbox",
        )],
    }
}

/// What the sandbox enforces at each Landlock ABI (docs/policy.md).
pub fn landlock(abi: i64) -> Check {
    if abi == 0 {
        return Check::warn(
            "sandbox",
            "no Landlock in this kernel: commands run without the OS sandbox, the policy alone applies",
            "use Linux 5.13 or later with Landlock enabled (lsm=landlock in the kernel command line)",
        );
    }
    let mut can = vec!["files (read-only, workspace-write)"];
    if abi >= 4 {
        can.push("network off");
    }
    if abi >= 6 {
        can.push("signals and abstract sockets scoped");
    }
    let text = format!("Landlock ABI {abi}: enforces {}", can.join(", "));
    if abi < 6 {
        let missing = if abi < 4 {
            "the network and signal scoping need ABI 4 and 6"
        } else {
            "signal scoping needs ABI 6"
        };
        return Check::warn(
            "sandbox",
            format!("{text}; {missing}"),
            "a newer kernel (6.12 or later) enforces all of it",
        );
    }
    Check::ok("sandbox", text)
}

fn namespaces(available: bool) -> Check {
    if available {
        return Check::ok(
            "sandbox",
            "user namespaces: paths beneath a writable directory (.git/hooks…) are kept read-only",
        );
    }
    Check::warn(
        "sandbox",
        "no user namespace could be entered: protected paths beneath a writable directory are guarded by the policy only",
        "allow unprivileged user namespaces (sysctl user.max_user_namespaces, kernel.unprivileged_userns_clone or AppArmor's kernel.apparmor_restrict_unprivileged_userns)",
    )
}

fn bash() -> Check {
    match uji_protocol::bash::path() {
        Some(path) => Check::ok("bash", format!("{} runs commands", path.display())),
        None => Check::problem(
            "bash",
            uji_protocol::bash::missing_text(),
            "install bash (`apt-get install bash`)",
        ),
    }
}

fn git() -> Check {
    match on_path("git", std::env::var_os("PATH")) {
        Some(path) => Check::ok("git", format!("{}", path.display())),
        None => Check::warn(
            "git",
            "no git on PATH: uji.pack.add cannot fetch packs, and the model cannot run git",
            "install git (`apt-get install git`)",
        ),
    }
}

/// The first executable `name` in the absolute directories of `path`.
fn on_path(name: &str, path: Option<std::ffi::OsString>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    path.iter()
        .flat_map(std::env::split_paths)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(name))
        .find(|p| executable(p))
}

/// The MCP servers: started (and waited for) unless `offline`.
fn mcp(registry: &uji_host::Registry, offline: bool) -> Vec<Check> {
    if !registry.serves(McpList::METHOD) {
        return vec![Check::warn(
            "mcp",
            "the mcp plugin is not loaded",
            "see the plugins above",
        )];
    }
    let request = McpList {
        start: !offline,
        wait_ms: if offline { Some(0) } else { None },
    };
    let servers = match registry.call(uji_host::CORE_CALLER, &request) {
        Ok(servers) => servers,
        Err(e) => {
            return vec![Check::problem(
                "mcp",
                format!("cannot list MCP servers: {e}"),
                "`uji mcp list` says more",
            )];
        }
    };
    if servers.is_empty() {
        return vec![Check::ok("mcp", "no MCP servers configured")];
    }
    servers.into_iter().map(|server| {
        let text = format!("{} ({}): {}, {} tools", server.name, server.transport, server.state.as_str(), server.tools.len());
        match (server.state, server.last_error) {
            (ServerState::Failed, error) => Check::problem("mcp", format!("{text}: {}", error.unwrap_or_default()), "fix the server's command or URL in init.lua or .mcp.json; `uji mcp list` shows its last error"),
            (ServerState::Configured, _) if offline => Check::ok("mcp", format!("{text} (not started: --offline)")),
            _ => Check::ok("mcp", text),
        }
    }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_landlock_abi_says_what_it_enforces() {
        assert_eq!(landlock(0).status, super::super::Status::Warn);
        assert!(landlock(3).text.contains("network and signal scoping need"));
        let full = landlock(6);
        assert_eq!(full.status, super::super::Status::Ok);
        assert!(full.text.contains("network off"), "{}", full.text);
    }

    #[test]
    fn git_is_found_only_in_absolute_directories() {
        assert_eq!(on_path("sh", Some("bin:.".into())), None);
        assert_eq!(on_path("sh", Some("/nonexistent-uji-dir".into())), None);
        assert!(on_path("sh", Some("/nonexistent-uji-dir:/bin".into())).is_some());
    }
}
