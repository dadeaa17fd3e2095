//! `uji run` end to end: the real binary, the real plugins, and the fake
//! model server on 127.0.0.1 speaking the Chat Completions stream. Tests
//! assert on what uji sent, what it printed and what changed on disk.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use uji_fake_model::chat::ChatEvents;
use uji_fake_model::{FakeModel, RecordedRequest, Script};
use uji_tests::chat::{answer, call, events, uji_with_model};
use uji_tests::{Sandbox, text};

/// A model of the catalogue: an unknown one would add a notice to the events.
const MODEL: &str = "openrouter/qwen/qwen3-coder";
const KEY: &str = "sk-e2e-secret-key-42";

fn uji(sandbox: &Sandbox, model: &FakeModel) -> Command {
    uji_with_model(sandbox, model, KEY)
}

fn run(sandbox: &Sandbox, model: &FakeModel, args: &[&str]) -> (Output, String, String) {
    let output = uji(sandbox, model)
        .args(["run", "--model", MODEL])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    (output, stdout, stderr)
}

/// The messages a request carried.
fn messages(request: &RecordedRequest) -> Vec<Value> {
    request.json["messages"].as_array().unwrap().clone()
}

fn session_file(sandbox: &Sandbox, id: &str) -> String {
    std::fs::read_to_string(
        sandbox
            .root
            .path()
            .join("data/sessions")
            .join(format!("{id}.jsonl")),
    )
    .unwrap()
}

#[test]
fn a_multi_step_task_reads_edits_and_runs_and_the_events_come_in_order() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.work().join("notes.txt"), "status: draft\n").unwrap();
    std::fs::write(
        sandbox.work().join("AGENTS.md"),
        "Always answer in lowercase.",
    )
    .unwrap();
    let model = FakeModel::start();
    model
        .push(call("call_read", "read_file", json!({"path": "notes.txt"})))
        .push(call(
            "call_edit",
            "edit_file",
            json!({"path": "notes.txt", "old_string": "draft", "new_string": "final"}),
        ))
        .push(call(
            "call_cat",
            "run_command",
            json!({"command": "cat notes.txt"}),
        ))
        .push(answer("notes are final now"));

    let (output, stdout, stderr) = run(
        &sandbox,
        &model,
        &["--json", "--yes", "mark", "the", "notes", "final"],
    );
    assert!(
        output.status.success(),
        "stderr: {stderr}\nstdout: {stdout}"
    );
    assert_eq!(
        std::fs::read_to_string(sandbox.work().join("notes.txt")).unwrap(),
        "status: final\n"
    );

    let events = events(&stdout);
    assert_eq!(events[0]["type"], "session");
    let id = events[0]["id"].as_str().unwrap().to_string();
    let kinds: Vec<String> = events
        .iter()
        .filter(|e| e["type"] != "progress" && e["type"] != "notice")
        .map(|e| match e["type"].as_str().unwrap() {
            "message" => format!("message:{}", e["message"]["role"].as_str().unwrap()),
            other => other.to_string(),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "session",
            "message:user",
            "message:assistant",
            "message:tool",
            "message:assistant",
            "message:tool",
            "message:assistant",
            "message:tool",
            "message:assistant",
            "done"
        ]
    );
    let done = events.last().unwrap();
    assert_eq!(done["text"], "notes are final now");
    assert_eq!(
        done["usage"]["output"], 60,
        "usage summed over the four requests: {done}"
    );
    assert!(events.iter().any(|e| e["type"] == "progress"
        && e["tool"] == "run_command"
        && e["line"] == "status: final"));
    let user = &events[1]["message"];
    assert_eq!(user["text"], "mark the notes final");

    // What uji sent: four requests, each carrying the previous results.
    let requests = model.requests();
    assert_eq!(requests.len(), 4);
    assert_eq!(requests[0].path, "/chat/completions");
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    let system = requests[0].json["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        system.contains("Always answer in lowercase."),
        "AGENTS.md reaches the system prompt"
    );
    let tools: Vec<&str> = requests[0].json["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        [
            "edit_file",
            "job_output",
            "read_file",
            "run_command",
            "stop_job",
            "subagent",
            "web_fetch",
            "write_file"
        ]
    );
    let second = messages(&requests[1]);
    let read_result = second.iter().find(|m| m["role"] == "tool").unwrap();
    assert_eq!(read_result["tool_call_id"], "call_read");
    assert_eq!(read_result["content"], "    1| status: draft\n");
    let fourth = messages(&requests[3]);
    let cat_result = fourth.iter().rev().find(|m| m["role"] == "tool").unwrap();
    assert_eq!(cat_result["content"], "status: final");

    // The session on disk holds the same conversation, and no key.
    let saved = session_file(&sandbox, &id);
    assert_eq!(saved.lines().count(), 1 + 8, "header + 8 messages");
    assert!(
        !saved.contains(KEY) && !stdout.contains(KEY) && !stderr.contains(KEY),
        "the key never leaks"
    );
}

