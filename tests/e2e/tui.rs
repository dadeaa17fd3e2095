//! The terminal screen as a person uses it: the real `uji` binary with the
//! real tui, tools, Lua and openai-chat plugins, in a pseudo-terminal
//! (tests/support/tty.rs), against the fake model server. Each test types
//! and presses keys, then asserts on the screen, on what the model was sent
//! and on the files; at the end the terminal must be as it was.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use serde_json::json;
use uji_fake_model::chat::ChatEvents;
use uji_fake_model::{FakeModel, Script};
use uji_tests::Sandbox;
use uji_tests::tty::{Tty, TtyCommand};

const EXIT: Duration = Duration::from_secs(15);

fn answer(text: &str) -> Script {
    Script::sse(
        ChatEvents::new("m1")
            .text(text, 4)
            .finish("stop")
            .usage(1000, 50, 0)
            .done(),
    )
}

fn call(id: &str, tool: &str, args: serde_json::Value) -> Script {
    Script::sse(
        ChatEvents::new("m1")
            .tool_call(0, id, tool, &args.to_string(), 2)
            .finish("tool_calls")
            .done(),
    )
}

fn plugin_path() -> String {
    uji_tests::plugin_path(&[
        "uji_plugin_tui",
        "uji_plugin_tools",
        "uji_plugin_openai_chat",
        "uji_plugin_lua",
    ])
}

/// A sandbox whose init.lua keeps uji's defaults, uses the fake model and
/// adds a `/greet` command.
fn sandbox(model: &FakeModel) -> Sandbox {
    let sandbox = Sandbox::new();
    let init = format!(
        r#"
require("uji.defaults")
uji.provider.add({{ id = "fake", wire = "openai-chat", base_url = "{}", models = {{ "m1" }} }})
uji.model.use("fake/m1")
uji.command.add("greet", {{ desc = "Say hello", handler = function(args) return "hello, " .. args end }})
"#,
        model.base_url()
    );
    std::fs::write(sandbox.config().join("init.lua"), init).unwrap();
    sandbox
}

fn uji(sandbox: &Sandbox, args: &[&str]) -> TtyCommand {
    sandbox
        .uji_tty()
        .env("UJI_PLUGIN_PATH", plugin_path())
        .args(args.iter().copied())
        .then_stty()
}

fn open(sandbox: &Sandbox, args: &[&str]) -> Tty {
    let tty = Tty::spawn(uji(sandbox, args), 24, 80);
    tty.wait_for_text("Ask uji anything");
    tty
}

/// Ctrl+C twice, then the terminal must be back in the state uji found it.
fn quit(tty: &mut Tty) {
    tty.press("<C-c>");
    tty.press("<C-c>");
    assert_eq!(tty.wait_exit(EXIT), Some(0), "{}", tty.screen());
    tty.terminal_restored().unwrap();
    tty.cooked_mode().unwrap();
}

fn write(sandbox: &Sandbox, name: &str, text: &str) -> std::path::PathBuf {
    let path = sandbox.work().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_prompt_streams_its_answer_as_markdown_and_ctrl_c_restores_the_terminal() {
    let model = FakeModel::start();
    model.push(answer(
        "# Findings\n\nThe parser is **fine**:\n\n- one\n- two\n",
    ));
    let sandbox = sandbox(&model);
    let mut tty = open(&sandbox, &[]);
    tty.type_text("look at the parser");
    tty.press("<CR>");
    let screen = tty.wait_for_text("The parser is fine");
    assert!(screen.contains("› look at the parser"), "{screen}");
    assert!(screen.contains("Findings"), "{screen}");
    assert!(
        !screen.contains("**fine**"),
        "Markdown is drawn, not shown raw: {screen}"
    );
    assert!(screen.contains("fake/m1"), "{screen}");
    let sent = model.last_request().body_text();
    assert!(sent.contains("look at the parser"), "{sent}");
    quit(&mut tty);
}

#[test]
fn an_approved_edit_changes_the_file_and_shows_its_diff() {
    let model = FakeModel::start();
    let sandbox = sandbox(&model);
    let notes = write(&sandbox, "notes.txt", "hello world\n");
    model.push(call(
        "c1",
        "edit_file",
        json!({"path": "notes.txt", "old_string": "hello", "new_string": "goodbye"}),
    ));
    model.push(answer("Changed it."));
    let mut tty = open(&sandbox, &[]);
    tty.type_text("change the greeting");
    tty.press("<CR>");
    let question = tty.wait_for_question("Yes, proceed (y)");
    assert!(question.contains("notes.txt"), "{question}");
    assert!(
        question.contains("+goodbye world"),
        "the diff is in the question: {question}"
    );
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "hello world\n");
    tty.press("y");
    let screen = tty.wait_for_text("Changed it.");
    assert!(screen.contains("Update (notes.txt)"), "{screen}");
    assert!(screen.contains("Added 1 line, removed 1 line"), "{screen}");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "goodbye world\n");
    quit(&mut tty);
}

