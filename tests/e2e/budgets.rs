//! Budgets (issue 32, docs/budgets.md) through `uji run` against the fake
//! model: a looping model stops at the limit, cleanly, with a message that
//! says which budget and how to raise it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Output, Stdio};

use serde_json::json;
use uji_fake_model::FakeModel;
use uji_tests::chat::{answer, call, events, uji_with_model};
use uji_tests::{Sandbox, text};

const MODEL: &str = "openrouter/qwen/qwen3-coder";

/// A model that never stops calling a tool (`echo`, allowed).
fn looping(model: &FakeModel, calls: usize) {
    for i in 0..calls {
        model.push(call(
            &format!("c{i}"),
            "run_command",
            json!({"command": format!("echo {i}")}),
        ));
    }
}

fn run(sandbox: &Sandbox, model: &FakeModel, args: &[&str]) -> Output {
    uji_with_model(sandbox, model, "sk-budget")
        .args(["run", "--model", MODEL])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

const ALLOW_ECHO: &str = "uji.tool.policy({ run_command = { allow = { 'echo *' } } })\n";

#[test]
fn max_turns_stops_a_looping_model_after_that_many_requests_with_exit_code_3() {
    let sandbox = Sandbox::new();
    sandbox.write_init(ALLOW_ECHO);
    let model = FakeModel::start();
    looping(&model, 10);
    let output = run(&sandbox, &model, &["--max-turns", "3", "loop"]);
    let (_, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert_eq!(model.requests().len(), 3, "three requests, not a fourth");
    assert!(
        stderr.contains("turns budget is spent (3 of 3 model requests)")
            && stderr.contains("--max-turns"),
        "{stderr}"
    );
}

#[test]
fn a_budget_from_init_lua_stops_at_its_limit_warns_at_80_percent_and_says_so_in_json() {
    let sandbox = Sandbox::new();
    sandbox.write_init(&format!("{ALLOW_ECHO}uji.budget({{ tool_calls = 5 }})\n"));
    let model = FakeModel::start();
    looping(&model, 10);
    let output = run(&sandbox, &model, &["--json", "loop"]);
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    let lines = events(&stdout);
    let warnings: Vec<&str> = lines
        .iter()
        .filter(|l| l["type"] == "notice")
        .filter_map(|l| l["text"].as_str())
        .filter(|t| t.starts_with("budget:"))
        .collect();
    assert_eq!(warnings.len(), 1, "warned once: {warnings:?}");
    assert!(warnings[0].contains("4 of 5 tool calls"), "{warnings:?}");
    let done = lines.iter().find(|l| l["type"] == "done").unwrap();
    assert_eq!(done["budget"], "tool_calls", "{done}");
    assert!(
        done["error"].as_str().unwrap().contains("uji.budget"),
        "{done}"
    );
    assert_eq!(model.requests().len(), 5);
    // A flag wins over init.lua for its own limit.
    looping(&model, 10);
    let output = run(&sandbox, &model, &["--max-tool-calls", "2", "loop"]);
    assert_eq!(output.status.code(), Some(3));
    assert_eq!(model.requests().len(), 5 + 2);
}

#[test]
fn a_misspelt_budget_field_is_an_error_at_its_line() {
    let sandbox = Sandbox::new();
    sandbox.write_init("uji.budget({ turns = 3 })\nuji.budget({ wall = 'soon' })\n");
    let output = sandbox
        .uji()
        .args(["tool", "list"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    let shown = format!("{stdout}{stderr}");
    assert!(
        shown.contains("init.lua:2") && shown.contains("wall must be seconds"),
        "{shown}"
    );
}

/// A provider at the fake server whose model `m1` costs $1,000 per million
/// input tokens and $1,000 per million output tokens: each scripted answer
/// (100 in, 10 out) costs $0.11.
fn priced(model: &FakeModel) -> String {
    format!(
        "{ALLOW_ECHO}uji.provider.add({{ id = 'fake', wire = 'openai-chat', base_url = '{}', \
         models = {{ {{ id = 'm1', price = {{ input = 1000, output = 1000, checked = '2026-12-06' }} }} }} }})\n\
         uji.model.use('fake/m1')\n",
        model.base_url()
    )
}

#[test]
fn max_cost_stops_at_the_request_that_spent_it_and_done_says_the_cost() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    sandbox.write_init(&priced(&model));
    looping(&model, 10);
    let output = sandbox
        .uji()
        .args(["run", "--json", "--max-cost", "0.30", "loop"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    // $0.11, $0.22 (under), $0.33 (over): no fourth request.
    assert_eq!(model.requests().len(), 3);
    let lines = events(&stdout);
    let done = lines.iter().find(|l| l["type"] == "done").unwrap();
    assert_eq!(done["budget"], "cost", "{done}");
    assert!(
        (done["cost"].as_f64().unwrap() - 0.33).abs() < 1e-9,
        "{done}"
    );
    assert!(
        done["error"].as_str().unwrap().contains("$0.3300 of $0.30"),
        "{done}"
    );
}

#[test]
fn a_cost_budget_with_a_model_that_has_no_price_is_refused_before_any_request() {
    let sandbox = Sandbox::new();
    sandbox.write_init(ALLOW_ECHO);
    let model = FakeModel::start();
    looping(&model, 2);
    let output = run(&sandbox, &model, &["--max-cost", "1", "loop"]);
    let (_, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("knows no price for"), "{stderr}");
    assert!(model.requests().is_empty());
}

#[test]
fn the_screen_shows_what_the_session_cost_and_status_says_it_too() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    sandbox.write_init(&priced(&model));
    model.push(answer("Priced answer."));
    let plugins = uji_tests::plugin_path(uji_tests::SCREEN_PLUGINS);
    let command = sandbox.uji_tty().env("UJI_PLUGIN_PATH", plugins);
    let mut tty = uji_tests::tty::Tty::spawn(command, 30, 110);
    tty.wait_for_text("Ask uji anything");
    tty.type_keys("hello");
    tty.press("<CR>");
    tty.wait_for_text("Priced answer.");
    // The scripted answer read 120 tokens and wrote 30: $0.15 at $1,000/MTok.
    tty.wait_for_text("$0.150");
    tty.type_keys("/status");
    tty.press("<CR>");
    tty.wait_for_text("$0.1500 so far in this run");
    tty.quit_with_ctrl_c();
}

#[test]
fn lua_reads_the_sessions_cost() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    let seen = sandbox.work().join("cost.txt");
    sandbox.write_init(&format!(
        "{}uji.on('turn_finished', function() \
           local f = io.open('{}', 'w'); f:write(tostring(uji.session.usage().cost)); f:close() end)\n",
        priced(&model),
        seen.display()
    ));
    looping(&model, 1);
    model.push(uji_tests::chat::answer("done"));
    let output = sandbox
        .uji()
        .args(["run", "go"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success(), "{:?}", text(&output));
    // 0.11 for the call, 0.15 for the answer.
    let cost: f64 = std::fs::read_to_string(&seen).unwrap().parse().unwrap();
    assert!((cost - 0.26).abs() < 1e-9, "{cost}");
}

#[test]
fn in_the_screen_the_person_is_asked_whether_to_go_on_at_the_limit() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    sandbox.write_init(&format!("{}uji.budget({{ turns = 2 }})\n", priced(&model)));
    looping(&model, 10);
    let command = sandbox.uji_tty().env(
        "UJI_PLUGIN_PATH",
        uji_tests::plugin_path(uji_tests::SCREEN_PLUGINS),
    );
    let mut tty = uji_tests::tty::Tty::spawn(command, 30, 110);
    tty.wait_for_text("Ask uji anything");
    tty.type_keys("loop");
    tty.press("<CR>");
    let screen = tty.wait_for_question("turns budget is spent (2 of 2 model requests). Go on?");
    assert!(screen.contains("go on: 2 more model requests"), "{screen}");
    assert_eq!(model.requests().len(), 2);
    tty.press("y");
    tty.wait_for_question("(4 of 4 model requests). Go on?");
    assert_eq!(model.requests().len(), 4, "as much again");
    tty.press("n");
    tty.wait_for_text("stopped: this session's turns budget is spent");
    assert_eq!(model.requests().len(), 4);
    tty.quit_with_ctrl_c();
}

#[test]
fn max_wall_stops_the_turn_once_the_session_has_been_open_that_long() {
    let sandbox = Sandbox::new();
    sandbox.write_init("uji.tool.policy({ run_command = { allow = { 'sleep *' } } })\n");
    let model = FakeModel::start();
    for i in 0..3 {
        model.push(call(
            &format!("s{i}"),
            "run_command",
            json!({"command": "sleep 2"}),
        ));
    }
    let output = run(&sandbox, &model, &["--max-wall", "1s", "wait"]);
    let (_, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert_eq!(
        model.requests().len(),
        1,
        "the command ran to its end, and no request came after it"
    );
    assert!(
        stderr.contains("wall budget is spent") && stderr.contains("--max-wall"),
        "{stderr}"
    );
}

#[test]
fn max_wall_takes_seconds_or_a_time_and_refuses_anything_else() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    for bad in ["0", "soon", "30x", "m", "1h30"] {
        let output = run(&sandbox, &model, &["--max-wall", bad, "hello"]);
        let (_, stderr) = text(&output);
        assert_eq!(output.status.code(), Some(2), "{bad}: {stderr}");
        assert!(
            stderr.contains("is not a time above 0: give seconds or a time like 90s, 30m, 1h30m"),
            "{bad}: {stderr}"
        );
    }
    assert!(model.requests().is_empty());
    model.push(answer("done"));
    let output = run(&sandbox, &model, &["--max-wall", "1h30m", "hello"]);
    assert!(output.status.success(), "{:?}", text(&output));
}
