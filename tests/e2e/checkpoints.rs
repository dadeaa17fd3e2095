//! Checkpoints (issue 31, docs/checkpoints.md) through the real binary:
//! a `uji run` turn against the fake model changes files by every kind of
//! tool, and `uji undo` puts them back exactly.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Output, Stdio};

use serde_json::json;
use uji_fake_model::FakeModel;
use uji_tests::chat::{answer, call, uji_with_model};
use uji_tests::{Sandbox, text};

const MODEL: &str = "openrouter/qwen/qwen3-coder";

/// The workspace before the turn: four files, one of them executable,
/// and a `.gitignore`d `target/`.
fn workspace(sandbox: &Sandbox) {
    let work = sandbox.work();
    std::fs::create_dir_all(work.join("src")).unwrap();
    std::fs::write(work.join("src/lib.rs"), "pub fn one() -> u32 {\n    1\n}\n").unwrap();
    std::fs::write(work.join("config.toml"), "name = \"before\"\n").unwrap();
    std::fs::write(work.join("run.sh"), "#!/bin/sh\necho before\n").unwrap();
    std::fs::set_permissions(work.join("run.sh"), std::fs::Permissions::from_mode(0o750)).unwrap();
    std::fs::write(work.join("old.txt"), "remove me\n").unwrap();
    std::fs::write(work.join(".gitignore"), "target/\n").unwrap();
    for d in 0..100 {
        let dir = work.join(format!("target/d{d}"));
        std::fs::create_dir_all(&dir).unwrap();
        for i in 0..100 {
            std::fs::write(dir.join(format!("out{i}")), "built").unwrap();
        }
    }
}

/// Everything uji keeps about checkpoints, as text (logs and stat cache).
fn checkpoint_files(sandbox: &Sandbox) -> String {
    let mut all = String::new();
    let mut dirs = vec![sandbox.data().join("checkpoints")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                if !path.ends_with("objects") {
                    dirs.push(path);
                }
            } else if let Ok(text) = std::fs::read_to_string(&path) {
                all.push_str(&text);
            }
        }
    }
    all
}

/// What the four files hold.
fn snapshot(work: &Path) -> Vec<(String, Option<Vec<u8>>, Option<u32>)> {
    ["src/lib.rs", "config.toml", "run.sh", "old.txt", "notes.md"]
        .iter()
        .map(|p| {
            let path = work.join(p);
            let mode = std::fs::metadata(&path)
                .ok()
                .map(|m| m.permissions().mode() & 0o7777);
            (p.to_string(), std::fs::read(&path).ok(), mode)
        })
        .collect()
}