#[test]
fn a_denial_with_guidance_reaches_the_model_and_leaves_the_file() {
    let model = FakeModel::start();
    let sandbox = sandbox(&model);
    let notes = write(&sandbox, "notes.txt", "hello world\n");
    model.push(call(
        "c1",
        "write_file",
        json!({"path": "notes.txt", "content": "overwritten\n"}),
    ));
    model.push(answer("Understood."));
    let mut tty = open(&sandbox, &[]);
    tty.type_text("rewrite notes");
    tty.press("<CR>");
    tty.wait_for_question("Yes, proceed (y)");
    tty.press("n");
    tty.wait_for_text("Tell uji what to do differently");
    tty.type_text("append instead, never overwrite");
    tty.press("<CR>");
    let screen = tty.wait_for_text("Understood.");
    assert!(screen.contains("denied"), "{screen}");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "hello world\n");
    let sent = model.last_request().body_text();
    assert!(sent.contains("append instead, never overwrite"), "{sent}");
    quit(&mut tty);
}

/// A sandbox whose model asks to write `made.txt` ("made"), then says
/// `then`; and where that file would be.
fn asked_to_make_a_file(model: &FakeModel, then: &str) -> (Sandbox, std::path::PathBuf) {
    let sandbox = sandbox(model);
    let made = sandbox.work().join("made.txt");
    model.push(call(
        "c1",
        "write_file",
        json!({"path": "made.txt", "content": "made\n"}),
    ));
    model.push(answer(then));
    (sandbox, made)
}

#[test]
fn esc_at_a_question_denies_and_ends_the_turn() {
    let model = FakeModel::start();
    let (sandbox, made) = asked_to_make_a_file(&model, "Fine, nothing written.");
    let mut tty = open(&sandbox, &[]);
    tty.type_text("make the file");
    tty.press("<CR>");
    let question = tty.wait_for_question("Yes, proceed (y)");
    assert!(question.contains("No, and stop here (esc)"), "{question}");
    tty.press("<Esc>");
    let screen = tty.wait_for("the turn to end, interrupted", |s| {
        s.contains("interrupted") && !s.contains("esc to interrupt") && !s.contains("proceed (y)")
    });
    assert!(!made.exists(), "{screen}");
    // The model heard nothing until the user spoke again; then it reads
    // the call as stopped.
    tty.type_text("never mind");
    tty.press("<CR>");
    tty.wait_for_text("Fine, nothing written.");
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    let sent = requests[1].body_text();
    assert!(sent.contains("the user stopped here"), "{sent}");
    assert!(sent.contains("never mind"), "{sent}");
    assert!(!made.exists());
    quit(&mut tty);
}

#[test]
fn shift_tab_cycles_the_approval_mode_and_accept_edits_writes_unasked() {
    let model = FakeModel::start();
    let (sandbox, made) = asked_to_make_a_file(&model, "Wrote it, no question.");
    let mut tty = open(&sandbox, &[]);
    tty.press("<S-Tab>");
    tty.wait_for_text("⏵⏵ accept edits");
    tty.type_text("make the file");
    tty.press("<CR>");
    let screen = tty.wait_for_text("Wrote it, no question.");
    assert!(!screen.contains("Yes, proceed"), "{screen}");
    assert_eq!(std::fs::read_to_string(&made).unwrap(), "made\n");
    tty.press("<S-Tab>");
    let screen = tty.wait_for_text("⏸ plan mode");
    let status = screen.lines().last().unwrap_or_default();
    assert!(!status.contains("accept edits"), "{screen}");
    tty.press("<S-Tab>");
    tty.wait_for("the mode badge to go", |s| !s.contains("plan mode"));
    quit(&mut tty);
}

#[test]
fn copy_puts_the_last_answer_on_the_terminal_s_clipboard() {
    let model = FakeModel::start();
    model.push(answer("Copy me, please."));
    let sandbox = sandbox(&model);
    let mut tty = open(&sandbox, &[]);
    tty.type_text("say something");
    tty.press("<CR>");
    tty.wait_for_text("Copy me, please.");
    tty.type_text("/copy");
    tty.press("<CR>");
    tty.wait_for_text("copied the last answer (16 characters)");
    // OSC 52 with the text in base64, which terminals and tmux pass on.
    assert!(
        tty.transcript()
            .contains("\x1b]52;c;Q29weSBtZSwgcGxlYXNlLg==\x07"),
        "no OSC 52 sequence"
    );
    quit(&mut tty);
}

#[test]
fn the_sessions_picker_shows_ages_and_its_filter_is_edited_and_fuzzy() {
    let model = FakeModel::start();
    model.push(answer("First."));
    let sandbox = sandbox(&model);
    let mut tty = open(&sandbox, &[]);
    // A session takes its first message's first line as its title.
    tty.type_text("parser rewrite");
    tty.press("<CR>");
    tty.wait_for_text("First.");
    tty.type_text("/resume");
    tty.press("<CR>");
    let screen = tty.wait_for_text("just now");
    assert!(screen.contains("this session"), "{screen}");
    tty.wait_for_question("just now");
    tty.type_text("prsr zzz");
    tty.wait_for_text("nothing matches");
    tty.press("<C-w>");
    let screen = tty.wait_for_text("filter: prsr");
    assert!(screen.contains("parser rewrite"), "fuzzy: {screen}");
    tty.press("<C-u>");
    tty.wait_for_text("type to filter");
    tty.press("<Esc>");
    tty.wait_for("the picker to close", |s| !s.contains("type to filter"));
    quit(&mut tty);
}

