//! The built-in tools plugin loaded by the real `uji` binary, called through
//! the policy gate with `uji tool run`: what the model reads and what happens
//! on disk.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Output;

use uji_tests::{NO_DENY_RULES, Sandbox, text};

fn tool(sandbox: &Sandbox, args: &[&str]) -> (Output, String, String) {
    let output = sandbox.uji().arg("tool").args(args).output().unwrap();
    let (stdout, stderr) = text(&output);
    (output, stdout, stderr)
}

#[test]
fn the_four_tools_are_listed_with_their_declared_policies() {
    let sandbox = Sandbox::new();
    let (output, stdout, stderr) = tool(&sandbox, &["list"]);
    assert!(output.status.success(), "{stderr}");
    let rows: Vec<(String, String, String)> = stdout
        .lines()
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            (
                cols[0].to_string(),
                cols[1].to_string(),
                cols[2].to_string(),
            )
        })
        .collect();
    for (name, policy) in [
        ("edit_file", "ask"),
        ("read_file", "allow"),
        ("run_command", "ask"),
        ("write_file", "ask"),
    ] {
        assert!(
            rows.contains(&(name.to_string(), policy.to_string(), "tools".to_string())),
            "{name} {policy} from the tools plugin: {stdout}"
        );
    }
}

#[test]
fn read_file_pages_a_file_and_stays_inside_the_working_directory() {
    let sandbox = Sandbox::new();
    let lines: String = (1..=2500).map(|i| format!("line {i}\n")).collect();
    std::fs::write(sandbox.work().join("big.txt"), lines).unwrap();
    let (output, stdout, _) = tool(&sandbox, &["run", "read_file", r#"{"path": "big.txt"}"#]);
    assert!(output.status.success());
    assert!(
        stdout.starts_with("    1| line 1\n    2| line 2\n"),
        "{}",
        &stdout[..60]
    );
    assert!(stdout.contains(" 2000| line 2000\n"));
    assert!(!stdout.contains("line 2001\n"));
    assert!(
        stdout
            .trim_end()
            .ends_with("[showed lines 1-2000 of 2500; continue with offset 2001]"),
        "{}",
        &stdout[stdout.len() - 80..]
    );

    let (_, stdout, _) = tool(
        &sandbox,
        &["run", "read_file", r#"{"path": "big.txt", "offset": 2499}"#],
    );
    assert_eq!(stdout, " 2499| line 2499\n 2500| line 2500\n");

    std::fs::write(sandbox.root.path().join("secret.txt"), "top secret").unwrap();
    let (output, stdout, _) = tool(
        &sandbox,
        &["run", "read_file", r#"{"path": "../secret.txt"}"#],
    );
    assert!(!output.status.success());
    assert!(
        stdout.starts_with("denied: ../secret.txt is outside the allowed directories"),
        "{stdout}"
    );
    assert!(!stdout.contains("top secret"));
}

#[test]
fn edits_and_writes_ask_first_and_change_the_disk_only_when_allowed() {
    let sandbox = Sandbox::new();
    let file = sandbox.work().join("src.rs");
    std::fs::write(&file, "fn main() {\n    println!(\"hi\");\n}\n").unwrap();
    let edit = r#"{"path": "src.rs", "old_string": "\"hi\"", "new_string": "\"hello\""}"#;

    let (output, stdout, _) = tool(&sandbox, &["run", "edit_file", edit]);
    assert!(!output.status.success());
    assert!(
        stdout.starts_with("denied: edit_file needs approval"),
        "{stdout}"
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "fn main() {\n    println!(\"hi\");\n}\n"
    );

    let (output, stdout, stderr) = tool(&sandbox, &["run", "edit_file", edit, "--yes"]);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stdout, "edited src.rs at line 2\n");
    assert!(!stdout.contains("@@"), "the model never sees the diff");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "fn main() {\n    println!(\"hello\");\n}\n"
    );

    let (output, stdout, _) = tool(
        &sandbox,
        &[
            "run",
            "write_file",
            r#"{"path": "new/deep/notes.md", "content": "a\nb\n"}"#,
            "--yes",
        ],
    );
    assert!(output.status.success());
    assert_eq!(stdout, "created new/deep/notes.md (2 lines)\n");
    assert_eq!(
        std::fs::read_to_string(sandbox.work().join("new/deep/notes.md")).unwrap(),
        "a\nb\n"
    );
    let leftovers: Vec<_> = std::fs::read_dir(sandbox.work().join("new/deep"))
        .unwrap()
        .collect();
    assert_eq!(leftovers.len(), 1, "no temporary files left behind");
}

#[test]
fn run_command_keeps_the_tail_saves_the_full_output_and_streams_progress() {
    let sandbox = Sandbox::new();
    let (output, stdout, stderr) = tool(
        &sandbox,
        &[
            "run",
            "run_command",
            r#"{"command": "seq 1 5000; echo done >&2; exit 4"}"#,
            "--yes",
            "--progress",
        ],
    );
    assert_eq!(
        output.status.code(),
        Some(1),
        "a command that exits non-zero is a failed call: {stderr}"
    );
    assert!(
        stdout.contains("\n5000\ndone\n"),
        "tail kept, stderr merged in order"
    );
    assert!(!stdout.contains("\n2000\n"), "head dropped");
    assert!(stdout.contains("(exit code 4)"));
    let spill = stdout
        .split("Full output: ")
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .unwrap_or_else(|| panic!("names the full output file: {stdout}"));
    assert!(
        std::path::Path::new(spill.trim())
            .starts_with(sandbox.root.path().join("data/spill/tool-run")),
        "spilled under the data directory: {spill}"
    );
    let full = std::fs::read_to_string(spill.trim()).unwrap();
    assert!(
        full.starts_with("1\n2\n3\n") && full.contains("\n5000\n"),
        "the full output is saved"
    );
    assert!(
        stderr.contains("  1\n"),
        "the first progress line streams at once"
    );
    assert!(
        stderr.contains("  done\n"),
        "the last line is shown in the end"
    );
    assert!(
        stderr.lines().count() < 200,
        "progress is paced, not a line per output line: {stderr}"
    );
}

#[test]
fn run_command_at_its_timeout_moves_to_the_background_and_ends_with_uji_tool() {
    let sandbox = Sandbox::new();
    // `$!` is never plain: with no deny rules `--yes` runs it.
    sandbox.write_init(NO_DENY_RULES);
    let started = std::time::Instant::now();
    let (_, stdout, _) = tool(
        &sandbox,
        &[
            "run",
            "run_command",
            r#"{"command": "sleep 30 & echo $! > child.pid; echo started; sleep 30", "timeout": 1}"#,
            "--yes",
        ],
    );
    assert!(started.elapsed().as_secs() < 20, "returned at the timeout");
    assert!(stdout.contains("started"), "{stdout}");
    assert!(
        stdout.contains("[It was still running at its 1s timeout: it goes on as job 1"),
        "{stdout}"
    );
    // `uji tool run` is one call: the job ends with it, its tree too.
    let pid = std::fs::read_to_string(sandbox.work().join("child.pid")).unwrap();
    // Killed means gone or a zombie (in a container PID 1 may never reap it).
    let state = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).unwrap_or_default();
    let running = state
        .split(") ")
        .nth(1)
        .is_some_and(|rest| !rest.starts_with('Z'));
    assert!(
        !running,
        "the background child was killed with its group: {state}"
    );
}

/// Live processes whose command line is exactly `words` (NUL-separated in
/// /proc; zombies have none).
fn live_with_cmdline(words: &[&str]) -> Vec<String> {
    let wanted: Vec<u8> = words
        .iter()
        .flat_map(|w| [w.as_bytes(), b"\0"].concat())
        .collect();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .filter(|e| std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c == wanted))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn a_job_ending_with_uji_tool_kills_children_that_called_setsid() {
    let sandbox = Sandbox::new();
    // The parent of the setsid'd sleep exits at once, so the sleep is an
    // orphan in its own session and process group when the timeout hits.
    let sleep = ["sleep", "29.71"];
    let (_, stdout, _) = tool(
        &sandbox,
        &[
            "run",
            "run_command",
            r#"{"command": "(setsid sleep 29.71 > /dev/null 2>&1 &); sleep 0.5; echo started; sleep 30", "timeout": 2}"#,
            "--yes",
        ],
    );
    assert!(stdout.contains("started"), "{stdout}");
    assert!(
        stdout.contains("still running at its 2s timeout"),
        "{stdout}"
    );
    // SIGKILL is sent before uji exits; on a busy machine the process may
    // take a moment to die after it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
    let mut left = live_with_cmdline(&sleep);
    while !left.is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
        left = live_with_cmdline(&sleep);
    }
    assert!(left.is_empty(), "setsid grandchild survived: pids {left:?}");
}

