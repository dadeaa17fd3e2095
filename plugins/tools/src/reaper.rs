//! Finding and killing every process a command started, including those
//! that left its process group with `setsid`.
//!
//! Why a subreaper and not a cgroup: a cgroup v2 needs a delegated,
//! writable hierarchy, which many machines (containers, hybrid cgroup
//! set-ups, no systemd user session) do not give an unprivileged user, so it
//! cannot be the only mechanism; `PR_SET_CHILD_SUBREAPER` works everywhere
//! on Linux ≥ 3.4 with no privilege. uji becomes a child subreaper the first
//! time a command runs, so a process whose parent exits is re-parented to uji
//! instead of to init, and stays findable. Each command's environment gets
//! `UJI_COMMAND_ID=<id>`, which tells this command's re-parented orphans from
//! uji's other children. The tree is then: the command's `sh`, uji's
//! children that carry the id, and every descendant of either (by the parent
//! pid in `/proc/<pid>/stat`). Killing stops every process in it first
//! (SIGSTOP, so nothing forks while the rest are killed), then SIGKILLs
//! them, and repeats until nothing is left.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;

use libc::pid_t;

/// The environment variable that marks a command's processes.
pub const MARK_VAR: &str = "UJI_COMMAND_ID";

/// Rounds of find-and-kill before giving up on a tree that keeps growing.
const MAX_ROUNDS: usize = 16;

static COUNTER: AtomicUsize = AtomicUsize::new(0);
static SUBREAPER: OnceLock<bool> = OnceLock::new();
/// Orphans re-parented to uji: reaped when they exit so none stays a zombie.
static ADOPTED: Mutex<Vec<pid_t>> = Mutex::new(Vec::new());

/// Makes uji a child subreaper, once; false when the kernel refused.
pub fn become_subreaper() -> bool {
    *SUBREAPER.get_or_init(|| {
        // SAFETY: prctl with PR_SET_CHILD_SUBREAPER only sets a flag on this process.
        unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0 }
    })
}

/// A fresh id for one command's `UJI_COMMAND_ID`.
pub fn new_mark() -> String {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{}-{n}", std::process::id())
}

/// Every process as (pid, parent pid).
fn processes() -> Vec<(pid_t, pid_t)> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|entry| {
            let pid: pid_t = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // The name may hold spaces and parentheses: fields start after the last ')'.
            let rest = &stat[stat.rfind(')')? + 1..];
            let mut fields = rest.split_whitespace();
            let state = fields.next()?;
            let ppid = fields.next()?.parse().ok()?;
            (state != "Z").then_some((pid, ppid))
        })
        .collect()
}

fn has_mark(pid: pid_t, mark: &str) -> bool {
    let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
        return false;
    };
    let wanted = format!("{MARK_VAR}={mark}");
    environ.split(|&b| b == 0).any(|v| v == wanted.as_bytes())
}

/// The command's live processes: `root`, uji's children marked with `mark`,
/// and their descendants. Marked children of uji are remembered for reaping.
fn tree(root: pid_t, mark: &str) -> HashSet<pid_t> {
    let me = std::process::id() as pid_t;
    let procs = processes();
    let mut children: HashMap<pid_t, Vec<pid_t>> = HashMap::new();
    for &(pid, ppid) in &procs {
        children.entry(ppid).or_default().push(pid);
    }
    let mut seeds: Vec<pid_t> = Vec::new();
    if procs.iter().any(|&(pid, _)| pid == root) {
        seeds.push(root);
    }
    let orphans: Vec<pid_t> = children
        .get(&me)
        .into_iter()
        .flatten()
        .copied()
        .filter(|&pid| pid != root && has_mark(pid, mark))
        .collect();
    adopt(&orphans);
    seeds.extend(orphans);
    let mut found = HashSet::new();
    while let Some(pid) = seeds.pop() {
        if pid > 1 && pid != me && found.insert(pid) {
            seeds.extend(children.get(&pid).into_iter().flatten().copied());
        }
    }
    found
}

