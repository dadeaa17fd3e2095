//! The `proc.*` services through the functions the plugin serves them
//! with ([`Procs`]): start, read, write, close, stop, the timeout, the
//! bounds on output, errors and the sandbox. Helpers outside `#[test]`
//! functions may unwrap too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::tmp;
use uji_plugin_tools::Procs;
use uji_sdk::protocol::procs::{
    CUT_MARK, MAX_BUFFERED_BYTES, MAX_LINE_BYTES, MAX_LINES_PER_READ, ProcClose, ProcCommand,
    ProcExit, ProcRead, ProcStart, ProcStop, ProcWrite, REASON_STOPPED, REASON_TIMEOUT,
};
use uji_sdk::{CallSandbox, SandboxMode};

/// A table without uji and without an OS sandbox.
fn procs() -> Procs {
    Procs::with_sandbox(None)
}

fn shell(line: &str, cwd: &Path) -> ProcStart {
    ProcStart {
        command: ProcCommand::Shell(line.to_string()),
        cwd: Some(cwd.to_string_lossy().into_owned()),
        env: Default::default(),
        timeout_ms: None,
    }
}

fn argv(args: &[&str]) -> ProcStart {
    ProcStart {
        command: ProcCommand::Argv(args.iter().map(|a| a.to_string()).collect()),
        cwd: None,
        env: Default::default(),
        timeout_ms: None,
    }
}

/// Every line and the exit, reading as a plugin would (at most 30 s).
fn read_to_end(procs: &Procs, id: u64) -> (Vec<String>, Vec<String>, ProcExit) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let until = Instant::now() + Duration::from_secs(30);
    while Instant::now() < until {
        let answer = procs.read(ProcRead { id, wait_ms: 2000 }).unwrap();
        out.extend(answer.stdout);
        err.extend(answer.stderr);
        if let Some(exit) = answer.exit {
            return (out, err, exit);
        }
    }
    panic!("process {id} did not end within 30 s; so far {out:?} {err:?}");
}

fn start(procs: &Procs, request: ProcStart) -> u64 {
    procs.start(request).unwrap().id
}

fn process_gone(pid: &str) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
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
fn lines_come_without_newlines_and_the_exit_comes_last() {
    let dir = tmp();
    let procs = procs();
    let id = start(&procs, shell("printf 'a\\nb'", dir.path()));
    let (out, err, exit) = read_to_end(&procs, id);
    assert_eq!(out, ["a", "b"]);
    assert!(err.is_empty());
    assert_eq!(
        exit,
        ProcExit {
            code: 0,
            reason: None,
            signal: None
        }
    );
    // The exit was read: the id is forgotten.
    let e = procs.read(ProcRead { id, wait_ms: 0 }).unwrap_err();
    assert!(e.starts_with(&format!("no process {id}")), "{e}");
    assert_eq!(procs.count(), 0);
}

#[test]
fn an_argv_list_runs_the_program_without_a_shell() {
    let dir = tmp();
    let procs = procs();
    let mut request = argv(&["printf", "%s|\\r\\n", "two words", "$HOME"]);
    request.cwd = Some(dir.path().to_string_lossy().into_owned());
    let id = start(&procs, request);
    let (out, _, exit) = read_to_end(&procs, id);
    assert_eq!(out, ["two words|", "$HOME|"], "\\r\\n loses its \\r");
    assert_eq!(exit.code, 0);
}

#[test]
fn stderr_lines_come_apart_from_stdout_and_the_exit_code_is_kept() {
    let dir = tmp();
    let procs = procs();
    let id = start(
        &procs,
        shell("echo out1; echo err1 >&2; echo out2; exit 3", dir.path()),
    );
    let (out, err, exit) = read_to_end(&procs, id);
    assert_eq!(out, ["out1", "out2"]);
    assert_eq!(err, ["err1"]);
    assert_eq!(exit.code, 3);
    assert_eq!(exit.reason, None);
}