#[test]
fn text_mode_prints_only_the_answer_on_stdout() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    model
        .push(call("c1", "read_file", json!({"path": "missing.txt"})))
        .push(answer("there is no such file"));
    let (output, stdout, stderr) = run(&sandbox, &model, &["what", "is", "in", "missing.txt?"]);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stdout, "there is no such file\n");
    assert!(
        stderr.contains("uji: Read missing.txt"),
        "tool activity goes to stderr: {stderr}"
    );
}

/// Text mode says on stderr which calls were denied and why, and never
/// shows a denied call as if it ran.
#[test]
fn text_mode_shows_denied_calls_as_denied() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    model
        .push(call("c1", "run_command", json!({"command": "rm -rf /"})))
        .push(answer("gave up"));
    let (output, stdout, stderr) = run(&sandbox, &model, &["clean", "up"]);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stdout, "gave up\n");
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("uji: denied run_command rm -rf /: deny rule ")),
        "{stderr}"
    );
    assert!(
        !lines
            .iter()
            .any(|l| l.contains("rm -rf /") && !l.contains("denied")),
        "a denied call never looks like it ran: {stderr}"
    );
}

/// The reader of stdout goes away before uji writes (`uji list | head -1`
/// at its worst): every command that prints ends quietly with status 141,
/// as one killed by SIGPIPE would, and never panics.
#[test]
fn a_closed_stdout_ends_every_command_quietly() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    for text in ["one", "two", "three"] {
        model.push(answer(text));
    }
    let (output, _, stderr) = run(&sandbox, &model, &["a", "session", "to", "list"]);
    assert!(output.status.success(), "{stderr}");
    let commands: [&[&str]; 9] = [
        &["list"],
        &["list", "--all"],
        &["plugins"],
        &["plugins", "--json"],
        &["tool", "list"],
        &["tool", "run", "read_file", r#"{"path": "missing.txt"}"#],
        &["policy", "check", "run_command", "ls"],
        &["run", "--model", MODEL, "text", "mode"],
        &["run", "--model", MODEL, "--json", "json", "mode"],
    ];
    for args in commands {
        let output = uji(&sandbox, &model)
            .args(args)
            .stdin(Stdio::null())
            .stdout(closed_pipe())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("panicked"), "uji {args:?}: {stderr}");
        assert!(!stderr.contains("Broken pipe"), "uji {args:?}: {stderr}");
        assert_eq!(output.status.code(), Some(141), "uji {args:?}: {stderr}");
    }
    // And as typed in a shell.
    let output = Command::new("sh")
        .env_clear()
        .envs(sandbox.env())
        .env("UJI", uji_tests::uji_bin())
        .current_dir(sandbox.work())
        .args([
            "-c",
            "\"$UJI\" list | head -1; \"$UJI\" tool list | head -1",
        ])
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(stdout.starts_with("TITLE"), "{stdout}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// With stderr closed as well, the notices of a broken init.lua have
/// nowhere to go: still no panic.
#[test]
fn closed_stdout_and_stderr_do_not_panic() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.config().join("init.lua"), "local = 1").unwrap();
    let model = FakeModel::start();
    let status = uji(&sandbox, &model)
        .args(["policy", "check", "run_command", "ls"])
        .stdin(Stdio::null())
        .stdout(closed_pipe())
        .stderr(closed_pipe())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(141));
}

/// A pipe whose reader is gone before the child starts. (Closing the
/// reader after spawning races with other tests' children, which hold a
/// copy of it until they exec.)
fn closed_pipe() -> Stdio {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    Stdio::from(writer)
}

#[test]
fn ask_calls_are_refused_without_yes_and_the_model_is_told_how_to_allow_them() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    model
        .push(call(
            "c1",
            "write_file",
            json!({"path": "x.txt", "content": "x"}),
        ))
        .push(answer("could not write"));
    let (output, _, stderr) = run(&sandbox, &model, &["write", "x"]);
    assert!(output.status.success(), "{stderr}");
    assert!(!sandbox.work().join("x.txt").exists());
    assert!(
        stderr.contains("uji: denied write_file x.txt: write_file needs approval"),
        "text mode says it was denied: {stderr}"
    );
    let result = messages(&model.requests()[1])
        .into_iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    let content = result["content"].as_str().unwrap();
    assert!(
        content.starts_with("denied: write_file needs approval"),
        "{content}"
    );
    assert!(content.contains("--yes"), "{content}");
}