/// A turn that edits one file, writes another, and runs `sed -i` on a
/// third and `rm` on a fourth.
fn the_turn(sandbox: &Sandbox, model: &FakeModel) {
    model.push(call(
        "c1",
        "edit_file",
        json!({"path": "src/lib.rs", "old_string": "    1\n", "new_string": "    2\n"}),
    ));
    model.push(call(
        "c2",
        "write_file",
        json!({"path": "notes.md", "content": "# Notes\n"}),
    ));
    model.push(call(
        "c3",
        "run_command",
        json!({"command": "sed -i 's/before/after/' config.toml run.sh && rm old.txt"}),
    ));
    model.push(answer("done"));
    let output = uji_with_model(sandbox, model, "sk-checkpoints")
        .args(["run", "--model", MODEL, "--yes", "change things"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (_, stderr) = text(&output);
    assert!(output.status.success(), "uji run failed: {stderr}");
}

fn uji(sandbox: &Sandbox, args: &[&str]) -> Output {
    sandbox
        .uji()
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn uji_undo_puts_back_what_edits_writes_and_commands_changed_and_redo_brings_it_back() {
    let sandbox = Sandbox::new();
    workspace(&sandbox);
    let work = sandbox.work();
    let before = snapshot(&work);
    let model = FakeModel::start();
    the_turn(&sandbox, &model);
    let after = snapshot(&work);
    assert_ne!(before, after);
    assert_eq!(
        std::fs::read_to_string(work.join("config.toml")).unwrap(),
        "name = \"after\"\n",
        "the command ran"
    );

    let dry = uji(&sandbox, &["undo", "--dry-run"]);
    let (stdout, stderr) = text(&dry);
    assert!(dry.status.success(), "{stdout}{stderr}");
    let shown = format!("{stdout}{stderr}");
    for line in [
        "restore   src/lib.rs",
        "remove    notes.md",
        "recreate  old.txt",
        "restore   run.sh",
    ] {
        assert!(shown.contains(line), "{line:?} in {shown}");
    }
    assert_eq!(snapshot(&work), after, "a dry run changes nothing");

    let undone = uji(&sandbox, &["undo"]);
    let (stdout, stderr) = text(&undone);
    assert!(undone.status.success(), "{stdout}{stderr}");
    // What it did, file by file.
    for line in [
        "undo of turn 1:",
        "  restored src/lib.rs",
        "  removed notes.md",
        "  recreated old.txt",
        "  restored run.sh",
        "`uji undo --redo` takes this back",
    ] {
        assert!(stdout.contains(line), "{line:?} in {stdout}");
    }
    assert_eq!(
        snapshot(&work),
        before,
        "bytes and modes as before the turn"
    );

    let redone = uji(&sandbox, &["undo", "--redo"]);
    assert!(redone.status.success(), "{:?}", text(&redone));
    assert_eq!(snapshot(&work), after, "the turn's changes are back");

    let again = uji(&sandbox, &["undo"]);
    assert!(again.status.success(), "{:?}", text(&again));
    assert_eq!(snapshot(&work), before, "the redo was undone too");

    let listed = uji(&sandbox, &["checkpoints"]);
    let (stdout, stderr) = text(&listed);
    assert!(listed.status.success(), "{stderr}");
    assert!(stdout.contains("run_command sed -i"), "{stdout}");
    // The ignored target/ (10,000 files) was never read: neither the logs
    // nor the stat cache name anything in it.
    let kept = checkpoint_files(&sandbox);
    assert!(kept.contains("src/lib.rs"), "the logs are read: {kept}");
    assert!(!kept.contains("target/"), "target/ was read");
}

/// `uji run` with `init` as init.lua, the model calling `tool` twice.
fn run_with_init(
    sandbox: &Sandbox,
    model: &FakeModel,
    init: &str,
    calls: &[(&str, serde_json::Value)],
) -> String {
    sandbox.write_init(init);
    for (i, (tool, args)) in calls.iter().enumerate() {
        model.push(call(&format!("c{i}"), tool, args.clone()));
    }
    model.push(answer("done"));
    let output = uji_with_model(sandbox, model, "sk-checkpoints")
        .args(["run", "--model", MODEL, "--yes", "go"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (_, stderr) = text(&output);
    assert!(output.status.success(), "uji run failed: {stderr}");
    stderr
}

#[test]
fn a_read_only_lua_tool_takes_no_checkpoint_and_others_do_and_plugins_hear_of_each() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.work().join("a.txt"), "a\n").unwrap();
    let heard = sandbox.work().join("heard.log");
    let init = format!(
        "uji.tool.add('peek', {{ read_only = true, policy = 'allow', run = function() return 'seen' end }})\n\
         uji.tool.add('poke', {{ policy = 'allow', run = function() return 'poked' end }})\n\
         uji.on('checkpoint_created', function(e) \n\
           local f = io.open('{}', 'a'); f:write(e.turn, ' ', e.reason, ' ', e.session ~= nil and 'session' or '', '\\n'); f:close() end)\n",
        heard.display()
    );
    let model = FakeModel::start();
    run_with_init(
        &sandbox,
        &model,
        &init,
        &[("peek", json!({})), ("peek", json!({}))],
    );
    let listed = uji(&sandbox, &["checkpoints"]);
    let (_, stderr) = text(&listed);
    assert!(stderr.contains("has no checkpoints"), "{stderr}");
    assert!(!heard.exists());
    run_with_init(&sandbox, &model, &init, &[("poke", json!({}))]);
    let listed = uji(&sandbox, &["checkpoints"]);
    let (stdout, _) = text(&listed);
    assert!(stdout.contains("poke"), "{stdout}");
    assert_eq!(
        std::fs::read_to_string(&heard).unwrap(),
        "1 poke poke session\n1 turn end session\n",
        "the checkpoint before the call and the turn's last one"
    );
}

#[test]
fn a_file_over_10_mb_is_reported_once_and_left_alone_by_undo() {
    let sandbox = Sandbox::new();
    let work = sandbox.work();
    let big = std::fs::File::create(work.join("big.bin")).unwrap();
    big.set_len(50 * 1024 * 1024).unwrap();
    drop(big);
    let model = FakeModel::start();
    let stderr = run_with_init(
        &sandbox,
        &model,
        "uji.tool.policy({ run_command = { default = 'allow' } })\n",
        &[
            ("run_command", json!({"command": "echo one >> big.bin"})),
            ("run_command", json!({"command": "echo two > small.txt"})),
        ],
    );
    assert_eq!(
        stderr.matches("checkpoint: big.bin is not kept").count(),
        1,
        "one notice: {stderr}"
    );
    assert!(stderr.contains("50 MiB, over the 10 MiB"), "{stderr}");
    let undone = uji(&sandbox, &["undo"]);
    let (stdout, _) = text(&undone);
    assert!(
        stdout.contains("left big.bin: its content was not kept"),
        "{stdout}"
    );
    assert!(stdout.contains("removed small.txt"), "{stdout}");
    assert!(!work.join("small.txt").exists(), "the rest was undone");
    assert_eq!(
        std::fs::metadata(work.join("big.bin")).unwrap().len(),
        50 * 1024 * 1024 + 4,
        "the big file was left as it is"
    );
}

#[test]
fn a_file_changed_after_the_turn_is_not_overwritten_without_force() {
    let sandbox = Sandbox::new();
    workspace(&sandbox);
    let work = sandbox.work();
    let model = FakeModel::start();
    the_turn(&sandbox, &model);
    std::fs::write(work.join("src/lib.rs"), "my own edit\n").unwrap();
    let undone = uji(&sandbox, &["undo"]);
    let (stdout, _) = text(&undone);
    assert!(!undone.status.success(), "a file was left: {stdout}");
    assert!(
        stdout.contains("left src/lib.rs: it was changed since"),
        "{stdout}"
    );
    assert!(
        stdout.contains("`uji undo --turn 1 --force` overwrites them too"),
        "{stdout}"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("src/lib.rs")).unwrap(),
        "my own edit\n"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("old.txt")).unwrap(),
        "remove me\n",
        "the other files were put back"
    );
    let forced = uji(&sandbox, &["undo", "--turn", "1", "--force"]);
    assert!(forced.status.success(), "{:?}", text(&forced));
    assert_eq!(
        std::fs::read_to_string(work.join("src/lib.rs")).unwrap(),
        "pub fn one() -> u32 {\n    1\n}\n"
    );
}

/// The id of the one session in the sandbox.
fn session_id(sandbox: &Sandbox) -> String {
    std::fs::read_dir(sandbox.data().join("sessions"))
        .unwrap()
        .flatten()
        .find_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".jsonl").map(str::to_string)
        })
        .unwrap()
}

