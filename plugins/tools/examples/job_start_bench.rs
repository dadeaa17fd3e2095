//! What starting a background job adds to a `run_command` call: the median
//! time of `run_in_background` calls of `echo ready; sleep 30` (returning
//! at the first line) minus that of foreground calls of `echo ready`
//! (returning when it exits), both through the tool as uji calls it. Prints
//! `name value` pairs (milliseconds) for `bench/run`.
//!
//! `cargo run --release -p uji-plugin-tools --example job_start_bench`

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use uji_plugin_tools::{RunCommand, StopJob};
use uji_sdk::testing::run_tool;

const RUNS: usize = 60;

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn timed(args: Value, cwd: &std::path::Path) -> (Duration, String) {
    let started = Instant::now();
    let output = run_tool(RunCommand, args, cwd);
    (started.elapsed(), output.text)
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path();
    let mut foreground = Vec::new();
    let mut background = Vec::new();
    for _ in 0..RUNS {
        let (time, text) = timed(json!({"command": "echo ready"}), cwd);
        assert_eq!(text, "ready");
        foreground.push(time);
        let args = json!({"command": "echo ready; sleep 30", "run_in_background": true});
        let (time, text) = timed(args, cwd);
        assert!(text.contains("Its output so far:\nready"), "{text}");
        background.push(time);
        // Stopped between measurements, so the limit of 8 is never reached.
        let id: u64 = text["Started job ".len()..]
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        run_tool(StopJob, json!({"id": id}), cwd);
    }
    let fg = median(foreground).as_secs_f64() * 1000.0;
    let bg = median(background).as_secs_f64() * 1000.0;
    println!(
        "foreground_call_ms {fg:.3} background_call_ms {bg:.3} job_start_added_ms {:.3}",
        (bg - fg).max(0.0)
    );
}
