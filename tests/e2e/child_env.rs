//! No key reaches a child process: with a catalogue key, a custom
//! provider's key (named in init.lua) and a `UJI_*` secret in uji's
//! environment, a command the model runs, a background job, a `!cmd` and an
//! MCP stdio server see none of them, in their environment or in uji's
//! `/proc/PPID/environ`, while an unrelated variable (and an MCP spec's own
//! `env`) still reaches them; `child_env.pass` passes a key on purpose.
//! Also: an MCP call whose answer is too long, never comes, or is not
//! JSON-RPC ends with an error at the call's timeout.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::{Output, Stdio};

use serde_json::json;
use uji_fake_model::{FakeModel, RecordedRequest};
use uji_tests::chat::{answer, call};
use uji_tests::scripted::{assert_ok, drive_with_env, of_type};
use uji_tests::{NO_DENY_RULES, Sandbox, text, uji_bin};

/// uji's environment in these tests, besides the sandbox's own.
const SECRETS: [(&str, &str); 3] = [
    ("ANTHROPIC_API_KEY", "sk-ant-child-env-test"),
    ("MINE_KEY", "mine-child-env-test"),
    ("UJI_TEST_SECRET", "uji-child-env-test"),
];
const PLAIN: (&str, &str) = ("PLAIN_VAR", "plain-value");

/// Names no child may see: the secrets and the sandbox's `UJI_*` dirs.
const WITHHELD: [&str; 5] = [
    "ANTHROPIC_API_KEY",
    "MINE_KEY",
    "UJI_TEST_SECRET",
    "UJI_CONFIG_DIR",
    "UJI_DATA_DIR",
];

/// Prints the names of the command's environment, `$PLAIN_VAR`, and the
/// names in its parent's (uji's) `/proc/PPID/environ`.
const PROBE: &str = r#"printf 'names: '; env | cut -d= -f1 | sort | tr '\n' ' '; echo; echo "plain=$PLAIN_VAR"; printf 'parent environ: '; tr '\0' '\n' < /proc/$PPID/environ | cut -d= -f1 | tr '\n' ' '; echo"#;

/// init.lua: a provider of our own whose key is `MINE_KEY`, serving the
/// fake model, then `extra`.
fn sandbox(model: &FakeModel, extra: &str) -> Sandbox {
    let sandbox = Sandbox::new();
    let init = format!(
        "uji.provider.add({{ id = \"mine\", wire = \"openai-chat\", base_url = {:?}, key_env = \"MINE_KEY\", models = {{ \"m1\" }} }})\n\
         uji.model.use(\"mine/m1\")\n{extra}\n",
        model.base_url()
    );
    std::fs::write(sandbox.config().join("init.lua"), init).unwrap();
    sandbox
}

fn env() -> Vec<(&'static str, &'static str)> {
    let mut env = SECRETS.to_vec();
    env.push(PLAIN);
    env
}

fn run(sandbox: &Sandbox) -> Output {
    sandbox
        .uji()
        .envs(env())
        .args(["run", "--yes", "go"])
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// The last tool result a request carried.
fn last_result(request: &RecordedRequest) -> String {
    let messages = request.json["messages"].as_array().unwrap();
    let tool = messages.iter().rev().find(|m| m["role"] == "tool").unwrap();
    tool["content"].as_str().unwrap().to_string()
}

/// The line of `output` that starts with `prefix`, without it.
fn line<'a>(output: &'a str, prefix: &str) -> &'a str {
    output
        .lines()
        .find_map(|l| l.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no line `{prefix}` in {output}"))
}

/// What [`PROBE`] printed shows no withheld name, in the environment or in
/// uji's `/proc/PPID/environ`, and the plain variable came through.
fn assert_probe_clean(output: &str) {
    let names: Vec<&str> = line(output, "names: ").split_whitespace().collect();
    let parent: Vec<&str> = line(output, "parent environ: ")
        .split_whitespace()
        .collect();
    for name in WITHHELD {
        assert!(!names.contains(&name), "{name} reached the child: {output}");
        assert!(
            !parent.contains(&name),
            "{name} in /proc/PPID/environ: {output}"
        );
    }
    assert!(
        names.contains(&"PATH") && names.contains(&PLAIN.0),
        "{output}"
    );
    assert_eq!(line(output, "plain="), PLAIN.1, "{output}");
    for (_, value) in SECRETS {
        assert!(!output.contains(value), "{output}");
    }
}