#[test]
fn uji_checkpoints_lists_turn_date_and_time_files_and_bytes_stored_and_why() {
    let sandbox = Sandbox::new();
    workspace(&sandbox);
    let model = FakeModel::start();
    the_turn(&sandbox, &model);
    let id = session_id(&sandbox);
    let listed = uji(&sandbox, &["checkpoints", "--id", &id]);
    let (stdout, stderr) = text(&listed);
    assert!(listed.status.success(), "{stderr}");
    let mut lines = stdout.lines();
    assert_eq!(
        lines.next().unwrap(),
        "TURN  TIME (UTC)           FILES      STORED  REASON"
    );
    let today = uji_protocol::time::utc(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64,
    );
    let first: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    // 1  2026-12-06 14:03:05  5  1.2 KiB  edit_file src/lib.rs
    assert_eq!(first[0], "1", "{stdout}");
    assert_eq!(first[1], &today[..10], "the date (retention is in days)");
    assert!(
        first[2].len() == 8 && first[2].chars().filter(|c| *c == ':').count() == 2,
        "{stdout}"
    );
    assert_eq!(first[3], "5", "the first lists every file: {stdout}");
    assert!(first[4].parse::<f64>().is_ok(), "{stdout}");
    assert!(["B", "KiB", "MiB"].contains(&first[5]), "{stdout}");
    assert_eq!(first[6..].join(" "), "edit_file src/lib.rs");
    assert!(
        stdout.contains("turn 1 changed: config.toml, notes.md, old.txt, run.sh, src/lib.rs"),
        "{stdout}"
    );
    assert!(stdout.contains("stored in all: "), "{stdout}");
}