fn adopt(pids: &[pid_t]) {
    let mut adopted = ADOPTED.lock();
    for &pid in pids {
        if !adopted.contains(&pid) {
            adopted.push(pid);
        }
    }
}

/// Kills `root`'s whole tree, including children that called `setsid`.
pub fn kill_tree(root: pid_t, mark: &str) {
    for _ in 0..MAX_ROUNDS {
        let found = tree(root, mark);
        if found.is_empty() {
            break;
        }
        for &pid in &found {
            // SAFETY: kill only sends a signal; a gone pid fails with ESRCH.
            unsafe { libc::kill(pid, libc::SIGSTOP) };
        }
        for &pid in &found {
            // SAFETY: as above.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    reap_adopted();
}

/// Remembers the command's orphans that outlive it (background servers), so
/// they are reaped once they exit.
pub fn note_survivors(root: pid_t, mark: &str) {
    // Orphans are re-parented to uji, so uji's own children are enough:
    // no walk through every process of the machine after each command.
    let Some(children) = own_children() else {
        tree(root, mark);
        return;
    };
    let orphans: Vec<pid_t> = children
        .into_iter()
        .filter(|&pid| pid != root && has_mark(pid, mark))
        .collect();
    adopt(&orphans);
}

/// uji's children (those of every thread), from
/// `/proc/self/task/*/children`; `None` where the kernel does not list
/// them (built without `CONFIG_PROC_CHILDREN`).
fn own_children() -> Option<Vec<pid_t>> {
    let mut children = Vec::new();
    for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let Ok(list) = std::fs::read_to_string(task.path().join("children")) else {
            // A thread that ended meanwhile has no file; a kernel without
            // the file has none for any thread.
            if task.path().exists() {
                return None;
            }
            continue;
        };
        children.extend(
            list.split_whitespace()
                .filter_map(|pid| pid.parse::<pid_t>().ok()),
        );
    }
    Some(children)
}

/// Reaps adopted orphans that have exited; keeps the others for later.
pub fn reap_adopted() {
    ADOPTED.lock().retain(|&pid| {
        let mut status = 0;
        // SAFETY: waitpid on a pid this process adopted; WNOHANG never blocks.
        let rc = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        rc == 0
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;
    use std::time::{Duration, Instant};

    fn gone(pid: pid_t) -> bool {
        !std::path::Path::new(&format!("/proc/{pid}")).exists()
    }

    #[test]
    fn an_orphan_that_outlives_its_command_is_remembered_and_reaped_once_it_exits() {
        assert!(
            become_subreaper(),
            "the kernel refused PR_SET_CHILD_SUBREAPER"
        );
        let mark = new_mark();
        let sh = Command::new("sh")
            .args(["-c", "sleep 0.4 > /dev/null & echo $!"])
            .env(MARK_VAR, &mark)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("sh");
        let root = sh.id() as pid_t;
        let out = sh.wait_with_output().expect("sh's output");
        let orphan: pid_t = String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .expect("the background pid");
        // The orphan is now uji's (this test's) child.
        note_survivors(root, &mark);
        assert!(ADOPTED.lock().contains(&orphan), "the orphan was not noted");
        let deadline = Instant::now() + Duration::from_secs(20);
        while ADOPTED.lock().contains(&orphan) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
            reap_adopted();
        }
        assert!(
            !ADOPTED.lock().contains(&orphan),
            "the orphan was never reaped"
        );
        assert!(gone(orphan), "the orphan is still in /proc (a zombie)");
    }

    #[test]
    fn own_children_lists_a_child_of_any_thread() {
        let mut child =
            std::thread::spawn(|| Command::new("sleep").arg("5").spawn().expect("sleep"))
                .join()
                .expect("thread");
        let pid = child.id() as pid_t;
        let children = own_children().expect("/proc/self/task/*/children");
        child.kill().expect("kill");
        child.wait().expect("reap");
        assert!(children.contains(&pid), "{pid} not in {children:?}");
    }
}
