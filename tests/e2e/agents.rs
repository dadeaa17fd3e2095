//! Subagents (issue 32, docs/agents.md) through the real binary against the
//! fake model, which answers each session by its own script: a child's
//! requests are told apart by their first user message (its task).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::{Output, Stdio};

use serde_json::{Value, json};
use uji_fake_model::{FakeModel, RecordedRequest, Script};
use uji_tests::chat::{answer, call, events, uji_with_model};
use uji_tests::{Sandbox, text};

const MODEL: &str = "openrouter/qwen/qwen3-coder";

use uji_fake_model::chat::first_user_text as first_user;

/// Answers the session whose task mentions `task` with `script`.
fn for_task(model: &FakeModel, task: &'static str, script: Script) {
    model.push_when(move |r| first_user(r).contains(task), script);
}

/// The requests of the session whose task mentions `task`.
fn requests_of(model: &FakeModel, task: &str) -> Vec<RecordedRequest> {
    model
        .requests()
        .into_iter()
        .filter(|r| first_user(r).contains(task))
        .collect()
}

/// What the tool results of a request said, in order.
fn tool_results(request: &RecordedRequest) -> Vec<String> {
    request.json["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn run(sandbox: &Sandbox, model: &FakeModel, args: &[&str]) -> Output {
    uji_with_model(sandbox, model, "sk-agents")
        .args(["run", "--json", "--model", MODEL])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn session_header(sandbox: &Sandbox, id: &str) -> Value {
    let file =
        std::fs::read_to_string(sandbox.data().join(format!("sessions/{id}.jsonl"))).unwrap();
    serde_json::from_str(file.lines().next().unwrap()).unwrap()
}

#[test]
fn one_subagent_returns_only_its_answer_and_is_saved_with_its_parent() {
    let sandbox = Sandbox::new();
    std::fs::write(
        sandbox.work().join("notes.txt"),
        "DETAIL-ONLY-THE-CHILD-READS\n",
    )
    .unwrap();
    let model = FakeModel::start();
    model.push(call(
        "p1",
        "subagent",
        json!({"task": "Summarise notes.txt"}),
    ));
    for_task(
        &model,
        "Summarise notes.txt",
        call("k1", "read_file", json!({"path": "notes.txt"})),
    );
    for_task(
        &model,
        "Summarise notes.txt",
        answer("The notes hold one detail."),
    );
    model.push(answer("parent done"));
    let output = run(&sandbox, &model, &["delegate"]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}\n{stdout}");
    // The parent's second request carries the child's answer, not what the
    // child read on the way.
    let parent = model
        .requests()
        .into_iter()
        .filter(|r| first_user(r).contains("delegate"))
        .collect::<Vec<_>>();
    assert_eq!(parent.len(), 2);
    // The system prompt says what the marker around the answer means.
    let system = parent[0].json["messages"][0]["content"]
        .as_str()
        .unwrap_or_default();
    assert!(system.contains("Text between <untrusted"), "{system}");
    let results = tool_results(&parent[1]);
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(
        results[0].contains("\nThe notes hold one detail.\n</untrusted>")
            && results[0].starts_with("<untrusted source=\"subagent\" agent=\"general\""),
        "{}",
        results[0]
    );
    assert!(
        !parent[1]
            .body_text()
            .contains("DETAIL-ONLY-THE-CHILD-READS")
    );
    // The child read the file through its own gate.
    let child = requests_of(&model, "Summarise notes.txt");
    assert_eq!(child.len(), 2);
    assert!(tool_results(&child[1])[0].contains("DETAIL-ONLY-THE-CHILD-READS"));
    // Children start no children: the child is offered no subagent tool.
    let offered: Vec<&str> = child[0].json["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert!(
        offered.contains(&"read_file") && !offered.contains(&"subagent"),
        "{offered:?}"
    );
    // The child's session is saved with its parent, tagged in --json, and
    // hidden from `uji list`.
    let lines = events(&stdout);
    let parent_id = lines[0]["id"].as_str().unwrap().to_string();
    let child_lines: Vec<&Value> = lines.iter().filter(|l| l["type"] == "subagent").collect();
    assert!(!child_lines.is_empty(), "{stdout}");
    let child_id = child_lines[0]["session"].as_str().unwrap().to_string();
    assert!(
        child_lines
            .iter()
            .all(|l| l["session"] == child_id.as_str() && l["agent"] == "general")
    );
    assert!(
        child_lines.iter().any(|l| l["line"]["type"] == "done"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("not a list"),
        "no agent files is no problem: {stdout}"
    );
    assert!(
        results[0].contains(&format!("[subagent session {child_id}]")),
        "{}",
        results[0]
    );
    assert_eq!(
        session_header(&sandbox, &child_id)["parent"],
        parent_id.as_str()
    );
    let listed = sandbox.uji().args(["list", "--all"]).output().unwrap();
    let (listed, _) = text(&listed);
    assert!(
        listed.contains(&parent_id[..8]) && !listed.contains(&child_id[..8]),
        "{listed}"
    );
}

#[test]
fn three_subagents_run_at_once_and_answer_in_the_order_asked() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    model.push(call(
        "p1",
        "subagent",
        json!({"tasks": [{"task": "Task A"}, {"task": "Task B"}, {"task": "Task C"}]}),
    ));
    for name in ["Task A", "Task B", "Task C"] {
        for_task(&model, name, answer(&format!("answer of {name}")));
    }
    model.push(answer("parent done"));
    let output = run(&sandbox, &model, &["fan out"]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}\n{stdout}");
    let last = model.last_request();
    let result = &tool_results(&last)[0];
    let a = result.find("answer of Task A").unwrap();
    let b = result.find("answer of Task B").unwrap();
    let c = result.find("answer of Task C").unwrap();
    assert!(a < b && b < c, "{result}");
    let sessions: std::collections::BTreeSet<String> = events(&stdout)
        .iter()
        .filter(|l| l["type"] == "subagent")
        .filter_map(|l| l["session"].as_str().map(str::to_string))
        .collect();
    assert_eq!(sessions.len(), 3, "{stdout}");
}

#[test]
fn a_chain_step_sees_the_previous_answer() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    model.push(call(
        "p1",
        "subagent",
        json!({"chain": [{"task": "Find the bug"}, {"task": "Fix this: {previous}"}]}),
    ));
    for_task(&model, "Find the bug", answer("the bug is in parse()"));
    for_task(&model, "Fix this:", answer("fixed parse()"));
    model.push(answer("parent done"));
    let output = run(&sandbox, &model, &["chain it"]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}\n{stdout}");
    let second = requests_of(&model, "Fix this:");
    assert_eq!(second.len(), 1);
    assert!(first_user(&second[0]).contains("Fix this: the bug is in parse()"));
    let result = &tool_results(&model.last_request())[0];
    assert!(
        result.contains("## step 1 (general)") && result.contains("fixed parse()"),
        "{result}"
    );
}

#[test]
fn a_deny_rule_holds_in_a_subagent_and_plan_mode_refuses_its_edits() {
    let sandbox = Sandbox::new();
    sandbox.write_init(
        "require('uji.defaults')\nuji.tool.policy({ run_command = { deny = { 'rm *' } } })\n",
    );
    std::fs::write(sandbox.work().join("keep.txt"), "keep").unwrap();
    let model = FakeModel::start();
    model.push(call("p1", "subagent", json!({"task": "Clean up"})));
    for_task(
        &model,
        "Clean up",
        call("k1", "run_command", json!({"command": "rm keep.txt"})),
    );
    for_task(&model, "Clean up", answer("could not remove it"));
    model.push(answer("parent done"));
    let output = run(&sandbox, &model, &["--yes", "clean"]);
    assert!(output.status.success(), "{:?}", text(&output));
    assert!(
        sandbox.work().join("keep.txt").exists(),
        "the deny rule held"
    );
    let child = requests_of(&model, "Clean up");
    assert!(
        tool_results(&child[1])[0].starts_with("denied:"),
        "{:?}",
        tool_results(&child[1])
    );

    // Plan mode (here from --mode, as /plan sets it) reaches the child's gate.
    let model = FakeModel::start();
    model.push(call("p1", "subagent", json!({"task": "Write the file"})));
    for_task(
        &model,
        "Write the file",
        call(
            "k1",
            "write_file",
            json!({"path": "new.txt", "content": "x"}),
        ),
    );
    for_task(&model, "Write the file", answer("plan mode stopped me"));
    model.push(answer("parent done"));
    let output = run(&sandbox, &model, &["--yes", "--mode", "plan", "write"]);
    assert!(output.status.success(), "{:?}", text(&output));
    assert!(
        !sandbox.work().join("new.txt").exists(),
        "plan mode held in the child"
    );
    let child = requests_of(&model, "Write the file");
    let refused = &tool_results(&child[1])[0];
    assert!(refused.contains("plan mode"), "{refused}");
}

#[test]
fn a_project_claude_agent_becomes_an_agent_with_its_prompt_and_tools() {
    let sandbox = Sandbox::new();
    let agents = sandbox.work().join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("reviewer.md"),
        "---\nname: reviewer\ndescription: Reviews a change for bugs\ntools: Read, Grep\nmodel: inherit\n---\nYou are a strict REVIEWER-PERSONA.\n",
    )
    .unwrap();
    std::fs::write(
        agents.join("writer.md"),
        "---\nname: writer\ndescription: Writes files\ntools: Write\n---\nWrite.\n",
    )
    .unwrap();
    let model = FakeModel::start();
    model.push(call(
        "p1",
        "subagent",
        json!({"agent": "reviewer", "task": "Review main.rs"}),
    ));
    for_task(&model, "Review main.rs", answer("looks fine"));
    model.push(answer("parent done"));
    let output = run(&sandbox, &model, &["review"]);
    assert!(output.status.success(), "{:?}", text(&output));
    // The model saw the agent in the tool's description.
    let parent = &model.requests()[0];
    let described = parent.json["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "subagent")
        .map(|t| t["function"]["description"].as_str().unwrap().to_string())
        .unwrap();
    assert!(
        described.contains("- reviewer: Reviews a change for bugs"),
        "{described}"
    );
    let child = &requests_of(&model, "Review main.rs")[0];
    assert!(child.body_text().contains("REVIEWER-PERSONA"));
    let offered: Vec<&str> = child.json["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert_eq!(offered, ["read_file"]);

    // A project agent naming a tool the session lacks is refused.
    let model = FakeModel::start();
    model.push(call(
        "p1",
        "subagent",
        json!({"agent": "writer", "task": "Write it"}),
    ));
    model.push(answer("parent done"));
    let output = run(
        &sandbox,
        &model,
        &["--tools", "read_file,subagent", "write"],
    );
    assert!(output.status.success(), "{:?}", text(&output));
    let result = &tool_results(&model.last_request())[0];
    assert!(
        result.contains("the project's agent writer") && result.contains("write_file"),
        "{result}"
    );
    assert!(
        requests_of(&model, "Write it").is_empty(),
        "no child started"
    );
}

/// A provider whose model `m1` costs $1,000 per million tokens each way:
/// each scripted tool call (100 in, 10 out) costs $0.11, each answer (120
/// in, 30 out, 20 cached) $0.15.
fn priced(model: &FakeModel) -> String {
    format!(
        "require('uji.defaults')\nuji.provider.add({{ id = 'fake', wire = 'openai-chat', base_url = '{}', \
         models = {{ {{ id = 'm1', price = {{ input = 1000, output = 1000, checked = '2026-12-06' }} }} }} }})\n\
         uji.model.use('fake/m1')\n",
        model.base_url()
    )
}

#[test]
fn what_subagents_spend_counts_in_the_parents_cost_and_budget() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    sandbox.write_init(&format!(
        "{}uji.budget({{ children = 2 }})\n",
        priced(&model)
    ));
    model.push(call(
        "p1",
        "subagent",
        json!({"tasks": [{"task": "Job one"}, {"task": "Job two"}]}),
    ));
    for_task(&model, "Job one", answer("one"));
    for_task(&model, "Job two", answer("two"));
    model.push(call("p2", "subagent", json!({"task": "Job three"})));
    model.push(answer("parent done"));
    let output = uji_with_model(&sandbox, &model, "sk-agents")
        .env("FAKE_API_KEY", "sk-fake")
        .args(["run", "--json", "spend"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}\n{stdout}");
    let done = events(&stdout)
        .into_iter()
        .find(|l| l["type"] == "done")
        .unwrap();
    // Parent: two calls ($0.11 each) and an answer; children: one answer
    // each. The cost is all of it.
    let cost = done["cost"].as_f64().unwrap();
    let each_answer = {
        let requests = model.requests();
        requests.len()
    };
    assert_eq!(each_answer, 5, "three parent requests, two children's");
    assert!((cost - (0.11 * 2.0 + 0.15 * 3.0)).abs() < 1e-6, "{cost}");
    // The third child would pass `children = 2`: refused.
    let refused = &tool_results(&model.last_request())[1];
    assert!(refused.contains("allows 0 more subagents"), "{refused}");
    assert!(requests_of(&model, "Job three").is_empty());
}

#[test]
fn an_interrupted_parent_stops_its_subagents_and_leaves_no_process() {
    let sandbox = Sandbox::new();
    sandbox.write_init(
        "require('uji.defaults')\nuji.tool.policy({ run_command = { allow = { 'sleep *' } } })\n",
    );
    let model = FakeModel::start();
    model.push(call("p1", "subagent", json!({"task": "Wait a while"})));
    for_task(
        &model,
        "Wait a while",
        call("k1", "run_command", json!({"command": "sleep 271.5"})),
    );
    for_task(&model, "Wait a while", answer("waited"));
    let child = uji_with_model(&sandbox, &model, "sk-agents")
        .args(["run", "--json", "--model", MODEL, "wait"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let sleeping = || {
        let out = std::process::Command::new("pgrep")
            .args(["-f", "sleep 271.5"])
            .output()
            .unwrap();
        !out.stdout.is_empty()
    };
    let started = std::time::Instant::now();
    while !sleeping() {
        assert!(
            started.elapsed().as_secs() < 30,
            "the child's command never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // SAFETY: signalling the uji this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let output = child.wait_with_output().unwrap();
    let (stdout, _) = text(&output);
    assert_eq!(output.status.code(), Some(130), "{stdout}");
    let started = std::time::Instant::now();
    while sleeping() {
        assert!(
            started.elapsed().as_secs() < 10,
            "the child's command outlived the interrupt"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // The subagent's own turn ended as interrupted, in its session file.
    let child_id = events(&stdout)
        .into_iter()
        .find(|l| l["type"] == "subagent")
        .and_then(|l| l["session"].as_str().map(str::to_string))
        .expect("a subagent line");
    let saved =
        std::fs::read_to_string(sandbox.data().join(format!("sessions/{child_id}.jsonl"))).unwrap();
    assert!(
        saved
            .lines()
            .any(|l| l.contains("\"role\":\"error\"") && l.contains("interrupted")),
        "{saved}"
    );
}

/// A sandbox whose init.lua points uji at `model` as `fake/m1`, with uji's
/// defaults and `extra` Lua after them.
fn screen_sandbox(model: &FakeModel, extra: &str) -> Sandbox {
    let sandbox = Sandbox::new();
    sandbox.write_init(&format!(
        "require('uji.defaults')\n\
         uji.provider.add({{ id = \"fake\", wire = \"openai-chat\", base_url = \"{}\", models = {{ \"m1\" }} }})\n\
         uji.model.use(\"fake/m1\")\n{extra}\n",
        model.base_url()
    ));
    sandbox
}

/// The parent's screen in a pty, ready for a prompt.
fn open_screen(sandbox: &Sandbox) -> uji_tests::tty::Tty {
    let plugins = uji_tests::plugin_path(uji_tests::SCREEN_PLUGINS);
    let tty =
        uji_tests::tty::Tty::spawn(sandbox.uji_tty().env("UJI_PLUGIN_PATH", plugins), 30, 110);
    tty.wait_for_text("Ask uji anything");
    tty
}

/// A subagent's question is asked in the parent's screen (a real pty),
/// labelled with the agent; the answer given there runs the subagent's
/// call; the call's line shows the subagent's progress.
#[test]
fn a_subagents_question_is_answered_in_the_parents_screen() {
    let model = FakeModel::start();
    let sandbox = screen_sandbox(&model, "");
    model.push(call("p1", "subagent", json!({"task": "Create the marker"})));
    for_task(
        &model,
        "Create the marker",
        call("k1", "run_command", json!({"command": "touch marker.txt"})),
    );
    for_task(&model, "Create the marker", answer("made the marker"));
    model.push(answer("The subagent is done."));
    let mut tty = open_screen(&sandbox);
    tty.type_text("delegate it");
    tty.press("<CR>");
    let question = tty.wait_for_question("Yes, proceed (y)");
    assert!(question.contains("[subagent general]"), "{question}");
    assert!(question.contains("touch marker.txt"), "{question}");
    // The call's block has a row per running subagent: its agent and tool.
    tty.wait_for_text("general: run_command touch marker.txt");
    assert!(!sandbox.work().join("marker.txt").exists());
    tty.press("y");
    let screen = tty.wait_for_text("The subagent is done.");
    assert!(sandbox.work().join("marker.txt").exists(), "{screen}");
    assert!(screen.contains("Agent"), "{screen}");
    let child = requests_of(&model, "Create the marker");
    assert_eq!(child.len(), 2);
    assert!(
        !tool_results(&child[1])[0].starts_with("denied"),
        "{:?}",
        tool_results(&child[1])
    ); // /agents lists the agents the tool can run.
    tty.type_text("/agents");
    tty.press("<CR>");
    tty.wait_for_text("general: a general agent with your tools");
}

/// An agent file's `max-turns` is the subagent's own budget: a looping
/// child stops there, and the parent reads why.
#[test]
fn an_agent_files_budget_stops_its_subagent() {
    let sandbox = Sandbox::new();
    sandbox.write_init(
        "require('uji.defaults')\nuji.tool.policy({ run_command = { allow = { 'echo *' } } })\n",
    );
    let agents = sandbox.config().join("agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("looper.md"),
        "---\ndescription: Loops\nmax-turns: 2\n---\nLoop.\n",
    )
    .unwrap();
    let model = FakeModel::start();
    model.push(call(
        "p1",
        "subagent",
        json!({"agent": "looper", "task": "Loop forever"}),
    ));
    for i in 0..5 {
        for_task(
            &model,
            "Loop forever",
            call(
                &format!("k{i}"),
                "run_command",
                json!({"command": format!("echo {i}")}),
            ),
        );
    }
    model.push(answer("parent done"));
    let output = run(&sandbox, &model, &["loop"]);
    assert!(output.status.success(), "{:?}", text(&output));
    assert_eq!(
        requests_of(&model, "Loop forever").len(),
        2,
        "two requests, not a third"
    );
    let result = &tool_results(&model.last_request())[0];
    assert!(
        result.contains("error:") && result.contains("turns budget"),
        "{result}"
    );
}

/// Esc in the parent's screen interrupts the turn and stops its subagents:
/// neither the subagent's command nor the subagent's uji is left.
#[test]
fn esc_in_the_parents_screen_stops_its_subagents() {
    let model = FakeModel::start();
    let sandbox = screen_sandbox(
        &model,
        "uji.tool.policy({ run_command = { allow = { 'sleep *' } } })\n",
    );
    model.push(call("p1", "subagent", json!({"task": "Sleep on it"})));
    for_task(
        &model,
        "Sleep on it",
        call("k1", "run_command", json!({"command": "sleep 272.5"})),
    );
    for_task(&model, "Sleep on it", answer("slept"));
    let mut tty = open_screen(&sandbox);
    tty.type_text("sleep in a subagent");
    tty.press("<CR>");
    tty.wait_for_text("general: run_command sleep 272.5");
    let running = |pattern: &str| {
        let out = std::process::Command::new("pgrep")
            .args(["-f", pattern])
            .output()
            .unwrap();
        !out.stdout.is_empty()
    };
    let started = std::time::Instant::now();
    while !running("sleep 272.5") {
        assert!(
            started.elapsed().as_secs() < 30,
            "the subagent's command never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    tty.press("<Esc>");
    let started = std::time::Instant::now();
    while running("sleep 272.5") {
        assert!(
            started.elapsed().as_secs() < 10,
            "the subagent's command outlived Esc"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    tty.wait_for_text("interrupted");
}

/// `require("uji.agents").add` in init.lua: a good agent reaches the tool's
/// description; a misspelt field is an error at its line.
#[test]
fn init_lua_adds_agents_and_a_misspelt_field_is_an_error_at_its_line() {
    let sandbox = Sandbox::new();
    sandbox.write_init(
        "require('uji.defaults')\n\
         require('uji.agents').add({ name = 'tester', description = 'Runs the tests', tools = { 'run_command' } })\n",
    );
    let model = FakeModel::start();
    model.push(answer("fine"));
    let output = run(&sandbox, &model, &["hello"]);
    assert!(output.status.success(), "{:?}", text(&output));
    let request = &model.requests()[0];
    let described = request.json["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "subagent")
        .map(|t| t["function"]["description"].as_str().unwrap().to_string())
        .unwrap();
    assert!(
        described.contains("- tester: Runs the tests"),
        "{described}"
    );

    sandbox.write_init(
        "require('uji.defaults')\nrequire('uji.agents').add({ name = 'x', description = 'y', colour = 'red' })\n",
    );
    let output = sandbox
        .uji()
        .args(["tool", "list"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    let shown = format!("{stdout}{stderr}");
    assert!(
        shown.contains("init.lua:2") && shown.contains("unknown field colour"),
        "{shown}"
    );
}

/// "Allow for this session" in the parent holds for its subagents: a child
/// making the same call is not asked again.
#[test]
fn a_subagent_is_not_asked_what_the_parent_allowed_for_the_session() {
    let model = FakeModel::start();
    let sandbox = screen_sandbox(&model, "");
    model.push(call(
        "p1",
        "run_command",
        json!({"command": "touch made.txt"}),
    ));
    model.push(call("p2", "subagent", json!({"task": "Make it again"})));
    for_task(
        &model,
        "Make it again",
        call("k1", "run_command", json!({"command": "touch made.txt"})),
    );
    for_task(&model, "Make it again", answer("made it again"));
    model.push(answer("All done."));
    let mut tty = open_screen(&sandbox);
    tty.type_text("make it twice");
    tty.press("<CR>");
    tty.wait_for_question("touch made.txt");
    tty.press("a");
    let screen = tty.wait_for_text("All done.");
    assert!(!screen.contains("[subagent general]"), "{screen}");
    let child = requests_of(&model, "Make it again");
    assert_eq!(child.len(), 2);
    let result = &tool_results(&child[1])[0];
    assert!(!result.starts_with("denied"), "{result}");
}

/// A subagent starts with what is left of its parent's `wall` budget, so it
/// cannot outlive it: the child stops before its second request, the parent
/// before its next.
#[test]
fn a_subagent_gets_what_is_left_of_the_parents_wall_budget() {
    let sandbox = Sandbox::new();
    sandbox.write_init(
        "require('uji.defaults')\nuji.tool.policy({ run_command = { allow = { 'sleep *' } } })\n",
    );
    let model = FakeModel::start();
    model.push(call("p1", "subagent", json!({"task": "Wait a while"})));
    for i in 0..3 {
        for_task(
            &model,
            "Wait a while",
            call(
                &format!("w{i}"),
                "run_command",
                json!({"command": "sleep 3"}),
            ),
        );
    }
    model.push(answer("parent done"));
    let output = run(&sandbox, &model, &["--max-wall", "2", "delegate"]);
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(3), "{stdout}\n{stderr}");
    assert_eq!(
        requests_of(&model, "Wait a while").len(),
        1,
        "the subagent stopped at the parent's time, before a second request"
    );
    assert!(
        stdout.contains("wall budget is spent"),
        "the subagent's stop reaches the parent: {stdout}"
    );
    let parent_requests = model.requests().len() - 1;
    assert_eq!(parent_requests, 1, "and the parent made no request after");
}

/// Subagents may sleep and write; plan mode is what stops the write.
const SLEEP_AND_WRITE: &str = "uji.tool.policy({ run_command = { allow = { 'sleep *' } }, write_file = { default = 'allow' } })\n";

/// The session of `task` writes `path`, then answers.
fn writes(model: &FakeModel, task: &'static str, path: &str) {
    let args = json!({"path": path, "content": "too soon\n"});
    for_task(model, task, call("k2", "write_file", args));
    for_task(model, task, answer("could not write"));
}

/// Sends `prompt` in the parent's screen, switches plan mode on (Ctrl+B)
/// while a subagent sleeps, and waits for the parent's answer `done`.
fn plan_mode_during_the_sleep(sandbox: &Sandbox, prompt: &str, done: &str) {
    let mut tty = open_screen(sandbox);
    tty.type_text(prompt);
    tty.press("<CR>");
    tty.wait_for_text("general: run_command sleep 1.5");
    tty.press("<C-b>");
    tty.wait_for_text(done);
}

/// `path` was never written, and the writer's last request says why.
fn refused_in_plan_mode(sandbox: &Sandbox, writer: &[RecordedRequest], path: &str, result: usize) {
    assert!(
        !sandbox.work().join(path).exists(),
        "a subagent wrote {path} in plan mode"
    );
    let last = writer.last().expect("the writer's requests");
    let refused = &tool_results(last)[result];
    assert!(refused.contains("plan mode is on"), "{refused}");
}

/// Switching the parent to plan mode while a subagent runs holds for that
/// subagent at once: its next edit is refused by its own gate, although
/// the policy allows it, and the file is never written.
#[test]
fn plan_mode_switched_on_in_the_parents_screen_holds_for_a_running_subagent() {
    let model = FakeModel::start();
    let sandbox = screen_sandbox(&model, SLEEP_AND_WRITE);
    model.push(call("p1", "subagent", json!({"task": "Wait then write"})));
    let sleep = json!({"command": "sleep 1.5"});
    for_task(&model, "Wait then write", call("k1", "run_command", sleep));
    writes(&model, "Wait then write", "planned.txt");
    model.push(answer("The subagent has finished."));
    plan_mode_during_the_sleep(
        &sandbox,
        "delegate the writing",
        "The subagent has finished.",
    );
    let child = requests_of(&model, "Wait then write");
    assert_eq!(child.len(), 3, "{child:?}");
    refused_in_plan_mode(&sandbox, &child, "planned.txt", 1);
}

/// A task still waiting for its turn when plan mode is switched on starts
/// in plan mode (one subagent at a time here: tasks start in the order
/// given, the second after the first has ended).
#[test]
fn a_queued_subagent_starts_in_the_mode_the_parent_has_when_it_starts() {
    let model = FakeModel::start();
    let sandbox = screen_sandbox(
        &model,
        &format!("uji.config.set('subagents.parallel', 1)\n{SLEEP_AND_WRITE}"),
    );
    let tasks = json!({"tasks": [{"task": "First wait"}, {"task": "Then write"}]});
    model.push(call("p1", "subagent", tasks));
    let sleep = json!({"command": "sleep 1.5"});
    for_task(&model, "First wait", call("k1", "run_command", sleep));
    for_task(&model, "First wait", answer("waited"));
    writes(&model, "Then write", "queued.txt");
    model.push(answer("Both subagents have finished."));
    plan_mode_during_the_sleep(
        &sandbox,
        "delegate two tasks",
        "Both subagents have finished.",
    );
    let writer = requests_of(&model, "Then write");
    assert_eq!(writer.len(), 2, "{writer:?}");
    refused_in_plan_mode(&sandbox, &writer, "queued.txt", 0);
}

/// Jobs never outlive the session that started them: a subagent's
/// background job reports to the subagent when it ends while the subagent
/// works, is stopped when the subagent's turn ends (its parent goes on),
/// and nothing of it reaches the parent's conversation.
#[test]
fn a_subagents_background_job_ends_with_its_turn() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    model.push(call("p1", "subagent", json!({"task": "Start the watcher"})));
    // One job ends on its own while the subagent works, one outlives its
    // turn.
    for_task(
        &model,
        "Start the watcher",
        call(
            "k1",
            "run_command",
            json!({"command": "echo started; sleep 0.3; echo EARLY-END", "run_in_background": true}),
        ),
    );
    for_task(
        &model,
        "Start the watcher",
        call(
            "k2",
            "run_command",
            json!({"command": "echo started; sleep 4; echo late > late.txt", "run_in_background": true}),
        ),
    );
    for_task(
        &model,
        "Start the watcher",
        call("k3", "run_command", json!({"command": "sleep 1.5"})),
    );
    for_task(&model, "Start the watcher", answer("watcher started"));
    // The parent outlives the job's four seconds (generous margins: a
    // loaded machine must not make the job write before it is stopped).
    model.push(call("p2", "run_command", json!({"command": "sleep 4.5"})));
    model.push(answer("parent done"));
    let output = run(&sandbox, &model, &["--yes", "delegate"]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}\n{stdout}");
    let child = requests_of(&model, "Start the watcher");
    assert_eq!(child.len(), 4);
    let results = tool_results(&child[3]);
    assert!(
        results[0].contains("job 1") && results[1].contains("job 2"),
        "the commands became jobs: {results:?}"
    );
    // The job that ended while the subagent worked reported to it.
    let reported = child[3].body_text();
    assert!(
        reported.contains("[Background job 1") && reported.contains("EARLY-END"),
        "{reported}"
    );
    assert!(
        !sandbox.work().join("late.txt").exists(),
        "the subagent's job ran on after its turn"
    );
    let parent = requests_of(&model, "delegate");
    assert_eq!(parent.len(), 3);
    for request in &parent[1..] {
        let body = request.body_text();
        assert!(
            !body.contains("Background job") && !body.contains("EARLY-END"),
            "a subagent's job reported to the parent: {body}"
        );
    }
}

/// A `before_tool` hook decides a subagent's calls too, and tells them from
/// the parent's by `session`.
#[test]
fn a_before_tool_hook_sees_a_subagents_calls_with_its_session() {
    let sandbox = Sandbox::new();
    sandbox.write_init(
        r#"require('uji.defaults')
local parent
uji.on("before_tool", function(ev)
  parent = parent or ev.session
  if ev.tool == "read_file" and ev.session ~= parent then
    return { deny = "subagents may not read here: " .. tostring(ev.session) }
  end
end)
"#,
    );
    std::fs::write(sandbox.work().join("notes.txt"), "SECRET-NOTES\n").unwrap();
    let model = FakeModel::start();
    model.push(call("p1", "subagent", json!({"task": "Read the notes"})));
    for_task(
        &model,
        "Read the notes",
        call("k1", "read_file", json!({"path": "notes.txt"})),
    );
    for_task(&model, "Read the notes", answer("I was refused"));
    model.push(call("p2", "read_file", json!({"path": "notes.txt"})));
    model.push(answer("parent done"));
    let output = run(&sandbox, &model, &["--yes", "read"]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}\n{stdout}");
    let child_id = events(&stdout)
        .into_iter()
        .find(|l| l["type"] == "subagent")
        .and_then(|l| l["session"].as_str().map(str::to_string))
        .expect("a subagent line");
    let child = requests_of(&model, "Read the notes");
    let refused = &tool_results(&child[1])[0];
    assert!(
        refused.starts_with("denied:")
            && refused.contains(&format!("subagents may not read here: {child_id}")),
        "{refused}"
    );
    // The parent's own read, decided by the same hook, ran.
    let parent = requests_of(&model, "read");
    let parent_results = tool_results(parent.last().unwrap());
    assert!(
        parent_results.last().unwrap().contains("SECRET-NOTES"),
        "{parent_results:?}"
    );
}

/// In the parent's screen, ctrl+o expands a `subagent` call to what the
/// subagent did: its task, its calls with their results, its answer.
#[test]
fn ctrl_o_expands_a_subagent_call_to_its_transcript() {
    let model = FakeModel::start();
    let sandbox = screen_sandbox(&model, "");
    std::fs::write(sandbox.work().join("notes.txt"), "one line\n").unwrap();
    model.push(call(
        "p1",
        "subagent",
        json!({"task": "Summarise the notes"}),
    ));
    for_task(
        &model,
        "Summarise the notes",
        call("k1", "read_file", json!({"path": "notes.txt"})),
    );
    for_task(
        &model,
        "Summarise the notes",
        answer("CHILD-ANSWER: the notes hold one line."),
    );
    model.push(answer("The parent is done."));
    let mut tty = open_screen(&sandbox);
    tty.type_text("delegate it");
    tty.press("<CR>");
    let folded = tty.wait_for_text("The parent is done.");
    assert!(
        folded.contains("subagent answered") && !folded.contains("› Summarise the notes"),
        "{folded}"
    );
    tty.press("<C-o>");
    let expanded = tty.wait_for_text("› Summarise the notes");
    assert!(expanded.contains("general: done"), "{expanded}");
    assert!(expanded.contains("● read_file notes.txt"), "{expanded}");
    assert!(expanded.contains("CHILD-ANSWER"), "{expanded}");
}

/// A session reads and stops only the jobs it started: a subagent cannot
/// stop its parent's dev server.
#[test]
fn a_subagent_cannot_stop_its_parents_job() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    model.push(call(
        "p1",
        "run_command",
        json!({"command": "echo serving; sleep 30", "run_in_background": true}),
    ));
    model.push(call("p2", "subagent", json!({"task": "Stop the server"})));
    for_task(
        &model,
        "Stop the server",
        call("k1", "stop_job", json!({"id": 1})),
    );
    for_task(&model, "Stop the server", answer("could not stop it"));
    model.push(call("p3", "job_output", json!({"id": 1})));
    model.push(answer("parent done"));
    let output = run(&sandbox, &model, &["--yes", "serve"]);
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}\n{stdout}");
    let child = requests_of(&model, "Stop the server");
    let refused = &tool_results(&child[1])[0];
    assert!(
        refused.contains("job 1 was started by another session"),
        "{refused}"
    );
    // The parent's own job is its own, and still runs.
    let parent = requests_of(&model, "serve");
    let status = tool_results(parent.last().unwrap());
    assert!(status.last().unwrap().contains("running"), "{status:?}");
}

/// A command file's `allowed-tools` hold for its whole turn: a subagent's
/// turn ending inside it (`turn_finished` with `parent`) does not put the
/// policy back early.
#[test]
fn a_subagents_turn_ending_does_not_end_a_commands_allowed_tools() {
    let model = FakeModel::start();
    let sandbox = screen_sandbox(&model, "");
    let dir = sandbox.work().join(".uji/commands");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("make.md"),
        "---\nallowed-tools: Bash(touch:*)\n---\nMake the file.\n",
    )
    .unwrap();
    model.push(call("p1", "subagent", json!({"task": "Look around first"})));
    for_task(&model, "Look around first", answer("looked around"));
    model.push(call(
        "p2",
        "run_command",
        json!({"command": "touch made.txt"}),
    ));
    model.push(answer("Made it."));
    let mut tty = open_screen(&sandbox);
    tty.type_keys("/make");
    tty.wait_for_text("/make");
    tty.press("<CR>");
    let screen = tty.wait_for_text("Made it.");
    assert!(sandbox.work().join("made.txt").exists(), "{screen}");
    assert_eq!(requests_of(&model, "Look around first").len(), 1);
}
