//! Floods and oversized results through `uji run`, the real plugins and the
//! fake model: progress stays a few events, every tool's result reaches the
//! model bounded with a note naming its spill file, and spill files are
//! capped, redacted, kept per session and cleaned up.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use uji_fake_model::{FakeModel, RecordedRequest};
use uji_tests::chat::{answer, call, events, uji_with_model};
use uji_tests::{Sandbox, text};

const MODEL: &str = "openrouter/test-model";
const KEY: &str = "sk-bounds-secret-key-4242";

fn run(sandbox: &Sandbox, model: &FakeModel, args: &[&str]) -> (Output, String, String) {
    let output = uji_with_model(sandbox, model, KEY)
        .args(["run", "--yes", "--model", MODEL])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}\n{stdout}");
    (output, stdout, stderr)
}

/// The text of the last tool result a request carried.
fn last_result(request: &RecordedRequest) -> String {
    let messages = request.json["messages"].as_array().unwrap();
    let tool = messages.iter().rev().find(|m| m["role"] == "tool").unwrap();
    tool["content"].as_str().unwrap().to_string()
}

/// The spill file a result's note names.
fn named_spill(result: &str) -> PathBuf {
    let start = result.find("): ").map(|i| i + 3).or_else(|| {
        result
            .find("Full output: ")
            .map(|i| i + "Full output: ".len())
    });
    let rest = &result[start.unwrap_or_else(|| panic!("no spill file named: {result}"))..];
    PathBuf::from(rest.trim_end().trim_end_matches(']'))
}

fn spill_root(sandbox: &Sandbox) -> PathBuf {
    sandbox.root.path().join("data/spill")
}

fn session_id(events: &[Value]) -> String {
    events[0]["id"].as_str().unwrap().to_string()
}

/// The model runs `command`, then answers "done".
fn script_command(model: &FakeModel, command: &str) {
    model
        .push(call("c1", "run_command", json!({ "command": command })))
        .push(answer("done"));
}

const FLOOD: &str = "seq 1 1000000";

#[test]
fn a_million_lines_in_json_mode_are_a_few_progress_events() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    script_command(&model, FLOOD);
    let (_, stdout, _) = run(&sandbox, &model, &["--json", "count"]);
    assert!(
        stdout.len() < 200_000,
        "stdout stays small: {} bytes",
        stdout.len()
    );
    let events = events(&stdout);
    let progress: Vec<&Value> = events.iter().filter(|e| e["type"] == "progress").collect();
    assert!(
        !progress.is_empty() && progress.len() < 300,
        "progress is paced: {} events",
        progress.len()
    );
    assert_eq!(progress[0]["line"], "1");
    assert_eq!(
        progress.last().unwrap()["line"],
        "1000000",
        "the latest line is shown in the end"
    );
    let result = last_result(&model.requests()[1]);
    assert!(
        result.contains("[Showing lines 998001-1000000 of 1000000. Full output: "),
        "{}",
        &result[result.len().saturating_sub(300)..]
    );
    let spill = named_spill(&result);
    assert!(spill.starts_with(spill_root(&sandbox).join(session_id(&events))));
    assert_eq!(std::fs::metadata(&spill).unwrap().len(), 6_888_896);
}

#[test]
fn a_million_lines_in_text_mode_print_only_the_answer() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    script_command(&model, FLOOD);
    let (_, stdout, stderr) = run(&sandbox, &model, &["count"]);
    assert_eq!(stdout, "done\n");
    assert!(stderr.len() < 10_000, "{stderr}");
}

#[test]
fn a_lua_tool_returning_10_mb_reaches_the_model_cut_with_the_rest_spilled() {
    let sandbox = Sandbox::new();
    std::fs::write(
        sandbox.config().join("init.lua"),
        r#"
require("uji.defaults")
uji.tool.add("big", {
  description = "Returns ten megabytes.",
  policy = "allow",
  run = function() return string.rep("x", 10 * 1024 * 1024) end,
})
"#,
    )
    .unwrap();
    let model = FakeModel::start();
    model.push(call("c1", "big", json!({}))).push(answer("big"));
    let (_, stdout, _) = run(&sandbox, &model, &["--json", "go"]);
    let result = last_result(&model.requests()[1]);
    assert!(result.len() < 60 * 1024, "{} bytes", result.len());
    assert!(
        result.contains("[Showing last 50.0KB of line 1 (line is 10.0MB). Full output: "),
        "{}",
        &result[result.len().saturating_sub(300)..]
    );
    let spill = named_spill(&result);
    let id = session_id(&events(&stdout));
    assert!(
        spill.starts_with(spill_root(&sandbox).join(&id)),
        "{spill:?}"
    );
    assert_eq!(std::fs::metadata(&spill).unwrap().len(), 10 * 1024 * 1024);
    let saved = sandbox
        .root
        .path()
        .join(format!("data/sessions/{id}.jsonl"));
    assert!(
        std::fs::metadata(saved).unwrap().len() < 200_000,
        "the session keeps the bounded result"
    );
}

