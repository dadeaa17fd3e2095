//! The OS sandbox for `run_command`: a Landlock ruleset built in uji before
//! the fork (opening the directories, allocating), and only enforced in the
//! child between fork and exec with two async-signal-safe system calls
//! (`prctl(PR_SET_NO_NEW_PRIVS)`, `landlock_restrict_self`).
//!
//! Every mode reads and executes anywhere; `read-only` writes nowhere but
//! `/dev/null`; `workspace-write` also gets full access beneath the call's
//! writable directories. With the network off, TCP bind and connect are
//! refused (Landlock ABI 4 and later). Signals and abstract unix sockets
//! are scoped (ABI 6 and later): a command cannot signal uji, or any process
//! outside its sandbox, nor connect to their abstract sockets. What the
//! rights cannot say (read-only paths beneath a writable directory, a
//! hidden directory) is done with mounts in a namespace of the command's
//! own ([`mounts`]).

pub mod mounts;

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use landlock::{
    ABI, Access, AccessFs, AccessNet, NetPort, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetError, Scope,
};

use mounts::Mounts;
use uji_sdk::{CallSandbox, Host, LogLevel, SandboxMode};

/// The Landlock ABI whose rights uji asks for; older kernels get what they
/// support of it (best effort), newer ones this.
const TARGET: ABI = ABI::V4;

static HOST: OnceLock<Host> = OnceLock::new();
static TOLD: AtomicBool = AtomicBool::new(false);
static TOLD_NETWORK: AtomicBool = AtomicBool::new(false);
static TOLD_SCOPE: AtomicBool = AtomicBool::new(false);
static TOLD_MOUNTS: AtomicBool = AtomicBool::new(false);
/// The first Landlock ABI that restricts TCP.
const NETWORK_ABI: i64 = 4;
/// The first Landlock ABI that scopes signals and abstract sockets.
const SCOPE_ABI: i64 = 6;

/// Keeps the host to tell the user, once, when the kernel lacks Landlock.
pub fn set_host(host: &Host) {
    let _ = HOST.set(host.clone());
}

/// What the child must enforce.
pub enum Prepared {
    /// No sandbox asked for.
    None,
    /// The ruleset to enforce before exec, and the namespace to enter
    /// first when the call protects paths Landlock cannot.
    Ruleset {
        ruleset: OwnedFd,
        mounts: Option<Arc<Mounts>>,
        /// uji's proxy, the only TCP port the command may connect to.
        proxy: Option<u16>,
    },
    /// Asked for, but this kernel has no Landlock: the policy alone applies
    /// (the proxy is still named in the command's environment).
    Unsupported { proxy: Option<u16> },
}

/// The variables that send a command's HTTP(S) traffic through a proxy,
/// in the forms programs read.
const PROXY_VARS: [&str; 6] = [
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
];

impl Prepared {
    /// Points the command at uji's proxy when its network goes through
    /// it; `NO_PROXY` is dropped, so nothing is meant to go around it (a
    /// direct connect is refused anyway).
    pub fn apply_proxy(&self, cmd: &mut std::process::Command) {
        let (Prepared::Ruleset {
            proxy: Some(port), ..
        }
        | Prepared::Unsupported { proxy: Some(port) }) = self
        else {
            return;
        };
        let url = format!("http://127.0.0.1:{port}");
        for var in PROXY_VARS {
            cmd.env(var, &url);
        }
        cmd.env_remove("NO_PROXY").env_remove("no_proxy");
    }
}