#[test]
fn run_command_interrupt_kills_children_that_called_setsid() {
    let sandbox = Sandbox::new();
    let child = sandbox
        .uji()
        .args([
            "tool",
            "run",
            "run_command",
            r#"{"command": "(setsid sleep 29.72 > /dev/null 2>&1 &); echo started; sleep 30", "timeout": 60}"#,
            "--yes",
        ])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    while live_with_cmdline(&["sleep", "29.72"]).is_empty() {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // SAFETY: a signal to the uji process this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("interrupted"), "{stdout}");
    let left = live_with_cmdline(&["sleep", "29.72"]);
    assert!(left.is_empty(), "setsid grandchild survived: pids {left:?}");
}

#[test]
fn bad_arguments_get_a_one_line_error() {
    let sandbox = Sandbox::new();
    for (name, args, expected) in [
        (
            "read_file",
            r#"{}"#,
            "error: `path` is required and must be a non-empty string",
        ),
        (
            "read_file",
            r#"[1, 2]"#,
            "error: arguments must be a JSON object",
        ),
        (
            "edit_file",
            r#"{"path": "x", "old_string": "a", "new_string": "a"}"#,
            "error: old_string and new_string are identical",
        ),
        (
            "run_command",
            r#"{"command": "true", "timeout": "soon"}"#,
            "error: `timeout` must be",
        ),
    ] {
        let (output, stdout, _) = tool(&sandbox, &["run", name, args, "--yes"]);
        assert!(!output.status.success(), "{name} {args}");
        assert!(stdout.starts_with(expected), "{name} {args}: {stdout}");
        assert_eq!(stdout.trim_end().lines().count(), 1, "one line: {stdout}");
    }
    let (output, _, stderr) = tool(&sandbox, &["run", "read_file", "{not json"]);
    assert!(!output.status.success());
    assert!(stderr.contains("not valid JSON"), "{stderr}");
}

/// Swaps `a` and `b` atomically (renameat2 RENAME_EXCHANGE).
fn exchange(a: &std::path::Path, b: &std::path::Path) {
    use std::os::unix::ffi::OsStrExt;
    let a = std::ffi::CString::new(a.as_os_str().as_bytes()).unwrap();
    let b = std::ffi::CString::new(b.as_os_str().as_bytes()).unwrap();
    // SAFETY: two NUL-terminated paths.
    unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
}

#[test]
fn a_directory_swapped_for_a_symlink_during_writes_lets_nothing_out() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let sandbox = Sandbox::new();
    let work = sandbox.work();
    let outside = tempfile::tempdir().unwrap();
    // What edit_file would change if it followed the link.
    std::fs::write(outside.path().join("e.txt"), "old\n").unwrap();
    std::fs::create_dir(work.join("sub")).unwrap();
    std::fs::write(work.join("sub/e.txt"), "old\n").unwrap();
    std::os::unix::fs::symlink(outside.path(), work.join("link")).unwrap();
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let swapper = {
        let stop = stop.clone();
        let (sub, link) = (work.join("sub"), work.join("link"));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                exchange(&sub, &link);
            }
        })
    };
    for i in 0..200 {
        let args = if i % 2 == 0 {
            format!(r#"{{"path": "sub/w{i}.txt", "content": "x"}}"#)
        } else {
            r#"{"path": "sub/e.txt", "old_string": "old", "new_string": "new\nold"}"#.to_string()
        };
        let name = if i % 2 == 0 {
            "write_file"
        } else {
            "edit_file"
        };
        tool(&sandbox, &["run", name, &args, "--yes"]);
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    let mut names: Vec<String> = std::fs::read_dir(outside.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["e.txt"], "nothing new outside the workspace");
    assert_eq!(
        std::fs::read_to_string(outside.path().join("e.txt")).unwrap(),
        "old\n",
        "the file outside was not edited"
    );
    // Writes did land inside: the race was real, not a refusal of all.
    // Whichever of the two names holds the real directory now.
    let real = ["sub", "link"]
        .map(|name| work.join(name))
        .into_iter()
        .find(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()))
        .unwrap();
    let inside = std::fs::read_dir(real).unwrap().count();
    assert!(inside > 1, "some writes landed in the workspace");
}

