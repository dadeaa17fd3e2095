//! The agent loop and the wires, end to end through `uji run` against the
//! fake model server on 127.0.0.1 (zero latency).

use std::path::Path;
use std::process::Command;

use serde_json::json;
use uji_fake_model::chat::ChatEvents;
use uji_fake_model::gemini::GeminiEvents;
use uji_fake_model::responses::ResponsesEvents;
use uji_fake_model::{FakeModel, Script};

use crate::{Row, Run, measure, median, uji};

pub(crate) fn run_cmd(home: &Path, work: &Path, model: &FakeModel, prompt: &str) -> Command {
    let mut cmd = uji(home);
    cmd.current_dir(work)
        .env("OPENROUTER_API_KEY", "bench-key")
        .env("OPENROUTER_BASE_URL", model.base_url())
        .args(["run", "--yes", "--model", "openrouter/m", prompt]);
    cmd
}

pub(crate) fn text_answer(text: &str, pieces: usize) -> Script {
    Script::sse(
        ChatEvents::new("m")
            .text(text, pieces)
            .finish("stop")
            .usage(10, 10, 0)
            .done(),
    )
}

pub(crate) fn tool_call(id: &str, name: &str, args: serde_json::Value) -> Script {
    Script::sse(
        ChatEvents::new("m")
            .tool_call(0, id, name, &args.to_string(), 2)
            .finish("tool_calls")
            .done(),
    )
}

pub(crate) fn ok(run: Run, what: &str) -> Run {
    assert!(run.success, "uji run failed during the {what} benchmark");
    run
}

pub fn run() -> Vec<Row> {
    let home = tempfile::tempdir().expect("tempdir");
    let work = tempfile::tempdir().expect("tempdir");
    let model = FakeModel::start();

    let mut one = Vec::new();
    for _ in 0..20 {
        model.push(text_answer("hello there", 3));
        one.push(ok(
            measure(&mut run_cmd(home.path(), work.path(), &model, "hi")),
            "one-answer",
        ));
    }
    let mut four = Vec::new();
    for _ in 0..20 {
        std::fs::write(work.path().join("notes.txt"), "status: draft\n").expect("write");
        model
            .push(tool_call("c1", "read_file", json!({"path": "notes.txt"})))
            .push(tool_call(
                "c2",
                "edit_file",
                json!({"path": "notes.txt", "old_string": "draft", "new_string": "final"}),
            ))
            .push(tool_call(
                "c3",
                "run_command",
                json!({"command": "cat notes.txt"}),
            ))
            .push(text_answer("done", 2));
        four.push(ok(
            measure(&mut run_cmd(
                home.path(),
                work.path(),
                &model,
                "finish the notes",
            )),
            "four-request",
        ));
    }
    let ms = |runs: &[Run]| median(runs.iter().map(|r| r.wall.as_secs_f64() * 1000.0).collect());
    let peak = crate::peak_mib;
    let (a, b) = (ms(&one), ms(&four));
    vec![
        Row {
            area: "run",
            what: "(a) one text answer: wall time".into(),
            value: a,
            unit: "ms",
            target: Some(50.0),
        },
        Row {
            area: "run",
            what: "(a) one text answer: peak RSS".into(),
            value: peak(&one),
            unit: "MB",
            target: Some(30.0),
        },
        Row {
            area: "run",
            what: "(b) read + edit + command + answer (4 requests): wall time".into(),
            value: b,
            unit: "ms",
            target: Some(100.0),
        },
        Row {
            area: "run",
            what: "(b) peak RSS".into(),
            value: peak(&four),
            unit: "MB",
            target: None,
        },
        Row {
            area: "run",
            what: "overhead per round trip, (b − a) / 3".into(),
            value: (b - a) / 3.0,
            unit: "ms",
            target: None,
        },
    ]
}

/// The wires the `wire` rows measure: name in the table, wire, the model
/// uji runs, the environment pointing it at the fake server, and a streamed
/// answer of `text` in `pieces` events in the wire's format.
struct WireCase {
    label: &'static str,
    wire: &'static str,
    model: &'static str,
    env: [(&'static str, &'static str); 2],
    answer: fn(&str, usize) -> Script,
}