/// Builds the ruleset for `spec`.
pub fn prepare(spec: Option<&CallSandbox>) -> Result<Prepared, RulesetError> {
    let Some(spec) = spec.filter(|s| s.mode != SandboxMode::Off) else {
        return Ok(Prepared::None);
    };
    let mut ruleset = Ruleset::default()
        .handle_access(AccessFs::from_all(TARGET))?
        .scope(Scope::from_all(ABI::V6))?;
    if !spec.network {
        ruleset = ruleset.handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)?;
    }
    let mut created = ruleset.create()?;
    if let Some(port) = spec.proxy.filter(|_| !spec.network) {
        created = created.add_rule(NetPort::new(port, AccessNet::ConnectTcp))?;
    }
    let read = AccessFs::from_read(TARGET);
    if let Ok(root) = PathFd::new("/") {
        created = created.add_rule(PathBeneath::new(root, read))?;
    }
    if let Ok(null) = PathFd::new("/dev/null") {
        created = created.add_rule(PathBeneath::new(null, AccessFs::from_file(TARGET)))?;
    }
    if spec.mode == SandboxMode::WorkspaceWrite {
        for dir in &spec.writable {
            // A writable directory that does not exist grants nothing.
            if let Ok(fd) = PathFd::new(dir) {
                created = created.add_rule(PathBeneath::new(fd, AccessFs::from_all(TARGET)))?;
            }
        }
    }
    let fd: Option<OwnedFd> = created.into();
    Ok(match fd {
        Some(fd) => {
            let abi = kernel_abi();
            if !spec.network && abi < NETWORK_ABI {
                tell_once(
                    &TOLD_NETWORK,
                    "this kernel's Landlock cannot restrict the network (ABI 4 or later \
                     needed): commands keep network access",
                );
            }
            if abi < SCOPE_ABI {
                tell_once(
                    &TOLD_SCOPE,
                    "this kernel's Landlock cannot scope signals (ABI 6 or later needed): \
                     a sandboxed command can still signal uji's processes",
                );
            }
            Prepared::Ruleset {
                ruleset: fd,
                mounts: namespace(spec),
                proxy: spec.proxy,
            }
        }
        None => {
            tell_once(
                &TOLD,
                "this kernel has no Landlock: commands run without the OS sandbox, \
                 with the policy alone",
            );
            Prepared::Unsupported { proxy: spec.proxy }
        }
    })
}

/// The namespace `spec` needs, when this machine has user namespaces
/// (said once when it has not: the paths are then not protected).
fn namespace(spec: &CallSandbox) -> Option<Arc<Mounts>> {
    let mounts = Mounts::plan(spec)?;
    if !mounts::available() {
        tell_once(
            &TOLD_MOUNTS,
            "user namespaces are unavailable here, so the sandbox cannot keep .git/config, \
             .git/hooks and uji's config directory read-only beneath writable directories, \
             nor hide uji's data directory: commands run with Landlock alone",
        );
        return None;
    }
    Some(Arc::new(mounts))
}

impl Prepared {
    /// What the child started in `cwd` does before exec, or `None`.
    pub fn enter(&self, cwd: &std::path::Path) -> Option<Enter> {
        use std::os::unix::ffi::OsStrExt;
        match self {
            Prepared::Ruleset {
                ruleset, mounts, ..
            } => Some(Enter {
                ruleset: ruleset.as_raw_fd(),
                mounts: mounts.clone(),
                cwd: std::ffi::CString::new(cwd.as_os_str().as_bytes()).ok(),
            }),
            Prepared::None | Prepared::Unsupported { .. } => None,
        }
    }
}

/// The sandbox as the child enters it; the ruleset fd stays owned by the
/// [`Prepared`] the caller holds through the spawn.
#[derive(Clone)]
pub struct Enter {
    ruleset: RawFd,
    mounts: Option<Arc<Mounts>>,
    cwd: Option<std::ffi::CString>,
}

impl Enter {
    /// Makes the mounts, then enforces the ruleset (after which no mount
    /// can change). Only async-signal-safe system calls: this runs between
    /// fork and exec.
    pub fn apply(&self) -> std::io::Result<()> {
        if let Some(mounts) = &self.mounts {
            mounts.enter()?;
            // The working directory was entered before the mounts: it still
            // names the directory beneath them, where `.git/hooks` is not
            // covered. Entered again by its path, it is the one on top.
            if let Some(cwd) = &self.cwd {
                // SAFETY: chdir on a valid C string.
                if unsafe { libc::chdir(cwd.as_ptr()) } != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
        }
        restrict(self.ruleset)
    }
}

/// What this machine lets the sandbox enforce (the `sandbox.support`
/// service). Entering a namespace is tried once, in a forked child.
pub fn support() -> uji_sdk::protocol::services::SandboxCapabilities {
    uji_sdk::protocol::services::SandboxCapabilities {
        landlock_abi: kernel_abi(),
        namespaces: mounts::available(),
    }
}

/// The kernel's Landlock ABI version (0 without Landlock).
pub fn kernel_abi() -> i64 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: the documented version query: no attributes, size 0.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    abi.max(0)
}

fn tell_once(told: &AtomicBool, text: &str) {
    if told.swap(true, Ordering::Relaxed) {
        return;
    }
    if let Some(host) = HOST.get() {
        host.notify(text);
        host.log(LogLevel::Warn, text);
    }
}

/// Enforces the ruleset on the calling process. Only async-signal-safe
/// system calls: this runs between fork and exec.
pub fn restrict(ruleset: RawFd) -> std::io::Result<()> {
    // SAFETY: prctl(PR_SET_NO_NEW_PRIVS) only sets a flag on this process;
    // Landlock requires it of an unprivileged process.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: a ruleset fd this process owns; flags 0.
    if unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
