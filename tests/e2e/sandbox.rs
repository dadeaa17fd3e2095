//! The OS sandbox of `run_command` (Landlock) through the real binary:
//! what an auto-approved command can change on disk and reach on the
//! network, how init.lua and `--sandbox` set it, and what `uji policy
//! check` says. Every test first asks the kernel for Landlock and says so
//! plainly when it is skipped.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::Command;

use uji_tests::{NO_DENY_RULES, Sandbox, text};

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
            "touch {}; touch inside.txt; touch {}",
            outside.display(),
            tmp.join("t").display()
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
        out.contains(
            "sandbox: workspace-write, network on (none if a person allows it once when asked)\n"
        ),
        "{out}"
    );
    let out = check(Some(
        r#"uji.tool.policy({ run_command = { allow = { "make" } } })"#,
    ));
    assert!(
        out.contains("allow") && out.contains("sandbox: workspace-write, network on\n"),
        "an allow rule skips the question, never the sandbox: {out}"
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
    assert!(stdout.contains("sandbox: workspace-write"), "{stdout}");
}

/// `uji run` with a fake model on 127.0.0.1 that asks for one command.
fn uji_run(sandbox: &Sandbox, tmp: &PathBuf, command: &str, extra: &[&str]) -> String {
    uji_run_all(sandbox, tmp, &[command], extra)
}