#[test]
fn undo_in_another_directory_is_refused() {
    let sandbox = Sandbox::new();
    workspace(&sandbox);
    let model = FakeModel::start();
    the_turn(&sandbox, &model);
    let id = session_id(&sandbox);
    let elsewhere = sandbox.work().join("src");
    let output = sandbox
        .uji()
        .current_dir(&elsewhere)
        .args(["undo", "--id", &id])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (_, stderr) = text(&output);
    assert!(!output.status.success());
    assert!(stderr.contains("belong to the workspace"), "{stderr}");
}

#[test]
fn checkpoint_limits_are_set_in_lua_and_a_workspace_too_large_is_said_once() {
    let sandbox = Sandbox::new();
    let work = sandbox.work();
    for i in 0..60 {
        std::fs::write(work.join(format!("f{i}.txt")), "x").unwrap();
    }
    let model = FakeModel::start();
    let stderr = run_with_init(
        &sandbox,
        &model,
        "uji.checkpoint.configure({ max_files = 50 })\n\
         uji.tool.policy({ run_command = { default = 'allow' } })\n",
        &[
            ("run_command", json!({"command": "echo one > a.txt"})),
            ("run_command", json!({"command": "echo two > b.txt"})),
        ],
    );
    assert_eq!(
        stderr
            .matches("checkpoints are off for this session")
            .count(),
        1,
        "said once: {stderr}"
    );
    assert!(stderr.contains("more than 50 files"), "{stderr}");

    // Off altogether: no notice, no checkpoint.
    let stderr = run_with_init(
        &sandbox,
        &model,
        "uji.checkpoint.configure({ enabled = false })\n\
         uji.tool.policy({ run_command = { default = 'allow' } })\n",
        &[("run_command", json!({"command": "echo three > c.txt"}))],
    );
    assert!(!stderr.contains("checkpoint"), "{stderr}");

    // A typo is an error at its line.
    sandbox.write_init("uji.checkpoint.configure({ max_file = 5 })\n");
    let output = uji(&sandbox, &["tool", "list"]);
    let (stdout, stderr) = text(&output);
    let shown = format!("{stdout}{stderr}");
    assert!(
        shown.contains("init.lua:1") && shown.contains("unknown field max_file"),
        "{shown}"
    );
}

#[test]
fn a_command_that_only_changes_a_mode_is_undone_to_the_old_mode() {
    let sandbox = Sandbox::new();
    let script = sandbox.work().join("build.sh");
    std::fs::write(&script, "#!/bin/sh\necho build\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).unwrap();
    // Long settled: only its mode can tell the checkpoint it changed.
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&script)
        .unwrap()
        .set_modified(hour_ago)
        .unwrap();
    let model = FakeModel::start();
    run_with_init(
        &sandbox,
        &model,
        "uji.tool.policy({ run_command = { default = 'allow' } })\n",
        &[("run_command", json!({"command": "chmod +x build.sh"}))],
    );
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode(&script), 0o755, "the command ran");
    let undone = uji(&sandbox, &["undo"]);
    let (stdout, stderr) = text(&undone);
    assert!(undone.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("build.sh"), "{stdout}");
    assert_eq!(mode(&script), 0o644, "the old mode is back");
    assert_eq!(
        std::fs::read_to_string(&script).unwrap(),
        "#!/bin/sh\necho build\n"
    );
}

