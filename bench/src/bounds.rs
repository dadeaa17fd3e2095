//! Issue 13's floods through `uji run` end to end: a command printing a
//! million lines, or one 10 MB line, with the answer in `--json` and in
//! text mode. Progress is paced and results bounded, so memory stays flat
//! and stdout small. And a model that never stops answering, streamed until
//! uji stops it at the answer cap.

use std::io::Write;
use std::path::Path;

use serde_json::json;
use uji_fake_model::{FakeModel, Script, chat};

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

/// `uji run` against a model streaming text without end, `RUNS` times; each
/// run must fail (the answer cap stops it).
fn endless(model: &FakeModel, json_mode: bool) -> Vec<Run> {
    let home = tempfile::tempdir().expect("tempdir");
    let work = tempfile::tempdir().expect("tempdir");
    let chunk = chat::frame(&json!({
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {"content": "all work and no play ".repeat(50)}}],
    }));
    (0..RUNS)
        .map(|_| {
            model.push(Script::endless(Vec::<String>::new(), chunk.clone()));
            let mut cmd = run_cmd(home.path(), work.path(), model, "talk");
            if json_mode {
                cmd.arg("--json");
            }
            let run = measure(&mut cmd);
            assert!(!run.success, "an endless answer was not stopped");
            run
        })
        .collect()
}

/// A file of at most `bytes` bytes (within a line of it) whose every line holds "quick".
fn write_lines(path: &Path, bytes: usize) {
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).expect("create"));
    let (mut written, mut i) = (0, 0u64);
    loop {
        let line = format!("line {i:>10}: the quick brown fox jumps over the lazy dog\n");
        if written + line.len() > bytes {
            break;
        }
        written += line.len();
        file.write_all(line.as_bytes()).expect("write");
        i += 1;
    }
}

/// `uji run --json` of a turn whose one tool call is an `edit_file` with
/// `replace_all` changing every line of a `mib` MiB file, `RUNS` times (the
/// file written afresh before each).
fn replace_all(model: &FakeModel, mib: usize) -> Vec<Run> {
    let home = tempfile::tempdir().expect("tempdir");
    let work = tempfile::tempdir().expect("tempdir");
    (0..RUNS)
        .map(|_| {
            write_lines(&work.path().join("big.txt"), mib << 20);
            model
                .push(tool_call(
                    "c1",
                    "edit_file",
                    json!({"path": "big.txt", "old_string": "quick", "new_string": "slow", "replace_all": true}),
                ))
                .push(text_answer("done", 1));
            let mut cmd = run_cmd(home.path(), work.path(), model, "edit");
            cmd.arg("--json");
            ok(measure(&mut cmd), "replace_all")
        })
        .collect()
}

/// Issue 26's edit: the rows of area `edit-bounds` (in the table's `bounds`).
pub fn edits() -> Vec<Row> {
    let model = FakeModel::start();
    let mut rows = Vec::new();
    for mib in [16, 64] {
        let runs = replace_all(&model, mib);
        rows.push(Row {
            area: "bounds",
            what: format!(
                "`uji run --json`, edit_file with replace_all changing every line of a {mib} MiB file: peak RSS"
            ),
            value: crate::peak_mib(&runs),
            unit: "MiB",
            // Issue 26: at most about 4× the file plus 64 MiB.
            target: Some((4 * mib + 64) as f64),
        });
    }
    rows
}

pub fn run() -> Vec<Row> {
    let model = FakeModel::start();
    let mut rows = Vec::new();
    let cases = [
        ("1,000,000 lines", "seq 1 1000000"),
        ("one 10 MB line", "head -c 10485760 /dev/zero | tr '\\0' x"),
    ];
    for (what, command) in cases {
        for (mode, json_mode) in [("--json", true), ("text", false)] {
            let runs = flood(&model, command, json_mode);
            let peak = crate::peak_mib(&runs);
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
    for (mode, json_mode) in [("--json", true), ("text", false)] {
        let runs = endless(&model, json_mode);
        let peak = crate::peak_mib(&runs);
        rows.push(Row {
            area: "bounds",
            what: format!("`uji run`, an answer that never ends, until stopped, {mode}: peak RSS"),
            value: peak,
            unit: "MiB",
            target: Some(100.0),
        });
    }
    rows
}
