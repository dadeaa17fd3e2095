//! The OS sandbox of `run_command` (Landlock) through the real binary:
//! what an auto-approved command can change on disk and reach on the
//! network, how init.lua and `--sandbox` set it, and what `uji policy
//! check` says. Every test first asks the kernel for Landlock and says so
//! plainly when it is skipped.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Command;

use uji_tests::{Sandbox, text};

/// False (after saying so) when the kernel has no Landlock.
fn landlock_or_skip(test: &str) -> bool {
    // The same question the tools plugin asks the kernel.
    if uji_plugin_tools::sandbox::kernel_abi() > 0 {
        return true;
    }
    eprintln!("SKIPPED {test}: this kernel has no Landlock");
    false
}

/// A sandbox whose temporary directory is its own (the temporary directory
/// is writable in `workspace-write`, and the whole sandbox lives in /tmp).
fn sandbox(init_lua: Option<&str>) -> (Sandbox, PathBuf) {
    let sandbox = Sandbox::new();
    let tmp = sandbox.work().parent().unwrap().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    if let Some(lua) = init_lua {
        std::fs::write(sandbox.config().join("init.lua"), lua).unwrap();
    }
    (sandbox, tmp)
}

fn uji(sandbox: &Sandbox, tmp: &PathBuf) -> Command {
    let mut cmd = sandbox.uji();
    cmd.env("TMPDIR", tmp);
    cmd
}

fn home(sandbox: &Sandbox) -> PathBuf {
    sandbox.work().parent().unwrap().join("home")
}

fn run_command(sandbox: &Sandbox, tmp: &PathBuf, command: &str, extra: &[&str]) -> String {
    let args = serde_json::json!({ "command": command }).to_string();
    let output = uji(sandbox, tmp)
        .args(["tool", "run", "run_command", &args])
        .args(extra)
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    format!("{stdout}{stderr}")
}

#[test]
fn an_auto_approved_touch_outside_the_workspace_fails_and_one_inside_works() {
    if !landlock_or_skip("auto-approved touch") {
        return;
    }
    let (sandbox, tmp) = sandbox(None);
    let outside = home(&sandbox).join("outside.txt");
    let out = run_command(
        &sandbox,
        &tmp,
        &format!(
            "touch {}; touch inside.txt; touch \"$TMPDIR/t\"",
            outside.display()
        ),
        &["--yes"],
    );
    assert!(!outside.exists(), "nothing written outside: {out}");
    assert!(out.contains("Permission denied"), "{out}");
    assert!(sandbox.work().join("inside.txt").exists(), "{out}");
    assert!(
        tmp.join("t").exists(),
        "the temporary directory is writable: {out}"
    );
}

#[test]
fn an_explicit_mode_wins_over_the_unattended_default() {
    if !landlock_or_skip("explicit mode") {
        return;
    }
    let (sandbox, tmp) = sandbox(None);
    let out = run_command(
        &sandbox,
        &tmp,
        "touch inside.txt; echo x > /dev/null && echo null-ok",
        &["--yes", "--sandbox", "read-only"],
    );
    assert!(
        !sandbox.work().join("inside.txt").exists(),
        "read-only: {out}"
    );
    assert!(out.contains("null-ok"), "/dev/null stays writable: {out}");
    let outside = home(&sandbox).join("outside.txt");
    let touch = format!("touch {}", outside.display());
    run_command(&sandbox, &tmp, &touch, &["--yes", "--sandbox", "off"]);
    assert!(outside.exists(), "off: the policy alone decides");
}

