//! What the sandbox adds to a `run_command` call: building the Landlock
//! ruleset and the mount plan in uji, and in the child entering the user
//! and mount namespace (read-only `.git/config`, `.git/hooks` and config
//! directory beneath the writable workspace, the data directory hidden)
//! and enforcing the ruleset before exec. Prints the medians over many
//! runs of spawning `/bin/true` with and without it, as `name value` pairs
//! (milliseconds) for `bench/run`.
//!
//! `cargo run --release -p uji-plugin-tools --example sandbox_setup`

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use uji_plugin_tools::sandbox::{self, Enter, Prepared};
use uji_sdk::{CallSandbox, SandboxMode};

const RUNS: usize = 300;

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn spawn_true(enter: Option<Enter>, cwd: &Path) {
    let mut cmd = Command::new("/bin/true");
    cmd.current_dir(cwd);
    // SAFETY: only async-signal-safe system calls run in the child.
    unsafe {
        cmd.pre_exec(move || match &enter {
            Some(enter) => enter.apply(),
            None => Ok(()),
        });
    }
    assert!(cmd.status().expect("spawn").success());
}

/// A workspace with a `.git`, a config and a data directory beneath it,
/// as in a run whose temporary directory holds them all.
fn layout() -> (tempfile_dir::Dir, CallSandbox) {
    let dir = tempfile_dir::Dir::new();
    let work = dir.0.join("work");
    std::fs::create_dir_all(work.join(".git/hooks")).unwrap();
    std::fs::write(work.join(".git/config"), "[core]\n").unwrap();
    for sub in ["config", "data"] {
        std::fs::create_dir_all(dir.0.join(sub)).unwrap();
    }
    let path = |p: &Path| p.to_string_lossy().into_owned();
    let spec = CallSandbox {
        mode: SandboxMode::WorkspaceWrite,
        network: false,
        proxy: None,
        hosts: Vec::new(),
        writable: vec![path(&work), path(&dir.0)],
        read_only: vec![
            path(&work.join(".git/config")),
            path(&work.join(".git/hooks")),
            path(&dir.0.join("config")),
        ],
        hidden: vec![path(&dir.0.join("data"))],
    };
    (dir, spec)
}

/// A directory removed at the end.
mod tempfile_dir {
    pub struct Dir(pub std::path::PathBuf);
    impl Dir {
        pub fn new() -> Dir {
            let dir =
                std::env::temp_dir().join(format!("uji-sandbox-bench-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            Dir(dir.canonicalize().unwrap())
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn main() {
    let (dir, spec) = layout();
    let cwd = dir.0.join("work");
    let mut prepare = Vec::new();
    let mut with = Vec::new();
    let mut without = Vec::new();
    let mut mounted = false;
    let landlock_only = CallSandbox {
        read_only: Vec::new(),
        hidden: Vec::new(),
        ..spec.clone()
    };
    let mut landlock = Vec::new();
    for _ in 0..RUNS {
        let only = sandbox::prepare(Some(&landlock_only)).expect("ruleset");
        let started = Instant::now();
        spawn_true(only.enter(&cwd), &cwd);
        landlock.push(started.elapsed());
        let started = Instant::now();
        let prepared = sandbox::prepare(Some(&spec)).expect("ruleset");
        prepare.push(started.elapsed());
        if let Prepared::Ruleset { mounts, .. } = &prepared {
            mounted = mounts.is_some();
        } else {
            println!("landlock_missing 1 sandbox_setup_ms NaN");
            return;
        }
        let started = Instant::now();
        spawn_true(prepared.enter(&cwd), &cwd);
        with.push(started.elapsed());
        let started = Instant::now();
        spawn_true(None, &cwd);
        without.push(started.elapsed());
    }
    let (prepare, with, without) = (median(prepare), median(with), median(without));
    let landlock = median(landlock);
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let added = prepare + with.saturating_sub(without);
    println!(
        "namespace {} ruleset_ms {:.4} spawn_landlock_only_ms {:.4} spawn_sandboxed_ms {:.4} \
         spawn_plain_ms {:.4} sandbox_setup_ms {:.4}",
        u8::from(mounted),
        ms(prepare),
        ms(landlock),
        ms(with),
        ms(without),
        ms(added)
    );
}