#[test]
fn a_read_waits_for_a_line_and_answers_empty_when_none_comes() {
    let dir = tmp();
    let procs = procs();
    let id = start(&procs, shell("sleep 0.3; echo late; sleep 30", dir.path()));
    let started = Instant::now();
    let none = procs.read(ProcRead { id, wait_ms: 50 }).unwrap();
    assert!(none.stdout.is_empty() && none.exit.is_none());
    let late = procs.read(ProcRead { id, wait_ms: 5000 }).unwrap();
    assert_eq!(late.stdout, ["late"]);
    assert!(late.exit.is_none());
    assert!(started.elapsed() < Duration::from_secs(4));
    procs.stop(ProcStop { id }).unwrap();
    let (_, _, exit) = read_to_end(&procs, id);
    assert_eq!(exit.reason.as_deref(), Some(REASON_STOPPED));
}

#[test]
fn cat_echoes_what_is_written_and_ends_when_its_input_is_closed() {
    let dir = tmp();
    let procs = procs();
    let id = start(&procs, argv(&["cat"]));
    procs
        .write(ProcWrite {
            id,
            data: "hello\n".into(),
        })
        .unwrap();
    let first = procs.read(ProcRead { id, wait_ms: 5000 }).unwrap();
    assert_eq!(first.stdout, ["hello"]);
    procs
        .write(ProcWrite {
            id,
            data: "wor".into(),
        })
        .unwrap();
    procs
        .write(ProcWrite {
            id,
            data: "ld\nno newline".into(),
        })
        .unwrap();
    procs.close(ProcClose { id }).unwrap();
    let e = procs
        .write(ProcWrite {
            id,
            data: "more".into(),
        })
        .unwrap_err();
    assert!(e.contains("proc.close"), "{e}");
    let (out, _, exit) = read_to_end(&procs, id);
    assert_eq!(out, ["world", "no newline"]);
    assert_eq!(exit.code, 0);
    drop(dir);
}

#[test]
fn a_large_write_reaches_a_process_that_reads_slowly() {
    let procs = procs();
    let id = start(&procs, argv(&["wc", "-c"]));
    let chunk = "x".repeat(1024 * 1024);
    for _ in 0..3 {
        procs
            .write(ProcWrite {
                id,
                data: chunk.clone(),
            })
            .unwrap();
    }
    procs.close(ProcClose { id }).unwrap();
    let (out, _, exit) = read_to_end(&procs, id);
    assert_eq!(out, [(3 * 1024 * 1024).to_string()]);
    assert_eq!(exit.code, 0);
}

#[test]
fn stop_kills_the_whole_tree_and_the_next_read_says_stopped() {
    let dir = tmp();
    let procs = procs();
    let id = start(&procs, shell("sleep 60 & echo $!; wait", dir.path()));
    let first = procs.read(ProcRead { id, wait_ms: 5000 }).unwrap();
    let pid = first.stdout.first().cloned().expect("the background pid");
    assert!(!process_gone(&pid));
    let started = Instant::now();
    procs.stop(ProcStop { id }).unwrap();
    assert!(started.elapsed() < Duration::from_secs(3));
    let answer = procs.read(ProcRead { id, wait_ms: 0 }).unwrap();
    assert_eq!(
        answer.exit,
        Some(ProcExit {
            code: -1,
            reason: Some(REASON_STOPPED.into()),
            signal: None
        })
    );
    assert!(
        wait_for(|| process_gone(&pid), Duration::from_secs(5)),
        "the background sleep {pid} outlived the stop"
    );
    let e = procs.stop(ProcStop { id }).unwrap_err();
    assert!(e.starts_with(&format!("no process {id}")), "{e}");
}

#[test]
fn at_its_timeout_a_process_is_killed_and_the_exit_says_timeout() {
    let dir = tmp();
    let procs = procs();
    let mut request = shell("echo before; sleep 30", dir.path());
    request.timeout_ms = Some(300);
    let started = Instant::now();
    let id = start(&procs, request);
    let (out, _, exit) = read_to_end(&procs, id);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(out, ["before"]);
    assert_eq!(exit.code, -1);
    assert_eq!(exit.reason.as_deref(), Some(REASON_TIMEOUT));
}

