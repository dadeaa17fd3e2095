//! A child's exit as a descriptor to poll (Linux ≥ 5.3's pidfd), so the
//! loops that wait for a command's end wake when it ends instead of
//! sleeping and looking again. A command's output pipe reaches end-of-file
//! a moment before its shell becomes a zombie; a fixed sleep there cost up
//! to 10 ms per command (docs/benchmarks.md, `uji run` (b)).

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

/// Where the kernel has no pidfd (before 5.3, or a seccomp filter refuses
/// it): how long to sleep before looking at the child again.
pub const FALLBACK_SLEEP: Duration = Duration::from_millis(10);

/// Readable once the process has exited.
pub struct ExitFd(OwnedFd);

impl ExitFd {
    /// `None` where the kernel has no pidfd or `pid` is gone.
    pub fn open(pid: u32) -> Option<ExitFd> {
        let pid = libc::pid_t::try_from(pid).ok()?;
        // SAFETY: pidfd_open takes a pid and flags and returns a new
        // descriptor or -1; it touches no memory of ours.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        let fd = RawFd::try_from(fd).ok().filter(|&fd| fd >= 0)?;
        // SAFETY: a descriptor the kernel has just opened for us alone.
        Some(ExitFd(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    pub fn fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }

    /// Waits at most `wait` for the exit; true once it happened.
    pub fn wait(&self, wait: Duration) -> bool {
        let mut poll = libc::pollfd {
            fd: self.fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // Rounded up, so a wait of less than a millisecond is no busy loop.
        let ms = wait.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32;
        // SAFETY: one pollfd on this stack frame, for the duration of the call.
        let rc = unsafe { libc::poll(&mut poll, 1, ms) };
        rc > 0 && poll.revents != 0
    }
}

/// Waits at most `wait` for the child `pid` to exit (without reaping it):
/// on its pidfd, or a short sleep where there is none.
pub fn wait_for_exit(pid: u32, wait: Duration) {
    match ExitFd::open(pid) {
        Some(exit) => {
            exit.wait(wait);
        }
        None => std::thread::sleep(wait.min(FALLBACK_SLEEP)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;
    use std::time::Instant;

    #[test]
    fn waiting_ends_when_the_child_exits_not_at_the_timeout() {
        let mut child = Command::new("sleep").arg("0.05").spawn().expect("sleep");
        let started = Instant::now();
        wait_for_exit(child.id(), Duration::from_secs(20));
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the wait ran to its timeout"
        );
        assert!(
            child.try_wait().expect("try_wait").is_some(),
            "the child has not exited"
        );
    }

    #[test]
    fn waiting_on_a_running_child_returns_after_the_wait() {
        let mut child = Command::new("sleep").arg("30").spawn().expect("sleep");
        let exit = ExitFd::open(child.id()).expect("pidfd (Linux 5.3+)");
        assert!(!exit.wait(Duration::from_millis(20)));
        child.kill().expect("kill");
        assert!(exit.wait(Duration::from_secs(20)));
        child.wait().expect("reaped");
    }
}
