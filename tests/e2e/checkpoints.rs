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
    std::fs::create_dir_all(work.join("target")).unwrap();
    for i in 0..100 {
        std::fs::write(work.join(format!("target/out{i}")), "built").unwrap();
    }
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
    assert!(undone.status.success(), "{:?}", text(&undone));
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

    // The ignored target/ was never read: no checkpoint names it.
    let listed = uji(&sandbox, &["checkpoints"]);
    let (stdout, stderr) = text(&listed);
    assert!(listed.status.success(), "{stderr}");
    assert!(stdout.contains("run_command sed -i"), "{stdout}");
    assert!(!stdout.contains("target/"), "{stdout}");
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
        stdout.contains("src/lib.rs was not changed: it was changed since"),
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

#[test]
fn undo_in_another_directory_is_refused() {
    let sandbox = Sandbox::new();
    workspace(&sandbox);
    let model = FakeModel::start();
    the_turn(&sandbox, &model);
    let id = std::fs::read_dir(sandbox.data().join("sessions"))
        .unwrap()
        .flatten()
        .find_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".jsonl").map(str::to_string)
        })
        .unwrap();
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
