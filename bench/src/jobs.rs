//! Issue 17's background jobs: a job printing a million lines, read through
//! `uji run` as a user would run it, keeps uji's memory flat; and what
//! starting a job adds to a `run_command` call (in process, from
//! `plugins/tools/examples/job_start_bench.rs`).

use serde_json::json;
use uji_fake_model::FakeModel;

use crate::examples::numbers;
use crate::run::{ok, run_cmd, text_answer, tool_call};
use crate::{Row, Run, measure};

const RUNS: usize = 3;

/// One `uji run`: the model starts `seq 1 1000000` as a job, waits for it
/// to end, reads it with `job_output`, and answers.
fn million_line_job(model: &FakeModel) -> Run {
    let home = tempfile::tempdir().expect("tempdir");
    let work = tempfile::tempdir().expect("tempdir");
    let wait = "while [ ! -e done ]; do sleep 0.05; done; sleep 1";
    model
        .push(tool_call(
            "c1",
            "run_command",
            json!({"command": "seq 1 1000000; touch done", "run_in_background": true}),
        ))
        .push(tool_call("c2", "run_command", json!({"command": wait})))
        .push(tool_call("c3", "job_output", json!({"id": 1})))
        .push(text_answer("done", 1));
    let run = ok(
        measure(&mut run_cmd(home.path(), work.path(), model, "flood")),
        "job flood",
    );
    let read = model.last_request().body_text();
    assert!(
        read.contains("job 1 exited with code 0"),
        "the job had not ended when it was read"
    );
    run
}

pub fn run() -> Vec<Row> {
    let model = FakeModel::start();
    let runs: Vec<Run> = (0..RUNS).map(|_| million_line_job(&model)).collect();
    let start = numbers("job_start_bench");
    vec![
        Row {
            area: "jobs",
            what: "`uji run`, a background job printing 1,000,000 lines, read with job_output: peak RSS"
                .to_string(),
            value: crate::peak_mib(&runs),
            unit: "MiB",
            target: Some(60.0),
        },
        Row {
            area: "jobs",
            what: "run_command: starting a background job, added to the call".to_string(),
            value: start.get("job_start_added_ms").copied().unwrap_or(f64::NAN),
            unit: "ms",
            target: Some(2.0),
        },
    ]
}
