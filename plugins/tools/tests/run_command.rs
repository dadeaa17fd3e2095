//! Tests of `run_command`. Helpers outside `#[test]` functions may unwrap too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use serde_json::json;
use uji_plugin_tools::{JobOutput, Jobs, RunCommand, StopJob};
use uji_sdk::testing::TestCall;
use uji_sdk::{DeclaredPolicy, SubjectKind, Tool, ToolOutput};

/// One jobs table for this file, as the plugin has one for its session.
fn jobs() -> &'static Jobs {
    static JOBS: std::sync::OnceLock<Jobs> = std::sync::OnceLock::new();
    JOBS.get_or_init(Jobs::default)
}

fn run_command() -> RunCommand {
    RunCommand::new(jobs())
}

fn job_output() -> JobOutput {
    JobOutput::new(jobs())
}

fn stop_job() -> StopJob {
    StopJob::new(jobs())
}

fn sh(dir: &Path, command: &str) -> ToolOutput {
    run(run_command(), json!({"command": command}), dir)
}

fn sh_timeout(dir: &Path, command: &str, timeout: u64) -> ToolOutput {
    run(
        run_command(),
        json!({"command": command, "timeout": timeout}),
        dir,
    )
}

/// The spill file named in a truncation note; removed by the caller.
fn spill_path(text: &str) -> PathBuf {
    let start = text.find("Full output: ").expect("no spill file named") + "Full output: ".len();
    let end = text[start..].find(']').unwrap() + start;
    PathBuf::from(&text[start..end])
}

/// True once the process is gone (or a zombie nobody has reaped yet).
fn process_gone(pid: &str) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

fn wait_for(mut condition: impl FnMut() -> bool, limit: Duration) -> bool {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if condition() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    condition()
}

#[test]
fn spec_declares_policy_subject_and_display() {
    let spec = run_command().spec();
    assert_eq!(spec.name, "run_command");
    assert_eq!(spec.policy, Some(DeclaredPolicy::Ask));
    assert_eq!(spec.subject, SubjectKind::Command);
    assert_eq!(spec.display.verb.as_deref(), Some("Shell"));
    assert_eq!(spec.display.question.as_deref(), Some("Run this command?"));
    assert_eq!(spec.parameters["required"], json!(["command"]));
    assert_eq!(spec.parameters["properties"]["timeout"]["type"], "integer");
}

#[test]
fn subject_is_the_command_line_or_the_tool_name() {
    assert_eq!(
        run_command().subject(&json!({"command": "git status && ls"})),
        "git status && ls"
    );
    assert_eq!(run_command().subject(&json!({})), "run_command");
    assert_eq!(
        run_command().subject(&json!({"command": false})),
        "run_command"
    );
}

#[test]
fn output_and_summary() {
    let dir = tmp();
    let out = sh(dir.path(), "echo hello");
    assert_eq!(out.text, "hello");
    assert!(!out.is_error);
    let summary = out.summary.unwrap();
    assert!(summary.starts_with("1 line, exit code 0, "), "{summary}");
}

#[test]
fn stdout_and_stderr_are_merged_in_order() {
    let dir = tmp();
    let out = sh(
        dir.path(),
        "echo a; echo b >&2; echo c; echo d >&2; printf e; printf 'f\\n' >&2",
    );
    assert_eq!(out.text, "a\nb\nc\nd\nef");
}

#[test]
fn non_zero_exit_code_ends_the_output_and_fails_the_call() {
    let dir = tmp();
    let out = sh(dir.path(), "echo out; echo err >&2; exit 3");
    assert_eq!(out.text, "out\nerr\n(exit code 3)");
    assert!(out.is_error);
    assert_eq!(out.error_kind, None);
    assert!(out.summary.unwrap().contains("exit code 3"));
    let out = sh(dir.path(), "exit 2");
    assert_eq!(out.text, "(exit code 2)");
    assert!(!sh(dir.path(), "exit 0").is_error);
}

#[test]
fn no_output() {
    let dir = tmp();
    assert_eq!(sh(dir.path(), "true").text, "(no output, exit code 0)");
    // Blank lines are no output either.
    assert_eq!(
        sh(dir.path(), "echo; echo '   '").text,
        "(no output, exit code 0)"
    );
}