#[test]
fn diff_shows_the_session_s_write_and_export_saves_the_conversation() {
    let model = FakeModel::start();
    let (sandbox, made) = asked_to_make_a_file(&model, "Made it.");
    let mut tty = open(&sandbox, &[]);
    tty.type_text("make the file");
    tty.press("<CR>");
    tty.wait_for_question("Yes, proceed (y)");
    tty.press("y");
    tty.wait_for_text("Made it.");
    assert!(made.exists());
    tty.type_text("/diff");
    tty.press("<CR>");
    let screen = tty.wait_for_text("+++ made.txt");
    assert!(screen.contains("@@ -0,0 +1 @@"), "{screen}");
    tty.type_text("/export notes.md");
    tty.press("<CR>");
    tty.wait_for_text("saved the conversation to");
    let saved = std::fs::read_to_string(sandbox.work().join("notes.md")).unwrap();
    assert!(saved.contains("## You\n\nmake the file"), "{saved}");
    assert!(saved.contains("## uji\n\nMade it."), "{saved}");
    quit(&mut tty);
}

#[test]
fn the_title_says_what_uji_does_and_an_unfocused_terminal_hears_the_bell() {
    let model = FakeModel::start();
    let (sandbox, _made) = asked_to_make_a_file(&model, "Done.");
    let mut tty = open(&sandbox, &[]);
    // The prompt is drawn before the session is configured; the title
    // comes with the frame that first names the session's model.
    tty.wait_for_text("fake/m1");
    let printed = tty.transcript();
    let title = printed
        .split("\x1b]2;")
        .nth(1)
        .and_then(|rest| rest.split("\x1b\\").next());
    assert_eq!(title, Some("uji · work"), "the title names the directory");
    // The terminal reports that it lost focus (focus events are on).
    tty.send(b"\x1b[O");
    tty.type_text("make the file");
    tty.press("<CR>");
    tty.wait_for_question("Yes, proceed (y)");
    let printed = tty.transcript();
    assert!(
        printed.contains("\x1b]2;uji · make the file · waiting for your answer"),
        "the title says a question waits"
    );
    assert!(printed.contains('\x07'), "the bell rang for the question");
    tty.press("y");
    tty.wait_for_text("Done.");
    quit(&mut tty);
}

#[test]
fn a_desktop_notification_goes_out_by_osc9_when_configured() {
    let model = FakeModel::start();
    model.push(answer("All done."));
    let sandbox = sandbox(&model);
    let init = sandbox.config().join("init.lua");
    let mut config = std::fs::read_to_string(&init).unwrap();
    config.push_str("uji.ui.configure({ notify = \"osc9\" })\n");
    std::fs::write(&init, config).unwrap();
    let mut tty = open(&sandbox, &[]);
    tty.wait_for_text("Ask uji anything");
    tty.send(b"\x1b[O");
    tty.type_text("work on it");
    tty.press("<CR>");
    tty.wait_for_text("All done.");
    tty.wait_for("the notification", |_| {
        tty.transcript().contains("\x1b]9;uji finished\x1b\\")
    });
    quit(&mut tty);
}

/// The attack of issue 26: typing ahead while the model works must not
/// answer the question that arrives meanwhile, whatever letters the
/// sentence holds (`y`, `a`, `n`). The keys go to the draft; the question
/// waits until it has been on screen and the keyboard quiet for 400 ms.
#[test]
fn typing_ahead_while_a_question_arrives_approves_nothing() {
    let model = FakeModel::start();
    let (sandbox, made) = asked_to_make_a_file(&model, "Wrote it.");
    let mut tty = open(&sandbox, &[]);
    tty.type_text("make the file");
    tty.press("<CR>");
    // Keep typing (and rubbing it out, so the draft stays one line) until
    // the question is on screen, then type a sentence full of answer
    // letters into it.
    let deadline = std::time::Instant::now() + uji_tests::tty::WAIT;
    while !tty.screen().contains("Yes, proceed (y)") {
        assert!(
            std::time::Instant::now() < deadline,
            "no question came: {}",
            tty.screen()
        );
        tty.type_keys("x");
        tty.press("<BS>");
        std::thread::sleep(Duration::from_millis(25));
    }
    let sentence = "yes please also run it now and again";
    tty.type_keys(sentence);
    let screen = tty.wait_for(&format!("the draft to end with {sentence:?}"), |s| {
        s.lines()
            .any(|l| l.contains("✎ draft:") && l.trim_end().ends_with(sentence))
    });
    assert!(
        screen.contains("Yes, proceed (y)"),
        "the question is still open: {screen}"
    );
    assert!(!made.exists(), "the write ran unapproved: {screen}");
    assert_eq!(
        model.requests().len(),
        1,
        "uji sent the model a tool result: {}",
        model.last_request().body_text()
    );
    // Once it is ready, a deliberate key answers it.
    tty.wait_for_question("Yes, proceed (y)");
    tty.press("y");
    let screen = tty.wait_for_text("Wrote it.");
    assert_eq!(std::fs::read_to_string(&made).unwrap(), "made\n");
    let sent = model.last_request().body_text();
    assert!(sent.contains("made.txt"), "{sent}");
    // The typed text is the draft, in the input and unsent.
    assert!(screen.contains(sentence), "{screen}");
    assert!(!screen.contains("✎ draft"), "{screen}");
    assert!(!sent.contains("please also"), "{sent}");
    quit(&mut tty);
}