#[test]
fn init_lua_sets_mode_network_and_extra_writable_directories() {
    if !landlock_or_skip("init.lua sandbox") {
        return;
    }
    let lua = r#"
uji.tool.sandbox({ mode = "workspace-write", network = false, writable = { "~/.cargo" } })
uji.tool.sandbox({ network = false })  -- fields left out keep their value
local s = uji.tool.sandbox()
assert(s.mode == "workspace-write" and s.network == false and s.writable[1] == "~/.cargo")
"#;
    let (sandbox, tmp) = sandbox(Some(lua));
    std::fs::create_dir_all(home(&sandbox).join(".cargo")).unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // sh's /dev/tcp is not portable: python connects, if there is one.
    let connect = format!(
        "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port})); print(\"connected\")'"
    );
    let out = run_command(
        &sandbox,
        &tmp,
        &format!("touch ~/.cargo/ok ~/no; {connect}"),
        &["--yes"],
    );
    assert!(!out.contains("lua: error"), "{out}");
    assert!(home(&sandbox).join(".cargo/ok").exists(), "{out}");
    assert!(!home(&sandbox).join("no").exists(), "{out}");
    if out.contains("python3: not found") {
        eprintln!("network part skipped: no python3");
    } else {
        assert!(!out.contains("connected"), "network off: {out}");
        assert!(out.contains("PermissionError"), "{out}");
    }
}

#[test]
fn policy_check_shows_the_sandbox_a_command_would_get() {
    let check = |lua: Option<&str>| {
        let (sandbox, tmp) = sandbox(lua);
        let output = uji(&sandbox, &tmp)
            .args(["policy", "check", "run_command", "make"])
            .output()
            .unwrap();
        let (stdout, stderr) = text(&output);
        assert!(output.status.success(), "{stderr}");
        stdout
    };
    let out = check(None);
    assert!(
        out.contains("sandbox: none (with --yes: workspace-write, network on)"),
        "{out}"
    );
    let out = check(Some(
        r#"uji.tool.sandbox({ mode = "read-only", network = false })"#,
    ));
    assert!(out.contains("sandbox: read-only, network off\n"), "{out}");
}

#[test]
fn an_unknown_mode_in_init_lua_is_an_error_naming_the_three() {
    let (sandbox, tmp) = sandbox(Some(r#"uji.tool.sandbox({ mode = "strict" })"#));
    let output = uji(&sandbox, &tmp)
        .args(["policy", "check", "run_command", "make"])
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(stderr.contains("uji.tool.sandbox"), "{stderr}");
    for mode in ["`off`", "`read-only`", "`workspace-write`"] {
        assert!(stderr.contains(mode), "{stderr}");
    }
    assert!(stdout.contains("sandbox: none (with --yes"), "{stdout}");
}

/// `uji run` with a fake model on 127.0.0.1 that asks for one command.
fn uji_run(sandbox: &Sandbox, tmp: &PathBuf, command: &str, extra: &[&str]) -> String {
    use uji_fake_model::chat::ChatEvents;
    use uji_fake_model::{FakeModel, Script};
    let model = FakeModel::start();
    let args = serde_json::json!({ "command": command }).to_string();
    model
        .push(Script::sse(
            ChatEvents::new("m")
                .tool_call(0, "call_1", "run_command", &args, 2)
                .finish("tool_calls")
                .done(),
        ))
        .push(Script::sse(
            ChatEvents::new("m").text("done", 1).finish("stop").done(),
        ));
    let output = uji(sandbox, tmp)
        .env("OPENROUTER_API_KEY", "sk-test")
        .env("OPENROUTER_BASE_URL", model.base_url())
        .args(["run", "--model", "openrouter/m", "--json"])
        .args(extra)
        .arg("go")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    stdout
}

#[test]
fn uji_run_sandboxes_yes_calls_and_sandbox_off_lifts_it() {
    if !landlock_or_skip("uji run --sandbox") {
        return;
    }
    let (sandbox, tmp) = sandbox(None);
    let outside = home(&sandbox).join("outside.txt");
    let command = format!("touch {} inside.txt", outside.display());
    let out = uji_run(&sandbox, &tmp, &command, &["--yes"]);
    assert!(!outside.exists(), "{out}");
    assert!(sandbox.work().join("inside.txt").exists(), "{out}");
    assert!(
        out.contains("Permission denied"),
        "the model reads why: {out}"
    );
    uji_run(&sandbox, &tmp, &command, &["--yes", "--sandbox", "off"]);
    assert!(outside.exists(), "--sandbox off: the policy alone decides");
}
