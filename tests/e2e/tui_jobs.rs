//! Background jobs on the terminal screen: the real `uji` with the real
//! tui, tools, Lua and openai-chat plugins in a pseudo-terminal, against
//! the fake model server. A job's latest line shows above the input, Ctrl+Z
//! sends the running command to the background, `/jobs` lists the jobs and
//! stops the chosen one, and quitting stops the rest.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use serde_json::json;
use uji_fake_model::chat::ChatEvents;
use uji_fake_model::{FakeModel, Script};
use uji_tests::Sandbox;
use uji_tests::tty::Tty;

fn answer(text: &str) -> Script {
    Script::sse(ChatEvents::new("m1").text(text, 2).finish("stop").done())
}

fn call(id: &str, args: serde_json::Value) -> Script {
    Script::sse(
        ChatEvents::new("m1")
            .tool_call(0, id, "run_command", &args.to_string(), 2)
            .finish("tool_calls")
            .done(),
    )
}

fn open(model: &FakeModel) -> (Sandbox, Tty) {
    let sandbox = Sandbox::new();
    let init = format!(
        r#"
require("uji.defaults")
uji.provider.add({{ id = "fake", wire = "openai-chat", base_url = "{}", models = {{ "m1" }} }})
uji.model.use("fake/m1")
-- The commands use $$, never plain: no rule or default allows them, a
-- hook that answers for every part may.
uji.on("before_tool", function() return {{ allow = true, all_parts = true }} end)
"#,
        model.base_url()
    );
    std::fs::write(sandbox.config().join("init.lua"), init).unwrap();
    let plugins = uji_tests::plugin_path(&[
        "uji_plugin_tui",
        "uji_plugin_tools",
        "uji_plugin_openai_chat",
        "uji_plugin_lua",
    ]);
    let cmd = sandbox
        .uji_tty()
        .env("UJI_PLUGIN_PATH", plugins)
        .then_stty();
    let tty = Tty::spawn(cmd, 24, 100);
    tty.wait_for_text("Ask uji anything");
    (sandbox, tty)
}

fn gone(sandbox: &Sandbox, file: &str) -> bool {
    let pid = std::fs::read_to_string(sandbox.work().join(file)).unwrap();
    match std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())) {
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => true,
    }
}

#[test]
fn the_footer_shows_jobs_ctrl_z_moves_a_command_and_slash_jobs_stops_one() {
    let model = FakeModel::start();
    model
        .push(call(
            "c1",
            json!({"command": "echo $$ > server.pid; echo booting; sleep 0.3; echo ready on 51\"\"73; sleep 300",
                   "run_in_background": true}),
        ))
        .push(answer("Started it."))
        .push(call(
            "c2",
            json!({"command": "echo $$ > build.pid; echo compil\"\"ing; sleep 300"}),
        ))
        .push(answer("It builds in the background."));
    let (sandbox, mut tty) = open(&model);

    tty.type_text("start the server");
    tty.press("<CR>");
    // (The command line is shown too: its quotes keep it from matching.)
    let screen = tty.wait_for("job 1's latest line in the footer", |s| {
        s.lines()
            .any(|l| l.contains("⚙ job 1") && l.contains("ready on 5173"))
    });
    assert!(screen.contains("⚙ job 1"), "{screen}");

    tty.type_text("build it");
    tty.press("<CR>");
    tty.wait_for_text("compiling");
    tty.press("<C-z>");
    let screen = tty.wait_for_text("It builds in the background.");
    assert!(screen.contains("⚙ job 2"), "{screen}");
    let moved = model.requests()[3].body_text();
    assert!(
        moved.contains("The user moved it to the background after"),
        "{moved}"
    );

    tty.type_text("/jobs");
    tty.press("<CR>");
    let list = tty.wait_for_question("Enter stops a running job");
    assert!(list.contains("job 2 · echo $$ > build.pid"), "{list}");
    assert!(list.contains("job 1 · echo $$ > server.pid"), "{list}");
    // Running first, newest first: job 2 is highlighted.
    tty.press("<CR>");
    let screen = tty.wait_for_text("stopped by the user");
    assert!(screen.contains("job 2 (`echo $$ > build.pid;"), "{screen}");
    tty.wait_for("the footer to drop job 2", |s| !s.contains("⚙ job 2"));
    assert!(gone(&sandbox, "build.pid"));
    assert!(!gone(&sandbox, "server.pid"), "job 1 runs on");

    tty.press("<C-c>");
    tty.press("<C-c>");
    assert_eq!(tty.wait_exit(Duration::from_secs(15)), Some(0));
    tty.terminal_restored().unwrap();
    assert!(gone(&sandbox, "server.pid"), "quitting stopped job 1");
}

#[test]
fn a_job_ending_while_the_screen_is_idle_wakes_the_session() {
    let model = FakeModel::start();
    model
        .push(call(
            "c1",
            json!({"command": "echo hi; sleep 0.5; echo b\"\"ye", "run_in_background": true}),
        ))
        .push(answer("Started it."))
        .push(answer("The job said bye."));
    let (_sandbox, mut tty) = open(&model);
    tty.type_text("start it");
    tty.press("<CR>");
    tty.wait_for_text("Started it.");
    let screen = tty.wait_for_text("The job said bye.");
    assert!(screen.contains("exited with code 0"), "{screen}");
    let report = model.requests()[2].body_text();
    assert!(report.contains("[Background job 1"), "{report}");
    tty.press("<C-c>");
    tty.press("<C-c>");
    assert_eq!(tty.wait_exit(Duration::from_secs(15)), Some(0));
}