#[test]
fn esc_interrupts_a_running_command_and_kills_it() {
    let model = FakeModel::start();
    let sandbox = sandbox(&model);
    let marker = sandbox.work().join("marker");
    // Allowed without a question, so the command runs at once.
    let init = sandbox.config().join("init.lua");
    let mut config = std::fs::read_to_string(&init).unwrap();
    config
        .push_str("uji.tool.policy({ run_command = { allow = { \"sleep *\", \"touch *\" } } })\n");
    std::fs::write(&init, config).unwrap();
    model.push(call(
        "c1",
        "run_command",
        json!({"command": "sleep 29.5 && touch marker"}),
    ));
    let mut tty = open(&sandbox, &[]);
    tty.type_text("wait a while");
    tty.press("<CR>");
    tty.wait_for_text("Shell (sleep 29.5 && touch marker)");
    assert!(wait_until(|| sleeping() == 1), "the command runs");
    tty.wait_for_text("esc to interrupt");
    tty.press("<Esc>");
    // The turn ends (the spinner goes) and says it was interrupted.
    tty.wait_for("the turn to end, interrupted", |s| {
        s.contains("interrupted") && !s.contains("esc to interrupt")
    });
    // Nothing was asked of the model after the interrupt.
    assert_eq!(model.requests().len(), 1);
    assert!(
        wait_until(|| sleeping() == 0),
        "the command's process tree was killed"
    );
    quit(&mut tty);
    assert!(!marker.exists());
}

/// Processes running this test's `sleep 29.5`.
fn sleeping() -> usize {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| {
            std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c == b"sleep\x0029.5\x00")
        })
        .count()
}