#[test]
fn invalid_arguments_and_unknown_tools_become_results_the_model_can_correct() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    model
        .push(Script::sse(
            ChatEvents::new("test-model")
                .parallel_tool_calls(
                    &[
                        (0, "c_bad", "read_file", "{not json"),
                        (1, "c_unknown", "grep", "{broken"),
                    ],
                    2,
                )
                .finish("tool_calls")
                .done(),
        ))
        .push(answer("ok"));
    let (output, _, stderr) = run(&sandbox, &model, &["go"]);
    assert!(output.status.success(), "{stderr}");
    let results: Vec<Value> = messages(&model.requests()[1])
        .into_iter()
        .filter(|m| m["role"] == "tool")
        .collect();
    assert_eq!(results.len(), 2);
    assert!(
        results[0]["content"]
            .as_str()
            .unwrap()
            .starts_with("error: arguments are not valid JSON"),
        "{}",
        results[0]
    );
    assert_eq!(
        results[1]["content"],
        "error: unknown tool `grep`. Available tools: edit_file, job_output, read_file, run_command, stop_job, subagent, web_fetch, write_file."
    );
}

#[test]
fn exit_codes_say_what_happened() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();

    model.push(Script::status(
        400,
        r#"{"error":{"message":"model not found: test-model"}}"#,
        &[],
    ));
    let (output, stdout, stderr) = run(&sandbox, &model, &["hi"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stdout.is_empty());
    assert!(
        stderr.contains("uji: error: http: 400:") && stderr.contains("model not found"),
        "{stderr}"
    );

    let output = sandbox
        .uji()
        .args(["run", "hi"])
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENROUTER_API_KEY")
        .output()
        .unwrap();
    let (_, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        stderr.contains(
            "uji: error: no model provider is set up: type /login in uji's screen, or run `uji login` (or export ANTHROPIC_API_KEY"
        ),
        "{stderr}"
    );

    let output = sandbox.uji().arg("run").output().unwrap();
    assert_eq!(output.status.code(), Some(2), "a usage error");

    model.push(Script::status(401, "bad key", &[]));
    let (output, _, stderr) = run(&sandbox, &model, &["hi"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr.contains("authentication rejected (401)"), "{stderr}");
}

#[test]
fn retryable_failures_are_retried_with_a_notice() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    model
        .push(Script::status(429, "slow down", &[("retry-after", "0")]))
        .push(Script::status(503, "overloaded", &[("retry-after", "0")]))
        .push(answer("third time lucky"));
    let (output, stdout, stderr) = run(&sandbox, &model, &["--json", "hi"]);
    assert!(output.status.success(), "{stderr}");
    let events = events(&stdout);
    let notices: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "notice")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(
        notices,
        [
            "request failed (http: 429: slow down), retrying in 0s (1/5)",
            "request failed (http: 503: overloaded), retrying in 0s (2/5)"
        ]
    );
    assert_eq!(events.last().unwrap()["text"], "third time lucky");
    assert_eq!(model.requests().len(), 3);
}