/// Bytes that do not compress, so the session limit counts them all.
fn noise(len: usize) -> Vec<u8> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state as u8
        })
        .collect()
}

#[test]
fn past_the_session_limit_a_file_is_reported_and_never_thrown_away_by_undo() {
    let sandbox = Sandbox::new();
    let work = sandbox.work();
    std::fs::write(work.join("notes.txt"), "before\n").unwrap();
    std::fs::write(work.join("data.bin"), noise(700 << 10)).unwrap();
    let model = FakeModel::start();
    let stderr = run_with_init(
        &sandbox,
        &model,
        "uji.checkpoint.configure({ max_session_mb = 1 })\n\
         uji.tool.policy({ run_command = { default = 'allow' } })\n",
        &[(
            "run_command",
            json!({"command": "cp data.bin more.bin && echo more >> more.bin && echo after > notes.txt"}),
        )],
    );
    // The first checkpoint kept data.bin (700 KiB); the turn's last one
    // could not keep more.bin too, and said so.
    assert_eq!(
        stderr
            .matches("checkpoint: more.bin is not kept (this session's checkpoints reached their 1 MiB); /undo cannot put it back")
            .count(),
        1,
        "{stderr}"
    );
    let undone = uji(&sandbox, &["undo"]);
    let (stdout, _) = text(&undone);
    assert!(
        stdout.contains("left more.bin: what it holds now was not kept"),
        "{stdout}"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("notes.txt")).unwrap(),
        "before\n",
        "what was kept came back"
    );
    assert_eq!(
        std::fs::metadata(work.join("more.bin")).unwrap().len(),
        (700 << 10) + 5,
        "what was not kept is still there"
    );
}

#[test]
fn uji_undo_and_uji_checkpoints_follow_init_lua_and_its_handlers_hear_the_undo() {
    let sandbox = Sandbox::new();
    workspace(&sandbox);
    let model = FakeModel::start();
    the_turn(&sandbox, &model);
    let after = snapshot(&sandbox.work());

    // Limits: a workspace over max_files is not checkpointed, so no undo
    // (which checkpoints before and after) runs in it.
    sandbox.write_init("uji.checkpoint.configure({ max_files = 3 })\n");
    let refused = uji(&sandbox, &["undo"]);
    let (_, stderr) = text(&refused);
    assert!(!refused.status.success());
    assert!(stderr.contains("more than 3 files"), "{stderr}");
    assert_eq!(snapshot(&sandbox.work()), after, "nothing changed");

    // Off: nothing to list or undo, and the message says why.
    sandbox.write_init("uji.checkpoint.configure({ enabled = false })\n");
    for command in [&["undo"][..], &["checkpoints"]] {
        let off = uji(&sandbox, command);
        let (_, stderr) = text(&off);
        assert!(!off.status.success(), "{command:?}");
        assert!(
            stderr.contains(
                "checkpoints are off: init.lua calls uji.checkpoint.configure({ enabled = false })"
            ),
            "{stderr}"
        );
    }

    // Handlers hear of the checkpoints uji undo takes.
    let heard = sandbox.root.path().join("heard.log");
    sandbox.write_init(&format!(
        "uji.on('checkpoint_created', function(e)\n\
           local f = io.open('{}', 'a'); f:write(e.turn, ' ', e.reason, '\\n'); f:close() end)\n",
        heard.display()
    ));
    let undone = uji(&sandbox, &["undo"]);
    assert!(undone.status.success(), "{:?}", text(&undone));
    assert_eq!(
        std::fs::read_to_string(&heard).unwrap(),
        "1 before undo of turn 1\n1 after undo of turn 1\n"
    );
}

/// Every session's checkpoint log under the data directory.
fn checkpoint_logs(sandbox: &Sandbox) -> Vec<std::path::PathBuf> {
    let Ok(workspaces) = std::fs::read_dir(sandbox.data().join("checkpoints")) else {
        return Vec::new();
    };
    workspaces
        .flatten()
        .filter_map(|w| std::fs::read_dir(w.path().join("sessions")).ok())
        .flat_map(|logs| logs.flatten().map(|l| l.path()))
        .collect()
}