/// `uji run` with a fake model that asks for each command in turn.
fn uji_run_all(sandbox: &Sandbox, tmp: &PathBuf, commands: &[&str], extra: &[&str]) -> String {
    use uji_fake_model::chat::ChatEvents;
    use uji_fake_model::{FakeModel, Script};
    let model = FakeModel::start();
    for (i, command) in commands.iter().enumerate() {
        let args = serde_json::json!({ "command": command }).to_string();
        model.push(Script::sse(
            ChatEvents::new("m")
                .tool_call(0, &format!("call_{i}"), "run_command", &args, 2)
                .finish("tool_calls")
                .done(),
        ));
    }
    model.push(Script::sse(
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

/// False (after saying so) when the kernel has no Landlock or this machine
/// no user namespaces (then the paths below are not protected, and uji
/// says so in a notice).
fn namespaces_or_skip(test: &str) -> bool {
    if !landlock_or_skip(test) {
        return false;
    }
    if uji_plugin_tools::sandbox::mounts::available() {
        return true;
    }
    eprintln!("SKIPPED {test}: this machine has no user namespaces");
    false
}

fn data(sandbox: &Sandbox) -> PathBuf {
    sandbox.work().parent().unwrap().join("data")
}

const ALLOW_TOUCH_AND_GIT: &str =
    r#"uji.tool.policy({ run_command = { allow = { "touch *", "git status" } } })"#;

#[test]
fn an_allowed_command_under_yes_cannot_write_outside_the_workspace() {
    if !landlock_or_skip("allowed command under --yes") {
        return;
    }
    let (sandbox, tmp) = sandbox(Some(ALLOW_TOUCH_AND_GIT));
    let outside = home(&sandbox).join("outside.txt");
    let command = format!("touch {} inside.txt", outside.display());
    let out = uji_run(&sandbox, &tmp, &command, &["--yes"]);
    assert!(
        !outside.exists(),
        "an allow rule never lifts the sandbox: {out}"
    );
    assert!(sandbox.work().join("inside.txt").exists(), "{out}");
    // Without --yes nobody could answer an ask: it ran because the rule
    // allowed it, and still in the sandbox.
    std::fs::remove_file(sandbox.work().join("inside.txt")).unwrap();
    let out = run_command(&sandbox, &tmp, &command, &[]);
    assert!(sandbox.work().join("inside.txt").exists(), "{out}");
    assert!(!outside.exists(), "{out}");
}

#[test]
fn git_config_written_in_the_sandbox_cannot_reach_a_later_git_status() {
    if !namespaces_or_skip("git config in the sandbox") {
        return;
    }
    let (sandbox, tmp) = sandbox(Some(ALLOW_TOUCH_AND_GIT));
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(sandbox.work())
        .status();
    if !git.is_ok_and(|s| s.success()) {
        eprintln!("SKIPPED git config in the sandbox: no git");
        return;
    }
    let config = sandbox.work().join(".git/config");
    let before = std::fs::read_to_string(&config).unwrap();
    let marker = home(&sandbox).join("x");
    let set = format!("git config core.fsmonitor 'touch {}'", marker.display());
    let hook = "echo 'touch ~/y' > .git/hooks/pre-commit; mv .git .git-old";
    let out = uji_run_all(&sandbox, &tmp, &[&set, hook, "git status"], &["--yes"]);
    assert_eq!(std::fs::read_to_string(&config).unwrap(), before, "{out}");
    assert!(
        !sandbox.work().join(".git/hooks/pre-commit").exists(),
        "{out}"
    );
    assert!(
        sandbox.work().join(".git/config").exists(),
        ".git stays: {out}"
    );
    assert!(out.contains("Read-only file system"), "{out}");
    assert!(!marker.exists(), "{out}");
    // Nothing outside the workspace either, even for the allowed git status.
    let out = run_command(&sandbox, &tmp, "git status", &[]);
    assert!(!marker.exists(), "{out}");
}

#[test]
fn a_sandboxed_command_cannot_read_keys_sessions_or_other_spill_files() {
    if !namespaces_or_skip("hidden data directory") {
        return;
    }
    let (sandbox, tmp) = sandbox(None);
    let data = data(&sandbox);
    std::fs::write(data.join("auth.json"), r#"{"openrouter":"sk-or-secret"}"#).unwrap();
    let other = data.join("spill/other-session");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("uji-output-1-1.log"), "other session's output").unwrap();
    let command = format!(
        "cat {auth}; base64 {auth}; cat {spill}; ls -A {data}; echo listed",
        auth = data.join("auth.json").display(),
        spill = other.join("uji-output-1-1.log").display(),
        data = data.display()
    );
    let out = run_command(&sandbox, &tmp, &command, &["--yes"]);
    assert!(!out.contains("sk-or-secret"), "{out}");
    assert!(!out.contains("c2stb3Itc2VjcmV0"), "not even encoded: {out}");
    assert!(!out.contains("other session's output"), "{out}");
    assert!(out.contains("No such file or directory"), "{out}");
    assert!(out.contains("listed"), "{out}");
    assert!(!out.contains("spill\n"), "the directory looks empty: {out}");
}

#[test]
fn a_sandboxed_command_cannot_write_init_lua() {
    if !namespaces_or_skip("read-only config directory") {
        return;
    }
    let lua = "-- mine\n";
    let (sandbox, tmp) = sandbox(Some(lua));
    let init = sandbox.config().join("init.lua");
    // Also with the config directory beneath a writable one ($TMPDIR here),
    // where Landlock alone would allow the write.
    let under_tmp = sandbox.root.path().to_path_buf();
    let command = format!(
        "echo 'uji.tool.sandbox({{ mode = \"off\" }})' >> {}; mkdir {}/plugins",
        init.display(),
        sandbox.config().display()
    );
    let out = run_command(&sandbox, &tmp, &command, &["--yes"]);
    assert_eq!(std::fs::read_to_string(&init).unwrap(), lua, "{out}");
    assert!(!sandbox.config().join("plugins").exists(), "{out}");
    let out = uji(&sandbox, &under_tmp)
        .args(["tool", "run", "run_command"])
        .arg(serde_json::json!({ "command": command }).to_string())
        .arg("--yes")
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert_eq!(
        std::fs::read_to_string(&init).unwrap(),
        lua,
        "{stdout}{stderr}"
    );
    assert!(stdout.contains("Read-only file system"), "{stdout}{stderr}");
}

#[test]
fn a_sandboxed_command_cannot_signal_uji() {
    if !landlock_or_skip("signal scoping") {
        return;
    }
    if uji_plugin_tools::sandbox::kernel_abi() < 6 {
        eprintln!("SKIPPED signal scoping: this kernel's Landlock is older than ABI 6");
        return;
    }
    // `$PPID` is never plain: with no deny rules `--yes` runs it.
    let (sandbox, tmp) = sandbox(Some(NO_DENY_RULES));
    let command = "kill -0 $PPID && echo signalled; kill -CONT $PPID && echo continued; \
                   sleep 0 & kill -0 $! && echo own-child-ok";
    let out = run_command(&sandbox, &tmp, command, &["--yes"]);
    assert!(
        !out.contains("signalled") && !out.contains("continued"),
        "{out}"
    );
    assert!(out.contains("Operation not permitted"), "{out}");
    assert!(
        out.contains("own-child-ok"),
        "its own processes it may: {out}"
    );
}

#[test]
fn only_a_persons_allow_once_in_the_screen_lifts_the_sandbox() {
    use uji_tests::scripted::{assert_ok, drive_with_env, of_type};
    if !landlock_or_skip("allow once") {
        return;
    }
    use uji_fake_model::FakeModel;
    let model = FakeModel::start();
    let (sandbox, tmp) = sandbox(Some(r#"uji.model.use("openrouter/m")"#));
    let once = home(&sandbox).join("once.txt");
    let session = home(&sandbox).join("session.txt");
    let call = |id: &str, path: &PathBuf| {
        use uji_fake_model::Script;
        use uji_fake_model::chat::ChatEvents;
        let args = serde_json::json!({ "command": format!("touch {}", path.display()) });
        Script::sse(
            ChatEvents::new("m")
                .tool_call(0, id, "run_command", &args.to_string(), 2)
                .finish("tool_calls")
                .done(),
        )
    };
    model
        .push(call("c1", &once))
        .push(uji_tests::scripted::answer("one"))
        .push(call("c2", &session))
        .push(uji_tests::scripted::answer("two"));
    let answer = |id: &str, decision: &str| {
        serde_json::json!({"send": {"id": id, "type": "approval", "decision": decision},
                           "from_last": ["call_id"]})
    };
    let say =
        |id: &str| serde_json::json!({"send": {"id": id, "type": "user_message", "text": "go"}});
    let wait = |event: &str| serde_json::json!({"wait": event});
    let script = serde_json::json!([
        say("a"),
        wait("approval_request"),
        answer("b", "allow_once"),
        wait("turn_finished"),
        say("c"),
        wait("approval_request"),
        answer("d", "allow_session"),
        wait("turn_finished"),
    ]);
    let base_url = model.base_url();
    let tmp = tmp.display().to_string();
    let env = [
        ("OPENROUTER_API_KEY", "sk-test"),
        ("OPENROUTER_BASE_URL", base_url.as_str()),
        ("TMPDIR", tmp.as_str()),
    ];
    let args = ["--frontend", "scripted"];
    let (output, events) = drive_with_env(&sandbox, &args, &env, script);
    assert_ok(&output, &events);
    let questions = of_type(&events, "approval_request");
    assert!(
        questions[0]["question"]
            .as_str()
            .unwrap()
            .ends_with("(once: no sandbox; for the session: sandbox workspace-write, network on)"),
        "{questions:#?}"
    );
    assert!(once.exists(), "allowed once by a person: no sandbox");
    assert!(!session.exists(), "allowed for the session: sandboxed");
}

/// Issue 28: a command the shipped defaults allow because it only reads
/// runs in the sandbox like any command nobody answered (Landlock sets
/// no_new_privs on it); with the sandbox off, the same command shows it
/// unset.
#[test]
fn a_read_only_command_the_defaults_allow_runs_in_the_sandbox() {
    if !landlock_or_skip("read-only command sandboxed") {
        return;
    }
    let lua = "require(\"uji.defaults\")\nuji.tool.roots({ \"/proc\" })\n";
    let (sandbox, tmp) = sandbox(Some(lua));
    let status = "grep NoNewPrivs /proc/self/status";
    let out = run_command(&sandbox, &tmp, status, &[]);
    assert!(out.contains("NoNewPrivs:\t1"), "{out}");
    let out = run_command(&sandbox, &tmp, status, &["--sandbox", "off"]);
    assert!(out.contains("NoNewPrivs:\t0"), "{out}");
}

/// `network = { allow = { … } }`: a sandboxed command reaches the listed
/// hosts through uji's proxy and no other: a host not listed gets 403 and
/// the call's result says so, and a connect that goes around the proxy is
/// refused by the kernel. The server is on loopback under two names:
/// `localhost` (listed) and `127.0.0.1` (not).
#[test]
fn a_host_allow_list_lets_commands_reach_only_those_hosts_through_the_proxy() {
    if uji_plugin_tools::sandbox::kernel_abi() < 4 {
        eprintln!("SKIPPED host allow list: this kernel's Landlock cannot restrict TCP (ABI 4)");
        return;
    }
    let server = uji_fake_model::FakeModel::start();
    server.push(uji_fake_model::Script::status(
        200,
        "hello-from-server",
        &[],
    ));
    let port = server.addr().port();
    let lua = r#"uji.tool.sandbox({ network = { allow = { "localhost" } } })"#;
    let (sandbox, tmp) = sandbox(Some(lua));
    let fetch = |host: &str| {
        format!(
            "python3 -c 'import urllib.request; print(urllib.request.urlopen(\"http://{host}:{port}/x\").read().decode())'"
        )
    };
    let allowed = run_command(&sandbox, &tmp, &fetch("localhost"), &["--yes"]);
    if allowed.contains("python3: not found") {
        eprintln!("SKIPPED host allow list: no python3");
        return;
    }
    assert!(allowed.contains("hello-from-server"), "{allowed}");
    let refused = run_command(&sandbox, &tmp, &fetch("127.0.0.1"), &["--yes"]);
    assert!(refused.contains("HTTP Error 403"), "{refused}");
    assert!(
        refused.contains("network: 127.0.0.1 is not allowed by your sandbox rules"),
        "{refused}"
    );
    let direct = format!(
        "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port})); print(\"connected\")'"
    );
    let around = run_command(&sandbox, &tmp, &direct, &["--yes"]);
    assert!(
        !around.contains("connected") && around.contains("PermissionError"),
        "{around}"
    );
    let reached: Vec<String> = server.requests().iter().map(|r| r.path.clone()).collect();
    assert_eq!(
        reached,
        ["/x"],
        "only the allowed request reached the server"
    );
    let check = uji(&sandbox, &tmp)
        .args(["policy", "check", "run_command", "make"])
        .output()
        .unwrap();
    let (stdout, _) = text(&check);
    assert!(stdout.contains("network only localhost"), "{stdout}");
}

/// `uji run --network HOSTS` sets the allow list for one run (over
/// init.lua); a host that is not a host name is refused before the run.
#[test]
fn uji_run_network_flag_sets_the_allow_list_for_one_run() {
    if uji_plugin_tools::sandbox::kernel_abi() < 4 {
        eprintln!("SKIPPED --network: this kernel's Landlock cannot restrict TCP (ABI 4)");
        return;
    }
    let server = uji_fake_model::FakeModel::start();
    let port = server.addr().port();
    let (sandbox, _tmp) = sandbox(None);
    let fetch = format!(
        "python3 -c 'import urllib.request; urllib.request.urlopen(\"http://127.0.0.1:{port}/\")'"
    );
    let (output, results) = uji_tests::chat::run_commands(
        &sandbox,
        &[&fetch],
        &["--yes", "--network", "localhost,crates.io"],
        &[],
    );
    assert!(output.status.success(), "{:?}", text(&output));
    if results[0].contains("python3: not found") {
        eprintln!("SKIPPED --network: no python3");
        return;
    }
    assert!(
        results[0].contains("network: 127.0.0.1 is not allowed by your sandbox rules"),
        "{results:?}"
    );
    assert!(server.requests().is_empty());
    let bad = sandbox
        .uji()
        .args(["run", "--network", "crates io", "hi"])
        .output()
        .unwrap();
    let (_, stderr) = text(&bad);
    assert_eq!(bad.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("is not a host"), "{stderr}");
}
