//! The Lua spec suite (tests/lua/*_spec.lua): describe/it specs in the
//! style of the public uji's own, each test run in a fresh `uji` process
//! (the real binary and the real Lua plugin) through the runner's `spec`
//! tool, inside a task so it may wait.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use uji_tests::{Sandbox, text, with_stdin};

fn specs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("lua")
}

/// A sandbox whose init.lua loads the runner (and the defaults, as a
/// user's init.lua written for the public uji does).
fn sandbox() -> Sandbox {
    let sandbox = Sandbox::new();
    let runner = specs_dir().join("runner.lua");
    sandbox.write_init(&format!(
        "require(\"uji.builtin.defaults\")\ndofile({:?})\n",
        runner.display().to_string()
    ));
    sandbox
}

/// Runs the `spec` tool with `args` in a fresh process: its result (stdout)
/// and what it said besides (stderr: notices).
fn spec_tool(sandbox: &Sandbox, args: serde_json::Value) -> (String, String) {
    let mut cmd = sandbox.uji();
    // A provider key in uji's environment: the job spec checks that no
    // process a plugin starts sees it.
    cmd.env("ANTHROPIC_API_KEY", "sk-spec-secret-key")
        .args(["tool", "run", "spec", "-", "--yes"]);
    let output = with_stdin(cmd, &args.to_string());
    text(&output)
}

/// Runs every test of one spec file, each in a fresh process; fails with
/// every failure listed.
fn run_spec_file(name: &str) {
    let file = specs_dir().join(name);
    let file = file.display().to_string();
    let (listed, said) = spec_tool(&sandbox(), serde_json::json!({"file": file}));
    let tests: Vec<&str> = listed.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(
        !tests.is_empty() && !listed.starts_with("FAIL"),
        "{name} lists no tests: {listed}{said}"
    );
    let mut failures = Vec::new();
    for test in &tests {
        let (answer, said) = spec_tool(&sandbox(), serde_json::json!({"file": file, "test": test}));
        if answer.trim() != "PASS" {
            failures.push(format!("{test}: {answer}{said}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} tests in {name} failed:\n{}",
        failures.len(),
        tests.len(),
        failures.join("\n")
    );
}

#[test]
fn tasks_spec() {
    run_spec_file("tasks_spec.lua");
}

#[test]
fn files_spec() {
    run_spec_file("files_spec.lua");
}

#[test]
fn compat_spec() {
    run_spec_file("compat_spec.lua");
}

#[test]
fn job_spec() {
    run_spec_file("job_spec.lua");
}

#[test]
fn packs_spec() {
    run_spec_file("packs_spec.lua");
}