#[test]
fn killed_by_a_signal() {
    let dir = tmp();
    let out = sh(dir.path(), "echo before; kill -9 $$");
    assert_eq!(out.text, "before\n(killed by signal 9)");
}

#[test]
fn crlf_and_invalid_utf8_output() {
    let dir = tmp();
    assert_eq!(sh(dir.path(), "printf 'a\\r\\nb\\r\\n'").text, "a\nb");
    assert_eq!(sh(dir.path(), "printf 'caf\\351\\n'").text, "caf\u{fffd}");
}

#[test]
fn stdin_is_closed_and_there_is_no_terminal() {
    let dir = tmp();
    let started = Instant::now();
    assert_eq!(sh(dir.path(), "cat").text, "(no output, exit code 0)");
    assert_eq!(sh(dir.path(), "read x; echo \"got:$x:$?\"").text, "got::1");
    assert!(started.elapsed() < Duration::from_secs(5));
    // No controlling terminal: /dev/tty cannot be opened, so prompts fail.
    let out = sh(
        dir.path(),
        "if (exec 3</dev/tty) 2>/dev/null; then echo tty; else echo none; fi",
    );
    assert_eq!(out.text, "none");
}

#[test]
fn runs_in_the_call_directory() {
    let dir = tmp();
    fs::create_dir(dir.path().join("sub")).unwrap();
    let out = sh(&dir.path().join("sub"), "pwd -P");
    let expected = fs::canonicalize(dir.path().join("sub")).unwrap();
    assert_eq!(out.text, expected.to_str().unwrap());
    let out = sh(dir.path(), "echo hi > made.txt");
    assert_eq!(out.text, "(no output, exit code 0)");
    assert_eq!(read(dir.path(), "made.txt"), "hi\n");
}

#[test]
fn a_missing_working_directory_is_an_error() {
    let dir = tmp();
    let gone = dir.path().join("gone");
    let out = sh(&gone, "echo hi");
    assert_eq!(
        out.text,
        format!(
            "error: the working directory {} does not exist",
            gone.display()
        )
    );
    assert!(out.is_error);
}

#[test]
fn progress_gets_each_line_cut_to_1000_bytes() {
    let dir = tmp();
    let call = TestCall::start(
        Arc::new(run_command()),
        json!({"command": "echo one; echo two >&2; head -c 3000 /dev/zero | tr '\\0' p; echo; printf last"}),
        dir.path(),
    );
    let out = call.wait(Duration::from_secs(10)).unwrap().output();
    assert!(out.text.starts_with("one\ntwo\nppp"));
    let progress = call.progress_lines();
    assert_eq!(progress.len(), 4, "{progress:?}");
    assert_eq!(progress[0], "one");
    assert_eq!(progress[1], "two");
    assert_eq!(progress[2], "p".repeat(1000));
    assert_eq!(progress[3], "last");
}

/// The job number in a "…it goes on as job N in the background" result.
fn moved_job(text: &str) -> u64 {
    let at = text.find("it goes on as job ").expect("not moved") + "it goes on as job ".len();
    text[at..].split(' ').next().unwrap().parse().unwrap()
}

#[test]
fn at_its_timeout_a_command_moves_to_the_background_and_stop_job_kills_its_tree() {
    let dir = tmp();
    let started = Instant::now();
    let out = sh_timeout(
        dir.path(),
        "sleep 30 & echo $! > bg.pid; echo started; sleep 30",
        1,
    );
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(
        out.text
            .starts_with("started\n\n[It was still running at its 1s timeout: it goes on as job "),
        "{}",
        out.text
    );
    assert!(!out.is_error);
    let id = moved_job(&out.text);
    assert_eq!(
        out.summary,
        Some(format!("Moved to the background as job {id}"))
    );
    let pid = read(dir.path(), "bg.pid");
    let pid = pid.trim();
    assert!(!process_gone(pid), "the job runs on");
    let stopped = run(stop_job(), json!({"id": id}), dir.path());
    assert!(
        stopped
            .text
            .contains(&format!("job {id} stopped by the model after")),
        "{}",
        stopped.text
    );
    assert!(
        wait_for(|| process_gone(pid), Duration::from_secs(3)),
        "background child {pid} survived stop_job"
    );
}

