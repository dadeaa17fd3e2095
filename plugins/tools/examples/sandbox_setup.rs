//! What the Landlock sandbox adds to a `run_command` call: building the
//! ruleset in uji, and enforcing it in the child before exec. Prints the
//! medians over many runs of spawning `/bin/true` with and without it, as
//! `name value` pairs (milliseconds) for `bench/run`.
//!
//! `cargo run --release -p uji-plugin-tools --example sandbox_setup`

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::{Duration, Instant};

use uji_plugin_tools::sandbox::{self, Prepared};
use uji_sdk::{CallSandbox, SandboxMode};

const RUNS: usize = 300;

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn spawn_true(ruleset: Option<i32>) {
    let mut cmd = Command::new("/bin/true");
    // SAFETY: only async-signal-safe system calls run in the child.
    unsafe {
        cmd.pre_exec(move || match ruleset {
            Some(fd) => sandbox::restrict(fd),
            None => Ok(()),
        });
    }
    assert!(cmd.status().expect("spawn").success());
}

fn main() {
    let cwd = std::env::current_dir().unwrap();
    let spec = CallSandbox {
        mode: SandboxMode::WorkspaceWrite,
        network: false,
        writable: vec![
            cwd.to_string_lossy().into_owned(),
            std::env::temp_dir().to_string_lossy().into_owned(),
        ],
        read_only: Vec::new(),
        hidden: Vec::new(),
    };
    let mut prepare = Vec::new();
    let mut with = Vec::new();
    let mut without = Vec::new();
    for _ in 0..RUNS {
        let started = Instant::now();
        let prepared = sandbox::prepare(Some(&spec)).expect("ruleset");
        prepare.push(started.elapsed());
        let Prepared::Ruleset { ruleset: fd, .. } = prepared else {
            println!("landlock_missing 1 sandbox_setup_ms NaN");
            return;
        };
        let started = Instant::now();
        spawn_true(Some(fd.as_raw_fd()));
        with.push(started.elapsed());
        let started = Instant::now();
        spawn_true(None);
        without.push(started.elapsed());
    }
    let (prepare, with, without) = (median(prepare), median(with), median(without));
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let added = prepare + with.saturating_sub(without);
    println!(
        "ruleset_ms {:.4} spawn_sandboxed_ms {:.4} spawn_plain_ms {:.4} sandbox_setup_ms {:.4}",
        ms(prepare),
        ms(with),
        ms(without),
        ms(added)
    );
}