#[test]
fn a_command_the_model_runs_sees_no_key() {
    let model = FakeModel::start();
    model
        .push(call("c1", "run_command", json!({ "command": PROBE })))
        .push(answer("done"));
    let sandbox = sandbox(&model, "");
    let output = run(&sandbox);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}\n{stdout}");
    let requests = model.requests();
    // The custom key did reach the model's server: it is a real key.
    let auth = requests[0].header("authorization").unwrap_or_default();
    assert_eq!(auth, "Bearer mine-child-env-test");
    assert_probe_clean(&last_result(&requests[1]));
}

#[test]
fn a_background_job_sees_no_key() {
    let model = FakeModel::start();
    model
        .push(call(
            "c1",
            "run_command",
            json!({
                // It waits for `go`: a command that ends at once is no job.
                "command": format!("while [ ! -e go ]; do sleep 0.05; done; {{ {PROBE}; }} > job.txt 2>&1; touch job.done"),
                "run_in_background": true
            }),
        ))
        .push(call(
            "c2",
            "run_command",
            json!({ "command": "touch go; while [ ! -e job.done ]; do sleep 0.05; done; cat job.txt" }),
        ))
        .push(answer("done"));
    let sandbox = sandbox(&model, "");
    let output = run(&sandbox);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}\n{stdout}");
    let requests = model.requests();
    assert!(
        last_result(&requests[1]).contains("Started job 1 in the background"),
        "{}",
        last_result(&requests[1])
    );
    assert_probe_clean(&last_result(&requests[2]));
}

#[test]
fn a_shell_command_typed_by_the_user_sees_no_key() {
    let model = FakeModel::start();
    model.push(answer("ok"));
    let sandbox = sandbox(&model, "");
    // The turn after it is when the shell's message is saved and shown.
    let script = json!([
        {"send": {"id": "s", "type": "shell", "command": PROBE}},
        {"wait": "ack", "where": {"op_id": "s"}},
        {"send": {"id": "a", "type": "user_message", "text": "hello"}},
        {"wait": "turn_finished"},
    ]);
    let (output, events) = drive_with_env(&sandbox, &["--frontend", "scripted"], &env(), script);
    assert_ok(&output, &events);
    let shell = of_type(&events, "message")
        .into_iter()
        .find(|e| e["message"]["role"] == "shell")
        .unwrap();
    assert_probe_clean(shell["message"]["output"].as_str().unwrap());
}

#[test]
fn a_key_named_in_child_env_pass_reaches_commands_and_the_user_is_told() {
    let model = FakeModel::start();
    model
        .push(call(
            "c1",
            "run_command",
            json!({ "command": "echo \"mine=$MINE_KEY\"; echo \"anthropic=${ANTHROPIC_API_KEY:-unset}\"; echo \"extra=${EXTRA_SECRET:-unset}\"" }),
        ))
        .push(answer("done"));
    let sandbox = sandbox(
        &model,
        r#"uji.config.set("child_env", { pass = { "MINE_KEY" }, withhold = { "EXTRA_*" } })"#,
    );
    let output = sandbox
        .uji()
        .envs(env())
        .env("EXTRA_SECRET", "extra-value")
        .args(["run", "--yes", "go"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}\n{stdout}");
    assert!(
        stderr.contains("get the provider key variable(s) MINE_KEY (child_env.pass in init.lua)"),
        "{stderr}"
    );
    let result = last_result(&model.requests()[1]);
    // The key reached the command (and is redacted in what the model sees).
    assert!(!result.contains("mine=\n"), "{result}");
    assert!(result.contains("anthropic=unset"), "{result}");
    assert!(result.contains("extra=unset"), "{result}");
}

#[test]
fn a_malformed_child_env_is_an_error_and_nothing_is_passed() {
    let model = FakeModel::start();
    model
        .push(call(
            "c1",
            "run_command",
            json!({ "command": "echo \"mine=${MINE_KEY:-unset}\"" }),
        ))
        .push(answer("done"));
    let sandbox = sandbox(
        &model,
        r#"uji.config.set("child_env", { pass = "MINE_KEY" })"#,
    );
    let output = run(&sandbox);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}\n{stdout}");
    assert!(
        stderr.contains("init.lua: child_env must be a table { pass = { \"NAME\", ... }"),
        "{stderr}"
    );
    assert!(last_result(&model.requests()[1]).contains("mine=unset"));
}

// ---- MCP servers ------------------------------------------------------------

fn server_bin() -> PathBuf {
    uji_bin().with_file_name("uji-test-mcp-server")
}