fn wait_until(condition: impl Fn() -> bool) -> bool {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while std::time::Instant::now() < deadline {
        if condition() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[test]
fn resume_shows_the_history_and_a_lua_command_runs() {
    let model = FakeModel::start();
    model.push(answer("The answer is 42."));
    let sandbox = sandbox(&model);
    let mut tty = open(&sandbox, &[]);
    tty.type_text("what is the answer");
    tty.press("<CR>");
    tty.wait_for_text("The answer is 42.");
    quit(&mut tty);

    let mut tty = open(&sandbox, &["resume"]);
    let screen = tty.wait_for_text("The answer is 42.");
    assert!(screen.contains("› what is the answer"), "{screen}");
    tty.type_text("/gre");
    tty.wait_for_text("Say hello");
    tty.press("<Tab>");
    tty.type_text("world");
    tty.press("<CR>");
    tty.wait_for_text("hello, world");
    quit(&mut tty);
}

#[test]
fn without_a_key_the_screen_opens_and_says_how_to_set_one_up() {
    let sandbox = Sandbox::new();
    let mut tty = open(&sandbox, &[]);
    let screen = tty.wait_for_text("ANTHROPIC_API_KEY");
    assert!(screen.contains("no model"), "{screen}");
    tty.type_text("hello");
    tty.press("<CR>");
    tty.wait_for("the message to fail with the same advice", |s| {
        s.matches("ANTHROPIC_API_KEY").count() >= 2
    });
    quit(&mut tty);
}

#[test]
fn a_broken_init_lua_opens_the_screen_with_its_file_and_line() {
    let sandbox = Sandbox::new();
    std::fs::write(
        sandbox.config().join("init.lua"),
        "uji.tool.policy({}\nlocal x = = 1\n",
    )
    .unwrap();
    let mut tty = open(&sandbox, &[]);
    let screen = tty.wait_for_text("init.lua:");
    assert!(screen.contains("init.lua:2"), "{screen}");
    quit(&mut tty);
}

#[test]
fn sigterm_and_sighup_end_the_screen_and_restore_the_terminal() {
    for signal in [libc::SIGTERM, libc::SIGHUP] {
        let model = FakeModel::start();
        let sandbox = sandbox(&model);
        let mut tty = open(&sandbox, &[]);
        tty.type_text("draft");
        tty.signal(signal);
        assert_eq!(tty.wait_exit(EXIT), Some(0), "signal {signal}");
        tty.terminal_restored().unwrap();
        tty.cooked_mode().unwrap();
    }
}

#[test]
fn a_crash_in_the_screen_gives_the_terminal_back_and_says_so() {
    let model = FakeModel::start();
    let sandbox = sandbox(&model);
    let cmd = uji(&sandbox, &[]).env("UJI_TUI_TEST_PANIC", "1");
    let mut tty = Tty::spawn(cmd, 24, 80);
    tty.wait_for_text("Ask uji anything");
    tty.press("<F12>");
    assert_eq!(tty.wait_exit(EXIT), Some(1));
    tty.terminal_restored().unwrap();
    tty.cooked_mode().unwrap();
    let printed = tty.transcript();
    assert!(printed.contains("the tui frontend failed"), "{printed}");
    assert!(printed.contains("UJI_TUI_TEST_PANIC"), "{printed}");
}

#[test]
fn a_resized_terminal_is_drawn_to_its_new_size() {
    let model = FakeModel::start();
    model.push(answer("short answer"));
    let sandbox = sandbox(&model);
    let mut tty = open(&sandbox, &[]);
    tty.type_text("hi");
    tty.press("<CR>");
    tty.wait_for_text("short answer");
    tty.resize(30, 120);
    let screen = tty.wait_for("the status line on the new last row", |s| {
        s.lines().nth(29).is_some_and(|l| l.contains("fake/m1"))
    });
    assert!(screen.contains(&"─".repeat(120)), "{screen}");
    assert!(screen.contains("short answer"), "{screen}");
    quit(&mut tty);
}

#[test]
fn ctrl_b_switches_plan_mode_and_the_status_line_shows_it() {
    let model = FakeModel::start();
    let sandbox = sandbox(&model);
    let mut tty = open(&sandbox, &[]);
    tty.press("<C-b>");
    // The mode and the notice are two events: wait for both.
    let screen = tty.wait_for("plan mode in the status line and its notice", |s| {
        s.lines().last().is_some_and(|l| l.contains("⏸ plan mode")) && s.contains("plan mode is on")
    });
    assert_eq!(
        screen.matches("plan mode is on").count(),
        1,
        "one notice: {screen}"
    );
    tty.press("<C-b>");
    let screen = tty.wait_for("plan mode gone", |s| {
        s.lines().last().is_some_and(|l| !l.contains("plan mode")) && s.contains("plan mode is off")
    });
    assert_eq!(
        screen.matches("plan mode is off").count(),
        1,
        "one notice: {screen}"
    );
    quit(&mut tty);
}

#[test]
fn a_key_bound_to_a_lua_function_runs_it() {
    let model = FakeModel::start();
    let sandbox = sandbox(&model);
    let init = sandbox.config().join("init.lua");
    let mut config = std::fs::read_to_string(&init).unwrap();
    config.push_str(
        "uji.keymap.add(\"normal\", \"<F5>\", function() uji.notify(\"F5 ran in Lua\") end)\n",
    );
    config.push_str("uji.keymap.add(\"normal\", \"<C-s>\", \"submit\")\n");
    std::fs::write(&init, config).unwrap();
    model.push(answer("sent with ctrl-s"));
    let mut tty = open(&sandbox, &[]);
    tty.press("<F5>");
    tty.wait_for_text("F5 ran in Lua");
    tty.type_text("hello");
    tty.press("<C-s>");
    tty.wait_for_text("sent with ctrl-s");
    quit(&mut tty);
}

/// The roles of the messages a chat request carried, system prompt left out.
fn roles(request: &uji_fake_model::RecordedRequest) -> Vec<(String, String)> {
    let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap();
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] != "system")
        .map(|m| {
            let content = m["content"].as_str().unwrap_or_default().to_string();
            (m["role"].as_str().unwrap_or_default().to_string(), content)
        })
        .collect()
}

#[test]
fn esc_during_an_answer_keeps_what_streamed_and_the_next_request_carries_it() {
    let model = FakeModel::start();
    model
        .push(Script::stall_after(
            ChatEvents::new("m1").text("Half of the answer", 3).build(),
        ))
        .push(answer("The second answer."));
    let sandbox = sandbox(&model);
    let mut tty = open(&sandbox, &[]);
    tty.type_text("explain it");
    tty.press("<CR>");
    tty.wait_for_text("Half of the answer");
    tty.press("<Esc>");
    let screen = tty.wait_for("the turn to end, interrupted", |s| {
        s.contains("interrupted") && !s.contains("esc to interrupt")
    });
    assert!(
        screen.contains("Half of the answer"),
        "kept on screen: {screen}"
    );
    tty.type_text("go on");
    tty.press("<CR>");
    tty.wait_for_text("The second answer.");
    let sent = roles(&model.requests()[1]);
    let expected: Vec<(String, String)> = [
        ("user", "explain it"),
        ("assistant", "Half of the answer"),
        ("user", "go on"),
    ]
    .iter()
    .map(|(r, t)| (r.to_string(), t.to_string()))
    .collect();
    assert_eq!(sent, expected);
    quit(&mut tty);
}

