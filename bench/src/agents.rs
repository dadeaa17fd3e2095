//! Subagents (issue 32): what starting a child costs over a plain turn,
//! four children at once against one, and the parent's memory per running
//! child. Everything through `uji run` against the fake model, each
//! session answered by its own script (its first user message).

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use uji_fake_model::FakeModel;

use crate::run::{ok, run_cmd, text_answer, tool_call};
use crate::{Row, measure, median};

const RUNS: usize = 25;

use uji_fake_model::chat::first_user_text as first_user;

/// Scripts one parent turn: a call (`subagent` with `tasks`, or a plain
/// `read_file` when `tasks` is empty), then a final answer; each child
/// answers once.
fn script(model: &FakeModel, round: usize, tasks: usize, latency: Duration) {
    if tasks == 0 {
        model.push(tool_call("p1", "read_file", json!({"path": "notes.txt"})));
    } else {
        let list: Vec<Value> = (0..tasks)
            .map(|i| json!({"task": format!("bench task {round}-{i}")}))
            .collect();
        model.push(tool_call("p1", "subagent", json!({ "tasks": list })));
        for i in 0..tasks {
            let marker = format!("bench task {round}-{i}");
            model.push_when(
                move |r| first_user(r).contains(&marker),
                text_answer("the child's answer", 3).delay(latency),
            );
        }
    }
    model.push(text_answer("done", 2));
}

fn wall_ms(home: &Path, work: &Path, model: &FakeModel, tasks: usize, latency: Duration) -> f64 {
    let mut times = Vec::new();
    for round in 0..RUNS {
        script(model, round, tasks, latency);
        let run = ok(
            measure(&mut run_cmd(home, work, model, "delegate")),
            "subagents",
        );
        times.push(run.wall.as_secs_f64() * 1000.0);
    }
    median(times)
}

/// The parent's peak RSS (VmHWM, read from /proc while it runs), in MiB:
/// its children run in its process.
fn parent_peak_mib(home: &Path, work: &Path, model: &FakeModel, tasks: usize) -> f64 {
    let mut peaks = Vec::new();
    for round in 0..5 {
        script(model, 1000 + round, tasks, Duration::ZERO);
        let mut child = run_cmd(home, work, model, "delegate")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("spawn uji");
        let status = format!("/proc/{}/status", child.id());
        let mut peak_kb = 0u64;
        let started = Instant::now();
        loop {
            if let Ok(text) = std::fs::read_to_string(&status)
                && let Some(kb) = text
                    .lines()
                    .find(|l| l.starts_with("VmHWM:"))
                    .and_then(|l| l.split_whitespace().nth(1))
                    .and_then(|n| n.parse::<u64>().ok())
            {
                peak_kb = peak_kb.max(kb);
            }
            if child.try_wait().ok().flatten().is_some() || started.elapsed().as_secs() > 60 {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let _ = child.wait();
        peaks.push(peak_kb as f64 / 1024.0);
    }
    median(peaks)
}

pub fn run() -> Vec<Row> {
    let home = tempfile::tempdir().expect("tempdir");
    let work = tempfile::tempdir().expect("tempdir");
    std::fs::write(work.path().join("notes.txt"), "notes\n").expect("write");
    let model = FakeModel::start();
    // A turn of the same answer: one `uji run` answered once.
    let mut plain = Vec::new();
    for _ in 0..RUNS {
        model.push(text_answer("the child's answer", 3));
        let run = ok(
            measure(&mut run_cmd(home.path(), work.path(), &model, "hi")),
            "subagents",
        );
        plain.push(run.wall.as_secs_f64() * 1000.0);
    }
    let turn = median(plain);
    let now = Duration::ZERO;
    let base = wall_ms(home.path(), work.path(), &model, 0, now);
    let one = wall_ms(home.path(), work.path(), &model, 1, now) - base;
    let four = wall_ms(home.path(), work.path(), &model, 4, now) - base;
    // A model that takes 20 ms per streamed event (about 100 ms an answer):
    // what a child mostly does with a real model is wait.
    let slow = Duration::from_millis(20);
    let one_slow = wall_ms(home.path(), work.path(), &model, 1, slow) - base;
    let four_slow = wall_ms(home.path(), work.path(), &model, 4, slow) - base;
    let memory0 = parent_peak_mib(home.path(), work.path(), &model, 0);
    let memory4 = parent_peak_mib(home.path(), work.path(), &model, 4);
    vec![
        Row {
            area: "agents",
            what: format!(
                "starting a child: one subagent call ({one:.1} ms) minus a whole `uji run` of the same answer ({turn:.1} ms)"
            ),
            value: one - turn,
            unit: "ms",
            target: Some(10.0),
        },
        Row {
            area: "agents",
            what: format!(
                "four children at once ({four:.1} ms) over one ({one:.1} ms), a model that answers at once"
            ),
            value: four / one,
            unit: "x",
            target: Some(1.5),
        },
        Row {
            area: "agents",
            what: format!(
                "four children at once ({four_slow:.1} ms) over one ({one_slow:.1} ms), the model answering in about 100 ms"
            ),
            value: four_slow / one_slow,
            unit: "x",
            target: Some(1.5),
        },
        Row {
            area: "agents",
            what: format!(
                "parent's peak RSS per running child ({memory0:.1} MiB without, {memory4:.1} with four)"
            ),
            value: ((memory4 - memory0) / 4.0).max(0.0),
            unit: "MiB",
            target: Some(5.0),
        },
    ]
}