const WIRES: [WireCase; 3] = [
    WireCase {
        label: "Chat Completions",
        wire: "openai-chat",
        model: "openrouter/m",
        env: [
            ("OPENROUTER_API_KEY", "bench-key"),
            ("OPENROUTER_BASE_URL", ""),
        ],
        answer: text_answer,
    },
    WireCase {
        label: "Responses",
        wire: "openai-responses",
        model: "openai/gpt-6.2-sol",
        env: [("OPENAI_API_KEY", "bench-key"), ("OPENAI_BASE_URL", "")],
        answer: |text, pieces| {
            Script::sse(
                ResponsesEvents::new("gpt-6.2-sol")
                    .text(text, pieces)
                    .usage(10, 10, 0)
                    .completed(),
            )
        },
    },
    WireCase {
        label: "Gemini",
        wire: "gemini",
        model: "gemini/gemini-3.8-flash",
        env: [("GEMINI_API_KEY", "bench-key"), ("GEMINI_BASE_URL", "")],
        answer: |text, pieces| {
            Script::sse(
                GeminiEvents::new("gemini-3.8-flash")
                    .text(text, pieces)
                    .usage(10, 10, 0, 0)
                    .finish("STOP"),
            )
        },
    },
];

/// uji's CPU time (median of 5) for a 50,000-chunk answer through `uji run`.
fn stream_cpu(case: &WireCase) -> f64 {
    let home = tempfile::tempdir().expect("tempdir");
    let work = tempfile::tempdir().expect("tempdir");
    let model = FakeModel::start();
    let base = model.base_url();
    let text: String = (0..50_000)
        .map(|i| char::from(b'a' + (i % 26) as u8))
        .collect();
    let mut runs = Vec::new();
    for _ in 0..5 {
        model.push((case.answer)(&text, 50_000));
        let mut cmd = uji(home.path());
        cmd.current_dir(work.path())
            .env(case.env[0].0, case.env[0].1)
            .env(case.env[1].0, &base)
            .args(["run", "--yes", "--model", case.model, "stream a lot"]);
        let run = ok(measure(&mut cmd), "50k-chunk");
        assert!(
            run.stdout.len() >= 50_000,
            "the {} answer did not come through whole",
            case.label
        );
        runs.push(run);
    }
    median(runs.iter().map(|r| r.cpu.as_secs_f64()).collect())
}

fn parser_row(label: &str, example: &str, key: &str) -> Row {
    Row {
        area: "wire",
        what: format!("50,000-event answer, SSE reader + {label} parser only"),
        value: crate::examples::numbers(example)
            .get(key)
            .copied()
            .unwrap_or(f64::NAN),
        unit: "ms",
        target: None,
    }
}

/// Per wire: the whole stream through `uji run`, and the first byte of a
/// request (cold and warm).
fn wire_rows(case: &WireCase) -> Vec<Row> {
    let first_byte = crate::examples::numbers_with("wire_first_byte", &[case.wire]);
    let byte = |key: &str| first_byte.get(key).copied().unwrap_or(f64::NAN);
    vec![
        Row {
            area: "wire",
            what: format!(
                "50,000-chunk answer through `uji run`, {}: uji CPU time",
                case.label
            ),
            value: stream_cpu(case),
            unit: "s",
            target: Some(0.5),
        },
        Row {
            area: "wire",
            what: format!(
                "request built → first byte on the socket, {} (cold: runtime + connect)",
                case.label
            ),
            value: byte("first_byte_cold_us"),
            unit: "µs",
            target: None,
        },
        Row {
            area: "wire",
            what: format!(
                "request built → first byte on the socket, {} (warm, median of 50)",
                case.label
            ),
            value: byte("first_byte_warm_us"),
            unit: "µs",
            target: None,
        },
    ]
}

pub fn wire() -> Vec<Row> {
    let mut rows: Vec<Row> = WIRES.iter().flat_map(wire_rows).collect();
    rows.push(Row {
        area: "wire",
        what: "50,000-chunk answer, SSE reader + Chat Completions parser only".into(),
        value: crate::examples::numbers("stream_bench")
            .get("stream_50k_chunks_ms")
            .copied()
            .unwrap_or(f64::NAN),
        unit: "ms",
        target: None,
    });
    rows.push(parser_row(
        "Responses",
        "responses_stream_bench",
        "responses_50k_chunks_ms",
    ));
    rows.push(parser_row(
        "Gemini",
        "gemini_stream_bench",
        "gemini_50k_chunks_ms",
    ));
    rows
}