#[test]
fn esc_on_a_running_shell_command_carries_nothing_into_the_next_prompt() {
    let model = FakeModel::start();
    model.push(answer("Sent as usual."));
    let sandbox = sandbox(&model);
    let mut tty = open(&sandbox, &[]);
    tty.type_text("!sleep 29.5");
    tty.press("<CR>");
    assert!(wait_until(|| sleeping() == 1), "the command runs");
    tty.press("<Esc>");
    assert!(wait_until(|| sleeping() == 0), "Esc stopped the command");
    tty.wait_for_text("the command was stopped");
    tty.type_text("hello");
    tty.press("<CR>");
    let screen = tty.wait_for_text("Sent as usual.");
    assert_eq!(model.requests().len(), 1, "{screen}");
    quit(&mut tty);
}

#[test]
fn ctrl_c_clears_a_draft_into_history_and_only_a_second_press_quits_saying_how_to_resume() {
    let model = FakeModel::start();
    model.push(answer("Hello there."));
    let sandbox = sandbox(&model);
    let mut tty = open(&sandbox, &[]);
    tty.type_text("hi");
    tty.press("<CR>");
    tty.wait_for_text("Hello there.");
    tty.type_text("a draft worth keeping");
    tty.press("<C-c>");
    let screen = tty.wait_for_text("Ctrl+C again to quit");
    assert!(!screen.contains("a draft worth keeping"), "{screen}");
    // The hint goes; uji is still there, and ↑ brings the draft back.
    tty.wait_for("the hint to go", |s| !s.contains("Ctrl+C again to quit"));
    tty.press("<Up>");
    tty.wait_for_text("a draft worth keeping");
    tty.press("<C-c>");
    tty.wait_for_text("Ctrl+C again to quit");
    tty.press("<C-c>");
    assert_eq!(tty.wait_exit(EXIT), Some(0), "{}", tty.screen());
    let id = std::fs::read_dir(sandbox.root.path().join("data/sessions"))
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .find_map(|name| name.strip_suffix(".jsonl").map(str::to_string))
        .expect("the session file");
    let screen = tty.screen();
    assert!(
        screen.contains(&format!("Resume this session with: uji resume --id {id}")),
        "{screen}"
    );
    assert!(screen.contains("Tokens used: 1.0k in"), "{screen}");
    tty.terminal_restored().unwrap();
}

/// A sandbox like [`sandbox`], with more init.lua after it.
fn sandbox_with(model: &FakeModel, more_init: &str) -> Sandbox {
    let sandbox = sandbox(model);
    let path = sandbox.config().join("init.lua");
    let mut init = std::fs::read_to_string(&path).unwrap();
    init.push_str(more_init);
    std::fs::write(&path, init).unwrap();
    sandbox
}

/// The composer's row: the text after ` › ` on the screen.
fn draft_row(screen: &str) -> String {
    screen
        .lines()
        .find_map(|l| l.strip_prefix(" › "))
        .unwrap_or_default()
        .trim_end()
        .to_string()
}

#[test]
fn esc_esc_edits_an_earlier_message_and_what_came_after_it_leaves_the_conversation() {
    let model = FakeModel::start();
    model
        .push(answer("First answer."))
        .push(answer("Second answer."))
        .push(answer("Answer to the edit."));
    let sandbox = sandbox(&model);
    let mut tty = open(&sandbox, &[]);
    tty.type_text("the first question");
    tty.press("<CR>");
    tty.wait_for_text("First answer.");
    tty.type_text("the second question");
    tty.press("<CR>");
    tty.wait_for_text("Second answer.");
    tty.press("<Esc>");
    tty.wait_for_text("Esc again to edit an earlier message");
    tty.press("<Esc>");
    tty.wait_for_question("Go back to before an earlier message (2)");
    tty.press("<Down>");
    tty.press("<CR>");
    tty.wait_for_question("Go back to before this message");
    tty.press("<Down>");
    tty.press("<CR>");
    let screen = tty.wait_for("the first message back in the draft", |s| {
        draft_row(s) == "the first question"
    });
    assert!(
        !screen.contains("First answer.") && !screen.contains("Second answer."),
        "the conversation after it is gone from the screen: {screen}"
    );
    tty.type_text(", edited");
    tty.press("<CR>");
    tty.wait_for_text("Answer to the edit.");
    let sent = roles(&model.requests()[2]);
    assert_eq!(
        sent,
        [("user".to_string(), "the first question, edited".to_string())],
        "the model sees the conversation from the edited message on"
    );
    // Nothing is lost: the session file still holds the dropped messages.
    let sessions = sandbox.root.path().join("data/sessions");
    let file = std::fs::read_dir(&sessions)
        .unwrap()
        .filter_map(Result::ok)
        .find(|e| e.path().extension().is_some_and(|x| x == "jsonl"))
        .unwrap();
    let saved = std::fs::read_to_string(file.path()).unwrap();
    assert!(
        saved.contains("Second answer.") && saved.contains("\"rewind\""),
        "{saved}"
    );
    quit(&mut tty);
}