#[test]
fn temporary_files_of_interrupted_writes_are_removed_at_the_next_start() {
    let sandbox = Sandbox::new();
    let work = sandbox.work();
    std::fs::create_dir_all(work.join("src/deep")).unwrap();
    // What a uji killed mid-write leaves: its temporary name, with a pid
    // no process has (4194304 is past the largest Linux hands out).
    let left = [
        work.join(".notes.txt.uji-4194304-0.tmp"),
        work.join("src/deep/.main.rs.uji-4194304-7.tmp"),
    ];
    // Look-alikes uji did not make.
    let kept = [
        work.join(".notes.txt.tmp"),
        work.join("notes.txt.uji-4194304-0.tmp"),
        work.join(".notes.txt.uji-someone-0.tmp"),
    ];
    for path in left.iter().chain(&kept) {
        std::fs::write(path, "half a file").unwrap();
    }
    let (output, stdout, stderr) = tool(
        &sandbox,
        &[
            "run",
            "write_file",
            r#"{"path": "notes.txt", "content": "whole\n"}"#,
            "--yes",
        ],
    );
    assert!(output.status.success(), "{stdout}{stderr}");
    assert_eq!(
        std::fs::read_to_string(work.join("notes.txt")).unwrap(),
        "whole\n"
    );
    for path in &left {
        assert!(!path.exists(), "{} is left", path.display());
    }
    for path in &kept {
        assert!(path.exists(), "{} was removed", path.display());
    }
    let names: Vec<String> = std::fs::read_dir(&work)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".notes.txt.uji-") && n != ".notes.txt.uji-someone-0.tmp")
        .collect();
    assert!(names.is_empty(), "the write left {names:?}");
}