fn spawn_run(sandbox: &Sandbox, model: &FakeModel, args: &[&str]) -> Child {
    uji(sandbox, model)
        .args(["run", "--model", MODEL, "--json", "--yes"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Reads JSON events from the child's stdout until `until` matches one.
fn read_until(
    child: &mut Child,
    until: impl Fn(&Value) -> bool,
) -> (Vec<Value>, BufReader<std::process::ChildStdout>) {
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut seen = Vec::new();
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).unwrap() == 0 {
            panic!("stdout closed before the awaited event; saw {seen:?}");
        }
        let event: Value = serde_json::from_str(line.trim()).unwrap();
        let stop = until(&event);
        seen.push(event);
        if stop {
            return (seen, reader);
        }
    }
}

fn signal(child: &Child, sig: &str) {
    let status = Command::new("kill")
        .args([sig, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

fn rest(reader: BufReader<std::process::ChildStdout>) -> Vec<Value> {
    reader
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect()
}

#[test]
fn sigint_mid_stream_stops_at_once_and_records_the_turn_as_interrupted() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    model.push(
        Script::stall_after(
            ChatEvents::new("test-model")
                .text("thinking about it", 3)
                .build(),
        )
        .stall_limit(Duration::from_secs(30)),
    );
    let mut child = spawn_run(&sandbox, &model, &["hi"]);
    let (seen, reader) = read_until(&mut child, |e| e["type"] == "message");
    let id = seen[0]["id"].as_str().unwrap().to_string();
    assert!(model.wait_for_requests(1, Duration::from_secs(10)));
    std::thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    signal(&child, "-INT");
    let status = child.wait().unwrap();
    assert!(started.elapsed() < Duration::from_secs(5), "stops at once");
    assert_eq!(status.code(), Some(130));
    let done = rest(reader).pop().unwrap();
    assert_eq!(done["type"], "done");
    assert_eq!(done["error"], "interrupted");
    assert!(
        model.wait_for_dropped(1, Duration::from_secs(5)),
        "the connection was dropped"
    );
    let saved = session_file(&sandbox, &id);
    assert!(
        saved
            .lines()
            .last()
            .unwrap()
            .contains(r#""role":"error","text":"interrupted""#),
        "{saved}"
    );
}

/// The tool result the model gets says the user interrupted the tool.
fn assert_tool_interrupted(events: &[Value]) {
    let tool = events
        .iter()
        .find(|e| e["type"] == "message" && e["message"]["role"] == "tool")
        .unwrap();
    assert!(
        tool["message"]["content"]
            .as_str()
            .unwrap()
            .contains("interrupted by the user while this tool ran"),
        "{tool}"
    );
}

#[test]
fn sigint_mid_command_kills_it_and_the_session_stays_valid() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    model.push(call(
        "c_sleep",
        "run_command",
        json!({"command": "echo started; sleep 30"}),
    ));
    let mut child = spawn_run(&sandbox, &model, &["wait a while"]);
    let (seen, reader) = read_until(&mut child, |e| {
        e["type"] == "progress" && e["line"] == "started"
    });
    let id = seen[0]["id"].as_str().unwrap().to_string();
    let started = Instant::now();
    signal(&child, "-INT");
    let status = child.wait().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(status.code(), Some(130));
    assert_tool_interrupted(&rest(reader));

    // The session resumes: the next request is valid and carries that result.
    model.push(answer("resumed fine"));
    let (output, stdout, stderr) = run(&sandbox, &model, &["--resume", &id, "carry on"]);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stdout, "resumed fine\n");
    let sent = messages(model.requests().last().unwrap());
    assert!(
        sent.iter()
            .any(|m| m["role"] == "tool" && m["tool_call_id"] == "c_sleep")
    );
    assert_eq!(sent.last().unwrap()["content"], "carry on");
}

/// The first SIGINT stops a Lua tool stuck in `while true do end`: the
/// turn ends well before the gate's 5 s grace for tools that ignore an
/// interrupt, and without a second SIGINT.
#[test]
fn sigint_stops_a_runaway_lua_tool_on_the_first_interrupt() {
    let sandbox = Sandbox::new();
    std::fs::write(
        sandbox.config().join("init.lua"),
        r#"require("uji.defaults")
uji.tool.add("spin", { policy = "allow", run = function(args, ctx)
  ctx.progress("spinning")
  while true do end
end })
"#,
    )
    .unwrap();
    let model = FakeModel::start();
    model.push(call("c_spin", "spin", json!({})));
    let mut child = spawn_run(&sandbox, &model, &["spin"]);
    let (_, reader) = read_until(&mut child, |e| e["type"] == "progress");
    let started = Instant::now();
    signal(&child, "-INT");
    let status = child.wait().unwrap();
    let took = started.elapsed();
    assert!(took < Duration::from_secs(4), "{took:?}");
    assert_eq!(status.code(), Some(130));
    assert_tool_interrupted(&rest(reader));
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(!stderr.contains("interrupted again"), "{stderr}");
}

#[test]
fn sigkill_mid_turn_then_resume_repairs_the_history() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    model.push(call(
        "c_long",
        "run_command",
        json!({"command": "echo go; sleep 30"}),
    ));
    let mut child = spawn_run(&sandbox, &model, &["start"]);
    let (seen, _reader) = read_until(&mut child, |e| e["type"] == "progress");
    let id = seen[0]["id"].as_str().unwrap().to_string();
    signal(&child, "-KILL");
    child.wait().unwrap();
    let saved = session_file(&sandbox, &id);
    assert!(
        saved.contains("c_long") && !saved.contains(r#""role":"tool""#),
        "killed before the result: {saved}"
    );

    model.push(answer("picked up"));
    let (output, stdout, stderr) = run(&sandbox, &model, &["--resume", &id, "continue"]);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stdout, "picked up\n");
    let sent = messages(model.requests().last().unwrap());
    let repaired = sent.iter().find(|m| m["role"] == "tool").unwrap();
    assert_eq!(repaired["tool_call_id"], "c_long");
    assert_eq!(
        repaired["content"],
        "error: uji stopped before this tool returned a result"
    );

    // uji list shows it; uji delete removes it.
    let list = sandbox.uji().arg("list").output().unwrap();
    assert!(text(&list).0.contains(&id));
    let delete = sandbox.uji().args(["delete", &id]).output().unwrap();
    assert!(delete.status.success());
    let again = sandbox.uji().args(["delete", &id]).output().unwrap();
    assert_eq!(again.status.code(), Some(1));
    let bad = sandbox
        .uji()
        .args(["run", "--resume", "not-an-id", "x"])
        .env("OPENROUTER_API_KEY", KEY)
        .output()
        .unwrap();
    assert!(
        text(&bad).1.contains("invalid session id"),
        "{}",
        text(&bad).1
    );
}

#[test]
fn one_turn_survives_150_tool_rounds() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.work().join("a.txt"), "a\n").unwrap();
    let model = FakeModel::start();
    for round in 0..150 {
        model.push(call(
            &format!("c{round}"),
            "read_file",
            json!({"path": "a.txt"}),
        ));
    }
    model.push(answer("read it 150 times"));
    let (output, stdout, stderr) = run(&sandbox, &model, &["--json", "read a lot"]);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(model.requests().len(), 151);
    let events = events(&stdout);
    let tools = events
        .iter()
        .filter(|e| e["type"] == "message" && e["message"]["role"] == "tool")
        .count();
    assert_eq!(tools, 150);
    assert_eq!(events.last().unwrap()["text"], "read it 150 times");
    assert_eq!(
        messages(model.requests().last().unwrap()).len(),
        1 + 1 + 300,
        "system, user, 150 calls and results"
    );
}