#[test]
fn a_signal_uji_did_not_send_is_an_exit_of_minus_one_without_a_reason() {
    let dir = tmp();
    let procs = procs();
    let id = start(&procs, shell("kill -TERM $$", dir.path()));
    let (_, _, exit) = read_to_end(&procs, id);
    assert_eq!(
        exit,
        ProcExit {
            code: -1,
            reason: None,
            signal: Some(libc::SIGTERM)
        }
    );
}

#[test]
fn env_entries_reach_the_process_but_none_bring_back_a_withheld_one() {
    let dir = tmp();
    let procs = procs();
    let mut request = shell("echo \"$GREETING\"", dir.path());
    request.env.insert("GREETING".into(), "hi there".into());
    let id = start(&procs, request);
    assert_eq!(read_to_end(&procs, id).0, ["hi there"]);
    for name in ["UJI_COMMAND_ID", "UJI_DATA_DIR"] {
        let mut request = shell("true", dir.path());
        request.env.insert(name.into(), "x".into());
        let e = procs.start(request).unwrap_err();
        assert!(e.contains(name), "{e}");
    }
    let mut request = shell("true", dir.path());
    request.env.insert("BASH_ENV".into(), "/tmp/x".into());
    let e = procs.start(request).unwrap_err();
    assert!(e.contains("BASH_ENV"), "{e}");
}

#[test]
fn a_missing_program_or_directory_is_a_clear_error() {
    let procs = procs();
    let e = procs
        .start(argv(&["uji-no-such-program-xyz", "a"]))
        .unwrap_err();
    assert_eq!(
        e,
        "could not start `uji-no-such-program-xyz`: no such program on PATH (check its name, or \
         give its full path)"
    );
    let e = procs.start(argv(&["/nonexistent/prog"])).unwrap_err();
    assert_eq!(
        e,
        "could not start `/nonexistent/prog`: no such file (check the path)"
    );
    let mut request = argv(&["true"]);
    request.cwd = Some("/nonexistent/dir".into());
    let e = procs.start(request).unwrap_err();
    assert!(
        e.starts_with("the working directory /nonexistent/dir does not exist"),
        "{e}"
    );
    let e = procs.start(argv(&[])).unwrap_err();
    assert!(e.contains("no program"), "{e}");
    let dir = tmp();
    let e = procs.start(shell(" ", dir.path())).unwrap_err();
    assert!(e.contains("empty"), "{e}");
    let e = procs
        .read(ProcRead {
            id: 999,
            wait_ms: 0,
        })
        .unwrap_err();
    assert!(e.starts_with("no process 999"), "{e}");
    assert_eq!(procs.count(), 0);
}

#[test]
fn a_10_mb_line_comes_cut_and_the_rest_of_it_is_dropped() {
    let dir = tmp();
    let procs = procs();
    let id = start(
        &procs,
        shell(
            "head -c 10000000 /dev/zero | tr '\\0' x; echo; echo next; head -c 200000 /dev/zero | tr '\\0' y",
            dir.path(),
        ),
    );
    let (out, _, exit) = read_to_end(&procs, id);
    assert_eq!(exit.code, 0);
    assert_eq!(
        out.len(),
        3,
        "{:?}",
        out.iter().map(String::len).collect::<Vec<_>>()
    );
    assert_eq!(out[0].len(), MAX_LINE_BYTES + CUT_MARK.len());
    assert!(out[0].starts_with("xxx") && out[0].ends_with(CUT_MARK));
    assert_eq!(out[1], "next");
    assert!(
        out[2].starts_with("yyy") && out[2].ends_with(CUT_MARK),
        "the last line, cut too"
    );
}

