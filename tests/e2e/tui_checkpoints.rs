//! `/undo` and `/redo` in the screen (issue 31, docs/checkpoints.md): the
//! real binary in a pseudo-terminal against the fake model. Each shows
//! its plan in a question before it changes anything.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::json;
use uji_fake_model::FakeModel;
use uji_tests::Sandbox;
use uji_tests::chat::{answer, call};
use uji_tests::tty::Tty;

/// The screen on a workspace of two files, every tool allowed.
fn open(model: &FakeModel) -> (Sandbox, Tty) {
    let sandbox = Sandbox::new();
    let init = format!(
        "uji.provider.add({{ id = \"fake\", wire = \"openai-chat\", base_url = \"{}\", models = {{ \"m1\" }} }})\n\
         uji.model.use(\"fake/m1\")\n\
         uji.tool.policy({{ edit_file = {{ default = \"allow\" }}, write_file = {{ default = \"allow\" }}, run_command = {{ default = \"allow\" }} }})\n",
        model.base_url()
    );
    sandbox.write_init(&init);
    std::fs::write(sandbox.work().join("a.txt"), "alpha\n").unwrap();
    std::fs::write(sandbox.work().join("b.txt"), "beta\n").unwrap();
    let plugins = uji_tests::plugin_path(uji_tests::SCREEN_PLUGINS);
    let command = sandbox.uji_tty().env("UJI_PLUGIN_PATH", plugins);
    let tty = Tty::spawn(command, 30, 100);
    tty.wait_for_text("Ask uji anything");
    (sandbox, tty)
}

fn read(sandbox: &Sandbox, name: &str) -> Option<String> {
    std::fs::read_to_string(sandbox.work().join(name)).ok()
}

/// Each file's bytes and permission bits, `None` when it is missing.
fn files(sandbox: &Sandbox) -> Vec<(String, Option<(String, u32)>)> {
    use std::os::unix::fs::PermissionsExt;
    ["a.txt", "b.txt", "run.sh", "gone.txt", "new.txt"]
        .iter()
        .map(|name| {
            let path = sandbox.work().join(name);
            let state = std::fs::read_to_string(&path).ok().map(|text| {
                let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777;
                (text, mode)
            });
            (name.to_string(), state)
        })
        .collect()
}

#[test]
fn undo_puts_back_what_edits_writes_and_commands_changed_and_redo_brings_it_back() {
    use std::os::unix::fs::PermissionsExt;
    let model = FakeModel::start();
    model.push(call(
        "c1",
        "edit_file",
        json!({"path": "a.txt", "old_string": "alpha", "new_string": "ALPHA"}),
    ));
    model.push(call(
        "c2",
        "write_file",
        json!({"path": "new.txt", "content": "new\n"}),
    ));
    model.push(call(
        "c3",
        "run_command",
        json!({"command": "sed -i 's/before/after/' run.sh && rm gone.txt"}),
    ));
    model.push(answer("Changed four files."));
    let (sandbox, mut tty) = open(&model);
    let run = sandbox.work().join("run.sh");
    std::fs::write(&run, "#!/bin/sh\necho before\n").unwrap();
    std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o750)).unwrap();
    std::fs::write(sandbox.work().join("gone.txt"), "remove me\n").unwrap();
    let before = files(&sandbox);
    tty.type_keys("change the files");
    tty.press("<CR>");
    tty.wait_for_text("Changed four files.");
    let after = files(&sandbox);
    assert_ne!(before, after);

    tty.type_keys("/undo");
    tty.press("<CR>");
    // The plan first, and nothing changed yet.
    let asked = tty.wait_for_question("undo of turn 1: put these files back as listed?");
    for row in [
        "restores",
        "a.txt, run.sh",
        "recreates",
        "gone.txt",
        "removes",
        "new.txt",
        "put them back",
        "change nothing",
    ] {
        assert!(asked.contains(row), "{row:?}: {asked}");
    }
    assert_eq!(files(&sandbox), after, "nothing changes before the answer");
    tty.press("y");
    let screen = tty.wait_for_text("removed new.txt");
    for line in ["restored a.txt", "restored run.sh", "recreated gone.txt"] {
        assert!(screen.contains(line), "{line:?}: {screen}");
    }
    assert_eq!(
        files(&sandbox),
        before,
        "bytes and modes as before the turn"
    );

    tty.type_keys("/redo");
    tty.press("<CR>");
    let asked = tty.wait_for_question("redo: taking back the undo of turn 1");
    assert!(asked.contains("new.txt"), "{asked}");
    assert_eq!(files(&sandbox), before, "nothing changes before the answer");
    tty.press("y");
    tty.wait_for("the files changed again", |_| files(&sandbox) == after);
    tty.quit_with_ctrl_c();
}

