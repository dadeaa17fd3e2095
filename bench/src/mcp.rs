//! MCP: what configured stdio servers add to start-up (until the screen's
//! prompt takes input, and a whole one-answer `uji run`, which waits for
//! them so the model sees their tools), and uji's own CPU time per tool call
//! to a local server (the rmcp test server of tests/mcp-server) through
//! `uji run` against the fake model.

use std::path::Path;

use serde_json::json;
use uji_fake_model::FakeModel;

use crate::run::{ok, run_cmd, text_answer, tool_call};
use crate::{Row, measure, median, release_dir};

const CALLS: usize = 40;

fn write_init(home: &Path, servers: usize) {
    let server = release_dir().join("uji-test-mcp-server");
    let mut init = String::new();
    for i in 0..servers {
        init.push_str(&format!(
            "uji.mcp.add('s{i}', {{ command = {:?} }})\n",
            server.display().to_string()
        ));
    }
    std::fs::create_dir_all(home.join("config")).expect("config dir");
    std::fs::write(home.join("config/init.lua"), init).expect("init.lua");
}

/// Median wall time (ms) of a one-answer `uji run` with `servers` servers.
fn one_answer_ms(model: &FakeModel, servers: usize) -> f64 {
    let home = tempfile::tempdir().expect("tempdir");
    let work = tempfile::tempdir().expect("tempdir");
    write_init(home.path(), servers);
    let mut wall = Vec::new();
    for _ in 0..20 {
        model.push(text_answer("hello", 1));
        let run = ok(
            measure(&mut run_cmd(home.path(), work.path(), model, "hi")),
            "mcp start-up",
        );
        wall.push(run.wall.as_secs_f64() * 1000.0);
    }
    median(wall)
}

/// Median time (ms) from spawning the screen to its prompt, with
/// `servers` servers configured: when a person can type the first prompt.
fn screen_start_ms(servers: usize) -> f64 {
    let home = tempfile::tempdir().expect("tempdir");
    for dir in ["data", "work"] {
        std::fs::create_dir_all(home.path().join(dir)).expect("mkdir");
    }
    write_init(home.path(), servers);
    median(
        (0..10)
            .map(|_| crate::tui_live::startup(home.path()))
            .collect(),
    )
}

/// uji's CPU time (ms) of a `uji run` making `calls` calls to `s0__echo`.
fn cpu_ms(model: &FakeModel, calls: usize) -> f64 {
    let home = tempfile::tempdir().expect("tempdir");
    let work = tempfile::tempdir().expect("tempdir");
    write_init(home.path(), 1);
    // Wait for the server so every call reaches it.
    let init = home.path().join("config/init.lua");
    let lua = std::fs::read_to_string(&init).expect("init.lua");
    std::fs::write(&init, lua + "uji.mcp.list({ wait = 10 })\n").expect("init.lua");
    let mut cpu = Vec::new();
    for _ in 0..5 {
        for i in 0..calls {
            model.push(tool_call(
                &format!("c{i}"),
                "s0__echo",
                json!({"text": "x"}),
            ));
        }
        model.push(text_answer("done", 1));
        let run = ok(
            measure(&mut run_cmd(home.path(), work.path(), model, "go")),
            "mcp call",
        );
        cpu.push(run.cpu.as_secs_f64() * 1000.0);
    }
    median(cpu)
}

pub fn run() -> Vec<Row> {
    let model = FakeModel::start();
    let screen_added = screen_start_ms(2) - screen_start_ms(0);
    let run_added = one_answer_ms(&model, 2) - one_answer_ms(&model, 0);
    let per_call = (cpu_ms(&model, CALLS) - cpu_ms(&model, 0)) / CALLS as f64;
    vec![
        Row {
            area: "mcp",
            what: "start-up added by two stdio servers before the first prompt can be sent (screen: spawn to prompt, medians of 10)"
                .to_string(),
            value: screen_added.max(0.0),
            unit: "ms",
            target: Some(20.0),
        },
        Row {
            area: "mcp",
            what: "the same in a one-answer `uji run`, which waits for the servers' handshakes before its first request (wall time, medians of 20)"
                .to_string(),
            value: run_added.max(0.0),
            unit: "ms",
            target: None,
        },
        Row {
            area: "mcp",
            what: format!(
                "one tool call to a local stdio server: uji CPU time per call (model turn included, {CALLS} calls)"
            ),
            value: per_call.max(0.0),
            unit: "ms",
            target: Some(2.0),
        },
    ]
}
