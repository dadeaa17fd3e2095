//! The Lua spec suite (tests/lua/*_spec.lua): describe/it specs in the
//! style of the public uji's own, each test run in a fresh `uji run`
//! process (the real binary and the real plugins) against the fake model on
//! 127.0.0.1, whose one tool call runs the test through the runner's `spec`
//! tool: inside a session and inside a task, so it may wait.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use uji_fake_model::FakeModel;
use uji_tests::chat::{answer, call, uji_with_model};
use uji_tests::{Sandbox, text};

fn specs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("lua")
}

/// A sandbox whose init.lua loads the runner (and the defaults, as a
/// user's init.lua written for the public uji does).
fn sandbox() -> Sandbox {
    let sandbox = Sandbox::new();
    let runner = specs_dir().join("runner.lua");
    sandbox.write_init(&format!(
        "require(\"uji.builtin.defaults\")\ndofile({:?})\n",
        runner.display().to_string()
    ));
    sandbox
}

/// Runs the `spec` tool with `args` in a fresh `uji run` against the fake
/// model (so a spec runs inside a session, as plugins do): the model calls
/// the tool, and its result is what uji sent back. Returns that result
/// and what uji said on stderr (notices).
fn spec_tool(model: &FakeModel, args: serde_json::Value, env: &[(&str, &str)]) -> (String, String) {
    let sandbox = sandbox();
    model.push(call("spec", "spec", args)).push(answer("ran"));
    let mut cmd = uji_with_model(&sandbox, model, "sk-spec-model-key");
    // A provider key in uji's environment: the job spec checks that no
    // process a plugin starts sees it.
    cmd.env("ANTHROPIC_API_KEY", "sk-spec-secret-key")
        .args([
            "run",
            "--yes",
            "--model",
            "openrouter/qwen/qwen3-coder",
            "spec",
        ])
        .stdin(std::process::Stdio::null());
    for (name, value) in env {
        cmd.env(name, value);
    }
    let output = cmd.output().unwrap();
    let (_, stderr) = text(&output);
    let result = model
        .requests()
        .last()
        .and_then(|r| {
            r.json["messages"]
                .as_array()
                .and_then(|m| m.iter().rev().find(|m| m["role"] == "tool"))
                .and_then(|m| m["content"].as_str().map(str::to_string))
        })
        .unwrap_or_default();
    (result, stderr)
}

/// Runs every test of one spec file, each in a fresh process; fails with
/// every failure listed.
fn run_spec_file(name: &str) {
    run_spec_file_with(name, &[]);
}

/// [`run_spec_file`] with these environment variables for uji.
fn run_spec_file_with(name: &str, env: &[(&str, &str)]) {
    let model = FakeModel::start();
    let file = specs_dir().join(name);
    let file = file.display().to_string();
    let (listed, said) = spec_tool(&model, serde_json::json!({"file": file}), env);
    let tests: Vec<&str> = listed.lines().filter(|l| !l.trim().is_empty()).collect();
    assert!(
        !tests.is_empty() && !listed.starts_with("FAIL"),
        "{name} lists no tests: {listed}{said}"
    );
    let mut failures = Vec::new();
    for test in &tests {
        let (answer, said) =
            spec_tool(&model, serde_json::json!({"file": file, "test": test}), env);
        if answer.trim() != "PASS" {
            failures.push(format!("{test}: {answer}{said}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} tests in {name} failed:\n{}",
        failures.len(),
        tests.len(),
        failures.join("\n")
    );
}

#[test]
fn tasks_spec() {
    run_spec_file("tasks_spec.lua");
}

#[test]
fn files_spec() {
    run_spec_file("files_spec.lua");
}

#[test]
fn compat_spec() {
    run_spec_file("compat_spec.lua");
}

#[test]
fn job_spec() {
    run_spec_file("job_spec.lua");
}

#[test]
fn packs_spec() {
    run_spec_file("packs_spec.lua");
}

#[test]
fn context_spec() {
    run_spec_file("context_spec.lua");
}

#[test]
fn session_spec() {
    run_spec_file("session_spec.lua");
}

/// A loopback server for http_spec.lua: `/echo` answers the request line,
/// its headers and body as text; `/lines` three lines in separate writes;
/// anything else 404.
fn http_server() -> String {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut first = String::new();
            let _ = reader.read_line(&mut first);
            let mut head = String::new();
            let mut length = 0usize;
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                let lower = line.to_ascii_lowercase();
                if let Some(v) = lower.strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                head.push_str(&lower);
            }
            let mut body = vec![0; length];
            let _ = reader.read_exact(&mut body);
            let path = first.split_whitespace().nth(1).unwrap_or("/").to_string();
            if path == "/echo" {
                let text = format!("{}{head}{}", first, String::from_utf8_lossy(&body));
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
                    text.len()
                );
            } else if path == "/lines" {
                let _ = write!(stream, "HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n");
                for part in ["one\ntw", "o\r\n", "three"] {
                    let _ = stream.write_all(part.as_bytes());
                    let _ = stream.flush();
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
            } else {
                let _ = write!(
                    stream,
                    "HTTP/1.1 404 Not Found\r\ncontent-length: 4\r\nconnection: close\r\n\r\nnope"
                );
            }
        }
    });
    base
}

#[test]
fn http_spec() {
    let base = http_server();
    run_spec_file_with("http_spec.lua", &[("SPEC_HTTP_URL", &base)]);
}
