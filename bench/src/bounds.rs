//! Issue 13's floods through `uji run` end to end: a command printing a
//! million lines, or one 10 MB line, with the answer in `--json` and in
//! text mode. Progress is paced and results bounded, so memory stays flat
//! and stdout small.

use serde_json::json;
use uji_fake_model::FakeModel;

use crate::run::{ok, run_cmd, text_answer, tool_call};
use crate::{Row, Run, measure};

const RUNS: usize = 3;

/// `uji run` of a turn whose one tool call is `command`, `RUNS` times.
fn flood(model: &FakeModel, command: &str, json_mode: bool) -> Vec<Run> {
    let home = tempfile::tempdir().expect("tempdir");
    let work = tempfile::tempdir().expect("tempdir");
    (0..RUNS)
        .map(|_| {
            model
                .push(tool_call(
                    "c1",
                    "run_command",
                    json!({ "command": command }),
                ))
                .push(text_answer("done", 1));
            let mut cmd = run_cmd(home.path(), work.path(), model, "flood");
            if json_mode {
                cmd.arg("--json");
            }
            ok(measure(&mut cmd), "flood")
        })
        .collect()
}

pub fn run() -> Vec<Row> {
    let model = FakeModel::start();
    let cases = [
        ("1,000,000 lines", "seq 1 1000000"),
        ("one 10 MB line", "head -c 10485760 /dev/zero | tr '\\0' x"),
    ];
    let mut rows = Vec::new();
    for (what, command) in cases {
        for (mode, json_mode) in [("--json", true), ("text", false)] {
            let runs = flood(&model, command, json_mode);
            let peak = runs.iter().map(|r| r.peak_rss_kb).max().unwrap_or(0) as f64 / 1024.0;
            let stdout = runs.iter().map(|r| r.stdout.len()).max().unwrap_or(0) as f64;
            rows.push(Row {
                area: "bounds",
                what: format!("`uji run`, a command printing {what}, {mode}: peak RSS"),
                value: peak,
                unit: "MiB",
                target: Some(60.0),
            });
            rows.push(Row {
                area: "bounds",
                what: format!("`uji run`, a command printing {what}, {mode}: stdout"),
                value: stdout,
                unit: "bytes",
                target: None,
            });
        }
    }
    rows
}