/// Why each checkpoint in the store was taken, oldest first.
fn checkpoint_reasons(sandbox: &Sandbox) -> Vec<String> {
    checkpoint_logs(sandbox)
        .iter()
        .flat_map(|log| {
            std::fs::read_to_string(log)
                .unwrap()
                .lines()
                .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
                .filter(|record| record["type"] == "checkpoint")
                .map(|record| record["reason"].as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn a_plain_reading_command_takes_no_checkpoint_and_a_background_job_does() {
    let sandbox = Sandbox::new();
    std::fs::write(sandbox.work().join("a.txt"), "a\n").unwrap();
    let model = FakeModel::start();
    run_with_init(
        &sandbox,
        &model,
        "uji.tool.policy({ run_command = { default = 'allow' } })\n",
        &[("run_command", json!({"command": "cat a.txt"}))],
    );
    assert!(
        checkpoint_logs(&sandbox).is_empty(),
        "nothing was checkpointed: {:?}",
        checkpoint_reasons(&sandbox)
    );
    run_with_init(
        &sandbox,
        &model,
        "uji.tool.policy({ run_command = { default = 'allow' } })\n",
        &[
            ("run_command", json!({"command": "cat a.txt"})),
            (
                "run_command",
                json!({"command": "sleep 1; echo job > out.txt", "run_in_background": true}),
            ),
        ],
    );
    assert_eq!(
        checkpoint_reasons(&sandbox),
        ["run_command sleep 1; echo job > out.txt", "turn end"]
    );
}

#[test]
fn an_mcp_tool_call_is_checkpointed_whatever_its_read_only_hint() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    let server = uji_tests::uji_bin().with_file_name("uji-test-mcp-server");
    run_with_init(
        &sandbox,
        &model,
        &format!(
            "uji.mcp.add('t', {{ command = {:?} }})\nuji.mcp.list({{ wait = 10 }})\n",
            server.display().to_string()
        ),
        &[("t__echo", json!({"text": "hi"}))],
    );
    let reasons = checkpoint_reasons(&sandbox);
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    assert!(reasons[0].starts_with("t__echo"), "{reasons:?}");
}

#[test]
fn a_denied_call_takes_no_checkpoint_the_checkpoint_comes_after_the_question() {
    let sandbox = Sandbox::new();
    let model = FakeModel::start();
    sandbox.write_init("");
    model.push(call(
        "c1",
        "write_file",
        json!({"path": "new.txt", "content": "x\n"}),
    ));
    model.push(answer("could not"));
    // Without --yes nobody answers the question, so the call is denied.
    let output = uji_with_model(&sandbox, &model, "sk-checkpoints")
        .args(["run", "--model", MODEL, "write it"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (stdout, stderr) = text(&output);
    assert!(
        format!("{stdout}{stderr}").contains("needs approval"),
        "{stdout}{stderr}"
    );
    assert!(!sandbox.work().join("new.txt").exists());
    assert!(
        checkpoint_logs(&sandbox).is_empty(),
        "{:?}",
        checkpoint_reasons(&sandbox)
    );
}

/// Sets `path`'s modification time `age` in the past.
fn age(path: &Path, age: std::time::Duration) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(std::time::SystemTime::now() - age)
        .unwrap();
}

#[test]
fn uji_delete_removes_the_sessions_checkpoints_and_old_ones_are_pruned_as_uji_starts() {
    const DAY: std::time::Duration = std::time::Duration::from_secs(24 * 60 * 60);
    let sandbox = Sandbox::new();
    workspace(&sandbox);
    let model = FakeModel::start();
    the_turn(&sandbox, &model);
    let id = session_id(&sandbox);
    let logs = checkpoint_logs(&sandbox);
    assert_eq!(logs.len(), 1);
    let deleted = uji(&sandbox, &["delete", &id]);
    assert!(deleted.status.success(), "{:?}", text(&deleted));
    assert!(!logs[0].exists(), "uji delete removed the checkpoint log");

    // A session's checkpoints untouched for 8 days go the next time uji
    // starts (at most once a day), with the contents only they held.
    the_turn(&sandbox, &model);
    let logs = checkpoint_logs(&sandbox);
    assert_eq!(logs.len(), 1);
    let base = logs[0].parent().unwrap().parent().unwrap().to_path_buf();
    let objects = || -> Vec<std::path::PathBuf> {
        std::fs::read_dir(base.join("objects"))
            .unwrap()
            .flatten()
            .flat_map(|d| std::fs::read_dir(d.path()).unwrap().flatten())
            .map(|o| o.path())
            .collect()
    };
    assert!(!objects().is_empty());
    age(&logs[0], 8 * DAY);
    for object in objects() {
        age(&object, DAY);
    }
    age(&sandbox.data().join("checkpoints/pruned"), 2 * DAY);
    model.push(answer("nothing to change"));
    let output = uji_with_model(&sandbox, &model, "sk-checkpoints")
        .args(["run", "--model", MODEL, "--yes", "hello"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(output.status.success(), "{:?}", text(&output));
    assert!(!logs[0].exists(), "the old log was pruned");
    assert!(objects().is_empty(), "and the contents only it held");
}

/// Every file under `dir` with its bytes, sorted.
fn tree(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut all = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                dirs.push(path);
            } else {
                all.push((path.clone(), std::fs::read(&path).unwrap()));
            }
        }
    }
    all.sort();
    all
}

fn git(work: &Path, args: &[&str]) {
    let output = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(work)
        .output()
        .unwrap();
    assert!(output.status.success(), "git {args:?}: {:?}", text(&output));
}

#[test]
fn in_a_git_repository_the_git_folder_is_untouched_and_ignored_files_are_never_read() {
    let sandbox = Sandbox::new();
    workspace(&sandbox);
    let work = sandbox.work();
    std::fs::write(work.join("secret.env"), "TOKEN=never-read\n").unwrap();
    std::fs::write(work.join(".gitignore"), "target/\nsecret.env\n").unwrap();
    git(&work, &["init", "-q"]);
    git(&work, &["add", "-A"]);
    git(&work, &["commit", "-q", "-m", "first"]);
    let before = snapshot(&work);
    let git_before = tree(&work.join(".git"));
    let model = FakeModel::start();
    the_turn(&sandbox, &model);
    let undone = uji(&sandbox, &["undo"]);
    assert!(undone.status.success(), "{:?}", text(&undone));
    assert_eq!(snapshot(&work), before, "the undo worked in a repository");
    assert!(
        tree(&work.join(".git")) == git_before,
        "the project's .git is byte for byte as it was"
    );
    let kept = checkpoint_files(&sandbox);
    assert!(!kept.contains(".git/"), "the .git folder was read");
    assert!(!kept.contains("secret.env"), "an ignored file was read");
    assert_eq!(
        std::fs::read_to_string(work.join("secret.env")).unwrap(),
        "TOKEN=never-read\n"
    );
}

#[test]
fn a_symbolic_link_a_command_replaced_comes_back_as_a_link() {
    let sandbox = Sandbox::new();
    let work = sandbox.work();
    std::fs::write(work.join("target.txt"), "pointed at\n").unwrap();
    std::os::unix::fs::symlink("target.txt", work.join("link")).unwrap();
    let model = FakeModel::start();
    run_with_init(
        &sandbox,
        &model,
        "uji.tool.policy({ run_command = { default = 'allow' } })\n",
        &[(
            "run_command",
            json!({"command": "rm link && echo plain > link && ln -s nowhere other"}),
        )],
    );
    assert!(
        !std::fs::symlink_metadata(work.join("link"))
            .unwrap()
            .is_symlink()
    );
    let undone = uji(&sandbox, &["undo"]);
    assert!(undone.status.success(), "{:?}", text(&undone));
    let link = std::fs::symlink_metadata(work.join("link")).unwrap();
    assert!(link.is_symlink(), "a link again, not a file");
    assert_eq!(
        std::fs::read_link(work.join("link")).unwrap(),
        Path::new("target.txt")
    );
    assert!(
        std::fs::symlink_metadata(work.join("other")).is_err(),
        "the link the command made is gone"
    );
}