#[test]
fn a_native_tool_result_is_bounded_like_the_built_ins() {
    let sandbox = Sandbox::new();
    let plugins = uji_tests::plugin_dir(&["uji_fixture_misbehaving"]);
    let model = FakeModel::start();
    let long = "y\n".repeat(100_000);
    model
        .push(call("c1", "echo", json!({ "text": long })))
        .push(answer("echoed"));
    let output = uji_with_model(&sandbox, &model, KEY)
        .env("UJI_PLUGIN_PATH", plugins.path())
        .args(["run", "--yes", "--model", MODEL, "echo"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success(), "{:?}", text(&output));
    let result = last_result(&model.requests()[1]);
    assert!(
        result.contains("\n\n[Showing lines 98001-100000 of 100000. Full output: "),
        "{}",
        &result[result.len().saturating_sub(300)..]
    );
    assert_eq!(std::fs::read_to_string(named_spill(&result)).unwrap(), long);
}

#[test]
fn a_spill_file_stops_at_50_mb_and_says_the_output_was_cut() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    script_command(&model, "head -c 60000000 /dev/zero | tr '\\0' y");
    run(&sandbox, &model, &["flood"]);
    let result = last_result(&model.requests()[1]);
    assert!(
        result.contains("Full output (its first 50.0MB): "),
        "{}",
        &result[result.len().saturating_sub(300)..]
    );
    let spill = named_spill(&result);
    let len = std::fs::metadata(&spill).unwrap().len();
    assert!(
        (50 * 1024 * 1024..50 * 1024 * 1024 + 200).contains(&len),
        "{len}"
    );
    let data = std::fs::read(&spill).unwrap();
    assert!(data.ends_with(b"[output cut: uji keeps at most the first 50.0MB of an output]\n"));
}

#[test]
fn keys_are_redacted_in_spill_files_which_go_with_their_session() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.work().join("key.txt"), format!("key={KEY}\n")).unwrap();
    let model = FakeModel::start();
    script_command(&model, "cat key.txt; seq 1 5000");
    let (_, stdout, _) = run(&sandbox, &model, &["--json", "leak"]);
    let spill = named_spill(&last_result(&model.requests()[1]));
    let saved = std::fs::read_to_string(&spill).unwrap();
    assert!(saved.starts_with("key=<redacted>\n1\n"), "{}", &saved[..40]);
    assert!(!saved.contains(KEY));

    let id = session_id(&events(&stdout));
    let deleted = sandbox.uji().args(["delete", &id]).output().unwrap();
    assert!(deleted.status.success(), "{:?}", text(&deleted));
    assert!(!spill.exists());
    assert!(!spill_root(&sandbox).join(&id).exists());
}

fn spill_file(sandbox: &Sandbox, session: &str, age: Duration) -> PathBuf {
    let dir = spill_root(sandbox).join(session);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("uji-output-1-0.log");
    let file = std::fs::File::create(&path).unwrap();
    file.set_modified(SystemTime::now() - age).unwrap();
    path
}

#[test]
fn spill_files_older_than_a_week_are_removed_when_uji_starts() {
    // `uji list` and `uji delete` load no plugins but clean up all the same.
    for args in [&["plugins"][..], &["list"], &["delete", "no-such-session"]] {
        let sandbox = Sandbox::new();
        let day = Duration::from_secs(24 * 60 * 60);
        let old = spill_file(&sandbox, "old-session", 8 * day);
        let recent = spill_file(&sandbox, "recent-session", 6 * day);
        let output = sandbox.uji().args(args).output().unwrap();
        assert!(
            output.status.code().is_some(),
            "{args:?}: {:?}",
            text(&output)
        );
        assert!(!old.exists(), "{args:?}");
        assert!(
            !old.parent().is_some_and(Path::exists),
            "{args:?}: its empty directory too"
        );
        assert!(recent.exists(), "{args:?}");
    }
}

