//! The MCP plugin with the real `uji` binary and a real MCP server (the
//! rmcp server of tests/mcp-server over stdio), every call through the gate
//! with `uji tool run` or `uji mcp list`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use uji_fake_model::chat::ChatEvents;
use uji_fake_model::{FakeModel, Script};
use uji_tests::scripted::{answer, assert_ok, drive, of_type};
use uji_tests::{Sandbox, text, uji_bin};

/// An MCP tool's text as the model reads it: inside the untrusted marker
/// naming the tool (docs/web.md); the text within.
fn marked<'a>(stdout: &'a str, tool: &str) -> &'a str {
    let head = format!("<untrusted source=\"mcp\" tool=\"{tool}\">\n");
    stdout
        .trim()
        .strip_prefix(head.as_str())
        .and_then(|rest| rest.strip_suffix("</untrusted>"))
        .unwrap_or_else(|| panic!("not marked as untrusted from {tool}: {stdout}"))
        .trim()
}
fn server_bin() -> PathBuf {
    uji_bin().with_file_name("uji-test-mcp-server")
}

/// A sandbox whose init.lua adds the test server as `t` (and waits for it),
/// then `extra` Lua.
fn sandbox_with(extra: &str) -> Sandbox {
    let sandbox = Sandbox::new();
    let marks = sandbox.work().join("marks");
    let init = format!(
        "uji.mcp.add('t', {{ command = {:?}, env = {{ MCP_TEST_MARKS = {:?} }} }})\n\
         uji.mcp.list({{ wait = 10 }})\n{extra}\n",
        server_bin().display().to_string(),
        marks.display().to_string(),
    );
    std::fs::write(sandbox.config().join("init.lua"), init).unwrap();
    sandbox
}

fn uji(sandbox: &Sandbox, args: &[&str]) -> (Output, String, String) {
    let output = sandbox.uji().args(args).output().unwrap();
    let (stdout, stderr) = text(&output);
    (output, stdout, stderr)
}

fn marks(sandbox: &Sandbox) -> String {
    std::fs::read_to_string(sandbox.work().join("marks")).unwrap_or_default()
}