#[test]
fn a_command_that_only_sleeps_is_killed_at_its_timeout() {
    let dir = tmp();
    let out = sh_timeout(dir.path(), "sleep 30", 1);
    assert_eq!(out.text, "error: command timed out after 1s");
    assert!(out.is_error);
    assert_eq!(out.summary.as_deref(), Some("Timed out after 1s"));
}

#[test]
fn a_background_process_holding_the_output_goes_on_as_a_job_at_the_timeout() {
    let dir = tmp();
    let out = sh_timeout(dir.path(), "sleep 30 & echo $! > bg.pid; echo started", 1);
    let id = moved_job(&out.text);
    let read_back = run(job_output(), json!({"id": id}), dir.path());
    assert!(
        read_back
            .text
            .starts_with(&format!("(no new output)\njob {id} is running")),
        "{}",
        read_back.text
    );
    run(stop_job(), json!({"id": id}), dir.path());
    let pid = read(dir.path(), "bg.pid");
    assert!(wait_for(
        || process_gone(pid.trim()),
        Duration::from_secs(3)
    ));
}

#[test]
fn a_background_process_with_redirected_output_does_not_hold_the_call() {
    let dir = tmp();
    let started = Instant::now();
    let out = sh(
        dir.path(),
        "sleep 2 > /dev/null 2>&1 & echo $! > bg.pid; echo started",
    );
    assert_eq!(out.text, "started");
    assert!(started.elapsed() < Duration::from_millis(1500));
    // It keeps running after the call.
    let pid = read(dir.path(), "bg.pid");
    assert!(!process_gone(pid.trim()));
}

#[test]
fn cancellation_returns_promptly_and_kills_the_command() {
    let dir = tmp();
    let call = TestCall::start(
        Arc::new(run_command()),
        json!({"command": "echo $$ > sh.pid; echo started; sleep 30"}),
        dir.path(),
    );
    assert!(wait_for(
        || call.progress_lines().iter().any(|l| l == "started"),
        Duration::from_secs(5)
    ));
    let cancelled = Instant::now();
    call.cancel();
    let out = call.wait(Duration::from_secs(5)).unwrap().output();
    assert!(cancelled.elapsed() < Duration::from_secs(2));
    assert_eq!(
        out.text,
        "started\nerror: interrupted by the user while this tool ran"
    );
    assert!(out.is_error);
    let pid = read(dir.path(), "sh.pid");
    assert!(wait_for(
        || process_gone(pid.trim()),
        Duration::from_secs(3)
    ));
}

#[test]
fn long_output_keeps_the_last_2000_lines_and_spills_the_rest() {
    let dir = tmp();
    let out = sh(dir.path(), "seq 1 5000");
    let shown: String = (3001..=5000)
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join("\n");
    let spill = spill_path(&out.text);
    assert_eq!(
        out.text,
        format!(
            "{shown}\n\n[Showing lines 3001-5000 of 5000. Full output: {}]",
            spill.display()
        )
    );
    let name = spill.file_name().unwrap().to_str().unwrap();
    assert!(name.starts_with(&format!("uji-output-{}-", std::process::id())));
    assert!(name.ends_with(".log"));
    assert_eq!(spill.parent().unwrap(), std::env::temp_dir());
    let full: String = (1..=5000).map(|n| format!("{n}\n")).collect();
    assert_eq!(fs::read_to_string(&spill).unwrap(), full);
    assert_eq!(mode(&spill), 0o600);
    fs::remove_file(spill).unwrap();
}

#[test]
fn output_at_the_limits_is_shown_whole_without_a_spill_file() {
    let dir = tmp();
    let out = sh(dir.path(), "seq 1 2000");
    let all: Vec<String> = (1..=2000).map(|n| n.to_string()).collect();
    assert_eq!(out.text, all.join("\n"));
}

