//! Wall time, CPU time and peak RSS of one child process.
//!
//! The child is not spawned by the bench itself but by a fresh, small copy of
//! the bench binary (`uji-bench --spawn-measured`) that waits for it with
//! wait4 and reports its rusage. Linux carries a process's peak RSS across
//! exec (the mm it replaces counts), and a child forked from this bench starts
//! with the bench's own memory: after the TUI frames area the bench holds
//! gigabytes, which a direct child's `ru_maxrss` then reported as uji's. A
//! freshly started helper is a few MB, under any uji process measured.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The flag that makes `uji-bench` the measuring helper.
pub const SPAWN_MEASURED: &str = "--spawn-measured";

/// What one run of a child process cost.
pub struct Run {
    pub wall: Duration,
    /// User plus system CPU time of the child.
    pub cpu: Duration,
    pub peak_rss_kb: u64,
    pub stdout: Vec<u8>,
    pub success: bool,
}

/// Runs `cmd` (built by [`crate::uji`], so its environment is cleared and
/// set in full) to completion with stdin from /dev/null.
pub fn measure(cmd: &mut Command) -> Run {
    measure_with_stdin(cmd, Stdio::null())
}

/// [`measure`] with the child's stdin given.
pub fn measure_with_stdin(cmd: &mut Command, stdin: Stdio) -> Run {
    let report = tempfile::NamedTempFile::new().expect("report file");
    let mut helper = Command::new(std::env::current_exe().expect("current_exe"));
    helper
        .arg(SPAWN_MEASURED)
        .arg(report.path())
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .env_clear();
    for (key, value) in cmd.get_envs() {
        if let Some(value) = value {
            helper.env(key, value);
        }
    }
    if let Some(dir) = cmd.get_current_dir() {
        helper.current_dir(dir);
    }
    let mut child = helper
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the measuring helper");
    let mut stdout = Vec::new();
    if let Some(mut out) = child.stdout.take() {
        let _ = out.read_to_end(&mut stdout);
    }
    let helped = child.wait().expect("wait for the measuring helper");
    assert!(helped.success(), "the measuring helper failed: {helped}");
    let numbers = std::fs::read_to_string(report.path()).expect("read the helper's report");
    let field = |i: usize| -> u64 {
        numbers
            .split_whitespace()
            .nth(i)
            .and_then(|n| n.parse().ok())
            .expect("a number in the helper's report")
    };
    Run {
        wall: Duration::from_nanos(field(0)),
        cpu: Duration::from_micros(field(1)),
        peak_rss_kb: field(2),
        stdout,
        success: field(3) == 1,
    }
}

/// The helper's side: spawns `program args` with this process's environment,
/// directory and stdio, waits for it with wait4 and writes
/// `wall_ns cpu_us maxrss_kb success` to `report`.
pub fn spawn_measured(report: &Path, program: &str, args: &[String]) {
    let started = Instant::now();
    // Reaped with wait4 below (to read its rusage), not Child::wait.
    #[allow(clippy::zombie_processes)]
    let child = Command::new(program)
        .args(args)
        .spawn()
        .expect("spawn benchmark child");
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: rusage is plain old data; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is our child, not yet reaped (std's Child is never waited).
    let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let wall = started.elapsed();
    assert!(rc == pid, "wait4 failed for the benchmark child");
    let micros = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    let success = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    let line = format!(
        "{} {} {} {}\n",
        wall.as_nanos(),
        micros(usage.ru_utime) + micros(usage.ru_stime),
        // Linux reports ru_maxrss in kilobytes.
        usage.ru_maxrss,
        u8::from(success)
    );
    std::fs::write(report, line).expect("write the report");
}