#[test]
fn tools_append_prompt_and_title_options_shape_the_request() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    model.push(answer("fine"));
    let (output, stdout, stderr) = run(
        &sandbox,
        &model,
        &[
            "--json",
            "--tools",
            "read_file,run_command",
            "--append-prompt",
            "Be terse.",
            "--effort",
            "high",
            "--title",
            "my title",
            "hello",
        ],
    );
    assert!(output.status.success(), "{stderr}");
    let request = &model.requests()[0];
    assert_eq!(request.json["reasoning_effort"], "high");
    let tools: Vec<&str> = request.json["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["read_file", "run_command"]);
    assert!(
        request.json["messages"][0]["content"]
            .as_str()
            .unwrap()
            .ends_with("\n\nBe terse.")
    );
    let id = events(&stdout)[0]["id"].as_str().unwrap().to_string();
    assert!(
        session_file(&sandbox, &id)
            .lines()
            .next()
            .unwrap()
            .contains(r#""title":"my title""#)
    );
}

/// Points `cmd` at a config plugin applying `config`; keep the returned
/// directory alive until the command has run.
#[must_use]
fn with_config(cmd: &mut Command, config: Value) -> tempfile::TempDir {
    let plugins = uji_tests::plugin_dir(&["uji_fixture_policy_setter"]);
    cmd.env("UJI_PLUGIN_PATH", plugins.path())
        .env("UJI_FIXTURE_POLICY", config.to_string());
    plugins
}

#[test]
fn a_provider_from_the_config_is_used_without_a_key() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    model.push(Script::sse(
        ChatEvents::new("m")
            .text("local says hi", 2)
            .finish("stop")
            .done(),
    ));
    let mut cmd = sandbox.uji();
    let _config = with_config(
        &mut cmd,
        json!({"providers": [{"id": "local", "wire": "openai-chat", "base_url": model.base_url(), "models": [{"id": "m", "context_window": 8000}]}], "model": "local/m"}),
    );
    let output = cmd
        .args(["run", "hi"])
        .env_remove("OPENROUTER_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stdout, "local says hi\n");
    let request = model.last_request();
    assert_eq!(request.json["model"], "m");
    assert_eq!(request.header("authorization"), None, "keyless provider");
}

#[test]
fn before_turn_and_before_stop_hooks_shape_the_turn() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    model
        .push(answer("first try"))
        .push(answer("after the nudge"));
    let mut cmd = uji(&sandbox, &model);
    let _config = with_config(
        &mut cmd,
        json!({"before_turn_suffix": "HOOKED SUFFIX", "before_stop_once": "check your work"}),
    );
    let output = cmd
        .args(["run", "--model", MODEL, "--json", "go"])
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    let requests = model.requests();
    assert_eq!(requests.len(), 2, "before_stop sent the model back once");
    assert!(
        requests[0].json["messages"][0]["content"]
            .as_str()
            .unwrap()
            .ends_with("\nHOOKED SUFFIX")
    );
    let last = messages(&requests[1]).pop().unwrap();
    assert_eq!(last["content"], "check your work");
    let events = events(&stdout);
    assert!(
        events
            .iter()
            .any(|e| e["message"]["role"] == "user" && e["message"]["hidden"] == true)
    );
    assert_eq!(events.last().unwrap()["text"], "after the nudge");
}