/// A sandbox whose init.lua adds the test server as `t` with `spec` (Lua
/// fields after `command`).
fn mcp_sandbox(spec: &str) -> Sandbox {
    let sandbox = Sandbox::new();
    let init = format!(
        "uji.provider.add({{ id = \"mine\", wire = \"openai-chat\", base_url = \"http://127.0.0.1:9\", key_env = \"MINE_KEY\" }})\n\
         uji.mcp.add('t', {{ command = {:?}, args = {{ \"--extra-tools\" }}, {spec} }})\n",
        server_bin().display().to_string(),
    );
    std::fs::write(sandbox.config().join("init.lua"), init).unwrap();
    sandbox
}

fn mcp_call(sandbox: &Sandbox, tool: &str) -> (Output, String, String) {
    let output = sandbox
        .uji()
        .envs(env())
        .args(["tool", "run", "--yes", tool, "{}"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    (output, stdout, stderr)
}

#[test]
fn an_mcp_stdio_server_sees_no_key_but_its_own_env() {
    let sandbox = mcp_sandbox(r#"env = { SPEC_VAR = "from-spec", UJI_SPEC_GIVEN = "given" }"#);
    let (output, stdout, stderr) = mcp_call(&sandbox, "t__env");
    assert!(output.status.success(), "{stderr}\n{stdout}");
    let vars: Vec<(&str, &str)> = stdout.lines().filter_map(|l| l.split_once('=')).collect();
    let names: Vec<&str> = vars.iter().map(|(n, _)| *n).collect();
    for name in WITHHELD {
        assert!(
            !names.contains(&name),
            "{name} reached the server: {stdout}"
        );
    }
    assert!(vars.contains(&PLAIN), "{stdout}");
    // The spec's own variables are passed as given, a `UJI_` one included.
    assert!(vars.contains(&("SPEC_VAR", "from-spec")), "{stdout}");
    assert!(vars.contains(&("UJI_SPEC_GIVEN", "given")), "{stdout}");
    let parent = line(&stdout, "parent environ: ");
    for name in WITHHELD {
        assert!(
            !parent.contains(name),
            "{name} in /proc/PPID/environ: {stdout}"
        );
    }
}

/// Calls `tool` of a server whose calls time out after 2 s, and returns
/// what uji printed.
fn misbehaving(tool: &str) -> String {
    let sandbox = mcp_sandbox("call_timeout = 2");
    let (output, stdout, stderr) = mcp_call(&sandbox, tool);
    assert!(!output.status.success(), "{stdout}\n{stderr}");
    format!("{stdout}{stderr}")
}

fn assert_timed_out(tool: &str, printed: &str) {
    assert!(
        printed.contains(&format!(
            "{tool}: MCP server t sent no answer uji could read within 2 s, so the call was cancelled"
        )),
        "{printed}"
    );
    assert!(printed.contains("call_timeout"), "{printed}");
}

#[test]
fn an_mcp_answer_over_the_line_limit_ends_the_call_at_its_timeout() {
    let printed = misbehaving("t__huge");
    assert_timed_out("t__huge", &printed);
    assert!(
        printed.contains("longer than 16 MiB on one line"),
        "{printed}"
    );
}

#[test]
fn an_mcp_server_that_never_answers_ends_the_call_at_its_timeout() {
    assert_timed_out("t__silent", &misbehaving("t__silent"));
}

#[test]
fn an_mcp_answer_that_is_not_json_rpc_ends_the_call_at_its_timeout() {
    let printed = misbehaving("t__garbage");
    assert_timed_out("t__garbage", &printed);
    assert!(printed.contains("not valid JSON-RPC"), "{printed}");
}

#[test]
fn a_sandboxed_command_cannot_open_the_memory_of_uji() {
    if uji_plugin_tools::sandbox::kernel_abi() == 0 {
        eprintln!("SKIPPED sandboxed /proc/PPID/mem: this kernel has no Landlock");
        return;
    }
    let sandbox = Sandbox::new();
    // `$PPID` is never plain: with no deny rules `--yes` runs it.
    sandbox.write_init(NO_DENY_RULES);
    let args = json!({ "command": "cat /proc/$PPID/mem > /dev/null; echo \"exit=$?\"" });
    let output = sandbox
        .uji()
        .envs(env())
        .args(["tool", "run", "--yes", "--sandbox", "workspace-write"])
        .args(["run_command", &args.to_string()])
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(
        stdout.contains("/mem: Permission denied") && stdout.contains("exit=1"),
        "{stdout}\n{stderr}"
    );
}