#[test]
fn undo_asks_before_overwriting_a_file_changed_after_the_turn_and_no_changes_nothing() {
    let model = FakeModel::start();
    model.push(call(
        "c1",
        "write_file",
        json!({"path": "a.txt", "content": "from the model\n"}),
    ));
    model.push(answer("Wrote a.txt."));
    let (sandbox, mut tty) = open(&model);
    tty.type_keys("write it");
    tty.press("<CR>");
    tty.wait_for_text("Wrote a.txt.");
    std::fs::write(sandbox.work().join("a.txt"), "my own edit\n").unwrap();
    tty.type_keys("/undo");
    tty.press("<CR>");
    let screen = tty.wait_for_question("1 file was changed after the turn");
    // The whole plan is shown before anything changes.
    for row in [
        "restores",
        "changed since",
        "a.txt",
        "leave the changed ones",
        "overwriting the changed ones",
        "change nothing",
    ] {
        assert!(screen.contains(row), "{row:?}: {screen}");
    }
    // No: nothing changes.
    tty.press("n");
    tty.wait_for_text("undo of turn 1: nothing was changed");
    assert_eq!(read(&sandbox, "a.txt").as_deref(), Some("my own edit\n"));
    // Yes, leaving the changed file: the user's edit stays.
    tty.type_keys("/undo");
    tty.press("<CR>");
    tty.wait_for_question("1 file was changed after the turn");
    tty.press("y");
    tty.wait_for_text("left a.txt");
    assert_eq!(read(&sandbox, "a.txt").as_deref(), Some("my own edit\n"));
    // A file changed while the question is open is not overwritten by the
    // plan shown before: nothing changes, and the person is told why.
    tty.type_keys("/undo");
    tty.press("<CR>");
    tty.wait_for_question("1 file was changed after the turn");
    std::fs::write(sandbox.work().join("a.txt"), "edited while asked\n").unwrap();
    tty.press("a");
    tty.wait_for_text("files changed while you were asked, so nothing was changed");
    assert_eq!(
        read(&sandbox, "a.txt").as_deref(),
        Some("edited while asked\n")
    );
    // Asked again, overwriting puts back what was there before the turn.
    tty.type_keys("/undo");
    tty.press("<CR>");
    tty.wait_for_question("1 file was changed after the turn");
    tty.press("a");
    tty.wait_for_text("restored a.txt");
    assert_eq!(read(&sandbox, "a.txt").as_deref(), Some("alpha\n"));
    tty.quit_with_ctrl_c();
}

#[test]
fn rewind_to_the_second_of_three_messages_takes_back_code_and_conversation_and_keeps_the_file() {
    let model = FakeModel::start();
    for turn in 1..=3 {
        model.push(call(
            &format!("c{turn}"),
            "write_file",
            json!({"path": "n.txt", "content": format!("turn {turn}\n")}),
        ));
        model.push(answer(&format!("Answer {turn}.")));
    }
    model.push(answer("Answer to the edit."));
    let (sandbox, mut tty) = open(&model);
    for turn in 1..=3 {
        tty.type_keys(&format!("message {turn}"));
        tty.press("<CR>");
        tty.wait_for_text(&format!("Answer {turn}."));
    }
    assert_eq!(read(&sandbox, "n.txt").as_deref(), Some("turn 3\n"));
    tty.type_keys("/rewind");
    tty.press("<CR>");
    tty.wait_for_question("Go back to before an earlier message (3)");
    // Newest first: the second message is one down.
    tty.press("<Down>");
    tty.press("<CR>");
    tty.wait_for_question("Go back to before this message");
    tty.press("<CR>");
    tty.wait_for("the second message back in the draft", |s| {
        s.lines()
            .any(|l| l.trim_start().starts_with("› message 2") || l.contains("message 2"))
            && !s.contains("Answer 2.")
    });
    assert_eq!(
        read(&sandbox, "n.txt").as_deref(),
        Some("turn 1\n"),
        "the code is back to before the second message"
    );
    tty.press("<C-u>");
    tty.type_keys("message 2, edited");
    tty.press("<CR>");
    tty.wait_for_text("Answer to the edit.");
    let sent = model.last_request().body_text();
    assert!(
        !sent.contains("Answer 2."),
        "the conversation went back: {sent}"
    );
    // Nothing is lost: the dropped messages stay in the session file.
    let sessions = sandbox.data().join("sessions");
    let file = std::fs::read_dir(&sessions)
        .unwrap()
        .flatten()
        .find(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .unwrap();
    let saved = std::fs::read_to_string(file.path()).unwrap();
    assert!(
        saved.contains("Answer 3.") && saved.contains("\"rewind\""),
        "{saved}"
    );
    tty.quit_with_ctrl_c();
}

#[test]
fn a_shell_command_the_user_runs_is_undone_on_its_own() {
    let model = FakeModel::start();
    let (sandbox, mut tty) = open(&model);
    tty.type_keys("!rm b.txt && echo gone");
    tty.press("<CR>");
    tty.wait_for_text("gone");
    tty.wait_for("the file removed", |_| read(&sandbox, "b.txt").is_none());
    // A command that only reads takes no checkpoint and is not undone.
    tty.type_keys("!cat a.txt");
    tty.press("<CR>");
    tty.wait_for_text("alpha");
    tty.type_keys("/undo");
    tty.press("<CR>");
    let asked = tty.wait_for_question("undo of !rm b.txt && echo gone");
    assert!(
        asked.contains("recreates") && asked.contains("b.txt"),
        "{asked}"
    );
    tty.press("y");
    tty.wait_for_text("recreated b.txt");
    assert_eq!(read(&sandbox, "b.txt").as_deref(), Some("beta\n"));
    tty.quit_with_ctrl_c();
}
