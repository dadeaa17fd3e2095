//! Saved sessions never lose data: damaged lines are skipped with a notice
//! and stay on disk, a torn last line is kept aside, and two processes
//! cannot write one session. The real binary and plugins, the fake model.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use uji_fake_model::chat::ChatEvents;
use uji_fake_model::{FakeModel, Script};
use uji_tests::tty::Tty;
use uji_tests::{Sandbox, text};

const MODEL: &str = "openrouter/test-model";

fn answer(text: &str) -> Script {
    Script::sse(
        ChatEvents::new("test-model")
            .text(text, 2)
            .finish("stop")
            .done(),
    )
}

fn uji_run(sandbox: &Sandbox, model: &FakeModel, args: &[&str]) -> Command {
    let mut cmd = sandbox.uji();
    cmd.env("OPENROUTER_API_KEY", "sk-test")
        .env("OPENROUTER_BASE_URL", model.base_url())
        .args(["run", "--model", MODEL])
        .args(args)
        .stdin(Stdio::null());
    cmd
}

fn run(sandbox: &Sandbox, model: &FakeModel, args: &[&str]) -> Output {
    uji_run(sandbox, model, args).output().unwrap()
}

fn session_path(sandbox: &Sandbox, id: &str) -> PathBuf {
    sandbox
        .root
        .path()
        .join("data/sessions")
        .join(format!("{id}.jsonl"))
}

/// A session of two exchanges; returns its id.
fn two_exchanges(sandbox: &Sandbox, model: &FakeModel) -> String {
    model.push(answer("first answer"));
    let first = run(sandbox, model, &["--json", "first question"]);
    assert!(first.status.success(), "{}", text(&first).1);
    let stdout = text(&first).0;
    let configured: Value = serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
    let id = configured["id"].as_str().unwrap().to_string();
    model.push(answer("second answer"));
    let second = run(sandbox, model, &["--resume", &id, "second question"]);
    assert!(second.status.success(), "{}", text(&second).1);
    id
}

/// Replaces line `index` (0-based) of the session file with `with`.
fn damage_line(sandbox: &Sandbox, id: &str, index: usize, with: &str) -> String {
    let path = session_path(sandbox, id);
    let saved = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = saved.lines().collect();
    lines[index] = with;
    let damaged = format!("{}\n", lines.join("\n"));
    std::fs::write(&path, &damaged).unwrap();
    damaged
}