#[test]
fn output_nobody_reads_stays_bounded_and_the_process_waits_for_its_reader() {
    let dir = tmp();
    let procs = procs();
    // 20,000 lines of 1,000 bytes: 20 MB, five times what is kept.
    let id = start(
        &procs,
        shell(
            "line=$(head -c 999 /dev/zero | tr '\\0' z); for i in $(seq 20000); do echo \"$line\"; done; touch done",
            dir.path(),
        ),
    );
    let buffered = || procs.buffered(id).unwrap_or(0);
    assert!(
        wait_for(|| buffered() >= MAX_BUFFERED_BYTES, Duration::from_secs(20)),
        "{} bytes kept",
        buffered()
    );
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        buffered() < MAX_BUFFERED_BYTES + 256 * 1024,
        "{}",
        buffered()
    );
    assert!(!dir.path().join("done").exists(), "it did not wait");
    let mut lines = 0;
    let until = Instant::now() + Duration::from_secs(60);
    let exit = loop {
        let answer = procs.read(ProcRead { id, wait_ms: 5000 }).unwrap();
        assert!(answer.stdout.len() <= MAX_LINES_PER_READ);
        assert!(answer.stdout.iter().all(|l| l.len() == 999));
        lines += answer.stdout.len();
        if let Some(exit) = answer.exit {
            break exit;
        }
        assert!(Instant::now() < until, "{lines} lines within 60 s");
    };
    assert_eq!(lines, 20000, "no line was dropped");
    assert_eq!(exit.code, 0);
    assert!(dir.path().join("done").exists());
}

#[test]
fn a_read_only_sandbox_keeps_the_process_from_writing() {
    if uji_plugin_tools::sandbox::kernel_abi() == 0 {
        eprintln!("SKIPPED a_read_only_sandbox_keeps_the_process_from_writing: no Landlock");
        return;
    }
    let dir = tmp();
    let sandbox = CallSandbox {
        mode: SandboxMode::ReadOnly,
        network: true,
        proxy: None,
        hosts: Vec::new(),
        writable: Vec::new(),
        read_only: Vec::new(),
        hidden: Vec::new(),
    };
    let procs = Procs::with_sandbox(Some(sandbox.clone()));
    let id = start(&procs, shell("touch made && echo made", dir.path()));
    let (out, err, exit) = read_to_end(&procs, id);
    assert_ne!(exit.code, 0, "{out:?} {err:?}");
    assert!(!dir.path().join("made").exists());
    // workspace-write with the directory writable: the same command works.
    let writable = CallSandbox {
        mode: SandboxMode::WorkspaceWrite,
        writable: vec![dir.path().canonicalize().unwrap().to_string_lossy().into()],
        ..sandbox
    };
    let procs = Procs::with_sandbox(Some(writable));
    let mut request = argv(&["touch", "made"]);
    request.cwd = Some(dir.path().to_string_lossy().into_owned());
    let id = start(&procs, request);
    assert_eq!(read_to_end(&procs, id).2.code, 0);
    assert!(dir.path().join("made").exists());
}

#[test]
fn paths_the_sandbox_protects_stay_read_only_beneath_a_writable_directory() {
    if uji_plugin_tools::sandbox::kernel_abi() == 0
        || !uji_plugin_tools::sandbox::mounts::available()
    {
        eprintln!("SKIPPED paths_the_sandbox_protects…: no Landlock or no user namespaces");
        return;
    }
    let dir = tmp();
    let work = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(work.join(".git/hooks")).unwrap();
    let sandbox = CallSandbox {
        mode: SandboxMode::WorkspaceWrite,
        network: true,
        proxy: None,
        hosts: Vec::new(),
        writable: vec![work.to_string_lossy().into()],
        read_only: vec![work.join(".git/hooks").to_string_lossy().into()],
        hidden: Vec::new(),
    };
    let procs = Procs::with_sandbox(Some(sandbox));
    let id = start(
        &procs,
        shell("touch ok; touch .git/hooks/pre-commit", &work),
    );
    let (_, err, exit) = read_to_end(&procs, id);
    assert_ne!(exit.code, 0, "{err:?}");
    assert!(work.join("ok").exists());
    assert!(!work.join(".git/hooks/pre-commit").exists());
}
