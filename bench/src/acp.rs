//! `uji acp` (issue 16): from spawn to the `initialize` answer, and what a
//! prompt through ACP costs over the same turn through `uji run`, against
//! the zero-latency fake model server on 127.0.0.1.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdout, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use uji_fake_model::FakeModel;

use crate::run::{ok, run_cmd, text_answer};
use crate::{Row, measure, median, uji};

struct Acp {
    child: Child,
    out: BufReader<ChildStdout>,
}

impl Acp {
    fn spawn(home: &std::path::Path, work: &std::path::Path, model: &FakeModel) -> Acp {
        let mut cmd = uji(home);
        cmd.current_dir(work)
            .env("OPENROUTER_API_KEY", "bench-key")
            .env("OPENROUTER_BASE_URL", model.base_url())
            .args(["acp"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let mut child = cmd.spawn().expect("spawn uji acp");
        let out = BufReader::new(child.stdout.take().expect("stdout"));
        Acp { child, out }
    }

    /// Sends request `id` and reads until its answer.
    fn call(&mut self, id: u64, method: &str, params: Value) -> Value {
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let stdin = self.child.stdin.as_mut().expect("stdin");
        writeln!(stdin, "{line}").expect("write to uji acp");
        loop {
            let mut line = String::new();
            let read = self.out.read_line(&mut line).expect("read uji acp");
            assert!(read > 0, "uji acp closed stdout before answering {method}");
            let message: Value = serde_json::from_str(&line).expect("a JSON-RPC line");
            if message["id"] == id && message.get("method").is_none() {
                assert!(message.get("error").is_none(), "{method} failed: {message}");
                return message;
            }
        }
    }

    fn finish(mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// A whole editor visit: spawn, initialize, session/new, one prompt, exit.
fn visit(home: &std::path::Path, work: &std::path::Path, model: &FakeModel) -> (f64, f64, f64) {
    let started = Instant::now();
    let mut acp = Acp::spawn(home, work, model);
    acp.call(1, "initialize", json!({"protocolVersion": 1}));
    let initialized = started.elapsed();
    let new = acp.call(2, "session/new", json!({"cwd": work, "mcpServers": []}));
    let session = new["result"]["sessionId"].clone();
    let prompt_started = Instant::now();
    let prompt = json!({"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]});
    let answer = acp.call(3, "session/prompt", prompt);
    assert_eq!(answer["result"]["stopReason"], "end_turn");
    let prompt_time = prompt_started.elapsed();
    acp.finish();
    (ms(initialized), ms(prompt_time), ms(started.elapsed()))
}

/// The same one-answer turn through `uji run --json`: from its `session`
/// line (the session configured, the prompt about to be submitted) to its
/// `done` line (the turn finished and saved).
fn run_turn(home: &std::path::Path, work: &std::path::Path, model: &FakeModel) -> f64 {
    let mut cmd = run_cmd(home, work, model, "hi");
    cmd.arg("--json")
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().expect("spawn uji run");
    let out = BufReader::new(child.stdout.take().expect("stdout"));
    let (mut session, mut done) = (None, None);
    for line in out.lines() {
        let line = line.expect("read uji run");
        let at = Instant::now();
        let event: Value = serde_json::from_str(&line).expect("a JSON line");
        match event["type"].as_str() {
            Some("session") => session = Some(at),
            Some("done") => done = Some(at),
            _ => {}
        }
    }
    assert!(
        child.wait().expect("wait uji run").success(),
        "uji run failed"
    );
    let (session, done) = (session.expect("a session line"), done.expect("a done line"));
    ms(done - session)
}

pub fn run() -> Vec<Row> {
    let home = tempfile::tempdir().expect("tempdir");
    let work = tempfile::tempdir().expect("tempdir");
    let model = FakeModel::start();
    let (mut init, mut prompt, mut overhead) = (vec![], vec![], vec![]);
    let mut per_prompt = vec![];
    // Pairs run back to back, and the median of their differences, so the
    // load of the machine weighs on both sides alike.
    for _ in 0..40 {
        model.push(text_answer("hello there", 3));
        let (i, p, w) = visit(home.path(), work.path(), &model);
        init.push(i);
        prompt.push(p);
        model.push(text_answer("hello there", 3));
        let run = ok(
            measure(&mut run_cmd(home.path(), work.path(), &model, "hi")),
            "acp baseline",
        );
        overhead.push(w - ms(run.wall));
        model.push(text_answer("hello there", 3));
        per_prompt.push(p - run_turn(home.path(), work.path(), &model));
    }
    vec![
        Row {
            area: "acp",
            what: "spawn → `initialize` answer (median of 40)".into(),
            value: median(init),
            unit: "ms",
            target: Some(20.0),
        },
        Row {
            area: "acp",
            what: "one text answer: `session/prompt` → `end_turn` in a running `uji acp`".into(),
            value: median(prompt),
            unit: "ms",
            target: None,
        },
        Row {
            area: "acp",
            what: "per-prompt overhead over `uji run`: `session/prompt` → `end_turn` − the same turn in `uji run --json` (`session` → `done` line), median of 40 pairs".into(),
            value: median(per_prompt),
            unit: "ms",
            target: Some(2.0),
        },
        Row {
            area: "acp",
            what: "per-visit overhead over `uji run`: (spawn, initialize, session/new, prompt, exit) − `uji run` wall time, median of 40 pairs".into(),
            value: median(overhead),
            unit: "ms",
            target: None,
        },
    ]
}