#[test]
fn a_damaged_line_in_the_middle_is_skipped_with_a_notice_and_nothing_is_lost() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    let id = two_exchanges(&sandbox, &model);
    // Line 2 (0-based 1) is the first question; the answer after it and the
    // second exchange must survive.
    let damaged = damage_line(&sandbox, &id, 1, r#"{"type":"message","seq":1,"ti"#);

    model.push(answer("third answer"));
    let output = run(&sandbox, &model, &["--json", "--resume", &id, "third"]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    let notice = stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|e| e["type"] == "notice")
        .unwrap_or_else(|| panic!("a notice event: {stdout}"));
    let notice = notice["text"].as_str().unwrap();
    assert!(
        notice.contains("skipped 1 damaged line") && notice.contains("line 2"),
        "{notice}"
    );

    let sent: Vec<String> = model.requests().last().unwrap().json["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect();
    for kept in ["first answer", "second question", "second answer", "third"] {
        assert!(sent.iter().any(|c| c == kept), "{kept} sent: {sent:?}");
    }
    // Every byte that was there is still there, the damaged line included.
    let after = std::fs::read_to_string(session_path(&sandbox, &id)).unwrap();
    assert!(after.starts_with(&damaged), "{after}");
    assert!(after.contains("third answer"), "{after}");

    // Text mode shows the same notice on stderr.
    model.push(answer("fourth answer"));
    let output = run(&sandbox, &model, &["--resume", &id, "fourth"]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stdout, "fourth answer\n");
    assert!(stderr.contains("uji: session") && stderr.contains("skipped 1 damaged line"));
}

#[test]
fn a_lost_tool_result_in_the_middle_gets_an_error_result_for_the_model() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    model.push(Script::sse(
        ChatEvents::new("test-model")
            .tool_call(0, "c_1", "read_file", r#"{"path":"missing.txt"}"#, 1)
            .finish("tool_calls")
            .done(),
    ));
    model.push(answer("done"));
    let first = run(&sandbox, &model, &["--json", "read it"]);
    assert!(first.status.success(), "{}", text(&first).1);
    let configured: Value = serde_json::from_str(text(&first).0.lines().next().unwrap()).unwrap();
    let id = configured["id"].as_str().unwrap().to_string();
    let saved = std::fs::read_to_string(session_path(&sandbox, &id)).unwrap();
    let tool_line = saved
        .lines()
        .position(|l| l.contains(r#""role":"tool""#))
        .unwrap();
    damage_line(&sandbox, &id, tool_line, "garbage");

    model.push(answer("ok"));
    let output = run(&sandbox, &model, &["--resume", &id, "again"]);
    assert!(output.status.success(), "{}", text(&output).1);
    let sent = model.requests().last().unwrap().json["messages"].clone();
    let result = sent
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap_or_else(|| panic!("the call still has a result: {sent}"));
    assert_eq!(result["tool_call_id"], "c_1");
    assert!(
        result["content"].as_str().unwrap().contains("was lost"),
        "{result}"
    );
}

#[test]
fn a_torn_last_line_is_moved_aside_and_the_session_goes_on() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    let id = two_exchanges(&sandbox, &model);
    let path = session_path(&sandbox, &id);
    let whole = std::fs::read_to_string(&path).unwrap();
    let torn = r#"{"type":"message","seq":5,"time":1,"role":"us"#;
    std::fs::write(&path, format!("{whole}{torn}")).unwrap();

    model.push(answer("third answer"));
    let output = run(&sandbox, &model, &["--resume", &id, "third"]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stdout, "third answer\n");
    assert!(
        stderr.contains("its last line was cut off") && stderr.contains(&format!("{id}.torn")),
        "{stderr}"
    );
    let kept = std::fs::read_to_string(path.with_extension("torn")).unwrap();
    assert_eq!(kept, format!("{torn}\n"));
    let after = std::fs::read_to_string(&path).unwrap();
    assert!(
        after.starts_with(&whole) && !after.contains(torn),
        "{after}"
    );

    // The next resume finds nothing to report, and delete removes both files.
    model.push(answer("fourth answer"));
    let output = run(&sandbox, &model, &["--resume", &id, "fourth"]);
    assert!(!text(&output).1.contains("cut off"), "{}", text(&output).1);
    let delete = sandbox.uji().args(["delete", &id]).output().unwrap();
    assert!(delete.status.success(), "{}", text(&delete).1);
    assert!(!path.exists() && !path.with_extension("torn").exists());
}

#[test]
fn a_second_process_on_a_session_is_refused_with_what_to_do() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    let id = two_exchanges(&sandbox, &model);
    // The first process stays inside a command until it is killed.
    model.push(Script::sse(
        ChatEvents::new("test-model")
            .tool_call(
                0,
                "c_wait",
                "run_command",
                r#"{"command":"echo go; sleep 30"}"#,
                1,
            )
            .finish("tool_calls")
            .done(),
    ));
    let mut first = uji_run(
        &sandbox,
        &model,
        &["--json", "--yes", "--resume", &id, "wait"],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let mut lines = BufReader::new(first.stdout.take().unwrap()).lines();
    lines
        .by_ref()
        .map_while(Result::ok)
        .find(|l| l.contains(r#""type":"progress""#))
        .expect("the command started");
    let before = std::fs::read(session_path(&sandbox, &id)).unwrap();

    let second = run(&sandbox, &model, &["--resume", &id, "meanwhile"]);
    let (_, stderr) = text(&second);
    assert_eq!(second.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("is open in another uji process") && stderr.contains("quit uji there"),
        "{stderr}"
    );
    let delete = sandbox.uji().args(["delete", &id]).output().unwrap();
    assert_eq!(delete.status.code(), Some(1));
    assert!(text(&delete).1.contains("is open in another uji process"));
    assert_eq!(std::fs::read(session_path(&sandbox, &id)).unwrap(), before);

    first.kill().unwrap();
    first.wait().unwrap();
    model.push(answer("after"));
    let output = run(&sandbox, &model, &["--resume", &id, "now"]);
    assert!(output.status.success(), "{}", text(&output).1);
}

#[test]
fn the_screen_shows_the_damaged_line_notice() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    let id = two_exchanges(&sandbox, &model);
    damage_line(&sandbox, &id, 2, "not json");
    let cmd = sandbox
        .uji_tty()
        .env(
            "UJI_PLUGIN_PATH",
            uji_tests::plugin_path(&["uji_plugin_tui", "uji_plugin_lua"]),
        )
        .args(["resume", "--id", id.as_str()])
        .then_stty();
    let mut tty = Tty::spawn(cmd, 30, 200);
    tty.wait_for_text("skipped 1 damaged line");
    tty.quit_with_ctrl_c();
}

#[test]
fn a_resumed_session_comes_back_on_the_model_and_effort_it_last_used() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    model.push(answer("first answer"));
    let first = run(
        &sandbox,
        &model,
        &["--json", "--effort", "high", "first question"],
    );
    assert!(first.status.success(), "{}", text(&first).1);
    let stdout = text(&first).0;
    let configured: Value = serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
    let id = configured["id"].as_str().unwrap().to_string();
    // No --model and no --effort now: the session's own choice comes back.
    model.push(answer("second answer"));
    let second = sandbox
        .uji()
        .env("OPENROUTER_API_KEY", "sk-test")
        .env("OPENROUTER_BASE_URL", model.base_url())
        .args(["run", "--resume", &id, "second question"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(second.status.success(), "{}", text(&second).1);
    let body: Value = serde_json::from_slice(&model.requests()[1].body).unwrap();
    assert_eq!(body["model"], "test-model", "{body}");
    assert_eq!(body["reasoning_effort"], "high", "{body}");
}

/// `uji run --parent ID` (how a subagent's run is started) saves the
/// parent in the session's header; `uji list` and `uji resume` without an
/// id leave such sessions out, and `uji resume --id` still opens one.
#[test]
fn a_run_for_a_parent_session_is_saved_with_it_and_left_out_of_the_list() {
    let sandbox = Sandbox::new();
    let model = uji_fake_model::FakeModel::start();
    model
        .push(uji_tests::chat::answer("parent answer"))
        .push(uji_tests::chat::answer("child answer"));
    let run = |args: &[&str]| {
        let output = uji_tests::chat::uji_with_model(&sandbox, &model, "sk-parent-test")
            .args(["run", "--json", "--model", "openrouter/qwen/qwen3-coder"])
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert!(output.status.success(), "{:?}", text(&output));
        let first = String::from_utf8_lossy(&output.stdout)
            .lines()
            .next()
            .unwrap()
            .to_string();
        let event: serde_json::Value = serde_json::from_str(&first).unwrap();
        event["id"].as_str().unwrap().to_string()
    };
    let parent = run(&["the parent task"]);
    let child = run(&["--parent", &parent, "--title", "a subtask", "Task: look"]);
    let file = std::fs::read_to_string(
        sandbox
            .root
            .path()
            .join(format!("data/sessions/{child}.jsonl")),
    )
    .unwrap();
    let header: serde_json::Value = serde_json::from_str(file.lines().next().unwrap()).unwrap();
    assert_eq!(header["parent"], parent.as_str(), "{header}");
    let listed = sandbox.uji().args(["list", "--all"]).output().unwrap();
    let (listed, _) = text(&listed);
    assert!(listed.contains(&parent[..8]), "{listed}");
    assert!(
        !listed.contains(&child[..8]),
        "the child is hidden: {listed}"
    );
    assert!(!listed.contains("a subtask"), "{listed}");
}