/// The longest line of `text` (a session file, `--json` output) holding a
/// tool result (the model's own arguments are as long as it made them).
fn longest_result_line(text: &str) -> usize {
    text.lines()
        .filter(|l| l.contains(r#""role":"tool""#))
        .map(str::len)
        .max()
        .unwrap_or(0)
}

#[test]
fn a_diff_of_megabytes_is_cut_in_the_result_the_event_and_the_session() {
    let sandbox = Sandbox::new();
    let lines: String = (0..60_000)
        .map(|n| format!("line {n:>8}: the quick brown fox jumps over the lazy dog\n"))
        .collect();
    std::fs::write(sandbox.work().join("edit.txt"), &lines).unwrap();
    std::fs::write(sandbox.work().join("write.txt"), &lines).unwrap();
    let model = FakeModel::start();
    model
        .push(call(
            "c1",
            "edit_file",
            json!({"path": "edit.txt", "old_string": "quick", "new_string": "slow", "replace_all": true}),
        ))
        .push(call(
            "c2",
            "write_file",
            json!({"path": "write.txt", "content": lines.replace("lazy", "sleepy")}),
        ))
        // The 3 MB write fills the context: the conversation is compacted
        // (this answer is its summary) before the last answer.
        .push(answer("summary"))
        .push(answer("done"));
    let (_, stdout, _) = run(&sandbox, &model, &["--json", "edit"]);
    let edited = std::fs::read_to_string(sandbox.work().join("edit.txt")).unwrap();
    assert_eq!(
        edited,
        lines.replace("quick", "slow"),
        "the edit itself is whole"
    );

    let max = uji_protocol::diff::MAX_DIFF_BYTES + 64 * 1024;
    let longest = longest_result_line(&stdout);
    assert!(longest > 0 && longest < max, "{longest} bytes");
    let diffs: Vec<Value> = events(&stdout)
        .into_iter()
        .filter(|e| e["type"] == "message" && e["message"]["role"] == "tool")
        .map(|e| e["message"]["diff"].clone())
        .collect();
    assert_eq!(diffs.len(), 2, "{stdout:.2000}");
    for diff in &diffs {
        assert_eq!(
            (&diff["added"], &diff["removed"]),
            (&json!(60_000), &json!(60_000))
        );
        let unified = diff["unified"].as_str().unwrap();
        let last = unified.lines().last().unwrap();
        assert!(
            last.starts_with("… diff cut at ") && last.contains(" of 120003 lines ("),
            "{last}"
        );
        assert!(unified.len() <= uji_protocol::diff::MAX_DIFF_BYTES + 256);
        assert!(unified.lines().count() <= uji_protocol::diff::MAX_DIFF_LINES + 1);
    }

    let id = session_id(&events(&stdout));
    let saved = std::fs::read_to_string(
        sandbox
            .root
            .path()
            .join(format!("data/sessions/{id}.jsonl")),
    )
    .unwrap();
    assert!(
        saved.contains("… diff cut at "),
        "the session keeps the cut diff"
    );
    let longest = longest_result_line(&saved);
    assert!(longest > 0 && longest < max, "{longest} bytes");
}

/// An answer with `text` whose usage says nearly `u64::MAX` tokens each way.
fn huge_usage_answer(text: &str) -> uji_fake_model::Script {
    let near = u64::MAX - 5;
    uji_fake_model::Script::sse(
        uji_fake_model::chat::ChatEvents::new("test-model")
            .text(text, 1)
            .finish("stop")
            .usage(near, near, 0)
            .done(),
    )
}

#[test]
fn usage_counters_saturate_instead_of_wrapping() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    model
        .push(huge_usage_answer("one"))
        .push(huge_usage_answer("two"))
        .push(huge_usage_answer("three"));
    let (_, stdout, _) = run(&sandbox, &model, &["--json", "first"]);
    let all = events(&stdout);
    let done = all.iter().find(|e| e["type"] == "done").unwrap();
    assert_eq!(done["usage"]["input"], json!(u64::MAX - 5));
    let id = session_id(&all);
    // A second turn in the same session adds to what was saved: twice
    // nearly u64::MAX stops at u64::MAX.
    let (_, stdout, _) = run(&sandbox, &model, &["--json", "--resume", &id, "again"]);
    let done = events(&stdout)
        .into_iter()
        .find(|e| e["type"] == "done")
        .unwrap();
    assert!(done["error"].is_null(), "{done}");
    let (_, stdout, _) = run(&sandbox, &model, &["--json", "--resume", &id, "and again"]);
    let usage_lines: Vec<Value> = events(&stdout)
        .into_iter()
        .filter(|e| e["type"] == "usage" || e["type"] == "done")
        .collect();
    assert!(!usage_lines.is_empty(), "{stdout}");
    for line in usage_lines {
        for counter in ["input", "output"] {
            let n = &line["usage"][counter];
            assert!(
                n.as_u64().is_some_and(|n| n >= u64::MAX - 5),
                "{counter} wrapped: {line}"
            );
        }
    }
}