#[test]
fn near_the_context_window_older_messages_are_compacted_and_the_raw_history_kept() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    let config = json!({"providers": [{"id": "tiny", "wire": "openai-chat", "base_url": model.base_url(), "models": [{"id": "m", "context_window": 2400, "max_output": 200}]}]});
    let long = "a long answer about many things. ".repeat(250);
    model.push(Script::sse(
        ChatEvents::new("m").text(&long, 5).finish("stop").done(),
    ));
    let mut cmd = sandbox.uji();
    let _config = with_config(&mut cmd, config.clone());
    let output = cmd
        .args(["run", "--model", "tiny/m", "--json", "first task"])
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    let id = events(&stdout)[0]["id"].as_str().unwrap().to_string();

    model
        .push(Script::sse(
            ChatEvents::new("m")
                .text("SUMMARY: did the first task", 2)
                .finish("stop")
                .done(),
        ))
        .push(Script::sse(
            ChatEvents::new("m")
                .text("second done", 2)
                .finish("stop")
                .done(),
        ));
    let mut cmd = sandbox.uji();
    let _config2 = with_config(&mut cmd, config);
    let output = cmd
        .args([
            "run",
            "--model",
            "tiny/m",
            "--json",
            "--resume",
            &id,
            "second task",
        ])
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    let summary_request = &requests[1];
    assert!(
        summary_request
            .json
            .get("tools")
            .is_none_or(|t| t.as_array().is_none_or(Vec::is_empty)),
        "the summary call offers no tools"
    );
    assert!(summary_request.body_text().contains("first task"));
    let sent = messages(&requests[2]);
    assert!(
        sent[1]["content"].as_str().unwrap().starts_with(
            "Summary of the earlier part of this conversation:\nSUMMARY: did the first task"
        ),
        "{sent:?}"
    );
    assert_eq!(sent.last().unwrap()["content"], "second task");
    assert!(
        !requests[2].body_text().contains("a long answer about"),
        "the folded answer is not sent again"
    );
    let events = events(&stdout);
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "notice" && e["text"] == "compacted 2 earlier messages"),
        "{events:?}"
    );
    assert!(
        session_file(&sandbox, &id).contains("a long answer about"),
        "the raw history stays on disk"
    );
}

#[test]
fn a_lua_wire_drives_a_whole_turn_with_a_tool_call() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.work().join("a.txt"), "from the file\n").unwrap();
    std::fs::write(
        sandbox.config().join("init.lua"),
        r#"
require("uji.defaults")
uji.wire.add("scripted", {
  stream = function(request, reply)
    local last = request.messages[#request.messages]
    if last.role == "tool" then
      reply.text("the tool said: ")
      reply.done({ text = "the tool said: " .. last.content, usage = { input = 7, output = 3 } })
    else
      reply.done({ tool_calls = { { id = "lua_1", name = "read_file", arguments = { path = "a.txt" } } } })
    end
  end,
})
uji.provider.add({ id = "scripted", wire = "scripted", base_url = "lua://", models = { "one" } })
uji.model.use("scripted")
"#,
    )
    .unwrap();
    let output = sandbox
        .uji()
        .args(["run", "--json", "read a.txt"])
        .env_remove("OPENROUTER_API_KEY")
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}\n{stdout}");
    let events = events(&stdout);
    let tool = events
        .iter()
        .find(|e| e["message"]["role"] == "tool")
        .unwrap();
    assert_eq!(tool["message"]["content"], "    1| from the file\n");
    let done = events.last().unwrap();
    assert_eq!(done["text"], "the tool said:     1| from the file\n");
    assert_eq!(done["usage"]["input"], 7);
    let assistant = events
        .iter()
        .find(|e| e["message"]["role"] == "assistant")
        .unwrap();
    assert_eq!(assistant["message"]["model"], "scripted/one");
}

