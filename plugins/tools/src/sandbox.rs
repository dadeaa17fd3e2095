//! The OS sandbox for `run_command`: a Landlock ruleset built in uji before
//! the fork (opening the directories, allocating), and only enforced in the
//! child between fork and exec with two async-signal-safe system calls
//! (`prctl(PR_SET_NO_NEW_PRIVS)`, `landlock_restrict_self`).
//!
//! Every mode reads and executes anywhere; `read-only` writes nowhere but
//! `/dev/null`; `workspace-write` also gets full access beneath the call's
//! writable directories. With the network off, TCP bind and connect are
//! refused (Landlock ABI 4 and later).

use std::os::fd::{OwnedFd, RawFd};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use landlock::{
    ABI, Access, AccessFs, AccessNet, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetError,
};
use uji_sdk::{CallSandbox, Host, LogLevel, SandboxMode};

/// The Landlock ABI whose rights uji asks for; older kernels get what they
/// support of it (best effort), newer ones this.
const TARGET: ABI = ABI::V4;

static HOST: OnceLock<Host> = OnceLock::new();
static TOLD: AtomicBool = AtomicBool::new(false);
static TOLD_NETWORK: AtomicBool = AtomicBool::new(false);
/// The first Landlock ABI that restricts TCP.
const NETWORK_ABI: i64 = 4;

/// Keeps the host to tell the user, once, when the kernel lacks Landlock.
pub fn set_host(host: &Host) {
    let _ = HOST.set(host.clone());
}

/// What the child must enforce.
pub enum Prepared {
    /// No sandbox asked for.
    None,
    /// The ruleset to enforce before exec.
    Ruleset(OwnedFd),
    /// Asked for, but this kernel has no Landlock: the policy alone applies.
    Unsupported,
}

/// Builds the ruleset for `spec`.
pub fn prepare(spec: Option<&CallSandbox>) -> Result<Prepared, RulesetError> {
    let Some(spec) = spec.filter(|s| s.mode != SandboxMode::Off) else {
        return Ok(Prepared::None);
    };
    let mut ruleset = Ruleset::default().handle_access(AccessFs::from_all(TARGET))?;
    if !spec.network {
        ruleset = ruleset.handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)?;
    }
    let mut created = ruleset.create()?;
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
            if !spec.network && kernel_abi() < NETWORK_ABI {
                tell_once(
                    &TOLD_NETWORK,
                    "this kernel's Landlock cannot restrict the network (ABI 4 or later \
                     needed): commands keep network access",
                );
            }
            Prepared::Ruleset(fd)
        }
        None => {
            tell_once(
                &TOLD,
                "this kernel has no Landlock: commands run without the OS sandbox, \
                 with the policy alone",
            );
            Prepared::Unsupported
        }
    })
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