#[test]
fn byte_bound_truncation_says_so() {
    let dir = tmp();
    let out = sh(
        dir.path(),
        "seq 1 1000 | while read i; do printf '%0100d\\n' \"$i\"; done",
    );
    // 101 bytes per line: 506 lines fit in 50 KB.
    let shown: Vec<String> = (495..=1000).map(|n| format!("{n:0100}")).collect();
    let spill = spill_path(&out.text);
    assert_eq!(
        out.text,
        format!(
            "{}\n\n[Showing lines 495-1000 of 1000 (50.0KB limit). Full output: {}]",
            shown.join("\n"),
            spill.display()
        )
    );
    let full: String = (1..=1000).map(|n| format!("{n:0100}\n")).collect();
    assert_eq!(fs::read_to_string(&spill).unwrap(), full);
    fs::remove_file(spill).unwrap();
}

#[test]
fn a_huge_line_keeps_its_last_50_kb() {
    let dir = tmp();
    let out = sh(
        dir.path(),
        "printf start; head -c 204800 /dev/zero | tr '\\0' x; printf end",
    );
    let spill = spill_path(&out.text);
    let expected_tail = format!("{}end", "x".repeat(50 * 1024 - 3));
    assert_eq!(
        out.text,
        format!(
            "{expected_tail}\n\n[Showing last 50.0KB of line 1 (line is 200.0KB). Full output: {}]",
            spill.display()
        )
    );
    assert_eq!(fs::metadata(&spill).unwrap().len(), 5 + 204800 + 3);
    fs::remove_file(spill).unwrap();
}

#[test]
fn a_10_mb_line_and_a_million_lines_stay_bounded() {
    let dir = tmp();
    let out = sh(
        dir.path(),
        "head -c 10485760 /dev/zero | tr '\\0' y; echo; exit 4",
    );
    let spill = spill_path(&out.text);
    assert!(
        out.text
            .contains("[Showing last 50.0KB of line 1 (line is 10.0MB). Full output: ")
    );
    assert!(
        out.text.ends_with("]\n(exit code 4)"),
        "{}",
        &out.text[out.text.len() - 200..]
    );
    assert!(out.text.len() < 51 * 1024 + 200);
    assert_eq!(fs::metadata(&spill).unwrap().len(), 10485760 + 1);
    fs::remove_file(spill).unwrap();

    let out = sh(dir.path(), "seq 1 1000000");
    let spill = spill_path(&out.text);
    assert!(out.text.starts_with("998001\n"));
    assert!(
        out.text
            .contains("1000000\n\n[Showing lines 998001-1000000 of 1000000. Full output: ")
    );
    let full = fs::read(&spill).unwrap();
    assert_eq!(full.iter().filter(|&&b| b == b'\n').count(), 1_000_000);
    fs::remove_file(spill).unwrap();
}

#[test]
fn timeout_argument() {
    let dir = tmp();
    for bad in [json!(0), json!(-5), json!(1.5), json!("10"), json!([])] {
        let out = run(
            run_command(),
            json!({"command": "echo hi", "timeout": bad}),
            dir.path(),
        );
        assert_eq!(
            out.text, "error: `timeout` must be a whole number of seconds ≥ 1",
            "{bad}"
        );
        assert!(out.is_error);
    }
    // Values over the maximum are clamped without comment.
    let out = sh_timeout(dir.path(), "echo ok", 100_000);
    assert_eq!(out.text, "ok");
    let out = run(
        run_command(),
        json!({"command": "echo ok", "timeout": null}),
        dir.path(),
    );
    assert_eq!(out.text, "ok");
}

#[test]
fn bad_arguments_get_one_line_errors() {
    let dir = tmp();
    for args in non_objects() {
        let out = run(run_command(), args, dir.path());
        assert_eq!(out.text, "error: arguments must be a JSON object");
        assert!(out.is_error);
    }
    for args in [
        json!({}),
        json!({"command": ""}),
        json!({"command": "  "}),
        json!({"command": 3}),
        json!({"cmd": "ls"}),
    ] {
        let out = run(run_command(), args, dir.path());
        assert_eq!(
            out.text,
            "error: `command` is required and must be a non-empty string"
        );
    }
}