#[test]
fn tools_left_out_by_the_tools_option_are_refused_even_when_called() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    model
        .push(call(
            "c1",
            "run_command",
            json!({"command": "touch ran.txt"}),
        ))
        .push(answer("ok"));
    let (output, _, stderr) = run(&sandbox, &model, &["--yes", "--tools", "read_file", "go"]);
    assert!(output.status.success(), "{stderr}");
    assert!(
        !sandbox.work().join("ran.txt").exists(),
        "the command did not run"
    );
    let result = messages(&model.requests()[1])
        .into_iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert_eq!(
        result["content"],
        "error: unknown tool `run_command`. Available tools: read_file."
    );
}

#[test]
fn keys_printed_by_a_tool_are_redacted_everywhere() {
    let sandbox = Sandbox::new();
    // Commands never see the key in their environment; one can still come
    // across it, in a file the user left in the workspace.
    std::fs::write(sandbox.work().join("key.txt"), format!("key={KEY}")).unwrap();
    let model = FakeModel::start();
    model
        .push(call("c1", "run_command", json!({"command": "cat key.txt"})))
        .push(answer("done"));
    let (output, stdout, stderr) = run(&sandbox, &model, &["--json", "--yes", "show the env"]);
    assert!(output.status.success(), "{stderr}");
    let events = events(&stdout);
    let id = events[0]["id"].as_str().unwrap().to_string();
    let tool = events
        .iter()
        .find(|e| e["message"]["role"] == "tool")
        .unwrap();
    assert_eq!(tool["message"]["content"], "key=<redacted>");
    let sent = model.requests()[1].body_text();
    let saved = session_file(&sandbox, &id);
    for (place, text) in [
        ("stdout", stdout.as_str()),
        ("stderr", stderr.as_str()),
        ("the next request", sent.as_str()),
        ("the session", saved.as_str()),
    ] {
        assert!(!text.contains(KEY), "the key leaked into {place}");
    }
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(
            sandbox
                .root
                .path()
                .join("data/sessions")
                .join(format!("{id}.jsonl")),
        )
        .unwrap()
        .permissions(),
    );
    assert_eq!(mode & 0o777, 0o600, "sessions are private");
}

#[test]
fn the_session_event_comes_first_even_after_a_config_error() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.config().join("init.lua"), "this is = not lua").unwrap();
    let model = FakeModel::start();
    model.push(answer("fine"));
    let (output, stdout, stderr) = run(&sandbox, &model, &["--json", "hi"]);
    assert!(output.status.success(), "{stderr}");
    let events = events(&stdout);
    assert_eq!(events[0]["type"], "session");
    let notice = events.iter().find(|e| e["type"] == "notice").unwrap();
    assert!(
        notice["text"].as_str().unwrap().contains("init.lua:1"),
        "{notice}"
    );

    // Text mode says it on stderr, and the shipped defaults still deny.
    model
        .push(call("c1", "run_command", json!({"command": "rm -rf /"})))
        .push(answer("done"));
    let (output, stdout, stderr) = run(&sandbox, &model, &["--yes", "hi"]);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stdout, "done\n");
    assert!(
        stderr.contains("uji: lua: error: ") && stderr.contains("init.lua:1: "),
        "{stderr}"
    );
    assert!(
        stderr.contains("uji: denied run_command rm -rf /: "),
        "{stderr}"
    );
}

#[test]
fn a_tool_call_id_with_control_characters_is_replaced() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.work().join("a.txt"), "x\n").unwrap();
    let model = FakeModel::start();
    model
        .push(call("bad\u{0}id", "read_file", json!({"path": "a.txt"})))
        .push(call("c2", "read_file", json!({"path": "a.txt"})))
        .push(answer("read twice"));
    let (output, stdout, stderr) = run(&sandbox, &model, &["read"]);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stdout, "read twice\n");
    let sent = messages(&model.requests()[2]);
    let results: Vec<&Value> = sent.iter().filter(|m| m["role"] == "tool").collect();
    assert_eq!(results.len(), 2);
    assert!(
        results[0]["tool_call_id"]
            .as_str()
            .unwrap()
            .starts_with("call_")
    );
    assert_eq!(results[0]["content"], "    1| x\n");
    assert_eq!(
        results[1]["content"], "    1| x\n",
        "the tools plugin still works"
    );
}

