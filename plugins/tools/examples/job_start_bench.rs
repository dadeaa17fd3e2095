//! What starting a background job adds to a `run_command` call: the median
//! time of `run_in_background` calls of `echo ready; sleep 30` through the
//! tool as uji calls it (each returns at the command's first line) minus
//! the median time a foreground call of the same command takes to show its
//! first line (as progress): the same start, sandbox set-up and read, so
//! the difference is what the job adds (its thread, its captures, the
//! result). For scale it also prints a plain `sh -c` start to the first
//! line. Prints `name value` pairs (milliseconds) for `bench/run`.
//!
//! `cargo run --release -p uji-plugin-tools --example job_start_bench`

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use std::sync::Arc;

use serde_json::{Value, json};
use uji_plugin_tools::{Jobs, RunCommand, StopJob};
use uji_sdk::testing::{TestCall, run_tool};

/// One jobs table for this file, as the plugin has one for its session.
fn jobs() -> &'static Jobs {
    static JOBS: std::sync::OnceLock<Jobs> = std::sync::OnceLock::new();
    JOBS.get_or_init(Jobs::default)
}

fn run_command() -> RunCommand {
    RunCommand::new(jobs())
}

fn stop_job() -> StopJob {
    StopJob::new(jobs())
}

const RUNS: usize = 60;

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn timed(args: Value, cwd: &std::path::Path) -> (Duration, String) {
    let started = Instant::now();
    let output = run_tool(run_command(), args, cwd);
    (started.elapsed(), output.text)
}

/// A plain `sh -c` of the same command, to its first line.
fn plain_first_line() -> Duration {
    let started = Instant::now();
    let mut child = Command::new("/bin/sh")
        .args(["-c", "echo ready; sleep 30"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let took = started.elapsed();
    assert_eq!(line, "ready\n");
    child.kill().unwrap();
    child.wait().unwrap();
    took
}

/// A foreground call of the same command, to its first progress line;
/// then it is interrupted.
fn foreground_first_line(cwd: &std::path::Path) -> Duration {
    let started = Instant::now();
    let call = TestCall::start(
        Arc::new(run_command()),
        json!({"command": "echo ready; sleep 30"}),
        cwd,
    );
    while !call.progress_lines().iter().any(|l| l == "ready") {
        std::thread::sleep(Duration::from_micros(50));
    }
    let took = started.elapsed();
    call.cancel();
    call.wait(Duration::from_secs(10)).unwrap();
    took
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path();
    let mut foreground = Vec::new();
    let mut background = Vec::new();
    let mut plain = Vec::new();
    for _ in 0..RUNS {
        plain.push(plain_first_line());
        foreground.push(foreground_first_line(cwd));
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
        run_tool(stop_job(), json!({"id": id}), cwd);
    }
    // The fastest runs too: on a loaded machine noise only adds.
    let fastest = |times: &[Duration]| times.iter().min().unwrap().as_secs_f64() * 1000.0;
    let added_fastest = fastest(&background) - fastest(&foreground);
    let ms = |times| median(times).as_secs_f64() * 1000.0;
    let (fg, bg, plain) = (ms(foreground), ms(background), ms(plain));
    println!(
        "plain_first_line_ms {plain:.3} foreground_first_line_ms {fg:.3} \
         background_call_ms {bg:.3} job_start_added_ms {:.3} \
         job_start_added_fastest_ms {added_fastest:.3}",
        bg - fg
    );
}