#[test]
fn ctrl_g_edits_the_draft_in_the_editor_which_has_the_terminal_and_no_keys() {
    let model = FakeModel::start();
    model.push(answer("Got the edited text."));
    let sandbox = sandbox(&model);
    // A stand-in editor: it reads one line from the terminal (so it must
    // have the keys, not uji) and appends it, and notes its environment.
    let editor = sandbox.root.path().join("editor.sh");
    let env_seen = sandbox.root.path().join("editor-env.txt");
    std::fs::write(
        &editor,
        format!(
            "#!/bin/sh\nenv > '{}'\nprintf 'editor> '\nread line < /dev/tty\nprintf '%s\\n' \"$line\" >> \"$1\"\n",
            env_seen.display()
        ),
    )
    .unwrap();
    let cmd = uji(&sandbox, &[])
        .env("VISUAL", format!("sh {}", editor.display()))
        .env("OPENAI_API_KEY", "sk-must-not-leak");
    let mut tty = Tty::spawn(cmd, 24, 80);
    tty.wait_for_text("Ask uji anything");
    tty.type_text("draft from uji");
    tty.press("<C-g>");
    tty.wait_for_text("editor>");
    tty.type_text("a line typed in the editor\r");
    // The editor's own screen gives way to uji's, drawn whole, with the
    // draft as the editor left it.
    tty.wait_for("the draft back with the editor's line", |s| {
        !s.contains("editor>")
            && s.contains("draft from uji")
            && s.contains("a line typed in the editor")
    });
    tty.press("<CR>");
    tty.wait_for_text("Got the edited text.");
    let sent = model.last_request().body_text();
    assert!(
        sent.contains("draft from uji\\na line typed in the editor"),
        "{sent}"
    );
    let env = std::fs::read_to_string(&env_seen).unwrap();
    assert!(
        !env.contains("sk-must-not-leak"),
        "a key reached the editor: {env}"
    );
    quit(&mut tty);
}

#[test]
fn ctrl_r_searches_the_messages_sent_before() {
    let model = FakeModel::start();
    model.push(answer("One.")).push(answer("Two."));
    let sandbox = sandbox(&model);
    let mut tty = open(&sandbox, &[]);
    for (text, reply) in [("alpha request", "One."), ("beta request", "Two.")] {
        tty.type_text(text);
        tty.press("<CR>");
        tty.wait_for_text(reply);
    }
    tty.press("<C-r>");
    tty.wait_for_question("Messages sent before");
    tty.type_keys("alp");
    tty.press("<CR>");
    tty.wait_for("the found message in the draft", |s| {
        draft_row(s) == "alpha request"
    });
    quit(&mut tty);
}

#[test]
fn up_on_an_empty_draft_takes_back_the_newest_queued_message() {
    let model = FakeModel::start();
    model.push(Script::stall_after(
        ChatEvents::new("m1").text("Thinking it over", 2).build(),
    ));
    let sandbox = sandbox(&model);
    let mut tty = open(&sandbox, &[]);
    tty.type_text("start");
    tty.press("<CR>");
    tty.wait_for_text("Thinking it over");
    tty.type_text("a second thought");
    tty.press("<CR>");
    tty.wait_for_text("1 queued");
    tty.press("<Up>");
    let screen = tty.wait_for("the queued message back in the draft", |s| {
        draft_row(s) == "a second thought"
    });
    assert!(!screen.contains("1 queued"), "it left the queue: {screen}");
    tty.press("<Esc>");
    tty.wait_for("the turn to end", |s| !s.contains("esc to interrupt"));
    assert_eq!(model.requests().len(), 1, "nothing more was sent");
    tty.press("<C-c>");
    quit(&mut tty);
}

#[test]
fn vi_mode_edits_the_draft_with_vi_keys_when_configured() {
    let model = FakeModel::start();
    model.push(answer("Vi works."));
    let sandbox = sandbox_with(&model, "uji.ui.configure({ vim = true })\n");
    let mut tty = open(&sandbox, &[]);
    tty.wait_for_text("-- INSERT --");
    tty.type_text("fix the bug now");
    tty.press("<Esc>");
    tty.wait_for_text("NORMAL");
    // b to "now", dw deletes it, then A appends.
    tty.type_keys("bdwA");
    tty.wait_for_text("-- INSERT --");
    tty.type_text("please");
    tty.wait_for("the edited draft", |s| draft_row(s) == "fix the bug please");
    tty.press("<CR>");
    tty.wait_for_text("Vi works.");
    assert!(
        model
            .last_request()
            .body_text()
            .contains("fix the bug please")
    );
    quit(&mut tty);
}

#[test]
fn the_mouse_is_read_for_buttons_and_the_wheel_only_and_can_be_left_to_the_terminal() {
    let model = FakeModel::start();
    let sandbox = sandbox(&model);
    let mut tty = open(&sandbox, &[]);
    let printed = tty.transcript();
    assert!(
        printed.contains("\x1b[?1000h") && printed.contains("\x1b[?1006h"),
        "buttons and the wheel, in SGR form"
    );
    assert!(
        !printed.contains("\x1b[?1002h") && !printed.contains("\x1b[?1003h"),
        "never motion, which would take the terminal's selection"
    );
    quit(&mut tty);

    let sandbox = sandbox_with(&model, "uji.ui.configure({ mouse = false })\n");
    let mut tty = open(&sandbox, &[]);
    tty.wait_for("the mouse given back", |_| tty_mouse_off(&tty.transcript()));
    quit(&mut tty);
}