/// A command's long output is saved to a spill file in the session's
/// spill directory; the model may read it back with read_file although file
/// tools are confined to the workspace, and only that file.
#[test]
fn the_model_reads_a_spill_file_back_under_confinement() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    let stranger = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(stranger.path(), "not yours").unwrap();
    model.push(call(
        "c1",
        "run_command",
        json!({"command": "seq 1 200000; sleep 2"}),
    ));
    let child = uji(&sandbox, &model)
        .args(["run", "--yes", "--model", MODEL, "count"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The next answers are scripted once the spill file exists (the
    // command sleeps meanwhile).
    let spill = uji_tests::wait_for_spill_file(&sandbox);
    model.push(call(
        "c2",
        "read_file",
        json!({"path": spill.display().to_string()}),
    ));
    model.push(call(
        "c3",
        "read_file",
        json!({"path": stranger.path().display().to_string()}),
    ));
    model.push(answer("done"));
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{:?}", text(&output));
    let requests = model.requests();
    let after_read = messages(&requests[2]);
    let read = after_read.last().unwrap()["content"].as_str().unwrap();
    assert!(
        read.starts_with("    1| 1\n"),
        "the spill file was read back from its start: {}",
        &read[..read.len().min(200)]
    );
    let after_stranger = requests[3].body_text();
    assert!(
        after_stranger.contains("outside the allowed directories"),
        "any other file in the temporary directory stays out of reach"
    );
    assert!(!after_stranger.contains("not yours"));
}

/// The raw text of the JSON value after `"key":` in `body` (the first one).
fn raw_value<'a>(body: &'a str, key: &str) -> &'a str {
    let start = body.find(&format!("\"{key}\":")).expect("the key") + key.len() + 3;
    let (mut depth, mut in_string, mut escaped) = (0i32, false, false);
    for (i, c) in body[start..].char_indices() {
        match (in_string, escaped, c) {
            (true, true, _) => escaped = false,
            (true, false, '\\') => escaped = true,
            (true, false, '"') => in_string = false,
            (false, _, '"') => in_string = true,
            (false, _, '[' | '{') => depth += 1,
            (false, _, ']' | '}') => {
                depth -= 1;
                if depth == 0 {
                    return &body[start..=start + i];
                }
            }
            _ => {}
        }
    }
    panic!("unbalanced {key} in {body}")
}

/// init.lua registering the tool `probe` with twelve properties, assigned
/// in `order`; a key added and removed first, so the table's history
/// differs too.
fn probe_tool(order: &[&str]) -> String {
    let mut lua = String::from("local props = { scratch = { type = 'string' } }\n");
    for name in order {
        lua.push_str(&format!(
            "props.{name} = {{ type = 'string', description = '{name} value', enum = {{ 'b', 'a' }} }}\n"
        ));
    }
    lua.push_str("props.scratch = nil\n");
    lua.push_str(
        "uji.tool.add('probe', { description = 'Probes.', policy = 'allow',\n\
         parameters = { type = 'object', required = { 'kilo', 'alpha' }, properties = props,\n\
         additionalProperties = false },\n\
         run = function() return 'probed' end })\n",
    );
    lua
}

/// serde_json keeps keys in insertion order in this workspace (the ACP
/// crate turns `preserve_order` on), and a Lua table's iteration order
/// depends on how it was built. The tool schemas must still reach the model
/// byte-identical in every turn and every run, or the provider's prompt
/// cache misses: uji sorts a schema's keys where the tool is registered.
#[test]
fn tools_registered_from_lua_reach_the_model_byte_identical_across_turns_and_runs() {
    let names = [
        "kilo", "alpha", "zulu", "mike", "bravo", "yankee", "charlie", "xray", "delta", "lima",
        "echo", "oscar",
    ];
    let mut reversed = names;
    reversed.reverse();
    let mut tools = Vec::new();
    for order in [&names[..], &reversed[..]] {
        let model = FakeModel::start();
        model.push(call("c1", "probe", json!({"kilo": "a", "alpha": "b"})));
        model.push(answer("probed"));
        let sandbox = Sandbox::new();
        std::fs::write(sandbox.config().join("init.lua"), probe_tool(order)).unwrap();
        let (output, _, stderr) = run(&sandbox, &model, &["probe it"]);
        assert!(output.status.success(), "{stderr}");
        let requests = model.requests();
        assert_eq!(requests.len(), 2, "a tool call, then the answer");
        for request in &requests {
            tools.push(raw_value(&request.body_text(), "tools").to_string());
        }
    }
    assert!(
        tools.iter().all(|t| *t == tools[0]),
        "tools differ between turns or runs:\n{}",
        tools.join("\n")
    );
    let probe = &tools[0][tools[0].find("\"probe\"").unwrap()..];
    let at = |key: &str| probe.find(&format!("\"{key}\":")).unwrap();
    assert!(
        at("alpha") < at("bravo") && at("bravo") < at("kilo") && at("kilo") < at("zulu"),
        "properties in key order: {probe}"
    );
    assert!(at("additionalProperties") < at("properties") && at("properties") < at("required"));
}