#[test]
fn a_read_file_deny_rule_holds_for_a_hard_link_to_the_file() {
    let sandbox = Sandbox::new();
    let work = sandbox.work();
    std::fs::write(work.join("secret.txt"), "the secret\n").unwrap();
    std::fs::hard_link(work.join("secret.txt"), work.join("link.txt")).unwrap();
    std::fs::write(work.join("key.pem"), "the key\n").unwrap();
    std::fs::hard_link(work.join("key.pem"), work.join("notes.txt")).unwrap();
    std::fs::write(
        sandbox.config().join("init.lua"),
        r#"require("uji.defaults")
uji.tool.policy({ read_file = { deny = { "secret.txt", "*.pem" } } })
"#,
    )
    .unwrap();
    for (name, why) in [
        ("link.txt", "the same file as link.txt, hard-linked"),
        ("notes.txt", "notes.txt is a file with 2 hard links"),
    ] {
        let args = format!(r#"{{"path": "{name}"}}"#);
        let (_, stdout, stderr) = tool(&sandbox, &["run", "read_file", &args, "--yes"]);
        assert!(stdout.contains("denied"), "{name}: {stdout}{stderr}");
        assert!(
            !stdout.contains("the secret") && !stdout.contains("the key"),
            "{stdout}"
        );
        let output = sandbox
            .uji()
            .args(["policy", "check", "read_file", name])
            .output()
            .unwrap();
        let (stdout, stderr) = text(&output);
        assert!(stdout.contains(why), "{name}: {stdout}{stderr}");
    }
    let (_, stdout, _) = tool(
        &sandbox,
        &["run", "read_file", r#"{"path": "secret.txt"}"#, "--yes"],
    );
    assert!(stdout.contains("denied"), "{stdout}");
}