/// Whether the mouse was switched off after it was switched on.
fn tty_mouse_off(printed: &str) -> bool {
    let on = printed.find("\x1b[?1000h");
    let off = printed.rfind("\x1b[?1000l");
    matches!((on, off), (Some(on), Some(off)) if off > on)
}

/// `/reload` (here bound to Alt+R, so the draft stays as typed) starts uji
/// again on the session: the new init.lua runs, the conversation is back
/// on screen and the draft is still in the composer.
#[test]
fn reload_loads_the_config_again_and_keeps_the_conversation_and_the_draft() {
    let model = FakeModel::start();
    model.push(answer("the first answer"));
    let sandbox = sandbox(&model);
    let init = sandbox.config().join("init.lua");
    let base = std::fs::read_to_string(&init).unwrap();
    std::fs::write(
        &init,
        format!("{base}\nuji.keymap.add(\"normal\", \"<A-r>\", {{ command = \"reload\" }})\n"),
    )
    .unwrap();
    let mut tty = open(&sandbox, &[]);
    tty.type_text("hello there");
    tty.press("<CR>");
    tty.wait_for_text("the first answer");
    std::fs::write(
        &init,
        format!(
            "{base}\nuji.keymap.add(\"normal\", \"<A-r>\", {{ command = \"reload\" }})\nuji.notify(\"config v2 loaded\")\n"
        ),
    )
    .unwrap();
    tty.type_text("half typed");
    tty.press("<A-r>");
    let screen = tty.wait_for_text("config v2 loaded");
    let screen = if screen.contains("the first answer") {
        screen
    } else {
        tty.wait_for_text("the first answer")
    };
    assert!(
        screen.contains("half typed"),
        "the draft came back: {screen}"
    );
    assert!(screen.contains("› hello there"), "{screen}");
    quit(&mut tty);
}

/// A picker plugin: `uji.ui.select` from a command, waited for in its
/// task, drawn by the screen's picker (fuzzy filter), the choice returned
/// as the item; then a prompt with a prefilled value.
#[test]
fn a_lua_picker_asks_through_the_screen_and_gets_the_item_chosen() {
    let model = FakeModel::start();
    let sandbox = sandbox(&model);
    let init = sandbox.config().join("init.lua");
    let base = std::fs::read_to_string(&init).unwrap();
    std::fs::write(
        &init,
        format!(
            r#"{base}
uji.command.add("pick", function()
  local choice = uji.ui.select({{ "alpha", "beta", "gamma" }}, {{ title = "Pick a letter" }})
  local name = uji.ui.prompt({{ title = "Your name?", value = "ann" }})
  uji.notify("picked " .. tostring(choice) .. " by " .. tostring(name))
end)
"#
        ),
    )
    .unwrap();
    let mut tty = open(&sandbox, &[]);
    tty.type_text("/pick");
    tty.press("<CR>");
    let screen = tty.wait_for_text("Pick a letter");
    assert!(screen.contains("gamma"), "{screen}");
    // Keys typed before a dialog has been on screen for the guard's time
    // go to the draft (approval_guard.rs); a person reads first.
    std::thread::sleep(Duration::from_millis(700));
    tty.type_text("bet");
    tty.press("<CR>");
    tty.wait_for_text("Your name?");
    std::thread::sleep(Duration::from_millis(700));
    tty.type_text("e");
    tty.press("<CR>");
    tty.wait_for_text("picked beta by anne");
    quit(&mut tty);
}

/// The MCP client is opened only when something asks for MCP: a session
/// without servers never maps its library; `/mcp` opens it.
#[test]
fn the_mcp_plugin_is_opened_only_when_something_asks_for_mcp() {
    let model = FakeModel::start();
    let sandbox = sandbox(&model);
    // The MCP plugin is the one shipped next to the binary (the others
    // come from UJI_PLUGIN_PATH, opened at start).
    let mut tty = open(&sandbox, &[]);
    // The pty runs `sh -c 'uji …; stty -a …'`: uji is the shell's child.
    let shell = tty.pid().unwrap();
    let children = std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children")).unwrap();
    let pid = children.split_whitespace().next().unwrap().to_string();
    let mapped = || std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
    assert!(mapped().contains("libuji_plugin_tui"), "this is uji's map");
    assert!(
        !mapped().contains("libuji_plugin_mcp"),
        "not opened at start"
    );
    tty.type_text("/mcp");
    tty.press("<CR>");
    tty.wait_for_text("no MCP servers");
    let maps = mapped();
    let ours: Vec<&str> = maps.lines().filter(|l| l.contains("uji_plugin")).collect();
    assert!(
        maps.contains("libuji_plugin_mcp"),
        "/mcp opened it: {ours:#?}"
    );
    quit(&mut tty);
}
