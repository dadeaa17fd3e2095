//! Commands run with bash, the language the policy reads: lines that bash
//! and dash split differently do what bash does (and what uji decided),
//! `!cmd` runs with bash too, and without bash every command is
//! unresolved. The real binary, the real plugins, the fake model on
//! 127.0.0.1.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Output;

use uji_tests::chat::run_commands;
use uji_tests::{NO_DENY_RULES, Sandbox, text};

const POLICY: &str = r#"
require("uji.defaults")
uji.tool.policy({ run_command = { allow = { "echo *" }, deny = { "rm *" } } })
"#;

fn sandbox() -> Sandbox {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.config().join("init.lua"), POLICY).unwrap();
    std::fs::create_dir(sandbox.work().join("v")).unwrap();
    sandbox
}

/// One `uji run --yes` in which the model sends each command in turn;
/// the output and what each call's result said.
fn run(sandbox: &Sandbox, commands: &[&str], env: &[(&str, &str)]) -> (Output, Vec<String>) {
    run_commands(sandbox, commands, &["--yes"], env)
}

#[test]
fn lines_dash_would_split_differently_run_as_bash_reads_them() {
    let sandbox = sandbox();
    let lines = [r"echo $'\'; rm -rf v #'", "echo x &>/dev/null rm -rf v"];
    let (output, results) = run(&sandbox, &lines, &[]);
    assert!(
        sandbox.work().join("v").is_dir(),
        "{:?} {results:?}",
        text(&output)
    );
    assert_eq!(results.len(), 2, "{:?}", text(&output));
    // What bash prints: the ANSI-C string, then nothing (all to /dev/null).
    assert_eq!(results[0].trim_end(), "'; rm -rf v #", "{results:?}");
    assert!(results[1].starts_with("(no output"), "{results:?}");
}

#[test]
fn bash_starts_without_rc_files_exported_functions_or_posix_mode() {
    let sandbox = sandbox();
    // The line prints variables, so it is not plain: with no deny rules
    // `--yes` runs it (docs/policy.md).
    sandbox.write_init(NO_DENY_RULES);
    let rc = sandbox.root.path().join("rc.sh");
    let marker = sandbox.root.path().join("rc-ran");
    std::fs::write(&rc, format!("touch {}\n", marker.display())).unwrap();
    let rc = rc.display().to_string();
    let env = [
        ("BASH_ENV", rc.as_str()),
        ("ENV", rc.as_str()),
        ("POSIXLY_CORRECT", "1"),
        ("SHELLOPTS", "posix:noglob"),
        ("BASH_FUNC_echo%%", "() { touch rm-ran; }"),
    ];
    let line = "echo \"$BASH_VERSION|$POSIXLY_CORRECT|$-\" *";
    let (output, results) = run(&sandbox, &[line], &env);
    assert!(
        !marker.exists(),
        "no file read at start: {:?}",
        text(&output)
    );
    assert!(!sandbox.work().join("rm-ran").exists(), "{results:?}");
    let printed = &results[0];
    assert!(!printed.starts_with('|'), "bash ran: {printed}");
    assert!(printed.contains("||"), "POSIXLY_CORRECT unset: {printed}");
    assert!(printed.trim_end().ends_with(" v"), "globbing on: {printed}");
}

#[test]
fn without_bash_every_command_asks_and_nobody_answering_denies_it() {
    let sandbox = sandbox();
    let missing = [("UJI_BASH", "/nonexistent/bash")];
    let (output, results) = run(&sandbox, &["echo allowed-by-rule"], &missing);
    let (_, stderr) = text(&output);
    assert!(results[0].contains("no bash was found"), "{results:?}");
    assert!(
        !results[0].contains("allowed-by-rule\n"),
        "not run: {results:?}"
    );
    assert!(stderr.contains("no bash was found"), "a notice: {stderr}");
    let check = sandbox
        .uji()
        .env("UJI_BASH", "/nonexistent/bash")
        .args(["policy", "check", "run_command", "echo hi"])
        .output()
        .unwrap();
    let (stdout, _) = text(&check);
    assert!(stdout.starts_with("ask"), "never allowed unasked: {stdout}");
    assert!(
        stdout.contains("with --yes or in a headless run: deny"),
        "{stdout}"
    );
}