#[test]
fn tools_are_listed_as_server_and_tool_and_ask_by_default() {
    let sandbox = sandbox_with("");
    // A listing starts no server: it says where the tools will be.
    let (output, stdout, stderr) = uji(&sandbox, &["tool", "list"]);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stdout.contains("t__*\t-\tmcp\tthe tools of MCP server t, listed once a session starts it"),
        "{stdout}"
    );
    assert!(!stdout.contains("t__echo"), "{stdout}");
    assert_eq!(marks(&sandbox), "", "no server started for a listing");
    // `uji mcp list` starts them; the tools are then listed like any other.
    let (_, stdout, _) = uji(&sandbox, &["mcp", "list"]);
    assert!(stdout.contains("t\tstdio\trunning\tt__echo,"), "{stdout}");
    // `uji tool run` of a tool nobody listed yet starts the servers.
    let (output, stdout, stderr) = uji(&sandbox, &["tool", "run", "--yes", "t__echo", "{}"]);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(marked(&stdout, "t__echo"), "echo:");
    // Headless without --yes: the gate asks, nobody answers, so it is denied,
    // read-only hint or not.
    let (output, stdout, _) = uji(&sandbox, &["tool", "run", "t__echo", r#"{"text": "hi"}"#]);
    assert!(!output.status.success());
    assert!(
        stdout.contains("denied: t__echo needs approval"),
        "{stdout}"
    );
    let (output, stdout, stderr) = uji(
        &sandbox,
        &["tool", "run", "--yes", "t__echo", r#"{"text": "hi"}"#],
    );
    assert!(output.status.success(), "{stderr}");
    assert_eq!(marked(&stdout, "t__echo"), "echo: hi");
}

/// The summary lists the arguments in key order, whatever order the model
/// wrote them in, so a rule on it matches every time.
#[test]
fn the_argument_summary_is_in_key_order() {
    let sandbox = sandbox_with("uji.tool.policy({ t__echo = { deny = { 'a=1, text=*' } } })");
    let (output, stdout, _) = uji(
        &sandbox,
        &[
            "tool",
            "run",
            "--yes",
            "t__echo",
            r#"{"text": "hi", "a": 1}"#,
        ],
    );
    assert!(!output.status.success(), "{stdout}");
    assert!(stdout.contains("denied"), "{stdout}");
}

#[test]
fn policy_rules_apply_to_the_argument_summary() {
    let sandbox = sandbox_with(
        "uji.tool.policy({ t__echo = { allow = { 'text=ok*' }, deny = { 'text=rm*' } } })",
    );
    let (output, stdout, _) = uji(&sandbox, &["tool", "run", "t__echo", r#"{"text": "okay"}"#]);
    assert!(output.status.success(), "{stdout}");
    let (output, stdout, _) = uji(
        &sandbox,
        &["tool", "run", "--yes", "t__echo", r#"{"text": "rm -rf"}"#],
    );
    assert!(!output.status.success());
    assert!(stdout.contains("denied"), "{stdout}");
    // The declared policy of every tool of one server, from its config.
    let sandbox = Sandbox::new();
    let init = format!(
        "uji.mcp.add('t', {{ command = {:?}, policy = 'allow' }})\nuji.mcp.list({{ wait = 10 }})\n",
        server_bin().display().to_string()
    );
    std::fs::write(sandbox.config().join("init.lua"), init).unwrap();
    let (output, stdout, _) = uji(&sandbox, &["tool", "run", "t__echo", r#"{"text": "x"}"#]);
    assert!(output.status.success(), "{stdout}");
}

#[test]
fn images_errors_and_structured_content() {
    let sandbox = sandbox_with("");
    let (output, stdout, _) = uji(&sandbox, &["tool", "run", "--yes", "t__fail", "{}"]);
    assert!(!output.status.success());
    assert_eq!(stdout.trim(), "error: it broke");
    let (output, stdout, _) = uji(&sandbox, &["tool", "run", "--yes", "t__structured", "{}"]);
    assert!(output.status.success());
    assert_eq!(marked(&stdout, "t__structured"), r#"{"answer":42}"#);
    let (output, stdout, stderr) = uji(&sandbox, &["tool", "run", "--yes", "t__picture", "{}"]);
    assert!(output.status.success(), "{stderr}");
    assert!(stdout.contains("a picture"), "{stdout}");
}

#[test]
fn mcp_list_shows_state_tools_and_errors_and_stderr_goes_to_the_log() {
    let sandbox = sandbox_with(&format!(
        "uji.mcp.add('bad', {{ command = '/nonexistent/mcp-server' }})\n\
         uji.mcp.add('nocwd', {{ command = {:?}, cwd = '/nonexistent-dir' }})",
        server_bin().display().to_string()
    ));
    let (output, stdout, stderr) = uji(&sandbox, &["mcp", "list"]);
    assert!(output.status.success(), "{stderr}");
    assert!(stdout.contains("t\tstdio\trunning\tt__echo,"), "{stdout}");
    assert!(
        stdout.contains(
            "bad\tstdio\tfailed\t\tlast error: could not start `/nonexistent/mcp-server`"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("nocwd\tstdio\tfailed\t\tlast error: could not start"),
        "{stdout}"
    );
    assert!(!stderr.contains("test server: started"), "{stderr}");
    let (_, json, _) = uji(&sandbox, &["mcp", "list", "--json"]);
    let json: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(json[2]["name"], "t");
    assert_eq!(json[2]["state"], "running");
    assert_eq!(json[2]["tools"][0], "t__echo");
    let log = std::fs::read_to_string(Path::new(&sandbox.env()[3].1).join("logs/uji.log")).unwrap();
    assert!(
        log.contains("mcp server t: stderr: test server: started"),
        "{log}"
    );
}

#[test]
fn a_crashed_server_fails_its_call_with_a_clear_message() {
    let sandbox = sandbox_with("");
    let (output, stdout, _) = uji(&sandbox, &["tool", "run", "--yes", "t__crash", "{}"]);
    assert!(!output.status.success());
    assert!(stdout.starts_with("error: t__crash: "), "{stdout}");
}

#[test]
fn no_server_process_is_left_after_exit() {
    let sandbox = sandbox_with("");
    let (output, _, _) = uji(
        &sandbox,
        &["tool", "run", "--yes", "t__echo", r#"{"text": "a"}"#],
    );
    assert!(output.status.success());
    std::thread::sleep(std::time::Duration::from_millis(200));
    let pids: Vec<String> = marks(&sandbox)
        .lines()
        .filter_map(|l| l.strip_prefix("started "))
        .map(str::to_string)
        .collect();
    assert!(!pids.is_empty());
    for pid in pids {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        assert!(
            stat.is_empty() || stat.contains(") Z "),
            "server {pid} still runs: {stat}"
        );
    }
}

/// A project whose `.mcp.json` names the test server as `proj`.
fn project_sandbox() -> Sandbox {
    let sandbox = Sandbox::new();
    write_project(&sandbox, &[]);
    sandbox
}

fn write_project(sandbox: &Sandbox, args: &[&str]) {
    let file = json!({"mcpServers": {"proj": {
        "command": server_bin(),
        "args": args,
        "env": {"MCP_TEST_MARKS": sandbox.work().join("marks")},
    }}});
    std::fs::write(sandbox.work().join(".mcp.json"), file.to_string()).unwrap();
}

#[test]
fn a_projects_mcp_json_starts_only_once_trusted() {
    let sandbox = project_sandbox();
    let (_, stdout, stderr) = uji(&sandbox, &["mcp", "list"]);
    assert_eq!(stdout.trim(), "no MCP servers configured");
    assert!(
        stderr.contains("(proj) are not started: the file is not trusted; trust it with `uji mcp trust`, UJI_MCP_TRUST_PROJECT=1 or uji.mcp.trust_project() in init.lua"),
        "{stderr}"
    );
    let output = sandbox
        .uji()
        .args(["mcp", "list"])
        .env("UJI_MCP_TRUST_PROJECT", "1")
        .output()
        .unwrap();
    let (stdout, _) = text(&output);
    assert!(
        stdout.contains("proj\tstdio\trunning\tproj__echo,"),
        "{stdout}"
    );
    std::fs::write(
        sandbox.config().join("init.lua"),
        "uji.mcp.trust_project()\n",
    )
    .unwrap();
    let (_, stdout, _) = uji(&sandbox, &["mcp", "list"]);
    assert!(stdout.contains("proj\tstdio\trunning"), "{stdout}");
    // Neither is remembered.
    assert!(!sandbox.root.path().join("data/trust.json").exists());
}

#[test]
fn uji_mcp_trust_is_remembered_until_the_file_changes_and_can_be_revoked() {
    use std::os::unix::fs::PermissionsExt;
    let sandbox = project_sandbox();
    let (output, stdout, stderr) = uji(&sandbox, &["mcp", "trust"]);
    assert!(output.status.success(), "{stderr}");
    assert!(stdout.contains("trusted "), "{stdout}");
    assert!(stdout.contains("(servers: proj)"), "{stdout}");
    let trust = sandbox.root.path().join("data/trust.json");
    let mode = std::fs::metadata(&trust).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "owner-only");
    let (_, stdout, stderr) = uji(&sandbox, &["mcp", "list"]);
    assert!(stdout.contains("proj\tstdio\trunning"), "{stdout}");
    assert!(!stderr.contains("not trusted"), "{stderr}");
    // A changed file is asked about again: headless, it is skipped.
    write_project(&sandbox, &["--changed"]);
    let (_, stdout, stderr) = uji(&sandbox, &["mcp", "list"]);
    assert_eq!(stdout.trim(), "no MCP servers configured");
    assert!(stderr.contains("the file is not trusted"), "{stderr}");
    uji(&sandbox, &["mcp", "trust"]);
    let (_, stdout, _) = uji(&sandbox, &["mcp", "list"]);
    assert!(stdout.contains("proj\tstdio\trunning"), "{stdout}");
    let (output, stdout, _) = uji(&sandbox, &["mcp", "trust", "--revoke"]);
    assert!(output.status.success());
    assert!(stdout.contains("forgot the trust decision"), "{stdout}");
    let (_, stdout, stderr) = uji(&sandbox, &["mcp", "list"]);
    assert_eq!(stdout.trim(), "no MCP servers configured");
    assert!(stderr.contains("the file is not trusted"), "{stderr}");
    // Without a .mcp.json there is nothing to trust, and the error says so.
    std::fs::remove_file(sandbox.work().join(".mcp.json")).unwrap();
    let (output, _, stderr) = uji(&sandbox, &["mcp", "trust"]);
    assert!(!output.status.success());
    assert!(stderr.contains("there is no .mcp.json in "), "{stderr}");
}

#[test]
fn a_headless_run_skips_an_untrusted_project_with_a_notice_and_uses_a_trusted_one() {
    let model = FakeModel::start();
    model
        .push(answer("one"))
        .push(call("c1", "proj__echo", json!({"text": "p"})))
        .push(answer("two"));
    let sandbox = project_sandbox();
    let provider = format!(
        "uji.provider.add({{ id = 'fake', wire = 'openai-chat', base_url = '{}', models = {{ 'm1' }} }})\n\
         uji.model.use('fake/m1')\n",
        model.base_url()
    );
    std::fs::write(sandbox.config().join("init.lua"), provider).unwrap();
    let run = || {
        let output = sandbox
            .uji()
            .args(["run", "--yes", "go"])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let (stdout, stderr) = text(&output);
        assert!(output.status.success(), "{stderr}");
        (stdout, stderr)
    };
    let (_, stderr) = run();
    assert!(
        stderr.contains(
            "(proj) are not started: the file is not trusted; trust it with `uji mcp trust`"
        ),
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("not trusted").count(),
        1,
        "one line: {stderr}"
    );
    assert_eq!(marks(&sandbox), "");
    assert!(!model.requests()[0].body_text().contains("proj__echo"));
    uji(&sandbox, &["mcp", "trust"]);
    let (stdout, stderr) = run();
    assert!(!stderr.contains("not trusted"), "{stderr}");
    assert!(stdout.contains("two"), "{stdout}");
    // A headless run waits for the servers: the first request offers them.
    assert!(model.requests()[1].body_text().contains("proj__echo"));
    assert!(model.requests()[2].body_text().contains("echo: p"));
}

/// Each listed command runs no session, so no server may start.
#[test]
fn commands_that_run_no_session_start_no_server() {
    let sandbox = sandbox_with("");
    for args in [
        &["tool", "list"][..],
        &["plugins"],
        &["policy", "check", "t__echo", "text=x"],
        &["models", "--all"],
        &["list"],
    ] {
        let (output, _, stderr) = uji(&sandbox, args);
        assert!(output.status.success(), "{args:?}: {stderr}");
        assert_eq!(marks(&sandbox), "", "{args:?} started a server");
    }
    let (_, stdout, _) = uji(&sandbox, &["mcp", "list"]);
    assert!(
        stdout.contains("t\trunning") || stdout.contains("t\tstdio\trunning"),
        "{stdout}"
    );
    assert_eq!(marks(&sandbox).matches("started").count(), 1);
}

#[test]
fn a_server_dies_with_uji_even_on_sigkill() {
    let model = FakeModel::start();
    // The model never answers within the test: uji is killed meanwhile.
    model.push(answer("late").delay(Duration::from_secs(60)));
    let sandbox = session_sandbox(&model);
    let mut child = sandbox
        .uji()
        .args(["run", "--yes", "go"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = wait_for(
        || marks(&sandbox).contains("started "),
        Duration::from_secs(10),
    );
    assert!(started, "the server never started");
    let pid = server_pids(&sandbox)[0].clone();
    // Its tools were listed (the request went out), so it runs.
    assert!(wait_for(
        || !model.requests().is_empty(),
        Duration::from_secs(10)
    ));
    assert!(alive(&pid), "server {pid} should run while uji does");
    child.kill().unwrap(); // SIGKILL: nothing of uji's runs at exit.
    child.wait().unwrap();
    assert!(
        wait_for(|| !alive(&pid), Duration::from_secs(5)),
        "server {pid} outlived uji"
    );
}

fn wait_for(condition: impl Fn() -> bool, within: Duration) -> bool {
    let deadline = std::time::Instant::now() + within;
    while std::time::Instant::now() < deadline {
        if condition() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    condition()
}

fn server_pids(sandbox: &Sandbox) -> Vec<String> {
    marks(sandbox)
        .lines()
        .filter_map(|l| l.strip_prefix("started "))
        .map(str::to_string)
        .collect()
}

/// Running: a /proc entry that is not a zombie.
fn alive(pid: &str) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    !stat.is_empty() && !stat.contains(") Z ")
}

#[test]
fn a_plugin_adds_a_server_through_the_mcp_add_host_service() {
    let model = FakeModel::start();
    let sandbox = session_sandbox(&model);
    std::fs::write(
        sandbox.config().join("init.lua"),
        format!(
            "uji.provider.add({{ id = 'fake', wire = 'openai-chat', base_url = '{}', models = {{ 'm1' }} }})\n\
             uji.model.use('fake/m1')\n",
            model.base_url()
        ),
    )
    .unwrap();
    let spec = json!({"name": "ed", "spec": {
        "command": server_bin(), "args": [], "env": {"MCP_TEST_MARKS": sandbox.work().join("marks")}, "cwd": sandbox.work(),
    }});
    let bad = json!({"name": "bad", "spec": {"command": "x", "url": "http://127.0.0.1:1/mcp"}});
    let script = json!([
        {"send": {"id": "a", "type": "run_command", "name": "call-service", "args": format!("mcp.add {spec}")}},
        {"wait": "ack", "where": {"op_id": "a"}},
        {"send": {"id": "b", "type": "run_command", "name": "call-service", "args": format!("mcp.add {bad}")}},
        {"wait": "error", "where": {"op_id": "b"}},
    ]);
    let (output, events) = drive(&sandbox, &[], script);
    assert_ok(&output, &events);
    let ack = of_type(&events, "ack");
    assert!(ack[0].to_string().contains("true"), "{ack:?}");
    let errors = of_type(&events, "error");
    assert!(
        errors[0]
            .to_string()
            .contains("server bad: give either `command` (a stdio server) or `url`"),
        "{errors:?}"
    );
    // The session had started: the added server started at once.
    assert!(wait_for(
        || marks(&sandbox).contains("started"),
        Duration::from_secs(10)
    ));
}

/// init.lua for a session on the fake model with the test server as `t`.
fn session_sandbox(model: &FakeModel) -> Sandbox {
    let sandbox = sandbox_with("");
    let init = std::fs::read_to_string(sandbox.config().join("init.lua")).unwrap();
    let provider = format!(
        "uji.provider.add({{ id = 'fake', wire = 'openai-chat', base_url = '{}', models = {{ 'm1' }} }})\n\
         uji.model.use('fake/m1')\n",
        model.base_url()
    );
    std::fs::write(sandbox.config().join("init.lua"), provider + &init).unwrap();
    sandbox
}

fn call(id: &str, name: &str, args: Value) -> Script {
    Script::sse(
        ChatEvents::new("m1")
            .tool_call(0, id, name, &args.to_string(), 2)
            .finish("tool_calls")
            .done(),
    )
}

#[test]
fn a_crashed_server_restarts_and_list_changed_adds_tools_in_one_session() {
    let model = FakeModel::start();
    model
        .push(call("c1", "t__crash", json!({})))
        .push(call("c2", "t__echo", json!({"text": "back"})).delay(Duration::from_millis(2500)))
        .push(call("c3", "t__grow", json!({})))
        .push(call("c4", "t__extra", json!({"text": "new"})).delay(Duration::from_millis(300)))
        .push(answer("done"));
    let sandbox = session_sandbox(&model);
    let output = sandbox
        .uji()
        .args(["run", "--json", "--yes", "go"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert!(stdout.contains("echo: back"), "{stdout}");
    assert!(stdout.contains("echo: new"), "{stdout}");
    assert_eq!(marks(&sandbox).matches("started").count(), 2);
    // The requests after the refresh offer the new tool (the refresh runs
    // when the notification arrives, so the request right after the call
    // that sent it may still be built without it).
    assert!(model.requests()[4].body_text().contains("t__extra"));
    assert!(!model.requests()[2].body_text().contains("t__extra"));
}

#[test]
fn progress_is_shown_and_an_interrupt_cancels_the_call() {
    let model = FakeModel::start();
    model
        .push(call("c1", "t__slow", json!({})))
        .push(answer("ok"));
    let sandbox = session_sandbox(&model);
    let init = sandbox.config().join("init.lua");
    let lua = std::fs::read_to_string(&init).unwrap();
    std::fs::write(
        &init,
        lua + "uji.tool.policy({ t__slow = { default = 'allow' } })\n",
    )
    .unwrap();
    let script = json!([
        {"send": {"id": "a", "type": "user_message", "text": "go"}},
        {"wait": "progress"},
        {"send": {"id": "i", "type": "interrupt"}},
        {"wait": "turn_finished"},
    ]);
    let (output, events) = drive(&sandbox, &[], script);
    assert_ok(&output, &events);
    let progress = of_type(&events, "progress");
    assert!(
        progress
            .iter()
            .any(|e| e.to_string().contains("working (1/3)")),
        "{progress:?}"
    );
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !marks(&sandbox).contains("cancelled") && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(marks(&sandbox).contains("cancelled"), "{}", marks(&sandbox));
}

/// The test server over streamable HTTP, killed when dropped.
struct HttpServer(std::process::Child, u16);

impl HttpServer {
    fn start() -> HttpServer {
        HttpServer::on_port(0)
    }

    /// On `port` (0: a free one).
    fn on_port(port: u16) -> HttpServer {
        use std::io::BufRead;
        let mut child = std::process::Command::new(server_bin())
            .args(["--http", "--port", &port.to_string()])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        let stdout = child.stdout.take().unwrap();
        std::io::BufReader::new(stdout)
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .strip_prefix("listening ")
            .unwrap()
            .parse()
            .unwrap();
        HttpServer(child, port)
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_streamable_http_server_with_headers() {
    let server = HttpServer::start();
    let sandbox = Sandbox::new();
    let init = format!(
        "uji.mcp.add('h', {{ url = 'http://127.0.0.1:{}/mcp', headers = {{ Authorization = 'Bearer t0k', ['X-Extra'] = '1' }} }})\n\
         uji.mcp.list({{ wait = 10 }})\n",
        server.1
    );
    std::fs::write(sandbox.config().join("init.lua"), init).unwrap();
    let (output, stdout, stderr) = uji(&sandbox, &["mcp", "list"]);
    assert!(output.status.success(), "{stderr}");
    assert!(stdout.contains("h\thttp\trunning\th__echo,"), "{stdout}");
    let (output, stdout, _) = uji(
        &sandbox,
        &["tool", "run", "--yes", "h__echo", r#"{"text": "web"}"#],
    );
    assert!(output.status.success(), "{stdout}");
    assert_eq!(marked(&stdout, "h__echo"), "echo: web");
}

#[test]
fn a_streamable_http_server_that_goes_away_and_comes_back_is_reconnected() {
    let server = HttpServer::start();
    let port = server.1;
    let model = FakeModel::start();
    model
        .push(call("c1", "h__echo", json!({"text": "before"})))
        // (A delay is per streamed event: about six of them per call.)
        .push(call("c2", "h__echo", json!({"text": "gone"})).delay(Duration::from_millis(100)))
        // Time for the server to come back and uji to reconnect.
        .push(call("c3", "h__echo", json!({"text": "after"})).delay(Duration::from_millis(500)))
        .push(answer("done"));
    let sandbox = Sandbox::new();
    let init = format!(
        "uji.provider.add({{ id = 'fake', wire = 'openai-chat', base_url = '{}', models = {{ 'm1' }} }})\n\
         uji.model.use('fake/m1')\n\
         uji.mcp.add('h', {{ url = 'http://127.0.0.1:{port}/mcp' }})\n",
        model.base_url()
    );
    std::fs::write(sandbox.config().join("init.lua"), init).unwrap();
    let child = sandbox
        .uji()
        .args(["run", "--json", "--yes", "go"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The first call's result went back to the model: now the server goes.
    assert!(wait_for(
        || model.requests().len() >= 2,
        Duration::from_secs(15)
    ));
    assert!(model.requests()[1].body_text().contains("echo: before"));
    drop(server);
    // The call made while it is away fails, saying so.
    assert!(wait_for(
        || model.requests().len() >= 3,
        Duration::from_secs(15)
    ));
    let gone = model.requests()[2].body_text();
    assert!(
        gone.contains("error: h__echo: MCP server h could not be reached (")
            && gone.contains("uji is reconnecting, try again in a few seconds"),
        "{gone}"
    );
    let _back = HttpServer::on_port(port);
    let output = child.wait_with_output().unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert!(stdout.contains("echo: after"), "{stdout}\n{stderr}");
    // It was connected again (and its tools listed again), not just retried.
    let log = std::fs::read_to_string(sandbox.root.path().join("data/logs/uji.log")).unwrap();
    assert!(log.contains("mcp server h: reconnecting: "), "{log}");
    assert_eq!(log.matches("mcp server h: 7 tools").count(), 2, "{log}");
}

/// A published server through npx, where Node is installed (the npm
/// registry must be reachable).
#[test]
fn a_published_server_through_npx() {
    let has_npx = std::process::Command::new("npx")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_npx {
        println!("SKIPPED a_published_server_through_npx: npx is not installed");
        return;
    }
    let sandbox = Sandbox::new();
    let init = "uji.mcp.add('ev', { command = 'npx', args = { '-y', '@modelcontextprotocol/server-everything' }, timeout = 120 })\n\
                uji.mcp.list({ wait = 120 })\n";
    std::fs::write(sandbox.config().join("init.lua"), init).unwrap();
    let (_, stdout, _) = uji(&sandbox, &["mcp", "list"]);
    if stdout.contains("\tfailed\t") {
        println!("SKIPPED a_published_server_through_npx: the server did not start: {stdout}");
        return;
    }
    assert!(
        stdout.contains("ev\tstdio\trunning\t") && stdout.contains("ev__echo"),
        "{stdout}"
    );
    let (output, stdout, _) = uji(
        &sandbox,
        &[
            "tool",
            "run",
            "--yes",
            "ev__echo",
            r#"{"message": "hello"}"#,
        ],
    );
    assert!(output.status.success(), "{stdout}");
    assert!(stdout.contains("hello"), "{stdout}");
}

#[test]
fn the_mcp_slash_command_lists_the_servers() {
    let model = FakeModel::start();
    let sandbox = session_sandbox(&model);
    model.push(answer("hi"));
    // Servers start with the session, in the background; its first turn
    // waits for them (a few seconds at most).
    let script = json!([
        {"send": {"id": "u", "type": "user_message", "text": "hello"}},
        {"wait": "turn_finished"},
        {"send": {"id": "m", "type": "run_command", "name": "mcp", "args": ""}},
        {"wait": "ack", "where": {"op_id": "m"}},
    ]);
    let (output, events) = drive(&sandbox, &[], script);
    assert_ok(&output, &events);
    let ack = of_type(&events, "ack");
    let text = ack.iter().find(|a| a["op_id"] == "m").unwrap().to_string();
    assert!(
        text.contains("t (stdio) running: 7 tools [t__echo, "),
        "{text}"
    );
}

#[test]
fn lua_remove_list_and_bad_specs() {
    let sandbox = sandbox_with(
        "local before = uji.mcp.list()\n\
         assert(before[1].name == 't' and before[1].state == 'configured' and #before[1].tools == 0)\n\
         assert(uji.mcp.remove('t') == true)\n\
         assert(uji.mcp.remove('t') == false)\n\
         uji.mcp.add('x', { comand = 'a' })\n",
    );
    let (output, stdout, stderr) = uji(&sandbox, &["mcp", "list"]);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "no MCP servers configured");
    assert!(
        stderr.contains("uji.mcp.add: server x: unknown field `comand`"),
        "{stderr}"
    );
    let (_, stdout, _) = uji(&sandbox, &["tool", "list"]);
    assert!(!stdout.contains("t__echo"), "{stdout}");
}

#[test]
fn an_image_result_reaches_the_model_as_an_image() {
    let model = FakeModel::start();
    model
        .push(call("c1", "t__picture", json!({})))
        .push(answer("seen"));
    let sandbox = session_sandbox(&model);
    let output = sandbox
        .uji()
        .args(["run", "--json", "--yes", "look"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success(), "{:?}", text(&output));
    let body = model.requests()[1].body_text();
    assert!(body.contains("data:image/png;base64,iVBORw0KGgo"), "{body}");
}

/// The interface asks whether to trust a project's `.mcp.json` (listing
/// its servers and what they run), remembers "trust", and asks again once
/// the file changed.
#[test]
fn the_interface_asks_to_trust_a_project_and_remembers_the_answer() {
    use uji_tests::tty::Tty;
    let model = FakeModel::start();
    let sandbox = project_sandbox();
    let init = format!(
        "uji.provider.add({{ id = 'fake', wire = 'openai-chat', base_url = '{}', models = {{ 'm1' }} }})\n\
         uji.model.use('fake/m1')\n",
        model.base_url()
    );
    std::fs::write(sandbox.config().join("init.lua"), init).unwrap();
    let plugins = uji_tests::plugin_path(&[
        "uji_plugin_tui",
        "uji_plugin_openai_chat",
        "uji_plugin_lua",
        "uji_plugin_mcp",
    ]);
    let open = || {
        let cmd = sandbox
            .uji_tty()
            .env("UJI_PLUGIN_PATH", plugins.clone())
            .then_stty();
        Tty::spawn(cmd, 30, 100)
    };
    let mut tty = open();
    let screen = tty.wait_for_question("Trust it: start these servers");
    assert!(screen.contains("starts 1 MCP server(s)"), "{screen}");
    assert!(screen.contains("proj"), "{screen}");
    assert!(
        screen.contains("uji-test-mcp-server"),
        "the command is shown: {screen}"
    );
    assert_eq!(marks(&sandbox), "", "nothing starts before the answer");
    tty.press("a");
    assert!(wait_for(
        || marks(&sandbox).contains("started"),
        Duration::from_secs(10)
    ));
    let screen = mcp_screen(&mut tty, "proj (stdio) running: 7 tools");
    assert!(screen.contains("proj__echo"), "{screen}");
    tty.quit_with_ctrl_c();
    // Remembered: the next start asks nothing and starts the server.
    let mut tty = open();
    tty.wait_for_text("Ask uji anything");
    assert!(wait_for(
        || server_pids(&sandbox).len() == 2,
        Duration::from_secs(10)
    ));
    assert!(!tty.screen().contains("Trust it"), "{}", tty.screen());
    tty.quit_with_ctrl_c();
    // A changed file is asked about again; "don't trust" starts nothing.
    write_project(&sandbox, &["--changed"]);
    let mut tty = open();
    tty.wait_for_question("Trust it: start these servers");
    tty.press("n");
    tty.wait_for_text("Ask uji anything");
    let screen = mcp_screen(&mut tty, "no MCP servers configured");
    assert!(!screen.contains("proj (stdio)"), "{screen}");
    tty.quit_with_ctrl_c();
    assert_eq!(server_pids(&sandbox).len(), 2);
    let trust = std::fs::read_to_string(sandbox.root.path().join("data/trust.json")).unwrap();
    assert!(trust.contains("\"trusted\": false"), "{trust}");
}

/// Runs `/mcp` until the screen shows `expected` (a server may still be
/// starting), answering the screen.
fn mcp_screen(tty: &mut uji_tests::tty::Tty, expected: &str) -> String {
    for _ in 0..20 {
        tty.type_text("/mcp");
        tty.press("<CR>");
        std::thread::sleep(Duration::from_millis(300));
        let screen = tty.screen();
        if screen.contains(expected) {
            return screen;
        }
    }
    panic!("/mcp never showed {expected:?}: {}", tty.screen());
}
